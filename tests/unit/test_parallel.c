/* test_parallel.c - the work split over both cores gives what one pass gives: par_halves
 * itself, model_finish's linking of a model large enough to be split (util/par.h), and
 * LowNodeUtilization's per-node sums over enough nodes to be split. */
#include "support/fixtures.h"
#include "support/support.h"

#include "../../src/model/model.h"
#include "../../src/util/par.h"
#include "../../src/util/strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- par_halves ---------- */

typedef struct {
  unsigned char *seen; /* how often each index was visited */
  size_t calls;        /* parts run (atomically counted) */
  size_t first_hi;     /* where the part starting at 0 ended */
} visit;

static void mark(void *ctx, size_t lo, size_t hi) {
  visit *v = ctx;
  for (size_t i = lo; i < hi; i++)
    v->seen[i]++;
  if (lo == 0)
    v->first_hi = hi;
  __atomic_add_fetch(&v->calls, 1, __ATOMIC_RELAXED);
}

static void run_marks(size_t n, size_t split, size_t min_n, size_t want_calls, size_t want_first) {
  visit v = {calloc(n ? n : 1, 1), 0, SIZE_MAX};
  par_halves(n, split, min_n, mark, &v);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(v.seen[i], 1);
  assert_int_equal(v.calls, want_calls);
  assert_int_equal(v.first_hi, want_first);
  free(v.seen);
}

/* every index once; two parts from min_n on, split where asked (the middle for 0 or a split
 * out of range); below min_n one part on the caller */
static void test_par_halves_visits_each_index_once(void **state) {
  (void)state;
  run_marks(0, 0, 0, 1, 0);
  run_marks(1, 0, 0, 1, 1);
  run_marks(2, 0, 0, 2, 1);
  run_marks(1001, 0, 10, 2, 500);
  run_marks(1001, 7, 10, 2, 7);
  run_marks(1001, 5000, 10, 2, 500);
  run_marks(1001, 0, 1002, 1, 1001);
  run_marks(200000, 150000, 100, 2, 150000);
}

/* ---------- a model large enough to be linked on both cores ---------- */

enum { NODES = 300, LAUNCHERS = 80 }; /* node n001 holds 87 pods */

/* pods on node i: 50 + (37 i mod 101), about 30,000 in all (model_finish splits from 20,000) */
static int pods_on(int i) {
  return 50 + (37 * i) % 101;
}

/* Nodes n000..n299 of 200 cpu / 200 bytes / 200 pods, their pods listed round-robin over
 * the nodes (so no node's pods are together in the list, nor in name order), pods of 1 cpu
 * and 1 byte; the first LAUNCHERS pods of node n001 are VM launchers, every other one with
 * its VMI listed. */
