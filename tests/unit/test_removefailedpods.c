/* test_removefailedpods.c - RemoveFailedPods: the 3600 s default age, owner kinds, reasons,
 * exit codes, init containers, bare pods, limits and validation (upstream's failedpods.go).
 * The cycle's now is 2026-01-01T00:00:00Z (the support default). */
#include "support/fixtures.h"
#include "support/support.h"

#include <string.h>

/* ---- inputs ---- */

static const char *rfp_policy(const char *args, const char *evictor_args, const char *top) {
  return plugin_policy(.plugin = "RemoveFailedPods", .args = args,
                       .evictor_args = evictor_args ? evictor_args : "{}", .top = top);
}

/* Starts a list with two plain nodes, a and b. */
static void two_nodes(void) {
  cluster_begin();
  cluster_node("a");
  cluster_node("b");
}

#define TERMINATED(code, why) "{\"terminated\":{\"exitCode\":" #code ",\"reason\":\"" why "\"}}"
#define WAITING(why) "{\"waiting\":{\"reason\":\"" why "\"}}"

/* A pod with these defaults: Failed, two hours old (.created = "": no creationTimestamp),
 * owned by a ReplicaSet, the container terminated with exit code 1 and no reason. */
#define failed_pod(name, node, ...) failed_pod_((name), (node), (pod_opts){__VA_ARGS__})
static void failed_pod_(const char *name, const char *node, pod_opts o) {
  if (!o.phase)
    o.phase = "Failed";
  if (!o.created)
    o.created = "2025-12-31T22:00:00Z";
  else if (!*o.created)
    o.created = NULL;
  if (!o.state)
    o.state = "{\"terminated\":{\"exitCode\":1}}";
  cluster_pod_(name, node, o);
}

static sim_run run(const char *args, const char *evictor_args, const char *top, int v) {
  return sim_run_ok(rfp_policy(args, evictor_args, top), cluster_end(), v);
}

/* ---- age ---- */

/* minPodLifetimeSeconds defaults to 3600; a pod exactly that old is old enough. */
static void test_default_min_lifetime(void **state) {
  (void)state;
  two_nodes();
  failed_pod("half-hour", "a", .created = "2025-12-31T23:30:00Z");
  failed_pod("one-hour", "a", .created = "2025-12-31T23:00:00Z");
  failed_pod("almost-hour", "a", .created = "2025-12-31T23:00:01Z");
  failed_pod("two-hours", "a", .created = "2025-12-31T22:00:00Z");
  failed_pod("ageless", "a", .created = "");
  failed_pod("future", "a", .created = "2026-01-01T00:10:00Z");
  sim_run r = run("{}", NULL, NULL, 4);
  assert_evictions(&r, "ns/one-hour", "ns/two-hours", "ns/ageless");
  assert_int_equal(sim_log_count(&r, "\"ignoring pod for eviction due to: pod does not exceed the "
                                     "min age seconds of 3600\" plugin=\"RemoveFailedPods\" "
                                     "ExtensionPoint=\"Deschedule\" pod=\"ns/half-hour\""),
                   1);
  sim_run_free(&r);

  /* 0 switches the age check off, future pods included */
  r = run("{minPodLifetimeSeconds: 0}", NULL, NULL, 0);
  assert_int_equal(r.res.nevictions, 6);
  sim_run_free(&r);
}

/* ---- phase, owners, bare pods ---- */

static void test_only_failed_pods(void **state) {
  (void)state;
  two_nodes();
  failed_pod("failed", "a", .phase = "Failed");
  failed_pod("running", "a", .phase = "Running", .state = WAITING("CrashLoopBackOff"));
  failed_pod("succeeded", "a", .phase = "Succeeded", .state = TERMINATED(0, "Completed"));
  failed_pod("pending", "a", .phase = "Pending");
  sim_run r = run("{}", NULL, NULL, 0);
  assert_evictions(&r, "ns/failed");
  sim_run_free(&r);
}

static void test_exclude_owner_kinds(void **state) {
  (void)state;
  two_nodes();
  failed_pod("from-rs", "a", .owner = "ReplicaSet/rs");
  failed_pod("from-job", "a", .owner = "Job/job");
  sim_run r = run("{excludeOwnerKinds: [Job]}", NULL, NULL, 4);
  assert_evictions(&r, "ns/from-rs");
  assert_int_equal(
      sim_log_count(&r,
                    "\"ignoring pod for eviction due to: pod's owner kind of Job is excluded\""),
      1);
  sim_run_free(&r);
}

