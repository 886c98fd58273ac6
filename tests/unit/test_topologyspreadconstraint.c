/* test_topologyspreadconstraint.c - RemovePodsViolatingTopologySpreadConstraint: validation,
 * defaults, what is counted, inclusion policies, matchLabelKeys, dedup, which pods the
 * balancing picks, and the final eviction pass (limits, PreEvictionFilter, order). */
#include "support/support.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ---------- cluster builder: a v1 List in JSON ---------- */

static char cluster_buf[1 << 17];
static size_t cluster_len;
static int cluster_items;

static void add_item(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add_item(const char *fmt, ...) {
  if (cluster_items++)
    cluster_buf[cluster_len++] = ',';
  va_list ap;
  va_start(ap, fmt);
  cluster_len +=
      (size_t)vsnprintf(cluster_buf + cluster_len, sizeof cluster_buf - cluster_len, fmt, ap);
  va_end(ap);
  assert_true(cluster_len < sizeof cluster_buf);
}

static void cluster_begin(void) {
  cluster_len = (size_t)snprintf(cluster_buf, sizeof cluster_buf,
                                 "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[");
  cluster_items = 0;
}

static const char *cluster_end(void) {
  snprintf(cluster_buf + cluster_len, sizeof cluster_buf - cluster_len, "]}");
  return cluster_buf;
}

/* A ready node in zone `zone`; labels_extra like ",\"pool\":\"x\""; spec like
 * "\"taints\":[...]"; 4 cpu / 8Gi / 110 pods allocatable. */
static void add_node(const char *name, const char *zone, const char *labels_extra,
                     const char *spec) {
  add_item("{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\",\"labels\":"
           "{\"kubernetes.io/hostname\":\"%s\",\"zone\":\"%s\"%s}},\"spec\":{%s},\"status\":"
           "{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"},\"conditions\":"
           "[{\"type\":\"Ready\",\"status\":\"True\"}]}}",
           name, name, zone, labels_extra ? labels_extra : "", spec ? spec : "");
}

/* A ReplicaSet-owned running pod. labels: JSON members ("\"app\":\"x\""); spec_extra: JSON
 * members prefixed with a comma (priority, nodeSelector, ...); meta_extra likewise for
 * metadata; tsc: the topologySpreadConstraints list contents. */
static void add_pod_full(const char *ns, const char *name, const char *node, const char *labels,
                         const char *meta_extra, const char *spec_extra, const char *cpu,
                         const char *tsc) {
  add_item("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\",\"namespace\":"
           "\"%s\",\"uid\":\"uid-%s-%s\",\"labels\":{%s},\"ownerReferences\":[{\"apiVersion\":"
           "\"apps/v1\",\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"rs-uid\",\"controller\":"
           "true}]%s},\"spec\":{\"nodeName\":\"%s\",\"containers\":[{\"name\":\"c\",\"image\":"
           "\"img\",\"resources\":{\"requests\":{\"cpu\":\"%s\",\"memory\":\"64Mi\"}}}],"
           "\"topologySpreadConstraints\":[%s]%s},\"status\":{\"phase\":\"Running\"}}",
           name, ns, ns, name, labels, meta_extra ? meta_extra : "", node, cpu ? cpu : "100m",
           tsc ? tsc : "", spec_extra ? spec_extra : "");
}

static void add_pod(const char *name, const char *node, const char *tsc) {
  add_pod_full("ns", name, node, "\"app\":\"x\"", NULL, NULL, NULL, tsc);
}

