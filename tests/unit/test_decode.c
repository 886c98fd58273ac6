/* test_decode.c - snapshots the decoder must refuse with a message that names the object and
 * the field, never with a crash or undefined behaviour. Each case is a file in
 * tests/data/unit/decode/ and the text its message must contain; most come from the fuzz
 * targets (tests/fuzz/fuzz_decode.c, fuzz_cycle.c). */
#include "support/support.h"

#include "../../src/decode/decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bare_number_too_large),
      cmocka_unit_test(test_page_skips_bad_objects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
