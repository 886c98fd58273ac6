/* test_nodeaffinity.c - RemovePodsViolatingNodeAffinity: both affinity types, the pods it
 * must leave alone, limits, unknown types and validation texts (upstream's node_affinity.go). */
#include "support/fixtures.h"
#include "support/support.h"

#include <string.h>

#define REQUIRED "requiredDuringSchedulingIgnoredDuringExecution"
#define PREFERRED "preferredDuringSchedulingIgnoredDuringExecution"

/* ---- inputs ---- */

/* One profile `p`: DefaultEvictor, the plugin with args (YAML flow text), top-level policy
 * keys in `top` (e.g. limits). */
static const char *na_policy(const char *args, const char *top) {
  return plugin_policy(.plugin = "RemovePodsViolatingNodeAffinity", .args = args, .top = top);
}

#define AFFINITY_SSD                                                                               \
  "\"affinity\":{\"nodeAffinity\":{\"" REQUIRED                                                    \
  "\":{\"nodeSelectorTerms\":[{\"matchExpressions\":"                                              \
  "[{\"key\":\"disk\",\"operator\":\"In\",\"values\":[\"ssd\"]}]}]}}}"
#define PREFER_SSD                                                                                 \
  "\"affinity\":{\"nodeAffinity\":{\"" PREFERRED "\":[{\"weight\":10,\"preference\":"              \
  "{\"matchExpressions\":[{\"key\":\"disk\",\"operator\":\"In\",\"values\":[\"ssd\"]}]}}]}}"

#define SSD "disk=ssd"
#define DEDICATED "dedicated=x:NoSchedule"

/* ---- required ---- */

/* Only pods with a required node-affinity object that no longer matches their node go; a
 * pod that only has a nodeSelector is never considered, even when it no longer matches. */
static void test_required_evicts_only_affinity_mismatch(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = SSD);
  cluster_node("b");
  cluster_pod("misplaced", "b", .spec = AFFINITY_SSD);
  cluster_pod("placed", "a", .spec = AFFINITY_SSD);
  cluster_pod("selector-only", "b", .node_selector = SSD);
  cluster_pod("free", "b");
  sim_run r = sim_run_ok(na_policy("{nodeAffinityType: [" REQUIRED "]}", NULL), cluster_end(), 1);
  assert_evictions(&r, "ns/misplaced");
  assert_int_equal(sim_log_count(&r, "\"Evicting pod\" plugin=\"RemovePodsViolatingNodeAffinity\""
                                     " ExtensionPoint=\"Deschedule\" pod=\"ns/misplaced\""),
                   1);
  sim_run_free(&r);
}

/* The pod must fit some cycle node: a required affinity no node satisfies keeps it. */
static void test_required_needs_a_fitting_node(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = SSD, .taints = DEDICATED);
  cluster_node("b");
  cluster_pod("misplaced", "b", .spec = AFFINITY_SSD);
  sim_run r = sim_run_ok(na_policy("{nodeAffinityType: [" REQUIRED "]}", NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* ---- preferred ---- */

static void test_preferred_evicts_when_a_better_node_exists(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = SSD);
  cluster_node("b");
  cluster_pod("on-best", "a", .spec = PREFER_SSD);
  cluster_pod("on-worse", "b", .spec = PREFER_SSD);
  sim_run r = sim_run_ok(na_policy("{nodeAffinityType: [" PREFERRED "]}", NULL), cluster_end(), 0);
  assert_evictions(&r, "ns/on-worse");
  sim_run_free(&r);
}

/* Surprise: the best weight is taken over all cycle nodes, and the fit check includes the
 * pod's own node. A pod that prefers a node it cannot go to (taint) is still evicted. */
static void test_preferred_best_weight_ignores_fit(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = SSD, .taints = DEDICATED);
  cluster_node("b");
  cluster_pod("dreamer", "b", .spec = PREFER_SSD);
  sim_run r = sim_run_ok(na_policy("{nodeAffinityType: [" PREFERRED "]}", NULL), cluster_end(), 0);
  assert_evictions(&r, "ns/dreamer");
  sim_run_free(&r);
}

/* ---- passes, filters, limits ---- */

/* Two types: a pod evicted by the first pass is gone for the second. */
static void test_two_types_evict_a_pod_once(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = SSD);
  cluster_node("b");
  cluster_pod(
      "both", "b",
      .spec = "\"affinity\":{\"nodeAffinity\":{\"" REQUIRED "\":{\"nodeSelectorTerms\":[{"
              "\"matchExpressions\":[{\"key\":\"disk\",\"operator\":\"Exists\"}]}]},\"" PREFERRED
              "\":[{\"weight\":5,\"preference\":{\"matchExpressions\":[{\"key\":\"disk\","
              "\"operator\":\"Exists\"}]}}]}}");
  sim_run r = sim_run_ok(na_policy("{nodeAffinityType: [" REQUIRED ", " PREFERRED "]}", NULL),
                         cluster_end(), 2);
  assert_evictions(&r, "ns/both");
  assert_int_equal(sim_log_count(&r, "\"Executing for nodeAffinityType\""), 2);
  sim_run_free(&r);
}

