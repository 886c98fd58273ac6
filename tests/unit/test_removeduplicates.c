/* test_removeduplicates.c - RemoveDuplicates: what makes a duplicate, the per-node ceiling from
 * cluster-wide occurrences and feasible nodes, excludeOwnerKinds, namespaces, eviction limits,
 * pods with several owners, and the validation text. */
#include "support/fixtures.h"
#include "support/support.h"

#include <stdio.h>
#include <string.h>

/* top: top-level policy lines (limits) or NULL; args: the plugin args as a flow map */
static const char *rd_policy(const char *top, const char *args) {
  return plugin_policy(.plugin = "RemoveDuplicates", .point = "balance", .args = args ? args : "{}",
                       .top = top);
}

/* two containers, c and d */
#define IMG2(i, j) "[{\"name\":\"c\",\"image\":\"" i "\"},{\"name\":\"d\",\"image\":\"" j "\"}]"

/* count pods of ReplicaSet `web` (image "web") on node, named <prefix>1..<prefix>count */
static void add_copies(const char *prefix, const char *node, int count) {
  for (int i = 1; i <= count; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s%d", prefix, i);
    cluster_pod(name, node, .owner = "ReplicaSet/web", .image = "web");
  }
}

/* two nodes, four copies on n1: with an average of 2 per node, two of them go */
static const char *four_copies_on_n1(void) {
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2");
  add_copies("a", "n1", 4);
  return cluster_end();
}

/* docs/behaviour.md's example: 5 copies, 4 on n1 and 1 on n2, 3 feasible nodes: upperAvg =
 * ceil(5/3) = 2, so n1 keeps 2 and the last two duplicates (name order) go. */
static void test_spec_example(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_node("n3");
  add_copies("a", "n1", 4);
  add_copies("b", "n2", 1);
  sim_run r = sim_run_ok(rd_policy(NULL, NULL), cluster_end(), 3);
  assert_evictions(&r, "ns/a3", "ns/a4");
  assert_int_equal(sim_log_count(&r, "\"Duplicate found\""), 3);
  assert_int_equal(sim_log_count(&r,
                                 "\"Adjusting feasible nodes\" plugin=\"RemoveDuplicates\" "
                                 "ExtensionPoint=\"Balance\" owner=\"{namespace:ns kind:ReplicaSet "
                                 "name:web imagesHash:web}\" from=3 to=3"),
                   1);
  assert_int_equal(sim_log_count(&r, "\"Average occurrence per node\""), 1);
  assert_int_equal(sim_log_count(&r, "avg=2"), 1);
  sim_run_free(&r);
}

/* The average uses the key's pods on every node: 3 + 3 copies over 3 nodes gives 2 per node,
 * so each loaded node gives up one pod although the third node holds none. */
static void test_average_uses_cluster_wide_occurrences(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_node("n3");
  add_copies("a", "n1", 3);
  add_copies("b", "n2", 3);
  sim_run r = sim_run_ok(rd_policy(NULL, NULL), cluster_end(), 0);
  assert_evictions(&r, "ns/a3", "ns/b3");
  sim_run_free(&r);
}

/* Same owner but different images, or different owners, are not duplicates; the order of a
 * pod's images does not matter. */
static void test_signature(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_pod("img-a", "n1", .owner = "ReplicaSet/web", .image = "a");
  cluster_pod("img-b", "n1", .owner = "ReplicaSet/web", .image = "b");
  cluster_pod("other-rs", "n1", .owner = "ReplicaSet/api", .image = "a");
  cluster_pod("other-ns", "n1", .ns = "ns2", .owner = "ReplicaSet/web", .image = "a");
  sim_run r = sim_run_ok(rd_policy(NULL, NULL), cluster_end(), 3);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "\"Duplicate found\""), 0);
  sim_run_free(&r);

  cluster_begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_pod("p1", "n1", .owner = "ReplicaSet/web", .containers = IMG2("x", "y"));
  cluster_pod("p2", "n1", .owner = "ReplicaSet/web", .containers = IMG2("y", "x"));
  cluster_pod("p3", "n1", .owner = "ReplicaSet/web", .containers = IMG2("x", "y"));
  r = sim_run_ok(rd_policy(NULL, NULL), cluster_end(), 3);
  assert_int_equal(sim_log_count(&r, "\"Duplicate found\""), 2);
  /* 3 occurrences over 2 nodes: keep 2 */
  assert_evictions(&r, "ns/p3");
  sim_run_free(&r);
}

