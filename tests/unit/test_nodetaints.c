/* test_nodetaints.c - RemovePodsViolatingNodeTaints: which taints count (effects, NoExecute
 * ignored, excluded and included lists with nil-vs-empty), cordoned nodes, limits and
 * validation (upstream's node_taint.go). */
#include "support/fixtures.h"
#include "support/support.h"

#include <string.h>

/* ---- inputs ---- */

/* One profile `p` with DefaultEvictor and the plugin with args (YAML flow text); `top` holds
 * top-level policy keys such as limits. */
static const char *nt_policy(const char *args, const char *top) {
  return plugin_policy(.plugin = "RemovePodsViolatingNodeTaints", .args = args, .top = top);
}

#define TOLERATE_DEDICATED_X                                                                       \
  "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"x\","                \
  "\"effect\":\"NoSchedule\"}]"

/* node a carries `taints`, node b none; a runs an intolerant and a tolerant pod */
static const char *two_pods_on_tainted(const char *taints) {
  cluster_begin();
  cluster_node("a", .taints = taints);
  cluster_node("b");
  cluster_pod("intolerant", "a");
  cluster_pod("tolerant", "a", .spec = TOLERATE_DEDICATED_X);
  return cluster_end();
}

static size_t run_count(const char *args, const char *cluster, const char *must_evict) {
  sim_run r = sim_run_ok(nt_policy(args, NULL), cluster, 0);
  size_t n = r.res.nevictions;
  if (must_evict)
    assert_true(sim_evicted(&r, must_evict));
  sim_run_free(&r);
  return n;
}

/* ---- effects ---- */

static void test_no_schedule_evicts_non_tolerating(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .taints = "dedicated=x:NoSchedule");
  cluster_node("b");
  cluster_pod("intolerant", "a");
  cluster_pod("tolerant", "a", .spec = TOLERATE_DEDICATED_X);
  cluster_pod("wildcard", "a", .spec = "\"tolerations\":[{\"operator\":\"Exists\"}]");
  cluster_pod(
      "wrong-value", "a",
      .spec = "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"y\"}]");
  cluster_pod("elsewhere", "b");
  sim_run r = sim_run_ok(nt_policy("{}", NULL), cluster_end(), 2);
  assert_evictions(&r, "ns/intolerant", "ns/wrong-value");
  assert_int_equal(
      sim_log_count(&r, "\"Not all taints with NoSchedule effect are tolerated after update for "
                        "pod on node\" plugin=\"RemovePodsViolatingNodeTaints\" "
                        "ExtensionPoint=\"Deschedule\" pod=\"ns/intolerant\" node=\"a\""),
      1);
  sim_run_free(&r);
}

/* Surprise: NoExecute taints are never considered (the kubelet handles them). */
static void test_no_execute_is_ignored(void **state) {
  (void)state;
  assert_int_equal(run_count("{}", two_pods_on_tainted("dedicated=x:NoExecute"), NULL), 0);
  assert_int_equal(run_count("{includePreferNoSchedule: true}",
                             two_pods_on_tainted("dedicated=x:NoExecute"), NULL),
                   0);
}

static void test_prefer_no_schedule_needs_the_flag(void **state) {
  (void)state;
  const char *c = two_pods_on_tainted("dedicated=x:PreferNoSchedule");
  assert_int_equal(run_count("{}", c, NULL), 0);
  /* the tolerant pod's toleration names effect NoSchedule, so it does not cover this taint */
  assert_int_equal(run_count("{includePreferNoSchedule: true}", c, "ns/tolerant"), 2);
}

/* ---- excluded and included taints ---- */

static void test_excluded_taints_by_key_or_key_value(void **state) {
  (void)state;
  const char *c = two_pods_on_tainted("dedicated=x:NoSchedule");
  assert_int_equal(run_count("{excludedTaints: [dedicated]}", c, NULL), 0);
  assert_int_equal(run_count("{excludedTaints: [dedicated=x]}", c, NULL), 0);
  assert_int_equal(run_count("{excludedTaints: [dedicated=y]}", c, "ns/intolerant"), 1);
  assert_int_equal(run_count("{excludedTaints: [dedi]}", c, "ns/intolerant"), 1);
  /* a taint without a value is named by its key only: "flag=" does not name it */
  c = two_pods_on_tainted("flag:NoSchedule");
  assert_int_equal(run_count("{excludedTaints: [\"flag=\"]}", c, NULL), 2);
  assert_int_equal(run_count("{excludedTaints: [flag]}", c, NULL), 0);
}

