/* test_limits.c - framework eviction limits, EvictionsInBackground in the simulate sink
 * (KubeVirt's webhook answers), and the cycle's node list (fewer than two ready nodes, NotReady
 * nodes, the policy's nodeSelector); docs/behaviour.md says how upstream does each.
 *
 * The carrier is PodLifeTime with maxPodLifeTimeSeconds: 0: it lists the pods of every cycle
 * node (nodes by name, pods by name), all equally old, and evicts them in that order; at a
 * node limit it goes on with the next pod, at the total limit it stops. */
#include "support/fixtures.h"
#include "support/support.h"

#include "../../src/obs/log.h"

#include <stdio.h>
#include <string.h>

/* ---------- inputs ---------- */

/* One profile p with the carrier; `top` holds top-level keys (limits). */
static const char *plt_policy(const char *top) {
  return plugin_policy(.plugin = "PodLifeTime", .args = "{maxPodLifeTimeSeconds: 0}", .top = top);
}

/* nodes of 4 cpu / 8Gi / 10 pods */
static void begin(void) {
  cluster_begin();
  cluster_capacity("4", "8Gi", "10");
}

/* n1: A/a1 A/a2 B/b1; n2: A/a3 B/b2 B/b3. Eviction order: a1 a2 b1 a3 b2 b3. */
static const char *six_pods(void) {
  begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_pod("a1", "n1", .ns = "A");
  cluster_pod("a2", "n1", .ns = "A");
  cluster_pod("b1", "n1", .ns = "B");
  cluster_pod("a3", "n2", .ns = "A");
  cluster_pod("b2", "n2", .ns = "B");
  cluster_pod("b3", "n2", .ns = "B");
  return cluster_end();
}

/* ---------- running ---------- */

static sim_run R;

static void run_gate(const char *policy, const char *cluster, bool gate, int v) {
  sim_rerun(&R, policy, cluster, gate, NULL, v);
}

static void run(const char *policy, const char *cluster) {
  run_gate(policy, cluster, false, 3);
}

static int teardown(void **state) {
  (void)state;
  sim_run_free(&R);
  return 0;
}

static void assert_logged_n(const char *needle, int n) {
  int have = sim_log_count(&R, needle);
  if (have != n)
    fail_msg("log has %d (not %d) of\n  %s\nlog:\n%s", have, n, needle, R.logs ? R.logs : "");
}

static void assert_logged(const char *needle) {
  if (sim_log_count(&R, needle) == 0)
    fail_msg("log lacks\n  %s\nlog:\n%s", needle, R.logs ? R.logs : "");
}

/* The evictions (and background requests, and evacuations) in order, "ns/name ns/name ...";
 * a background request is marked (bg), an evacuation (evac) when it counted against the
 * limits and (evac, not counted) when it did not. */
static const char *plan(void) {
  static char out[4096];
  size_t k = 0;
  out[0] = 0;
  for (size_t i = 0; i < R.res.nevictions; i++) {
    char ref[256];
    const fw_eviction *e = &R.res.evictions[i];
    k += (size_t)snprintf(out + k, sizeof out - k, "%s%s%s", i ? " " : "",
                          pod_ref(e->pod, ref, sizeof ref),
                          e->background   ? "(bg)"
                          : !e->evacuation ? ""
                          : e->counted    ? "(evac)"
                                          : "(evac, not counted)");
  }
  return out;
}

#define TOTAL_ERR                                                                                  \
  "\"Error evicting pod\" err=\"maximum number of evicted pods per a descheduling cycle reached\""
#define NODE_ERR "\"Error evicting pod\" err=\"maximum number of evicted pods per node reached\""
#define NS_ERR "\"Error evicting pod\" err=\"maximum number of evicted pods per namespace reached\""

/* ---------- limits ---------- */

static void test_no_limits(void **state) {
  (void)state;
  run(plt_policy(NULL), six_pods());
  assert_string_equal(plan(), "A/a1 A/a2 B/b1 A/a3 B/b2 B/b3");
  assert_int_equal(R.res.evicted, 6);
  assert_logged("\"Number of evictions/requests\" totalEvicted=6 evictionRequests=0\n");
  assert_logged(
      "\"Total number of evictions/requests\" extension point=\"Deschedule\" evictedPods=6 "
      "evictionRequests=0\n");
  assert_logged_n("\"Error evicting pod\"", 0);
  assert_logged("\"Evicted pod in dry run mode\" pod=\"A/a1\" reason=\"\" strategy=\"PodLifeTime\" "
                "node=\"n1\" profile=\"p\"\n");
}

static void test_total_limit(void **state) {
  (void)state;
  run(plt_policy("maxNoOfPodsToEvictTotal: 2\n"), six_pods());
  assert_string_equal(plan(), "A/a1 A/a2");
  /* the plugin stops at the first refusal: one line, with the limit and nothing else */
  assert_logged_n(TOTAL_ERR, 1);
  assert_logged(TOTAL_ERR " limit=2\n");
  assert_logged("\"Number of evictions/requests\" totalEvicted=2 evictionRequests=0\n");

  run(plt_policy("maxNoOfPodsToEvictTotal: 0\n"), six_pods());
  assert_string_equal(plan(), "");
  assert_logged_n(TOTAL_ERR " limit=0\n", 1);

  run(plt_policy("maxNoOfPodsToEvictTotal: 6\n"), six_pods());
  assert_int_equal(R.res.evicted, 6);
  assert_logged_n("\"Error evicting pod\"", 0);
}

