/* test_topologyspreadconstraint.c - RemovePodsViolatingTopologySpreadConstraint: validation,
 * defaults, what is counted, inclusion policies, matchLabelKeys, dedup, which pods the
 * balancing picks, and the final eviction pass (limits, PreEvictionFilter, order). */
#include "support/fixtures.h"
#include "support/support.h"

#include <stdio.h>
#include <string.h>

/* ---------- cluster: nodes of 4 cpu / 8Gi / 110 pods ---------- */

static void begin(void) {
  cluster_begin();
  cluster_capacity("4", "8Gi", "110");
}

/* A node in zone `zone`, labelled with its hostname and `more` ("pool=x") if not NULL. */
static void add_node(const char *name, const char *zone, const char *more, const char *taints) {
  char labels[256];
  snprintf(labels, sizeof labels, "kubernetes.io/hostname=%s,zone=%s%s%s", name, zone,
           more ? "," : "", more ? more : "");
  cluster_node(name, .labels = labels, .taints = taints);
}

/* A pod of the spread: labelled app=x unless opts say otherwise, requesting 100m cpu (or
 * opts' cpu) and 64Mi; tsc: its topologySpreadConstraints list contents, or NULL (the spec
 * holds nothing else). */
#define spread_pod(name, node, tsc, ...) spread_pod_((name), (node), (tsc), (pod_opts){__VA_ARGS__})
static void spread_pod_(const char *name, const char *node, const char *tsc, pod_opts o) {
  char spec[1024];
  snprintf(spec, sizeof spec, "\"topologySpreadConstraints\":[%s]", tsc ? tsc : "");
  o.labels = o.labels ? o.labels : "app=x";
  o.cpu = o.cpu ? o.cpu : "100m";
  o.memory = "64Mi";
  o.spec = spec;
  cluster_pod_(name, node, o);
}

/* n pods named <prefix>-<i> on node */
static void add_pods(const char *prefix, int n, const char *node, const char *tsc) {
  for (int i = 0; i < n; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s-%d", prefix, i);
    spread_pod(name, node, tsc);
  }
}

/* Three nodes na/nb/nc in zones a/b/c. */
static void three_zones(void) {
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  add_node("nc", "c", NULL, NULL);
}

#define SEL_APP_X "\"labelSelector\":{\"matchLabels\":{\"app\":\"x\"}}"
#define ZONE_HARD                                                                                  \
  "{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"," SEL_APP_X "}"
#define ZONE_SOFT                                                                                  \
  "{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"ScheduleAnyway\"," SEL_APP_X "}"
/* a hard zone constraint with extra members, e.g. ",\"nodeAffinityPolicy\":\"Ignore\"" */
#define ZONE_HARD_WITH(extra)                                                                      \
  "{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"," SEL_APP_X     \
      extra "}"

/* ---------- policy ---------- */

/* args: the plugin's args members ("constraints: [DoNotSchedule]") or NULL; evictor: more
 * DefaultEvictor args members besides podProtections: {}; top: top-level lines. */
static const char *tsc_policy(const char *args, const char *evictor, const char *top) {
  char a[512], e[256];
  snprintf(a, sizeof a, "{%s}", args ? args : "");
  snprintf(e, sizeof e, "{podProtections: {}%s%s}", evictor ? ", " : "", evictor ? evictor : "");
  return plugin_policy(.plugin = "RemovePodsViolatingTopologySpreadConstraint", .point = "balance",
                       .args = a, .evictor_args = e, .top = top);
}

static const char *evicted_name(const sim_run *r, size_t i) {
  static char buf[512];
  assert_true(i < r->res.nevictions);
  return pod_ref(r->res.evictions[i].pod, buf, sizeof buf);
}

/* ---------- validation ---------- */

