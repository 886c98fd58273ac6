/* test_defaultevictor.c - the DefaultEvictor (descheduler-core.md §4): every validation message
 * verbatim, every pod protection, legacy booleans versus podProtections, mirror / static /
 * terminating pods, the `evict` annotation, noEvictionPolicy, labelSelector, minReplicas,
 * minPodAge, nodeFit, namespaceLabelSelector and the V4 "Pod fails the following checks" line.
 *
 * The carrier is PodLifeTime with maxPodLifeTimeSeconds: 0 at deschedule, as the conformance
 * vectors do (conformance/upstream/README.md §7): it evicts every pod it lists that passes
 * Filter and PreEvictionFilter (test pods have no creationTimestamp, so they are old). Where a
 * test has several pods, the carrier selects only those labelled role=target. */
#include "support/support.h"

#include <stdio.h>
#include <string.h>

/* ---------- inputs ---------- */

static char policy_buf[8192];

/* DefaultEvictor args (YAML flow text, NULL for none); target_only: the carrier evicts only
 * pods labelled role=target. */
static const char *de_policy_sel(const char *args, bool target_only) {
  snprintf(policy_buf, sizeof policy_buf,
           "apiVersion: descheduler/v1alpha2\n"
           "kind: DeschedulerPolicy\n"
           "profiles:\n"
           "- name: p\n"
           "  pluginConfig:\n"
           "  - name: DefaultEvictor\n"
           "    args: %s\n"
           "  - name: PodLifeTime\n"
           "    args: {maxPodLifeTimeSeconds: 0%s}\n"
           "  plugins:\n"
           "    deschedule:\n"
           "      enabled: [PodLifeTime]\n",
           args ? args : "{}", target_only ? ", labelSelector: {matchLabels: {role: target}}" : "");
  return policy_buf;
}

static const char *de_policy(const char *args) {
  return de_policy_sel(args, false);
}

static char cluster_buf[1 << 16];
static size_t cluster_len;
static int cluster_items;

static void add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  if (cluster_items++)
    cluster_buf[cluster_len++] = ',';
  cluster_len +=
      (size_t)vsnprintf(cluster_buf + cluster_len, sizeof cluster_buf - cluster_len, fmt, ap);
  va_end(ap);
}

static void cluster_begin(void) {
  cluster_items = 0;
  cluster_len = (size_t)snprintf(cluster_buf, sizeof cluster_buf,
                                 "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[");
}

static const char *cluster_end(void) {
  snprintf(cluster_buf + cluster_len, sizeof cluster_buf - cluster_len, "]}");
  return cluster_buf;
}

/* A node of 4 cpu / 8Gi / 110 pods. meta: extra metadata members (labels); spec: spec
 * members; status: extra status members (conditions). */
static void add_node(const char *name, const char *meta, const char *spec, const char *status) {
  add("{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\"%s%s},\"spec\":{%s},"
      "\"status\":{\"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}%s%s}}",
      name, meta ? "," : "", meta ? meta : "", spec ? spec : "", status ? "," : "",
      status ? status : "");
}

static void two_nodes(void) {
  add_node("n1", NULL, NULL, NULL);
  add_node("n2", NULL, NULL, NULL);
}

#define RS_OWNER                                                                                   \
  "[{\"apiVersion\":\"apps/"                                                                       \
  "v1\",\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"rs-uid\",\"controller\":true}]"

/* A pod in namespace ns on node. owners: a JSON array (NULL = one ReplicaSet owner, "" = none);
 * meta / spec / status: extra members of those objects (status without phase = Running). */
static void add_pod_full(const char *ns, const char *name, const char *node, const char *owners,
                         const char *meta, const char *spec, const char *status) {
  char own[1024] = "";
  if (!owners)
    snprintf(own, sizeof own, ",\"ownerReferences\":%s", RS_OWNER);
  else if (*owners)
    snprintf(own, sizeof own, ",\"ownerReferences\":%s", owners);
  bool has_phase = status && strstr(status, "\"phase\"");
  bool has_containers = spec && strstr(spec, "\"containers\"");
  add("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\","
      "\"uid\":\"uid-%s-%s\"%s%s%s},"
      "\"spec\":{\"nodeName\":\"%s\"%s%s%s},"
      "\"status\":{%s%s%s}}",
      name, ns, ns, name, own, meta ? "," : "", meta ? meta : "", node,
      has_containers ? "" : ",\"containers\":[{\"name\":\"c\",\"image\":\"img\"}]", spec ? "," : "",
      spec ? spec : "", has_phase ? "" : "\"phase\":\"Running\"", (status && !has_phase) ? "," : "",
      status ? status : "");
}

static void add_pod(const char *name, const char *meta, const char *spec, const char *status) {
  add_pod_full("ns", name, "n1", NULL, meta, spec, status);
}

/* ---------- running ---------- */

static sim_run R;
static bool have_run;

static void run_at(const char *policy, const char *now, int v) {
  if (have_run)
    sim_run_free(&R);
  have_run = true;
  if (sim_run_strings(&R, policy, cluster_end(), false, now, v) != 0)
    fail_msg("cycle failed: %s", R.err.msg);
}

static void run(const char *policy) {
  run_at(policy, NULL, 5);
}

static int teardown(void **state) {
  (void)state;
  if (have_run)
    sim_run_free(&R);
  have_run = false;
  return 0;
}

static void assert_evicted(const char *ref) {
  if (!sim_evicted(&R, ref))
    fail_msg("%s was not evicted; log:\n%s", ref, R.logs);
}

static void assert_kept(const char *ref) {
  if (sim_evicted(&R, ref))
    fail_msg("%s was evicted; log:\n%s", ref, R.logs);
}