static void test_node_limit(void **state) {
  (void)state;
  run(plt_policy("maxNoOfPodsToEvictPerNode: 1\n"), six_pods());
  assert_string_equal(plan(), "A/a1 A/a3");
  assert_logged_n(NODE_ERR " limit=1 node=\"n1\"\n", 2);
  assert_logged_n(NODE_ERR " limit=1 node=\"n2\"\n", 2);
  /* PodLifeTime takes a node limit as "next pod", not as a failure */
  assert_logged_n("\"eviction failed\"", 0);

  run(plt_policy("maxNoOfPodsToEvictPerNode: 0\n"), six_pods());
  assert_string_equal(plan(), "");
  assert_logged_n(NODE_ERR " limit=0 node=", 6);

  run(plt_policy("maxNoOfPodsToEvictPerNode: 2\n"), six_pods());
  assert_string_equal(plan(), "A/a1 A/a2 A/a3 B/b2");
}

static void test_namespace_limit(void **state) {
  (void)state;
  run(plt_policy("maxNoOfPodsToEvictPerNamespace: 1\n"), six_pods());
  assert_string_equal(plan(), "A/a1 B/b1");
  assert_logged(NS_ERR " limit=1 namespace=\"A\" pod=\"A/a2\"\n");
  assert_logged(NS_ERR " limit=1 namespace=\"A\" pod=\"A/a3\"\n");
  assert_logged(NS_ERR " limit=1 namespace=\"B\" pod=\"B/b2\"\n");
  assert_logged(NS_ERR " limit=1 namespace=\"B\" pod=\"B/b3\"\n");
  assert_logged_n(NS_ERR, 4);
  /* plugins treat it as an ordinary failure */
  assert_logged_n("\"eviction failed\"", 4);
  assert_logged("plugin=\"PodLifeTime\" ExtensionPoint=\"Deschedule\" pod=\"A/a2\"\n");

  run(plt_policy("maxNoOfPodsToEvictPerNamespace: 0\n"), six_pods());
  assert_string_equal(plan(), "");
  assert_logged_n(NS_ERR " limit=0 namespace=", 6);
}

/* Checked in order total, node, namespace; the first hit is the one reported. */
static void test_limit_order(void **state) {
  (void)state;
  run(plt_policy("maxNoOfPodsToEvictTotal: 3\nmaxNoOfPodsToEvictPerNode: 2\n"
                 "maxNoOfPodsToEvictPerNamespace: 2\n"),
      six_pods());
  /* a1 a2 (n1 full, A full); b1: node; a3: namespace; b2: evicted (3); b3: total */
  assert_string_equal(plan(), "A/a1 A/a2 B/b2");
  assert_logged(NODE_ERR " limit=2 node=\"n1\"\n");
  assert_logged(NS_ERR " limit=2 namespace=\"A\" pod=\"A/a3\"\n");
  assert_logged_n(TOTAL_ERR " limit=3\n", 1);
  run(plt_policy("maxNoOfPodsToEvictTotal: 0\nmaxNoOfPodsToEvictPerNode: 0\n"
                 "maxNoOfPodsToEvictPerNamespace: 0\n"),
      six_pods());
  assert_logged_n("\"Error evicting pod\"", 1);
  assert_logged(TOTAL_ERR " limit=0\n");
}

static char policy_buf[8192];

/* Two profiles (and a plugin listed twice) share one set of counters per cycle. */
static const char *two_profiles(const char *top, const char *enabled_a) {
  snprintf(policy_buf, sizeof policy_buf,
           "apiVersion: descheduler/v1alpha2\n"
           "kind: DeschedulerPolicy\n"
           "%s"
           "profiles:\n"
           "- name: pa\n"
           "  pluginConfig:\n"
           "  - name: PodLifeTime\n"
           "    args: {maxPodLifeTimeSeconds: 0, namespaces: {include: [A]}}\n"
           "  plugins:\n"
           "    deschedule:\n"
           "      enabled: %s\n"
           "- name: pb\n"
           "  pluginConfig:\n"
           "  - name: PodLifeTime\n"
           "    args: {maxPodLifeTimeSeconds: 0, namespaces: {include: [B]}}\n"
           "  plugins:\n"
           "    deschedule:\n"
           "      enabled: [PodLifeTime]\n",
           top, enabled_a);
  return policy_buf;
}

static void test_limits_shared_across_plugins_and_profiles(void **state) {
  (void)state;
  run(two_profiles("maxNoOfPodsToEvictTotal: 4\n", "[PodLifeTime]"), six_pods());
  assert_string_equal(plan(), "A/a1 A/a2 A/a3 B/b1");
  assert_string_equal(R.res.evictions[0].profile, "pa");
  assert_string_equal(R.res.evictions[3].profile, "pb");
  assert_logged_n(TOTAL_ERR " limit=4\n", 1);
  assert_logged(
      "\"Total number of evictions/requests\" extension point=\"Deschedule\" evictedPods=3 "
      "evictionRequests=0\n");
  assert_logged(
      "\"Total number of evictions/requests\" extension point=\"Deschedule\" evictedPods=1 "
      "evictionRequests=0\n");
  assert_logged("\"Evicted pod in dry run mode\" pod=\"B/b1\" reason=\"\" strategy=\"PodLifeTime\" "
                "node=\"n1\" profile=\"pb\"\n");

  run(two_profiles("maxNoOfPodsToEvictPerNode: 1\n", "[PodLifeTime]"), six_pods());
  assert_string_equal(plan(), "A/a1 A/a3");
  assert_logged_n(NODE_ERR, 4); /* a2 in pa; b1, b2, b3 in pb */

  /* a name listed twice runs twice; the second run sees the first one's evictions and limits */
  run(two_profiles("maxNoOfPodsToEvictTotal: 2\n", "[PodLifeTime, PodLifeTime]"), six_pods());
  assert_string_equal(plan(), "A/a1 A/a2");
  assert_logged_n(TOTAL_ERR " limit=2\n", 3);
  assert_logged_n("\"Total number of evictions/requests\" extension point=\"Deschedule\" "
                  "evictedPods=0 evictionRequests=0\n",
                  2);
  run(two_profiles("", "[PodLifeTime, PodLifeTime]"), six_pods());
  assert_int_equal(R.res.evicted, 6);
}

