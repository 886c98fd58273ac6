/* fuzz_time.c - libFuzzer target: Go durations and RFC 3339 timestamps.
 *
 * Besides "no crash, a message on failure": a printed duration must read back as the same
 * number of nanoseconds, and a timestamp written in the canonical form
 * (YYYY-MM-DDTHH:MM:SSZ, second < 60) must print back exactly as written: a date that does
 * not exist (February 30th) must be refused, not moved to another day. */
#include "../../src/apimachinery/timeutil.h"
#include "fuzz_common.h"

static void check_duration(const char *text) {
  int64_t ns = 0;
  dserr err = {{0}};
  int rc = duration_parse(text, &ns, &err);
  fuzz_require_error(rc, &err, "duration_parse");
  if (rc < 0)
    return;
  strbuf sb = {0};
  duration_format(&sb, ns);
  int64_t back = 0;
  if (duration_parse(sb.buf, &back, &err) < 0 || back != ns) {
    fprintf(stderr, "duration \"%s\" = %lld ns printed as \"%s\" reads back as %lld (%s)\n", text,
            (long long)ns, sb.buf, (long long)back, err.msg);
    abort();
  }
  sb_free(&sb);
}

static int canonical_utc(const char *t) {
  static const char shape[] = "dddd-dd-ddTdd:dd:ddZ";
  if (strlen(t) != sizeof shape - 1)
    return 0;
  for (size_t i = 0; shape[i]; i++)
    if (shape[i] == 'd' ? (t[i] < '0' || t[i] > '9') : t[i] != shape[i])
      return 0;
  return !(t[17] == '6' && t[18] == '0'); /* a leap second prints as the next minute */
}

static void check_time(const char *text) {
  int64_t sec = 0;
  int32_t nsec = 0;
  dserr err = {{0}};
  int rc = time_parse_rfc3339(text, &sec, &nsec, &err);
  fuzz_require_error(rc, &err, "time_parse_rfc3339");
  if (rc < 0)
    return;
  if (nsec < 0 || nsec > 999999999)
    abort();
  strbuf sb = {0};
  time_format_rfc3339(&sb, sec);
  if (canonical_utc(text) && strcmp(sb.buf, text) != 0) {
    fprintf(stderr, "time \"%s\" printed back as \"%s\"\n", text, sb.buf);
    abort();
  }
  /* years 0000..9999 print in the form the parser reads */
  if (sec >= -62167219200LL && sec <= 253402300799LL) {
    int64_t back = 0;
    if (time_parse_rfc3339(sb.buf, &back, NULL, &err) < 0 || back != sec) {
      fprintf(stderr, "time \"%s\" printed as \"%s\" reads back differently\n", text, sb.buf);
      abort();
    }
  }
  sb_free(&sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = fuzz_cstr(data, size);
  check_duration(text);
  check_time(text);
  free(text);
  return 0;
}
