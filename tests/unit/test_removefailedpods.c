/* test_removefailedpods.c - RemoveFailedPods: the 3600 s default age, owner kinds, reasons,
 * exit codes, init containers, bare pods, limits and validation (plugins.md §11).
 * The cycle's now is 2026-01-01T00:00:00Z (the support default). */
#include "support/support.h"

#include <stdio.h>
#include <string.h>

/* ---- inputs ---- */

static char policy_buf[4096];

static const char *rfp_policy(const char *args, const char *evictor_args, const char *top) {
  snprintf(policy_buf, sizeof policy_buf,
           "apiVersion: descheduler/v1alpha2\n"
           "kind: DeschedulerPolicy\n"
           "%s"
           "profiles:\n"
           "- name: p\n"
           "  pluginConfig:\n"
           "  - name: DefaultEvictor\n"
           "    args: %s\n"
           "  - name: RemoveFailedPods\n"
           "    args: %s\n"
           "  plugins:\n"
           "    deschedule:\n"
           "      enabled: [RemoveFailedPods]\n",
           top ? top : "", evictor_args ? evictor_args : "{}", args);
  return policy_buf;
}

static char cluster_buf[1 << 16];
static size_t cluster_len;
static int cluster_items;

static const char *cluster_sep(void) {
  return cluster_items++ ? "," : "";
}

/* Starts a list with two plain nodes, a and b. */
static void cluster_begin(void) {
  cluster_items = 0;
  cluster_len = (size_t)snprintf(cluster_buf, sizeof cluster_buf,
                                 "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[");
  const char *nodes[] = {"a", "b"};
  for (int i = 0; i < 2; i++)
    cluster_len += (size_t)snprintf(
        cluster_buf + cluster_len, sizeof cluster_buf - cluster_len,
        "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"},"
        "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}",
        cluster_sep(), nodes[i]);
}

typedef struct {
  const char *ns, *node, *phase;
  const char *created;    /* RFC 3339; NULL: two hours old; "": no creationTimestamp */
  const char *owner_kind; /* NULL: ReplicaSet; "": bare pod */
  const char *reason;     /* status.reason */
  const char *state;      /* the container's state object, JSON */
  const char *init_state; /* an init container's state object, JSON (NULL: none) */
} pod_spec;

/* Defaults: namespace ns, node a, Failed, two hours old, owned by a ReplicaSet, the
 * container terminated with exit code 1 and no reason. */
static void add_pod(const char *name, pod_spec s) {
  char meta[256] = "", owner[160] = "", init[256] = "", reason[96] = "";
  if (!s.created || *s.created)
    snprintf(meta, sizeof meta, ",\"creationTimestamp\":\"%s\"",
             s.created ? s.created : "2025-12-31T22:00:00Z");
  if (!s.owner_kind || *s.owner_kind)
    snprintf(owner, sizeof owner,
             ",\"ownerReferences\":[{\"kind\":\"%s\",\"name\":\"o\",\"uid\":\"o\"}]",
             s.owner_kind ? s.owner_kind : "ReplicaSet");
  if (s.init_state)
    snprintf(init, sizeof init, ",\"initContainerStatuses\":[{\"name\":\"i\",\"state\":%s}]",
             s.init_state);
  if (s.reason)
    snprintf(reason, sizeof reason, ",\"reason\":\"%s\"", s.reason);
  const char *ns = s.ns ? s.ns : "ns";
  cluster_len += (size_t)snprintf(
      cluster_buf + cluster_len, sizeof cluster_buf - cluster_len,
      "%s{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s-%s\""
      "%s%s},"
      "\"spec\":{\"nodeName\":\"%s\",\"initContainers\":[{\"name\":\"i\"}],"
      "\"containers\":[{\"name\":\"c\"}]},"
      "\"status\":{\"phase\":\"%s\"%s,\"containerStatuses\":[{\"name\":\"c\",\"state\":%s}]%s}}",
      cluster_sep(), name, ns, ns, name, meta, owner, s.node ? s.node : "a",
      s.phase ? s.phase : "Failed", reason, s.state ? s.state : "{\"terminated\":{\"exitCode\":1}}",
      init);
}

/* pod_spec with the defaults above; designated initializers override them */
#define POD(...) ((pod_spec){__VA_ARGS__})
#define TERMINATED(code, why) "{\"terminated\":{\"exitCode\":" #code ",\"reason\":\"" why "\"}}"
#define WAITING(why) "{\"waiting\":{\"reason\":\"" why "\"}}"

static const char *cluster_end(void) {
  snprintf(cluster_buf + cluster_len, sizeof cluster_buf - cluster_len, "]}");
  return cluster_buf;
}

static sim_run run(const char *args, const char *evictor_args, const char *top, int v) {
  sim_run r;
  assert_int_equal(
      sim_run_strings(&r, rfp_policy(args, evictor_args, top), cluster_buf, false, NULL, v), 0);
  return r;
}

/* ---- age ---- */

