/* test_decode.c - snapshots the decoder must refuse with a message that names the object and
 * the field, never with a crash or undefined behaviour. Each case is a file in
 * tests/data/unit/decode/ and the text its message must contain; most come from the fuzz
 * targets (tests/fuzz/fuzz_decode.c, fuzz_cycle.c). */
#include "support/support.h"

#include "../../src/decode/decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include "../../src/util/intern.h"

#define DATA DS_TEST_DATA "/unit/decode/"

static char *read_file(const char *name) {
  char path[512];
  snprintf(path, sizeof path, DATA "%s", name);
  FILE *f = fopen(path, "rb");
  if (!f)
    fail_msg("cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
    fail_msg("cannot read %s", path);
  buf[n] = 0;
  fclose(f);
  return buf;
}

static void assert_refused(const char *file, const char *expect) {
  char *text = read_file(file);
  dserr err;
  err.msg[0] = 0;
  model *m = load_model_text(text, &err);
  if (m)
    fail_msg("%s was accepted", file);
  if (!strstr(err.msg, expect))
    fail_msg("%s: message does not contain \"%s\": %s", file, expect, err.msg);
  free(text);
}

/* a bare number as a quantity was multiplied by 1000 without a check (signed overflow) */
static void test_bare_number_too_large(void **state) {
  (void)state;
  assert_refused("bare-number-too-large.json",
                 "items[0] (Node n1): status.allocatable.memory: invalid quantity "
                 "\"99999999999999999\": too large");
}

/* Live mode's pages: an object that does not decode is reported and left out, the others
 * are kept; a KubeVirt CR that fails half-way leaves no trace. A broken page still fails. */
typedef struct {
  int n;
  char seen[4][256];
} skips;

static void record_skip(void *ctx, const char *kind, const char *object, const char *why) {
  skips *s = ctx;
  if (s->n < 4)
    snprintf(s->seen[s->n], sizeof s->seen[0], "%s %s: %s", kind, object, why);
  s->n++;
}

static void test_page_skips_bad_objects(void **state) {
  (void)state;
  const char *page =
      "{\"kind\":\"List\",\"metadata\":{\"continue\":\"next\"},\"items\":["
      "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}},"
      "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"bad\",\"namespace\":\"ns\"},"
      "\"spec\":{\"priority\":\"high\"}},"
      "{\"kind\":\"KubeVirt\",\"metadata\":{\"name\":\"kv\",\"namespace\":\"kubevirt\"},"
      "\"spec\":{\"configuration\":{\"evictionStrategy\":\"LiveMigrate\",\"migrations\":{"
      "\"parallelMigrationsPerCluster\":\"five\"}}}},"
      "7,"
      "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"good\",\"namespace\":\"ns\"},"
      "\"spec\":{\"nodeName\":\"n1\"}}]}";
  model *m = model_new();
  skips s = {0};
  char *next = NULL;
  size_t count = 0;
  dserr err;
  assert_int_equal(decode_list_page_skipping(m, "page", page, strlen(page), NULL, record_skip, &s,
                                             &next, &count, &err),
                   0);
  assert_int_equal(count, 5);
  assert_string_equal(next, "next");
  free(next);
  assert_int_equal(s.n, 3);
  assert_string_equal(s.seen[0], "Pod ns/bad: spec.priority: expected an integer, got a string");
  assert_string_equal(s.seen[1], "KubeVirt kubevirt/kv: "
                                 "spec.configuration.migrations.parallelMigrationsPerCluster: "
                                 "expected an integer, got a string");
  assert_string_equal(s.seen[2],
                      "object items[3]: expected a Kubernetes object (a map), got an integer");
  assert_int_equal(m->nodes.n, 1);
  assert_int_equal(m->pods.n, 1);
  assert_string_equal(m->pods.items[0]->name, "good");
  assert_false(m->kubevirt.present);
  assert_null(m->kubevirt.name);
  /* what VMSafety needs to know: the cluster has a KubeVirt CR it could not read */
  assert_string_equal(m->kubevirt_unreadable,
                      "spec.configuration.migrations.parallelMigrationsPerCluster: expected an "
                      "integer, got a string");
  /* the same page without a skip function fails at the first bad object */
  model *strict = model_new();
  assert_int_equal(decode_list_page(strict, "page", page, strlen(page), NULL, &next, &count, &err),
                   -1);
  assert_non_null(strstr(err.msg, "items[1] (Pod ns/bad): spec.priority"));
  model_free(strict);
  /* a page that is not well-formed JSON fails either way */
  assert_int_equal(decode_list_page_skipping(m, "page", page, strlen(page) - 3, NULL, record_skip,
                                             &s, &next, &count, &err),
                   -1);
  model_free(m);
}

/* The resource names every cycle looks up are the model's seeded copies (model.h, RES_CPU):
 * a decoded "cpu" is RES_CPU itself, found by pointer, also through a second thread's front of
 * the table; a name spelled otherwise is not taken for one. */
static void test_resource_names_by_pointer(void **state) {
  (void)state;
  const char *page =
      "{\"kind\":\"List\",\"items\":["
      "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"},\"status\":{\"allocatable\":"
      "{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}},"
      "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\"},\"spec\":"
      "{\"nodeName\":\"n1\",\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":"
      "{\"requests\":{\"cpu\":\"250m\",\"memory\":\"1Gi\",\"cpus\":\"1\"}}}]}}]}";
  model *m = model_new();
  char *next = NULL;
  size_t count = 0;
  dserr err;
  assert_int_equal(decode_list_page(m, "page", page, strlen(page), NULL, &next, &count, &err), 0);
  assert_int_equal(m->pods.n, 1);
  const res_list *req = &m->pods.items[0]->requests;
  int seen = 0;
  for (size_t i = 0; i < req->n; i++) {
    if (strcmp(req->items[i].name, "cpu") == 0) {
      assert_ptr_equal(req->items[i].name, RES_CPU);
      seen++;
    } else if (strcmp(req->items[i].name, "memory") == 0) {
      assert_ptr_equal(req->items[i].name, RES_MEMORY);
      seen++;
    } else {
      assert_string_equal(req->items[i].name, "cpus");
      assert_ptr_not_equal(req->items[i].name, RES_CPU);
    }
  }
  assert_int_equal(seen, 2);
  bool found;
  assert_int_equal(res_get(req, RES_CPU, &found), 250);
  assert_true(found);
  assert_int_equal(res_get(&m->nodes.items[0]->allocatable, RES_PODS, &found), 110000);
  assert_true(found);
  /* a front of the table, as a second decoding thread uses, hands out the same copies */
  intern_table *front = intern_new_front(m->strings);
  assert_ptr_equal(intern(front, "memory"), RES_MEMORY);
  assert_ptr_equal(intern(front, "pods"), RES_PODS);
  intern_free(front);
  /* the policy's spelling of a name becomes the model's copy */
  char policy_name[] = "cpu";
  assert_ptr_equal(res_name(policy_name), RES_CPU);
  assert_ptr_equal(res_name("gpu"), res_name("gpu"));
  assert_string_equal(res_name("gpu"), "gpu");
  model_free(m);
}

