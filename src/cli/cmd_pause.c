/* cmd_pause.c - `descheduler pause` and `descheduler resume`: flags and printing; the decisions
 * are in runbook/pause.c.
 *
 * pause: suspends the CronJob (or scales the Deployment to 0), then lists the migrations still
 * running, so the operator knows what to wait for; exit 0. resume: refuses (exit 1) while any
 * VirtualMachineInstanceMigration is neither Succeeded nor Failed, listing them; else undoes
 * the pause. There is no --force (see the help text). --dry-run reads the same and says what
 * would change, changing nothing. -o json|yaml prints what was read and done as one document
 * instead of the lines. Exit 2 for bad flags or kubeconfig; 1 when the cluster cannot be read,
 * the descheduler's object is missing or ambiguous, or resume refuses. */
#include "../runbook/pause.h"
#include "../kube/cluster.h"
#include "../kube/config.h"
#include "cli.h"
#include "flags.h"
#include "output.h"

#include <stdio.h>
#include <string.h>

static void pause_usage(FILE *out, const void *ctx, const flag_def *defs) {
  bool resume = *(const bool *)ctx;
  cli_usage_head(out, resume ? "resume" : "pause");
  if (!resume)
    fprintf(out,
            "\nStops the descheduler: suspends its CronJob (spec.suspend: true; a Job already\n"
            "running goes on) or scales its Deployment to 0, keeping the replica count in the\n"
            "annotation " PAUSE_REPLICAS_ANNOTATION " for resume. The object is the one\n"
            "CronJob or Deployment labelled " PAUSE_SELECTOR " (in --namespace, else in any\n"
            "namespace). Then it lists the VirtualMachineInstanceMigrations not yet finished:\n"
            "resume waits for them. --dry-run says what would change and changes nothing.\n\n"
            "Flags:\n");
  else
    fprintf(out,
            "\nUndoes `descheduler pause` once every VirtualMachineInstanceMigration of the\n"
            "cluster is Succeeded or Failed. While one is pending or running it refuses and lists\n"
            "them (exit 1), as the runbook prescribes: a descheduler run on top of queued\n"
            "migrations requests more evacuations, and migrations that repeat or stay pending\n"
            "must be understood and stopped first. There is deliberately no --force: wait for\n"
            "the migrations, or delete the ones you mean to abandon (kubectl delete vmim), then\n"
            "resume. --dry-run says what would change and changes nothing.\n\nFlags:\n");
  flags_usage(out, defs);
  cli_exit_status(out, resume ? "a migration is not finished (refused), the descheduler's object "
                                "is missing\nor ambiguous, or the cluster could not be read"
                              : "the descheduler's object is missing or ambiguous, or the cluster "
                                "could not be read");
}

static void print_migrations(const pause_migration *const *ms, size_t n) {
  printf("  %-20s %-36s %-24s %s\n", "NAMESPACE", "NAME", "VMI", "PHASE");
  for (size_t i = 0; i < n; i++)
    printf("  %-20s %-36s %-24s %s\n", ms[i]->ns, ms[i]->name, ms[i]->vmi,
           *ms[i]->phase ? ms[i]->phase : "(none yet)");
}

/* What a pause or resume read and did, for -o json|yaml. */
typedef struct {
  const char *cmd;
  bool dry_run;
  const pause_workload *w;  /* NULL when none could be chosen */
  const char *action;       /* "patched", "would-patch", "nothing", "refused" */
  const char *detail;       /* what changed (would change), or why nothing or why refused */
  const char *patch;        /* the merge patch, with an action that patches */
  bool migrations_read;
  const char *migrations_error;
  bool kubevirt_served;
  const pause_migration *const *unfinished;
  size_t nunfinished;
  const char *error; /* the cluster could not be read, or no object to act on */
} pause_report;