static void assert_logged(const char *needle) {
  if (!R.logs || !strstr(R.logs, needle))
    fail_msg("log lacks\n  %s\nlog:\n%s", needle, R.logs ? R.logs : "");
}

static void assert_not_logged(const char *needle) {
  if (R.logs && strstr(R.logs, needle))
    fail_msg("log has\n  %s\nlog:\n%s", needle, R.logs);
}

/* The V4 Filter line for pod, ending with checks (given Go-quoted content, without quotes). */
static void assert_checks(const char *ref, const char *checks) {
  char line[2048];
  snprintf(line, sizeof line,
           "\"Pod fails the following checks\" plugin=\"DefaultEvictor\" ExtensionPoint=\"Filter\" "
           "pod=\"%s\" checks=\"%s\"\n",
           ref, checks);
  assert_logged(line);
}

/* Exactly one pod evicted: ref. */
static void assert_only(const char *ref) {
  assert_evicted(ref);
  assert_int_equal(R.res.nevictions, 1);
}

/* ---------- validation ---------- */

/* The load fails with "in profile p: <msg>" as the complete end of the message. */
static void assert_invalid(const char *args, const char *msg) {
  dserr err;
  err.msg[0] = 0;
  policy *p = load_policy_text(de_policy(args), &err);
  if (p) {
    policy_free(p);
    fail_msg("args %s accepted", args);
  }
  char want[DSERR_MAX];
  snprintf(want, sizeof want, ": in profile p: %s", msg);
  size_t n = strlen(err.msg), t = strlen(want);
  if (n < t || strcmp(err.msg + n - t, want) != 0)
    fail_msg("error\n  %s\ndoes not end with\n  %s", err.msg, want);
}

static void assert_valid(const char *args) {
  dserr err;
  policy *p = load_policy_text(de_policy(args), &err);
  if (!p)
    fail_msg("args %s rejected: %s", args, err.msg);
  policy_free(p);
}

static void test_validation_messages(void **state) {
  (void)state;
  assert_invalid(
      "{priorityThreshold: {value: 10, name: high}}",
      "priority threshold misconfigured, only one of priorityThreshold fields can be set");
  assert_invalid("{noEvictionPolicy: Always}",
                 "noEvictionPolicy accepts only [\"Preferred\" \"Mandatory\"] values");
  assert_invalid("{noEvictionPolicy: mandatory}",
                 "noEvictionPolicy accepts only [\"Preferred\" \"Mandatory\"] values");
  assert_invalid(
      "{evictLocalStoragePods: true, podProtections: {defaultDisabled: [DaemonSetPods]}}",
      "cannot use Deprecated fields alongside PodProtections.ExtraEnabled or "
      "PodProtections.DefaultDisabled");
  assert_invalid("{ignorePodsWithoutPDB: true, podProtections: {extraEnabled: [PodsWithPVC]}}",
                 "cannot use Deprecated fields alongside PodProtections.ExtraEnabled or "
                 "PodProtections.DefaultDisabled");
  assert_invalid("{podProtections: {extraEnabled: [PodsWithLocalStorage]}}",
                 "invalid pod protection policy in ExtraEnabled: \"PodsWithLocalStorage\". Valid "
                 "options are: [PodsWithPVC PodsWithoutPDB PodsWithResourceClaims]");
  assert_invalid("{podProtections: {extraEnabled: [Foo]}}",
                 "invalid pod protection policy in ExtraEnabled: \"Foo\". Valid options are: "
                 "[PodsWithPVC PodsWithoutPDB PodsWithResourceClaims]");
  assert_invalid("{podProtections: {defaultDisabled: [PodsWithPVC]}}",
                 "invalid pod protection policy in DefaultDisabled: \"PodsWithPVC\". Valid options "
                 "are: [PodsWithLocalStorage SystemCriticalPods FailedBarePods DaemonSetPods]");
  assert_invalid("{podProtections: {defaultDisabled: [DaemonSetPods, DaemonSetPods]}}",
                 "PodProtections.DefaultDisabled contains duplicate entries");
  assert_invalid("{podProtections: {extraEnabled: [PodsWithPVC, PodsWithoutPDB, PodsWithPVC]}}",
                 "PodProtections.ExtraEnabled contains duplicate entries");
  assert_invalid(
      "{podProtections: {extraEnabled: [PodsWithPVC], config: {PodsWithPVC: "
      "{protectedStorageClasses: [{name: fast}, {name: ''}]}}}}",
      "PodProtections.Config.PodsWithPVC.ProtectedStorageClasses[1] name cannot be empty");
  assert_invalid(
      "{podProtections: {extraEnabled: [PodsWithPVC], config: {PodsWithPVC: "
      "{protectedStorageClasses: [{}, {name: a}, {name: ''}]}}}}",
      "[PodProtections.Config.PodsWithPVC.ProtectedStorageClasses[0] name cannot be empty, "
      "PodProtections.Config.PodsWithPVC.ProtectedStorageClasses[2] name cannot be empty]");
  /* several, in upstream's check order */
  assert_invalid(
      "{priorityThreshold: {value: 1, name: x}, noEvictionPolicy: Never, evictDaemonSetPods: "
      "true, podProtections: {defaultDisabled: [Foo, Foo], extraEnabled: [Bar]}}",
      "[priority threshold misconfigured, only one of priorityThreshold fields can be set, "
      "noEvictionPolicy accepts only [\"Preferred\" \"Mandatory\"] values, cannot use "
      "Deprecated fields alongside PodProtections.ExtraEnabled or "
      "PodProtections.DefaultDisabled, invalid pod protection policy in ExtraEnabled: "
      "\"Bar\". Valid options are: [PodsWithPVC PodsWithoutPDB PodsWithResourceClaims], "
      "invalid pod protection policy in DefaultDisabled: \"Foo\". Valid options are: "
      "[PodsWithLocalStorage SystemCriticalPods FailedBarePods DaemonSetPods], "
      "PodProtections.DefaultDisabled contains duplicate entries]");
  /* an aggregate merges repeated messages: one invalid name listed twice reports once */
  assert_invalid("{podProtections: {extraEnabled: [Foo, Foo]}}",
                 "[invalid pod protection policy in ExtraEnabled: \"Foo\". Valid options are: "
                 "[PodsWithPVC PodsWithoutPDB PodsWithResourceClaims], PodProtections.ExtraEnabled "
                 "contains duplicate entries]");

  /* accepted */
  assert_valid("{noEvictionPolicy: Preferred}");
  assert_valid("{noEvictionPolicy: Mandatory}");
  assert_valid("{noEvictionPolicy: ''}");
  assert_valid("{minReplicas: 1}");
  assert_valid("{priorityThreshold: {value: 0, name: ''}}");
  /* empty names only matter with PodsWithPVC enabled */
  assert_valid(
      "{podProtections: {config: {PodsWithPVC: {protectedStorageClasses: [{name: ''}]}}}}");
  /* deprecated fields set to false do not conflict */
  assert_valid(
      "{evictLocalStoragePods: false, podProtections: {defaultDisabled: [DaemonSetPods]}}");
  /* empty lists are not "set" */
  assert_valid(
      "{evictLocalStoragePods: true, podProtections: {defaultDisabled: [], extraEnabled: []}}");
}