static void test_validation_messages(void **state) {
  (void)state;
  assert_policy_error(tsc_policy("constraints: [Foo]", NULL, NULL),
                      "in profile p: constraint Foo is not one of map[DoNotSchedule:{} "
                      "ScheduleAnyway:{}]");
  /* several errors aggregate in check order */
  assert_policy_error(tsc_policy("constraints: [DoNotSchedule, Foo, Bar]", NULL, NULL),
                      "in profile p: [constraint Foo is not one of map[DoNotSchedule:{} "
                      "ScheduleAnyway:{}], constraint Bar is not one of map[DoNotSchedule:{} "
                      "ScheduleAnyway:{}]]");
  assert_policy_error(tsc_policy("namespaces: {include: [a], exclude: [b]}", NULL, NULL),
                      "in profile p: only one of Include/Exclude namespaces can be set");
  assert_policy_error(
      tsc_policy("namespaces: {include: [a], exclude: [b]}, constraints: [Foo]", NULL, NULL),
      "in profile p: [only one of Include/Exclude namespaces can be set, "
      "constraint Foo is not one of map[DoNotSchedule:{} ScheduleAnyway:{}]]");
  /* the old boolean is gone from the args type: strict decoding rejects it */
  assert_policy_error(tsc_policy("includeSoftConstraints: true", NULL, NULL),
                      "strict decoding error: unknown field \"includeSoftConstraints\"");
  /* a labelSelector that does not convert fails validation with upstream's words, in
   * check order (after namespaces, before constraints) */
  assert_policy_error(
      tsc_policy("labelSelector: {matchExpressions: [{key: app, operator: Foo}]}", NULL, NULL),
      "in profile p: failed to get label selectors from strategy's params: \"Foo\" is not a "
      "valid label selector operator");
  assert_policy_error(
      tsc_policy("namespaces: {include: [a], exclude: [b]}, labelSelector: {matchLabels: {a: "
                 "-b}}, constraints: [Foo]",
                 NULL, NULL),
      "in profile p: [only one of Include/Exclude namespaces can be set, failed to get label "
      "selectors from strategy's params: values[0][a]: Invalid value: \"-b\": a valid label "
      "must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
      "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
      "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), "
      "constraint Foo is not one of map[DoNotSchedule:{} ScheduleAnyway:{}]]");
  /* both known kinds are accepted */
  dserr e;
  policy *p = load_policy_text(
      tsc_policy("constraints: [DoNotSchedule, ScheduleAnyway], topologyBalanceNodeFit: false",
                 NULL, NULL),
      &e);
  if (!p)
    fail_msg("policy rejected: %s", e.msg);
  policy_free(p);
}

/* ---------- what is balanced ---------- */

/* docs/behaviour.md's example: zones c=0, b=1, a=5, maxSkew 1 -> 3 pods leave a. The tail
 * is taken first (a-3, a-4), then a-2; evictions keep that selection order. */
static void test_worked_example(void **state) {
  (void)state;
  begin();
  three_zones();
  add_pods("a", 5, "na", ZONE_HARD);
  add_pods("b", 1, "nb", ZONE_HARD);
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, NULL), cluster_end(), 1);
  assert_int_equal(r.res.nevictions, 3);
  assert_string_equal(evicted_name(&r, 0), "ns/a-3");
  assert_string_equal(evicted_name(&r, 1), "ns/a-4");
  assert_string_equal(evicted_name(&r, 2), "ns/a-2");
  assert_int_equal(sim_log_count(&r, "\"Processing namespaces for topology spread constraints\""),
                   1);
  assert_int_equal(sim_log_count(&r, "strategy=\"RemovePodsViolatingTopologySpreadConstraint\""),
                   3);
  sim_run_free(&r);
}

