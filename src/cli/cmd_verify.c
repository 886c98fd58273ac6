/* cmd_verify.c - `descheduler verify`: flags, polling and printing; the pass rule is in
 * runbook/verify.c.
 *
 * Polls every second until every condition passes or --timeout expires (0: look once), then
 * prints each condition with what it saw (-o text), or the same as one document (-o json|yaml;
 * the progress lines then go to stderr). Exit 0 only when all pass; 1 otherwise (also when the
 * UID could not be checked, or the cluster could not be read); 2 for bad flags, kubeconfig or
 * an unreadable --log file. */
#include "../runbook/verify.h"
#include "../kube/config.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"
#include "cli.h"
#include "flags.h"
#include "output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void verify_usage(FILE *out, const void *ctx, const flag_def *defs) {
  (void)ctx;
  cli_usage_head(out, "verify");
  fprintf(out,
          "\nChecks the runbook's pass rule for a VM the descheduler asked to move off NODE:\n"
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
          "klog lines carry no year or zone: the migration's year and UTC are used.\n\nFlags:\n");
  flags_usage(out, defs);
  cli_exit_status(out, "a condition failed or could not be checked, or the cluster could not be read");
}

static void print_result(const verify_result *r) {
  printf("%-13s %-11s %s\n", "CONDITION", "STATUS", "SEEN");
  for (int i = 0; i < VERIFY_NCONDITIONS; i++)
    printf("%-13s %-11s %s\n", r->c[i].name, verify_status_name(r->c[i].status), r->c[i].detail);
}

