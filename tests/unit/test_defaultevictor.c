/* test_defaultevictor.c - the DefaultEvictor (upstream's defaultevictor.go): every validation
 * message verbatim, every pod protection, legacy booleans versus podProtections, mirror /
 * static / terminating pods, the `evict` annotation, noEvictionPolicy, labelSelector,
 * minReplicas, minPodAge, nodeFit, namespaceLabelSelector and the V4 "Pod fails the following
 * checks" line.
 *
 * The carrier is PodLifeTime with maxPodLifeTimeSeconds: 0 at deschedule, as the conformance
 * vectors do (tests/conformance/README.md): it evicts every pod it lists that passes
 * Filter and PreEvictionFilter (test pods have no creationTimestamp, so they are old). Where a
 * test has several pods, the carrier selects only those labelled role=target. */
#include "support/fixtures.h"
#include "support/support.h"

#include <stdio.h>
#include <string.h>

/* ---------- inputs ---------- */

/* DefaultEvictor args (YAML flow text, NULL for none); target_only: the carrier evicts only
 * pods labelled role=target. */
static const char *de_policy_sel(const char *args, bool target_only) {
  return plugin_policy(.plugin = "PodLifeTime",
                       .args = target_only ? "{maxPodLifeTimeSeconds: 0, labelSelector: "
                                             "{matchLabels: {role: target}}}"
                                           : "{maxPodLifeTimeSeconds: 0}",
                       .evictor_args = args ? args : "{}");
}

static const char *de_policy(const char *args) {
  return de_policy_sel(args, false);
}

/* nodes of 4 cpu / 8Gi / 110 pods */
static void begin(void) {
  cluster_begin();
  cluster_capacity("4", "8Gi", "110");
}

static void two_nodes(void) {
  cluster_node("n1");
  cluster_node("n2");
}

/* ---------- running ---------- */

static sim_run R;

static void run_at(const char *policy, const char *now, int v) {
  sim_rerun(&R, policy, cluster_end(), false, now, v);
}

static void run(const char *policy) {
  run_at(policy, NULL, 5);
}

static int teardown(void **state) {
  (void)state;
  sim_run_free(&R);
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
  begin();
  two_nodes();
  cluster_pod("empty-dir", "n1", .spec = "\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}]");
  cluster_pod("host-path", "n1",
              .spec = "\"volumes\":[{\"name\":\"v\",\"hostPath\":{\"path\":\"/x\"}}]");
  cluster_pod("config-map", "n1",
              .spec = "\"volumes\":[{\"name\":\"v\",\"configMap\":{\"name\":\"c\"}}]");
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
  begin();
  two_nodes();
  cluster_pod("critical", "n1", .priority = "2000000000");
  cluster_pod("node-critical", "n1", .priority = "2000001000");
  cluster_pod("just-below", "n1", .priority = "1999999999");
  cluster_pod("no-priority", "n1");
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
  begin();
  two_nodes();
  cluster_item(
      "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\",\"metadata\":{\"name\":"
      "\"high\"},\"value\":1000}");
  cluster_pod("p999", "n1", .priority = "999");
  cluster_pod("p1000", "n1", .priority = "1000");
  cluster_pod("p5000", "n1", .priority = "5000");
  cluster_pod("none", "n1");
  cluster_pod("negative", "n1", .priority = "-10");
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
  begin();
  two_nodes();
  cluster_pod("bare-running", "n1", .owner = "");
  cluster_pod("bare-failed", "n1", .owner = "", .phase = "Failed");
  cluster_pod("owned-failed", "n1", .phase = "Failed");
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
  begin();
  two_nodes();
  cluster_pod("ds", "n1", .owner = "DaemonSet/d");
  cluster_pod("ds-second-owner", "n1", .owner = "ReplicaSet/r,DaemonSet/d");
  cluster_pod("rs", "n1");
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
  cluster_item(
      "{\"kind\":\"PersistentVolumeClaim\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"%s\","
      "\"namespace\":\"ns\"},\"spec\":{%s}}",
      name, spec);
}

