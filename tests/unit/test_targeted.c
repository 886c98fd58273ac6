/* test_targeted.c - targeted moves: LowNodeUtilization choosing each VM's destination
 * (plugins/nodeutilization.c, choose_destination) when the profile's VMSafety sets
 * targetedMigration, and the simulate sink answering a migration as KubeVirt would.
 *
 * The clusters: n1 crowded with VMs (virt-launcher pods of 2 cpu and their VMIs), empty nodes
 * to move them to, 8 cpu each. LowNodeUtilization on cpu (20% / 50%): n1 is overutilized,
 * the empty nodes underutilized. Each test says which destinations a rule leaves. */
#include "support/fixtures.h"
#include "support/support.h"

#include "../../src/decode/decode.h"

#include <stdio.h>
#include <string.h>

#define NOW "2026-01-01T00:00:00Z"

static sim_run R;

static int teardown(void **state) {
  (void)state;
  sim_run_free(&R);
  return 0;
}

static void vm_on(const char *name, const char *node, const char *cpu, const char *spec) {
  char pod[128], ann[256], owner[128];
  snprintf(pod, sizeof pod, "virt-launcher-%s", name);
  snprintf(owner, sizeof owner, "VirtualMachineInstance/%s", name);
  snprintf(ann, sizeof ann,
           "kubevirt.io/domain=%s,descheduler.alpha.kubernetes.io/request-evict-only=", name);
  cluster_pod(pod, node, .ns = "vms", .labels = "kubevirt.io=virt-launcher", .annotations = ann,
              .owner = owner, .cpu = cpu, .memory = "1Gi", .spec = spec);
  cluster_item("{\"kind\":\"VirtualMachineInstance\",\"apiVersion\":\"kubevirt.io/v1\","
               "\"metadata\":{\"name\":\"%s\",\"namespace\":\"vms\",\"uid\":\"uid-vmi-%s\"},"
               "\"spec\":{\"evictionStrategy\":\"LiveMigrate\"},\"status\":{\"nodeName\":\"%s\","
               "\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"},"
               "{\"type\":\"LiveMigratable\",\"status\":\"True\"}]}}",
               name, name, node);
}

/* four VMs of 2 cpu on n1: 100% of its 8 */
static void four_vms_on_n1(void) {
  for (int i = 1; i <= 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "vm%d", i);
    vm_on(name, "n1", "2", NULL);
  }
}

/* n1: four VMs of 2 cpu (100%); the nodes named after it, empty */
static void crowded(const char *const *empty) {
  cluster_begin();
  cluster_node("n1");
  for (size_t i = 0; empty[i]; i++)
    cluster_node(empty[i]);
  cluster_item("{\"kind\":\"KubeVirt\",\"apiVersion\":\"kubevirt.io/v1\",\"metadata\":{\"name\":"
               "\"kubevirt\",\"namespace\":\"kubevirt\"},\"spec\":{\"configuration\":{"
               "\"evictionStrategy\":\"LiveMigrate\",\"migrations\":{"
               "\"parallelMigrationsPerCluster\":10,\"parallelOutboundMigrationsPerNode\":10}}}}");
  four_vms_on_n1();
}
#define crowded_with(...) crowded((const char *const[]){__VA_ARGS__, NULL})

static const char *lnu(const char *vmsafety, const char *top) {
  return plugin_policy(.plugin = "LowNodeUtilization", .point = "balance",
                       .args = "{thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}",
                       .evictor_args = "{evictLocalStoragePods: true, nodeFit: true}",
                       .vmsafety = vmsafety, .top = top);
}

static void run(const char *pol) { sim_rerun(&R, pol, cluster_end(), true, NOW, 3); }

/* "pod>to pod>to ..." of the cycle's requests ("pod>-" for an eviction) */
static const char *moves(void) {
  static char out[4096];
  size_t k = 0;
  out[0] = 0;
  for (size_t i = 0; i < R.res.nevictions; i++) {
    const fw_eviction *e = &R.res.evictions[i];
    k += (size_t)snprintf(out + k, sizeof out - k, "%s%s>%s", k ? " " : "", e->pod->name,
                          e->to ? e->to : "-");
  }
  return out;
}

static void assert_logged(const char *needle) {
  if (sim_log_count(&R, needle) == 0)
    fail_msg("log lacks\n  %s\nlog:\n%s", needle, R.logs ? R.logs : "");
}

