/* test_metrics.c - the evicted-pods counter keeps one series per label set, in the order the
 * sets first occurred, when there are thousands of them (its hash index grows while they are
 * added, and label sets that differ only in where one label ends stay apart). */
#include "../../src/obs/metrics.h"
#include "support/support.h"

#include <stdio.h>
#include <string.h>

/* how many lines of out begin with prefix */
static size_t lines_starting(const char *out, const char *prefix) {
  size_t n = 0, len = strlen(prefix);
  for (const char *l = out; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
    n += strncmp(l, prefix, len) == 0;
  return n;
}

static void test_thousands_of_series(void **state) {
  (void)state;
  metrics_reset();
  metrics_enable("test");
  char node[32], ns[32];
  /* node i in namespace i % 7, each set twice ("error" once more for even i), interleaved */
  for (int round = 0; round < 2; round++)
    for (int i = 0; i < 3000; i++) {
      snprintf(node, sizeof node, "node-%04d", i);
      snprintf(ns, sizeof ns, "ns-%d", i % 7);
      metrics_pods_evicted("success", "LowNodeUtilization", "p", ns, node);
      if (i % 2 == 0 && round == 0)
        metrics_pods_evicted("error", "LowNodeUtilization", "p", ns, node);
    }
  /* the same bytes split differently between two labels: two series */
  metrics_pods_evicted("success", "ab", "c", "x", "y");
  metrics_pods_evicted("success", "a", "bc", "x", "y");
  strbuf out = {0};
  metrics_render(&out);
  const char *text = sb_str(&out);
  /* 3000 success + 1500 error + 2: rendered under both metric names */
  assert_int_equal(lines_starting(text, "descheduler_pods_evicted{"), 4502);
  assert_int_equal(lines_starting(text, "descheduler_pods_evicted_total{"), 4502);
  assert_non_null(strstr(text, "descheduler_pods_evicted{namespace=\"ns-3\",node=\"node-2999\","
                               "profile=\"p\",result=\"success\",strategy=\"LowNodeUtilization\"} 2\n"));
  assert_non_null(strstr(text, "descheduler_pods_evicted{namespace=\"ns-0\",node=\"node-0000\","
                               "profile=\"p\",result=\"error\",strategy=\"LowNodeUtilization\"} 1\n"));
  assert_non_null(strstr(text, "profile=\"c\",result=\"success\",strategy=\"ab\"} 1\n"));
  assert_non_null(strstr(text, "profile=\"bc\",result=\"success\",strategy=\"a\"} 1\n"));
  /* first occurrence order: node-0000's success, then its error, then node-0001's success */
  const char *s0 = strstr(text, "node=\"node-0000\",profile=\"p\",result=\"success\"");
  const char *e0 = strstr(text, "node=\"node-0000\",profile=\"p\",result=\"error\"");
  const char *s1 = strstr(text, "node=\"node-0001\",profile=\"p\",result=\"success\"");
  assert_true(s0 && e0 && s1 && s0 < e0 && e0 < s1);
  sb_free(&out);

  /* after a reset the counter starts empty and indexes again */
  metrics_reset();
  metrics_enable("test");
  metrics_pods_evicted("success", "RemoveDuplicates", "p", "a", "n1");
  metrics_pods_evicted("success", "RemoveDuplicates", "p", "a", "n1");
  strbuf again = {0};
  metrics_render(&again);
  assert_int_equal(lines_starting(sb_str(&again), "descheduler_pods_evicted{"), 1);
  assert_non_null(strstr(sb_str(&again), "strategy=\"RemoveDuplicates\"} 2\n"));
  sb_free(&again);
  metrics_reset();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_thousands_of_series),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