static void test_exclude_owner_kinds(void **state) {
  (void)state;
  const char *cl = four_copies_on_n1();
  sim_run r = sim_run_ok(rd_policy(NULL, "{excludeOwnerKinds: [ReplicaSet]}"), cl, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  r = sim_run_ok(rd_policy(NULL, "{excludeOwnerKinds: [Job]}"), cl, 0);
  assert_int_equal(r.res.nevictions, 2);
  sim_run_free(&r);
}

static void test_namespaces(void **state) {
  (void)state;
  const char *cl = four_copies_on_n1();
  sim_run r = sim_run_ok(rd_policy(NULL, "{namespaces: {include: [other]}}"), cl, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  r = sim_run_ok(rd_policy(NULL, "{namespaces: {exclude: [ns]}}"), cl, 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  r = sim_run_ok(rd_policy(NULL, "{namespaces: {include: [ns]}}"), cl, 0);
  assert_int_equal(r.res.nevictions, 2);
  sim_run_free(&r);
}

/* Feasibility checks taints and node selection, not cordoning: a cordoned second node still
 * makes two feasible nodes, a tainted or non-matching one does not. */
static void test_feasible_nodes(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2", .unschedulable = true);
  add_copies("a", "n1", 4);
  sim_run r = sim_run_ok(rd_policy(NULL, NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 2);
  sim_run_free(&r);

  cluster_begin();
  cluster_node("n1");
  cluster_node("n2", .taints = "k=v:NoSchedule");
  add_copies("a", "n1", 4);
  r = sim_run_ok(rd_policy(NULL, NULL), cluster_end(), 1);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(
      sim_log_count(&r, "Less than two feasible nodes for duplicates to land, skipping eviction"),
      1);
  sim_run_free(&r);

  /* a PreferNoSchedule taint does not count */
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2", .taints = "k=v:PreferNoSchedule");
  add_copies("a", "n1", 4);
  r = sim_run_ok(rd_policy(NULL, NULL), cluster_end(), 0);
  assert_int_equal(r.res.nevictions, 2);
  sim_run_free(&r);

  /* nodeSelector: 2 of 3 nodes match, so 4 copies give ceil(4/2) = 2 per node */
  cluster_begin();
  cluster_node("n1", .labels = "zone=a");
  cluster_node("n2", .labels = "zone=a");
  cluster_node("n3");
  for (int i = 1; i <= 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "a%d", i);
    cluster_pod(name, "n1", .owner = "ReplicaSet/web", .image = "web", .node_selector = "zone=a");
  }
  r = sim_run_ok(rd_policy(NULL, NULL), cluster_end(), 2);
  assert_int_equal(r.res.nevictions, 2);
  assert_int_equal(sim_log_count(&r, "from=3 to=2"), 1);
  sim_run_free(&r);
}

/* Only the duplicates' nodes count, and only for a duplicate that fits at least two nodes: the
 * original p1 (fits all 4) is left out, p2 fits only n1 and adds nothing, p3 adds n2 and n3.
 * 3 occurrences over 2 feasible nodes keep 2 on n1. */
static void test_feasible_nodes_from_duplicates_only(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("n1", .labels = "zone=a");
  cluster_node("n2", .labels = "zone=b");
  cluster_node("n3", .labels = "zone=b");
  cluster_node("n4", .labels = "zone=c");
  cluster_pod("p1", "n1", .owner = "ReplicaSet/web", .image = "web");
  cluster_pod("p2", "n1", .owner = "ReplicaSet/web", .image = "web", .node_selector = "zone=a");
  cluster_pod("p3", "n1", .owner = "ReplicaSet/web", .image = "web", .node_selector = "zone=b");
  sim_run r = sim_run_ok(rd_policy(NULL, NULL), cluster_end(), 2);
  assert_int_equal(sim_log_count(&r, "from=4 to=2"), 1);
  assert_evictions(&r, "ns/p3");
  sim_run_free(&r);
}

/* A node limit stops that node for this key only; the total limit stops the plugin. */
static void test_eviction_limits(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2");
  cluster_node("n3");
  cluster_node("n4");
  add_copies("a", "n1", 4);
  add_copies("b", "n2", 4);
  const char *cl = cluster_end();
  /* 8 copies over 4 nodes: 2 per node, n1 and n2 would give up 2 each */
  sim_run r = sim_run_ok(rd_policy(NULL, NULL), cl, 0);
  assert_int_equal(r.res.nevictions, 4);
  sim_run_free(&r);
  r = sim_run_ok(rd_policy("maxNoOfPodsToEvictPerNode: 1\n", NULL), cl, 0);
  assert_evictions(&r, "ns/a3", "ns/b3");
  sim_run_free(&r);
  r = sim_run_ok(rd_policy("maxNoOfPodsToEvictTotal: 1\n", NULL), cl, 0);
  assert_evictions(&r, "ns/a3");
  assert_int_equal(
      sim_log_count(&r, "maximum number of evicted pods per a descheduling cycle reached"), 1);
  sim_run_free(&r);
}

/* A pod with two owners is a duplicate under both keys and is requested twice; the second
 * request fails because the pod is already gone. */
static void test_pod_with_two_owners(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2");
  for (int i = 1; i <= 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "a%d", i);
    cluster_pod(name, "n1", .owner = "ReplicaSet/web,ReplicaSet/web2", .image = "web");
  }
  sim_run r = sim_run_ok(rd_policy(NULL, NULL), cluster_end(), 0);
  assert_evictions(&r, "ns/a3", "ns/a4");
  assert_int_equal(sim_log_count(&r, "\"eviction failed\""), 2);
  assert_int_equal(sim_log_count(&r, "unable to delete pod ns/a3: pods \\\"a3\\\" not found"), 1);
  sim_run_free(&r);
}

/* Pods the evictor rejects are neither counted nor evicted: with nodeFit and a second node
 * that is cordoned, no pod passes PreEvictionFilter. */
static void test_evictor_filters_apply_while_counting(void **state) {
  (void)state;
  cluster_begin();
  cluster_node("n1");
  cluster_node("n2", .unschedulable = true);
  add_copies("a", "n1", 4);
  const char *pol = plugin_policy(.plugin = "RemoveDuplicates", .point = "balance",
                                  .evictor_args = "{nodeFit: true}");
  sim_run r = sim_run_ok(pol, cluster_end(), 3);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "\"Duplicate found\""), 0);
  sim_run_free(&r);
}

static void test_validation_messages(void **state) {
  (void)state;
  assert_policy_error(rd_policy(NULL, "{namespaces: {include: [a], exclude: [b]}}"),
                      "in profile p: only one of Include/Exclude namespaces can be set");
  assert_policy_error(rd_policy(NULL, "{excludeOwnerKind: [Job]}"),
                      "strict decoding error: unknown field \"excludeOwnerKind\"");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spec_example),
      cmocka_unit_test(test_average_uses_cluster_wide_occurrences),
      cmocka_unit_test(test_signature),
      cmocka_unit_test(test_exclude_owner_kinds),
      cmocka_unit_test(test_namespaces),
      cmocka_unit_test(test_feasible_nodes),
      cmocka_unit_test(test_feasible_nodes_from_duplicates_only),
      cmocka_unit_test(test_eviction_limits),
      cmocka_unit_test(test_pod_with_two_owners),
      cmocka_unit_test(test_evictor_filters_apply_while_counting),
      cmocka_unit_test(test_validation_messages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
