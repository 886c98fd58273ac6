/* test_quantity.c - Kubernetes quantities (src/apimachinery/quantity.h): every accepted form to
 * milli-units rounded up as Quantity.MilliValue(), whole units rounded up as Quantity.Value(),
 * bad input naming the text, the too-large error, and the canonical printing Kubernetes uses
 * for DecimalSI and BinarySI quantities. */
#include "support/support.h"

#include "../../src/apimachinery/quantity.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int64_t milli_of(const char *text) {
  int64_t v = -12345;
  dserr err;
  err.msg[0] = 0;
  if (quantity_parse(text, &v, &err) < 0)
    fail_msg("quantity \"%s\" rejected: %s", text, err.msg);
  return v;
}

#define assert_milli(text, want) assert_int_equal(milli_of(text), (int64_t)(want))

/* Asserts that text is rejected and that the message quotes the text. */
static void assert_bad(const char *text, const char *why) {
  int64_t v = 77;
  dserr err;
  err.msg[0] = 0;
  if (quantity_parse(text, &v, &err) == 0)
    fail_msg("quantity \"%s\" accepted as %lld milli", text, (long long)v);
  char quoted[128];
  snprintf(quoted, sizeof quoted, "\"%s\"", text);
  if (!strstr(err.msg, quoted))
    fail_msg("error for %s does not name the text: %s", quoted, err.msg);
  if (why && !strstr(err.msg, why))
    fail_msg("error for %s does not say \"%s\": %s", quoted, why, err.msg);
  assert_int_equal(v, 77); /* output untouched on error */
}

static void test_plain_and_decimal_forms(void **state) {
  (void)state;
  assert_milli("0", 0);
  assert_milli("1", 1000);
  assert_milli("+1", 1000);
  assert_milli("-1", -1000);
  assert_milli("1.5", 1500);
  assert_milli("0.5", 500);
  assert_milli(".5", 500);
  assert_milli("5.", 5000); /* Kubernetes accepts a trailing point */
  assert_milli("00100m", 100);
  assert_milli("100m", 100);
  assert_milli("1m", 1);
  assert_milli("1500m", 1500);
  assert_milli("1k", 1000000);
  assert_milli("2G", 2000000000000LL);
  assert_milli("1.G", 1000000000000LL);
  assert_milli("3M", 3000000000LL);
  assert_milli("1T", 1000000000000000LL);
  assert_milli("1P", 1000000000000000000LL);
}

static void test_binary_forms(void **state) {
  (void)state;
  assert_milli("1Ki", 1024000);
  assert_milli("512Mi", 536870912000LL);
  assert_milli("1Gi", 1073741824000LL);
  assert_milli("1.5Gi", 1610612736000LL);
  assert_milli("0.1Ki", 102400);
  assert_milli("2Ti", 2199023255552000LL);
  assert_milli("1Pi", 1125899906842624000LL);
}

static void test_exponent_forms(void **state) {
  (void)state;
  assert_milli("1e3", 1000000);
  assert_milli("1E2", 100000);
  assert_milli("1e+3", 1000000);
  assert_milli("1e-3", 1);
  assert_milli("1E-3", 1);
  assert_milli("2.5e2", 250000);
  assert_milli("1e0", 1000);
  /* a bare E is the exa suffix, not an exponent: 1E is 10^18 units (too large in milli,
   * see test_too_large); 1mE-... is no form at all */
  assert_milli("0.000000000000000001E", 1000);
}

/* Small values round up to the next milli-unit, as MilliValue() does. */
static void test_rounding_up_to_milli(void **state) {
  (void)state;
  assert_milli("1n", 1);
  assert_milli("10n", 1);
  assert_milli("999999n", 1);
  assert_milli("1000000n", 1);
  assert_milli("1000001n", 2);
  assert_milli("500u", 1);
  assert_milli("1u", 1);
  assert_milli("1000u", 1);
  assert_milli("1001u", 2);
  assert_milli("0.0001", 1);
  assert_milli("1.0001", 1001);
  assert_milli("0.5m", 1);
  assert_milli("1.5m", 2);
  assert_milli("0n", 0);
  assert_milli("0.000", 0);
}

/* A binary suffix multiplies the mantissa by up to 2^60 before the fraction's power of ten
 * divides it: a divisor beyond 2^100 no longer means a result of 0 or 1 (it gave 1 for
 * 1423.4 milli). Found while writing tests/fuzz/fuzz_quantity.c. */
static void test_long_fractions_with_a_binary_suffix(void **state) {
  (void)state;
  /* 1.23456789012345678e-18 * 2^60 = 1.42335...: 1424 milli, rounded up */
  assert_milli("0.00000000000000000123456789012345678Ei", 1424);
  assert_milli("-0.00000000000000000123456789012345678Ei", -1423);
  assert_milli("0.0000000000000000012345678901234567Ei", 1424);
  assert_milli("0.000000000000000000000000000000000000000000000001Ei", 1);
  assert_milli("-0.000000000000000000000000000000000000000000000001Ei", 0);
  assert_milli("0.0000000000000000000000000000000001", 1);
}

static void test_limits_of_int64(void **state) {
  (void)state;
  assert_milli("9223372036854775800m", 9223372036854775800LL);
  assert_milli("9223372036854775.8", 9223372036854775800LL);
  assert_milli("9223372036854775", 9223372036854775000LL);
  assert_milli("-9223372036854775800m", -9223372036854775800LL);
  /* quantity.h keeps 18 significant digits: more (non-zero) ones are refused, by design, even
   * where Kubernetes' arbitrary precision would still give an int64 (INT64_MAX milli-units) */
  assert_bad("9223372036854775807m", "significant digits");
  assert_bad("0.1234567890123456789", "significant digits");
}

