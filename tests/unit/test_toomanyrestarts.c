/* test_toomanyrestarts.c - RemovePodsHavingTooManyRestarts: the threshold, init containers,
 * states, most-restarts-first order, limits and validation texts (plugins.md §9). */
#include "support/support.h"

#include <stdio.h>
#include <string.h>

/* ---- inputs ---- */

static char policy_buf[4096];

static const char *tmr_policy(const char *args, const char *top) {
  snprintf(policy_buf, sizeof policy_buf,
           "apiVersion: descheduler/v1alpha2\n"
           "kind: DeschedulerPolicy\n"
           "%s"
           "profiles:\n"
           "- name: p\n"
           "  pluginConfig:\n"
           "  - name: DefaultEvictor\n"
           "  - name: RemovePodsHavingTooManyRestarts\n"
           "    args: %s\n"
           "  plugins:\n"
           "    deschedule:\n"
           "      enabled: [RemovePodsHavingTooManyRestarts]\n",
           top ? top : "", args);
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

/* A ReplicaSet-owned pod in namespace ns. One container with `restarts` restarts, waiting
 * for `waiting` (NULL: running); init_restarts > 0 or init_waiting adds an init container. */
static void add_pod_ns(const char *ns, const char *name, const char *node, const char *phase,
                       int restarts, const char *waiting, int init_restarts,
                       const char *init_waiting) {
  char state[128] = "{\"running\":{}}", init[256] = "";
  if (waiting)
    snprintf(state, sizeof state, "{\"waiting\":{\"reason\":\"%s\"}}", waiting);
  if (init_restarts || init_waiting) {
    char istate[128] = "{\"terminated\":{\"exitCode\":0}}";
    if (init_waiting)
      snprintf(istate, sizeof istate, "{\"waiting\":{\"reason\":\"%s\"}}", init_waiting);
    snprintf(init, sizeof init,
             ",\"initContainerStatuses\":[{\"name\":\"i\",\"restartCount\":%d,\"state\":%s}]",
             init_restarts, istate);
  }
  cluster_len += (size_t)snprintf(
      cluster_buf + cluster_len, sizeof cluster_buf - cluster_len,
      "%s{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":\"%s-%s\","
      "\"labels\":{\"app\":\"%s\"},"
      "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\",\"uid\":\"rs\"}]},"
      "\"spec\":{\"nodeName\":\"%s\",\"initContainers\":[{\"name\":\"i\"}],"
      "\"containers\":[{\"name\":\"c\"}]},"
      "\"status\":{\"phase\":\"%s\",\"containerStatuses\":[{\"name\":\"c\",\"restartCount\":%d,"
      "\"state\":%s}]%s}}",
      cluster_sep(), name, ns, ns, name, name, node, phase, restarts, state, init);
}

static void add_pod(const char *name, const char *node, int restarts) {
  add_pod_ns("ns", name, node, "Running", restarts, NULL, 0, NULL);
}

static const char *cluster_end(void) {
  snprintf(cluster_buf + cluster_len, sizeof cluster_buf - cluster_len, "]}");
  return cluster_buf;
}

static sim_run run(const char *args, const char *top, int v) {
  sim_run r;
  assert_int_equal(sim_run_strings(&r, tmr_policy(args, top), cluster_buf, false, NULL, v), 0);
  return r;
}

/* ---- threshold ---- */

/* The threshold is inclusive: exactly podRestartThreshold restarts is enough. */
static void test_threshold_is_inclusive(void **state) {
  (void)state;
  cluster_begin();
  add_pod("p2", "a", 2);
  add_pod("p3", "a", 3);
  add_pod("p5", "b", 5);
  cluster_end();
  sim_run r = run("{podRestartThreshold: 3}", NULL, 4);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/p3"));
  assert_true(sim_evicted(&r, "ns/p5"));
  assert_int_equal(sim_log_count(&r, "\"ignoring pod for eviction due to: number of container "
                                     "restarts (2) not exceeding the threshold\" "
                                     "plugin=\"RemovePodsHavingTooManyRestarts\" "
                                     "ExtensionPoint=\"Deschedule\" pod=\"ns/p2\""),
                   1);
  sim_run_free(&r);
}

/* Init container restarts count only with includingInitContainers. */
static void test_init_container_restarts(void **state) {
  (void)state;
  cluster_begin();
  add_pod_ns("ns", "p", "a", "Running", 1, NULL, 2, NULL);
  cluster_end();
  sim_run r = run("{podRestartThreshold: 3}", NULL, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  r = run("{podRestartThreshold: 3, includingInitContainers: true}", NULL, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/p"));
  sim_run_free(&r);
}

/* Every pod of the node is considered, whatever its phase. */
static void test_terminal_pods_are_considered(void **state) {
  (void)state;
  cluster_begin();
  add_pod_ns("ns", "failed", "a", "Failed", 4, NULL, 0, NULL);
  add_pod_ns("ns", "succeeded", "b", "Succeeded", 4, NULL, 0, NULL);
  cluster_end();
  sim_run r = run("{podRestartThreshold: 4}", NULL, 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/failed"));
  assert_true(sim_evicted(&r, "ns/succeeded"));
  sim_run_free(&r);
}

/* ---- order and limits ---- */

/* Most restarts first on each node, so a node limit keeps the worst offender's eviction. */
static void test_most_restarts_first(void **state) {
  (void)state;
  cluster_begin();
  add_pod("few", "a", 3);
  add_pod("many", "a", 9);
  add_pod("mid", "a", 5);
  add_pod("tie-x", "b", 4);
  add_pod("tie-y", "b", 4);
  cluster_end();
  sim_run r = run("{podRestartThreshold: 1}", NULL, 0);
  assert_int_equal(r.res.nevictions, 5);
  const char *order[] = {"many", "mid", "few", "tie-x", "tie-y"};
  for (int i = 0; i < 5; i++)
    assert_string_equal(r.res.evictions[i].pod->name, order[i]);
  sim_run_free(&r);

  r = run("{podRestartThreshold: 1}", "maxNoOfPodsToEvictPerNode: 1\n", 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/many"));
  assert_true(sim_evicted(&r, "ns/tie-x"));
  sim_run_free(&r);

  r = run("{podRestartThreshold: 1}", "maxNoOfPodsToEvictTotal: 2\n", 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/many"));
  assert_true(sim_evicted(&r, "ns/mid"));
  sim_run_free(&r);
}

/* ---- states ---- */

static void test_states(void **state) {
  (void)state;
  cluster_begin();
  add_pod_ns("ns", "crashing", "a", "Running", 5, "CrashLoopBackOff", 0, NULL);
  add_pod_ns("ns", "running", "a", "Running", 5, NULL, 0, NULL);
  add_pod_ns("ns", "pending", "b", "Pending", 5, "ContainerCreating", 0, NULL);
  add_pod_ns("ns", "init-crashing", "b", "Pending", 5, NULL, 0, "CrashLoopBackOff");
  cluster_end();
  sim_run r = run("{podRestartThreshold: 5, states: [CrashLoopBackOff]}", NULL, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/crashing"));
  sim_run_free(&r);

  /* with init containers, an init container's waiting reason counts too */
  r = run("{podRestartThreshold: 5, states: [CrashLoopBackOff], includingInitContainers: true}",
          NULL, 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/crashing"));
  assert_true(sim_evicted(&r, "ns/init-crashing"));
  sim_run_free(&r);

  /* Running is the pod phase: the crash-looping pod is Running too */
  r = run("{podRestartThreshold: 5, states: [Running]}", NULL, 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/crashing"));
  assert_true(sim_evicted(&r, "ns/running"));
  sim_run_free(&r);
}

static void test_namespaces_and_label_selector(void **state) {
  (void)state;
  cluster_begin();
  add_pod_ns("ns", "p1", "a", "Running", 5, NULL, 0, NULL);
  add_pod_ns("other", "p2", "a", "Running", 5, NULL, 0, NULL);
  cluster_end();
  sim_run r = run("{podRestartThreshold: 1, namespaces: {exclude: [ns]}}", NULL, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "other/p2"));
  sim_run_free(&r);
  r = run("{podRestartThreshold: 1, labelSelector: {matchLabels: {app: p1}}}", NULL, 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/p1"));
  sim_run_free(&r);
}

static void test_validation_messages(void **state) {
  (void)state;
  assert_policy_error(tmr_policy("{}", NULL),
                      "in profile p: invalid PodsHavingTooManyRestarts threshold");
  assert_policy_error(tmr_policy("{podRestartThreshold: 0}", NULL),
                      "in profile p: invalid PodsHavingTooManyRestarts threshold");
  assert_policy_error(tmr_policy("{podRestartThreshold: 1, states: [Running, Pending]}", NULL),
                      "in profile p: states must be one of [CrashLoopBackOff Running]");
  assert_policy_error(
      tmr_policy("{namespaces: {include: [a], exclude: [b]}, podRestartThreshold: -1, "
                 "states: [Failed]}",
                 NULL),
      "in profile p: [only one of Include/Exclude namespaces can be set, invalid "
      "PodsHavingTooManyRestarts threshold, states must be one of [CrashLoopBackOff Running]]");
  assert_policy_error(tmr_policy("{podRestartThreshold: 1, state: [Running]}", NULL),
                      "strict decoding error: unknown field \"state\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threshold_is_inclusive),
      cmocka_unit_test(test_init_container_restarts),
      cmocka_unit_test(test_terminal_pods_are_considered),
      cmocka_unit_test(test_most_restarts_first),
      cmocka_unit_test(test_states),
      cmocka_unit_test(test_namespaces_and_label_selector),
      cmocka_unit_test(test_validation_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
