/* cmd_explain.c - `descheduler explain NAMESPACE/NAME`: the decision record of one pod, in words.
 *
 * It runs exactly the cycle `descheduler simulate` runs (same flags, same snapshot and policy
 * or KubeDescheduler, same metrics files; simulate.c's simulate_run), then prints, instead of
 * the plan, what the cycle decided for that pod and why (framework/decisions.h): in words, or
 * with -o json|yaml as the record's data. */
#include "../framework/decisions.h"
#include "cli.h"
#include "explain.h"
#include "flags.h"

#include <stdio.h>
#include <string.h>

int cmd_explain(int argc, char **argv) {
  return simulate_run(argc, argv, "descheduler explain", true);
}

void explain_usage(FILE *out, const flag_def *defs) {
  cli_usage_head(out, "explain");
  fprintf(out, "\nRuns the cycle `descheduler simulate` runs and tells, in words, what it decided for\n"
               "one pod and why: its node's category and thresholds, then every event of the cycle\n"
               "(which plugin looked at it, which evictor rejected it with which checks, which limit\n"
               "stopped it, or the eviction). -o json|yaml gives the same record as data.\n\nFlags:\n");
  flags_usage(out, defs);
  cli_exit_status(out, "the pod is not in the snapshot");
}

/* explain: the record of one pod, found by namespace/name */
int explain_print(const model *m, const decisions *dec, const char *ref, const char *who,
                  output_format f) {
  const char *slash = strchr(ref, '/');
  size_t nslen = (size_t)(slash - ref);
  for (size_t i = 0; i < m->pods.n; i++) {
    const pod *p = m->pods.items[i];
    if (strlen(p->ns) == nslen && !strncmp(p->ns, ref, nslen) && !strcmp(p->name, slash + 1)) {
      strbuf sb = {0};
      int rc = 0;
      if (f == OUTPUT_TEXT) {
        decisions_explain(dec, p, &sb);
        fputs(sb_str(&sb), stdout);
      } else {
        decisions_explain_json(dec, p, &sb);
        rc = output_document(who, f, &sb, stdout) < 0 ? EXIT_FAILED : 0;
      }
      sb_free(&sb);
      return rc;
    }
  }
  fprintf(stderr, "%s: pod %s is not in the snapshot\n", who, ref);
  return 1;
}