/* All deschedule plugins of all profiles run before any balance plugin. */
static void test_deschedule_before_balance_across_profiles(void **state) {
  (void)state;
  begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_pod("x1", "n1", .ns = "C", .labels = "role=old");
  cluster_pod("x2", "n1", .ns = "C");
  cluster_pod("x3", "n1", .ns = "C");
  static const char *policy_fmt =
      "apiVersion: descheduler/v1alpha2\n"
      "kind: DeschedulerPolicy\n"
      "%s"
      "profiles:\n"
      "- name: balancing\n"
      "  pluginConfig:\n"
      "  - name: LowNodeUtilization\n"
      "    args: {thresholds: {pods: 5}, targetThresholds: {pods: 10}}\n"
      "  plugins:\n"
      "    balance:\n"
      "      enabled: [LowNodeUtilization]\n"
      "- name: descheduling\n"
      "  pluginConfig:\n"
      "  - name: PodLifeTime\n"
      "    args: {maxPodLifeTimeSeconds: 0, labelSelector: {matchLabels: "
      "{role: old}}}\n"
      "  plugins:\n"
      "    deschedule:\n"
      "      enabled: [PodLifeTime]\n";
  /* n1 holds 3 of 10 pods, 2 after PodLifeTime ran (20% > 10%: over), n2 none (under) */
  snprintf(policy_buf, sizeof policy_buf, policy_fmt, "maxNoOfPodsToEvictTotal: 1\n");
  run(policy_buf, cluster_end());
  assert_string_equal(plan(), "C/x1");
  assert_string_equal(R.res.evictions[0].profile, "descheduling");
  assert_string_equal(R.res.evictions[0].plugin, "PodLifeTime");
  assert_string_equal(R.res.node_category[0], "overutilized");
  assert_logged_n(TOTAL_ERR " limit=1\n", 1);
  /* without the limit the balance plugin moves a pod too, after the deschedule one */
  snprintf(policy_buf, sizeof policy_buf, policy_fmt, "");
  run(policy_buf, cluster_end());
  assert_string_equal(plan(), "C/x1 C/x2");
  assert_string_equal(R.res.evictions[1].plugin, "LowNodeUtilization");
  assert_string_equal(R.res.evictions[1].profile, "balancing");
}

/* ---------- EvictionsInBackground ---------- */

#define REQUEST_EVICT_ONLY "descheduler.alpha.kubernetes.io/request-evict-only="
#define IN_PROGRESS ",descheduler.alpha.kubernetes.io/eviction-in-progress="
#define LAUNCHER_ANNOTATIONS(extra) "kubevirt.io/domain=vm1," REQUEST_EVICT_ONLY extra

/* vms/virt-launcher-vm1 on n1 (its VMI: strategy, LiveMigratable status), vms/web on n2. */
static const char *kubevirt_cluster(const char *launcher_annotations, const char *strategy,
                                    const char *migratable) {
  begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_pod("virt-launcher-vm1", "n1", .ns = "vms", .uid = "uid-launcher",
              .owner = "VirtualMachineInstance/vm1", .labels = "kubevirt.io=virt-launcher",
              .annotations = launcher_annotations);
  cluster_item(
      "{\"kind\":\"VirtualMachineInstance\",\"apiVersion\":\"kubevirt.io/v1\","
      "\"metadata\":{\"name\":\"vm1\",\"namespace\":\"vms\",\"uid\":\"uid-vm1\"},"
      "\"spec\":{\"evictionStrategy\":\"%s\"},\"status\":{\"nodeName\":\"n1\","
      "\"phase\":\"Running\",\"conditions\":[{\"type\":\"LiveMigratable\",\"status\":\"%s\"}]}}",
      strategy, migratable);
  cluster_pod("web", "n2", .ns = "vms");
  return cluster_end();
}

static void test_background_assumed(void **state) {
  (void)state;
  run_gate(plt_policy(NULL), kubevirt_cluster(LAUNCHER_ANNOTATIONS(""), "LiveMigrate", "True"),
           true, 3);
  assert_string_equal(plan(), "vms/virt-launcher-vm1(bg) vms/web");
  assert_string_equal(R.res.evictions[0].plugin, "PodLifeTime");
  assert_int_equal(R.res.evicted, 1);
  assert_int_equal(R.res.requests, 1);
  assert_logged("\"Eviction in background assumed\" pod=\"vms/virt-launcher-vm1\"\n");
  assert_logged(
      "\"Total number of evictions/requests\" extension point=\"Deschedule\" evictedPods=1 "
      "evictionRequests=1\n");
  assert_logged("\"Number of evictions/requests\" totalEvicted=1 evictionRequests=1\n");
  assert_logged_n("\"Error evicting pod\"", 0);
  /* not a plain eviction: no "Evicted pod" line for it */
  assert_logged_n("pod=\"vms/virt-launcher-vm1\" reason=", 0);
  assert_non_null(bg_find(&R.bg, "uid-launcher"));
  assert_true(bg_find(&R.bg, "uid-launcher")->assumed);
}

static void test_background_counts_against_limits(void **state) {
  (void)state;
  const char *tops[] = {"maxNoOfPodsToEvictTotal: 1\n", "maxNoOfPodsToEvictPerNamespace: 1\n"};
  for (size_t i = 0; i < 2; i++) {
    run_gate(plt_policy(tops[i]), kubevirt_cluster(LAUNCHER_ANNOTATIONS(""), "LiveMigrate", "True"),
             true, 3);
    assert_string_equal(plan(), "vms/virt-launcher-vm1(bg)");
    assert_int_equal(R.res.evicted, 0);
    assert_int_equal(R.res.requests, 1);
  }
  assert_logged(NS_ERR " limit=1 namespace=\"vms\" pod=\"vms/web\"\n");
  run_gate(plt_policy("maxNoOfPodsToEvictTotal: 1\n"),
           kubevirt_cluster(LAUNCHER_ANNOTATIONS(""), "LiveMigrate", "True"), true, 3);
  assert_logged(TOTAL_ERR " limit=1\n");
  assert_logged("\"Number of evictions/requests\" totalEvicted=0 evictionRequests=1\n");
}

