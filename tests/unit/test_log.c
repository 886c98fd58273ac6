/* test_log.c - held log lines (log_hold): nothing written while held until 64 KiB, an age of
 * 0.1 s, log_flush, the last log_release or exit(); every line once, in order. */
#include "../../src/obs/log.h"
#include "support/support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* the lines written to f so far, as "n=<field>" values joined by ',' */
static void written(FILE *f, char *out, size_t cap) {
  fflush(f);
  long len = ftell(f);
  char *buf = calloc(1, (size_t)len + 1);
  rewind(f);
  assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
  out[0] = 0;
  size_t o = 0;
  for (char *s = buf; (s = strstr(s, " n=")) != NULL; s += 3) {
    int k = 3;
    while (s[k] >= '0' && s[k] <= '9')
      k++;
    o += (size_t)snprintf(out + o, cap - o, "%s%.*s", o ? "," : "", k - 3, s + 3);
  }
  free(buf);
  fseek(f, 0, SEEK_END);
}

static void line(int n) { LOGV(0, NULL, "held line", LINT("n", n)); }

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static void test_lines_wait_for_release_and_keep_order(void **state) {
  (void)state;
  FILE *f = tmpfile();
  char got[4096];
  log_set_stream(f);
  line(1);
  written(f, got, sizeof got);
  assert_string_equal(got, "1"); /* not held: at once */
  log_hold();
  line(2);
  log_hold(); /* nested */
  line(3);
  log_release();
  written(f, got, sizeof got);
  assert_string_equal(got, "1"); /* the inner release writes nothing */
  line(4);
  log_release();
  written(f, got, sizeof got);
  assert_string_equal(got, "1,2,3,4");
  line(5);
  written(f, got, sizeof got);
  assert_string_equal(got, "1,2,3,4,5"); /* released: at once again */
  log_set_stream(NULL);
  fclose(f);
}

static void test_flush_writes_while_held(void **state) {
  (void)state;
  FILE *f = tmpfile();
  char got[4096];
  log_set_stream(f);
  log_hold();
  line(1);
  line(2);
  log_flush();
  written(f, got, sizeof got);
  assert_string_equal(got, "1,2");
  line(3);
  written(f, got, sizeof got);
  assert_string_equal(got, "1,2"); /* still held */
  log_release();
  written(f, got, sizeof got);
  assert_string_equal(got, "1,2,3");
  log_set_stream(NULL);
  fclose(f);
}

static void test_size_and_age_limits(void **state) {
  (void)state;
  FILE *f = tmpfile();
  static char got[1 << 20];
  log_set_stream(f);
  log_hold();
  /* each line is about 60 bytes: 2,000 of them pass 64 KiB once */
  int n = 0;
  for (; n < 2000; n++)
    line(n);
  written(f, got, sizeof got);
  size_t before = strlen(got);
  assert_true(before > 0);           /* 64 KiB went out */
  assert_null(strstr(got, ",1999")); /* the last ones are still held */
  log_release();
  written(f, got, sizeof got);
  int seen = 0; /* every line once, in order */
  for (char *s = got; *s; seen++) {
    char *end;
    assert_int_equal(strtol(s, &end, 10), seen);
    s = *end ? end + 1 : end;
  }
  assert_int_equal(seen, n);
  /* age: a held line goes out with the next one that comes 0.1 s later */
  fseek(f, 0, SEEK_SET);
  assert_int_equal(ftruncate(fileno(f), 0), 0);
  log_hold();
  line(7);
  sleep_ms(150);
  written(f, got, sizeof got);
  assert_string_equal(got, ""); /* nothing comes, nothing is written */
  line(8);
  written(f, got, sizeof got);
  assert_string_equal(got, "7,8");
  log_release();
  log_set_stream(NULL);
  fclose(f);
}

static void test_exit_while_held_writes_the_lines(void **state) {
  (void)state;
  FILE *f = tmpfile();
  char got[4096];
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    log_set_stream(f);
    log_hold();
    line(1);
    line(2);
    exit(3);
  }
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 3);
  fseek(f, 0, SEEK_END);
  written(f, got, sizeof got);
  assert_string_equal(got, "1,2");
  fclose(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lines_wait_for_release_and_keep_order),
      cmocka_unit_test(test_flush_writes_while_held),
      cmocka_unit_test(test_size_and_age_limits),
      cmocka_unit_test(test_exit_while_held_writes_the_lines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
