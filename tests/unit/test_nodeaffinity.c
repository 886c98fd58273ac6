/* test_nodeaffinity.c - RemovePodsViolatingNodeAffinity: both affinity types, the pods it
 * must leave alone, limits, unknown types and validation texts (plugins.md §6). */
#include "support/support.h"

#include <stdio.h>
#include <string.h>

#define REQUIRED "requiredDuringSchedulingIgnoredDuringExecution"
#define PREFERRED "preferredDuringSchedulingIgnoredDuringExecution"

/* ---- inputs ---- */

static char policy_buf[4096];

/* One profile `p`: DefaultEvictor with evictor_args, the plugin with args (YAML flow text),
 * top-level policy keys in `top` (e.g. limits). */
static const char *na_policy(const char *args, const char *top) {
  snprintf(policy_buf, sizeof policy_buf,
           "apiVersion: descheduler/v1alpha2\n"
           "kind: DeschedulerPolicy\n"
           "%s"
           "profiles:\n"
           "- name: p\n"
           "  pluginConfig:\n"
           "  - name: DefaultEvictor\n"
           "  - name: RemovePodsViolatingNodeAffinity\n"
           "    args: %s\n"
           "  plugins:\n"
           "    deschedule:\n"
           "      enabled: [RemovePodsViolatingNodeAffinity]\n",
           top ? top : "", args);
  return policy_buf;
}

/* A v1 List built item by item. */
static char cluster_buf[1 << 16];
static size_t cluster_len;
static int cluster_items;

static const char *cluster_sep(void) {
  return cluster_items++ ? "," : "";
}

static void cluster_begin(void) {
  cluster_items = 0;
  cluster_len = (size_t)snprintf(cluster_buf, sizeof cluster_buf,
                                 "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[");
}

static void add_node(const char *name, const char *labels, const char *taints) {
  cluster_len += (size_t)snprintf(
      cluster_buf + cluster_len, sizeof cluster_buf - cluster_len,
      "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":%s},\"spec\":{\"taints\":%s},"
      "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
      cluster_sep(), name, labels ? labels : "{}", taints ? taints : "[]");
}

/* A ReplicaSet-owned running pod in namespace ns with the given spec additions. */
static void add_pod(const char *ns, const char *name, const char *node, const char *spec) {
  cluster_len += (size_t)snprintf(
      cluster_buf + cluster_len, sizeof cluster_buf - cluster_len,
      "%s{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s-%s\","
      "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"rs\"}]},"
      "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\"}]%s%s},"
      "\"status\":{\"phase\":\"Running\"}}",
      cluster_sep(), name, ns, ns, name, node, spec ? "," : "", spec ? spec : "");
}

static const char *cluster_end(void) {
  snprintf(cluster_buf + cluster_len, sizeof cluster_buf - cluster_len, "]}");
  return cluster_buf;
}

#define AFFINITY_SSD                                                                               \
  "\"affinity\":{\"nodeAffinity\":{\"" REQUIRED                                                    \
  "\":{\"nodeSelectorTerms\":[{\"matchExpressions\":"                                              \
  "[{\"key\":\"disk\",\"operator\":\"In\",\"values\":[\"ssd\"]}]}]}}}"
#define PREFER_SSD                                                                                 \
  "\"affinity\":{\"nodeAffinity\":{\"" PREFERRED "\":[{\"weight\":10,\"preference\":"              \
  "{\"matchExpressions\":[{\"key\":\"disk\",\"operator\":\"In\",\"values\":[\"ssd\"]}]}}]}}"

#define SSD "{\"disk\":\"ssd\"}"

/* ---- required ---- */

/* Only pods with a required node-affinity object that no longer matches their node go; a
 * pod that only has a nodeSelector is never considered, even when it no longer matches. */