static void test_background_already_requested(void **state) {
  (void)state;
  const char *cluster = kubevirt_cluster(LAUNCHER_ANNOTATIONS(IN_PROGRESS), "LiveMigrate", "True");
  run_gate(plt_policy(NULL), cluster, true, 3);
  /* picked up from the annotations before the cycle, as the informer does at start */
  assert_logged("\"Eviction in background detected. Adding pod to the cache.\" "
                "pod=\"vms/virt-launcher-vm1\"\n");
  assert_logged(
      "\"Eviction in background already requested (ignoring)\" pod=\"vms/virt-launcher-vm1\"\n");
  assert_string_equal(plan(), "vms/web");
  assert_int_equal(R.res.requests, 1);
  assert_logged("\"Number of evictions/requests\" totalEvicted=1 evictionRequests=1\n");
  /* no new request: the per-plugin delta is 0 */
  assert_logged(
      "\"Total number of evictions/requests\" extension point=\"Deschedule\" evictedPods=1 "
      "evictionRequests=0\n");
  assert_false(bg_find(&R.bg, "uid-launcher")->assumed);
  /* the cached request counts in the limits */
  run_gate(plt_policy("maxNoOfPodsToEvictTotal: 1\n"), cluster, true, 3);
  assert_string_equal(plan(), "");
  assert_logged("\"Eviction in background already requested (ignoring)\"");
  assert_logged(TOTAL_ERR " limit=1\n");
  run_gate(plt_policy("maxNoOfPodsToEvictPerNode: 1\n"), cluster, true, 3);
  assert_string_equal(plan(), "vms/web"); /* web is on n2; the request is on n1 */
  run_gate(plt_policy("maxNoOfPodsToEvictPerNamespace: 1\n"), cluster, true, 3);
  assert_string_equal(plan(), "");
  assert_logged(NS_ERR " limit=1 namespace=\"vms\" pod=\"vms/web\"\n");
}

#define WEBHOOK                                                                                    \
  "admission webhook \\\"virt-launcher-eviction-interceptor.kubevirt.io\\\" denied the request: "

static void test_background_without_gate(void **state) {
  (void)state;
  run_gate(plt_policy(NULL), kubevirt_cluster(LAUNCHER_ANNOTATIONS(""), "LiveMigrate", "True"),
           false, 3);
  /* upstream's failure, logged as upstream logs it; the VM moves all the same, so the plan
   * lists it as an evacuation (neither evicted nor requested) */
  assert_string_equal(plan(), "vms/virt-launcher-vm1(evac) vms/web");
  assert_int_equal(R.res.requests, 0);
  assert_int_equal(R.res.evicted, 1);
  assert_int_equal(R.res.evacuations, 1);
  assert_logged(
      "\"Error evicting pod\" err=\"error when evicting pod (ignoring) "
      "\\\"virt-launcher-vm1\\\": " WEBHOOK
      "Eviction triggered evacuation of VMI \\\"vms/vm1\\\"\" pod=\"vms/virt-launcher-vm1\" "
      "reason=\"\"\n");
  assert_logged_n("\"eviction failed\"", 1);
  assert_logged(
      "\"Evacuation counted against the eviction limits\" pod=\"vms/virt-launcher-vm1\"\n");
  assert_logged("\"Number of evictions/requests\" totalEvicted=1 evictionRequests=0\n");
  assert_logged_n("Eviction in background", 0);

  /* an already-annotated launcher is not cached without the gate either */
  run_gate(plt_policy(NULL),
           kubevirt_cluster(LAUNCHER_ANNOTATIONS(IN_PROGRESS), "LiveMigrate", "True"), false, 3);
  assert_logged_n("Eviction in background", 0);
  assert_logged("err=\"error when evicting pod (ignoring) \\\"virt-launcher-vm1\\\": ");
}

static void test_background_needs_request_evict_only(void **state) {
  (void)state;
  run_gate(plt_policy(NULL), kubevirt_cluster("kubevirt.io/domain=vm1", "LiveMigrate", "True"),
           true, 3);
  /* not a request in background; an evacuation KubeVirt started all the same */
  assert_string_equal(plan(), "vms/virt-launcher-vm1(evac) vms/web");
  assert_int_equal(R.res.requests, 0);
  assert_logged("err=\"error when evicting pod (ignoring) \\\"virt-launcher-vm1\\\": " WEBHOOK
                "Eviction triggered evacuation of VMI \\\"vms/vm1\\\"\"");
}

/* Upstream's handling of KubeVirt's answers, with this project's VMSafety told to let such
 * launchers through (its own tests are in test_vmsafety.c) */
static const char *plt_unsafe(void) {
  return plugin_policy(.plugin = "PodLifeTime", .args = "{maxPodLifeTimeSeconds: 0}",
                       .vmsafety = "{requireLiveMigration: false}");
}

static void test_not_live_migratable(void **state) {
  (void)state;
  run_gate(plt_unsafe(), kubevirt_cluster(LAUNCHER_ANNOTATIONS(""), "LiveMigrate", "False"),
           true, 3);
  assert_string_equal(plan(), "vms/web");
  assert_int_equal(R.res.requests, 0);
  assert_logged("\"Error evicting pod\" err=\"error when evicting pod (ignoring) "
                "\\\"virt-launcher-vm1\\\": " WEBHOOK
                "VMI vm1 is configured with an eviction strategy but is not live-migratable\" "
                "pod=\"vms/virt-launcher-vm1\" reason=\"\"\n");
  assert_logged_n("Eviction in background", 0);
}