/* Off (the default): evictions, as upstream; on: each VM gets the destination with the lowest
 * usage after the move, so two moves spread over two empty nodes, ties in name order. */
static void test_off_by_default_then_lowest_usage_first(void **state) {
  (void)state;
  crowded_with("n2", "n3");
  run(lnu(NULL, NULL));
  assert_string_equal(moves(), "virt-launcher-vm1>- virt-launcher-vm2>-");
  run(lnu("{targetedMigration: true}", NULL));
  assert_string_equal(moves(), "virt-launcher-vm1>n2 virt-launcher-vm2>n3");
  assert_true(R.res.evictions[0].background);
  assert_logged("\"Migration requested in dry run mode\" pod=\"vms/virt-launcher-vm1\" reason=\"\" "
                "strategy=\"LowNodeUtilization\" node=\"n1\" to=\"n2\"");
  assert_logged("\"Destination chosen for a targeted move\" plugin=\"LowNodeUtilization\" "
                "ExtensionPoint=\"Balance\" pod=\"vms/virt-launcher-vm1\" to=\"n2\" reason=\"n2: the "
                "lowest usage after the move (25.00%) of 2 destinations\"");
}

/* maxInboundPerNode: one move to each node, so with one empty node n1 gives up one VM only
 * (upstream's engine would send both, wherever the scheduler puts them) */
static void test_inbound_limit(void **state) {
  (void)state;
  crowded_with("n2");
  run(lnu("{targetedMigration: true, maxInboundPerNode: 1}", NULL));
  assert_string_equal(moves(), "virt-launcher-vm1>n2");
  assert_logged("\"No destination for a targeted move: the VM stays\" plugin=\"LowNodeUtilization\" "
                "ExtensionPoint=\"Balance\" pod=\"vms/virt-launcher-vm2\" reason=\"no destination "
                "for a targeted move among 1 underutilized node; 1 reached maxInboundPerNode (1)\"");
  run(lnu("{targetedMigration: true}", NULL)); /* the default: 2 */
  assert_string_equal(moves(), "virt-launcher-vm1>n2 virt-launcher-vm2>n2");
}

/* a destination must fit the pod (nodeFit's checks) and stay at or below the high threshold
 * with the VM on it */
static void test_fit_and_high_threshold(void **state) {
  (void)state;
  crowded_with("n2", "n3", "n4");
  /* n2 is cordoned, n3 is tainted: only n4 is left */
  cluster_end();
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2", .unschedulable = true);
  cluster_node("n3", .taints = "dedicated=gpu:NoSchedule");
  cluster_node("n4");
  cluster_item("{\"kind\":\"KubeVirt\",\"apiVersion\":\"kubevirt.io/v1\",\"metadata\":{\"name\":"
               "\"kubevirt\",\"namespace\":\"kubevirt\"},\"spec\":{\"configuration\":{"
               "\"evictionStrategy\":\"LiveMigrate\"}}}");
  vm_on("vm1", "n1", "2", NULL);
  vm_on("vm2", "n1", "2", NULL);
  vm_on("big", "n1", "5", NULL); /* 5 cpu = 62.5% of an empty node: above 50% anywhere */
  run(lnu("{targetedMigration: true, maxInboundPerNode: 5}", NULL));
  assert_string_equal(moves(), "virt-launcher-vm1>n4 virt-launcher-vm2>n4");
  assert_logged("pod=\"vms/virt-launcher-big\" reason=\"no destination for a targeted move among 2 "
                "underutilized nodes; 1 do not fit the pod (pod does not tolerate taints on the "
                "node); 1 would be overutilized after the move (cpu)\"");
}

/* minImprovement: the move must take more than that many points off the standard deviation of the
 * nodes' usage percentages */
static void test_min_improvement(void **state) {
  (void)state;
  crowded_with("n2", "n3");
  /* 100 0 0 -> 75 25 0: the deviation falls from 47.14 to 31.18 points (15.96); the second
   * move, -> 50 25 25, takes it to 11.79 (19.39) */
  run(lnu("{targetedMigration: true, minImprovement: 15}", NULL));
  assert_string_equal(moves(), "virt-launcher-vm1>n2 virt-launcher-vm2>n3");
  run(lnu("{targetedMigration: true, minImprovement: 16}", NULL));
  assert_string_equal(moves(), "");
  assert_logged("pod=\"vms/virt-launcher-vm1\" reason=\"no destination for a targeted move among 2 "
                "underutilized nodes; 2 would take no more than minImprovement (16 points) off the "
                "imbalance (at best 15.96)\"");
  assert_true(sim_log_count(&R, "Migration requested") == 0);
  /* a fraction of a point, and 0: a move that makes the imbalance no better is refused */
  run(lnu("{targetedMigration: true, minImprovement: 15.9}", NULL));
  assert_string_equal(moves(), "virt-launcher-vm1>n2 virt-launcher-vm2>n3");
}

