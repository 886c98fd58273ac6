/* test_highnodeutilization.c - HighNodeUtilization: classification (cordoned sources, float
 * ties), drain order and stop condition, pod selection (eviction mode, excluded namespaces,
 * taint gate), early exits and validation texts. */
#include "support/support.h"

#include <stdio.h>
#include <string.h>

static const char *policy_fmt = "apiVersion: descheduler/v1alpha2\n"
                                "kind: DeschedulerPolicy\n"
                                "profiles:\n"
                                "- name: p\n"
                                "  pluginConfig:\n"
                                "  - name: DefaultEvictor\n"
                                "  - name: HighNodeUtilization\n"
                                "    args:\n"
                                "      thresholds: %s\n"
                                "%s"
                                "  plugins:\n"
                                "    balance:\n"
                                "      enabled: [HighNodeUtilization]\n";

static char policy_buf[4096];

static const char *hnu_policy(const char *thresholds, const char *extra) {
  snprintf(policy_buf, sizeof policy_buf, policy_fmt, thresholds, extra ? extra : "");
  return policy_buf;
}

/* ---------- cluster builder: nodes of 10 cpu / 100 memory units / 100 pods ---------- */

static char cluster_buf[1 << 17];
static char *cluster_end;

static void cluster_begin(void) {
  cluster_end =
      cluster_buf + sprintf(cluster_buf, "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[");
}

/* spec: extra node spec members ("\"unschedulable\":true"), or NULL */
static void add_node(const char *name, const char *spec) {
  cluster_end +=
      sprintf(cluster_end,
              "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"},\"spec\":{%s},"
              "\"status\":{\"allocatable\":{\"cpu\":\"10\",\"memory\":\"100\",\"pods\":\"100\"}}}",
              cluster_end[-1] == '[' ? "" : ",", name, spec ? spec : "");
}

/* containers: the spec members for containers (and init containers), e.g. CPU("1") */
static void add_pod(const char *name, const char *ns, const char *node, const char *containers) {
  cluster_end += sprintf(
      cluster_end,
      ",{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":"
      "\"u-%s-%s\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"rs\"}]},"
      "\"spec\":{\"nodeName\":\"%s\",%s},\"status\":{\"phase\":\"Running\"}}",
      name, ns, ns, name, node, containers);
}

static const char *cluster_done(void) {
  sprintf(cluster_end, "]}");
  return cluster_buf;
}

#define CPU(q)                                                                                     \
  "\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"" q      \
  "\"}}}]"
#define MEM(q)                                                                                     \
  "\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{\"requests\":{\"memory\":\"" q   \
  "\"}}}]"
#define NOREQ "\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]"

/* a: 2 cpu (20%), b: 1 cpu (10%), c: `c_cpu` cpu in one pod (the target) */
static const char *three_nodes(const char *c_pod, const char *a_spec, const char *c_spec) {
  cluster_begin();
  add_node("a", a_spec);
  add_node("b", NULL);
  add_node("c", c_spec);
  add_pod("a1", "ns", "a", CPU("1"));
  add_pod("a2", "ns", "a", CPU("1"));
  add_pod("b1", "ns", "b", CPU("1"));
  add_pod("c1", "ns", "c", c_pod);
  return cluster_done();
}

static const char *eviction_name(const sim_run *r, size_t i) {
  assert_true(i < r->res.nevictions);
  return r->res.evictions[i].pod->name;
}

/* The emptiest underutilized node is drained first; targets are never drained. */
static void test_drains_emptiest_node_first(void **state) {
  (void)state;
  sim_run r;
  assert_int_equal(sim_run_strings(&r, hnu_policy("{cpu: 30}", NULL),
                                   three_nodes(CPU("5"), NULL, NULL), false, NULL, 0),
                   0);
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
  sim_run r;
  assert_int_equal(sim_run_strings(&r, hnu_policy("{cpu: 30}", NULL),
                                   three_nodes(CPU("9"), NULL, NULL), false, NULL, 0),
                   0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/b1"));
  sim_run_free(&r);
}

/* The condition is checked after each eviction, so the last pod may overshoot: 1.5 cpu free,
 * b1 (1 cpu) then a1 (1 cpu) leave -0.5 cpu. */
static void test_last_eviction_may_overshoot(void **state) {
  (void)state;
  sim_run r;
  assert_int_equal(sim_run_strings(&r, hnu_policy("{cpu: 30}", NULL),
                                   three_nodes(CPU("8500m"), NULL, NULL), false, NULL, 0),
                   0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/b1"));
  assert_true(sim_evicted(&r, "ns/a1"));
  assert_false(sim_evicted(&r, "ns/a2"));
  sim_run_free(&r);
}

/* A cordoned node can be underutilized (a source) but is never a target. */
static void test_cordoned_node_is_source_not_target(void **state) {
  (void)state;
  sim_run r;
  assert_int_equal(sim_run_strings(&r, hnu_policy("{cpu: 30}", NULL),
                                   three_nodes(CPU("5"), "\"unschedulable\":true", NULL), false,
                                   NULL, 0),
                   0);
  assert_string_equal(r.res.node_category[0], "underutilized");
  assert_true(sim_evicted(&r, "ns/a1"));
  assert_true(sim_evicted(&r, "ns/a2"));
  sim_run_free(&r);

  /* the only non-underutilized node is cordoned: no target at all */
  assert_int_equal(sim_run_strings(&r, hnu_policy("{cpu: 30}", NULL),
                                   three_nodes(CPU("5"), NULL, "\"unschedulable\":true"), false,
                                   NULL, 2),
                   0);
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
  sim_run r;
  cluster_begin();
  add_node("a", NULL);
  add_node("b", NULL);
  add_pod("a1", "ns", "a", CPU("5700m"));
  add_pod("b1", "ns", "b", CPU("8"));
  assert_int_equal(
      sim_run_strings(&r, hnu_policy("{cpu: 57}", NULL), cluster_done(), false, NULL, 0), 0);
  assert_string_equal(r.res.node_category[0], "underutilized");
  assert_true(sim_evicted(&r, "ns/a1"));
  sim_run_free(&r);

  cluster_begin();
  add_node("a", NULL);
  add_node("b", NULL);
  add_pod("a1", "ns", "a", CPU("700m"));
  add_pod("b1", "ns", "b", CPU("8"));
  assert_int_equal(
      sim_run_strings(&r, hnu_policy("{cpu: 7}", NULL), cluster_done(), false, NULL, 1), 0);
  assert_string_equal(r.res.node_category[0], "overutilized");
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "No node is underutilized, nothing to do here"), 1);
  sim_run_free(&r);
}

