/* test_verify.c - `descheduler verify`'s pass rule (runbook/verify.c) on states as read, and
 * the pairing of a migration with the descheduler's "Eviction in background assumed" line.
 *
 * The state after a good move: vms/vm-a ran on w1 (launcher virt-launcher-vm-a-old, UID u1),
 * migration kubevirt-evacuation-x1 Succeeded w1 -> w2, the VMI Running and Ready on w2 with
 * its new launcher, the old launcher Succeeded. Each test breaks one thing. */
#include "support/support.h"

#include "../../src/runbook/verify.h"
#include "../../src/apimachinery/timeutil.h"

#include <string.h>

static verify_migration MIG;
static verify_pod PODS[3];
static verify_state ST;
static const verify_target T = {"vms", "vm-a", "w1", NULL};

static int64_t at(const char *rfc3339) {
  int64_t t;
  dserr err;
  if (time_parse_rfc3339(rfc3339, &t, NULL, &err) < 0)
    fail_msg("%s", err.msg);
  return t;
}

static void good_state(void) {
  MIG = (verify_migration){.name = "kubevirt-evacuation-x1",
                           .phase = "Succeeded",
                           .evacuation_node = "w1",
                           .source_node = "w1",
                           .target_node = "w2",
                           .source_pod = "virt-launcher-vm-a-old",
                           .target_pod = "virt-launcher-vm-a-new",
                           .failure_reason = "",
                           .has_created = true,
                           .created = at("2026-12-01T10:48:55Z")};
  PODS[0] = (verify_pod){"virt-launcher-vm-a-old", "Succeeded", "w1", "u1", false};
  PODS[1] = (verify_pod){"virt-launcher-vm-a-new", "Running", "w2", "u1", false};
  ST = (verify_state){.vmi_found = true,
                      .uid = "u1",
                      .phase = "Running",
                      .node = "w2",
                      .ready = 1,
                      .vm_name = "vm-a",
                      .vm_found = true,
                      .vm_ready = 1,
                      .vm_printable = "Running",
                      .nmigrations = 1,
                      .migrations = &MIG,
                      .npods = 2,
                      .pods = PODS};
}

static verify_result RES;

static const verify_condition *judge(const verify_target *t, const char *name) {
  verify_evaluate(&ST, t, &RES);
  for (int i = 0; i < VERIFY_NCONDITIONS; i++)
    if (!strcmp(RES.c[i].name, name))
      return &RES.c[i];
  fail_msg("no condition %s", name);
  return NULL;
}

static void expect(const verify_target *t, const char *name, verify_status st, const char *text) {
  const verify_condition *c = judge(t, name);
  if (c->status != st || !strstr(c->detail, text))
    fail_msg("%s: %s \"%s\", expected %s containing \"%s\"", name, verify_status_name(c->status),
             c->detail, verify_status_name(st), text);
}

static void test_good_move_passes(void **state) {
  (void)state;
  good_state();
  verify_target t = T;
  t.uid = "u1";
  verify_evaluate(&ST, &t, &RES);
  for (int i = 0; i < VERIFY_NCONDITIONS; i++)
    if (RES.c[i].status != VERIFY_PASS)
      fail_msg("%s: %s", RES.c[i].name, RES.c[i].detail);
  assert_true(verify_passed(&RES));
  assert_ptr_equal(RES.migration, &MIG);
  expect(&t, "node", VERIFY_PASS, "the VMI runs on w2, not on w1");
  expect(&t, "migration", VERIFY_PASS, "kubevirt-evacuation-x1 Succeeded: w1 -> w2");
  expect(&t, "uid", VERIFY_PASS, "u1, as --uid");
  expect(&t, "ready", VERIFY_PASS,
         "VMI phase Running, Ready=True; VirtualMachine vm-a: ready true, printableStatus Running");
  expect(&t, "old-launcher", VERIFY_PASS, "terminated on w1: virt-launcher-vm-a-old (Succeeded)");
}

/* a targeted move (docs/vm-safety.md): this descheduler's descheduler-move-* migration is the
 * one judged, and with --to the VMI must run on the node it was sent to */
static void test_targeted_move(void **state) {
  (void)state;
  good_state();
  MIG.name = "descheduler-move-x7k2p";
  MIG.asked_node = "w2";
  verify_target t = T;
  t.to = "w2";
  expect(&t, "migration", VERIFY_PASS, "descheduler-move-x7k2p Succeeded: w1 -> w2");
  expect(&t, "node", VERIFY_PASS, "the VMI runs on w2, where it was sent (--to), not on w1");
  t.to = "w3";
  expect(&t, "node", VERIFY_FAIL, "the VMI runs on w2, not on w3 (--to) where it was sent");
  assert_false(verify_passed(&RES));
  /* another prefix is not a move of either kind */
  MIG.name = "someone-elses";
  t.to = NULL;
  expect(&t, "migration", VERIFY_FAIL, "no kubevirt-evacuation-* or descheduler-move-* migration");
}