/* ---------- protections ---------- */

static void test_local_storage(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add_pod("empty-dir", NULL, "\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}]", NULL);
  add_pod("host-path", NULL, "\"volumes\":[{\"name\":\"v\",\"hostPath\":{\"path\":\"/x\"}}]", NULL);
  add_pod("config-map", NULL, "\"volumes\":[{\"name\":\"v\",\"configMap\":{\"name\":\"c\"}}]",
          NULL);
  run(de_policy(NULL));
  assert_kept("ns/empty-dir");
  assert_kept("ns/host-path");
  assert_evicted("ns/config-map");
  assert_int_equal(R.res.nevictions, 1);
  assert_checks("ns/empty-dir", "pod has local storage and is protected against eviction");
  assert_checks("ns/host-path", "pod has local storage and is protected against eviction");

  run(de_policy("{evictLocalStoragePods: true}"));
  assert_int_equal(R.res.nevictions, 3);
  run(de_policy("{podProtections: {defaultDisabled: [PodsWithLocalStorage]}}"));
  assert_int_equal(R.res.nevictions, 3);
  /* other defaults stay on */
  run(de_policy("{podProtections: {defaultDisabled: [DaemonSetPods]}}"));
  assert_int_equal(R.res.nevictions, 1);
}

static void test_system_critical(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add_pod("critical", NULL, "\"priority\":2000000000", NULL);
  add_pod("node-critical", NULL, "\"priority\":2000001000", NULL);
  add_pod("just-below", NULL, "\"priority\":1999999999", NULL);
  add_pod("no-priority", NULL, NULL, NULL);
  run(de_policy(NULL));
  assert_kept("ns/critical");
  assert_kept("ns/node-critical");
  assert_evicted("ns/just-below");
  assert_evicted("ns/no-priority");
  assert_int_equal(R.res.nevictions, 2);
  /* at the default threshold (2000000000) both checks fail */
  assert_checks("ns/critical",
                "[pod has system critical priority and is protected against eviction, "
                "pod has higher priority than specified priority class threshold]");
  assert_not_logged("Warning: System critical pod protection is disabled");

  /* protection off: critical pods go, the threshold is not used */
  run(de_policy("{evictSystemCriticalPods: true, priorityThreshold: {value: 5}}"));
  assert_int_equal(R.res.nevictions, 4);
  assert_logged(
      "\"Warning: System critical pod protection is disabled. This could cause eviction of "
      "Kubernetes system pods.\" plugin=\"DefaultEvictor\"\n");
  run(de_policy("{podProtections: {defaultDisabled: [SystemCriticalPods]}}"));
  assert_int_equal(R.res.nevictions, 4);
}

static void test_priority_threshold(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add("{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\",\"metadata\":{\"name\":"
      "\"high\"},\"value\":1000}");
  add_pod("p999", NULL, "\"priority\":999", NULL);
  add_pod("p1000", NULL, "\"priority\":1000", NULL);
  add_pod("p5000", NULL, "\"priority\":5000", NULL);
  add_pod("none", NULL, NULL, NULL);
  add_pod("negative", NULL, "\"priority\":-10", NULL);
  run(de_policy("{priorityThreshold: {value: 1000}}"));
  assert_evicted("ns/p999");
  assert_kept("ns/p1000");
  assert_kept("ns/p5000");
  assert_evicted("ns/none");
  assert_evicted("ns/negative");
  assert_int_equal(R.res.nevictions, 3);
  assert_checks("ns/p1000", "pod has higher priority than specified priority class threshold");

  /* by PriorityClass name */
  run(de_policy("{priorityThreshold: {name: high}}"));
  assert_evicted("ns/p999");
  assert_kept("ns/p1000");
  assert_int_equal(R.res.nevictions, 3);

  run(de_policy("{priorityThreshold: {value: 0}}"));
  assert_evicted("ns/negative");
  assert_evicted("ns/none");
  assert_int_equal(R.res.nevictions, 2);
}