/* Default constraints are [DoNotSchedule]: soft constraints are balanced only when asked. */
static void test_constraints_default_and_soft(void **state) {
  (void)state;
  begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  add_pods("a", 3, "na", ZONE_SOFT);
  const char *c = cluster_end();
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, NULL), c, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  r = sim_run_ok(tsc_policy("constraints: [DoNotSchedule]", NULL, NULL), c, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  r = sim_run_ok(tsc_policy("constraints: [DoNotSchedule, ScheduleAnyway]", NULL, NULL), c, 0);
  /* a=3, b=0: avg 1.5, move min(2, 2, 1) = 1 */
  assert_evictions(&r, "ns/a-2");
  sim_run_free(&r);
  /* ScheduleAnyway alone ignores hard constraints */
  begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  add_pods("a", 3, "na", ZONE_HARD);
  r = sim_run_ok(tsc_policy("constraints: [ScheduleAnyway]", NULL, NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* As upstream, pods the evictor would not evict are not counted at all. Zone b holds 3 bare pods
 * (protected by DefaultEvictor) matching the selector; they do not balance zone a. */
static void test_non_evictable_pods_not_counted(void **state) {
  (void)state;
  begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  add_pods("a", 3, "na", ZONE_HARD);
  for (int i = 0; i < 3; i++) {
    char name[16];
    snprintf(name, sizeof name, "bare-%d", i);
    cluster_pod(name, "nb", .labels = "app=x", .owner = "",
                .spec = "\"topologySpreadConstraints\":[" ZONE_HARD "]");
  }
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, NULL), cluster_end(), 0);
  assert_evictions(&r, "ns/a-2");
  sim_run_free(&r);
}

/* Only pods matching the constraint's selector are counted and can be picked. */
static void test_selector_limits_counting(void **state) {
  (void)state;
  begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  add_pods("a", 3, "na", ZONE_HARD);
  spread_pod("other-0", "nb", NULL, .labels = "app=y");
  spread_pod("other-1", "nb", NULL, .labels = "app=y");
  spread_pod("other-2", "na", NULL, .labels = "app=y");
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, NULL), cluster_end(), 0);
  assert_evictions(&r, "ns/a-2");
  assert_false(sim_evicted(&r, "ns/other-2"));
  sim_run_free(&r);
}

/* Terminating pods are skipped while counting, even when the evict annotation lets them
 * through the evictor: 1 live pod in a, 0 in b is within maxSkew. */
static void test_terminating_pods_not_counted(void **state) {
  (void)state;
  begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  spread_pod("a-0", "na", ZONE_HARD);
  for (int i = 1; i < 3; i++) {
    char name[16];
    snprintf(name, sizeof name, "a-%d", i);
    spread_pod(name, "na", ZONE_HARD, .deleted = "2025-12-31T23:59:00Z",
               .annotations = "descheduler.alpha.kubernetes.io/evict=");
  }
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, NULL), cluster_end(), 2);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "Skipping topology constraint because it is already balanced"),
                   1);
  sim_run_free(&r);
}

/* ---------- inclusion policies ---------- */

/* As upstream, a pod running on a node the inclusion policy excludes still creates its domain.
 * All pods select pool=x; node nc lost that label but still runs 4 of them: c=4, a=2, b=2
 * is out of skew, so one pod leaves c. */
static void test_excluded_node_pods_create_domain(void **state) {
  (void)state;
  begin();
  add_node("na", "a", "pool=x", NULL);
  add_node("nb", "b", "pool=x", NULL);
  add_node("nc", "c", NULL, NULL);
  const char *pin = "pool=x";
  const char *nodes[3] = {"na", "nb", "nc"};
  int counts[3] = {2, 2, 4};
  for (int n = 0; n < 3; n++)
    for (int i = 0; i < counts[n]; i++) {
      char name[16];
      snprintf(name, sizeof name, "%s-%d", nodes[n] + 1, i);
      spread_pod(name, nodes[n], ZONE_HARD, .node_selector = pin);
    }
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, NULL), cluster_end(), 0);
  assert_evictions(&r, "ns/c-3");
  sim_run_free(&r);
}

