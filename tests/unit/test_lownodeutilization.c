/* test_lownodeutilization.c - LowNodeUtilization: classification edges and validation. */
#include "support/support.h"

#include <string.h>

static const char *policy_fmt =
    "apiVersion: descheduler/v1alpha2\n"
    "kind: DeschedulerPolicy\n"
    "profiles:\n"
    "- name: p\n"
    "  pluginConfig:\n"
    "  - name: DefaultEvictor\n"
    "  - name: LowNodeUtilization\n"
    "    args:\n"
    "      thresholds: {cpu: %s, memory: %s, pods: %s}\n"
    "      targetThresholds: {cpu: %s, memory: %s, pods: %s}\n"
    "%s"
    "  plugins:\n"
    "    balance:\n"
    "      enabled: [LowNodeUtilization]\n";

static char policy_buf[4096];

static const char *lnu_policy(const char *t, const char *target, const char *extra) {
  snprintf(policy_buf, sizeof policy_buf, policy_fmt, t, t, t, target, target, target,
           extra ? extra : "");
  return policy_buf;
}

/* Two nodes of 100 cpu / 100 memory units / 100 pods; node a runs `a_pods` pods of 1 cpu. */
static char cluster_buf[1 << 16];

static const char *cluster(int a_pods, int b_pods) {
  char *p = cluster_buf;
  p += sprintf(p, "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[");
  const char *nodes[2] = {"a", "b"};
  for (int i = 0; i < 2; i++)
    p += sprintf(p,
                 "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"},\"status\":{\"allocatable\":"
                 "{\"cpu\":\"100\",\"memory\":\"100\",\"pods\":\"100\"}}}",
                 i ? "," : "", nodes[i]);
  int counts[2] = {a_pods, b_pods};
  for (int n = 0; n < 2; n++)
    for (int i = 0; i < counts[n]; i++)
      p += sprintf(p,
                   ",{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-%03d\",\"namespace\":\"ns\",\"uid\":"
                   "\"u-%s-%d\",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"rs\"}]},"
                   "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"resources\":"
                   "{\"requests\":{\"cpu\":\"1\",\"memory\":\"1\"}}}]},\"status\":{\"phase\":\"Running\"}}",
                   nodes[n], i, nodes[n], i, nodes[n]);
  sprintf(p, "]}");
  return cluster_buf;
}

/* 57 of 100 computes as 56.99999999999999, so a node at "57%" is under a 57 threshold. */
static void test_57_percent_is_under_57(void **state) {
  (void)state;
  sim_run r;
  assert_int_equal(sim_run_strings(&r, lnu_policy("57", "80", NULL), cluster(90, 57), false, NULL, 0), 0);
  assert_string_equal(r.res.node_category[1], "underutilized");
  assert_string_equal(r.res.node_category[0], "overutilized");
  sim_run_free(&r);
}

