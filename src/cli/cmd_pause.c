/* cmd_pause.c - `descheduler pause` and `descheduler resume`: flags and printing; the decisions
 * are in runbook/pause.c.
 *
 * pause: suspends the CronJob (or scales the Deployment to 0), then lists the migrations still
 * running, so the operator knows what to wait for; exit 0. resume: refuses (exit 1) while any
 * VirtualMachineInstanceMigration is neither Succeeded nor Failed, listing them; else undoes
 * the pause. There is no --force (see the help text). Exit 2 for bad flags or kubeconfig; 1
 * when the cluster cannot be read or the descheduler's object is missing or ambiguous. */
#include "../runbook/pause.h"
#include "../kube/cluster.h"
#include "../kube/config.h"
#include "cli.h"
#include "flags.h"

#include <stdio.h>
#include <string.h>

static void pause_usage(FILE *out, const void *ctx, const flag_def *defs) {
  bool resume = *(const bool *)ctx;
  if (!resume)
    fprintf(out,
            "Usage: descheduler pause [--namespace NS] [--kubeconfig FILE]\n\n"
            "Stops the descheduler: suspends its CronJob (spec.suspend: true; a Job already\n"
            "running goes on) or scales its Deployment to 0, keeping the replica count in the\n"
            "annotation " PAUSE_REPLICAS_ANNOTATION " for resume. The object is the one\n"
            "CronJob or Deployment labelled " PAUSE_SELECTOR " (in --namespace, else in any\n"
            "namespace). Then it lists the VirtualMachineInstanceMigrations not yet finished:\n"
            "resume waits for them.\n\nFlags:\n");
  else
    fprintf(out,
            "Usage: descheduler resume [--namespace NS] [--kubeconfig FILE]\n\n"
            "Undoes `descheduler pause` once every VirtualMachineInstanceMigration of the\n"
            "cluster is Succeeded or Failed. While one is pending or running it refuses and lists\n"
            "them (exit 1), as the runbook prescribes: a descheduler run on top of queued\n"
            "migrations requests more evacuations, and migrations that repeat or stay pending\n"
            "must be understood and stopped first. There is deliberately no --force: wait for\n"
            "the migrations, or delete the ones you mean to abandon (kubectl delete vmim), then\n"
            "resume.\n\nFlags:\n");
  flags_usage(out, defs);
}

static void print_migrations(const pause_migration *const *ms, size_t n) {
  printf("  %-20s %-36s %-24s %s\n", "NAMESPACE", "NAME", "VMI", "PHASE");
  for (size_t i = 0; i < n; i++)
    printf("  %-20s %-36s %-24s %s\n", ms[i]->ns, ms[i]->name, ms[i]->vmi,
           *ms[i]->phase ? ms[i]->phase : "(none yet)");
}

static int pause_or_resume(int argc, char **argv, bool resume) {
  const char *cmd = resume ? "resume" : "pause";
  const char *kubeconfig = NULL, *ns = NULL;
  flag_def defs[] = {
      {"namespace", "n", FLAG_STRING, &ns, "the descheduler's namespace", "every namespace"},
      {"kubeconfig", NULL, FLAG_STRING, &kubeconfig, "kubeconfig file; empty = in-cluster config",
       NULL},
      {NULL}};
  dserr err;
  int rc = flags_parse_command(cmd, defs, argc, argv, pause_usage, &resume);
  if (rc != FLAGS_RUN)
    return rc;
  if (ns && !*ns)
    ns = NULL;
  kube_config *cfg;
  kube_client *c = cli_connect(cmd, kubeconfig, &cfg);
  if (!c)
    return EXIT_CONFIG;
  int status = 1;
  pause_state st = {0};
  strbuf path = {0}, patch = {0}, done = {0};
  char why[1024];
  if (pause_read_workloads(c, ns, &st, &err) < 0) {
    fprintf(stderr, "descheduler %s: %s\n", cmd, err.msg);
    goto out;
  }
  const pause_workload *w = pause_target(&st, ns, &err);
  if (!w) {
    fprintf(stderr, "descheduler %s: %s\n", cmd, err.msg);
    goto out;
  }
  bool migrations_read = pause_read_migrations(c, &st, &err) == 0;
  size_t nun = 0;
  const pause_migration **un = migrations_read ? pause_unfinished(&st, &nun) : NULL;
  if (resume) {
    if (!migrations_read) {
      fprintf(stderr,
              "descheduler resume: refusing: cannot tell whether migrations are still running: "
              "%s\n",
              err.msg);
      goto out;
    }
    if (nun) {
      printf("Refusing to resume: %zu VirtualMachineInstanceMigration%s %s not finished (neither "
             "Succeeded nor Failed):\n",
             nun, nun == 1 ? "" : "s", nun == 1 ? "is" : "are");
      print_migrations(un, nun);
      printf("Wait for them (kubectl get vmim -A), or delete the ones to abandon, then resume.\n");
      goto out;
    }
  }
  switch (pause_plan(w, resume, &path, &patch, &done, why, sizeof why)) {
  case PAUSE_NOTHING: printf("%s: nothing to do\n", why); break;
  case PAUSE_REFUSE: fprintf(stderr, "descheduler %s: %s\n", cmd, why); goto out;
  case PAUSE_PATCH:
    if (kube_merge_patch(c, sb_str(&path), sb_str(&patch), &err) < 0) {
      fprintf(stderr, "descheduler %s: %s\n", cmd, err.msg);
      goto out;
    }
    printf("%s %s\n", resume ? "Resumed" : "Paused", sb_str(&done));
    break;
  }
  if (!resume) {
    for (size_t i = 0; i < w->nactive; i++)
      printf("Job %s/%s started before the pause is still running (suspend stops new runs only)\n",
             w->ns, w->active[i]);
    if (!migrations_read)
      printf("The migrations could not be listed: %s\n", err.msg);
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
