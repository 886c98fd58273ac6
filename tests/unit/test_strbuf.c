/* test_strbuf.c - shortest round-tripping floats (sb_append_json_double, sb_append_go_float):
 * fixed cases, and the search for the shortest precision checked against trying every
 * precision in turn over many values, powers of two and subnormals included. */
#include "../../src/util/strbuf.h"
#include "support/support.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void expect_json(double v, const char *want) {
  strbuf sb = {0};
  sb_append_json_double(&sb, v);
  assert_string_equal(sb_str(&sb), want);
  sb_free(&sb);
}

static void test_json_double_cases(void **state) {
  (void)state;
  expect_json(0, "0");
  expect_json(-0.0, "-0");
  expect_json(0.5, "0.5");
  expect_json(0.1, "0.1");
  expect_json(0.1 + 0.2, "0.30000000000000004");
  expect_json(1.0 / 3, "0.3333333333333333");
  expect_json(46.666666666666664, "46.666666666666664");
  expect_json(26.94, "26.94");
  expect_json(1024, "1024");
  expect_json(1e20, "100000000000000000000");
  expect_json(1e21, "1e+21");
  expect_json(1e-7, "1e-07");
  expect_json(1.5e-6, "0.0000015");
  expect_json(9007199254740992.0, "9007199254740992");
  expect_json(ldexp(1, -1074), "5e-324");
  expect_json(1.7976931348623157e308, "1.7976931348623157e+308");
  expect_json(NAN, "\"NaN\"");
  expect_json(-INFINITY, "\"-Inf\"");
}

/* The definition: the first precision from lo that reads back, every one tried. */
static void reference(char *buf, size_t size, const char *fmt, int lo, int hi, double f) {
  for (int p = lo; p <= hi; p++) {
    snprintf(buf, size, fmt, p, f);
    if (strtod(buf, NULL) == f)
      return;
  }
}

/* The digits of a number's text from its first non-zero digit, without the point, the trailing
 * zeros and any exponent ("0.00120" and "1.2e-03" both give "12"; "0" gives ""). */
static void significant_digits(const char *text, char *out) {
  size_t n = 0;
  for (const char *p = text; *p && *p != 'e'; p++)
    if (*p >= '0' && *p <= '9' && (n || *p != '0'))
      out[n++] = *p;
  while (n && out[n - 1] == '0')
    n--;
  out[n] = 0;
}

static double next_value(uint64_t *x, unsigned i) {
  xorshift64(x);
  double f;
  switch (i % 5) {
  case 0: /* any bit pattern: every exponent, subnormals */
    memcpy(&f, x, sizeof f);
    return f;
  case 1: /* ratios, as usage percentages are */
    return (double)(*x % 10000000) / (double)(1 + (*x >> 40) % 99991) * 100;
  case 2: /* powers of two, where the rounding interval is narrower below */
    return ldexp(1, (int)(*x % 2098) - 1074);
  case 3: /* short decimals */
    return (double)(*x % 1000000) / 1000;
  default: /* small integers times powers of two */
    return ldexp((double)(*x % 4096), (int)((*x >> 20) % 300) - 150);
  }
}

static void test_shortest_matches_every_precision_tried(void **state) {
  (void)state;
  uint64_t x = 88172645463325252ull;
  unsigned checked = 0;
  for (unsigned i = 0; i < 200000; i++) {
    double f = next_value(&x, i);
    if (isnan(f) || isinf(f))
      continue;
    char want[64];
    reference(want, sizeof want, "%.*g", 1, 17, f);
    strbuf sb = {0};
    sb_append_json_double(&sb, f);
    if (!strchr(want, 'e')) /* otherwise written out plain, or kept with the exponent */
      assert_string_equal(sb_str(&sb), want);
    else
      assert_true(strtod(sb_str(&sb), NULL) == f);
    sb_free(&sb);

    /* Go's form: the significant digits of the shortest %e, written without an exponent */
    reference(want, sizeof want, "%.*e", 0, 16, f);
    sb_append_go_float(&sb, f);
    char a[64], b[1200]; /* Go's form of 1e308 has 309 digits before its zeros go */
    significant_digits(want, a);
    significant_digits(sb_str(&sb), b);
    assert_string_equal(b, a);
    assert_true(strtod(sb_str(&sb), NULL) == f);
    sb_free(&sb);
    checked++;
  }
  assert_true(checked > 190000);
}

/* sb_append_int writes what "%lld" writes, the extremes included. */
static void test_int_matches_printf(void **state) {
  (void)state;
  long long fixed[] = {0,    1,         -1,         9,         10,        -10,          999,
                       1000, 123456789, -987654321, LLONG_MAX, LLONG_MIN, LLONG_MIN + 1};
  uint64_t x = 2463534242ull;
  for (unsigned i = 0; i < 100000 + sizeof fixed / sizeof fixed[0]; i++) {
    long long v;
    if (i < sizeof fixed / sizeof fixed[0]) {
      v = fixed[i];
    } else {
      xorshift64(&x);
      v = (long long)(x >> (x % 64)); /* every magnitude, both signs */
      if (x & 1)
        v = -v;
    }
    char want[32];
    snprintf(want, sizeof want, "%lld", v);
    strbuf sb = {0};
    sb_append(&sb, "q=");
    sb_append_int(&sb, v);
    assert_string_equal(sb_str(&sb) + 2, want);
    sb_free(&sb);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_int_matches_printf),
      cmocka_unit_test(test_json_double_cases),
      cmocka_unit_test(test_shortest_matches_every_precision_tried),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