/* The simulate sink answers a migration as KubeVirt's webhook would: a VMI that cannot
 * live-migrate is refused (VMSafety lets it through only with requireLiveMigration off) */
static void test_sink_refuses_a_vmi_that_cannot_migrate(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2", .cpu = "16");
  char ann[128] = "kubevirt.io/domain=gpu,descheduler.alpha.kubernetes.io/request-evict-only=";
  cluster_pod("virt-launcher-gpu", "n1", .ns = "vms", .labels = "kubevirt.io=virt-launcher",
              .annotations = ann, .owner = "VirtualMachineInstance/gpu", .cpu = "6");
  cluster_item("{\"kind\":\"VirtualMachineInstance\",\"apiVersion\":\"kubevirt.io/v1\","
               "\"metadata\":{\"name\":\"gpu\",\"namespace\":\"vms\",\"uid\":\"u\"},"
               "\"spec\":{\"evictionStrategy\":\"LiveMigrate\"},\"status\":{\"nodeName\":\"n1\","
               "\"phase\":\"Running\",\"conditions\":[{\"type\":\"LiveMigratable\",\"status\":"
               "\"False\",\"reason\":\"HostDeviceNotLiveMigratable\"}]}}");
  run(plugin_policy(.plugin = "LowNodeUtilization", .point = "balance",
                    .args = "{thresholds: {cpu: 20}, targetThresholds: {cpu: 50}}",
                    .evictor_args = "{evictLocalStoragePods: true}",
                    .vmsafety = "{targetedMigration: true, requireLiveMigration: false}"));
  assert_string_equal(moves(), "");
  assert_logged("Cannot migrate VMI, Reason: HostDeviceNotLiveMigratable");
}

/* With Prometheus the node's value is shared among its VMs by their cpu requests: one VM
 * alone on a hot node carries all of it, so no node can take it without becoming the hot one
 * (the ping-pong trap); two VMs halve it, and one of them moves */
#define Q "descheduler:nodeutilization:cpu:avg1m"
static const char *prom_body;
static int add_prom(model *m, const policy *pol, void *ctx, dserr *err) {
  (void)pol;
  (void)ctx;
  return decode_prom_response(m, Q, "answer", prom_body, strlen(prom_body), err);
}

static void run_prom(const char *body) {
  prom_body = body;
  sim_run_free(&R);
  const char *pol = plugin_policy(
      .plugin = "LowNodeUtilization", .point = "balance",
      .args = "{thresholds: {MetricResource: 30}, targetThresholds: {MetricResource: 55}, "
              "metricsUtilization: {source: Prometheus, prometheus: {query: '" Q "'}}}",
      .evictor_args = "{evictLocalStoragePods: true}", .vmsafety = "{targetedMigration: true}",
      .top = "metricsProviders: [{source: Prometheus, prometheus: {url: 'http://p'}}]\n");
  assert_int_equal(sim_run_prepared(&R, pol, cluster_end(), true, NOW, 3, add_prom, NULL), 0);
}

static void test_prometheus_share_of_the_node(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("hot");
  cluster_node("w1");
  cluster_node("w2");
  vm_on("furnace", "hot", "4", NULL);
  vm_on("calm1", "w1", "2", NULL);
  vm_on("calm2", "w2", "2", NULL);
  const char *answer =
      "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
      "{\"metric\":{\"instance\":\"hot\"},\"value\":[0,\"0.62\"]},"
      "{\"metric\":{\"instance\":\"w1\"},\"value\":[0,\"0.18\"]},"
      "{\"metric\":{\"instance\":\"w2\"},\"value\":[0,\"0.18\"]}]}}";
  run_prom(answer);
  assert_string_equal(moves(), "");
  assert_logged("pod=\"vms/virt-launcher-furnace\" reason=\"no destination for a targeted move "
                "among 2 underutilized nodes; 2 would be overutilized after the move "
                "(MetricResource)\"");
  /* two VMs of equal requests on the hot node: each carries half of its 62% */
  cluster_begin();
  cluster_node("hot");
  cluster_node("w1");
  cluster_node("w2");
  vm_on("a", "hot", "2", NULL);
  vm_on("b", "hot", "2", NULL);
  vm_on("calm1", "w1", "2", NULL);
  vm_on("calm2", "w2", "2", NULL);
  run_prom(answer);
  assert_string_equal(moves(), "virt-launcher-a>w1");
  assert_logged("to=\"w1\" reason=\"w1: the lowest usage after the move (49.00%) of 2 destinations\"");
}

