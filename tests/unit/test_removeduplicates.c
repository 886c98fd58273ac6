/* test_removeduplicates.c - RemoveDuplicates: what makes a duplicate, the per-node ceiling from
 * cluster-wide occurrences and feasible nodes, excludeOwnerKinds, namespaces, eviction limits,
 * pods with several owners, and the validation text. */
#include "support/support.h"

#include <stdio.h>
#include <string.h>

static const char *policy_fmt = "apiVersion: descheduler/v1alpha2\n"
                                "kind: DeschedulerPolicy\n"
                                "%s"
                                "profiles:\n"
                                "- name: p\n"
                                "  pluginConfig:\n"
                                "  - name: DefaultEvictor\n"
                                "  - name: RemoveDuplicates\n"
                                "    args: %s\n"
                                "  plugins:\n"
                                "    balance:\n"
                                "      enabled: [RemoveDuplicates]\n";

static char policy_buf[4096];

/* top: top-level policy lines (limits) or NULL; args: the plugin args as a flow map */
static const char *rd_policy(const char *top, const char *args) {
  snprintf(policy_buf, sizeof policy_buf, policy_fmt, top ? top : "", args ? args : "{}");
  return policy_buf;
}

/* ---------- cluster builder ---------- */

static char cluster_buf[1 << 17];
static char *cluster_end;

static void cluster_begin(void) {
  cluster_end =
      cluster_buf + sprintf(cluster_buf, "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[");
}

/* meta / spec: extra members of the node's metadata and spec, or NULL */
static void add_node(const char *name, const char *meta, const char *spec) {
  cluster_end += sprintf(
      cluster_end,
      "%s{\"kind\":\"Node\",\"metadata\":{\"name\":\"%s\"%s%s},\"spec\":{%s},"
      "\"status\":{\"allocatable\":{\"cpu\":\"10\",\"memory\":\"10Gi\",\"pods\":\"100\"}}}",
      cluster_end[-1] == '[' ? "" : ",", name, meta ? "," : "", meta ? meta : "", spec ? spec : "");
}

#define RS(name) "{\"kind\":\"ReplicaSet\",\"name\":\"" name "\",\"uid\":\"uid-" name "\"}"
#define IMG1(i) "\"containers\":[{\"name\":\"c\",\"image\":\"" i "\"}]"
#define IMG2(i, j)                                                                                 \
  "\"containers\":[{\"name\":\"c\",\"image\":\"" i "\"},{\"name\":\"d\",\"image\":\"" j "\"}]"

/* owners: JSON array members; spec: containers and any other spec members */
static void add_pod(const char *name, const char *ns, const char *node, const char *owners,
                    const char *spec) {
  cluster_end +=
      sprintf(cluster_end,
              ",{\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"%s\",\"uid\":"
              "\"u-%s-%s\",\"ownerReferences\":[%s]},\"spec\":{\"nodeName\":\"%s\",%s},"
              "\"status\":{\"phase\":\"Running\"}}",
              name, ns, ns, name, owners, node, spec);
}

/* count pods of ReplicaSet `rs` (image "web") on node, named <prefix>1..<prefix>count */
static void add_copies(const char *prefix, const char *node, int count) {
  for (int i = 1; i <= count; i++) {
    char name[64];
    snprintf(name, sizeof name, "%s%d", prefix, i);
    add_pod(name, "ns", node, RS("web"), IMG1("web"));
  }
}

static const char *cluster_done(void) {
  sprintf(cluster_end, "]}");
  return cluster_buf;
}

/* plugins.md §4 example: 5 copies, 4 on n1 and 1 on n2, 3 feasible nodes: upperAvg =
 * ceil(5/3) = 2, so n1 keeps 2 and the last two duplicates (name order) go. */
