/* test_interpodantiaffinity.c - RemovePodsViolatingInterPodAntiAffinity: who goes first, the
 * asymmetry of terms, topology domains, namespaces, limits and validation (pod_antiaffinity.go). */
#include "support/fixtures.h"
#include "support/support.h"

#include <string.h>

/* ---- inputs ---- */

static const char *ipa_policy(const char *args, const char *top) {
  return plugin_policy(.plugin = "RemovePodsViolatingInterPodAntiAffinity", .args = args,
                       .top = top);
}

#define DB "app=db"
#define WEB "app=web"
/* required anti-affinity against app=<app> in topology `key`, namespaces `nss` (JSON list) */
#define AVOID(app, key, nss)                                                                       \
  "\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"       \
  "\"labelSelector\":{\"matchLabels\":{\"app\":\"" app "\"}},\"topologyKey\":\"" key               \
  "\",\"namespaces\":" nss "}]}}"
#define AVOID_DB_ON_HOST AVOID("db", "kubernetes.io/hostname", "[]")
#define HOST(n) "kubernetes.io/hostname=" n ",zone=" n

static sim_run run(const char *args, const char *top, int v) {
  return sim_run_ok(ipa_policy(args, top), cluster_end(), v);
}

/* ---- ordering ---- */

/* Of two pods excluding each other, the lower priority one goes; then the other no longer
 * conflicts and stays. */
static void test_lower_priority_member_goes_first(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = HOST("a"));
  cluster_node("b", .labels = HOST("b"));
  cluster_pod("high", "a", .labels = DB, .priority = "100", .spec = AVOID_DB_ON_HOST);
  cluster_pod("low", "a", .labels = DB, .priority = "10", .spec = AVOID_DB_ON_HOST);
  sim_run r = run("{}", NULL, 0);
  assert_evictions(&r, "ns/low");
  sim_run_free(&r);
}

/* Equal priority: BestEffort before Burstable, then name order (the fixed tie-break). */
static void test_ties_follow_qos_then_name(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = HOST("a"));
  cluster_node("b", .labels = HOST("b"));
  cluster_pod("a-burstable", "a", .labels = DB, .spec = AVOID_DB_ON_HOST,
              .status = "\"qosClass\":\"Burstable\"");
  cluster_pod("b-besteffort", "a", .labels = DB, .spec = AVOID_DB_ON_HOST);
  cluster_pod("c-besteffort", "a", .labels = DB, .spec = AVOID_DB_ON_HOST);
  sim_run r = run("{}", NULL, 0);
  /* b goes first, then c still conflicts with a-burstable and goes; a-burstable is left alone */
  assert_evictions(&r, "ns/b-besteffort", "ns/c-besteffort");
  sim_run_free(&r);
}

/* Surprise: only the candidate's own terms count. The pod with the term is evicted even
 * with the higher priority; the pod it avoids has no term and stays. */
static void test_asymmetric_terms(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = HOST("a"));
  cluster_node("b", .labels = HOST("b"));
  cluster_pod("picky", "a", .priority = "1000",
              .spec = AVOID("web", "kubernetes.io/hostname", "[]"));
  cluster_pod("web", "a", .labels = WEB, .priority = "1");
  sim_run r = run("{}", NULL, 0);
  assert_evictions(&r, "ns/picky");
  sim_run_free(&r);
}

/* Conflicting pods count whether or not they are evictable themselves; a non-evictable
 * candidate stays. */
static void test_non_evictable_pods_still_conflict(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = HOST("a"));
  cluster_node("b", .labels = HOST("b"));
  cluster_pod("critical", "a", .labels = DB, .priority = "2000000000", .spec = AVOID_DB_ON_HOST);
  cluster_pod("critical-2", "a", .labels = DB, .priority = "2000000000", .spec = AVOID_DB_ON_HOST);
  cluster_pod("bare", "b", .labels = DB, .owner = "");
  cluster_pod("near-bare", "b", .spec = AVOID_DB_ON_HOST);
  sim_run r = run("{}", NULL, 0);
  /* both critical pods are protected; the bare db pod on b still repels near-bare */
  assert_evictions(&r, "ns/near-bare");
  sim_run_free(&r);
}

/* ---- topology and namespaces ---- */

static void test_topology_domains(void **state) {
  (void)state;
  /* same zone on different nodes conflicts */
  cluster_begin();
  cluster_node("a", .labels = "zone=z1");
  cluster_node("b", .labels = "zone=z1");
  cluster_node("c", .labels = "zone=z2");
  cluster_pod("x", "a", .spec = AVOID("db", "zone", "[]"));
  cluster_pod("db", "b", .labels = DB);
  sim_run r = run("{}", NULL, 0);
  assert_evictions(&r, "ns/x");
  sim_run_free(&r);

  /* other zone: no conflict */
  cluster_begin();
  cluster_node("a", .labels = "zone=z1");
  cluster_node("b", .labels = "zone=z1");
  cluster_node("c", .labels = "zone=z2");
  cluster_pod("x", "a", .spec = AVOID("db", "zone", "[]"));
  cluster_pod("db", "c", .labels = DB);
  r = run("{}", NULL, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);

  /* a topology key no node carries: only the same node conflicts */
  cluster_begin();
  cluster_node("a");
  cluster_node("b");
  cluster_pod("x", "a", .spec = AVOID("db", "rack", "[]"));
  cluster_pod("y", "a", .spec = AVOID("db", "rack", "[]"));
  cluster_pod("db-a", "a", .labels = DB);
  cluster_pod("db-b", "b", .labels = DB);
  cluster_pod("z", "b", .spec = AVOID("web", "rack", "[]"));
  r = run("{}", NULL, 0);
  assert_evictions(&r, "ns/x", "ns/y");
  sim_run_free(&r);
}