static void test_still_on_source(void **state) {
  (void)state;
  good_state();
  ST.node = "w1";
  MIG.phase = "Running";
  PODS[0].phase = "Running";
  expect(&T, "node", VERIFY_FAIL, "the VMI still runs on w1");
  expect(&T, "migration", VERIFY_FAIL, "kubevirt-evacuation-x1 is in phase Running, not finished");
  expect(&T, "old-launcher", VERIFY_FAIL, "virt-launcher-vm-a-old on w1 is still Running");
  assert_false(verify_settled(&RES));
}

static void test_migration_failed_or_missing(void **state) {
  (void)state;
  good_state();
  ST.node = "w1";
  MIG.phase = "Failed";
  MIG.failure_reason = "target pod was unschedulable for too long";
  expect(&T, "migration", VERIFY_FAIL,
         "kubevirt-evacuation-x1 Failed (target pod was unschedulable for too long)");
  /* not an evacuation (a user's migration), or from another node */
  good_state();
  MIG.name = "manual-move";
  expect(&T, "migration", VERIFY_FAIL,
         "no kubevirt-evacuation-* or descheduler-move-* migration of vms/vm-a from w1 (1 other migration of the VMI)");
  good_state();
  MIG.evacuation_node = MIG.source_node = "w3";
  expect(&T, "migration", VERIFY_FAIL, "no kubevirt-evacuation-* or descheduler-move-* migration");
  /* it moved on again since */
  good_state();
  ST.node = "w3";
  expect(&T, "migration", VERIFY_FAIL, "Succeeded to w2 but the VMI runs on w3");
}

static void test_newest_evacuation_is_judged(void **state) {
  (void)state;
  good_state();
  verify_migration two[2] = {MIG, MIG};
  two[0].name = "kubevirt-evacuation-old";
  two[0].phase = "Failed";
  two[0].created = MIG.created - 60;
  ST.migrations = two;
  ST.nmigrations = 2;
  expect(&T, "migration", VERIFY_PASS, "kubevirt-evacuation-x1 Succeeded");
  expect(&T, "migration", VERIFY_PASS,
         "; 1 earlier evacuation from w1 Failed (latest kubevirt-evacuation-old): migrations that "
         "repeat must be stopped");
  two[0].created = MIG.created + 60; /* the failed one is newer */
  expect(&T, "migration", VERIFY_FAIL, "kubevirt-evacuation-old Failed");
  /* KubeVirt's retry after a failure waits, Pending */
  two[0].created = MIG.created - 60;
  two[0].failure_reason = "target pod was unschedulable for too long";
  two[1].phase = "Pending";
  two[1].source_node = two[1].target_node = two[1].source_pod = two[1].target_pod = "";
  ST.node = "w1";
  expect(&T, "migration", VERIFY_FAIL,
         "kubevirt-evacuation-x1 is in phase Pending, not finished; 1 earlier evacuation from w1 "
         "Failed (latest kubevirt-evacuation-old: target pod was unschedulable for too long)");
  /* the migration names no launcher yet: the one on the source node is the evidence */
  PODS[0].phase = "Running";
  expect(&T, "uid", VERIFY_PASS, "the source node's launcher virt-launcher-vm-a-old");
}

static void test_uid(void **state) {
  (void)state;
  good_state();
  verify_target t = T;
  t.uid = "u0";
  ST.uid = "u2";
  expect(&t, "uid", VERIFY_FAIL, "the VMI's UID is u2, --uid was u0: the VMI was recreated");
  /* without --uid: the migration's source launcher records the VMI it ran */
  good_state();
  expect(&T, "uid", VERIFY_PASS,
         "u1: the migration's source launcher virt-launcher-vm-a-old was made for this same VMI");
  ST.uid = "u2";
  expect(&T, "uid", VERIFY_FAIL, "was made for VMI UID u1, the VMI's UID is now u2");
  /* the source pod is gone: the target pod is the evidence */
  good_state();
  ST.pods = PODS + 1;
  ST.npods = 1;
  expect(&T, "uid", VERIFY_PASS, "the migration's target launcher virt-launcher-vm-a-new");
  /* no launcher of the migration left: not checked, which is not a pass */
  ST.npods = 0;
  expect(&T, "uid", VERIFY_NOT_CHECKED, "pass --uid");
  assert_false(verify_passed(&RES));
  assert_true(verify_settled(&RES));
}

