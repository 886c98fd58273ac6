/* cmd_verify.c - `descheduler verify`: flags, polling and printing; the pass rule is in
 * runbook/verify.c.
 *
 * Polls every second until every condition passes or --timeout expires (0: look once), then
 * prints each condition with what it saw. Exit 0 only when all pass; 1 otherwise (also when
 * the UID could not be checked); 2 for bad flags, kubeconfig or an unreadable --log file. */
#include "../runbook/verify.h"
#include "../kube/config.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"
#include "cli.h"
#include "flags.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void verify_usage(FILE *out, const void *ctx, const flag_def *defs) {
  (void)ctx;
  fprintf(out,
          "Usage: descheduler verify --vmi NAMESPACE/NAME --from NODE [--uid UID] [--timeout D]\n"
          "                          [--log FILE] [--kubeconfig FILE]\n\n"
          "Checks the runbook's pass rule for a VM the descheduler asked to move off NODE:\n"
          "  node          the VMI runs on another node than NODE;\n"
          "  migration     its newest kubevirt-evacuation-* migration from NODE Succeeded, with\n"
          "                NODE as source and the VMI's node as target;\n"
          "  uid           the VMI's UID is unchanged: equal to --uid (record it before the move:\n"
          "                kubectl get vmi NAME -n NS -o jsonpath='{.metadata.uid}'); without\n"
          "                --uid it is compared with the kubevirt.io/created-by label of the\n"
          "                migration's launcher pods, and is NOT CHECKED (a failure) when none is\n"
          "                left;\n"
          "  ready         the VMI is Running and Ready, and its VirtualMachine (if any) ready;\n"
          "  old-launcher  no launcher of the VMI still runs on NODE.\n"
          "It looks every second until all pass or --timeout expires. With --log (the\n"
          "descheduler's log, e.g. kubectl logs job/NAME > FILE) it pairs the migration with the\n"
          "\"Eviction in background assumed\" line of the VM's launcher and prints the delay;\n"
          "klog lines carry no year or zone: the migration's year and UTC are used.\n"
          "Exit 0 when every condition passes, 1 otherwise, 2 for bad flags.\n\nFlags:\n");
  flags_usage(out, defs);
}

static void print_result(const verify_result *r) {
  printf("%-13s %-11s %s\n", "CONDITION", "STATUS", "SEEN");
  for (int i = 0; i < VERIFY_NCONDITIONS; i++)
    printf("%-13s %-11s %s\n", r->c[i].name, verify_status_name(r->c[i].status), r->c[i].detail);
}

static void print_pairing(const char *log_path, const verify_target *t, const verify_result *r) {
  const verify_migration *m = r->migration;
  if (!m || !m->has_created) {
    printf("log: no kubevirt-evacuation-* migration of the VMI from %s to pair with\n", t->from);
    return;
  }
  size_t len = 0;
  char *text = read_file_text(log_path, &len);
  if (!text) {
    printf("log: %s can no longer be read\n", log_path);
    return;
  }
  verify_log_match lm;
  verify_log_pair(text, len, t->ns, t->name, m->source_pod, m->created, &lm);
  free(text);
  strbuf when = {0};
  time_format_rfc3339(&when, m->created);
  if (!lm.found) {
    printf("log: no \"Eviction in background assumed\" line for %s/%s in %s (migration %s "
           "created %s); the log needs --v=3 and EvictionsInBackground\n",
           t->ns, *m->source_pod ? m->source_pod : "virt-launcher-*", log_path, m->name,
           sb_str(&when));
  } else {
    strbuf at = {0};
    time_format_rfc3339(&at, lm.sec);
    double lo = lm.delay_min, hi = lm.delay_min + 1;
    char delay[128];
    if (hi < -VERIFY_ANSWER_SLACK_S)
      snprintf(delay, sizeof delay,
               "the line is %.3fs after the migration's creation: not its request", -hi);
    else if (hi < 0) /* the line follows KubeVirt's answer, which follows the creation */
      snprintf(delay, sizeof delay,
               "created %.3f-%.3fs before the line, which follows KubeVirt's answer (creation "
               "times have whole seconds)",
               -hi, -lo);
    else
      snprintf(delay, sizeof delay, "%.3f-%.3fs after the line (creation times have whole seconds)",
               lo > 0 ? lo : 0, hi);
    printf("log: %s line %zu \"Eviction in background assumed\" pod=\"%s\" at %.19s.%06dZ; "
           "migration %s created %s, %s\n",
           log_path, lm.line_no, lm.pod, sb_str(&at), (int)lm.usec, m->name, sb_str(&when), delay);
    sb_free(&at);
  }
  sb_free(&when);
}

