/* test_lownodeutilization.c - LowNodeUtilization: classification edges and validation. */
#include "support/fixtures.h"
#include "support/support.h"

#include "../../src/plugins/nodeutilization.h"
#include "../../src/util/strbuf.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* thresholds t and targetThresholds target for cpu, memory and pods alike; more: further args
 * members ("useDeviationThresholds: true") or NULL */
static const char *lnu_policy(const char *t, const char *target, const char *more) {
  char args[512];
  snprintf(args, sizeof args,
           "{thresholds: {cpu: %s, memory: %s, pods: %s}, "
           "targetThresholds: {cpu: %s, memory: %s, pods: %s}%s%s}",
           t, t, t, target, target, target, more ? ", " : "", more ? more : "");
  return plugin_policy(.plugin = "LowNodeUtilization", .point = "balance", .args = args);
}

/* Two nodes of 100 cpu / 100 memory units / 100 pods; a and b run a_pods and b_pods pods of
 * 1 cpu and 1 memory unit. */
static const char *cluster(int a_pods, int b_pods) {
  cluster_begin();
  cluster_capacity("100", "100", "100");
  cluster_node("a");
  cluster_node("b");
  const char *nodes[2] = {"a", "b"};
  int counts[2] = {a_pods, b_pods};
  for (int n = 0; n < 2; n++)
    for (int i = 0; i < counts[n]; i++) {
      char name[16];
      snprintf(name, sizeof name, "%s-%03d", nodes[n], i);
      cluster_pod(name, nodes[n], .cpu = "1", .memory = "1");
    }
  return cluster_end();
}

/* 57 of 100 computes as 56.99999999999999, so a node at "57%" is under a 57 threshold. */
static void test_57_percent_is_under_57(void **state) {
  (void)state;
  sim_run r = sim_run_ok(lnu_policy("57", "80", NULL), cluster(90, 57), 0);
  assert_string_equal(r.res.node_category[1], "underutilized");
  assert_string_equal(r.res.node_category[0], "overutilized");
  sim_run_free(&r);
}