static void test_spec_example(void **state) {
  (void)state;
  sim_run r;
  cluster_begin();
  add_node("n1", NULL, NULL);
  add_node("n2", NULL, NULL);
  add_node("n3", NULL, NULL);
  add_copies("a", "n1", 4);
  add_copies("b", "n2", 1);
  assert_int_equal(sim_run_strings(&r, rd_policy(NULL, NULL), cluster_done(), false, NULL, 3), 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/a3"));
  assert_true(sim_evicted(&r, "ns/a4"));
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
  sim_run r;
  cluster_begin();
  add_node("n1", NULL, NULL);
  add_node("n2", NULL, NULL);
  add_node("n3", NULL, NULL);
  add_copies("a", "n1", 3);
  add_copies("b", "n2", 3);
  assert_int_equal(sim_run_strings(&r, rd_policy(NULL, NULL), cluster_done(), false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/a3"));
  assert_true(sim_evicted(&r, "ns/b3"));
  sim_run_free(&r);
}

/* Same owner but different images, or different owners, are not duplicates; the order of a
 * pod's images does not matter. */
static void test_signature(void **state) {
  (void)state;
  sim_run r;
  cluster_begin();
  add_node("n1", NULL, NULL);
  add_node("n2", NULL, NULL);
  add_pod("img-a", "ns", "n1", RS("web"), IMG1("a"));
  add_pod("img-b", "ns", "n1", RS("web"), IMG1("b"));
  add_pod("other-rs", "ns", "n1", RS("api"), IMG1("a"));
  add_pod("other-ns", "ns2", "n1", RS("web"), IMG1("a"));
  assert_int_equal(sim_run_strings(&r, rd_policy(NULL, NULL), cluster_done(), false, NULL, 3), 0);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(sim_log_count(&r, "\"Duplicate found\""), 0);
  sim_run_free(&r);

  cluster_begin();
  add_node("n1", NULL, NULL);
  add_node("n2", NULL, NULL);
  add_pod("p1", "ns", "n1", RS("web"), IMG2("x", "y"));
  add_pod("p2", "ns", "n1", RS("web"), IMG2("y", "x"));
  add_pod("p3", "ns", "n1", RS("web"), IMG2("x", "y"));
  assert_int_equal(sim_run_strings(&r, rd_policy(NULL, NULL), cluster_done(), false, NULL, 3), 0);
  assert_int_equal(sim_log_count(&r, "\"Duplicate found\""), 2);
  /* 3 occurrences over 2 nodes: keep 2 */
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/p3"));
  sim_run_free(&r);
}

static void test_exclude_owner_kinds(void **state) {
  (void)state;
  sim_run r;
  cluster_begin();
  add_node("n1", NULL, NULL);
  add_node("n2", NULL, NULL);
  add_copies("a", "n1", 4);
  const char *cl = cluster_done();
  assert_int_equal(
      sim_run_strings(&r, rd_policy(NULL, "{excludeOwnerKinds: [ReplicaSet]}"), cl, false, NULL, 0),
      0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  assert_int_equal(
      sim_run_strings(&r, rd_policy(NULL, "{excludeOwnerKinds: [Job]}"), cl, false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 2);
  sim_run_free(&r);
}

static void test_namespaces(void **state) {
  (void)state;
  sim_run r;
  cluster_begin();
  add_node("n1", NULL, NULL);
  add_node("n2", NULL, NULL);
  add_copies("a", "n1", 4);
  const char *cl = cluster_done();
  assert_int_equal(
      sim_run_strings(&r, rd_policy(NULL, "{namespaces: {include: [other]}}"), cl, false, NULL, 0),
      0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  assert_int_equal(
      sim_run_strings(&r, rd_policy(NULL, "{namespaces: {exclude: [ns]}}"), cl, false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 0);
  sim_run_free(&r);
  assert_int_equal(
      sim_run_strings(&r, rd_policy(NULL, "{namespaces: {include: [ns]}}"), cl, false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 2);
  sim_run_free(&r);
}

/* Feasibility checks taints and node selection, not cordoning: a cordoned second node still
 * makes two feasible nodes, a tainted or non-matching one does not. */
static void test_feasible_nodes(void **state) {
  (void)state;
  sim_run r;
  cluster_begin();
  add_node("n1", NULL, NULL);
  add_node("n2", NULL, "\"unschedulable\":true");
  add_copies("a", "n1", 4);
  assert_int_equal(sim_run_strings(&r, rd_policy(NULL, NULL), cluster_done(), false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 2);
  sim_run_free(&r);

  cluster_begin();
  add_node("n1", NULL, NULL);
  add_node("n2", NULL, "\"taints\":[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"NoSchedule\"}]");
  add_copies("a", "n1", 4);
  assert_int_equal(sim_run_strings(&r, rd_policy(NULL, NULL), cluster_done(), false, NULL, 1), 0);
  assert_int_equal(r.res.nevictions, 0);
  assert_int_equal(
      sim_log_count(&r, "Less than two feasible nodes for duplicates to land, skipping eviction"),
      1);
  sim_run_free(&r);

  /* a PreferNoSchedule taint does not count */
  cluster_begin();
  add_node("n1", NULL, NULL);
  add_node("n2", NULL,
           "\"taints\":[{\"key\":\"k\",\"value\":\"v\",\"effect\":\"PreferNoSchedule\"}]");
  add_copies("a", "n1", 4);
  assert_int_equal(sim_run_strings(&r, rd_policy(NULL, NULL), cluster_done(), false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 2);
  sim_run_free(&r);

  /* nodeSelector: 2 of 3 nodes match, so 4 copies give ceil(4/2) = 2 per node */
  cluster_begin();
  add_node("n1", "\"labels\":{\"zone\":\"a\"}", NULL);
  add_node("n2", "\"labels\":{\"zone\":\"a\"}", NULL);
  add_node("n3", NULL, NULL);
  for (int i = 1; i <= 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "a%d", i);
    add_pod(name, "ns", "n1", RS("web"), IMG1("web") ",\"nodeSelector\":{\"zone\":\"a\"}");
  }
  assert_int_equal(sim_run_strings(&r, rd_policy(NULL, NULL), cluster_done(), false, NULL, 2), 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_int_equal(sim_log_count(&r, "from=3 to=2"), 1);
  sim_run_free(&r);
}

/* Only the duplicates' nodes count, and only for a duplicate that fits at least two nodes: the
 * original p1 (fits all 4) is left out, p2 fits only n1 and adds nothing, p3 adds n2 and n3.
 * 3 occurrences over 2 feasible nodes keep 2 on n1. */
static void test_feasible_nodes_from_duplicates_only(void **state) {
  (void)state;
  sim_run r;
  cluster_begin();
  add_node("n1", "\"labels\":{\"zone\":\"a\"}", NULL);
  add_node("n2", "\"labels\":{\"zone\":\"b\"}", NULL);
  add_node("n3", "\"labels\":{\"zone\":\"b\"}", NULL);
  add_node("n4", "\"labels\":{\"zone\":\"c\"}", NULL);
  add_pod("p1", "ns", "n1", RS("web"), IMG1("web"));
  add_pod("p2", "ns", "n1", RS("web"), IMG1("web") ",\"nodeSelector\":{\"zone\":\"a\"}");
  add_pod("p3", "ns", "n1", RS("web"), IMG1("web") ",\"nodeSelector\":{\"zone\":\"b\"}");
  assert_int_equal(sim_run_strings(&r, rd_policy(NULL, NULL), cluster_done(), false, NULL, 2), 0);
  assert_int_equal(sim_log_count(&r, "from=4 to=2"), 1);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/p3"));
  sim_run_free(&r);
}

/* A node limit stops that node for this key only; the total limit stops the plugin. */
static void test_eviction_limits(void **state) {
  (void)state;
  sim_run r;
  cluster_begin();
  add_node("n1", NULL, NULL);
  add_node("n2", NULL, NULL);
  add_node("n3", NULL, NULL);
  add_node("n4", NULL, NULL);
  add_copies("a", "n1", 4);
  add_copies("b", "n2", 4);
  const char *cl = cluster_done();
  /* 8 copies over 4 nodes: 2 per node, n1 and n2 would give up 2 each */
  assert_int_equal(sim_run_strings(&r, rd_policy(NULL, NULL), cl, false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 4);
  sim_run_free(&r);
  assert_int_equal(
      sim_run_strings(&r, rd_policy("maxNoOfPodsToEvictPerNode: 1\n", NULL), cl, false, NULL, 0),
      0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/a3"));
  assert_true(sim_evicted(&r, "ns/b3"));
  sim_run_free(&r);
  assert_int_equal(
      sim_run_strings(&r, rd_policy("maxNoOfPodsToEvictTotal: 1\n", NULL), cl, false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 1);
  assert_true(sim_evicted(&r, "ns/a3"));
  assert_int_equal(
      sim_log_count(&r, "maximum number of evicted pods per a descheduling cycle reached"), 1);
  sim_run_free(&r);
}

/* A pod with two owners is a duplicate under both keys and is requested twice; the second
 * request fails because the pod is already gone. */
static void test_pod_with_two_owners(void **state) {
  (void)state;
  sim_run r;
  cluster_begin();
  add_node("n1", NULL, NULL);
  add_node("n2", NULL, NULL);
  for (int i = 1; i <= 4; i++) {
    char name[16];
    snprintf(name, sizeof name, "a%d", i);
    add_pod(name, "ns", "n1", RS("web") "," RS("web2"), IMG1("web"));
  }
  assert_int_equal(sim_run_strings(&r, rd_policy(NULL, NULL), cluster_done(), false, NULL, 0), 0);
  assert_int_equal(r.res.nevictions, 2);
  assert_true(sim_evicted(&r, "ns/a3"));
  assert_true(sim_evicted(&r, "ns/a4"));
  assert_int_equal(sim_log_count(&r, "\"eviction failed\""), 2);
  sim_run_free(&r);
}

/* Pods the evictor rejects are neither counted nor evicted: with nodeFit and a second node
 * that is cordoned, no pod passes PreEvictionFilter. */
static void test_evictor_filters_apply_while_counting(void **state) {
  (void)state;
  sim_run r;
  cluster_begin();
  add_node("n1", NULL, NULL);
  add_node("n2", NULL, "\"unschedulable\":true");
  add_copies("a", "n1", 4);
  const char *pol =
      "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles:\n- name: p\n"
      "  pluginConfig:\n  - name: DefaultEvictor\n    args: {nodeFit: true}\n"
      "  - name: RemoveDuplicates\n  plugins:\n    balance:\n      enabled: [RemoveDuplicates]\n";
  assert_int_equal(sim_run_strings(&r, pol, cluster_done(), false, NULL, 3), 0);
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
