/* test_nodetaints.c - RemovePodsViolatingNodeTaints: which taints count (effects, excluded
 * and included lists with nil-vs-empty), cordoned nodes, limits and validation (plugins.md §7,
 * §12.8). */
#include "support/support.h"

#include <stdio.h>
#include <string.h>

/* ---- inputs ---- */

static char policy_buf[4096];

/* One profile `p` with DefaultEvictor and the plugin with args (YAML flow text); `top` holds
 * top-level policy keys such as limits. */
static const char *nt_policy(const char *args, const char *top) {
  snprintf(policy_buf, sizeof policy_buf,
           "apiVersion: descheduler/v1alpha2\n"
           "kind: DeschedulerPolicy\n"
           "%s"
           "profiles:\n"
           "- name: p\n"
           "  pluginConfig:\n"
           "  - name: DefaultEvictor\n"
           "  - name: RemovePodsViolatingNodeTaints\n"
           "    args: %s\n"
           "  plugins:\n"
           "    deschedule:\n"
           "      enabled: [RemovePodsViolatingNodeTaints]\n",
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

/* spec: the node's spec members, e.g. "\"taints\":[...]" (NULL for none) */
static void add_node(const char *name, const char *spec) {
  cluster_len += (size_t)snprintf(
      cluster_buf + cluster_len, sizeof cluster_buf - cluster_len,
      "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"},\"spec\":{%s},"
      "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
      cluster_sep(), name, spec ? spec : "");
}

/* A ReplicaSet-owned running pod; spec: extra spec members such as tolerations. */
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

#define TAINT(k, v, e) "{\"key\":\"" k "\",\"value\":\"" v "\",\"effect\":\"" e "\"}"
#define TOLERATE_DEDICATED_X                                                                       \
  "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"x\","                \
  "\"effect\":\"NoSchedule\"}]"

/* node a carries `taints`, node b none; a runs an intolerant and a tolerant pod */
static const char *two_pods_on_tainted(const char *taints) {
  char spec[1024];
  snprintf(spec, sizeof spec, "\"taints\":[%s]", taints);
  cluster_begin();
  add_node("a", spec);
  add_node("b", NULL);
  add_pod("ns", "intolerant", "a", NULL);
  add_pod("ns", "tolerant", "a", TOLERATE_DEDICATED_X);
  return cluster_end();
}

static size_t run_count(const char *args, const char *cluster, const char *must_evict) {
  sim_run r;
  assert_int_equal(sim_run_strings(&r, nt_policy(args, NULL), cluster, false, NULL, 0), 0);
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
  add_node("a", "\"taints\":[" TAINT("dedicated", "x", "NoSchedule") "]");
  add_node("b", NULL);
  add_pod("ns", "intolerant", "a", NULL);
  add_pod("ns", "tolerant", "a", TOLERATE_DEDICATED_X);
  add_pod("ns", "wildcard", "a", "\"tolerations\":[{\"operator\":\"Exists\"}]");
  add_pod("ns", "wrong-value", "a",
          "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"y\"}]");
  add_pod("ns", "elsewhere", "b", NULL);
  sim_run r;
  assert_int_equal(sim_run_strings(&r, nt_policy("{}", NULL), cluster_end(), false, NULL, 2), 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/intolerant"));
  assert_true(sim_evicted(&r, "ns/wrong-value"));
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
  assert_int_equal(run_count("{}", two_pods_on_tainted(TAINT("dedicated", "x", "NoExecute")), NULL),
                   0);
  assert_int_equal(run_count("{includePreferNoSchedule: true}",
                             two_pods_on_tainted(TAINT("dedicated", "x", "NoExecute")), NULL),
                   0);
}

static void test_prefer_no_schedule_needs_the_flag(void **state) {
  (void)state;
  const char *c = two_pods_on_tainted(TAINT("dedicated", "x", "PreferNoSchedule"));
  assert_int_equal(run_count("{}", c, NULL), 0);
  /* the tolerant pod's toleration names effect NoSchedule, so it does not cover this taint */
  assert_int_equal(run_count("{includePreferNoSchedule: true}", c, "ns/tolerant"), 2);
}

/* ---- excluded and included taints ---- */

static void test_excluded_taints_by_key_or_key_value(void **state) {
  (void)state;
  const char *c = two_pods_on_tainted(TAINT("dedicated", "x", "NoSchedule"));
  assert_int_equal(run_count("{excludedTaints: [dedicated]}", c, NULL), 0);
  assert_int_equal(run_count("{excludedTaints: [dedicated=x]}", c, NULL), 0);
  assert_int_equal(run_count("{excludedTaints: [dedicated=y]}", c, "ns/intolerant"), 1);
  assert_int_equal(run_count("{excludedTaints: [dedi]}", c, "ns/intolerant"), 1);
  /* a taint without a value is named by its key only: "flag=" does not name it */
  c = two_pods_on_tainted(TAINT("flag", "", "NoSchedule"));
  assert_int_equal(run_count("{excludedTaints: [\"flag=\"]}", c, NULL), 2);
  assert_int_equal(run_count("{excludedTaints: [flag]}", c, NULL), 0);
}

/* Surprise: includedTaints absent includes every taint, `[]` includes none. */
static void test_included_taints_nil_versus_empty(void **state) {
  (void)state;
  /* tolerant tolerates dedicated=x but not other=y */
  const char *c = two_pods_on_tainted(
      TAINT("dedicated", "x", "NoSchedule") "," TAINT("other", "y", "NoSchedule"));
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
  add_node("a", "\"unschedulable\":true,\"taints\":[" TAINT("node.kubernetes.io/unschedulable", "",
                                                            "NoSchedule") "]");
  add_node("b", NULL);
  add_pod("ns", "p1", "a", NULL);
  add_pod("ns", "p2", "a",
          "\"tolerations\":[{\"key\":\"node.kubernetes.io/unschedulable\","
          "\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]");
  add_pod("ns", "p3", "b", NULL);
  sim_run r;
  assert_int_equal(sim_run_strings(&r, nt_policy("{}", NULL), cluster_end(), false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/p1"));
  sim_run_free(&r);
}

/* ---- filters and limits ---- */

static void test_namespaces_and_label_selector(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", "\"taints\":[" TAINT("dedicated", "x", "NoSchedule") "]");
  add_node("b", NULL);
  add_pod("ns", "p1", "a", NULL);
  add_pod("other", "p2", "a", NULL);
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
  add_node("a", "\"taints\":[" TAINT("dedicated", "x", "NoSchedule") "]");
  add_node("b", "\"taints\":[" TAINT("dedicated", "x", "NoSchedule") "]");
  add_pod("ns", "a1", "a", NULL);
  add_pod("ns", "a2", "a", NULL);
  add_pod("ns", "b1", "b", NULL);
  const char *c = cluster_end();
  sim_run r;
  assert_int_equal(
      sim_run_strings(&r, nt_policy("{}", "maxNoOfPodsToEvictPerNode: 1\n"), c, false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/a1"));
  assert_true(sim_evicted(&r, "ns/b1"));
  sim_run_free(&r);
  assert_int_equal(
      sim_run_strings(&r, nt_policy("{}", "maxNoOfPodsToEvictTotal: 2\n"), c, false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/a1"));
  assert_true(sim_evicted(&r, "ns/a2"));
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
