/* test_timeutil.c - RFC 3339 times and Go durations (src/apimachinery/timeutil.h): the accepted forms,
 * dates that do not exist (refused, as Go's time.Parse refuses them), durations read exactly
 * as Go's time.ParseDuration reads them, and the printers. The
 * cases come from the fuzz targets' findings (tests/fuzz/fuzz_time.c). */
#include "support/support.h"

#include "../../src/apimachinery/timeutil.h"

#include <stdint.h>
#include <string.h>

static int64_t time_of(const char *text) {
  int64_t sec = -1;
  dserr err;
  err.msg[0] = 0;
  if (time_parse_rfc3339(text, &sec, NULL, &err) < 0)
    fail_msg("time \"%s\" rejected: %s", text, err.msg);
  return sec;
}

static void assert_bad_time(const char *text, const char *why) {
  int64_t sec = 77;
  dserr err;
  err.msg[0] = 0;
  if (time_parse_rfc3339(text, &sec, NULL, &err) == 0)
    fail_msg("time \"%s\" accepted as %lld", text, (long long)sec);
  if (!strstr(err.msg, text) || !strstr(err.msg, why))
    fail_msg("error for \"%s\" does not name the text and say \"%s\": %s", text, why, err.msg);
  assert_int_equal(sec, 77);
}

static const char *printed_time(int64_t sec) {
  static char buf[64];
  strbuf sb = {0};
  time_format_rfc3339(&sb, sec);
  snprintf(buf, sizeof buf, "%s", sb.buf);
  sb_free(&sb);
  return buf;
}

static void test_rfc3339_forms(void **state) {
  (void)state;
  assert_int_equal(time_of("1970-01-01T00:00:00Z"), 0);
  assert_int_equal(time_of("2026-01-01T00:00:00Z"), 1767225600);
  assert_int_equal(time_of("2026-01-01t01:00:00+01:00"), 1767225600);
  assert_int_equal(time_of("2025-12-31 23:00:00.999999999-01:00"), 1767225600);
  assert_int_equal(time_of("2024-02-29T00:00:00Z"), 1709164800); /* a leap year */
  assert_int_equal(time_of("2000-02-29T00:00:00Z"), 951782400);  /* divisible by 400 */
  assert_string_equal(printed_time(1767225600), "2026-01-01T00:00:00Z");
  assert_string_equal(printed_time(1709164800), "2024-02-29T00:00:00Z");
}

/* fuzz_time found "0022-02-29T23:59:30Z" and "9999-11-31T21:59:59Z" accepted and moved to
 * the 1st of the next month */
static void test_days_that_do_not_exist(void **state) {
  (void)state;
  assert_bad_time("2026-02-29T00:00:00Z", "day out of range");
  assert_bad_time("1900-02-29T00:00:00Z", "day out of range"); /* divisible by 100 only */
  assert_bad_time("0022-02-29T23:59:30Z", "day out of range");
  assert_bad_time("9999-11-31T21:59:59Z", "day out of range");
  assert_bad_time("2026-04-31T00:00:00Z", "day out of range");
  assert_bad_time("2026-02-30T00:00:00+02:00", "day out of range");
  assert_bad_time("2026-13-01T00:00:00Z", "RFC 3339");
  assert_bad_time("2026-01-00T00:00:00Z", "RFC 3339");
}

static int64_t duration_of(const char *text) {
  int64_t ns = -1;
  dserr err;
  err.msg[0] = 0;
  if (duration_parse(text, &ns, &err) < 0)
    fail_msg("duration \"%s\" rejected: %s", text, err.msg);
  return ns;
}

static void assert_bad_duration(const char *text) {
  int64_t ns = 77;
  dserr err;
  err.msg[0] = 0;
  if (duration_parse(text, &ns, &err) == 0)
    fail_msg("duration \"%s\" accepted as %lld", text, (long long)ns);
  if (!strstr(err.msg, text) || !strstr(err.msg, "Go duration"))
    fail_msg("error for \"%s\" does not name the text: %s", text, err.msg);
  assert_int_equal(ns, 77);
}