/* nodeAffinityPolicy Honor (default) leaves a node the owner cannot use out of the domains;
 * Ignore counts it as an empty domain. Pods select pool=x, nc lacks it: a=2, b=2. */
static const char *affinity_cluster(const char *policy_member) {
  char tsc[512];
  snprintf(
      tsc, sizeof tsc,
      "{\"maxSkew\":1,\"topologyKey\":\"zone\",\"whenUnsatisfiable\":\"DoNotSchedule\"," SEL_APP_X
      "%s}",
      policy_member);
  begin();
  add_node("na", "a", "pool=x", NULL);
  add_node("nb", "b", "pool=x", NULL);
  add_node("nc", "c", NULL, NULL);
  const char *pin = "pool=x";
  spread_pod("a-0", "na", tsc, .node_selector = pin);
  spread_pod("a-1", "na", tsc, .node_selector = pin);
  spread_pod("b-0", "nb", tsc, .node_selector = pin);
  spread_pod("b-1", "nb", tsc, .node_selector = pin);
  return cluster_end();
}

static void test_node_affinity_policy(void **state) {
  (void)state;
  /* Honor: domains a and b only, balanced */
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, NULL), affinity_cluster(""), 2);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "Skipping topology constraint because it is already balanced"),
                   1);
  sim_run_free(&r);
  /* Ignore: c=0 joins; one pod of b is picked but fits nowhere below average (nc lacks
   * pool=x), so topologyBalanceNodeFit keeps it */
  r = sim_run_ok(tsc_policy(NULL, NULL, NULL),
                 affinity_cluster(",\"nodeAffinityPolicy\":\"Ignore\""), 2);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "\"ignoring pod for eviction as it does not fit on any other "
                                     "node\" plugin=\"RemovePodsViolatingTopologySpread"
                                     "Constraint\" ExtensionPoint=\"Balance\" pod=\"ns/b-1\""),
                   1);
  sim_run_free(&r);
  /* Ignore without the fit check: the pod is evicted */
  r = sim_run_ok(tsc_policy("topologyBalanceNodeFit: false", NULL, NULL),
                 affinity_cluster(",\"nodeAffinityPolicy\":\"Ignore\""), 0);
  assert_evictions(&r, "ns/b-1");
  sim_run_free(&r);
}

/* nodeTaintsPolicy: Ignore (default) keeps a tainted node's domain, Honor drops it unless
 * the owner tolerates the taint. nc carries a NoSchedule taint the pods do not tolerate. */
static const char *taint_cluster(const char *policy_member) {
  char tsc[512];
  snprintf(tsc, sizeof tsc, ZONE_HARD_WITH("%s"), policy_member);
  begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  add_node("nc", "c", NULL, "dedicated=db:NoSchedule");
  add_pods("a", 2, "na", tsc);
  add_pods("b", 2, "nb", tsc);
  return cluster_end();
}

