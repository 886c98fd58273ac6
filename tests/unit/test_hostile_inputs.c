/* test_hostile_inputs.c - clusters no API server would serve, run through a whole cycle: the
 * decisions must stay defined (no overflow, no crash) and sensible. The cases come from the
 * fuzz targets (tests/fuzz/fuzz_cycle.c); this suite also runs under ASan+UBSan, which turns
 * any undefined behaviour into a failure. */
#include "support/fixtures.h"
#include "support/support.h"

#include <string.h>

/* Requests near the int64 limit of milli-units: two pods of 9e15 cores on one node added up
 * past INT64_MAX (signed overflow in the pod, node and plugin sums). Sums now hold at the
 * limit, so the node counts as full, not as a negative usage. */
static void test_request_sums_hold_at_the_limit(void **state) {
  (void)state;
  cluster_begin();
  cluster_capacity("9000000000000000", "8Gi", "110");
  cluster_node("n1");
  cluster_node("n2");
  cluster_pod("a", "n1", .cpu = "9000000000000000", .memory = "1Gi");
  cluster_pod("b", "n1", .cpu = "9000000000000000", .memory = "1Gi");
  cluster_pod("c", "n1",
              .containers = "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":"
                            "\"9000000000000000\"}}},{\"name\":\"d\",\"resources\":{\"requests\":"
                            "{\"cpu\":\"9000000000000000\"}}}]",
              .spec = "\"overhead\":{\"cpu\":\"9000000000000000\"}");
  const char *snapshot = cluster_end();
  const char *pol = plugin_policy(.plugin = "LowNodeUtilization", .point = "balance",
                                  .args = "{thresholds: {cpu: 20, memory: 20}, "
                                          "targetThresholds: {cpu: 50, memory: 50}}");
  sim_run r = sim_run_ok(pol, snapshot, 4);
  assert_int_equal(sim_log_count(&r, "category=\"overutilized\" node=\"n1\""), 1);
  sim_run_free(&r);
  pol = plugin_policy(.plugin = "HighNodeUtilization", .point = "balance",
                      .args = "{thresholds: {cpu: 20, memory: 20}}");
  r = sim_run_ok(pol, snapshot, 4);
  sim_run_free(&r);
}

/* negative requests (refused by an API server) must not overflow the room left on nodes */
static void test_negative_requests(void **state) {
  (void)state;
  cluster_begin();
  cluster_capacity("9000000000000000", "8Gi", "110");
  cluster_node("n1");
  cluster_node("n2", .cpu = "-9000000000000000");
  cluster_node("n3", .cpu = "1");
  cluster_pod("a", "n1", .cpu = "-9000000000000000");
  cluster_pod("b", "n2", .cpu = "-9000000000000000");
  cluster_pod("c", "n2", .cpu = "-9000000000000000");
  for (int i = 0; i < 4; i++) {
    char name[8];
    snprintf(name, sizeof name, "p%d", i);
    cluster_pod(name, "n3", .cpu = "9000000000000000");
  }
  const char *snapshot = cluster_end();
  const char *pol = plugin_policy(.plugin = "LowNodeUtilization", .point = "balance",
                                  .args = "{thresholds: {cpu: 20, memory: 20}, "
                                          "targetThresholds: {cpu: 50, memory: 50}}");
  sim_run r = sim_run_ok(pol, snapshot, 4);
  sim_run_free(&r);
}

/* DefaultEvictor's minPodAge multiplied a start time's age in seconds by 1e9 unchecked: a
 * start time centuries away overflowed (found by fuzz_cycle). Go's time.Since saturates;
 * so does the age now: the year-1 pod is old enough, the year-9999 one is not. */
static void test_min_pod_age_with_start_times_centuries_away(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_pod("old", "n1", .created = "0001-01-01T00:00:00Z",
              .status = "\"startTime\":\"0001-01-01T00:00:00Z\"");
  cluster_pod("future", "n1", .created = "0001-01-01T00:00:00Z",
              .status = "\"startTime\":\"9999-12-31T23:59:59Z\"");
  const char *snapshot = cluster_end();
  const char *pol = plugin_policy(.plugin = "PodLifeTime", .args = "{maxPodLifeTimeSeconds: 60}",
                                  .evictor_args = "{minPodAge: 5m}");
  sim_run r = sim_run_ok(pol, snapshot, 4);
  assert_evictions(&r, "ns/old");
  sim_run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_request_sums_hold_at_the_limit),
      cmocka_unit_test(test_negative_requests),
      cmocka_unit_test(test_min_pod_age_with_start_times_centuries_away),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