static void test_pods_with_pvc(void **state) {
  (void)state;
  begin();
  two_nodes();
  add_pvc("fast-claim", "fast");
  add_pvc("slow-claim", "slow");
  add_pvc("classless-claim", NULL);
  cluster_pod("on-fast", "n1", .spec = PVC_VOLUME("fast-claim"));
  cluster_pod("on-slow", "n1", .spec = PVC_VOLUME("slow-claim"));
  cluster_pod("on-missing", "n1", .spec = PVC_VOLUME("missing-claim"));
  cluster_pod("on-classless", "n1", .spec = PVC_VOLUME("classless-claim"));
  cluster_pod("no-pvc", "n1");

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
  begin();
  two_nodes();
  cluster_item(
      "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/"
      "v1\",\"metadata\":{\"name\":\"pdb\","
      "\"namespace\":\"ns\"},\"spec\":{\"minAvailable\":1,\"selector\":{\"matchLabels\":{\"app\":"
      "\"web\"}}}}");
  cluster_item(
      "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":{\"name\":"
      "\"other-ns\",\"namespace\":\"other\"},\"spec\":{\"selector\":{\"matchLabels\":{\"app\":"
      "\"db\"}}}}");
  cluster_item(
      "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":{\"name\":"
      "\"all\",\"namespace\":\"every\"},\"spec\":{\"selector\":{}}}");
  cluster_item(
      "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":{\"name\":"
      "\"nil-selector\",\"namespace\":\"none\"},\"spec\":{\"minAvailable\":1}}");
  cluster_pod("web", "n1", .labels = "app=web");
  cluster_pod("db", "n1", .labels = "app=db");
  cluster_pod("unlabelled", "n1");
  cluster_pod("any", "n1", .ns = "every");
  cluster_pod("nil", "n1", .ns = "none", .labels = "app=web");
  /* a PDB whose selector does not convert covers no pod (upstream's PDB lookup skips it) */
  cluster_item(
      "{\"kind\":\"PodDisruptionBudget\",\"apiVersion\":\"policy/v1\",\"metadata\":{\"name\":"
      "\"bad\",\"namespace\":\"bad\"},\"spec\":{\"selector\":{\"matchExpressions\":[{\"key\":"
      "\"app\",\"operator\":\"In\"}]}}}");
  cluster_pod("bad-pdb", "n1", .ns = "bad", .labels = "app=web");

  run(de_policy(NULL));
  assert_int_equal(R.res.nevictions, 6);
  const char *on[] = {"{ignorePodsWithoutPDB: true}",
                      "{podProtections: {extraEnabled: [PodsWithoutPDB]}}"};
  for (size_t i = 0; i < 2; i++) {
    run(de_policy(on[i]));
    assert_evicted("ns/web");
    assert_kept("ns/db"); /* the PDB selecting app=db is in another namespace */
    assert_kept("ns/unlabelled");
    assert_evicted("every/any"); /* an empty selector covers every pod of its namespace */
    assert_kept("none/nil");     /* a nil selector covers none */
    assert_kept("bad/bad-pdb");  /* nor does one that does not convert */
    assert_int_equal(R.res.nevictions, 2);
    assert_checks("ns/db",
                  "pod does not have a PodDisruptionBudget and is protected against eviction");
  }
}

static void test_pods_with_resource_claims(void **state) {
  (void)state;
  begin();
  two_nodes();
  cluster_pod("claims", "n1",
              .spec = "\"resourceClaims\":[{\"name\":\"gpu\",\"resourceClaimName\":\"c\"}]");
  cluster_pod("plain", "n1");
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
  begin();
  two_nodes();
  cluster_pod("local", "n1", .spec = "\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}]");
  cluster_pod("pvc", "n1", .spec = PVC_VOLUME("c"));
  cluster_pod("ds", "n1", .owner = "DaemonSet/d");
  cluster_pod("critical", "n1", .priority = "2000000000");
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
  begin();
  two_nodes();
  cluster_pod("mirror", "n1", .annotations = "kubernetes.io/config.mirror=abc");
  cluster_pod("static-file", "n1", .annotations = "kubernetes.io/config.source=file");
  cluster_pod("source-api", "n1", .annotations = "kubernetes.io/config.source=api");
  cluster_pod("terminating", "n1", .deleted = "2025-12-31T23:59:00Z");
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
  begin();
  cluster_node("n1");
  cluster_node("n2", .unschedulable = true);
  /* mirror, DaemonSet, local storage, critical, bare: all skipped by the annotation */
  cluster_pod("forced", "n1",
              .annotations = "descheduler.alpha.kubernetes.io/evict=,kubernetes.io/config.mirror=x",
              .owner = "DaemonSet/d", .priority = "2000000000",
              .spec = "\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}]");
  cluster_pod("forced-bare", "n1", .annotations = "descheduler.alpha.kubernetes.io/evict=true",
              .owner = "", .deleted = "2025-12-31T23:59:00Z");
  cluster_pod("plain-mirror", "n1", .annotations = "kubernetes.io/config.mirror=x");
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
  begin();
  two_nodes();
  cluster_pod("prefers-not", "n1",
              .annotations = "descheduler.alpha.kubernetes.io/prefer-no-eviction=");
  cluster_pod("both", "n1",
              .annotations = "descheduler.alpha.kubernetes.io/"
                             "prefer-no-eviction=,descheduler.alpha.kubernetes.io/evict=");
  cluster_pod(
      "prefers-not-mirror", "n1",
      .annotations =
          "descheduler.alpha.kubernetes.io/prefer-no-eviction=,kubernetes.io/config.mirror=x");
  cluster_pod("plain", "n1");
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
  begin();
  two_nodes();
  cluster_pod("web", "n1", .labels = "app=web,tier=front");
  cluster_pod("db", "n1", .labels = "app=db");
  cluster_pod("none", "n1");
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
  /* one that does not convert fails the constructor, as upstream's does */
  assert_policy_error(de_policy("{labelSelector: {matchLabels: {-app: web}}}"),
                      "key: Invalid value: \"-app\": name part must consist of alphanumeric "
                      "characters");
}

static void test_min_replicas(void **state) {
  (void)state;
  begin();
  two_nodes();
  cluster_pod("a", "n1", .labels = "role=target");
  cluster_pod("b", "n1");
  run(de_policy_sel("{minReplicas: 3}", true));
  assert_int_equal(R.res.nevictions, 0);
  assert_checks("ns/a", "owner has 2 replicas which is less than minReplicas of 3");

  /* pods of the owner in any namespace and any phase count */
  cluster_pod("c", "n2", .ns = "elsewhere", .phase = "Succeeded");
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
  cluster_pod("two-owners", "n1", .labels = "role=target", .owner = "ReplicaSet/x,ReplicaSet/y");
  run(de_policy_sel("{minReplicas: 10}", true));
  assert_only("ns/two-owners");
  assert_logged(
      "\"pod has multiple owner references which is not supported for minReplicas check\" "
      "pod=\"ns/two-owners\"");
}

static void test_min_pod_age(void **state) {
  (void)state;
  begin();
  two_nodes();
  /* now = 2026-01-01T00:00:00Z */
  cluster_pod("four-minutes", "n1", .status = "\"startTime\":\"2025-12-31T23:56:00Z\"");
  cluster_pod("five-minutes", "n1", .status = "\"startTime\":\"2025-12-31T23:55:00Z\"");
  cluster_pod("six-minutes", "n1", .status = "\"startTime\":\"2025-12-31T23:54:00Z\"");
  cluster_pod("not-started", "n1");
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
  const char *target = "role=target";

  /* the only other node is cordoned */
  begin();
  cluster_node("n1");
  cluster_node("n2", .unschedulable = true);
  cluster_pod("t", "n1", .labels = target);
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
    char taint[64];
    snprintf(taint, sizeof taint, "dedicated=x:%s", taints[i]);
    begin();
    cluster_node("n1");
    cluster_node("n2", .taints = taint);
    cluster_pod("t", "n1", .labels = target);
    run(de_policy_sel("{nodeFit: true}", true));
    assert_int_equal(R.res.nevictions, i == 2 ? 1 : 0);
    if (i < 2)
      assert_logged("node=\"n2\" err=\"pod does not tolerate taints on the node\"");
  }
  begin();
  cluster_node("n1");
  cluster_node("n2", .taints = "dedicated=x:NoSchedule");
  cluster_pod("t", "n1", .labels = target,
              .spec =
                  "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":\"Equal\",\"value\":\"x\","
                  "\"effect\":\"NoSchedule\"}]");
  run(de_policy_sel("{nodeFit: true}", true));
  assert_only("ns/t");
  assert_logged("\"Pod fits on node\" pod=\"ns/t\" node=\"n2\"\n");

  /* node selector */
  begin();
  cluster_node("n1", .labels = "disk=ssd");
  cluster_node("n2", .labels = "disk=hdd");
  cluster_pod("t", "n1", .labels = target, .node_selector = "disk=ssd");
  run(de_policy_sel("{nodeFit: true}", true));
  assert_int_equal(R.res.nevictions, 0);
  assert_logged("node=\"n2\" err=\"pod node selector does not match the node label\"");
  cluster_node("n3", .labels = "disk=ssd");
  run(de_policy_sel("{nodeFit: true}", true));
  assert_only("ns/t");

  /* resources: n2 has 4 cpu, 2 of them requested by a pod already there */
  begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_pod("t", "n1", .labels = target, .cpu = "3");
  cluster_pod("big", "n2", .cpu = "2");
  run(de_policy_sel("{nodeFit: true}", true));
  assert_int_equal(R.res.nevictions, 0);
  assert_logged("\"Pod does not fit on node\" pod=\"ns/t\" node=\"n2\" err=\"insufficient cpu\"\n");
  begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_pod("t", "n1", .labels = target, .cpu = "2");
  cluster_pod("big", "n2", .cpu = "2");
  run(de_policy_sel("{nodeFit: true}", true));
  assert_only("ns/t");

  /* the evictor's own nodeSelector picks the candidates; NotReady nodes are never candidates */
  begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_node("n3", .labels = "pool=b", .ready = "False");
  cluster_pod("t", "n1", .labels = target);
  run(de_policy_sel("{nodeFit: true, nodeSelector: \"pool=b\"}", true));
  assert_int_equal(R.res.nevictions, 0);
  assert_not_logged("pod=\"ns/t\" node=\"n2\"");
  cluster_node("n4", .labels = "pool=b");
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
  begin();
  two_nodes();
  cluster_item(
      "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"team-a\",\"labels\":"
      "{\"team\":\"a\"}}}");
  cluster_item(
      "{\"kind\":\"Namespace\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"team-b\",\"labels\":"
      "{\"team\":\"b\"}}}");
  cluster_pod("pa", "n1", .ns = "team-a");
  cluster_pod("pb", "n1", .ns = "team-b");
  cluster_pod("pu", "n1", .ns = "unlisted");
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
  assert_policy_error(
      de_policy("{namespaceLabelSelector: {matchExpressions: [{key: team, operator: Near}]}}"),
      "unable to convert namespaceLabelSelector to label selector: \"Near\" is not a valid label "
      "selector operator");
}

/* The V4 line: one check prints as itself, several as [a, b] in check order; none at V3. */
static void test_checks_line_format(void **state) {
  (void)state;
  begin();
  two_nodes();
  cluster_pod("many", "n1", .labels = "app=x",
              .annotations = "kubernetes.io/config.mirror=m,kubernetes.io/config.source=file",
              .owner = "", .deleted = "2025-12-31T00:00:00Z", .priority = "2000000000",
              .spec = "\"volumes\":[{\"name\":\"v\",\"hostPath\":{\"path\":\"/\"}}]");
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
