/* test_highnodeutilization.c - HighNodeUtilization: classification (cordoned sources, float
 * ties), drain order and stop condition, pod selection (eviction mode, excluded namespaces,
 * taint gate), early exits and validation texts. */
#include "support/fixtures.h"
#include "support/support.h"

#include <stdio.h>
#include <string.h>

/* thresholds: a flow map; more: further args members ("evictionModes: [...]") or NULL */
static const char *hnu_policy(const char *thresholds, const char *more) {
  char args[512];
  snprintf(args, sizeof args, "{thresholds: %s%s%s}", thresholds, more ? ", " : "",
           more ? more : "");
  return plugin_policy(.plugin = "HighNodeUtilization", .point = "balance", .args = args);
}

/* ---------- cluster: nodes of 10 cpu / 100 memory units / 100 pods ---------- */

static void begin(void) {
  cluster_begin();
  cluster_capacity("10", "100", "100");
}

/* a: 2 cpu (20%), b: 1 cpu (10%), c: `c_cpu` cpu in one pod (the target). cordoned: the name
 * of a cordoned node or NULL; c_taints: node c's taints or NULL. */
static const char *three_nodes(const char *c_cpu, const char *cordoned, const char *c_taints) {
  begin();
  cluster_node("a", .unschedulable = cordoned && !strcmp(cordoned, "a"));
  cluster_node("b");
  cluster_node("c", .unschedulable = cordoned && !strcmp(cordoned, "c"), .taints = c_taints);
  cluster_pod("a1", "a", .cpu = "1");
  cluster_pod("a2", "a", .cpu = "1");
  cluster_pod("b1", "b", .cpu = "1");
  cluster_pod("c1", "c", .cpu = c_cpu);
  return cluster_end();
}

static const char *eviction_name(const sim_run *r, size_t i) {
  assert_true(i < r->res.nevictions);
  return r->res.evictions[i].pod->name;
}

/* The emptiest underutilized node is drained first; targets are never drained. */
static void test_drains_emptiest_node_first(void **state) {
  (void)state;
  sim_run r = sim_run_ok(hnu_policy("{cpu: 30}", NULL), three_nodes("5", NULL, NULL), 0);
  assert_string_equal(r.res.node_category[0], "underutilized");
  assert_string_equal(r.res.node_category[1], "underutilized");
  assert_string_equal(r.res.node_category[2], "overutilized");
  assert_int_equal(r.res.nevictions, 3);
  assert_string_equal(eviction_name(&r, 0), "b1");
  assert_string_equal(eviction_name(&r, 1), "a1");
  assert_string_equal(eviction_name(&r, 2), "a2");
  assert_false(sim_evicted(&r, "ns/c1"));
  sim_run_free(&r);
}

/* Stop once any resource of the targets' free capacity reaches zero: c has 1 cpu free,
 * moving b1 uses it all, so a keeps its pods. */
static void test_stops_when_target_capacity_is_used_up(void **state) {
  (void)state;
  sim_run r = sim_run_ok(hnu_policy("{cpu: 30}", NULL), three_nodes("9", NULL, NULL), 0);
  assert_evictions(&r, "ns/b1");
  sim_run_free(&r);
}

/* The condition is checked after each eviction, so the last pod may overshoot: 1.5 cpu free,
 * b1 (1 cpu) then a1 (1 cpu) leave -0.5 cpu. */
static void test_last_eviction_may_overshoot(void **state) {
  (void)state;
  sim_run r = sim_run_ok(hnu_policy("{cpu: 30}", NULL), three_nodes("8500m", NULL, NULL), 0);
  assert_evictions(&r, "ns/b1", "ns/a1");
  assert_false(sim_evicted(&r, "ns/a2"));
  sim_run_free(&r);
}

/* A cordoned node can be underutilized (a source) but is never a target. */
static void test_cordoned_node_is_source_not_target(void **state) {
  (void)state;
  sim_run r = sim_run_ok(hnu_policy("{cpu: 30}", NULL), three_nodes("5", "a", NULL), 0);
  assert_string_equal(r.res.node_category[0], "underutilized");
  assert_true(sim_evicted(&r, "ns/a1"));
  assert_true(sim_evicted(&r, "ns/a2"));
  sim_run_free(&r);

  /* the only non-underutilized node is cordoned: no target at all */
  r = sim_run_ok(hnu_policy("{cpu: 30}", NULL), three_nodes("5", "c", NULL), 2);
  assert_int_equal(r.res.nevictions, 0);
  assert_null(r.res.node_category[2]);
  assert_int_equal(sim_log_count(&r, "\"Node is unschedulable\""), 1);
  assert_int_equal(
      sim_log_count(&r, "No node is available to schedule the pods, nothing to do here"), 1);
  sim_run_free(&r);
}

/* 57 of 100 computes as 56.99999999999999 (under a 57 threshold); 7 of 100 as
 * 7.000000000000001 (not under 7). */
static void test_float_ties(void **state) {
  (void)state;
  begin();
  cluster_node("a");
  cluster_node("b");
  cluster_pod("a1", "a", .cpu = "5700m");
  cluster_pod("b1", "b", .cpu = "8");
  sim_run r = sim_run_ok(hnu_policy("{cpu: 57}", NULL), cluster_end(), 0);
  assert_string_equal(r.res.node_category[0], "underutilized");
  assert_true(sim_evicted(&r, "ns/a1"));
  sim_run_free(&r);

  begin();
  cluster_node("a");
  cluster_node("b");
  cluster_pod("a1", "a", .cpu = "700m");
  cluster_pod("b1", "b", .cpu = "8");
  r = sim_run_ok(hnu_policy("{cpu: 7}", NULL), cluster_end(), 1);
  assert_string_equal(r.res.node_category[0], "overutilized");
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "No node is underutilized, nothing to do here"), 1);
  sim_run_free(&r);
}