static void test_strategy_none_evicts(void **state) {
  (void)state;
  run_gate(plt_unsafe(), kubevirt_cluster(LAUNCHER_ANNOTATIONS(""), "None", "False"), true, 3);
  assert_string_equal(plan(), "vms/virt-launcher-vm1 vms/web");
  assert_int_equal(R.res.evicted, 2);
  assert_int_equal(R.res.requests, 0);
  assert_logged("\"Evicted pod in dry run mode\" pod=\"vms/virt-launcher-vm1\" reason=\"\" "
                "strategy=\"PodLifeTime\" node=\"n1\" profile=\"p\"\n");
  /* LiveMigrateIfPossible on a VM that cannot migrate: evicted too */
  run_gate(plt_unsafe(),
           kubevirt_cluster(LAUNCHER_ANNOTATIONS(""), "LiveMigrateIfPossible", "False"), true, 3);
  assert_string_equal(plan(), "vms/virt-launcher-vm1 vms/web");
}

/* ---------- answers of a live API (as upstream's EvictPod) through a scripted sink ---------- */

typedef struct {
  eviction_sink base;
  size_t n;
  const char *names[8], *messages[8];
  sink_result results[8];
  int calls;
} script_sink;

static sink_result script_evict(eviction_sink *self, const pod *p, const eviction_request *req,
                                char *msg, size_t cap) {
  script_sink *s = (script_sink *)self;
  (void)req;
  s->calls++;
  for (size_t i = 0; i < s->n; i++)
    if (strcmp(p->name, s->names[i]) == 0) {
      snprintf(msg, cap, "%s", s->messages[i]);
      return s->results[i];
    }
  return SINK_EVICTED;
}

static void script(script_sink *s, const char *name, sink_result res, const char *message) {
  s->base.evict = script_evict;
  s->names[s->n] = name;
  s->results[s->n] = res;
  s->messages[s->n] = message;
  s->n++;
}

/* One live-mode cycle (dry_run false) against the scripted sink, results in R. */
static void run_live(const char *policy_text, const char *cluster, script_sink *sink, bool gate) {
  sim_run_free(&R); /* and zeroed */
  sink->base.evict = script_evict;
  sink->base.dry_run = false;
  size_t len = 0;
  FILE *logs = open_memstream(&R.logs, &len);
  log_set_stream(logs);
  log_set_verbosity(3);
  R.m = load_model_text(cluster, &R.err);
  if (R.m)
    R.pol = load_policy_text(policy_text, &R.err);
  if (R.pol) {
    if (gate)
      bg_sync(&R.bg, R.m, 1767225600, true);
    fw_options opt = {gate, 1767225600};
    R.rc = fw_run_cycle(R.pol, R.m, &R.bg, &sink->base, &opt, &R.res, &R.err);
  }
  log_set_stream(NULL);
  log_set_verbosity(0);
  fclose(logs);
  if (!R.pol || R.rc != 0)
    fail_msg("cycle failed: %s", R.err.msg);
}

static void test_api_answers(void **state) {
  (void)state;
  script_sink sink = {0};
  script(&sink, "a1", SINK_NOT_FOUND, "pods \"a1\" not found");
  script(&sink, "a2", SINK_TOO_MANY,
         "Cannot evict pod as it would violate the pod's disruption budget.");
  script(&sink, "b1", SINK_ERROR,
         "Internal error occurred: This pod has more than one PodDisruptionBudget");
  run_live(plt_policy("maxNoOfPodsToEvictTotal: 3\n"), six_pods(), &sink, false);
  assert_logged(
      "\"Error evicting pod\" err=\"pod not found when evicting \\\"a1\\\": pods \\\"a1\\\" not "
      "found\" pod=\"A/a1\" reason=\"\"\n");
  assert_logged("\"Error evicting pod\" err=\"error when evicting pod (ignoring) \\\"a2\\\": "
                "Cannot evict pod "
                "as it would violate the pod's disruption budget.\" pod=\"A/a2\" reason=\"\"\n");
  assert_logged("\"Error evicting pod\" err=\"Internal error occurred: This pod has more than one "
                "PodDisruptionBudget\" pod=\"B/b1\" reason=\"\"\n");
  assert_logged_n("\"eviction failed\"", 3);
  /* failures do not count: the limit of 3 still admits three evictions */
  assert_string_equal(plan(), "A/a3 B/b2 B/b3");
  assert_int_equal(sink.calls, 6);
  /* live mode logs "Evicted pod" */
  assert_logged("\"Evicted pod\" pod=\"A/a3\" reason=\"\" strategy=\"PodLifeTime\" node=\"n2\" "
                "profile=\"p\"\n");
  assert_logged_n("dry run mode", 0);
  assert_logged("\"Number of evictions/requests\" totalEvicted=3 evictionRequests=0\n");
}