/* Unknown types are an error line at run time, not a validation failure; the known types
 * around them still run. */
static void test_unknown_type_is_logged_and_skipped(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = SSD);
  cluster_node("b");
  cluster_pod("misplaced", "b", .spec = AFFINITY_SSD);
  sim_run r = sim_run_ok(na_policy("{nodeAffinityType: [bogus]}", NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r,
                                 "\"Invalid nodeAffinityType\" plugin=\"RemovePodsViolatingNode"
                                 "Affinity\" ExtensionPoint=\"Deschedule\" nodeAffinity=\"bogus\""),
                   1);
  sim_run_free(&r);
  r = sim_run_ok(na_policy("{nodeAffinityType: [bogus, " REQUIRED "]}", NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_int_equal(sim_log_count(&r, "\"Invalid nodeAffinityType\""), 1);
  sim_run_free(&r);
}

/* Namespaces and labelSelector restrict the candidates. */
static void test_namespace_and_label_filters(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = SSD);
  cluster_node("b");
  cluster_pod("p1", "b", .ns = "keep", .spec = AFFINITY_SSD);
  cluster_pod("p2", "b", .spec = AFFINITY_SSD);
  sim_run r = sim_run_ok(
      na_policy("{nodeAffinityType: [" REQUIRED "], namespaces: {exclude: [keep]}}", NULL),
      cluster_end(), 0);
  assert_evictions(&r, "ns/p2");
  sim_run_free(&r);
  /* a selector no pod matches */
  r = sim_run_ok(
      na_policy("{nodeAffinityType: [" REQUIRED "], labelSelector: {matchLabels: {app: x}}}", NULL),
      cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* A node limit moves on to the next node; the total limit ends the plugin, remaining
 * affinity types included. */
static void test_limits(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = SSD);
  cluster_node("b");
  cluster_node("c");
  cluster_pod("b1", "b", .spec = AFFINITY_SSD);
  cluster_pod("b2", "b", .spec = AFFINITY_SSD);
  cluster_pod("c1", "c", .spec = AFFINITY_SSD);
  sim_run r =
      sim_run_ok(na_policy("{nodeAffinityType: [" REQUIRED "]}", "maxNoOfPodsToEvictPerNode: 1\n"),
                 cluster_end(), 0);
  assert_evictions(&r, "ns/b1", "ns/c1");
  sim_run_free(&r);

  r = sim_run_ok(na_policy("{nodeAffinityType: [" REQUIRED ", " PREFERRED "]}",
                           "maxNoOfPodsToEvictTotal: 1\n"),
                 cluster_end(), 2);
  assert_evictions(&r, "ns/b1");
  assert_int_equal(sim_log_count(&r, "\"Executing for nodeAffinityType\""), 1);
  sim_run_free(&r);
}

static void test_validation_messages(void **state) {
  (void)state;
  assert_policy_error(na_policy("{}", NULL), "in profile p: nodeAffinityType needs to be set");
  assert_policy_error(na_policy("{nodeAffinityType: []}", NULL),
                      "in profile p: nodeAffinityType needs to be set");
  assert_policy_error(na_policy("{nodeAffinityType: [" REQUIRED
                                "], namespaces: {include: [a], exclude: [b]}}",
                                NULL),
                      "in profile p: only one of Include/Exclude namespaces can be set");
  assert_policy_error(
      na_policy("{namespaces: {include: [a], exclude: [b]}}", NULL),
      "in profile p: [nodeAffinityType needs to be set, only one of Include/Exclude "
      "namespaces can be set]");
  assert_policy_error(na_policy("{nodeAffinityTypes: [" REQUIRED "]}", NULL),
                      "strict decoding error: unknown field \"nodeAffinityTypes\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_required_evicts_only_affinity_mismatch),
      cmocka_unit_test(test_required_needs_a_fitting_node),
      cmocka_unit_test(test_preferred_evicts_when_a_better_node_exists),
      cmocka_unit_test(test_preferred_best_weight_ignores_fit),
      cmocka_unit_test(test_two_types_evict_a_pod_once),
      cmocka_unit_test(test_unknown_type_is_logged_and_skipped),
      cmocka_unit_test(test_namespace_and_label_filters),
      cmocka_unit_test(test_limits),
      cmocka_unit_test(test_validation_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