/* OnlyThresholdingResources: a pod must name a threshold resource in some regular or init
 * container's requests; the value does not matter (0 counts). */
static void test_only_thresholding_resources(void **state) {
  (void)state;
  begin();
  cluster_node("a");
  cluster_node("b");
  cluster_pod("a1-mem", "a", .memory = "1");
  cluster_pod("a2-none", "a");
  cluster_pod("a3-init", "a",
              .spec = "\"initContainers\":[{\"name\":\"i\",\"resources\":{\"requests\":{"
                      "\"cpu\":\"100m\"}}}]");
  cluster_pod("a4-zero", "a", .cpu = "0");
  cluster_pod("b1", "b", .cpu = "5");
  const char *cl = cluster_end();
  sim_run r =
      sim_run_ok(hnu_policy("{cpu: 30}", "evictionModes: [OnlyThresholdingResources]"), cl, 0);
  assert_evictions(&r, "ns/a3-init", "ns/a4-zero");
  sim_run_free(&r);

  /* without the mode every pod is a candidate */
  r = sim_run_ok(hnu_policy("{cpu: 30}", NULL), cl, 0);
  assert_int_equal(r.res.nevictions, 4);
  sim_run_free(&r);
}

/* evictableNamespaces.exclude keeps those pods; the rest still go. */
static void test_excluded_namespaces(void **state) {
  (void)state;
  begin();
  cluster_node("a");
  cluster_node("b");
  cluster_pod("a1", "a", .ns = "keep", .cpu = "1");
  cluster_pod("a2", "a", .cpu = "1");
  cluster_pod("b1", "b", .cpu = "5");
  sim_run r = sim_run_ok(hnu_policy("{cpu: 30}", "evictableNamespaces: {exclude: [keep]}"),
                         cluster_end(), 0);
  assert_evictions(&r, "ns/a2");
  sim_run_free(&r);
}

/* The taint gate counts every effect, PreferNoSchedule included. */
static void test_target_taints_gate_pods(void **state) {
  (void)state;
  sim_run r =
      sim_run_ok(hnu_policy("{cpu: 30}", NULL), three_nodes("5", NULL, "k=v:PreferNoSchedule"), 3);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "Skipping eviction for pod, doesn't tolerate node taint"), 3);
  sim_run_free(&r);
}

static void test_early_exits(void **state) {
  (void)state;
  sim_run r =
      sim_run_ok(hnu_policy("{cpu: 30}", "numberOfNodes: 2"), three_nodes("5", NULL, NULL), 1);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(
      sim_log_count(&r, "Number of nodes underutilized is less or equal than NumberOfNodes, "
                        "nothing to do here\" plugin=\"HighNodeUtilization\" "
                        "ExtensionPoint=\"Balance\" underutilizedNodes=2 numberOfNodes=2"),
      1);
  sim_run_free(&r);

  r = sim_run_ok(hnu_policy("{cpu: 60}", NULL), three_nodes("5", NULL, NULL), 1);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "All nodes are underutilized, nothing to do here"), 1);
  sim_run_free(&r);
}

static void test_validation_messages(void **state) {
  (void)state;
  assert_policy_error(
      hnu_policy("{cpu: 30}", "evictableNamespaces: {include: [a]}"),
      "in profile p: only Exclude namespaces can be set, inclusion is not supported");
  /* threshold errors are not prefixed, unlike LowNodeUtilization's */
  assert_policy_error(hnu_policy("{}", NULL), "in profile p: no resource threshold is configured");
  assert_policy_error(hnu_policy("{cpu: 30, memory: 101}", NULL),
                      "in profile p: memory threshold not in [0, 100] range");
  assert_policy_error(hnu_policy("{cpu: -1}", NULL),
                      "in profile p: cpu threshold not in [0, 100] range");
  assert_policy_error(hnu_policy("{cpu: 30}", "evictionModes: [OnlyThresholdingResources, Bogus]"),
                      "in profile p: invalid eviction mode Bogus");
  assert_policy_error(hnu_policy("{cpu: 30}", "targetThresholds: {cpu: 50}"),
                      "strict decoding error: unknown field \"targetThresholds\"");
  /* first failing check wins: include is reported before a bad threshold */
  assert_policy_error(
      hnu_policy("{}", "evictableNamespaces: {include: [a]}"),
      "in profile p: only Exclude namespaces can be set, inclusion is not supported");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_drains_emptiest_node_first),
      cmocka_unit_test(test_stops_when_target_capacity_is_used_up),
      cmocka_unit_test(test_last_eviction_may_overshoot),
      cmocka_unit_test(test_cordoned_node_is_source_not_target),
      cmocka_unit_test(test_float_ties),
      cmocka_unit_test(test_only_thresholding_resources),
      cmocka_unit_test(test_excluded_namespaces),
      cmocka_unit_test(test_target_taints_gate_pods),
      cmocka_unit_test(test_early_exits),
      cmocka_unit_test(test_validation_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