static void test_node_taints_policy(void **state) {
  (void)state;
  sim_run r =
      sim_run_ok(tsc_policy("topologyBalanceNodeFit: false", NULL, NULL), taint_cluster(""), 0);
  assert_evictions(&r, "ns/b-1");
  sim_run_free(&r);
  r = sim_run_ok(tsc_policy("topologyBalanceNodeFit: false", NULL, NULL),
                 taint_cluster(",\"nodeTaintsPolicy\":\"Honor\""), 2);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "Skipping topology constraint because it is already balanced"),
                   1);
  sim_run_free(&r);
  /* with the fit check on, the tainted node is no target either: nothing moves */
  r = sim_run_ok(tsc_policy(NULL, NULL, NULL), taint_cluster(""), 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* ---------- matchLabelKeys and dedup ---------- */

/* matchLabelKeys splits the selector by the owner's label values: two revisions that are
 * each skewed but together balanced. */
static void test_match_label_keys(void **state) {
  (void)state;
  const char *with_keys = ZONE_HARD_WITH(",\"matchLabelKeys\":[\"rev\"]");
  sim_run r;
  for (int k = 0; k < 2; k++) {
    const char *tsc = k ? with_keys : ZONE_HARD;
    begin();
    add_node("na", "a", NULL, NULL);
    add_node("nb", "b", NULL, NULL);
    spread_pod("r1-0", "na", tsc, .labels = "app=x,rev=1");
    spread_pod("r1-1", "na", tsc, .labels = "app=x,rev=1");
    spread_pod("r2-0", "nb", tsc, .labels = "app=x,rev=2");
    spread_pod("r2-1", "nb", tsc, .labels = "app=x,rev=2");
    r = sim_run_ok(tsc_policy(NULL, NULL, NULL), cluster_end(), 0);
    if (k == 0) {
      assert_int_equal(r.res.nevictions, 0);
    } else {
      assert_evictions(&r, "ns/r1-1", "ns/r2-1");
    }
    sim_run_free(&r);
  }
}

/* Identical internal constraints are processed once; with nodeAffinityPolicy Honor the
 * owner's nodeSelector is part of the constraint, so pods with different nodeSelectors give
 * several entries (each logged as balanced). */
static void test_constraint_dedup(void **state) {
  (void)state;
  sim_run r;
  for (int ignore = 0; ignore < 2; ignore++) {
    const char *tsc = ignore ? ZONE_HARD_WITH(",\"nodeAffinityPolicy\":\"Ignore\"") : ZONE_HARD;
    begin();
    add_node("na", "a", "disk=ssd,cpu=fast", NULL);
    add_node("nb", "b", "disk=ssd,cpu=fast", NULL);
    const char *ssd = "disk=ssd";
    const char *fast = "cpu=fast";
    spread_pod("p-0", "na", tsc, .node_selector = ssd);
    spread_pod("p-1", "na", tsc, .node_selector = fast);
    spread_pod("p-2", "nb", tsc, .node_selector = ssd);
    spread_pod("p-3", "nb", tsc, .node_selector = fast);
    r = sim_run_ok(tsc_policy(NULL, NULL, NULL), cluster_end(), 2);
    assert_int_equal(r.res.nevictions, 0);
    assert_int_equal(
        sim_log_count(&r, "Skipping topology constraint because it is already balanced"),
        ignore ? 1 : 2);
    sim_run_free(&r);
  }
}

/* ---------- which pods are picked ---------- */

/* As upstream, candidates come from the domain's tail: pods with a nodeSelector/affinity are kept,
 * and among the others the HIGHEST priority goes first (absent priority sorts lowest). */
static void test_tail_first_picks_highest_priority(void **state) {
  (void)state;
  begin();
  add_node("na", "a", "pool=x", NULL);
  add_node("nb", "b", "pool=x", NULL);
  spread_pod("p-sel", "na", ZONE_HARD, .priority = "1000", .node_selector = "pool=x");
  spread_pod("p-high", "na", ZONE_HARD, .priority = "100");
  spread_pod("p-low", "na", ZONE_HARD, .priority = "1");
  spread_pod("p-none", "na", ZONE_HARD);
  /* a=4, b=0: avg 2, move min(2, 2, 2) = 2 */
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_string_equal(evicted_name(&r, 0), "ns/p-low");
  assert_string_equal(evicted_name(&r, 1), "ns/p-high");
  sim_run_free(&r);
}

/* `nodeSelector: {}` is a nodeSelector for the sort (upstream tests the Go map for nil): the
 * high-priority pod carrying an empty one stays at the front, so the next ones go. */
static void test_empty_node_selector_kept(void **state) {
  (void)state;
  begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  spread_pod("p-empty", "na", ZONE_HARD, .priority = "1000", .node_selector = "");
  spread_pod("p-high", "na", ZONE_HARD, .priority = "100");
  spread_pod("p-low", "na", ZONE_HARD, .priority = "1");
  spread_pod("p-none", "na", ZONE_HARD);
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_string_equal(evicted_name(&r, 0), "ns/p-low");
  assert_string_equal(evicted_name(&r, 1), "ns/p-high");
  sim_run_free(&r);
}

/* A constraint whose labelSelector does not convert is skipped with an error line naming the
 * pod; the pod's other constraints and every other pod still count (upstream logs "cannot
 * process topology spread constraint" and goes on). */
#define HOST_BAD_SELECTOR                                                                          \
  "{\"maxSkew\":1,\"topologyKey\":\"kubernetes.io/hostname\",\"whenUnsatisfiable\":"            \
  "\"DoNotSchedule\",\"labelSelector\":{\"matchExpressions\":[{\"key\":\"app\","                \
  "\"operator\":\"In\"}]}}"
static void test_invalid_selector_skips_constraint(void **state) {
  (void)state;
  begin();
  three_zones();
  add_pods("a", 4, "na", ZONE_HARD);
  spread_pod("a-bad", "na", HOST_BAD_SELECTOR "," ZONE_HARD);
  add_pods("b", 1, "nb", ZONE_HARD);
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, NULL), cluster_end(), 0);
  /* the worked example's 3 evictions from zone a: the zone constraint was applied */
  assert_int_equal(r.res.nevictions, 3);
  assert_int_equal(sim_log_count(&r, "\"cannot process topology spread constraint\" err=\"values: "
                                     "Invalid value: null: for 'in', 'notin' operators, values set "
                                     "can't be empty\" plugin=\"RemovePodsViolatingTopologySpread"
                                     "Constraint\" ExtensionPoint=\"Balance\" pod=\"ns/a-bad\""),
                   1);
  sim_run_free(&r);
}