/* minPodLifetimeSeconds defaults to 3600; a pod exactly that old is old enough. */
static void test_default_min_lifetime(void **state) {
  (void)state;
  cluster_begin();
  add_pod("half-hour", POD(.created = "2025-12-31T23:30:00Z"));
  add_pod("one-hour", POD(.created = "2025-12-31T23:00:00Z"));
  add_pod("almost-hour", POD(.created = "2025-12-31T23:00:01Z"));
  add_pod("two-hours", POD(.created = "2025-12-31T22:00:00Z"));
  add_pod("ageless", POD(.created = ""));
  add_pod("future", POD(.created = "2026-01-01T00:10:00Z"));
  cluster_end();
  sim_run r = run("{}", NULL, NULL, 4);
  assert_int_equal(r.res.nevictions, 3);
  assert_true(sim_evicted(&r, "ns/one-hour"));
  assert_true(sim_evicted(&r, "ns/two-hours"));
  assert_true(sim_evicted(&r, "ns/ageless")); /* no creationTimestamp: Go's zero time */
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
  cluster_begin();
  add_pod("failed", POD(.phase = "Failed"));
  add_pod("running", POD(.phase = "Running", .state = WAITING("CrashLoopBackOff")));
  add_pod("succeeded", POD(.phase = "Succeeded", .state = TERMINATED(0, "Completed")));
  add_pod("pending", POD(.phase = "Pending"));
  cluster_end();
  sim_run r = run("{}", NULL, NULL, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/failed"));
  sim_run_free(&r);
}

static void test_exclude_owner_kinds(void **state) {
  (void)state;
  cluster_begin();
  add_pod("from-rs", POD(.owner_kind = "ReplicaSet"));
  add_pod("from-job", POD(.owner_kind = "Job"));
  cluster_end();
  sim_run r = run("{excludeOwnerKinds: [Job]}", NULL, NULL, 4);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/from-rs"));
  assert_int_equal(
      sim_log_count(&r,
                    "\"ignoring pod for eviction due to: pod's owner kind of Job is excluded\""),
      1);
  sim_run_free(&r);
}

/* Bare failed pods stay unless DefaultEvictor's FailedBarePods protection is off. */
static void test_bare_pods_need_evictor_opt_in(void **state) {
  (void)state;
  cluster_begin();
  add_pod("bare", POD(.owner_kind = ""));
  cluster_end();
  sim_run r = run("{}", NULL, NULL, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  r = run("{}", "{evictFailedBarePods: true}", NULL, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/bare"));
  sim_run_free(&r);
}

/* ---- reasons and exit codes ---- */

static void test_reasons(void **state) {
  (void)state;
  cluster_begin();
  add_pod("terminated", POD(.state = TERMINATED(1, "NodeAffinity")));
  add_pod("waiting", POD(.state = WAITING("CreateContainerConfigError")));
  add_pod("pod-reason", POD(.reason = "Evicted", .state = TERMINATED(137, "")));
  add_pod("init-only",
          POD(.state = TERMINATED(1, ""), .init_state = WAITING("CreateContainerConfigError")));
  add_pod("other", POD(.state = TERMINATED(1, "OOMKilled")));
  cluster_end();
  sim_run r = run("{reasons: [NodeAffinity, CreateContainerConfigError, Evicted]}", NULL, NULL, 4);
  assert_int_equal(r.res.nevictions, 3);
  assert_true(sim_evicted(&r, "ns/terminated"));
  assert_true(sim_evicted(&r, "ns/waiting"));
  assert_true(sim_evicted(&r, "ns/pod-reason"));
  assert_int_equal(sim_log_count(&r, "\"ignoring pod for eviction due to: pod does not match any "
                                     "of the reasons\""),
                   2);
  sim_run_free(&r);

  r = run("{reasons: [CreateContainerConfigError], includingInitContainers: true}", NULL, NULL, 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/waiting"));
  assert_true(sim_evicted(&r, "ns/init-only"));
  sim_run_free(&r);
}

static void test_exit_codes(void **state) {
  (void)state;
  cluster_begin();
  add_pod("code-1", POD(.state = TERMINATED(1, "Error")));
  add_pod("code-2", POD(.state = TERMINATED(2, "Error")));
  add_pod("init-3", POD(.state = WAITING("PodInitializing"), .init_state = TERMINATED(3, "")));
  cluster_end();
  sim_run r = run("{exitCodes: [1, 3]}", NULL, NULL, 4);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/code-1"));
  assert_int_equal(sim_log_count(&r, "\"ignoring pod for eviction due to: pod does not match any "
                                     "of the exitCodes\""),
                   2);
  sim_run_free(&r);

  r = run("{exitCodes: [3], includingInitContainers: true}", NULL, NULL, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/init-3"));
  sim_run_free(&r);
}

/* Every failed criterion is reported in one aggregated V4 line. */
static void test_reasons_are_aggregated(void **state) {
  (void)state;
  cluster_begin();
  add_pod("young", POD(.created = "2025-12-31T23:59:00Z", .owner_kind = "Job",
                       .state = TERMINATED(2, "Error")));
  cluster_end();
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
  cluster_begin();
  add_pod("a1", POD(.node = "a"));
  add_pod("a2", POD(.node = "a"));
  add_pod("b1", POD(.node = "b"));
  add_pod("o1", POD(.ns = "other", .node = "b"));
  cluster_end();
  sim_run r = run("{namespaces: {include: [other]}}", NULL, NULL, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "other/o1"));
  sim_run_free(&r);

  r = run("{}", NULL, "maxNoOfPodsToEvictPerNode: 1\n", 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/a1"));
  assert_true(sim_evicted(&r, "ns/b1"));
  sim_run_free(&r);

  r = run("{}", NULL, "maxNoOfPodsToEvictTotal: 3\n", 0);
  assert_int_equal(r.res.nevictions, 3);
  assert_true(sim_evicted(&r, "ns/a1"));
  assert_true(sim_evicted(&r, "ns/a2"));
  assert_true(sim_evicted(&r, "ns/b1"));
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