/* 7 of 100 computes as 7.000000000000001 > 7: not under a 7 threshold. */
static void test_7_percent_is_not_under_7(void **state) {
  (void)state;
  sim_run r;
  assert_int_equal(sim_run_strings(&r, lnu_policy("7", "80", NULL), cluster(90, 7), false, NULL, 0), 0);
  assert_string_equal(r.res.node_category[1], "appropriately utilized");
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* "under" is <= (non-strict); "over" is > (strict): exactly at target is not over. */
static void test_over_is_strict(void **state) {
  (void)state;
  sim_run r;
  assert_int_equal(sim_run_strings(&r, lnu_policy("20", "50", NULL), cluster(50, 10), false, NULL, 0), 0);
  assert_string_equal(r.res.node_category[0], "appropriately utilized");
  assert_string_equal(r.res.node_category[1], "underutilized");
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* Moving pods stops once the source is no longer above target (it may overshoot by one). */
static void test_evicts_until_below_target(void **state) {
  (void)state;
  sim_run r;
  assert_int_equal(sim_run_strings(&r, lnu_policy("20", "50", NULL), cluster(55, 10), false, NULL, 1), 0);
  /* cap = 50 of each; usage 55 -> stop when usage <= 50: 5 evictions */
  assert_int_equal(r.res.nevictions, 5);
  assert_int_equal(r.res.evicted, 5);
  assert_int_equal(sim_log_count(&r, "\"Number of evictions/requests\" totalEvicted=5"), 1);
  sim_run_free(&r);
}

/* Deviation mode: thresholds are offsets from the average usage. */
static void test_deviation_thresholds(void **state) {
  (void)state;
  sim_run r;
  /* average 50; low = 50-10 = 40, high = 50+10 = 60; a=70 over, b=30 under */
  assert_int_equal(sim_run_strings(&r, lnu_policy("10", "10", "      useDeviationThresholds: true\n"),
                                   cluster(70, 30), false, NULL, 0),
                   0);
  assert_string_equal(r.res.node_category[0], "overutilized");
  assert_string_equal(r.res.node_category[1], "underutilized");
  assert_int_equal(r.res.nevictions, 10);
  sim_run_free(&r);
}

/* evictionLimits.node caps evictions per source node within the plugin run. */
static void test_eviction_limit_node(void **state) {
  (void)state;
  sim_run r;
  assert_int_equal(sim_run_strings(&r, lnu_policy("20", "50", "      evictionLimits: {node: 2}\n"),
                                   cluster(70, 10), false, NULL, 3),
                   0);
  assert_int_equal(r.res.nevictions, 2);
  assert_int_equal(sim_log_count(&r, "Max number of evictions per node per plugin reached"), 1);
  sim_run_free(&r);
}

static void test_validation_messages(void **state) {
  (void)state;
  assert_policy_error(lnu_policy("20", "50", "      evictableNamespaces: {include: [a]}\n"),
                      "in profile p: only Exclude namespaces can be set, inclusion is not supported");
  assert_policy_error(lnu_policy("60", "50", NULL),
                      "in profile p: thresholds' cpu percentage is greater than targetThresholds'");
  assert_policy_error(lnu_policy("120", "150", NULL),
                      "in profile p: thresholds config is not valid: cpu threshold not in [0, 100] range");
  assert_policy_error(lnu_policy("20", "150", NULL),
                      "in profile p: targetThresholds config is not valid: cpu threshold not in [0, 100] range");
  assert_policy_error("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n"
                      "  pluginConfig:\n  - name: LowNodeUtilization\n    args:\n      thresholds: {}\n"
                      "      targetThresholds: {cpu: 1}\n",
                      "thresholds config is not valid: no resource threshold is configured");
  assert_policy_error("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n"
                      "  pluginConfig:\n  - name: LowNodeUtilization\n    args:\n      thresholds: {cpu: 1}\n"
                      "      targetThresholds: {memory: 1}\n",
                      "thresholds and targetThresholds configured different resources");
  assert_policy_error(lnu_policy("20", "50", "      metricsUtilization: {source: Prometheus}\n"),
                      "prometheus query is required when metrics source is set to \"Prometheus\"");
  assert_policy_error(lnu_policy("20", "50", "      metricsUtilization: {source: KubernetesMetrics, metricsServer: true}\n"),
                      "it is not allowed to set both \"KubernetesMetrics\" source and metricsServer");
  assert_policy_error(lnu_policy("20", "50", "      thresholdz: {}\n"),
                      "strict decoding error: unknown field \"thresholdz\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_57_percent_is_under_57),
      cmocka_unit_test(test_7_percent_is_not_under_7),
      cmocka_unit_test(test_over_is_strict),
      cmocka_unit_test(test_evicts_until_below_target),
      cmocka_unit_test(test_deviation_thresholds),
      cmocka_unit_test(test_eviction_limit_node),
      cmocka_unit_test(test_validation_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