/* The domain is stable-reordered so pods that fit a below-average node come last: the
 * highest-priority pod does not fit (10 cpu), so the next one is picked instead. This
 * happens whatever topologyBalanceNodeFit says. */
static void test_fit_reorder(void **state) {
  (void)state;
  sim_run r;
  for (int fit = 0; fit < 2; fit++) {
    begin();
    add_node("na", "a", NULL, NULL);
    add_node("nb", "b", NULL, NULL);
    spread_pod("pa", "na", ZONE_HARD, .priority = "1");
    spread_pod("pb", "na", ZONE_HARD, .priority = "2");
    spread_pod("pbig", "na", ZONE_HARD, .priority = "3", .cpu = "10");
    r = sim_run_ok(tsc_policy(fit ? NULL : "topologyBalanceNodeFit: false", NULL, NULL),
                   cluster_end(), 0);
    assert_evictions(&r, "ns/pb");
    sim_run_free(&r);
  }
}

/* ---------- the final eviction pass ---------- */

static const char *worked_example_cluster(void) {
  begin();
  three_zones();
  add_pods("a", 5, "na", ZONE_HARD);
  add_pods("b", 1, "nb", ZONE_HARD);
  return cluster_end();
}

/* A node limit skips the node's remaining picks without asking again. */
static void test_node_limit_skips_node(void **state) {
  (void)state;
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, "maxNoOfPodsToEvictPerNode: 1\n"),
                         worked_example_cluster(), 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_string_equal(evicted_name(&r, 0), "ns/a-3");
  assert_int_equal(sim_log_count(&r, "maximum number of evicted pods per node reached"), 1);
  sim_run_free(&r);
}

/* The total limit stops the plugin. */
static void test_total_limit_stops(void **state) {
  (void)state;
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, "maxNoOfPodsToEvictTotal: 2\n"),
                         worked_example_cluster(), 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_int_equal(
      sim_log_count(&r, "maximum number of evicted pods per a descheduling cycle reached"), 1);
  sim_run_free(&r);
}