static void test_units_round_up(void **state) {
  (void)state;
  assert_int_equal(quantity_units(0), 0);
  assert_int_equal(quantity_units(1), 1);
  assert_int_equal(quantity_units(999), 1);
  assert_int_equal(quantity_units(1000), 1);
  assert_int_equal(quantity_units(1001), 2);
  assert_int_equal(quantity_units(1500), 2);
  assert_int_equal(quantity_units(milli_of("1Gi")), 1073741824);
  assert_int_equal(quantity_units(milli_of("100m")), 1);
  assert_int_equal(quantity_units(milli_of("1n")), 1);
  assert_int_equal(quantity_units(milli_of("2")), 2);
}

static void test_bad_input_names_the_text(void **state) {
  (void)state;
  assert_bad("1K", "suffix");
  assert_bad("abc", NULL);
  assert_bad("1.2.3", NULL);
  assert_bad("", NULL);
  assert_bad("1Gb", "suffix");
  assert_bad("1e", NULL);
  assert_bad("1e+", NULL);
  assert_bad("1ki", NULL);
  assert_bad("1 Gi", NULL);
  assert_bad("Gi", NULL);
  assert_bad("1e3x", NULL);
  assert_bad("--1", NULL);
  assert_bad("1mm", NULL);
}

static void test_too_large(void **state) {
  (void)state;
  assert_bad("9223372036854775810m", "too large");
  /* trailing zeros beyond the kept digits still scale the value: no wrap-around */
  assert_bad("1000000000000000000000000000000000000000", "too large");
  assert_bad("1000000000000000000000000000000000000000000000000000000000000000m", "too large");
  assert_bad("9223372036854776k", "too large");
  assert_bad("10E", "too large");
  assert_bad("1E", "too large"); /* 10^18 units is 10^21 milli-units */
  assert_bad("8Ei", "too large");
  assert_bad("1e100", NULL);
}

/* What format writes for v, as a string. */
static const char *formatted(void (*format)(strbuf *, int64_t), int64_t v) {
  static char out[64];
  strbuf sb = {0};
  format(&sb, v);
  snprintf(out, sizeof out, "%s", sb_str(&sb));
  sb_free(&sb);
  return out;
}

#define fmt_decimal(milli) formatted(quantity_format_decimal, (milli))
#define fmt_binary(units) formatted(quantity_format_binary, (units))

static void test_format_decimal(void **state) {
  (void)state;
  assert_string_equal(fmt_decimal(1500), "1500m");
  assert_string_equal(fmt_decimal(2000), "2");
  assert_string_equal(fmt_decimal(100000000000000LL), "100G");
  assert_string_equal(fmt_decimal(0), "0");
  assert_string_equal(fmt_decimal(1), "1m");
  assert_string_equal(fmt_decimal(1000000), "1k");
  assert_string_equal(fmt_decimal(1500000), "1500");
  assert_string_equal(fmt_decimal(1000500), "1000500m");
  assert_string_equal(fmt_decimal(7000), "7");
  assert_string_equal(fmt_decimal(1000000000000000000LL), "1P");
  assert_string_equal(fmt_decimal(-1500), "-1500m");
  assert_string_equal(fmt_decimal(-2000), "-2");
  assert_string_equal(fmt_decimal(INT64_MAX), "9223372036854775807m");
  /* parse then print gives Kubernetes' canonical form */
  assert_string_equal(fmt_decimal(milli_of("0.5")), "500m");
  assert_string_equal(fmt_decimal(milli_of("1e3")), "1k");
  assert_string_equal(fmt_decimal(milli_of("1000m")), "1");
}

static void test_format_binary(void **state) {
  (void)state;
  assert_string_equal(fmt_binary(2147483648LL), "2Gi");
  assert_string_equal(fmt_binary(1500), "1500");
  assert_string_equal(fmt_binary(3000), "3000");
  assert_string_equal(fmt_binary(0), "0");
  assert_string_equal(fmt_binary(7), "7");
  assert_string_equal(fmt_binary(1023), "1023");
  assert_string_equal(fmt_binary(1024), "1Ki");
  assert_string_equal(fmt_binary(1536), "1536"); /* 1.5Ki is not whole: stays plain */
  assert_string_equal(fmt_binary(1024000), "1000Ki");
  assert_string_equal(fmt_binary(1048576), "1Mi");
  assert_string_equal(fmt_binary(536870912), "512Mi");
  assert_string_equal(fmt_binary(1099511627776LL), "1Ti");
  assert_string_equal(fmt_binary(1LL << 60), "1Ei");
  /* below 1024 Kubernetes prints a BinarySI quantity as DecimalSI: 1000 is "1k" */
  assert_string_equal(fmt_binary(1000), "1k");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_plain_and_decimal_forms),  cmocka_unit_test(test_binary_forms),
      cmocka_unit_test(test_exponent_forms),           cmocka_unit_test(test_rounding_up_to_milli),
      cmocka_unit_test(test_limits_of_int64),          cmocka_unit_test(test_units_round_up),
      cmocka_unit_test(test_bad_input_names_the_text), cmocka_unit_test(test_too_large),
      cmocka_unit_test(test_format_decimal),           cmocka_unit_test(test_format_binary),
      cmocka_unit_test(test_long_fractions_with_a_binary_suffix),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