static void test_ready(void **state) {
  (void)state;
  good_state();
  ST.ready = 0;
  expect(&T, "ready", VERIFY_FAIL, "Ready=False");
  good_state();
  ST.vm_ready = 0;
  ST.vm_printable = "Migrating";
  expect(&T, "ready", VERIFY_FAIL, "VirtualMachine vm-a: ready false, printableStatus Migrating");
  good_state();
  ST.vm_found = false;
  expect(&T, "ready", VERIFY_PASS, "VirtualMachine vm-a not found");
  ST.vm_name = NULL;
  expect(&T, "ready", VERIFY_PASS, "no VirtualMachine owns the VMI");
  good_state();
  ST.vmi_found = false;
  expect(&T, "ready", VERIFY_FAIL, "no VMI");
  expect(&T, "node", VERIFY_FAIL, "VMI vms/vm-a not found");
}

static void test_old_launcher(void **state) {
  (void)state;
  good_state();
  PODS[0].deleting = true;
  PODS[0].phase = "Running";
  expect(&T, "old-launcher", VERIFY_FAIL, "still Running (terminating)");
  good_state();
  ST.npods = 1;
  ST.pods = PODS + 1; /* the old one was deleted */
  expect(&T, "old-launcher", VERIFY_PASS, "no launcher of the VMI left on w1");
}

/* ---------- the log ---------- */

#define LINE(time, pod)                                                                            \
  "I" time "   12345 framework.c:522] \"Eviction in background assumed\" pod=\"" pod "\"\n"

static void test_log_pairing_klog(void **state) {
  (void)state;
  const char *log = "I1201 10:48:50.000001   12345 run.c:1] \"Starting\"\n" LINE(
      "1201 10:40:00.000000", "vms/virt-launcher-vm-a-old")
      LINE("1201 10:48:54.123456", "vms/virt-launcher-vm-a-old")
          LINE("1201 10:48:54.200000", "vms/virt-launcher-vm-ab-zzzzz")
              LINE("1201 11:00:00.000000", "vms/virt-launcher-vm-a-old");
  verify_log_match m;
  int64_t created = at("2026-12-01T10:48:55Z");
  verify_log_pair(log, strlen(log), "vms", "vm-a", "virt-launcher-vm-a-old", created, &m);
  assert_true(m.found);
  assert_int_equal(m.candidates, 3);
  assert_int_equal(m.line_no, 3);
  assert_int_equal(m.sec, at("2026-12-01T10:48:54Z"));
  assert_int_equal(m.usec, 123456);
  assert_string_equal(m.pod, "vms/virt-launcher-vm-a-old");
  assert_true(m.delay_min > 0.876 && m.delay_min < 0.877);
  /* without the pod's name: any launcher of vm-a, not vm-ab's */
  verify_log_pair(log, strlen(log), "vms", "vm-a", NULL, created, &m);
  assert_int_equal(m.line_no, 3);
  assert_int_equal(m.candidates, 3);
  /* only a line after the migration: reported, with a negative delay */
  verify_log_pair(log, strlen(log), "vms", "vm-a", NULL, at("2026-12-01T10:30:00Z"), &m);
  assert_true(m.found);
  assert_int_equal(m.line_no, 2);
  assert_true(m.delay_min < 0);
  /* another namespace: nothing */
  verify_log_pair(log, strlen(log), "other", "vm-a", NULL, created, &m);
  assert_false(m.found);
}

static void test_log_year_from_migration(void **state) {
  (void)state;
  const char *log = LINE("1231 23:59:59.500000", "vms/virt-launcher-vm-a-old");
  verify_log_match m;
  verify_log_pair(log, strlen(log), "vms", "vm-a", NULL, at("2027-01-01T00:00:00Z"), &m);
  assert_true(m.found);
  assert_int_equal(m.sec, at("2026-12-31T23:59:59Z"));
  assert_true(m.delay_min > 0.49 && m.delay_min < 0.51);
}

static void test_log_json_lines(void **state) {
  (void)state;
  int64_t created = at("2026-12-01T10:48:55Z");
  char log[512];
  snprintf(
      log, sizeof log,
      "{\"ts\":%lld.5,\"caller\":\"framework.c:522\",\"msg\":\"Eviction in background "
      "assumed\",\"v\":3,\"pod\":{\"name\":\"virt-launcher-vm-a-old\",\"namespace\":\"vms\"}}\n"
      "not json {\n",
      (long long)created - 2);
  verify_log_match m;
  verify_log_pair(log, strlen(log), "vms", "vm-a", NULL, created, &m);
  assert_true(m.found);
  assert_int_equal(m.sec, created - 2);
  assert_int_equal(m.usec, 500000);
  assert_string_equal(m.pod, "vms/virt-launcher-vm-a-old");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_targeted_move),
      cmocka_unit_test(test_good_move_passes),
      cmocka_unit_test(test_still_on_source),
      cmocka_unit_test(test_migration_failed_or_missing),
      cmocka_unit_test(test_newest_evacuation_is_judged),
      cmocka_unit_test(test_uid),
      cmocka_unit_test(test_ready),
      cmocka_unit_test(test_old_launcher),
      cmocka_unit_test(test_log_pairing_klog),
      cmocka_unit_test(test_log_year_from_migration),
      cmocka_unit_test(test_log_json_lines),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