/* OnlyThresholdingResources: a pod must name a threshold resource in some regular or init
 * container's requests; the value does not matter (0 counts). */
static void test_only_thresholding_resources(void **state) {
  (void)state;
  sim_run r;
  cluster_begin();
  add_node("a", NULL);
  add_node("b", NULL);
  add_pod("a1-mem", "ns", "a", MEM("1"));
  add_pod("a2-none", "ns", "a", NOREQ);
  add_pod("a3-init", "ns", "a",
          NOREQ ",\"initContainers\":[{\"name\":\"i\",\"image\":\"i\",\"resources\":{\"requests\":{"
                "\"cpu\":\"100m\"}}}]");
  add_pod("a4-zero", "ns", "a", CPU("0"));
  add_pod("b1", "ns", "b", CPU("5"));
  const char *cl = cluster_done();
  assert_int_equal(
      sim_run_strings(&r,
                      hnu_policy("{cpu: 30}", "      evictionModes: [OnlyThresholdingResources]\n"),
                      cl, false, NULL, 0),
      0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/a3-init"));
  assert_true(sim_evicted(&r, "ns/a4-zero"));
  sim_run_free(&r);

  /* without the mode every pod is a candidate */
  assert_int_equal(sim_run_strings(&r, hnu_policy("{cpu: 30}", NULL), cl, false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 4);
  sim_run_free(&r);
}

/* evictableNamespaces.exclude keeps those pods; the rest still go. */
static void test_excluded_namespaces(void **state) {
  (void)state;
  sim_run r;
  cluster_begin();
  add_node("a", NULL);
  add_node("b", NULL);
  add_pod("a1", "keep", "a", CPU("1"));
  add_pod("a2", "ns", "a", CPU("1"));
  add_pod("b1", "ns", "b", CPU("5"));
  assert_int_equal(
      sim_run_strings(&r, hnu_policy("{cpu: 30}", "      evictableNamespaces: {exclude: [keep]}\n"),
                      cluster_done(), false, NULL, 0),
      0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/a2"));
  sim_run_free(&r);
}

/* The taint gate counts every effect, PreferNoSchedule included. */
static void test_target_taints_gate_pods(void **state) {
  (void)state;
  sim_run r;
  assert_int_equal(
      sim_run_strings(
          &r, hnu_policy("{cpu: 30}", NULL),
          three_nodes(
              CPU("5"), NULL,
              "\"taints\":[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"PreferNoSchedule\"}]"),
          false, NULL, 3),
      0);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "Skipping eviction for pod, doesn't tolerate node taint"), 3);
  sim_run_free(&r);
}

static void test_early_exits(void **state) {
  (void)state;
  sim_run r;
  assert_int_equal(sim_run_strings(&r, hnu_policy("{cpu: 30}", "      numberOfNodes: 2\n"),
                                   three_nodes(CPU("5"), NULL, NULL), false, NULL, 1),
                   0);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(
      sim_log_count(&r, "Number of nodes underutilized is less or equal than NumberOfNodes, "
                        "nothing to do here\" plugin=\"HighNodeUtilization\" "
                        "ExtensionPoint=\"Balance\" underutilizedNodes=2 numberOfNodes=2"),
      1);
  sim_run_free(&r);

  assert_int_equal(sim_run_strings(&r, hnu_policy("{cpu: 60}", NULL),
                                   three_nodes(CPU("5"), NULL, NULL), false, NULL, 1),
                   0);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "All nodes are underutilized, nothing to do here"), 1);
  sim_run_free(&r);
}

static void test_validation_messages(void **state) {
  (void)state;
  assert_policy_error(
      hnu_policy("{cpu: 30}", "      evictableNamespaces: {include: [a]}\n"),
      "in profile p: only Exclude namespaces can be set, inclusion is not supported");
  /* threshold errors are not prefixed, unlike LowNodeUtilization's */
  assert_policy_error(hnu_policy("{}", NULL), "in profile p: no resource threshold is configured");
  assert_policy_error(hnu_policy("{cpu: 30, memory: 101}", NULL),
                      "in profile p: memory threshold not in [0, 100] range");
  assert_policy_error(hnu_policy("{cpu: -1}", NULL),
                      "in profile p: cpu threshold not in [0, 100] range");
  assert_policy_error(
      hnu_policy("{cpu: 30}", "      evictionModes: [OnlyThresholdingResources, Bogus]\n"),
      "in profile p: invalid eviction mode Bogus");
  assert_policy_error(hnu_policy("{cpu: 30}", "      targetThresholds: {cpu: 50}\n"),
                      "strict decoding error: unknown field \"targetThresholds\"");
  /* first failing check wins: include is reported before a bad threshold */
  assert_policy_error(
      hnu_policy("{}", "      evictableNamespaces: {include: [a]}\n"),
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