/* overutilizedFor: a node gives up VMs only once it has been overutilized that long; the
 * state is the cycle's history (a Deployment keeps it) and the node's annotation (a one-shot
 * run reads it), so it holds across cycles and restarts */
static void test_hysteresis_across_cycles_and_restarts(void **state) {
  (void)state;
  const char *pol = lnu("{targetedMigration: true, overutilizedFor: 5m}", NULL);
  fw_history hist = {0};
  sim_history = &hist;
  crowded_with("n2", "n3");
  sim_rerun(&R, pol, cluster_end(), true, "2026-01-01T00:00:00Z", 3);
  assert_string_equal(moves(), "");
  assert_logged("\"Node is overutilized, but not for long enough to give up pods\" "
                "plugin=\"LowNodeUtilization\" ExtensionPoint=\"Balance\" node=\"n1\" "
                "overutilizedFor=\"0s\" required=\"5m0s\"");
  assert_int_equal(fw_history_since(&hist, "n1"), 1767225600LL);
  assert_int_equal(fw_history_since(&hist, "n2"), 0);
  /* 4 minutes on: still not; 5 minutes on: the node gives up its VMs */
  sim_rerun(&R, pol, cluster_end(), true, "2026-01-01T00:04:00Z", 3);
  assert_string_equal(moves(), "");
  assert_logged("node=\"n1\" overutilizedFor=\"4m0s\" required=\"5m0s\"");
  sim_rerun(&R, pol, cluster_end(), true, "2026-01-01T00:05:00Z", 3);
  assert_string_equal(moves(), "virt-launcher-vm1>n2 virt-launcher-vm2>n3");
  /* a node that falls below the target forgets: it starts again from its next time over */
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_node("n3");
  vm_on("vm1", "n1", "2", NULL);
  vm_on("vm2", "n2", "2", NULL);
  sim_rerun(&R, pol, cluster_end(), true, "2026-01-01T00:06:00Z", 3);
  assert_int_equal(fw_history_since(&hist, "n1"), 0);
  fw_history_free(&hist);
  sim_history = NULL;
  /* a restart (or the next one-shot run): the state is the node's annotation */
  cluster_begin();
  cluster_node("n1", .meta = "\"annotations\":{\"" NODE_OVER_SINCE_ANNOTATION
                             "\":\"2025-12-31T23:50:00Z\"}");
  cluster_node("n2");
  cluster_node("n3");
  four_vms_on_n1();
  sim_rerun(&R, pol, cluster_end(), true, "2026-01-01T00:00:00Z", 3);
  assert_string_equal(moves(), "virt-launcher-vm1>n2 virt-launcher-vm2>n3");
  /* an annotation that is not a time is no state at all, and does not cost the node */
  cluster_begin();
  cluster_node("n1", .meta = "\"annotations\":{\"" NODE_OVER_SINCE_ANNOTATION "\":\"soon\"}");
  cluster_node("n2");
  four_vms_on_n1();
  sim_rerun(&R, pol, cluster_end(), true, "2026-01-01T00:00:00Z", 3);
  assert_string_equal(moves(), "");
  assert_logged("node=\"n1\" overutilizedFor=\"0s\" required=\"5m0s\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_off_by_default_then_lowest_usage_first, teardown),
      cmocka_unit_test_teardown(test_inbound_limit, teardown),
      cmocka_unit_test_teardown(test_fit_and_high_threshold, teardown),
      cmocka_unit_test_teardown(test_min_improvement, teardown),
      cmocka_unit_test_teardown(test_sink_refuses_a_vmi_that_cannot_migrate, teardown),
      cmocka_unit_test_teardown(test_prometheus_share_of_the_node, teardown),
      cmocka_unit_test_teardown(test_hysteresis_across_cycles_and_restarts, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