static void report_json(strbuf *sb, const pause_report *r) {
  sb_append(sb, "{\"command\":");
  sb_append_json_str(sb, r->cmd);
  sb_printf(sb, ",\"dryRun\":%s", r->dry_run ? "true" : "false");
  if (r->error) {
    sb_append(sb, ",\"error\":");
    sb_append_json_str(sb, r->error);
  }
  if (r->w) {
    sb_append(sb, ",\"object\":{\"kind\":");
    sb_append_json_str(sb, r->w->kind);
    sb_append(sb, ",\"namespace\":");
    sb_append_json_str(sb, r->w->ns);
    sb_append(sb, ",\"name\":");
    sb_append_json_str(sb, r->w->name);
    sb_append(sb, ",\"activeJobs\":[");
    for (size_t i = 0; i < r->w->nactive; i++) {
      sb_append(sb, i ? "," : "");
      sb_append_json_str(sb, r->w->active[i]);
    }
    sb_append(sb, "]}");
  }
  if (r->action) {
    sb_append(sb, ",\"action\":");
    sb_append_json_str(sb, r->action);
    sb_append(sb, ",\"detail\":");
    sb_append_json_str(sb, r->detail ? r->detail : "");
  }
  if (r->patch) {
    sb_append(sb, ",\"patch\":");
    sb_append(sb, r->patch); /* a JSON document already */
  }
  if (r->w && !r->error) {
    sb_printf(sb, ",\"migrations\":{\"listed\":%s", r->migrations_read ? "true" : "false");
    if (!r->migrations_read) {
      sb_append(sb, ",\"error\":");
      sb_append_json_str(sb, r->migrations_error ? r->migrations_error : "");
    } else {
      sb_printf(sb, ",\"kubevirtServed\":%s,\"unfinished\":[",
                r->kubevirt_served ? "true" : "false");
      for (size_t i = 0; i < r->nunfinished; i++) {
        const pause_migration *m = r->unfinished[i];
        sb_append(sb, i ? ",{\"namespace\":" : "{\"namespace\":");
        sb_append_json_str(sb, m->ns);
        sb_append(sb, ",\"name\":");
        sb_append_json_str(sb, m->name);
        sb_append(sb, ",\"vmi\":");
        sb_append_json_str(sb, m->vmi);
        sb_append(sb, ",\"phase\":");
        sb_append_json_str(sb, m->phase);
        sb_appendc(sb, '}');
      }
      sb_appendc(sb, ']');
    }
    sb_appendc(sb, '}');
  }
  sb_appendc(sb, '}');
}