/* 7 of 100 computes as 7.000000000000001 > 7: not under a 7 threshold. */
static void test_7_percent_is_not_under_7(void **state) {
  (void)state;
  sim_run r = sim_run_ok(lnu_policy("7", "80", NULL), cluster(90, 7), 0);
  assert_string_equal(r.res.node_category[1], "appropriately utilized");
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* The classification line's percentages: rounded to two decimals, written as Go writes those
 * doubles (no trailing zeros, integers without a point, 100 not 1e+02). */
static void test_logged_percentages(void **state) {
  (void)state;
  cluster_begin();
  cluster_capacity("3", "3", "110");
  cluster_node("a");
  cluster_capacity("100", "100", "100");
  cluster_node("b");
  cluster_pod("a-1", "a", .cpu = "1", .memory = "2");
  for (int i = 0; i < 100; i++) {
    char name[16];
    snprintf(name, sizeof name, "b-%03d", i);
    cluster_pod(name, "b", .cpu = "1", .memory = "1");
  }
  sim_run r = sim_run_ok(lnu_policy("20", "50", NULL), cluster_end(), 0);
  /* 1/3 cpu, 2/3 memory, 1/110 pods; 100/100 of each */
  assert_int_equal(sim_log_count(&r, "node=\"a\" usage={\"cpu\":\"1\",\"memory\":\"2\","
                                     "\"pods\":\"1\"} usagePercentage={\"cpu\":33.33,"
                                     "\"memory\":66.67,\"pods\":0.91}"),
                   1);
  assert_int_equal(sim_log_count(&r, "node=\"b\" usage={\"cpu\":\"100\",\"memory\":\"100\","
                                     "\"pods\":\"100\"} usagePercentage={\"cpu\":100,"
                                     "\"memory\":100,\"pods\":100}"),
                   1);
  sim_run_free(&r);
}

/* The logged percentage is Go's JSON of the value rounded to two decimals: written without
 * printf (nu_format_pct), it must equal sb_append_json_double of the rounded double, whose
 * shortest form is found by trial. */
static void test_percentage_writer_matches_json(void **state) {
  (void)state;
  double fixed[] = {0,         -0.0,   0.004, 0.005,    0.015, 0.125,    33.333333,
                    66.666667, 99.995, 100,   250.5,    -0.5,  -0.004,   1e9 - 0.01,
                    1e9,       5e12,   NAN,   INFINITY, -1e-9, 0.1 + 0.2};
  uint64_t x = 88172645463325252ull;
  for (unsigned i = 0; i < 200000 + sizeof fixed / sizeof fixed[0]; i++) {
    double v;
    if (i < sizeof fixed / sizeof fixed[0]) {
      v = fixed[i];
    } else {
      xorshift64(&x);
      /* ratios as usage percentages are, and wider magnitudes of both signs */
      v = i % 2 ? (double)(x % 10000000) / (double)(1 + (x >> 40) % 99991) * 100
                : ldexp((double)(int64_t)(x >> 11) / 9007199254740992.0, (int)(x % 40) - 10);
    }
    strbuf got = {0}, want = {0};
    nu_format_pct(&got, v);
    sb_append_json_double(&want, round(v * 100) / 100);
    assert_string_equal(sb_str(&got), sb_str(&want));
    sb_free(&got);
    sb_free(&want);
  }
}

/* "under" is <= (non-strict); "over" is > (strict): exactly at target is not over. */
static void test_over_is_strict(void **state) {
  (void)state;
  sim_run r = sim_run_ok(lnu_policy("20", "50", NULL), cluster(50, 10), 0);
  assert_string_equal(r.res.node_category[0], "appropriately utilized");
  assert_string_equal(r.res.node_category[1], "underutilized");
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* Moving pods stops once the source is no longer above target (it may overshoot by one). */
static void test_evicts_until_below_target(void **state) {
  (void)state;
  sim_run r = sim_run_ok(lnu_policy("20", "50", NULL), cluster(55, 10), 1);
  /* cap = 50 of each; usage 55 -> stop when usage <= 50: 5 evictions */
  assert_int_equal(r.res.nevictions, 5);
  assert_int_equal(r.res.evicted, 5);
  assert_int_equal(sim_log_count(&r, "\"Number of evictions/requests\" totalEvicted=5"), 1);
  sim_run_free(&r);
}

/* Deviation mode: thresholds are offsets from the average usage. */
static void test_deviation_thresholds(void **state) {
  (void)state;
  /* average 50; low = 50-10 = 40, high = 50+10 = 60; a=70 over, b=30 under */
  sim_run r = sim_run_ok(lnu_policy("10", "10", "useDeviationThresholds: true"),
                                   cluster(70, 30), 0);
  assert_string_equal(r.res.node_category[0], "overutilized");
  assert_string_equal(r.res.node_category[1], "underutilized");
  assert_int_equal(r.res.nevictions, 10);
  sim_run_free(&r);
}

/* evictionLimits.node caps evictions per source node within the plugin run. */
static void test_eviction_limit_node(void **state) {
  (void)state;
  sim_run r = sim_run_ok(lnu_policy("20", "50", "evictionLimits: {node: 2}"),
                                   cluster(70, 10), 3);
  assert_int_equal(r.res.nevictions, 2);
  assert_int_equal(sim_log_count(&r, "Max number of evictions per node per plugin reached"), 1);
  sim_run_free(&r);
}

static void test_validation_messages(void **state) {
  (void)state;
  assert_policy_error(lnu_policy("20", "50", "evictableNamespaces: {include: [a]}"),
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
  assert_policy_error(lnu_policy("20", "50", "metricsUtilization: {source: Prometheus}"),
                      "prometheus query is required when metrics source is set to \"Prometheus\"");
  assert_policy_error(lnu_policy("20", "50", "metricsUtilization: {source: KubernetesMetrics, metricsServer: true}"),
                      "it is not allowed to set both \"KubernetesMetrics\" source and metricsServer");
  assert_policy_error(lnu_policy("20", "50", "thresholdz: {}"),
                      "strict decoding error: unknown field \"thresholdz\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_57_percent_is_under_57),
      cmocka_unit_test(test_logged_percentages),
      cmocka_unit_test(test_percentage_writer_matches_json),
      cmocka_unit_test(test_7_percent_is_not_under_7),
      cmocka_unit_test(test_over_is_strict),
      cmocka_unit_test(test_evicts_until_below_target),
      cmocka_unit_test(test_deviation_thresholds),
      cmocka_unit_test(test_eviction_limit_node),
      cmocka_unit_test(test_validation_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