static char *large_cluster(void) {
  strbuf sb = {0};
  sb_append(&sb, "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":[");
  for (int i = 0; i < NODES; i++)
    sb_printf(&sb,
              "%s{\"kind\":\"Node\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":\"n%03d\"},"
              "\"status\":{\"allocatable\":{\"cpu\":\"200\",\"memory\":\"200\","
              "\"pods\":\"200\"}}}",
              i ? "," : "", i);
  int most = 0;
  for (int i = 0; i < NODES; i++)
    most = pods_on(i) > most ? pods_on(i) : most;
  for (int k = most - 1; k >= 0; k--)
    for (int i = 0; i < NODES; i++) {
      if (k >= pods_on(i))
        continue;
      bool launcher = i == 1 && k < LAUNCHERS;
      char extra[256] = "";
      if (launcher)
        snprintf(extra, sizeof extra,
                 ",\"labels\":{\"kubevirt.io\":\"virt-launcher\"},"
                 "\"annotations\":{\"kubevirt.io/domain\":\"vm-%03d\"}",
                 k);
      sb_printf(&sb,
                ",{\"kind\":\"Pod\",\"apiVersion\":\"v1\",\"metadata\":{\"name\":"
                "\"p-%03d-n%03d\",\"namespace\":\"ns%d\",\"uid\":\"u-%d-%d\"%s,"
                "\"ownerReferences\":[{\"kind\":\"ReplicaSet\",\"name\":\"rs\","
                "\"uid\":\"uid-rs\"}]},\"spec\":{\"nodeName\":\"n%03d\",\"containers\":"
                "[{\"name\":\"c\",\"resources\":{\"requests\":{\"cpu\":\"1\","
                "\"memory\":\"1\"}}}]},\"status\":{\"phase\":\"Running\"}}",
                k, i, k % 3, i, k, extra, i);
    }
  for (int k = 0; k < LAUNCHERS; k += 2)
    sb_printf(&sb,
              ",{\"kind\":\"VirtualMachineInstance\",\"apiVersion\":\"kubevirt.io/v1\","
              "\"metadata\":{\"name\":\"vm-%03d\",\"namespace\":\"ns%d\",\"uid\":\"vu-%d\"},"
              "\"spec\":{},\"status\":{\"nodeName\":\"n001\",\"phase\":\"Running\"}}",
              k, k % 3, k);
  sb_append(&sb, "]}");
  return sb.buf;
}

static int cmp_name_ns(const pod *a, const pod *b) {
  int c = strcmp(a->name, b->name);
  return c ? c : strcmp(a->ns, b->ns);
}

/* each node holds exactly the pods that name it, sorted by name then namespace; each pod
 * points at its node; a launcher's VMI link is what the lookup by name finds */
static void test_model_finish_links_a_large_model(void **state) {
  (void)state;
  char *text = large_cluster();
  dserr err;
  model *m = load_model_text(text, &err);
  assert_non_null(m);
  assert_int_equal(m->nodes.n, NODES);
  assert_true(m->pods.n >= 20000);
  size_t *want = calloc(NODES, sizeof *want), linked = 0, launchers = 0, with_vmi = 0;
  for (size_t i = 0; i < m->pods.n; i++) {
    const pod *p = m->pods.items[i];
    assert_non_null(p->node);
    assert_string_equal(p->node->name, p->node_name);
    want[p->node->index]++;
    const vmi_obj *v = NULL;
    if (p->annotations & ANN_KUBEVIRT_DOMAIN) {
      launchers++;
      v = model_find_vmi(m, p->ns, pod_x(p)->kubevirt_domain);
      with_vmi += v != NULL;
    }
    assert_ptr_equal(model_pod_vmi(m, p), v);
  }
  assert_int_equal(launchers, LAUNCHERS);
  assert_int_equal(with_vmi, LAUNCHERS / 2);
  for (size_t i = 0; i < m->nodes.n; i++) {
    const node *n = m->nodes.items[i];
    assert_int_equal(n->npods, want[i]);
    assert_int_equal(n->npods, pods_on(atoi(n->name + 1)));
    for (size_t k = 0; k < n->npods; k++) {
      assert_ptr_equal(n->pods[k]->node, n);
      if (k)
        assert_true(cmp_name_ns(n->pods[k - 1], n->pods[k]) < 0);
    }
    linked += n->npods;
  }
  assert_int_equal(linked, m->pods.n);
  free(want);
  model_free(m);
  free(text);
}

/* LowNodeUtilization sums each of the 300 nodes' requests (split over both cores from 256
 * nodes): every node's logged usage is its own pods' */
static void test_node_utilization_sums_every_node(void **state) {
  (void)state;
  char *text = large_cluster();
  const char *pol = plugin_policy(.plugin = "LowNodeUtilization", .point = "balance",
                                  .args = "{thresholds: {cpu: 10, memory: 10, pods: 10}, "
                                          "targetThresholds: {cpu: 90, memory: 90, pods: 90}}");
  sim_run r = sim_run_ok(pol, text, 0);
  for (int i = 0; i < NODES; i++) {
    int k = pods_on(i);
    char pct[16], line[256];
    snprintf(pct, sizeof pct, k % 2 ? "%d.5" : "%d", k / 2);
    snprintf(line, sizeof line,
             "node=\"n%03d\" usage={\"cpu\":\"%d\",\"memory\":\"%d\",\"pods\":\"%d\"} "
             "usagePercentage={\"cpu\":%s,\"memory\":%s,\"pods\":%s}",
             i, k, k, k, pct, pct, pct);
    if (sim_log_count(&r, line) != 1)
      fail_msg("node n%03d: no line %s", i, line);
  }
  sim_run_free(&r);
  free(text);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_par_halves_visits_each_index_once),
      cmocka_unit_test(test_model_finish_links_a_large_model),
      cmocka_unit_test(test_node_utilization_sums_every_node),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
