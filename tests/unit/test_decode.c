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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_bare_number_too_large),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