/* What --log says about the move, one line without a newline (`log: ` before it in text). */
static void pairing(strbuf *out, const char *log_path, const verify_target *t,
                    const verify_result *r) {
  const verify_migration *m = r->migration;
  if (!m || !m->has_created) {
    sb_printf(out, "no kubevirt-evacuation-* migration of the VMI from %s to pair with", t->from);
    return;
  }
  size_t len = 0;
  char *text = read_file_text(log_path, &len);
  if (!text) {
    sb_printf(out, "%s can no longer be read", log_path);
    return;
  }
  verify_log_match lm;
  verify_log_pair(text, len, t->ns, t->name, m->source_pod, m->created, &lm);
  free(text);
  strbuf when = {0};
  time_format_rfc3339(&when, m->created);
  if (!lm.found) {
    sb_printf(out,
              "no \"Eviction in background assumed\" line for %s/%s in %s (migration %s "
              "created %s); the log needs --v=3 and EvictionsInBackground",
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
    sb_printf(out,
              "%s line %zu \"Eviction in background assumed\" pod=\"%s\" at %.19s.%06dZ; "
              "migration %s created %s, %s",
              log_path, lm.line_no, lm.pod, sb_str(&at), (int)lm.usec, m->name, sb_str(&when),
              delay);
    sb_free(&at);
  }
  sb_free(&when);
}

/* The outcome as one document: {"vmi", "from", "verified", "node", "conditions": [{"name",
 * "status", "seen"}], "log", "error"} (node, log and error when they apply). */
static void result_json(strbuf *sb, const verify_target *t, const char *vmi, bool have,
                        const verify_state *st, const verify_result *res, const char *log_path,
                        const char *read_error) {
  sb_append(sb, "{\"vmi\":");
  sb_append_json_str(sb, vmi);
  sb_append(sb, ",\"from\":");
  sb_append_json_str(sb, t->from);
  if (t->to) {
    sb_append(sb, ",\"to\":");
    sb_append_json_str(sb, t->to);
  }
  sb_printf(sb, ",\"verified\":%s", have && verify_passed(res) ? "true" : "false");
  if (!have) {
    sb_append(sb, ",\"error\":");
    sb_append_json_str(sb, read_error);
    sb_appendc(sb, '}');
    return;
  }
  if (st->node) {
    sb_append(sb, ",\"node\":");
    sb_append_json_str(sb, st->node);
  }
  sb_append(sb, ",\"conditions\":[");
  for (int i = 0; i < VERIFY_NCONDITIONS; i++) {
    sb_append(sb, i ? ",{\"name\":" : "{\"name\":");
    sb_append_json_str(sb, res->c[i].name);
    sb_append(sb, ",\"status\":");
    sb_append_json_str(sb, verify_status_name(res->c[i].status));
    sb_append(sb, ",\"seen\":");
    sb_append_json_str(sb, res->c[i].detail);
    sb_appendc(sb, '}');
  }
  sb_appendc(sb, ']');
  if (log_path) {
    strbuf line = {0};
    pairing(&line, log_path, t, res);
    sb_append(sb, ",\"log\":");
    sb_append_json_str(sb, sb_str(&line));
    sb_free(&line);
  }
  sb_appendc(sb, '}');
}

int cmd_verify(int argc, char **argv) {
  const char *kubeconfig = NULL, *context = NULL, *vmi = NULL, *from = NULL, *uid = NULL, *log_path = NULL;
  const char *to = NULL, *ns_flag = NULL;
  const char *output = "text";
  int64_t timeout = 300LL * 1000000000LL;
  flag_def defs[] = {
      {"vmi", NULL, FLAG_STRING, &vmi,
       "the VMI that was asked to move: NAMESPACE/NAME, or NAME with --namespace", NULL},
      {"namespace", "n", FLAG_STRING, &ns_flag, "the VMI's namespace (as kubectl's -n)", NULL},
      {"from", NULL, FLAG_STRING, &from, "the node it was evicted from", NULL},
      {"uid", NULL, FLAG_STRING, &uid, "the VMI's UID recorded before the move", NULL},
      {"to", NULL, FLAG_STRING, &to,
       "a targeted move: the node it was sent to (the plan's \"to\"); the VMI must run there",
       NULL},
      {"timeout", NULL, FLAG_DURATION, &timeout,
       "how long to wait for every condition; 0 = look once", NULL},
      {"log", NULL, FLAG_STRING, &log_path,
       "the descheduler's log, to pair the migration with its request", NULL},
      FLAG_DEF_KUBECONFIG_KUBECTL(&kubeconfig), FLAG_DEF_CONTEXT(&context),
      FLAG_DEF_OUTPUT(&output),
      {NULL}};
  dserr err;
  int rc = flags_parse_command("verify", defs, argc, argv, verify_usage, NULL);
  if (rc != FLAGS_RUN)
    return rc;
  output_format format;
  if (output_parse("descheduler verify", output, &format) < 0)
    return EXIT_CONFIG;
  /* with -o json|yaml, stdout holds the document alone */
  FILE *progress = format == OUTPUT_TEXT ? stdout : stderr;
  /* -n NS --vmi NAME is --vmi NS/NAME; a namespace given both ways must agree */
  char joined[512];
  if (ns_flag && *ns_flag && vmi && *vmi && !strchr(vmi, '/')) {
    snprintf(joined, sizeof joined, "%s/%s", ns_flag, vmi);
    vmi = joined;
  } else if (ns_flag && *ns_flag && vmi && strchr(vmi, '/') &&
             (strncmp(vmi, ns_flag, strlen(ns_flag)) || vmi[strlen(ns_flag)] != '/')) {
    fprintf(stderr, "descheduler verify: --vmi %s is not in --namespace %s\n", vmi, ns_flag);
    return EXIT_CONFIG;
  }
  const char *slash = vmi ? strchr(vmi, '/') : NULL;
  if (!vmi || !slash || slash == vmi || !slash[1] || strchr(slash + 1, '/')) {
    fprintf(stderr,
            "descheduler verify: --vmi: expected NAMESPACE/NAME (or NAME with -n NAMESPACE), "
            "got \"%s\"\n",
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
  if (to && !*to)
    to = NULL;
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
  verify_target t = {ns, slash + 1, from, uid, to};

  kube_config *cfg;
  kube_client *c = cli_connect("verify", kubeconfig, context, &cfg);
  if (!c)
    return EXIT_CONFIG;
  strbuf d = {0};
  duration_format(&d, timeout);
  fprintf(progress, "Verifying that VMI %s/%s moved off %s (every 1s, timeout %s)\n", t.ns,
          t.name, from, sb_str(&d));
  fflush(progress);
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
  int status = EXIT_FAILED;
  if (format != OUTPUT_TEXT) {
    strbuf doc = {0};
    result_json(&doc, &t, vmi, have, &st, &res, log_path, err.msg);
    output_document("descheduler verify", format, &doc, stdout);
    sb_free(&doc);
    if (have && verify_passed(&res))
      status = 0;
  } else if (!have) {
    printf("not verified: the cluster could not be read (%s)\n", err.msg);
  } else {
    print_result(&res);
    if (log_path) {
      strbuf line = {0};
      pairing(&line, log_path, &t, &res);
      printf("log: %s\n", sb_str(&line));
      sb_free(&line);
    }
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
