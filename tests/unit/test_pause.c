/* test_pause.c - `descheduler pause` / `resume` decisions (runbook/pause.c): which object,
 * which migrations block a resume, and the merge patches for a CronJob and a Deployment. */
#include "support/support.h"

#include "../../src/runbook/pause.h"

#include <string.h>

static doc_node *json_doc(const char *text) {
  doc_node *root;
  dserr err;
  if (doc_parse_json(test_mem, "test", text, strlen(text), &root, &err) < 0)
    fail_msg("bad test JSON: %s", err.msg);
  return root;
}

static pause_workload workload(const char *kind, const char *json) {
  pause_workload w;
  pause_workload_from_doc(test_mem, json_doc(json), kind, &w);
  return w;
}

typedef struct {
  pause_action action;
  strbuf path, patch, done;
  char why[1024];
} plan_out;

static plan_out P;

static pause_action plan(const pause_workload *w, bool resume) {
  P.action = pause_plan(w, resume, &P.path, &P.patch, &P.done, P.why, sizeof P.why);
  return P.action;
}

static int teardown_plan(void **state) {
  (void)state;
  sb_free(&P.path);
  sb_free(&P.patch);
  sb_free(&P.done);
  return 0;
}

static void test_cronjob(void **state) {
  (void)state;
  pause_workload w = workload(
      "CronJob", "{\"metadata\":{\"name\":\"descheduler\",\"namespace\":\"descheduler\"},"
                 "\"spec\":{\"schedule\":\"*/30 * * * *\"},\"status\":{\"active\":[{\"name\":"
                 "\"descheduler-29000000\"}]}}");
  assert_int_equal(w.nactive, 1);
  assert_string_equal(w.active[0], "descheduler-29000000");
  assert_int_equal(plan(&w, false), PAUSE_PATCH);
  assert_string_equal(sb_str(&P.path),
                      "/apis/batch/v1/namespaces/descheduler/cronjobs/descheduler");
  assert_string_equal(sb_str(&P.patch), "{\"spec\":{\"suspend\":true}}");
  assert_int_equal(plan(&w, true), PAUSE_NOTHING);
  assert_non_null(strstr(P.why, "already running"));
  w.suspended = true;
  assert_int_equal(plan(&w, false), PAUSE_NOTHING);
  assert_non_null(strstr(P.why, "already suspended"));
  assert_int_equal(plan(&w, true), PAUSE_PATCH);
  assert_string_equal(sb_str(&P.patch), "{\"spec\":{\"suspend\":false}}");
}

static void test_deployment(void **state) {
  (void)state;
  pause_workload w = workload("Deployment", "{\"metadata\":{\"name\":\"descheduler\","
                                            "\"namespace\":\"kube-system\"},\"spec\":{"
                                            "\"replicas\":2}}");
  assert_int_equal(plan(&w, false), PAUSE_PATCH);
  assert_string_equal(sb_str(&P.path),
                      "/apis/apps/v1/namespaces/kube-system/deployments/descheduler");
  assert_string_equal(sb_str(&P.patch),
                      "{\"metadata\":{\"annotations\":{\"" PAUSE_REPLICAS_ANNOTATION
                      "\":\"2\"}},\"spec\":{\"replicas\":0}}");
  assert_int_equal(plan(&w, true), PAUSE_NOTHING);
  /* paused: the count is in the annotation */
  w = workload("Deployment",
               "{\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\",\"annotations\":{"
               "\"" PAUSE_REPLICAS_ANNOTATION "\":\"2\"}},\"spec\":{\"replicas\":0}}");
  assert_int_equal(plan(&w, false), PAUSE_NOTHING);
  assert_int_equal(plan(&w, true), PAUSE_PATCH);
  assert_string_equal(sb_str(&P.patch),
                      "{\"metadata\":{\"annotations\":{\"" PAUSE_REPLICAS_ANNOTATION
                      "\":null}},\"spec\":{\"replicas\":2}}");
  /* scaled to 0 by someone else: resume does not guess */
  w = workload("Deployment", "{\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\"},\"spec\":{"
                             "\"replicas\":0}}");
  assert_int_equal(plan(&w, false), PAUSE_NOTHING);
  assert_non_null(strstr(P.why, "not by pause"));
  assert_int_equal(plan(&w, true), PAUSE_REFUSE);
  assert_non_null(strstr(P.why, "scale it yourself"));
  w.paused_replicas = "two";
  assert_int_equal(plan(&w, true), PAUSE_REFUSE);
  /* replicas unset means 1 */
  w = workload("Deployment", "{\"metadata\":{\"name\":\"d\",\"namespace\":\"ns\"},\"spec\":{}}");
  assert_int_equal(w.replicas, 1);
}

static void test_target(void **state) {
  (void)state;
  pause_workload ws[2] = {
      workload("CronJob", "{\"metadata\":{\"name\":\"a\",\"namespace\":\"x\"}}"),
      workload("Deployment", "{\"metadata\":{\"name\":\"b\",\"namespace\":"
                             "\"y\"}}")};
  pause_state st = {.nworkloads = 0, .workloads = ws};
  dserr err;
  assert_null(pause_target(&st, NULL, &err));
  assert_string_equal(err.msg,
                      "no CronJob or Deployment labelled app.kubernetes.io/name=descheduler in "
                      "any namespace");
  assert_null(pause_target(&st, "x", &err));
  assert_non_null(strstr(err.msg, "in namespace x"));
  st.nworkloads = 2;
  assert_null(pause_target(&st, NULL, &err));
  assert_non_null(strstr(err.msg, "2 objects are labelled app.kubernetes.io/name=descheduler: "
                                  "CronJob x/a, Deployment y/b"));
  st.nworkloads = 1;
  assert_ptr_equal(pause_target(&st, NULL, &err), &ws[0]);
}

static void test_unfinished_migrations(void **state) {
  (void)state;
  pause_migration ms[5];
  const char *phases[5] = {"Succeeded", "Failed", "Running", "Pending", ""};
  for (int i = 0; i < 5; i++) {
    char json[256];
    snprintf(json, sizeof json,
             "{\"metadata\":{\"name\":\"m%d\",\"namespace\":\"vms\"},\"spec\":{\"vmiName\":"
             "\"vm-%d\"},\"status\":{\"phase\":\"%s\"}}",
             i, i, phases[i]);
    pause_migration_from_doc(test_mem, json_doc(json), &ms[i]);
  }
  pause_state st = {.mem = test_mem, .nmigrations = 5, .migrations = ms};
  size_t n;
  const pause_migration **un = pause_unfinished(&st, &n);
  assert_int_equal(n, 3);
  assert_string_equal(un[0]->name, "m2");
  assert_string_equal(un[0]->vmi, "vm-2");
  assert_string_equal(un[1]->phase, "Pending");
  assert_string_equal(un[2]->phase, "");
  st.nmigrations = 2;
  pause_unfinished(&st, &n);
  assert_int_equal(n, 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_cronjob),
      cmocka_unit_test(test_deployment),
      cmocka_unit_test(test_target),
      cmocka_unit_test(test_unfinished_migrations),
  };
  return cmocka_run_group_tests(tests, test_mem_setup, test_mem_teardown) | teardown_plan(NULL);
}
