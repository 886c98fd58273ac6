/* test_timeutil.c - RFC 3339 times and Go durations (src/util/timeutil.h): the accepted forms,
 * dates that do not exist (refused, as Go's time.Parse refuses them), and the printers. The
 * cases come from the fuzz targets' findings (tests/fuzz/fuzz_time.c). */
#include "support/support.h"

#include "../../src/util/timeutil.h"

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

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rfc3339_forms),
      cmocka_unit_test(test_days_that_do_not_exist),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