static void test_api_background_answers(void **state) {
  (void)state;
  const char *magic = "admission webhook denied the request: Eviction triggered evacuation of VMI";
  begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_pod("done", "n1", .ns = "A", .annotations = REQUEST_EVICT_ONLY, .phase = "Failed");
  cluster_pod("migrating", "n1", .ns = "A", .annotations = REQUEST_EVICT_ONLY);
  cluster_pod("plain", "n1", .ns = "A");
  cluster_pod("wrong-case", "n1", .ns = "A", .annotations = REQUEST_EVICT_ONLY);
  const char *cluster = cluster_end();

  script_sink sink = {0};
  script(&sink, "done", SINK_TOO_MANY, magic);
  script(&sink, "migrating", SINK_TOO_MANY, magic);
  script(&sink, "plain", SINK_TOO_MANY, magic);
  script(&sink, "wrong-case", SINK_TOO_MANY, "eviction triggered evacuation of VMI");
  run_live(plt_policy(NULL), cluster, &sink, true);
  /* a completed/failed pod: success, nothing stored */
  assert_logged("\"Ignoring eviction of a completed/failed pod\" pod=\"A/done\"\n");
  assert_null(bg_find(&R.bg, "uid-A-done"));
  /* the magic text anywhere in a 429 for a request-evict-only pod */
  assert_logged("\"Eviction in background assumed\" pod=\"A/migrating\"\n");
  assert_non_null(bg_find(&R.bg, "uid-A-migrating"));
  /* without the annotation, or with the text in another case: an ordinary 429 */
  assert_logged("err=\"error when evicting pod (ignoring) \\\"plain\\\": ");
  assert_logged("err=\"error when evicting pod (ignoring) \\\"wrong-case\\\": eviction triggered");
  /* "plain" (no request-evict-only) started an evacuation too: not a request, yet it moves */
  assert_string_equal(plan(), "A/migrating(bg) A/plain(evac)");
  assert_int_equal(R.res.requests, 1);
  assert_logged("\"Number of evictions/requests\" totalEvicted=0 evictionRequests=1\n");

  /* the gate off: every one of them is an error */
  run_live(plt_policy(NULL), cluster, &sink, false);
  assert_logged_n("\"Error evicting pod\"", 4);
  assert_int_equal(R.res.requests, 0);
}

/* A pod without a UID is refused before anything else. */
static void test_missing_uid(void **state) {
  (void)state;
  begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_pod("no-uid", "n1", .ns = "A", .uid = "");
  cluster_pod("with-uid", "n1", .ns = "A");
  run(plt_policy("maxNoOfPodsToEvictTotal: 1\n"), cluster_end());
  assert_logged("\"Ignoring pod eviction due to missing UID\" pod=\"A/no-uid\"\n");
  assert_string_equal(plan(), "A/with-uid");
}

/* ---------- the cycle's nodes ---------- */

static void test_skip_below_two_nodes(void **state) {
  (void)state;
  begin();
  cluster_node("n1");
  cluster_pod("a1", "n1", .ns = "A");
  run(plt_policy(NULL), cluster_end());
  assert_true(R.res.skipped);
  assert_int_equal(R.res.nnodes, 1);
  assert_string_equal(plan(), "");
  assert_logged("\"Skipping descheduling cycle: requires >=2 nodes\" found=1\n");
  assert_logged_n("Number of evictions/requests", 0);
  assert_logged_n("Total number of evictions/requests", 0);

  begin();
  run(plt_policy(NULL), cluster_end());
  assert_logged("\"Skipping descheduling cycle: requires >=2 nodes\" found=0\n");

  /* the policy's nodeSelector narrows the list first */
  begin();
  cluster_node("n1", .labels = "zone=a");
  cluster_node("n2", .labels = "zone=b");
  cluster_node("n3", .labels = "zone=a");
  cluster_pod("a1", "n1", .ns = "A");
  cluster_pod("a2", "n2", .ns = "A");
  run(plt_policy("nodeSelector: \"zone=b\"\n"), cluster_end());
  assert_true(R.res.skipped);
  assert_logged("found=1\n");
  run(plt_policy("nodeSelector: \"zone=a\"\n"), cluster_end());
  assert_false(R.res.skipped);
  assert_int_equal(R.res.nnodes, 2);
  assert_string_equal(plan(), "A/a1"); /* n2 is not a cycle node: its pods are never looked at */
  run(plt_policy("nodeSelector: \"zone!=b\"\n"), cluster_end());
  assert_string_equal(plan(), "A/a1");
  run(plt_policy("nodeSelector: \"\"\n"), cluster_end());
  assert_string_equal(plan(), "A/a1 A/a2");

  /* a nodeSelector that does not parse fails the cycle */
  sim_run_free(&R);
  assert_int_equal(sim_run_strings(&R, plt_policy("nodeSelector: \"zone in (a\"\n"), cluster_end(),
                                   false, NULL, 0),
                   -1);
  assert_non_null(strstr(R.err.msg, "invalid label selector \"zone in (a\""));
}

static void test_not_ready_nodes(void **state) {
  (void)state;
  begin();
  cluster_node("n1", .ready = "True");
  cluster_node("n2", .ready = "False");
  cluster_node("n3", .ready = "Unknown");
  cluster_node("n4");                                         /* no Ready condition: ready */
  cluster_node("n5", .ready = "True", .unschedulable = true); /* cordoned: still in the cycle */
  cluster_pod("p1", "n1", .ns = "A");
  cluster_pod("p2", "n2", .ns = "A");
  cluster_pod("p3", "n3", .ns = "A");
  cluster_pod("p4", "n4", .ns = "A");
  cluster_pod("p5", "n5", .ns = "A");
  run_gate(plt_policy(NULL), cluster_end(), false, 1);
  assert_int_equal(R.res.nnodes, 3);
  assert_string_equal(plan(), "A/p1 A/p4 A/p5");
  assert_logged("\"Ignoring node\" node=\"n2\" condition=\"Ready\" status=\"False\"\n");
  assert_logged("\"Ignoring node\" node=\"n3\" condition=\"Ready\" status=\"Unknown\"\n");
  assert_logged_n("\"Ignoring node\"", 2);

  /* one ready node left: the cycle is skipped */
  begin();
  cluster_node("n1", .ready = "True");
  cluster_node("n2", .ready = "False");
  cluster_pod("p1", "n1", .ns = "A");
  run_gate(plt_policy(NULL), cluster_end(), false, 1);
  assert_true(R.res.skipped);
  assert_logged("\"Ignoring node\" node=\"n2\" condition=\"Ready\" status=\"False\"\n");
  assert_logged("\"Skipping descheduling cycle: requires >=2 nodes\" found=1\n");
  /* "Ignoring node" is V1 */
  run_gate(plt_policy(NULL), cluster_end(), false, 0);
  assert_logged_n("Ignoring node", 0);
  assert_logged("\"Skipping descheduling cycle: requires >=2 nodes\" found=1\n");
}