static const char *printed_duration(int64_t ns) {
  static char buf[64];
  strbuf sb = {0};
  duration_format(&sb, ns);
  snprintf(buf, sizeof buf, "%s", sb.buf);
  sb_free(&sb);
  return buf;
}

static void test_duration_forms(void **state) {
  (void)state;
  assert_int_equal(duration_of("0"), 0);
  assert_int_equal(duration_of("-0"), 0);
  assert_int_equal(duration_of("300ms"), 300000000);
  assert_int_equal(duration_of("1h30m"), 5400000000000LL);
  assert_int_equal(duration_of("1.5s"), 1500000000);
  assert_int_equal(duration_of(".5s"), 500000000);
  assert_int_equal(duration_of("5.s"), 5000000000LL);
  assert_int_equal(duration_of("-2h45m0.5s"), -9900500000000LL);
  assert_int_equal(duration_of("1us"), 1000);
  assert_int_equal(duration_of("1\xc2\xb5s"), 1000);
  assert_int_equal(duration_of("1\xce\xbcs"), 1000);
  assert_int_equal(duration_of("1.0000000001h"), 3600000000360LL);
  assert_string_equal(printed_duration(5400000000000LL), "1h30m0s");
  assert_string_equal(printed_duration(1500), "1.5\xc2\xb5s");
  assert_string_equal(printed_duration(0), "0s");
  assert_string_equal(printed_duration(INT64_MIN), "-2562047h47m16.854775808s");
}

/* fuzz_time found durations that read back one nanosecond short: the parser summed the
 * digits of a fraction in floating point ("2.026ms" gave 2025999 ns). Go parses the fraction
 * as an integer; so does duration_parse now. */
static void test_fractions_are_exact(void **state) {
  (void)state;
  assert_int_equal(duration_of("2.026ms"), 2026000);
  assert_int_equal(duration_of("4.020004s"), 4020004000LL);
  assert_int_equal(duration_of("1.003s"), 1003000000);
  assert_int_equal(duration_of("2.0000001s"), 2000000100);
  assert_int_equal(duration_of("97.977777ms"), 97977777);
  assert_int_equal(duration_of("9.198\xc2\xb5s"), 9198);
  assert_int_equal(duration_of("9.790777777s"), 9790777777LL);
  /* a printed duration reads back as the same number */
  static const int64_t samples[] = {2026000,   4020004000LL, 955562999,     951450,   1,
                                    999999999, INT64_MAX,    INT64_MIN + 1, INT64_MIN};
  for (size_t i = 0; i < sizeof samples / sizeof samples[0]; i++)
    assert_int_equal(duration_of(printed_duration(samples[i])), samples[i]);
}

/* Go's limits: up to 2^63-1 ns, down to -2^63 ns; anything beyond is refused, not rounded */
static void test_duration_limits(void **state) {
  (void)state;
  assert_int_equal(duration_of("9223372036854775807ns"), INT64_MAX);
  assert_int_equal(duration_of("-9223372036854775808ns"), INT64_MIN);
  assert_int_equal(duration_of("2562047h47m16.854775807s"), INT64_MAX);
  assert_bad_duration("9223372036854775808ns");
  assert_bad_duration("2562048h");
  assert_bad_duration("99999999999999999999s");
  assert_bad_duration("");
  assert_bad_duration("-");
  assert_bad_duration(".s");
  assert_bad_duration("5");
  assert_bad_duration("5x");
  assert_bad_duration("5sm");
  assert_bad_duration("1s ");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rfc3339_forms),   cmocka_unit_test(test_days_that_do_not_exist),
      cmocka_unit_test(test_duration_forms),  cmocka_unit_test(test_fractions_are_exact),
      cmocka_unit_test(test_duration_limits),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