/* n pods named <prefix>-<i> on node */
static void add_pods(const char *prefix, int n, const char *node, const char *tsc) {
  for (int i = 0; i < n; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s-%d", prefix, i);
    add_pod(name, node, tsc);
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

/* ---------- policy builder ---------- */

static char policy_buf[4096];

/* plugin_args: lines under `args:` (6 spaces), or NULL; evictor_args likewise; top: top-level
 * lines. */
static const char *tsc_policy(const char *plugin_args, const char *evictor_args, const char *top) {
  snprintf(policy_buf, sizeof policy_buf,
           "apiVersion: descheduler/v1alpha2\n"
           "kind: DeschedulerPolicy\n"
           "%s"
           "profiles:\n"
           "- name: p\n"
           "  pluginConfig:\n"
           "  - name: DefaultEvictor\n"
           "    args:\n"
           "      podProtections: {}\n"
           "%s"
           "  - name: RemovePodsViolatingTopologySpreadConstraint\n"
           "    args:\n"
           "%s"
           "  plugins:\n"
           "    balance:\n"
           "      enabled: [RemovePodsViolatingTopologySpreadConstraint]\n",
           top ? top : "", evictor_args ? evictor_args : "",
           plugin_args ? plugin_args : "      {}\n");
  return policy_buf;
}

static const char *evicted_name(const sim_run *r, size_t i) {
  static char buf[512];
  assert_true(i < r->res.nevictions);
  return pod_ref(r->res.evictions[i].pod, buf, sizeof buf);
}

static void run(sim_run *r, const char *pol, const char *cluster, int verbosity) {
  if (sim_run_strings(r, pol, cluster, false, NULL, verbosity) != 0)
    fail_msg("cycle failed: %s", r->err.msg);
}

/* ---------- validation ---------- */

static void test_validation_messages(void **state) {
  (void)state;
  assert_policy_error(tsc_policy("      constraints: [Foo]\n", NULL, NULL),
                      "in profile p: constraint Foo is not one of map[DoNotSchedule:{} "
                      "ScheduleAnyway:{}]");
  /* several errors aggregate in check order */
  assert_policy_error(tsc_policy("      constraints: [DoNotSchedule, Foo, Bar]\n", NULL, NULL),
                      "in profile p: [constraint Foo is not one of map[DoNotSchedule:{} "
                      "ScheduleAnyway:{}], constraint Bar is not one of map[DoNotSchedule:{} "
                      "ScheduleAnyway:{}]]");
  assert_policy_error(tsc_policy("      namespaces: {include: [a], exclude: [b]}\n", NULL, NULL),
                      "in profile p: only one of Include/Exclude namespaces can be set");
  assert_policy_error(tsc_policy("      namespaces: {include: [a], exclude: [b]}\n"
                                 "      constraints: [Foo]\n",
                                 NULL, NULL),
                      "in profile p: [only one of Include/Exclude namespaces can be set, "
                      "constraint Foo is not one of map[DoNotSchedule:{} ScheduleAnyway:{}]]");
  /* the old boolean is gone from the args type: strict decoding rejects it */
  assert_policy_error(tsc_policy("      includeSoftConstraints: true\n", NULL, NULL),
                      "strict decoding error: unknown field \"includeSoftConstraints\"");
  /* A malformed labelSelector is rejected while decoding (upstream reports the same cause
   * from validation, as "failed to get label selectors from strategy's params: ..."). */
  assert_policy_error(tsc_policy("      labelSelector:\n"
                                 "        matchExpressions: [{key: app, operator: Foo}]\n",
                                 NULL, NULL),
                      "\"Foo\" is not a valid label selector operator");
  /* both known kinds are accepted */
  dserr e;
  policy *p = load_policy_text(tsc_policy("      constraints: [DoNotSchedule, ScheduleAnyway]\n"
                                          "      topologyBalanceNodeFit: false\n",
                                          NULL, NULL),
                               &e);
  if (!p)
    fail_msg("policy rejected: %s", e.msg);
  policy_free(p);
}

/* ---------- what is balanced ---------- */

/* plugins.md §5 worked example: zones c=0, b=1, a=5, maxSkew 1 -> 3 pods leave a. The tail
 * is taken first (a-3, a-4), then a-2; evictions keep that selection order. */
static void test_worked_example(void **state) {
  (void)state;
  cluster_begin();
  three_zones();
  add_pods("a", 5, "na", ZONE_HARD);
  add_pods("b", 1, "nb", ZONE_HARD);
  sim_run r;
  run(&r, tsc_policy(NULL, NULL, NULL), cluster_end(), 1);
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
  cluster_begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  add_pods("a", 3, "na", ZONE_SOFT);
  const char *c = cluster_end();
  sim_run r;
  run(&r, tsc_policy(NULL, NULL, NULL), c, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  run(&r, tsc_policy("      constraints: [DoNotSchedule]\n", NULL, NULL), c, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  run(&r, tsc_policy("      constraints: [DoNotSchedule, ScheduleAnyway]\n", NULL, NULL), c, 0);
  /* a=3, b=0: avg 1.5, move min(2, 2, 1) = 1 */
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/a-2"));
  sim_run_free(&r);
  /* ScheduleAnyway alone ignores hard constraints */
  cluster_begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  add_pods("a", 3, "na", ZONE_HARD);
  run(&r, tsc_policy("      constraints: [ScheduleAnyway]\n", NULL, NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
}

/* §12.6: pods the evictor would not evict are not counted at all. Zone b holds 3 bare pods
 * (protected by DefaultEvictor) matching the selector; they do not balance zone a. */
static void test_non_evictable_pods_not_counted(void **state) {
  (void)state;
  cluster_begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  add_pods("a", 3, "na", ZONE_HARD);
  for (int i = 0; i < 3; i++)
    add_item("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"bare-%d\","
             "\"namespace\":\"ns\",\"uid\":\"bare-%d\",\"labels\":{\"app\":\"x\"}},\"spec\":"
             "{\"nodeName\":\"nb\",\"containers\":[{\"name\":\"c\",\"image\":\"img\"}],"
             "\"topologySpreadConstraints\":[" ZONE_HARD "]},\"status\":{\"phase\":\"Running\"}}",
             i, i);
  sim_run r;
  run(&r, tsc_policy(NULL, NULL, NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/a-2"));
  sim_run_free(&r);
}

/* Only pods matching the constraint's selector are counted and can be picked. */
static void test_selector_limits_counting(void **state) {
  (void)state;
  cluster_begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  add_pods("a", 3, "na", ZONE_HARD);
  add_pod_full("ns", "other-0", "nb", "\"app\":\"y\"", NULL, NULL, NULL, NULL);
  add_pod_full("ns", "other-1", "nb", "\"app\":\"y\"", NULL, NULL, NULL, NULL);
  add_pod_full("ns", "other-2", "na", "\"app\":\"y\"", NULL, NULL, NULL, NULL);
  sim_run r;
  run(&r, tsc_policy(NULL, NULL, NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/a-2"));
  assert_false(sim_evicted(&r, "ns/other-2"));
  sim_run_free(&r);
}

/* Terminating pods are skipped while counting, even when the evict annotation lets them
 * through the evictor: 1 live pod in a, 0 in b is within maxSkew. */
static void test_terminating_pods_not_counted(void **state) {
  (void)state;
  cluster_begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  add_pod("a-0", "na", ZONE_HARD);
  for (int i = 1; i < 3; i++) {
    char name[16];
    snprintf(name, sizeof name, "a-%d", i);
    add_pod_full("ns", name, "na", "\"app\":\"x\"",
                 ",\"deletionTimestamp\":\"2025-12-31T23:59:00Z\",\"annotations\":"
                 "{\"descheduler.alpha.kubernetes.io/evict\":\"\"}",
                 NULL, NULL, ZONE_HARD);
  }
  sim_run r;
  run(&r, tsc_policy(NULL, NULL, NULL), cluster_end(), 2);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "Skipping topology constraint because it is already balanced"),
                   1);
  sim_run_free(&r);
}

/* ---------- inclusion policies ---------- */

/* §12.6: a pod running on a node the inclusion policy excludes still creates its domain.
 * All pods select pool=x; node nc lost that label but still runs 4 of them: c=4, a=2, b=2
 * is out of skew, so one pod leaves c. */
static void test_excluded_node_pods_create_domain(void **state) {
  (void)state;
  cluster_begin();
  add_node("na", "a", ",\"pool\":\"x\"", NULL);
  add_node("nb", "b", ",\"pool\":\"x\"", NULL);
  add_node("nc", "c", NULL, NULL);
  const char *pin = ",\"nodeSelector\":{\"pool\":\"x\"}";
  const char *nodes[3] = {"na", "nb", "nc"};
  int counts[3] = {2, 2, 4};
  for (int n = 0; n < 3; n++)
    for (int i = 0; i < counts[n]; i++) {
      char name[16];
      snprintf(name, sizeof name, "%s-%d", nodes[n] + 1, i);
      add_pod_full("ns", name, nodes[n], "\"app\":\"x\"", NULL, pin, NULL, ZONE_HARD);
    }
  sim_run r;
  run(&r, tsc_policy(NULL, NULL, NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/c-3"));
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
  cluster_begin();
  add_node("na", "a", ",\"pool\":\"x\"", NULL);
  add_node("nb", "b", ",\"pool\":\"x\"", NULL);
  add_node("nc", "c", NULL, NULL);
  const char *pin = ",\"nodeSelector\":{\"pool\":\"x\"}";
  add_pod_full("ns", "a-0", "na", "\"app\":\"x\"", NULL, pin, NULL, tsc);
  add_pod_full("ns", "a-1", "na", "\"app\":\"x\"", NULL, pin, NULL, tsc);
  add_pod_full("ns", "b-0", "nb", "\"app\":\"x\"", NULL, pin, NULL, tsc);
  add_pod_full("ns", "b-1", "nb", "\"app\":\"x\"", NULL, pin, NULL, tsc);
  return cluster_end();
}

static void test_node_affinity_policy(void **state) {
  (void)state;
  sim_run r;
  /* Honor: domains a and b only, balanced */
  run(&r, tsc_policy(NULL, NULL, NULL), affinity_cluster(""), 2);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "Skipping topology constraint because it is already balanced"),
                   1);
  sim_run_free(&r);
  /* Ignore: c=0 joins; one pod of b is picked but fits nowhere below average (nc lacks
   * pool=x), so topologyBalanceNodeFit keeps it */
  run(&r, tsc_policy(NULL, NULL, NULL), affinity_cluster(",\"nodeAffinityPolicy\":\"Ignore\""), 2);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "\"ignoring pod for eviction as it does not fit on any other "
                                     "node\" plugin=\"RemovePodsViolatingTopologySpread"
                                     "Constraint\" ExtensionPoint=\"Balance\" pod=\"ns/b-1\""),
                   1);
  sim_run_free(&r);
  /* Ignore without the fit check: the pod is evicted */
  run(&r, tsc_policy("      topologyBalanceNodeFit: false\n", NULL, NULL),
      affinity_cluster(",\"nodeAffinityPolicy\":\"Ignore\""), 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/b-1"));
  sim_run_free(&r);
}

/* nodeTaintsPolicy: Ignore (default) keeps a tainted node's domain, Honor drops it unless
 * the owner tolerates the taint. nc carries a NoSchedule taint the pods do not tolerate. */
static const char *taint_cluster(const char *policy_member) {
  char tsc[512];
  snprintf(tsc, sizeof tsc, ZONE_HARD_WITH("%s"), policy_member);
  cluster_begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  add_node("nc", "c", NULL,
           "\"taints\":[{\"key\":\"dedicated\",\"value\":\"db\",\"effect\":"
           "\"NoSchedule\"}]");
  add_pods("a", 2, "na", tsc);
  add_pods("b", 2, "nb", tsc);
  return cluster_end();
}

static void test_node_taints_policy(void **state) {
  (void)state;
  sim_run r;
  run(&r, tsc_policy("      topologyBalanceNodeFit: false\n", NULL, NULL), taint_cluster(""), 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/b-1"));
  sim_run_free(&r);
  run(&r, tsc_policy("      topologyBalanceNodeFit: false\n", NULL, NULL),
      taint_cluster(",\"nodeTaintsPolicy\":\"Honor\""), 2);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "Skipping topology constraint because it is already balanced"),
                   1);
  sim_run_free(&r);
  /* with the fit check on, the tainted node is no target either: nothing moves */
  run(&r, tsc_policy(NULL, NULL, NULL), taint_cluster(""), 0);
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
    cluster_begin();
    add_node("na", "a", NULL, NULL);
    add_node("nb", "b", NULL, NULL);
    add_pod_full("ns", "r1-0", "na", "\"app\":\"x\",\"rev\":\"1\"", NULL, NULL, NULL, tsc);
    add_pod_full("ns", "r1-1", "na", "\"app\":\"x\",\"rev\":\"1\"", NULL, NULL, NULL, tsc);
    add_pod_full("ns", "r2-0", "nb", "\"app\":\"x\",\"rev\":\"2\"", NULL, NULL, NULL, tsc);
    add_pod_full("ns", "r2-1", "nb", "\"app\":\"x\",\"rev\":\"2\"", NULL, NULL, NULL, tsc);
    run(&r, tsc_policy(NULL, NULL, NULL), cluster_end(), 0);
    if (k == 0) {
      assert_int_equal(r.res.nevictions, 0);
    } else {
      assert_int_equal(r.res.nevictions, 2);
      assert_true(sim_evicted(&r, "ns/r1-1"));
      assert_true(sim_evicted(&r, "ns/r2-1"));
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
    cluster_begin();
    add_node("na", "a", ",\"disk\":\"ssd\",\"cpu\":\"fast\"", NULL);
    add_node("nb", "b", ",\"disk\":\"ssd\",\"cpu\":\"fast\"", NULL);
    const char *ssd = ",\"nodeSelector\":{\"disk\":\"ssd\"}";
    const char *fast = ",\"nodeSelector\":{\"cpu\":\"fast\"}";
    add_pod_full("ns", "p-0", "na", "\"app\":\"x\"", NULL, ssd, NULL, tsc);
    add_pod_full("ns", "p-1", "na", "\"app\":\"x\"", NULL, fast, NULL, tsc);
    add_pod_full("ns", "p-2", "nb", "\"app\":\"x\"", NULL, ssd, NULL, tsc);
    add_pod_full("ns", "p-3", "nb", "\"app\":\"x\"", NULL, fast, NULL, tsc);
    run(&r, tsc_policy(NULL, NULL, NULL), cluster_end(), 2);
    assert_int_equal(r.res.nevictions, 0);
    assert_int_equal(
        sim_log_count(&r, "Skipping topology constraint because it is already balanced"),
        ignore ? 1 : 2);
    sim_run_free(&r);
  }
}

/* ---------- which pods are picked ---------- */

/* §12.6: candidates come from the domain's tail: pods with a nodeSelector/affinity are kept,
 * and among the others the HIGHEST priority goes first (absent priority sorts lowest). */
static void test_tail_first_picks_highest_priority(void **state) {
  (void)state;
  cluster_begin();
  add_node("na", "a", ",\"pool\":\"x\"", NULL);
  add_node("nb", "b", ",\"pool\":\"x\"", NULL);
  add_pod_full("ns", "p-sel", "na", "\"app\":\"x\"", NULL,
               ",\"priority\":1000,\"nodeSelector\":{\"pool\":\"x\"}", NULL, ZONE_HARD);
  add_pod_full("ns", "p-high", "na", "\"app\":\"x\"", NULL, ",\"priority\":100", NULL, ZONE_HARD);
  add_pod_full("ns", "p-low", "na", "\"app\":\"x\"", NULL, ",\"priority\":1", NULL, ZONE_HARD);
  add_pod_full("ns", "p-none", "na", "\"app\":\"x\"", NULL, NULL, NULL, ZONE_HARD);
  sim_run r;
  /* a=4, b=0: avg 2, move min(2, 2, 2) = 2 */
  run(&r, tsc_policy(NULL, NULL, NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_string_equal(evicted_name(&r, 0), "ns/p-low");
  assert_string_equal(evicted_name(&r, 1), "ns/p-high");
  sim_run_free(&r);
}

/* The domain is stable-reordered so pods that fit a below-average node come last: the
 * highest-priority pod does not fit (10 cpu), so the next one is picked instead. This
 * happens whatever topologyBalanceNodeFit says. */
static void test_fit_reorder(void **state) {
  (void)state;
  sim_run r;
  for (int fit = 0; fit < 2; fit++) {
    cluster_begin();
    add_node("na", "a", NULL, NULL);
    add_node("nb", "b", NULL, NULL);
    add_pod_full("ns", "pa", "na", "\"app\":\"x\"", NULL, ",\"priority\":1", NULL, ZONE_HARD);
    add_pod_full("ns", "pb", "na", "\"app\":\"x\"", NULL, ",\"priority\":2", NULL, ZONE_HARD);
    add_pod_full("ns", "pbig", "na", "\"app\":\"x\"", NULL, ",\"priority\":3", "10", ZONE_HARD);
    run(&r, tsc_policy(fit ? NULL : "      topologyBalanceNodeFit: false\n", NULL, NULL),
        cluster_end(), 0);
    assert_int_equal(r.res.nevictions, 1);
    assert_true(sim_evicted(&r, "ns/pb"));
    sim_run_free(&r);
  }
}

/* ---------- the final eviction pass ---------- */

static const char *worked_example_cluster(void) {
  cluster_begin();
  three_zones();
  add_pods("a", 5, "na", ZONE_HARD);
  add_pods("b", 1, "nb", ZONE_HARD);
  return cluster_end();
}

/* A node limit skips the node's remaining picks without asking again. */
static void test_node_limit_skips_node(void **state) {
  (void)state;
  sim_run r;
  run(&r, tsc_policy(NULL, NULL, "maxNoOfPodsToEvictPerNode: 1\n"), worked_example_cluster(), 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_string_equal(evicted_name(&r, 0), "ns/a-3");
  assert_int_equal(sim_log_count(&r, "maximum number of evicted pods per node reached"), 1);
  sim_run_free(&r);
}

/* The total limit stops the plugin. */
static void test_total_limit_stops(void **state) {
  (void)state;
  sim_run r;
  run(&r, tsc_policy(NULL, NULL, "maxNoOfPodsToEvictTotal: 2\n"), worked_example_cluster(), 0);
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
  cluster_begin();
  add_node("na", "a", ",\"pool\":\"a\"", NULL);
  add_node("nb", "b", NULL, NULL);
  const char *pin = ",\"nodeSelector\":{\"pool\":\"a\"}";
  add_pod_full("ns", "a-0", "na", "\"app\":\"x\"", NULL, pin, NULL, tsc);
  add_pod_full("ns", "a-1", "na", "\"app\":\"x\"", NULL, pin, NULL, tsc);
  add_pod_full("ns", "a-2", "na", "\"app\":\"x\"", NULL, pin, NULL, tsc);
  const char *c = cluster_end();
  sim_run r;
  run(&r, tsc_policy("      topologyBalanceNodeFit: false\n", "      nodeFit: true\n", NULL), c, 0);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "pod does not fit on any other node because of "
                                     "nodeSelector(s), Taint(s), or nodes marked as unschedulable"),
                   1);
  sim_run_free(&r);
  /* the same pick without the evictor's nodeFit goes through */
  run(&r, tsc_policy("      topologyBalanceNodeFit: false\n", NULL, NULL), c, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/a-2"));
  sim_run_free(&r);
}

/* Constraints are per namespace (pods of another namespace never count), namespaces are
 * processed in name order, and `namespaces` restricts both counting and eviction. */
static void test_namespaces(void **state) {
  (void)state;
  cluster_begin();
  add_node("na", "a", NULL, NULL);
  add_node("nb", "b", NULL, NULL);
  /* beta sits on b, alpha on a: together a=2, b=2 would look balanced */
  add_pod_full("beta", "p-0", "nb", "\"app\":\"x\"", NULL, NULL, NULL, ZONE_HARD);
  add_pod_full("beta", "p-1", "nb", "\"app\":\"x\"", NULL, NULL, NULL, ZONE_HARD);
  add_pod_full("alpha", "p-0", "na", "\"app\":\"x\"", NULL, NULL, NULL, ZONE_HARD);
  add_pod_full("alpha", "p-1", "na", "\"app\":\"x\"", NULL, NULL, NULL, ZONE_HARD);
  const char *c = cluster_end();
  sim_run r;
  run(&r, tsc_policy(NULL, NULL, NULL), c, 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_string_equal(evicted_name(&r, 0), "alpha/p-1");
  assert_string_equal(evicted_name(&r, 1), "beta/p-1");
  sim_run_free(&r);
  run(&r, tsc_policy(NULL, NULL, "maxNoOfPodsToEvictTotal: 1\n"), c, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_string_equal(evicted_name(&r, 0), "alpha/p-1");
  sim_run_free(&r);
  run(&r, tsc_policy("      namespaces: {exclude: [alpha]}\n", NULL, NULL), c, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_string_equal(evicted_name(&r, 0), "beta/p-1");
  sim_run_free(&r);
  run(&r, tsc_policy("      labelSelector: {matchLabels: {app: other}}\n", NULL, NULL), c, 0);
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
      cmocka_unit_test(test_node_limit_skips_node),
      cmocka_unit_test(test_total_limit_stops),
      cmocka_unit_test(test_pre_eviction_filter_rechecked),
      cmocka_unit_test(test_namespaces),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