/* Surprise: includedTaints absent includes every taint, `[]` includes none. */
static void test_included_taints_nil_versus_empty(void **state) {
  (void)state;
  /* tolerant tolerates dedicated=x but not other=y */
  const char *c = two_pods_on_tainted("dedicated=x:NoSchedule,other=y:NoSchedule");
  assert_int_equal(run_count("{}", c, NULL), 2);
  assert_int_equal(run_count("{includedTaints: []}", c, NULL), 0);
  assert_int_equal(run_count("{includedTaints: [dedicated]}", c, "ns/intolerant"), 1);
  assert_int_equal(run_count("{includedTaints: [other=y]}", c, "ns/tolerant"), 2);
  assert_int_equal(run_count("{includedTaints: [other=z]}", c, NULL), 0);
}

/* Surprise: a cordoned node's unschedulable taint evicts its non-tolerating pods. */
static void test_cordoned_node_is_drained(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .unschedulable = true, .taints = "node.kubernetes.io/unschedulable:NoSchedule");
  cluster_node("b");
  cluster_pod("p1", "a");
  cluster_pod("p2", "a",
              .spec = "\"tolerations\":[{\"key\":\"node.kubernetes.io/unschedulable\","
                      "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]");
  cluster_pod("p3", "b");
  sim_run r = sim_run_ok(nt_policy("{}", NULL), cluster_end(), 0);
  assert_evictions(&r, "ns/p1");
  sim_run_free(&r);
}

/* ---- filters and limits ---- */

static void test_namespaces_and_label_selector(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .taints = "dedicated=x:NoSchedule");
  cluster_node("b");
  cluster_pod("p1", "a");
  cluster_pod("p2", "a", .ns = "other");
  const char *c = cluster_end();
  assert_int_equal(run_count("{namespaces: {include: [other]}}", c, "other/p2"), 1);
  assert_int_equal(run_count("{namespaces: {exclude: [other]}}", c, "ns/p1"), 1);
  assert_int_equal(run_count("{labelSelector: {matchLabels: {app: web}}}", c, NULL), 0);
  assert_int_equal(run_count("{labelSelector: {}}", c, NULL), 2);
}

/* A node limit moves on to the next node; the total limit stops the plugin. */
static void test_limits(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .taints = "dedicated=x:NoSchedule");
  cluster_node("b", .taints = "dedicated=x:NoSchedule");
  cluster_pod("a1", "a");
  cluster_pod("a2", "a");
  cluster_pod("b1", "b");
  const char *c = cluster_end();
  sim_run r = sim_run_ok(nt_policy("{}", "maxNoOfPodsToEvictPerNode: 1\n"), c, 0);
  assert_evictions(&r, "ns/a1", "ns/b1");
  sim_run_free(&r);
  r = sim_run_ok(nt_policy("{}", "maxNoOfPodsToEvictTotal: 2\n"), c, 0);
  assert_evictions(&r, "ns/a1", "ns/a2");
  sim_run_free(&r);
}

static void test_validation_messages(void **state) {
  (void)state;
  assert_policy_error(nt_policy("{includedTaints: [a], excludedTaints: [b]}", NULL),
                      "in profile p: either includedTaints or excludedTaints can be set, but not "
                      "both");
  assert_policy_error(nt_policy("{namespaces: {include: [a], exclude: [b]}}", NULL),
                      "in profile p: only one of Include/Exclude namespaces can be set");
  assert_policy_error(
      nt_policy("{namespaces: {include: [a], exclude: [b]}, includedTaints: [a], "
                "excludedTaints: [b]}",
                NULL),
      "in profile p: [only one of Include/Exclude namespaces can be set, either includedTaints "
      "or excludedTaints can be set, but not both]");
  assert_policy_error(nt_policy("{includePreferNoSchedule: yes-please}", NULL),
                      "includePreferNoSchedule");
  assert_policy_error(nt_policy("{excludeTaints: [a]}", NULL),
                      "strict decoding error: unknown field \"excludeTaints\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_no_schedule_evicts_non_tolerating),
      cmocka_unit_test(test_no_execute_is_ignored),
      cmocka_unit_test(test_prefer_no_schedule_needs_the_flag),
      cmocka_unit_test(test_excluded_taints_by_key_or_key_value),
      cmocka_unit_test(test_included_taints_nil_versus_empty),
      cmocka_unit_test(test_cordoned_node_is_drained),
      cmocka_unit_test(test_namespaces_and_label_selector),
      cmocka_unit_test(test_limits),
      cmocka_unit_test(test_validation_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