static void test_required_evicts_only_affinity_mismatch(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", SSD, NULL);
  add_node("b", NULL, NULL);
  add_pod("ns", "misplaced", "b", AFFINITY_SSD);
  add_pod("ns", "placed", "a", AFFINITY_SSD);
  add_pod("ns", "selector-only", "b", "\"nodeSelector\":{\"disk\":\"ssd\"}");
  add_pod("ns", "free", "b", NULL);
  sim_run r;
  assert_int_equal(sim_run_strings(&r, na_policy("{nodeAffinityType: [" REQUIRED "]}", NULL),
                                   cluster_end(), false, NULL, 1),
                   0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/misplaced"));
  assert_int_equal(sim_log_count(&r, "\"Evicting pod\" plugin=\"RemovePodsViolatingNodeAffinity\""
                                     " ExtensionPoint=\"Deschedule\" pod=\"ns/misplaced\""),
                   1);
  sim_run_free(&r);
}

/* The pod must fit some cycle node: a required affinity no node satisfies keeps it. */
static void test_required_needs_a_fitting_node(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", SSD, "[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]");
  add_node("b", NULL, NULL);
  add_pod("ns", "misplaced", "b", AFFINITY_SSD);
  sim_run r;
  assert_int_equal(sim_run_strings(&r, na_policy("{nodeAffinityType: [" REQUIRED "]}", NULL),
                                   cluster_end(), false, NULL, 0),
                   0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* ---- preferred ---- */

static void test_preferred_evicts_when_a_better_node_exists(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", SSD, NULL);
  add_node("b", NULL, NULL);
  add_pod("ns", "on-best", "a", PREFER_SSD);
  add_pod("ns", "on-worse", "b", PREFER_SSD);
  sim_run r;
  assert_int_equal(sim_run_strings(&r, na_policy("{nodeAffinityType: [" PREFERRED "]}", NULL),
                                   cluster_end(), false, NULL, 0),
                   0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/on-worse"));
  sim_run_free(&r);
}

/* Surprise: the best weight is taken over all cycle nodes, and the fit check includes the
 * pod's own node. A pod that prefers a node it cannot go to (taint) is still evicted. */
static void test_preferred_best_weight_ignores_fit(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", SSD, "[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]");
  add_node("b", NULL, NULL);
  add_pod("ns", "dreamer", "b", PREFER_SSD);
  sim_run r;
  assert_int_equal(sim_run_strings(&r, na_policy("{nodeAffinityType: [" PREFERRED "]}", NULL),
                                   cluster_end(), false, NULL, 0),
                   0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/dreamer"));
  sim_run_free(&r);
}

/* ---- passes, filters, limits ---- */

/* Two types: a pod evicted by the first pass is gone for the second. */
static void test_two_types_evict_a_pod_once(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", SSD, NULL);
  add_node("b", NULL, NULL);
  add_pod("ns", "both", "b",
          "\"affinity\":{\"nodeAffinity\":{\"" REQUIRED "\":{\"nodeSelectorTerms\":[{"
          "\"matchExpressions\":[{\"key\":\"disk\",\"operator\":\"Exists\"}]}]},\"" PREFERRED
          "\":[{\"weight\":5,\"preference\":{\"matchExpressions\":[{\"key\":\"disk\","
          "\"operator\":\"Exists\"}]}}]}}");
  sim_run r;
  assert_int_equal(
      sim_run_strings(&r, na_policy("{nodeAffinityType: [" REQUIRED ", " PREFERRED "]}", NULL),
                      cluster_end(), false, NULL, 2),
      0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/both"));
  assert_int_equal(sim_log_count(&r, "\"Executing for nodeAffinityType\""), 2);
  sim_run_free(&r);
}

/* Unknown types are an error line at run time, not a validation failure; the known types
 * around them still run. */
static void test_unknown_type_is_logged_and_skipped(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", SSD, NULL);
  add_node("b", NULL, NULL);
  add_pod("ns", "misplaced", "b", AFFINITY_SSD);
  sim_run r;
  assert_int_equal(sim_run_strings(&r, na_policy("{nodeAffinityType: [bogus]}", NULL),
                                   cluster_end(), false, NULL, 0),
                   0);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r,
                                 "\"Invalid nodeAffinityType\" plugin=\"RemovePodsViolatingNode"
                                 "Affinity\" ExtensionPoint=\"Deschedule\" nodeAffinity=\"bogus\""),
                   1);
  sim_run_free(&r);
  assert_int_equal(sim_run_strings(&r, na_policy("{nodeAffinityType: [bogus, " REQUIRED "]}", NULL),
                                   cluster_buf, false, NULL, 0),
                   0);
  assert_int_equal(r.res.nevictions, 1);
  assert_int_equal(sim_log_count(&r, "\"Invalid nodeAffinityType\""), 1);
  sim_run_free(&r);
}

/* Namespaces and labelSelector restrict the candidates. */
static void test_namespace_and_label_filters(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", SSD, NULL);
  add_node("b", NULL, NULL);
  add_pod("keep", "p1", "b", AFFINITY_SSD);
  add_pod("ns", "p2", "b", AFFINITY_SSD);
  sim_run r;
  assert_int_equal(
      sim_run_strings(
          &r, na_policy("{nodeAffinityType: [" REQUIRED "], namespaces: {exclude: [keep]}}", NULL),
          cluster_end(), false, NULL, 0),
      0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/p2"));
  sim_run_free(&r);
  /* a selector no pod matches */
  assert_int_equal(sim_run_strings(&r,
                                   na_policy("{nodeAffinityType: [" REQUIRED
                                             "], labelSelector: {matchLabels: {app: x}}}",
                                             NULL),
                                   cluster_buf, false, NULL, 0),
                   0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* A node limit moves on to the next node; the total limit ends the plugin, remaining
 * affinity types included. */
static void test_limits(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", SSD, NULL);
  add_node("b", NULL, NULL);
  add_node("c", NULL, NULL);
  add_pod("ns", "b1", "b", AFFINITY_SSD);
  add_pod("ns", "b2", "b", AFFINITY_SSD);
  add_pod("ns", "c1", "c", AFFINITY_SSD);
  sim_run r;
  assert_int_equal(sim_run_strings(&r,
                                   na_policy("{nodeAffinityType: [" REQUIRED "]}",
                                             "maxNoOfPodsToEvictPerNode: 1\n"),
                                   cluster_end(), false, NULL, 0),
                   0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/b1"));
  assert_true(sim_evicted(&r, "ns/c1"));
  sim_run_free(&r);

  assert_int_equal(sim_run_strings(&r,
                                   na_policy("{nodeAffinityType: [" REQUIRED ", " PREFERRED "]}",
                                             "maxNoOfPodsToEvictTotal: 1\n"),
                                   cluster_buf, false, NULL, 2),
                   0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/b1"));
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