/* Picked pods still pass PreEvictionFilter before eviction: with the evictor's nodeFit and
 * pods pinned to their node, nothing goes even though the balancing picked them. */
static void test_pre_eviction_filter_rechecked(void **state) {
  (void)state;
  const char *tsc = ZONE_HARD_WITH(",\"nodeAffinityPolicy\":\"Ignore\"");
  begin();
  add_node("na", "a", "pool=a", NULL);
  add_node("nb", "b", NULL, NULL);
  const char *pin = "pool=a";
  spread_pod("a-0", "na", tsc, .node_selector = pin);
  spread_pod("a-1", "na", tsc, .node_selector = pin);
  spread_pod("a-2", "na", tsc, .node_selector = pin);
  const char *c = cluster_end();
  sim_run r = sim_run_ok(tsc_policy("topologyBalanceNodeFit: false", "nodeFit: true", NULL), c, 0);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "pod does not fit on any other node because of "
                                     "nodeSelector(s), Taint(s), or nodes marked as unschedulable"),
                   1);
  sim_run_free(&r);
  /* the same pick without the evictor's nodeFit goes through */
  r = sim_run_ok(tsc_policy("topologyBalanceNodeFit: false", NULL, NULL), c, 0);
  assert_evictions(&r, "ns/a-2");
  sim_run_free(&r);
}

/* Constraints are per namespace (pods of another namespace never count), namespaces are
 * processed in name order, and `namespaces` restricts both counting and eviction. */
static void test_namespaces(void **state) {
  (void)state;
  begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  /* beta sits on b, alpha on a: together a=2, b=2 would look balanced */
  spread_pod("p-0", "nb", ZONE_HARD, .ns = "beta");
  spread_pod("p-1", "nb", ZONE_HARD, .ns = "beta");
  spread_pod("p-0", "na", ZONE_HARD, .ns = "alpha");
  spread_pod("p-1", "na", ZONE_HARD, .ns = "alpha");
  const char *c = cluster_end();
  sim_run r = sim_run_ok(tsc_policy(NULL, NULL, NULL), c, 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_string_equal(evicted_name(&r, 0), "alpha/p-1");
  assert_string_equal(evicted_name(&r, 1), "beta/p-1");
  sim_run_free(&r);
  r = sim_run_ok(tsc_policy(NULL, NULL, "maxNoOfPodsToEvictTotal: 1\n"), c, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_string_equal(evicted_name(&r, 0), "alpha/p-1");
  sim_run_free(&r);
  r = sim_run_ok(tsc_policy("namespaces: {exclude: [alpha]}", NULL, NULL), c, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_string_equal(evicted_name(&r, 0), "beta/p-1");
  sim_run_free(&r);
  r = sim_run_ok(tsc_policy("labelSelector: {matchLabels: {app: other}}", NULL, NULL), c, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_validation_messages),
      cmocka_unit_test(test_worked_example),
      cmocka_unit_test(test_constraints_default_and_soft),
      cmocka_unit_test(test_non_evictable_pods_not_counted),
      cmocka_unit_test(test_selector_limits_counting),
      cmocka_unit_test(test_terminating_pods_not_counted),
      cmocka_unit_test(test_excluded_node_pods_create_domain),
      cmocka_unit_test(test_node_affinity_policy),
      cmocka_unit_test(test_node_taints_policy),
      cmocka_unit_test(test_match_label_keys),
      cmocka_unit_test(test_constraint_dedup),
      cmocka_unit_test(test_tail_first_picks_highest_priority),
      cmocka_unit_test(test_fit_reorder),
      cmocka_unit_test(test_empty_node_selector_kept),
      cmocka_unit_test(test_invalid_selector_skips_constraint),
      cmocka_unit_test(test_node_limit_skips_node),
      cmocka_unit_test(test_total_limit_stops),
      cmocka_unit_test(test_pre_eviction_filter_rechecked),
      cmocka_unit_test(test_namespaces),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
