/* test_interpodantiaffinity.c - RemovePodsViolatingInterPodAntiAffinity: who goes first, the
 * asymmetry of terms, topology domains, namespaces, limits and validation (plugins.md §8). */
#include "support/support.h"

#include <stdio.h>
#include <string.h>

/* ---- inputs ---- */

static char policy_buf[4096];

static const char *ipa_policy(const char *args, const char *top) {
  snprintf(policy_buf, sizeof policy_buf,
           "apiVersion: descheduler/v1alpha2\n"
           "kind: DeschedulerPolicy\n"
           "%s"
           "profiles:\n"
           "- name: p\n"
           "  pluginConfig:\n"
           "  - name: DefaultEvictor\n"
           "  - name: RemovePodsViolatingInterPodAntiAffinity\n"
           "    args: %s\n"
           "  plugins:\n"
           "    deschedule:\n"
           "      enabled: [RemovePodsViolatingInterPodAntiAffinity]\n",
           top ? top : "", args);
  return policy_buf;
}

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

static void add_node(const char *name, const char *labels) {
  cluster_len += (size_t)snprintf(
      cluster_buf + cluster_len, sizeof cluster_buf - cluster_len,
      "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\",\"labels\":%s},"
      "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
      cluster_sep(), name, labels ? labels : "{}");
}

/* A running pod; owned by a ReplicaSet unless bare. spec, status: extra members. */
static void add_pod_status(const char *ns, const char *name, const char *node, const char *labels,
                           bool bare, const char *spec, const char *status) {
  cluster_len += (size_t)snprintf(
      cluster_buf + cluster_len, sizeof cluster_buf - cluster_len,
      "%s{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s-%s\","
      "\"labels\":%s%s},"
      "\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\"}]%s%s},"
      "\"status\":{\"phase\":\"Running\"%s%s}}",
      cluster_sep(), name, ns, ns, name, labels ? labels : "{}",
      bare ? "" : ",\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"rs\"}]",
      node, spec ? "," : "", spec ? spec : "", status ? "," : "", status ? status : "");
}

static void add_pod_full(const char *ns, const char *name, const char *node, const char *labels,
                         bool bare, const char *spec) {
  add_pod_status(ns, name, node, labels, bare, spec, NULL);
}

static void add_pod(const char *name, const char *node, const char *labels, const char *spec) {
  add_pod_full("ns", name, node, labels, false, spec);
}

static const char *cluster_end(void) {
  snprintf(cluster_buf + cluster_len, sizeof cluster_buf - cluster_len, "]}");
  return cluster_buf;
}

#define DB "{\"app\":\"db\"}"
#define WEB "{\"app\":\"web\"}"
/* required anti-affinity against app=<app> in topology `key`, namespaces `nss` (JSON list) */
#define AVOID(app, key, nss)                                                                       \
  "\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"       \
  "\"labelSelector\":{\"matchLabels\":{\"app\":\"" app "\"}},\"topologyKey\":\"" key               \
  "\",\"namespaces\":" nss "}]}}"
#define AVOID_DB_ON_HOST AVOID("db", "kubernetes.io/hostname", "[]")
#define HOST(n) "{\"kubernetes.io/hostname\":\"" n "\",\"zone\":\"" n "\"}"

static sim_run run(const char *args, const char *top, int v) {
  sim_run r;
  assert_int_equal(sim_run_strings(&r, ipa_policy(args, top), cluster_end(), false, NULL, v), 0);
  return r;
}

/* ---- ordering ---- */

/* Of two pods excluding each other, the lower priority one goes; then the other no longer
 * conflicts and stays. */
