/* test_example_soft_topology.c - runs examples/soft-topology (the operator's
 * SoftTopologyAndDuplicates policy on hosted-cluster NodePool VMs) and checks its plan.
 *
 * The policy names RemoveDuplicates; while that plugin is not registered the policy cannot
 * load, so the tests skip instead of failing. */
#include "support/support.h"

#include "../../src/plugins/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXAMPLE DS_TEST_DATA "/../../examples/soft-topology/"

/* Whole file as a NUL-terminated string; caller frees. Fails the test if unreadable. */
static char *read_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    fail_msg("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  assert_non_null(buf);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  buf[n] = 0;
  fclose(f);
  return buf;
}

static void run_example(sim_run *r, bool gate) {
  if (!plugin_lookup("RemoveDuplicates"))
    skip(); /* the example policy cannot load until RemoveDuplicates is registered */
  char *pol = read_file(EXAMPLE "policy.yaml");
  char *cluster = read_file(EXAMPLE "cluster.json");
  int rc = sim_run_strings(r, pol, cluster, gate, "2026-11-30T02:00:00Z", 3);
  free(pol);
  free(cluster);
  if (rc != 0)
    fail_msg("example failed: %s", r->err.msg);
}

static void assert_request(const sim_run *r, size_t i, const char *ref) {
  char buf[512];
  const fw_eviction *e = &r->res.evictions[i];
  assert_string_equal(pod_ref(e->pod, buf, sizeof buf), ref);
  assert_true(e->background);
  assert_string_equal(e->profile, "SoftTopologyAndDuplicates");
  assert_string_equal(e->plugin, "RemovePodsViolatingTopologySpreadConstraint");
  assert_string_equal(e->pod->node_name, "worker-0");
}

/* Zones 4/1/1: two VMs would leave the crowded worker-0, taken from the tail of its
 * (name-ordered) launcher pods; KubeVirt turns the eviction into a live migration, which the
 * gate counts as a request in background. The KubeVirt CR allows one outbound migration per
 * node (parallelOutboundMigrationsPerNode: 1, HCO's default), so VMSafety holds the second
 * back instead of letting it queue as a Pending migration. RemoveDuplicates finds no
 * duplicates among the VMs. */
static void test_soft_topology_requests_live_migrations(void **state) {
  (void)state;
  sim_run r;
  run_example(&r, true);
  assert_int_equal(r.res.nevictions, 1);
  assert_request(&r, 0, "clusters-hosted/virt-launcher-hosted-workers-kd2wz-f00f1");
  assert_int_equal(r.res.evicted, 0);
  assert_int_equal(r.res.requests, 1);
  assert_int_equal(r.bg.n, 1);
  assert_int_equal(sim_log_count(&r, "\"Eviction in background assumed\""), 1);
  assert_int_equal(sim_log_count(&r, "\"Number of evictions/requests\" totalEvicted=0 "
                                     "evictionRequests=1"),
                   1);
  /* logged by the spread plugin, and again by RemoveDuplicates's own look at the pod */
  assert_true(
      sim_log_count(&r, "pod=\"clusters-hosted/virt-launcher-hosted-workers-c9m5t-99ce3\" "
                        "vmi=\"clusters-hosted/hosted-workers-c9m5t\" rule=\"migrationLimits\" "
                        "reason=\"KubeVirt's migration limit: 1 migrations in flight or requested "
                        "from node worker-0 (parallelOutboundMigrationsPerNode 1)\"") >= 1);
  sim_run_free(&r);
}

/* Without EvictionsInBackground the webhook's 429 is an eviction failure, yet the VM moves: the
 * plan lists it as an evacuation, nothing as evicted or requested. The evacuation KubeVirt
 * started still counts against its limit, so the second VM is not asked. */
static void test_soft_topology_without_gate(void **state) {
  (void)state;
  sim_run r;
  run_example(&r, false);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(r.res.evictions[0].evacuation && r.res.evictions[0].counted);
  assert_int_equal(r.res.evacuations, 1);
  assert_int_equal(r.res.evicted + r.res.requests, 0);
  assert_int_equal(sim_log_count(&r, "error when evicting pod (ignoring)"), 1);
  assert_int_equal(sim_log_count(&r, "Eviction triggered evacuation of VMI"), 1);
  assert_true(sim_log_count(&r, "rule=\"migrationLimits\"") >= 1);
  sim_run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_soft_topology_requests_live_migrations),
      cmocka_unit_test(test_soft_topology_without_gate),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