/* Bare failed pods stay unless DefaultEvictor's FailedBarePods protection is off. */
static void test_bare_pods_need_evictor_opt_in(void **state) {
  (void)state;
  two_nodes();
  failed_pod("bare", "a", .owner = "");
  sim_run r = run("{}", NULL, NULL, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  r = run("{}", "{evictFailedBarePods: true}", NULL, 0);
  assert_evictions(&r, "ns/bare");
  sim_run_free(&r);
}

/* ---- reasons and exit codes ---- */

static void test_reasons(void **state) {
  (void)state;
  two_nodes();
  failed_pod("terminated", "a", .state = TERMINATED(1, "NodeAffinity"));
  failed_pod("waiting", "a", .state = WAITING("CreateContainerConfigError"));
  failed_pod("pod-reason", "a", .reason = "Evicted", .state = TERMINATED(137, ""));
  failed_pod("init-only", "a", .state = TERMINATED(1, ""),
             .init_state = WAITING("CreateContainerConfigError"));
  failed_pod("other", "a", .state = TERMINATED(1, "OOMKilled"));
  sim_run r = run("{reasons: [NodeAffinity, CreateContainerConfigError, Evicted]}", NULL, NULL, 4);
  assert_evictions(&r, "ns/terminated", "ns/waiting", "ns/pod-reason");
  assert_int_equal(sim_log_count(&r, "\"ignoring pod for eviction due to: pod does not match any "
                                     "of the reasons\""),
                   2);
  sim_run_free(&r);

  r = run("{reasons: [CreateContainerConfigError], includingInitContainers: true}", NULL, NULL, 0);
  assert_evictions(&r, "ns/waiting", "ns/init-only");
  sim_run_free(&r);
}

static void test_exit_codes(void **state) {
  (void)state;
  two_nodes();
  failed_pod("code-1", "a", .state = TERMINATED(1, "Error"));
  failed_pod("code-2", "a", .state = TERMINATED(2, "Error"));
  failed_pod("init-3", "a", .state = WAITING("PodInitializing"), .init_state = TERMINATED(3, ""));
  sim_run r = run("{exitCodes: [1, 3]}", NULL, NULL, 4);
  assert_evictions(&r, "ns/code-1");
  assert_int_equal(sim_log_count(&r, "\"ignoring pod for eviction due to: pod does not match any "
                                     "of the exitCodes\""),
                   2);
  sim_run_free(&r);

  r = run("{exitCodes: [3], includingInitContainers: true}", NULL, NULL, 0);
  assert_evictions(&r, "ns/init-3");
  sim_run_free(&r);
}

/* Every failed criterion is reported in one aggregated V4 line. */
static void test_reasons_are_aggregated(void **state) {
  (void)state;
  two_nodes();
  failed_pod("young", "a", .created = "2025-12-31T23:59:00Z", .owner = "Job/job",
             .state = TERMINATED(2, "Error"));
  sim_run r =
      run("{excludeOwnerKinds: [Job], reasons: [NodeAffinity], exitCodes: [1]}", NULL, NULL, 4);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "\"ignoring pod for eviction due to: [pod does not exceed the "
                                     "min age seconds of 3600, pod's owner kind of Job is "
                                     "excluded, pod does not match any of the reasons, pod does "
                                     "not match any of the exitCodes]\""),
                   1);
  sim_run_free(&r);
}

/* ---- filters and limits ---- */

static void test_namespaces_and_limits(void **state) {
  (void)state;
  two_nodes();
  failed_pod("a1", "a");
  failed_pod("a2", "a");
  failed_pod("b1", "b");
  failed_pod("o1", "b", .ns = "other");
  sim_run r = run("{namespaces: {include: [other]}}", NULL, NULL, 0);
  assert_evictions(&r, "other/o1");
  sim_run_free(&r);

  r = run("{}", NULL, "maxNoOfPodsToEvictPerNode: 1\n", 0);
  assert_evictions(&r, "ns/a1", "ns/b1");
  sim_run_free(&r);

  r = run("{}", NULL, "maxNoOfPodsToEvictTotal: 3\n", 0);
  assert_evictions(&r, "ns/a1", "ns/a2", "ns/b1");
  sim_run_free(&r);
}

static void test_validation_messages(void **state) {
  (void)state;
  assert_policy_error(rfp_policy("{namespaces: {include: [a], exclude: [b]}}", NULL, NULL),
                      "in profile p: only one of Include/Exclude namespaces can be set");
  assert_policy_error(rfp_policy("{minPodLifetimeSeconds: -1}", NULL, NULL),
                      "minPodLifetimeSeconds");
  assert_policy_error(rfp_policy("{minPodLifeTimeSeconds: 5}", NULL, NULL),
                      "strict decoding error: unknown field \"minPodLifeTimeSeconds\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_default_min_lifetime),
      cmocka_unit_test(test_only_failed_pods),
      cmocka_unit_test(test_exclude_owner_kinds),
      cmocka_unit_test(test_bare_pods_need_evictor_opt_in),
      cmocka_unit_test(test_reasons),
      cmocka_unit_test(test_exit_codes),
      cmocka_unit_test(test_reasons_are_aggregated),
      cmocka_unit_test(test_namespaces_and_limits),
      cmocka_unit_test(test_validation_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