static void test_lower_priority_member_goes_first(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", HOST("a"));
  add_node("b", HOST("b"));
  add_pod("high", "a", DB, "\"priority\":100," AVOID_DB_ON_HOST);
  add_pod("low", "a", DB, "\"priority\":10," AVOID_DB_ON_HOST);
  sim_run r = run("{}", NULL, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/low"));
  sim_run_free(&r);
}

/* Equal priority: BestEffort before Burstable, then name order (the fixed tie-break). */
static void test_ties_follow_qos_then_name(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", HOST("a"));
  add_node("b", HOST("b"));
  add_pod_status("ns", "a-burstable", "a", DB, false, AVOID_DB_ON_HOST,
                 "\"qosClass\":\"Burstable\"");
  add_pod("b-besteffort", "a", DB, AVOID_DB_ON_HOST);
  add_pod("c-besteffort", "a", DB, AVOID_DB_ON_HOST);
  sim_run r = run("{}", NULL, 0);
  /* b goes first, then c still conflicts with a-burstable and goes; a-burstable is left alone */
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/b-besteffort"));
  assert_true(sim_evicted(&r, "ns/c-besteffort"));
  sim_run_free(&r);
}

/* Surprise: only the candidate's own terms count. The pod with the term is evicted even
 * with the higher priority; the pod it avoids has no term and stays. */
static void test_asymmetric_terms(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", HOST("a"));
  add_node("b", HOST("b"));
  add_pod("picky", "a", NULL, "\"priority\":1000," AVOID("web", "kubernetes.io/hostname", "[]"));
  add_pod("web", "a", WEB, "\"priority\":1");
  sim_run r = run("{}", NULL, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/picky"));
  sim_run_free(&r);
}

/* Conflicting pods count whether or not they are evictable themselves; a non-evictable
 * candidate stays. */
static void test_non_evictable_pods_still_conflict(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", HOST("a"));
  add_node("b", HOST("b"));
  add_pod("critical", "a", DB, "\"priority\":2000000000," AVOID_DB_ON_HOST);
  add_pod("critical-2", "a", DB, "\"priority\":2000000000," AVOID_DB_ON_HOST);
  add_pod_full("ns", "bare", "b", DB, true, NULL);
  add_pod("near-bare", "b", NULL, AVOID_DB_ON_HOST);
  sim_run r = run("{}", NULL, 0);
  /* both critical pods are protected; the bare db pod on b still repels near-bare */
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/near-bare"));
  sim_run_free(&r);
}

/* ---- topology and namespaces ---- */

static void test_topology_domains(void **state) {
  (void)state;
  /* same zone on different nodes conflicts */
  cluster_begin();
  add_node("a", "{\"zone\":\"z1\"}");
  add_node("b", "{\"zone\":\"z1\"}");
  add_node("c", "{\"zone\":\"z2\"}");
  add_pod("x", "a", NULL, AVOID("db", "zone", "[]"));
  add_pod("db", "b", DB, NULL);
  sim_run r = run("{}", NULL, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/x"));
  sim_run_free(&r);

  /* other zone: no conflict */
  cluster_begin();
  add_node("a", "{\"zone\":\"z1\"}");
  add_node("b", "{\"zone\":\"z1\"}");
  add_node("c", "{\"zone\":\"z2\"}");
  add_pod("x", "a", NULL, AVOID("db", "zone", "[]"));
  add_pod("db", "c", DB, NULL);
  r = run("{}", NULL, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);

  /* a topology key no node carries: only the same node conflicts */
  cluster_begin();
  add_node("a", NULL);
  add_node("b", NULL);
  add_pod("x", "a", NULL, AVOID("db", "rack", "[]"));
  add_pod("y", "a", NULL, AVOID("db", "rack", "[]"));
  add_pod("db-a", "a", DB, NULL);
  add_pod("db-b", "b", DB, NULL);
  add_pod("z", "b", NULL, AVOID("web", "rack", "[]"));
  r = run("{}", NULL, 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/x"));
  assert_true(sim_evicted(&r, "ns/y"));
  sim_run_free(&r);
}

/* A term without namespaces looks at the candidate's namespace only; listed namespaces
 * replace it. Pods outside the plugin's namespaces never conflict. */
static void test_term_namespaces_and_plugin_filter(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", HOST("a"));
  add_node("b", HOST("b"));
  add_pod_full("ns", "own-ns-only", "a", NULL, false, AVOID_DB_ON_HOST);
  add_pod_full("ns", "names-other", "a", NULL, false,
               AVOID("db", "kubernetes.io/hostname", "[\"other\"]"));
  add_pod_full("other", "db", "a", DB, false, NULL);
  sim_run r = run("{}", NULL, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/names-other"));
  sim_run_free(&r);

  r = run("{namespaces: {exclude: [other]}}", NULL, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);

  r = run("{labelSelector: {matchExpressions: [{key: app, operator: DoesNotExist}]}}", NULL, 0);
  assert_int_equal(r.res.nevictions, 0); /* the db pod is not listed, so nobody conflicts */
  sim_run_free(&r);
}

/* A pod with the candidate's name never conflicts, even in another namespace. */
static void test_same_name_never_conflicts(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", HOST("a"));
  add_node("b", HOST("b"));
  add_pod_full("ns", "twin", "a", NULL, false,
               AVOID("db", "kubernetes.io/hostname", "[\"other\"]"));
  add_pod_full("other", "twin", "a", DB, false, NULL);
  sim_run r = run("{}", NULL, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* ---- limits ---- */

static void test_limits(void **state) {
  (void)state;
  cluster_begin();
  add_node("a", HOST("a"));
  add_node("b", HOST("b"));
  add_pod_full("ns", "anchor-a", "a", DB, true, NULL);
  add_pod("x1", "a", NULL, AVOID_DB_ON_HOST);
  add_pod("x2", "a", NULL, AVOID_DB_ON_HOST);
  add_pod_full("ns", "anchor-b", "b", DB, true, NULL);
  add_pod("x3", "b", NULL, AVOID_DB_ON_HOST);
  sim_run r = run("{}", "maxNoOfPodsToEvictPerNode: 1\n", 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/x1"));
  assert_true(sim_evicted(&r, "ns/x3"));
  sim_run_free(&r);

  r = run("{}", "maxNoOfPodsToEvictTotal: 1\n", 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/x1"));
  sim_run_free(&r);

  r = run("{}", NULL, 0);
  assert_int_equal(r.res.nevictions, 3);
  sim_run_free(&r);
}

static void test_validation_messages(void **state) {
  (void)state;
  assert_policy_error(ipa_policy("{namespaces: {include: [a], exclude: [b]}}", NULL),
                      "in profile p: only one of Include/Exclude namespaces can be set");
  assert_policy_error(ipa_policy("{topologyKey: zone}", NULL),
                      "strict decoding error: unknown field \"topologyKey\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lower_priority_member_goes_first),
      cmocka_unit_test(test_ties_follow_qos_then_name),
      cmocka_unit_test(test_asymmetric_terms),
      cmocka_unit_test(test_non_evictable_pods_still_conflict),
      cmocka_unit_test(test_topology_domains),
      cmocka_unit_test(test_term_namespaces_and_plugin_filter),
      cmocka_unit_test(test_same_name_never_conflicts),
      cmocka_unit_test(test_limits),
      cmocka_unit_test(test_validation_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