/* A term without namespaces looks at the candidate's namespace only; listed namespaces
 * replace it. Pods outside the plugin's namespaces never conflict. */
static void test_term_namespaces_and_plugin_filter(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = HOST("a"));
  cluster_node("b", .labels = HOST("b"));
  cluster_pod("own-ns-only", "a", .spec = AVOID_DB_ON_HOST);
  cluster_pod("names-other", "a", .spec = AVOID("db", "kubernetes.io/hostname", "[\"other\"]"));
  cluster_pod("db", "a", .ns = "other", .labels = DB);
  sim_run r = run("{}", NULL, 0);
  assert_evictions(&r, "ns/names-other");
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
  cluster_node("a", .labels = HOST("a"));
  cluster_node("b", .labels = HOST("b"));
  cluster_pod("twin", "a", .spec = AVOID("db", "kubernetes.io/hostname", "[\"other\"]"));
  cluster_pod("twin", "a", .ns = "other", .labels = DB);
  sim_run r = run("{}", NULL, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* ---- limits ---- */

static void test_limits(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = HOST("a"));
  cluster_node("b", .labels = HOST("b"));
  cluster_pod("anchor-a", "a", .labels = DB, .owner = "");
  cluster_pod("x1", "a", .spec = AVOID_DB_ON_HOST);
  cluster_pod("x2", "a", .spec = AVOID_DB_ON_HOST);
  cluster_pod("anchor-b", "b", .labels = DB, .owner = "");
  cluster_pod("x3", "b", .spec = AVOID_DB_ON_HOST);
  sim_run r = run("{}", "maxNoOfPodsToEvictPerNode: 1\n", 0);
  assert_evictions(&r, "ns/x1", "ns/x3");
  sim_run_free(&r);

  r = run("{}", "maxNoOfPodsToEvictTotal: 1\n", 0);
  assert_evictions(&r, "ns/x1");
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
  /* upstream's validation_test.go case, word for word */
  assert_policy_error(
      ipa_policy("{labelSelector: {matchExpressions: [{key: '', operator: In}]}}", NULL),
      "in profile p: failed to get label selectors from strategy's params: [key: Invalid value: "
      "\"\": name part must be non-empty; name part must consist of alphanumeric characters, "
      "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  "
      "or 'my.name',  or '123-abc', regex used for validation is "
      "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]'), values: Invalid value: null: for 'in', "
      "'notin' operators, values set can't be empty]");
}

/* A term whose labelSelector does not convert ends the pod's check with "no violation", as
 * upstream's CheckPodsWithAntiAffinityExist does (an error line names the pod); a valid term
 * before it still counts, and the other pods are checked as usual. */
#define AVOID_BAD_THEN_DB                                                                          \
  "\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"       \
  "\"labelSelector\":{\"matchLabels\":{\"app\":\"-bad\"}},\"topologyKey\":\"zone\"},{"           \
  "\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"topologyKey\":\"zone\"}]}}"
#define AVOID_DB_THEN_BAD                                                                          \
  "\"affinity\":{\"podAntiAffinity\":{\"requiredDuringSchedulingIgnoredDuringExecution\":[{"       \
  "\"labelSelector\":{\"matchLabels\":{\"app\":\"db\"}},\"topologyKey\":\"zone\"},{"            \
  "\"labelSelector\":{\"matchLabels\":{\"app\":\"-bad\"}},\"topologyKey\":\"zone\"}]}}"
static void test_invalid_term_selector(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("a", .labels = HOST("a"));
  cluster_node("b", .labels = HOST("b"));
  cluster_pod("db", "a", .labels = DB, .priority = "1000");
  cluster_pod("bad-first", "a", .labels = WEB, .spec = AVOID_BAD_THEN_DB);
  cluster_pod("bad-second", "a", .labels = WEB, .spec = AVOID_DB_THEN_BAD);
  cluster_pod("valid", "a", .labels = WEB, .spec = AVOID("db", "zone", "[]"));
  sim_run r = run("{}", NULL, 0);
  assert_evictions(&r, "ns/bad-second", "ns/valid");
  assert_int_equal(sim_log_count(&r, "\"Unable to convert LabelSelector into Selector\" "
                                     "err=\"values[0][app]: Invalid value: \\\"-bad\\\": a valid "
                                     "label must be"),
                   1);
  assert_int_equal(sim_log_count(&r, "pod=\"ns/bad-first\""), 1);
  sim_run_free(&r);
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
      cmocka_unit_test(test_invalid_term_selector),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