/* ---------- a large snapshot decoded by two threads ---------- */

/* A list of nodes, pods (with managedFields and conditions: lists of maps inside items, where a
 * guessed start may fall) and VMIs; `extra` is put in as the item before the last pod. */
static char *write_cluster(int pods, const char *extra) {
  static char path[64];
  snprintf(path, sizeof path, "/tmp/test_decode_split_XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  FILE *f = fdopen(fd, "w");
  assert_non_null(f);
  fprintf(f, "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[");
  for (int n = 0; n < 10; n++)
    fprintf(f, "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"node-%d\"},"
               "\"status\":{\"allocatable\":{\"cpu\":\"8\",\"memory\":\"32Gi\",\"pods\":\"110\"}}},",
            n);
  for (int i = 0; i < pods; i++) {
    if (i == pods - 1 && extra)
      fprintf(f, "%s,", extra);
    fprintf(f,
            "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"app-%d\","
            "\"namespace\":\"ns-%d\",\"uid\":\"uid-%d\",\"labels\":{\"app\":\"app-%d\"},"
            "\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
            "\"name\":\"rs-%d\",\"uid\":\"rs-uid-%d\",\"controller\":true}],"
            "\"managedFields\":[{\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\","
            "\"fieldsV1\":{\"f:metadata\":{}},\"manager\":\"kube-controller-manager\"},"
            "{\"apiVersion\":\"v1\",\"fieldsType\":\"FieldsV1\",\"fieldsV1\":{\"f:status\":{}},"
            "\"manager\":\"kubelet\"}]},"
            "\"spec\":{\"nodeName\":\"node-%d\",\"containers\":[{\"name\":\"c\",\"image\":\"img-%d\","
            "\"resources\":{\"requests\":{\"cpu\":\"%dm\",\"memory\":\"%dMi\"}}}]},"
            "\"status\":{\"phase\":\"Running\",\"conditions\":[{\"type\":\"Ready\",\"status\":"
            "\"True\",\"lastTransitionTime\":\"2026-11-01T00:00:00Z\"},{\"type\":"
            "\"PodScheduled\",\"status\":\"True\",\"lastTransitionTime\":\"2026-11-01T00:00:00Z\"}]}}",
            i, i % 3, i, i % 40, i % 40, i % 40, i % 10, i % 5, 100 + i % 7, 64 + i % 9);
    fprintf(f, i + 1 < pods ? ",\n" : "");
  }
  for (int v = 0; v < 20; v++)
    fprintf(f, ",{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"VirtualMachineInstance\","
               "\"metadata\":{\"name\":\"vm-%d\",\"namespace\":\"ns-0\",\"uid\":\"vmi-%d\"},"
               "\"spec\":{\"evictionStrategy\":\"LiveMigrate\"},\"status\":{\"phase\":\"Running\","
               "\"nodeName\":\"node-%d\"}}",
            v, v, v % 10);
  fprintf(f, "],\"metadata\":{\"resourceVersion\":\"1\"}}\n");
  fclose(f);
  return path;
}

/* Decodes path on one thread and on two; both must give the same model, or the same error. */
static void assert_split_same(const char *path, bool expect_worker, const char *expect_error) {
  dserr e1, e2;
  e1.msg[0] = e2.msg[0] = 0;
  size_t by_one = 0, by_two = 0;
  model *one = model_new(), *two = model_new();
  int rc1 = decode_snapshot_file_split(one, path, UINT64_MAX, &by_one, &e1);
  int rc2 = decode_snapshot_file_split(two, path, 0, &by_two, &e2);
  assert_int_equal(by_one, 0);
  assert_int_equal(rc1, rc2);
  if (expect_worker)
    assert_true(by_two > 0);
  else
    assert_int_equal(by_two, 0);
  if (rc1 < 0) {
    assert_string_equal(e1.msg, e2.msg);
    assert_non_null(strstr(e1.msg, expect_error));
  } else {
    assert_int_equal(model_finish(one, &e1), 0);
    assert_int_equal(model_finish(two, &e2), 0);
    assert_int_equal(one->nodes.n, two->nodes.n);
    assert_int_equal(one->pods.n, two->pods.n);
    assert_int_equal(one->vmis.n, two->vmis.n);
    assert_int_equal(one->namespaces.n, two->namespaces.n);
    assert_int_equal(one->kubevirt.present, two->kubevirt.present);
    for (size_t i = 0; i < one->pods.n; i++) {
      const pod *a = one->pods.items[i], *b = two->pods.items[i];
      assert_string_equal(a->name, b->name);
      assert_string_equal(a->ns, b->ns);
      assert_string_equal(a->uid, b->uid);
      assert_int_equal(a->requests.n, b->requests.n);
      for (size_t r = 0; r < a->requests.n; r++)
        assert_int_equal(a->requests.items[r].milli, b->requests.items[r].milli);
      assert_int_equal(a->nconditions, b->nconditions);
      /* interned strings are the model's own, whichever thread decoded the pod */
      assert_ptr_equal(b->ns, intern(two->strings, b->ns));
      assert_ptr_equal(b->node_name, intern(two->strings, b->node_name));
      assert_non_null(b->node);
      assert_ptr_equal(b->node_name, b->node->name);
    }
  }
  model_free(one);
  model_free(two);
}

static void test_split_decode_same_model(void **state) {
  (void)state;
  char *path = write_cluster(2000, NULL);
  assert_split_same(path, true, NULL);
  unlink(path);
}

/* What the worker does not take, or cannot read, the calling thread reads, as one thread. */
static void test_split_decode_falls_back(void **state) {
  (void)state;
  const struct {
    const char *extra, *error;
  } cases[] = {
      /* an object that does not decode: the same message, the same item number */
      {"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"bad\",\"namespace\":\"ns-0\"},"
       "\"spec\":{\"priority\":\"high\"}}",
       "items[2009] (Pod ns-0/bad): spec.priority"},
      /* a KubeVirt CR is written in place: left to the calling thread */
      {"{\"apiVersion\":\"kubevirt.io/v1\",\"kind\":\"KubeVirt\",\"metadata\":{\"name\":"
       "\"kubevirt\",\"namespace\":\"kubevirt\"},\"spec\":{}}",
       NULL},
      /* a kind the model skips (logged): the same */
      {"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}", NULL},
      /* JSON the fast reader leaves to yajl (a \u0000 escape) */
      {"{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"odd\",\"annotations\":{\"a\":\"\\u0000\"}}}",
       NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *path = write_cluster(2000, cases[i].extra);
    assert_split_same(path, false, cases[i].error);
    unlink(path);
  }
}

/* model_finish refuses two pods of one namespace and name, wherever they are in the list,
 * and only those: the same name in another namespace, or a name one longer, is another pod. */
static void test_duplicate_pod_refused(void **state) {
  (void)state;
  const struct {
    const char *extra, *error;
  } cases[] = {
      {"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"app-1999\",\"namespace\":\"ns-1\"}}",
       "pod \"ns-1/app-1999\" appears more than once"},
      {"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"app-0\",\"namespace\":\"ns-0\"}}",
       "pod \"ns-0/app-0\" appears more than once"},
      {"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"app-1999\",\"namespace\":\"ns-0\"}}", NULL},
      {"{\"kind\":\"Pod\",\"metadata\":{\"name\":\"app-19990\",\"namespace\":\"ns-1\"}}", NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *path = write_cluster(2000, cases[i].extra);
    dserr err;
    err.msg[0] = 0;
    size_t by_worker = 0;
    model *m = model_new();
    assert_int_equal(decode_snapshot_file_split(m, path, UINT64_MAX, &by_worker, &err), 0);
    assert_int_equal(m->pods.n, 2001);
    int rc = model_finish(m, &err);
    if (cases[i].error) {
      assert_int_equal(rc, -1);
      if (!strstr(err.msg, cases[i].error))
        fail_msg("case %zu: \"%s\" does not contain \"%s\"", i, err.msg, cases[i].error);
    } else {
      assert_int_equal(rc, 0);
    }
    model_free(m);
    unlink(path);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bare_number_too_large),
      cmocka_unit_test(test_page_skips_bad_objects),
      cmocka_unit_test(test_resource_names_by_pointer),
      cmocka_unit_test(test_split_decode_same_model),
      cmocka_unit_test(test_split_decode_falls_back),
      cmocka_unit_test(test_duplicate_pod_refused),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