int cmd_verify(int argc, char **argv) {
  const char *kubeconfig = NULL, *vmi = NULL, *from = NULL, *uid = NULL, *log_path = NULL;
  int64_t timeout = 300LL * 1000000000LL;
  flag_def defs[] = {
      {"vmi", NULL, FLAG_STRING, &vmi, "the VMI that was asked to move: NAMESPACE/NAME", NULL},
      {"from", NULL, FLAG_STRING, &from, "the node it was evicted from", NULL},
      {"uid", NULL, FLAG_STRING, &uid, "the VMI's UID recorded before the move", NULL},
      {"timeout", NULL, FLAG_DURATION, &timeout,
       "how long to wait for every condition; 0 = look once", "5m"},
      {"log", NULL, FLAG_STRING, &log_path,
       "the descheduler's log, to pair the migration with its request", NULL},
      {"kubeconfig", NULL, FLAG_STRING, &kubeconfig, "kubeconfig file; empty = in-cluster config",
       NULL},
      {NULL}};
  dserr err;
  int rc = flags_parse_command("verify", defs, argc, argv, verify_usage, NULL);
  if (rc != FLAGS_RUN)
    return rc;
  const char *slash = vmi ? strchr(vmi, '/') : NULL;
  if (!vmi || !slash || slash == vmi || !slash[1] || strchr(slash + 1, '/')) {
    fprintf(stderr, "descheduler verify: --vmi: expected NAMESPACE/NAME, got \"%s\"\n",
            vmi ? vmi : "");
    return EXIT_CONFIG;
  }
  if (!from || !*from) {
    fprintf(stderr, "descheduler verify: --from NODE is required\n");
    return EXIT_CONFIG;
  }
  if (timeout < 0) {
    fprintf(stderr, "descheduler verify: --timeout must not be negative\n");
    return EXIT_CONFIG;
  }
  if (uid && !*uid)
    uid = NULL;
  if (log_path) {
    FILE *f = fopen(log_path, "rb");
    if (!f) {
      fprintf(stderr, "descheduler verify: --log: cannot read %s\n", log_path);
      return EXIT_CONFIG;
    }
    fclose(f);
  }
  char ns[256];
  snprintf(ns, sizeof ns, "%.*s", (int)(slash - vmi), vmi);
  verify_target t = {ns, slash + 1, from, uid};

  kube_config *cfg;
  kube_client *c = cli_connect("verify", kubeconfig, &cfg);
  if (!c)
    return EXIT_CONFIG;
  strbuf d = {0};
  duration_format(&d, timeout);
  printf("Verifying that VMI %s/%s moved off %s (every 1s, timeout %s)\n", t.ns, t.name, from,
         sb_str(&d));
  fflush(stdout);
  sb_free(&d);

  struct timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  verify_result res;
  verify_state st = {0};
  bool have = false;
  char last_wait[800] = "";
  for (;;) {
    verify_state next = {0};
    if (verify_read(c, &t, &next, &err) == 0) {
      verify_state_free(&st);
      st = next;
      verify_evaluate(&st, &t, &res);
      have = true;
      if (verify_passed(&res) || verify_settled(&res))
        break;
      for (int i = 0; i < VERIFY_NCONDITIONS; i++)
        if (res.c[i].status == VERIFY_FAIL) {
          char now[800];
          snprintf(now, sizeof now, "%s: %s", res.c[i].name, res.c[i].detail);
          if (strcmp(now, last_wait)) {
            fprintf(stderr, "waiting: %s\n", now);
            snprintf(last_wait, sizeof last_wait, "%s", now);
          }
          break;
        }
    } else {
      verify_state_free(&next);
      fprintf(stderr, "descheduler verify: cannot read: %s\n", err.msg);
    }
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t spent =
        (int64_t)(now.tv_sec - start.tv_sec) * 1000000000LL + (now.tv_nsec - start.tv_nsec);
    if (spent + 1000000000LL > timeout)
      break;
    struct timespec sec = {1, 0};
    nanosleep(&sec, NULL);
  }
  int status = 1;
  if (!have) {
    printf("not verified: the cluster could not be read (%s)\n", err.msg);
  } else {
    print_result(&res);
    if (log_path)
      print_pairing(log_path, &t, &res);
    if (verify_passed(&res)) {
      printf("verified: %s/%s moved from %s to %s by live migration\n", t.ns, t.name, from,
             st.node);
      status = 0;
    } else {
      int failed = 0, unchecked = 0;
      for (int i = 0; i < VERIFY_NCONDITIONS; i++) {
        failed += res.c[i].status == VERIFY_FAIL;
        unchecked += res.c[i].status == VERIFY_NOT_CHECKED;
      }
      printf("not verified: %d condition%s failed, %d not checked\n", failed,
             failed == 1 ? "" : "s", unchecked);
    }
  }
  verify_state_free(&st);
  kube_client_free(c);
  kube_config_free(cfg);
  return status;
}
