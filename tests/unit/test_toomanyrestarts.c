/* test_toomanyrestarts.c - RemovePodsHavingTooManyRestarts: the threshold, init containers,
 * states, most-restarts-first order, limits and validation texts (toomanyrestarts.go). */
#include "support/fixtures.h"
#include "support/support.h"

#include <string.h>

/* ---- inputs ---- */

static const char *tmr_policy(const char *args, const char *top) {
  return plugin_policy(.plugin = "RemovePodsHavingTooManyRestarts", .args = args, .top = top);
}

#define RUNNING "{\"running\":{}}"
#define WAITING(why) "{\"waiting\":{\"reason\":\"" why "\"}}"
#define TERMINATED "{\"terminated\":{\"exitCode\":0}}"

/* Starts a list with two plain nodes, a and b. */
static void two_nodes(void) {
  cluster_begin();
  cluster_node("a");
  cluster_node("b");
}

static sim_run run(const char *args, const char *top, int v) {
  return sim_run_ok(tmr_policy(args, top), cluster_end(), v);
}

/* ---- threshold ---- */

/* The threshold is inclusive: exactly podRestartThreshold restarts is enough. */
static void test_threshold_is_inclusive(void **state) {
  (void)state;
  two_nodes();
  cluster_pod("p2", "a", .restarts = 2, .state = RUNNING);
  cluster_pod("p3", "a", .restarts = 3, .state = RUNNING);
  cluster_pod("p5", "b", .restarts = 5, .state = RUNNING);
  sim_run r = run("{podRestartThreshold: 3}", NULL, 4);
  assert_evictions(&r, "ns/p3", "ns/p5");
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
  two_nodes();
  cluster_pod("p", "a", .restarts = 1, .state = RUNNING, .init_restarts = 2,
              .init_state = TERMINATED);
  sim_run r = run("{podRestartThreshold: 3}", NULL, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  r = run("{podRestartThreshold: 3, includingInitContainers: true}", NULL, 0);
  assert_evictions(&r, "ns/p");
  sim_run_free(&r);
}

/* Every pod of the node is considered, whatever its phase. */
static void test_terminal_pods_are_considered(void **state) {
  (void)state;
  two_nodes();
  cluster_pod("failed", "a", .phase = "Failed", .restarts = 4, .state = RUNNING);
  cluster_pod("succeeded", "b", .phase = "Succeeded", .restarts = 4, .state = RUNNING);
  sim_run r = run("{podRestartThreshold: 4}", NULL, 0);
  assert_evictions(&r, "ns/failed", "ns/succeeded");
  sim_run_free(&r);
}

/* ---- order and limits ---- */

/* Most restarts first on each node, so a node limit keeps the worst offender's eviction. */
static void test_most_restarts_first(void **state) {
  (void)state;
  two_nodes();
  cluster_pod("few", "a", .restarts = 3, .state = RUNNING);
  cluster_pod("many", "a", .restarts = 9, .state = RUNNING);
  cluster_pod("mid", "a", .restarts = 5, .state = RUNNING);
  cluster_pod("tie-x", "b", .restarts = 4, .state = RUNNING);
  cluster_pod("tie-y", "b", .restarts = 4, .state = RUNNING);
  sim_run r = run("{podRestartThreshold: 1}", NULL, 0);
  assert_int_equal(r.res.nevictions, 5);
  const char *order[] = {"many", "mid", "few", "tie-x", "tie-y"};
  for (int i = 0; i < 5; i++)
    assert_string_equal(r.res.evictions[i].pod->name, order[i]);
  sim_run_free(&r);

  r = run("{podRestartThreshold: 1}", "maxNoOfPodsToEvictPerNode: 1\n", 0);
  assert_evictions(&r, "ns/many", "ns/tie-x");
  sim_run_free(&r);

  r = run("{podRestartThreshold: 1}", "maxNoOfPodsToEvictTotal: 2\n", 0);
  assert_evictions(&r, "ns/many", "ns/mid");
  sim_run_free(&r);
}

/* ---- states ---- */

static void test_states(void **state) {
  (void)state;
  two_nodes();
  cluster_pod("crashing", "a", .restarts = 5, .state = WAITING("CrashLoopBackOff"));
  cluster_pod("running", "a", .restarts = 5, .state = RUNNING);
  cluster_pod("pending", "b", .phase = "Pending", .restarts = 5,
              .state = WAITING("ContainerCreating"));
  cluster_pod("init-crashing", "b", .phase = "Pending", .restarts = 5, .state = RUNNING,
              .init_state = WAITING("CrashLoopBackOff"));
  sim_run r = run("{podRestartThreshold: 5, states: [CrashLoopBackOff]}", NULL, 0);
  assert_evictions(&r, "ns/crashing");
  sim_run_free(&r);

  /* with init containers, an init container's waiting reason counts too */
  r = run("{podRestartThreshold: 5, states: [CrashLoopBackOff], includingInitContainers: true}",
          NULL, 0);
  assert_evictions(&r, "ns/crashing", "ns/init-crashing");
  sim_run_free(&r);

  /* Running is the pod phase: the crash-looping pod is Running too */
  r = run("{podRestartThreshold: 5, states: [Running]}", NULL, 0);
  assert_evictions(&r, "ns/crashing", "ns/running");
  sim_run_free(&r);
}

static void test_namespaces_and_label_selector(void **state) {
  (void)state;
  two_nodes();
  cluster_pod("p1", "a", .labels = "app=p1", .restarts = 5, .state = RUNNING);
  cluster_pod("p2", "a", .ns = "other", .labels = "app=p2", .restarts = 5, .state = RUNNING);
  sim_run r = run("{podRestartThreshold: 1, namespaces: {exclude: [ns]}}", NULL, 0);
  assert_evictions(&r, "other/p2");
  sim_run_free(&r);
  r = run("{podRestartThreshold: 1, labelSelector: {matchLabels: {app: p1}}}", NULL, 0);
  assert_evictions(&r, "ns/p1");
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