/* An eviction request that got no answer (a timeout, a reset) may have been carried out: it
 * counts against every limit, so evicting other pods instead can never go past one, and the
 * pod is left alone for the rest of the cycle; it is logged as an error, not as evicted. */
static void test_unanswered_eviction_counts(void **state) {
  (void)state;
  script_sink sink = {0};
  script(&sink, "a1", SINK_UNKNOWN,
         "Post \"http://x/api/v1/namespaces/A/pods/a1/eviction\": net/http: request canceled "
         "(Client.Timeout exceeded while awaiting headers)");
  run_live(plt_policy("maxNoOfPodsToEvictTotal: 2\n"), six_pods(), &sink, false);
  /* a1 (unanswered) and a2 make two: the total limit stops the plugin there */
  assert_string_equal(plan(), "A/a2");
  assert_int_equal(sink.calls, 2);
  assert_logged("\"Error evicting pod\" err=\"Post \\\"http://x/api/v1/namespaces/A/pods/a1/eviction"
                "\\\": net/http: request canceled (Client.Timeout exceeded while awaiting headers) (the "
                "request may have been carried out: it counts against the eviction limits)\" "
                "pod=\"A/a1\" reason=\"\"\n");
  assert_logged("\"Number of evictions/requests\" totalEvicted=1 evictionRequests=0\n");
  /* per node: a1 uses n1's one eviction, so n1 gives nothing more */
  script_sink node = {0};
  script(&node, "a1", SINK_UNKNOWN, "read: connection reset by peer");
  run_live(plt_policy("maxNoOfPodsToEvictPerNode: 1\n"), six_pods(), &node, false);
  assert_string_equal(plan(), "A/a3");
  assert_int_equal(node.calls, 2);
}

/* KubeVirt answers an eviction it turns into a live migration with a 429, which upstream
 * counts as a failure (here without the gate). The VM moves, so by default the evacuation
 * counts against each of the policy's limits as an eviction would; one already in flight
 * ("Evacuation in progress") does not; VMSafety's countEvacuationsAgainstLimits: false
 * restores upstream's count. a1 answers so; the other pods are evicted. */
#define EVACUATION                                                                                 \
  "admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied the request: "      \
  "Eviction triggered evacuation of VMI \"A/a1\""

static void run_evacuating_a1(const char *policy_text, const char *answer) {
  script_sink sink = {0};
  script(&sink, "a1", SINK_TOO_MANY, answer);
  run_live(policy_text, six_pods(), &sink, false);
}

static void test_evacuation_counts_against_limits(void **state) {
  (void)state;
  /* total: a1 and a2 make two */
  run_evacuating_a1(plt_policy("maxNoOfPodsToEvictTotal: 2\n"), EVACUATION);
  assert_string_equal(plan(), "A/a1(evac) A/a2");
  assert_int_equal(R.res.evicted, 1);
  assert_int_equal(R.res.evacuations, 1);
  assert_logged(TOTAL_ERR " limit=2\n");
  assert_logged("\"Error evicting pod\" err=\"error when evicting pod (ignoring) \\\"a1\\\": ");
  assert_logged("\"Evacuation counted against the eviction limits\" pod=\"A/a1\"\n");
  assert_logged("\"Number of evictions/requests\" totalEvicted=1 evictionRequests=0\n");
  /* per node: a1 uses n1's one */
  run_evacuating_a1(plt_policy("maxNoOfPodsToEvictPerNode: 1\n"), EVACUATION);
  assert_string_equal(plan(), "A/a1(evac) A/a3");
  assert_logged_n(NODE_ERR " limit=1 node=\"n1\"\n", 2);
  /* per namespace: a1 uses A's one */
  run_evacuating_a1(plt_policy("maxNoOfPodsToEvictPerNamespace: 1\n"), EVACUATION);
  assert_string_equal(plan(), "A/a1(evac) B/b1");
  assert_logged(NS_ERR " limit=1 namespace=\"A\" pod=\"A/a2\"\n");
  /* without limits nothing else changes: the plugin goes on as after upstream's failure */
  run_evacuating_a1(plt_policy(NULL), EVACUATION);
  assert_string_equal(plan(), "A/a1(evac) A/a2 B/b1 A/a3 B/b2 B/b3");
  assert_logged_n("\"eviction failed\"", 1);
}

static void test_evacuation_in_progress_is_not_counted(void **state) {
  (void)state;
  run_evacuating_a1(plt_policy("maxNoOfPodsToEvictTotal: 2\n"),
                    "admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied "
                    "the request: Evacuation in progress: Eviction triggered evacuation of VMI "
                    "\"A/a1\"");
  assert_string_equal(plan(), "A/a2 B/b1");
  assert_int_equal(R.res.evacuations, 0);
  assert_logged_n("Evacuation counted", 0);
}

static void test_evacuation_counted_as_upstream(void **state) {
  (void)state;
  const char *upstream =
      plugin_policy(.plugin = "PodLifeTime", .args = "{maxPodLifeTimeSeconds: 0}",
                    .vmsafety = "{countEvacuationsAgainstLimits: false}",
                    .top = "maxNoOfPodsToEvictTotal: 2\n");
  run_evacuating_a1(upstream, EVACUATION);
  /* listed, since the VM moves, but not counted: two evictions besides it */
  assert_string_equal(plan(), "A/a1(evac, not counted) A/a2 B/b1");
  assert_int_equal(R.res.evicted, 2);
  assert_int_equal(R.res.evacuations, 1);
  assert_logged_n("Evacuation counted", 0);
  /* the same switch written true is the default */
  run_evacuating_a1(plugin_policy(.plugin = "PodLifeTime", .args = "{maxPodLifeTimeSeconds: 0}",
                                  .vmsafety = "{countEvacuationsAgainstLimits: true}",
                                  .top = "maxNoOfPodsToEvictTotal: 2\n"),
                    EVACUATION);
  assert_string_equal(plan(), "A/a1(evac) A/a2");
}