static void test_failed_bare_pods(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add_pod_full("ns", "bare-running", "n1", "", NULL, NULL, NULL);
  add_pod_full("ns", "bare-failed", "n1", "", NULL, NULL, "\"phase\":\"Failed\"");
  add_pod_full("ns", "owned-failed", "n1", NULL, NULL, NULL, "\"phase\":\"Failed\"");
  run(de_policy(NULL));
  assert_kept("ns/bare-running");
  assert_kept("ns/bare-failed");
  assert_evicted("ns/owned-failed");
  assert_checks("ns/bare-running", "pod does not have any ownerRefs");
  assert_checks("ns/bare-failed", "pod does not have any ownerRefs");
  assert_not_logged("Warning: EvictFailedBarePods");

  run(de_policy("{evictFailedBarePods: true}"));
  assert_kept("ns/bare-running");
  assert_evicted("ns/bare-failed");
  assert_evicted("ns/owned-failed");
  assert_int_equal(R.res.nevictions, 2);
  assert_checks("ns/bare-running", "pod does not have any ownerRefs and is not in failed phase");
  assert_logged("\"Warning: EvictFailedBarePods is set to True. This could cause eviction of pods "
                "without ownerReferences.\" plugin=\"DefaultEvictor\"\n");

  run(de_policy("{podProtections: {defaultDisabled: [FailedBarePods]}}"));
  assert_evicted("ns/bare-failed");
  assert_int_equal(R.res.nevictions, 2);
}

static void test_daemonset_pods(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add_pod_full("ns", "ds", "n1",
               "[{\"kind\":\"DaemonSet\",\"name\":\"d\",\"uid\":\"d-uid\",\"controller\":true}]",
               NULL, NULL, NULL);
  add_pod_full("ns", "ds-second-owner", "n1",
               "[{\"kind\":\"ReplicaSet\",\"name\":\"r\",\"uid\":\"r\"},{\"kind\":\"DaemonSet\","
               "\"name\":\"d\",\"uid\":\"d-uid\"}]",
               NULL, NULL, NULL);
  add_pod("rs", NULL, NULL, NULL);
  run(de_policy(NULL));
  assert_only("ns/rs");
  assert_checks("ns/ds", "daemonset pods are protected against eviction");
  assert_checks("ns/ds-second-owner", "daemonset pods are protected against eviction");
  run(de_policy("{evictDaemonSetPods: true}"));
  assert_int_equal(R.res.nevictions, 3);
  run(de_policy("{podProtections: {defaultDisabled: [DaemonSetPods]}}"));
  assert_int_equal(R.res.nevictions, 3);
}

#define PVC_VOLUME(claim)                                                                          \
  "\"volumes\":[{\"name\":\"data\",\"persistentVolumeClaim\":{\"claimName\":\"" claim "\"}}]"

static void add_pvc(const char *name, const char *storage_class) {
  char spec[256] = "";
  if (storage_class)
    snprintf(spec, sizeof spec, "\"storageClassName\":\"%s\"", storage_class);
  add("{\"kind\":\"PersistentVolumeClaim\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\","
      "\"namespace\":\"ns\"},\"spec\":{%s}}",
      name, spec);
}

static void test_pods_with_pvc(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add_pvc("fast-claim", "fast");
  add_pvc("slow-claim", "slow");
  add_pvc("classless-claim", NULL);
  add_pod("on-fast", NULL, PVC_VOLUME("fast-claim"), NULL);
  add_pod("on-slow", NULL, PVC_VOLUME("slow-claim"), NULL);
  add_pod("on-missing", NULL, PVC_VOLUME("missing-claim"), NULL);
  add_pod("on-classless", NULL, PVC_VOLUME("classless-claim"), NULL);
  add_pod("no-pvc", NULL, NULL, NULL);

  /* off by default */
  run(de_policy(NULL));
  assert_int_equal(R.res.nevictions, 5);

  /* legacy ignorePvcPods and extraEnabled: every PVC pod is protected */
  const char *on[] = {"{ignorePvcPods: true}", "{podProtections: {extraEnabled: [PodsWithPVC]}}"};
  for (size_t i = 0; i < 2; i++) {
    run(de_policy(on[i]));
    assert_only("ns/no-pvc");
    assert_checks("ns/on-fast", "pod with PVC is protected against eviction");
    assert_checks("ns/on-missing", "pod with PVC is protected against eviction");
  }

  /* with protectedStorageClasses only claims of those classes protect; claims are resolved */
  run(de_policy("{podProtections: {extraEnabled: [PodsWithPVC], config: {PodsWithPVC: "
                "{protectedStorageClasses: [{name: fast}, {name: gold}]}}}}"));
  assert_kept("ns/on-fast");
  assert_evicted("ns/on-slow");
  assert_kept("ns/on-missing");
  assert_kept("ns/on-classless");
  assert_evicted("ns/no-pvc");
  assert_int_equal(R.res.nevictions, 2);
  assert_checks("ns/on-fast", "pod using protected storage class \\\"fast\\\"");
  assert_checks("ns/on-missing",
                "failed to get persistent volume claim \\\"ns\\\"/\\\"missing-claim\\\": "
                "persistentvolumeclaim \\\"missing-claim\\\" not found");
  assert_checks("ns/on-classless",
                "failed to resolve storage class for pod \\\"ns\\\"/\\\"classless-claim\\\"");
  /* protectedStorageClasses without PodsWithPVC enabled do nothing */
  run(de_policy(
      "{podProtections: {config: {PodsWithPVC: {protectedStorageClasses: [{name: fast}]}}}}"));
  assert_int_equal(R.res.nevictions, 5);
}