static int pause_or_resume(int argc, char **argv, bool resume) {
  const char *cmd = resume ? "resume" : "pause";
  const char *who = resume ? "descheduler resume" : "descheduler pause";
  const char *kubeconfig = NULL, *context = NULL, *ns = NULL, *output = "text";
  bool dry_run = false;
  flag_def defs[] = {
      {"namespace", "n", FLAG_STRING, &ns, "the descheduler's namespace", "every namespace"},
      FLAG_DEF_KUBECONFIG_KUBECTL(&kubeconfig), FLAG_DEF_CONTEXT(&context),
      {"dry-run", NULL, FLAG_BOOL, &dry_run, "say what would change, change nothing", NULL},
      FLAG_DEF_OUTPUT(&output),
      {NULL}};
  dserr err;
  int rc = flags_parse_command(cmd, defs, argc, argv, pause_usage, &resume);
  if (rc != FLAGS_RUN)
    return rc;
  output_format format;
  if (output_parse(who, output, &format) < 0)
    return EXIT_CONFIG;
  bool text = format == OUTPUT_TEXT;
  if (ns && !*ns)
    ns = NULL;
  kube_config *cfg;
  kube_client *c = cli_connect(cmd, kubeconfig, context, &cfg);
  if (!c)
    return EXIT_CONFIG;
  int status = EXIT_FAILED;
  pause_state st = {0};
  strbuf path = {0}, patch = {0}, done = {0};
  char why[1024];
  pause_report rep = {cmd, dry_run};
  if (pause_read_workloads(c, ns, &st, &err) < 0) {
    fprintf(stderr, "%s: %s\n", who, err.msg);
    rep.error = err.msg;
    goto out;
  }
  const pause_workload *w = pause_target(&st, ns, &err);
  if (!w) {
    fprintf(stderr, "%s: %s\n", who, err.msg);
    rep.error = err.msg;
    goto out;
  }
  rep.w = w;
  dserr merr;
  bool migrations_read = pause_read_migrations(c, &st, &merr) == 0;
  size_t nun = 0;
  const pause_migration **un = migrations_read ? pause_unfinished(&st, &nun) : NULL;
  rep.migrations_read = migrations_read;
  rep.migrations_error = migrations_read ? NULL : merr.msg;
  rep.kubevirt_served = st.kubevirt_served;
  rep.unfinished = un;
  rep.nunfinished = nun;
  if (resume) {
    if (!migrations_read) {
      fprintf(stderr,
              "descheduler resume: refusing: cannot tell whether migrations are still running: "
              "%s\n",
              merr.msg);
      rep.action = "refused";
      rep.detail = "cannot tell whether migrations are still running";
      goto out;
    }
    if (nun) {
      rep.action = "refused";
      rep.detail = "migrations are not finished (neither Succeeded nor Failed)";
      if (text) {
        printf("Refusing to resume: %zu VirtualMachineInstanceMigration%s %s not finished "
               "(neither Succeeded nor Failed):\n",
               nun, nun == 1 ? "" : "s", nun == 1 ? "is" : "are");
        print_migrations(un, nun);
        printf("Wait for them (kubectl get vmim -A), or delete the ones to abandon, then "
               "resume.\n");
      }
      goto out;
    }
  }
  switch (pause_plan(w, resume, &path, &patch, &done, why, sizeof why)) {
  case PAUSE_NOTHING:
    rep.action = "nothing";
    rep.detail = why;
    if (text)
      printf("%s: nothing to do\n", why);
    break;
  case PAUSE_REFUSE:
    rep.action = "refused";
    rep.detail = why;
    fprintf(stderr, "%s: %s\n", who, why);
    goto out;
  case PAUSE_PATCH:
    rep.detail = sb_str(&done);
    rep.patch = sb_str(&patch);
    if (dry_run) {
      rep.action = "would-patch";
      if (text)
        printf("Dry run: would %s %s\n  merge patch %s: %s\n", cmd, sb_str(&done), sb_str(&path),
               sb_str(&patch));
      break;
    }
    if (kube_merge_patch(c, sb_str(&path), sb_str(&patch), &err) < 0) {
      fprintf(stderr, "%s: %s\n", who, err.msg);
      rep.error = err.msg;
      goto out;
    }
    rep.action = "patched";
    if (text)
      printf("%s %s\n", resume ? "Resumed" : "Paused", sb_str(&done));
    break;
  }
  if (!resume && text) {
    for (size_t i = 0; i < w->nactive; i++)
      printf("Job %s/%s started before the pause is still running (suspend stops new runs only)\n",
             w->ns, w->active[i]);
    if (!migrations_read)
      printf("The migrations could not be listed: %s\n", merr.msg);
    else if (!st.kubevirt_served)
      printf("KubeVirt is not served: no migrations to wait for.\n");
    else if (!nun)
      printf("No migration is running: `descheduler resume` may run at any time.\n");
    else {
      printf("%zu migration%s not finished: `descheduler resume` waits until %s Succeeded or "
             "Failed:\n",
             nun, nun == 1 ? " is" : "s are", nun == 1 ? "it is" : "each is");
      print_migrations(un, nun);
    }
  }
  status = 0;
out:
  if (!text) {
    strbuf doc = {0};
    report_json(&doc, &rep);
    output_document(who, format, &doc, stdout);
    sb_free(&doc);
  }
  sb_free(&path);
  sb_free(&patch);
  sb_free(&done);
  pause_state_free(&st);
  kube_client_free(c);
  kube_config_free(cfg);
  return status;
}

int cmd_pause(int argc, char **argv) {
  return pause_or_resume(argc, argv, false);
}
int cmd_resume(int argc, char **argv) {
  return pause_or_resume(argc, argv, true);
}