/* One profile counts, the other does not: an evacuation counts by the profile it happened in,
 * against the counters every profile shares. */
static void test_evacuation_counted_by_its_profile(void **state) {
  (void)state;
  const char *policy_text =
      "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nmaxNoOfPodsToEvictTotal: 3\n"
      "profiles:\n"
      "- name: upstream\n"
      "  pluginConfig:\n"
      "  - {name: VMSafety, args: {countEvacuationsAgainstLimits: false}}\n"
      "  - {name: PodLifeTime, args: {maxPodLifeTimeSeconds: 0, namespaces: {include: [A]}}}\n"
      "  plugins: {deschedule: {enabled: [PodLifeTime]}}\n"
      "- name: counting\n"
      "  pluginConfig:\n"
      "  - {name: PodLifeTime, args: {maxPodLifeTimeSeconds: 0, namespaces: {include: [B]}}}\n"
      "  plugins: {deschedule: {enabled: [PodLifeTime]}}\n";
  script_sink sink = {0};
  script(&sink, "a1", SINK_TOO_MANY, EVACUATION);
  script(&sink, "b1", SINK_TOO_MANY,
         "admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied the "
         "request: Eviction triggered evacuation of VMI \"B/b1\"");
  run_live(policy_text, six_pods(), &sink, false);
  /* a1 not counted; a2, a3 count 2; b1 counted makes 3: b2 meets the limit */
  assert_string_equal(plan(), "A/a1(evac, not counted) A/a2 A/a3 B/b1(evac)");
  assert_logged(TOTAL_ERR " limit=3\n");
}

/* Two profiles ask for the same launcher in one cycle, without the gate: KubeVirt marked the
 * VMI at the first request, so the second is answered "Evacuation in progress", which is no new
 * evacuation: the VM moves once, is listed once and counts once (the simulate sink remembers
 * its marks as KubeVirt does). */
static void test_evacuation_asked_twice_counts_once(void **state) {
  (void)state;
  const char *two_profiles =
      "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nmaxNoOfPodsToEvictTotal: 3\n"
      "profiles:\n"
      "- name: first\n"
      "  pluginConfig:\n"
      "  - {name: PodLifeTime, args: {maxPodLifeTimeSeconds: 0, namespaces: {include: [vms]}}}\n"
      "  plugins: {deschedule: {enabled: [PodLifeTime]}}\n"
      "- name: second\n"
      "  pluginConfig:\n"
      "  - {name: PodLifeTime, args: {maxPodLifeTimeSeconds: 0, namespaces: {include: [vms]}}}\n"
      "  plugins: {deschedule: {enabled: [PodLifeTime]}}\n";
  run_gate(two_profiles, kubevirt_cluster(LAUNCHER_ANNOTATIONS(""), "LiveMigrate", "True"), false,
           3);
  /* first: the launcher (evacuation, 1) and web (2); second: the launcher again, in progress,
   * which neither counts (no limit met at 3) nor is listed again */
  assert_string_equal(plan(), "vms/virt-launcher-vm1(evac) vms/web");
  assert_int_equal(R.res.evacuations, 1);
  assert_logged_n("\"Evacuation counted against the eviction limits\"", 1);
  assert_logged("err=\"error when evicting pod (ignoring) \\\"virt-launcher-vm1\\\": " WEBHOOK
                "Evacuation in progress: Eviction triggered evacuation of VMI \\\"vms/vm1\\\"\"");
  assert_logged_n(TOTAL_ERR, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_no_limits, teardown),
      cmocka_unit_test_teardown(test_total_limit, teardown),
      cmocka_unit_test_teardown(test_node_limit, teardown),
      cmocka_unit_test_teardown(test_namespace_limit, teardown),
      cmocka_unit_test_teardown(test_limit_order, teardown),
      cmocka_unit_test_teardown(test_limits_shared_across_plugins_and_profiles, teardown),
      cmocka_unit_test_teardown(test_deschedule_before_balance_across_profiles, teardown),
      cmocka_unit_test_teardown(test_background_assumed, teardown),
      cmocka_unit_test_teardown(test_background_counts_against_limits, teardown),
      cmocka_unit_test_teardown(test_background_already_requested, teardown),
      cmocka_unit_test_teardown(test_background_without_gate, teardown),
      cmocka_unit_test_teardown(test_background_needs_request_evict_only, teardown),
      cmocka_unit_test_teardown(test_not_live_migratable, teardown),
      cmocka_unit_test_teardown(test_strategy_none_evicts, teardown),
      cmocka_unit_test_teardown(test_api_answers, teardown),
      cmocka_unit_test_teardown(test_api_background_answers, teardown),
      cmocka_unit_test_teardown(test_unanswered_eviction_counts, teardown),
      cmocka_unit_test_teardown(test_evacuation_counts_against_limits, teardown),
      cmocka_unit_test_teardown(test_evacuation_in_progress_is_not_counted, teardown),
      cmocka_unit_test_teardown(test_evacuation_counted_as_upstream, teardown),
      cmocka_unit_test_teardown(test_evacuation_counted_by_its_profile, teardown),
      cmocka_unit_test_teardown(test_evacuation_asked_twice_counts_once, teardown),
      cmocka_unit_test_teardown(test_missing_uid, teardown),
      cmocka_unit_test_teardown(test_skip_below_two_nodes, teardown),
      cmocka_unit_test_teardown(test_not_ready_nodes, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