static void test_pods_without_pdb(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add("{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/"
      "v1\",\"metadata\":{\"name\":\"pdb\","
      "\"namespace\":\"ns\"},\"spec\":{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":"
      "\"web\"}}}}");
  add("{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":{\"name\":"
      "\"other-ns\",\"namespace\":\"other\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":"
      "\"db\"}}}}");
  add("{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":{\"name\":"
      "\"all\",\"namespace\":\"every\"},\"spec\":{\"selector\":{}}}");
  add("{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":{\"name\":"
      "\"nil-selector\",\"namespace\":\"none\"},\"spec\":{\"minAvailable\":1}}");
  add_pod("web", "\"labels\":{\"app\":\"web\"}", NULL, NULL);
  add_pod("db", "\"labels\":{\"app\":\"db\"}", NULL, NULL);
  add_pod("unlabelled", NULL, NULL, NULL);
  add_pod_full("every", "any", "n1", NULL, NULL, NULL, NULL);
  add_pod_full("none", "nil", "n1", NULL, "\"labels\":{\"app\":\"web\"}", NULL, NULL);

  run(de_policy(NULL));
  assert_int_equal(R.res.nevictions, 5);
  const char *on[] = {"{ignorePodsWithoutPDB: true}",
                      "{podProtections: {extraEnabled: [PodsWithoutPDB]}}"};
  for (size_t i = 0; i < 2; i++) {
    run(de_policy(on[i]));
    assert_evicted("ns/web");
    assert_kept("ns/db"); /* the PDB selecting app=db is in another namespace */
    assert_kept("ns/unlabelled");
    assert_evicted("every/any"); /* an empty selector covers every pod of its namespace */
    assert_kept("none/nil");     /* a nil selector covers none */
    assert_int_equal(R.res.nevictions, 2);
    assert_checks("ns/db",
                  "pod does not have a PodDisruptionBudget and is protected against eviction");
  }
}

static void test_pods_with_resource_claims(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add_pod("claims", NULL, "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"c\"}]",
          NULL);
  add_pod("plain", NULL, NULL, NULL);
  run(de_policy(NULL));
  assert_int_equal(R.res.nevictions, 2);
  run(de_policy("{podProtections: {extraEnabled: [PodsWithResourceClaims]}}"));
  assert_only("ns/plain");
  assert_checks(
      "ns/claims",
      "pod has ResourceClaims and descheduler is configured to protect ResourceClaims pods");
}

/* podProtections lists, when either is non-empty, replace the deprecated booleans. */
static void test_legacy_versus_pod_protections(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add_pod("local", NULL, "\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}]", NULL);
  add_pod("pvc", NULL, PVC_VOLUME("c"), NULL);
  add_pod_full("ns", "ds", "n1", "[{\"kind\":\"DaemonSet\",\"name\":\"d\",\"uid\":\"d\"}]", NULL,
               NULL, NULL);
  add_pod("critical", NULL, "\"priority\":2000000000", NULL);
  /* extraEnabled alone: all four defaults stay on */
  run(de_policy("{podProtections: {extraEnabled: [PodsWithPVC]}}"));
  assert_int_equal(R.res.nevictions, 0);
  /* defaults minus defaultDisabled plus extraEnabled */
  run(de_policy("{podProtections: {defaultDisabled: [PodsWithLocalStorage, DaemonSetPods], "
                "extraEnabled: [PodsWithPVC]}}"));
  assert_evicted("ns/local");
  assert_evicted("ns/ds");
  assert_kept("ns/pvc");
  assert_kept("ns/critical");
  assert_int_equal(R.res.nevictions, 2);
  /* legacy booleans, all of them */
  run(de_policy("{evictLocalStoragePods: true, evictDaemonSetPods: true, evictSystemCriticalPods: "
                "true, ignorePvcPods: true}"));
  assert_evicted("ns/local");
  assert_evicted("ns/ds");
  assert_evicted("ns/critical");
  assert_kept("ns/pvc");
  assert_int_equal(R.res.nevictions, 3);
  /* empty lists leave the legacy booleans in charge */
  run(de_policy(
      "{evictLocalStoragePods: true, podProtections: {defaultDisabled: [], extraEnabled: []}}"));
  assert_evicted("ns/local");
  assert_evicted("ns/pvc");
  assert_int_equal(R.res.nevictions, 2);
}

static void test_mirror_static_terminating(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add_pod("mirror", "\"annotations\":{\"kubernetes.io/config.mirror\":\"abc\"}", NULL, NULL);
  add_pod("static-file", "\"annotations\":{\"kubernetes.io/config.source\":\"file\"}", NULL, NULL);
  add_pod("source-api", "\"annotations\":{\"kubernetes.io/config.source\":\"api\"}", NULL, NULL);
  add_pod("terminating", "\"deletionTimestamp\":\"2025-12-31T23:59:00Z\"", NULL, NULL);
  /* these checks hold even with every protection off */
  run(de_policy("{evictLocalStoragePods: true, evictDaemonSetPods: true, evictSystemCriticalPods: "
                "true, evictFailedBarePods: true}"));
  assert_only("ns/source-api");
  assert_checks("ns/mirror", "pod is a mirror pod");
  assert_checks("ns/static-file", "pod is a static pod");
  assert_checks("ns/terminating", "pod is terminating");
}

static void test_evict_annotation_bypasses_filter(void **state) {
  (void)state;
  cluster_begin();
  add_node("n1", NULL, NULL, NULL);
  add_node("n2", NULL, "\"unschedulable\":true", NULL);
  /* mirror, DaemonSet, local storage, critical, bare: all skipped by the annotation */
  add_pod_full("ns", "forced", "n1", "[{\"kind\":\"DaemonSet\",\"name\":\"d\",\"uid\":\"d\"}]",
               "\"annotations\":{\"descheduler.alpha.kubernetes.io/evict\":\"\","
               "\"kubernetes.io/config.mirror\":\"x\"}",
               "\"priority\":2000000000,\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}]", NULL);
  add_pod_full("ns", "forced-bare", "n1", "",
               "\"annotations\":{\"descheduler.alpha.kubernetes.io/evict\":\"true\"},"
               "\"deletionTimestamp\":\"2025-12-31T23:59:00Z\"",
               NULL, NULL);
  add_pod("plain-mirror", "\"annotations\":{\"kubernetes.io/config.mirror\":\"x\"}", NULL, NULL);
  run(de_policy("{labelSelector: {matchLabels: {app: never}}, minReplicas: 5, minPodAge: 1h}"));
  assert_evicted("ns/forced");
  assert_evicted("ns/forced-bare");
  assert_kept("ns/plain-mirror");
  assert_int_equal(R.res.nevictions, 2);
  assert_not_logged("pod=\"ns/forced\" checks=");
  /* it does not bypass PreEvictionFilter: nodeFit still applies */
  run(de_policy("{nodeFit: true}"));
  assert_int_equal(R.res.nevictions, 0);
  assert_logged(
      "\"pod does not fit on any other node because of nodeSelector(s), Taint(s), or nodes "
      "marked as unschedulable\" plugin=\"DefaultEvictor\" ExtensionPoint=\"PreEvictionFilter\" "
      "pod=\"ns/forced\"\n");
}

static void test_no_eviction_policy(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add_pod("prefers-not",
          "\"annotations\":{\"descheduler.alpha.kubernetes.io/prefer-no-eviction\":\"\"}", NULL,
          NULL);
  add_pod("both",
          "\"annotations\":{\"descheduler.alpha.kubernetes.io/prefer-no-eviction\":\"\","
          "\"descheduler.alpha.kubernetes.io/evict\":\"\"}",
          NULL, NULL);
  add_pod("prefers-not-mirror",
          "\"annotations\":{\"descheduler.alpha.kubernetes.io/prefer-no-eviction\":"
          "\"\",\"kubernetes.io/config.mirror\":\"x\"}",
          NULL, NULL);
  add_pod("plain", NULL, NULL, NULL);
  /* Preferred (the default): the annotation only orders candidates */
  const char *preferred[] = {NULL, "{noEvictionPolicy: Preferred}", "{noEvictionPolicy: ''}"};
  for (size_t i = 0; i < 3; i++) {
    run(de_policy(preferred[i]));
    assert_evicted("ns/prefers-not");
    assert_evicted("ns/both");
    assert_kept("ns/prefers-not-mirror");
    assert_int_equal(R.res.nevictions, 3);
  }
  /* Mandatory: rejected silently, before any check; the evict annotation still wins */
  run(de_policy("{noEvictionPolicy: Mandatory}"));
  assert_kept("ns/prefers-not");
  assert_evicted("ns/both");
  assert_kept("ns/prefers-not-mirror");
  assert_evicted("ns/plain");
  assert_int_equal(R.res.nevictions, 2);
  assert_not_logged("pod=\"ns/prefers-not\" checks=");
  assert_not_logged("pod=\"ns/prefers-not-mirror\" checks=");
}

static void test_label_selector(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add_pod("web", "\"labels\":{\"app\":\"web\",\"tier\":\"front\"}", NULL, NULL);
  add_pod("db", "\"labels\":{\"app\":\"db\"}", NULL, NULL);
  add_pod("none", NULL, NULL, NULL);
  run(de_policy("{labelSelector: {matchLabels: {app: web}}}"));
  assert_only("ns/web");
  assert_checks("ns/db",
                "pod labels do not match the labelSelector filter in the policy parameter");
  assert_checks("ns/none",
                "pod labels do not match the labelSelector filter in the policy parameter");
  run(de_policy(
      "{labelSelector: {matchExpressions: [{key: app, operator: NotIn, values: [web]}]}}"));
  assert_evicted("ns/db");
  assert_evicted("ns/none");
  assert_int_equal(R.res.nevictions, 2);
  run(de_policy("{labelSelector: {matchExpressions: [{key: tier, operator: Exists}]}}"));
  assert_only("ns/web");
  /* an empty selector is no constraint */
  run(de_policy("{labelSelector: {}}"));
  assert_int_equal(R.res.nevictions, 3);
}

static void test_min_replicas(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add_pod("a", "\"labels\":{\"role\":\"target\"}", NULL, NULL);
  add_pod("b", NULL, NULL, NULL);
  run(de_policy_sel("{minReplicas: 3}", true));
  assert_int_equal(R.res.nevictions, 0);
  assert_checks("ns/a", "owner has 2 replicas which is less than minReplicas of 3");

  /* pods of the owner in any namespace and any phase count */
  add_pod_full("elsewhere", "c", "n2", NULL, NULL, NULL, "\"phase\":\"Succeeded\"");
  run(de_policy_sel("{minReplicas: 3}", true));
  assert_only("ns/a");
  run(de_policy_sel("{minReplicas: 4}", true));
  assert_checks("ns/a", "owner has 3 replicas which is less than minReplicas of 4");
  assert_int_equal(R.res.nevictions, 0);

  /* 1 is accepted and ignored */
  run(de_policy_sel("{minReplicas: 1}", true));
  assert_only("ns/a");
  /* upstream logs it with klog.V(4).Info: an unstructured line, the text raw */
  assert_logged("] DefaultEvictor minReplicas must be greater than 1 to check for min pods during "
                "eviction. This check will be ignored during eviction.\n");

  /* two owners: not supported, the check passes */
  add_pod_full("ns", "two-owners", "n1",
               "[{\"kind\":\"ReplicaSet\",\"name\":\"x\",\"uid\":\"x\"},{\"kind\":\"ReplicaSet\","
               "\"name\":\"y\",\"uid\":\"y\"}]",
               "\"labels\":{\"role\":\"target\"}", NULL, NULL);
  run(de_policy_sel("{minReplicas: 10}", true));
  assert_only("ns/two-owners");
  assert_logged(
      "\"pod has multiple owner references which is not supported for minReplicas check\" "
      "pod=\"ns/two-owners\"");
}

static void test_min_pod_age(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  /* now = 2026-01-01T00:00:00Z */
  add_pod("four-minutes", NULL, NULL, "\"startTime\":\"2025-12-31T23:56:00Z\"");
  add_pod("five-minutes", NULL, NULL, "\"startTime\":\"2025-12-31T23:55:00Z\"");
  add_pod("six-minutes", NULL, NULL, "\"startTime\":\"2025-12-31T23:54:00Z\"");
  add_pod("not-started", NULL, NULL, NULL);
  run(de_policy("{minPodAge: 5m}"));
  assert_kept("ns/four-minutes");
  assert_evicted("ns/five-minutes");
  assert_evicted("ns/six-minutes");
  assert_kept("ns/not-started");
  assert_int_equal(R.res.nevictions, 2);
  assert_checks("ns/four-minutes", "pod age is not older than MinPodAge: 5m0s seconds");
  assert_checks("ns/not-started", "pod age is not older than MinPodAge: 5m0s seconds");
  run(de_policy("{minPodAge: 90s}"));
  assert_checks("ns/not-started", "pod age is not older than MinPodAge: 1m30s seconds");
  assert_int_equal(R.res.nevictions, 3);
  /* the age is measured from the cycle's now */
  run_at(de_policy("{minPodAge: 1h}"), "2026-01-01T00:54:30Z", 4);
  assert_only("ns/six-minutes");
}

static void test_node_fit(void **state) {
  (void)state;
  const char *target_on_n1 = "\"labels\":{\"role\":\"target\"}";

  /* the only other node is cordoned */
  cluster_begin();
  add_node("n1", NULL, NULL, NULL);
  add_node("n2", NULL, "\"unschedulable\":true", NULL);
  add_pod("t", target_on_n1, NULL, NULL);
  run(de_policy_sel("{nodeFit: true}", true));
  assert_int_equal(R.res.nevictions, 0);
  assert_logged(
      "\"Pod does not fit on node\" pod=\"ns/t\" node=\"n2\" err=\"node is not schedulable\"\n");
  assert_logged(
      "\"pod does not fit on any other node because of nodeSelector(s), Taint(s), or nodes "
      "marked as unschedulable\" plugin=\"DefaultEvictor\" ExtensionPoint=\"PreEvictionFilter\" "
      "pod=\"ns/t\"\n");
  /* without nodeFit the same pod goes */
  run(de_policy_sel(NULL, true));
  assert_only("ns/t");

  /* taints: NoSchedule and NoExecute count, PreferNoSchedule does not */
  const char *taints[] = {"NoSchedule", "NoExecute", "PreferNoSchedule"};
  for (size_t i = 0; i < 3; i++) {
    char spec[256];
    snprintf(spec, sizeof spec,
             "\"taints\":[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"%s\"}]", taints[i]);
    cluster_begin();
    add_node("n1", NULL, NULL, NULL);
    add_node("n2", NULL, spec, NULL);
    add_pod("t", target_on_n1, NULL, NULL);
    run(de_policy_sel("{nodeFit: true}", true));
    assert_int_equal(R.res.nevictions, i == 2 ? 1 : 0);
    if (i < 2)
      assert_logged("node=\"n2\" err=\"pod does not tolerate taints on the node\"");
  }
  cluster_begin();
  add_node("n1", NULL, NULL, NULL);
  add_node("n2", NULL,
           "\"taints\":[{\"key\":\"dedicated\",\"value\":\"x\",\"effect\":\"NoSchedule\"}]", NULL);
  add_pod("t", target_on_n1,
          "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"x\","
          "\"effect\":\"NoSchedule\"}]",
          NULL);
  run(de_policy_sel("{nodeFit: true}", true));
  assert_only("ns/t");
  assert_logged("\"Pod fits on node\" pod=\"ns/t\" node=\"n2\"\n");

  /* node selector */
  cluster_begin();
  add_node("n1", "\"labels\":{\"disk\":\"ssd\"}", NULL, NULL);
  add_node("n2", "\"labels\":{\"disk\":\"hdd\"}", NULL, NULL);
  add_pod("t", target_on_n1, "\"nodeSelector\":{\"disk\":\"ssd\"}", NULL);
  run(de_policy_sel("{nodeFit: true}", true));
  assert_int_equal(R.res.nevictions, 0);
  assert_logged("node=\"n2\" err=\"pod node selector does not match the node label\"");
  add_node("n3", "\"labels\":{\"disk\":\"ssd\"}", NULL, NULL);
  run(de_policy_sel("{nodeFit: true}", true));
  assert_only("ns/t");

  /* resources: n2 has 4 cpu, 2 of them requested by a pod already there */
  cluster_begin();
  add_node("n1", NULL, NULL, NULL);
  add_node("n2", NULL, NULL, NULL);
  add_pod("t", target_on_n1,
          "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"3\"}}}]", NULL);
  add_pod_full("ns", "big", "n2", NULL, NULL,
               "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]",
               NULL);
  run(de_policy_sel("{nodeFit: true}", true));
  assert_int_equal(R.res.nevictions, 0);
  assert_logged("\"Pod does not fit on node\" pod=\"ns/t\" node=\"n2\" err=\"insufficient cpu\"\n");
  cluster_begin();
  add_node("n1", NULL, NULL, NULL);
  add_node("n2", NULL, NULL, NULL);
  add_pod("t", target_on_n1,
          "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]", NULL);
  add_pod_full("ns", "big", "n2", NULL, NULL,
               "\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]",
               NULL);
  run(de_policy_sel("{nodeFit: true}", true));
  assert_only("ns/t");

  /* the evictor's own nodeSelector picks the candidates; NotReady nodes are never candidates */
  cluster_begin();
  add_node("n1", NULL, NULL, NULL);
  add_node("n2", NULL, NULL, NULL);
  add_node("n3", "\"labels\":{\"pool\":\"b\"}", NULL,
           "\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]");
  add_pod("t", target_on_n1, NULL, NULL);
  run(de_policy_sel("{nodeFit: true, nodeSelector: \"pool=b\"}", true));
  assert_int_equal(R.res.nevictions, 0);
  assert_not_logged("pod=\"ns/t\" node=\"n2\"");
  add_node("n4", "\"labels\":{\"pool\":\"b\"}", NULL, NULL);
  run(de_policy_sel("{nodeFit: true, nodeSelector: \"pool=b\"}", true));
  assert_only("ns/t");
  assert_logged("\"Pod fits on node\" pod=\"ns/t\" node=\"n4\"\n");
  assert_not_logged("pod=\"ns/t\" node=\"n3\"");
  /* a nodeSelector that does not parse lists no nodes: the pod stays */
  run(de_policy_sel("{nodeFit: true, nodeSelector: \"pool in (b\"}", true));
  assert_int_equal(R.res.nevictions, 0);
  assert_logged("\"unable to list ready nodes\"");
  assert_logged("plugin=\"DefaultEvictor\" ExtensionPoint=\"PreEvictionFilter\" pod=\"ns/t\"\n");
}

static void test_namespace_label_selector(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add("{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"team-a\",\"labels\":"
      "{\"team\":\"a\"}}}");
  add("{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"team-b\",\"labels\":"
      "{\"team\":\"b\"}}}");
  add_pod_full("team-a", "pa", "n1", NULL, NULL, NULL, NULL);
  add_pod_full("team-b", "pb", "n1", NULL, NULL, NULL, NULL);
  add_pod_full("unlisted", "pu", "n1", NULL, NULL, NULL, NULL);
  run(de_policy("{namespaceLabelSelector: {matchLabels: {team: a}}}"));
  assert_only("team-a/pa");
  assert_logged("\"pod namespace do not match the namespaceLabelSelector filter in the policy "
                "parameter\" plugin=\"DefaultEvictor\" ExtensionPoint=\"PreEvictionFilter\" "
                "pod=\"team-b/pb\"\n");
  assert_logged("pod=\"unlisted/pu\"");
  run(de_policy(
      "{namespaceLabelSelector: {matchExpressions: [{key: team, operator: NotIn, values: [a]}]}}"));
  assert_evicted("team-b/pb");
  assert_evicted("unlisted/pu");
  assert_int_equal(R.res.nevictions, 2);
  run(de_policy("{namespaceLabelSelector: {}}"));
  assert_int_equal(R.res.nevictions, 3);
}

/* The V4 line: one check prints as itself, several as [a, b] in check order; none at V3. */
static void test_checks_line_format(void **state) {
  (void)state;
  cluster_begin();
  two_nodes();
  add_pod_full(
      "ns", "many", "n1", "",
      "\"labels\":{\"app\":\"x\"},\"annotations\":{\"kubernetes.io/config.mirror\":\"m\","
      "\"kubernetes.io/config.source\":\"file\"},\"deletionTimestamp\":\"2025-12-31T00:00:00Z\"",
      "\"priority\":2000000000,\"volumes\":[{\"name\":\"v\",\"hostPath\":{\"path\":\"/\"}}]", NULL);
  run(de_policy("{labelSelector: {matchLabels: {app: z}}, minPodAge: 1m}"));
  assert_int_equal(R.res.nevictions, 0);
  assert_checks(
      "ns/many",
      "[pod is a mirror pod, pod is a static pod, pod is terminating, pod has system critical "
      "priority and is protected against eviction, pod has higher priority than specified "
      "priority class threshold, pod does not have any ownerRefs, pod has local storage and is "
      "protected against eviction, pod labels do not match the labelSelector filter in the "
      "policy parameter, pod age is not older than MinPodAge: 1m0s seconds]");
  assert_int_equal(sim_log_count(&R, "\"Pod fails the following checks\""), 1);
  run_at(de_policy("{labelSelector: {matchLabels: {app: z}}}"), NULL, 3);
  assert_int_equal(R.res.nevictions, 0);
  assert_not_logged("Pod fails the following checks");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_teardown(test_validation_messages, teardown),
      cmocka_unit_test_teardown(test_local_storage, teardown),
      cmocka_unit_test_teardown(test_system_critical, teardown),
      cmocka_unit_test_teardown(test_priority_threshold, teardown),
      cmocka_unit_test_teardown(test_failed_bare_pods, teardown),
      cmocka_unit_test_teardown(test_daemonset_pods, teardown),
      cmocka_unit_test_teardown(test_pods_with_pvc, teardown),
      cmocka_unit_test_teardown(test_pods_without_pdb, teardown),
      cmocka_unit_test_teardown(test_pods_with_resource_claims, teardown),
      cmocka_unit_test_teardown(test_legacy_versus_pod_protections, teardown),
      cmocka_unit_test_teardown(test_mirror_static_terminating, teardown),
      cmocka_unit_test_teardown(test_evict_annotation_bypasses_filter, teardown),
      cmocka_unit_test_teardown(test_no_eviction_policy, teardown),
      cmocka_unit_test_teardown(test_label_selector, teardown),
      cmocka_unit_test_teardown(test_min_replicas, teardown),
      cmocka_unit_test_teardown(test_min_pod_age, teardown),
      cmocka_unit_test_teardown(test_node_fit, teardown),
      cmocka_unit_test_teardown(test_namespace_label_selector, teardown),
      cmocka_unit_test_teardown(test_checks_line_format, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
