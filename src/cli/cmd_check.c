/* cmd_check.c - `descheduler check`: flags and printing; the items are in runbook/check.c.
 *
 * Exit 0 when no item fails (warnings allowed), 1 when one fails or the cluster cannot be
 * read, 2 for bad flags or kubeconfig. */
#include "../runbook/check.h"
#include "../kube/config.h"
#include "../kube/pager.h"
#include "../obs/log.h"
#include "cli.h"
#include "flags.h"
#include "output.h"

#include <stdio.h>
#include <string.h>

static void check_usage(FILE *out, const void *ctx, const flag_def *defs) {
  (void)ctx;
  cli_usage_head(out, "check");
  fprintf(
      out,
      "\nRuns the VM rebalancing runbook's compatibility checks against the cluster and prints\n"
      "one row per item (PASS, WARN or FAIL, the object read, what was seen):\n"
      "  the ConfigMap labelled " CHECK_APP_LABEL " and its policy.yaml (a field the\n"
      "    descheduler ignores, as upstream does, is a warning naming it);\n"
      "  the CronJob or Deployment running the descheduler and its flags\n"
      "    (--feature-gates=EvictionsInBackground=true, --v=3, --policy-config-file);\n"
      "  a KubeDescheduler CR, rendered as the OpenShift operator would;\n"
      "  KubeVirt's and HCO's eviction strategy and migration limits;\n"
      "  running VMIs whose recorded strategy differs from the cluster default, that cannot\n"
      "    live-migrate, or whose strategy is External;\n"
      "  DefaultEvictor protections that keep every VM in place (local storage, PVCs);\n"
      "  one simulated cycle of the policy (VMSafety's requireLiveMigration off, as upstream)\n"
      "    and every launcher it would evict whose VM would stop.\n"
      "Nothing is written to the cluster.\n\nFlags:\n");
  flags_usage(out, defs);
  cli_exit_status(out, "an item fails (warnings do not) or the cluster could not be read");
}

int cmd_check(int argc, char **argv) {
  const char *kubeconfig = NULL, *context = NULL, *ns = NULL, *output = "text";
  long long v = 0, page = KUBE_LIST_PAGE_SIZE_DEFAULT;
  flag_def defs[] = {FLAG_DEF_KUBECONFIG_KUBECTL(&kubeconfig), FLAG_DEF_CONTEXT(&context),
                     {"namespace", "n", FLAG_STRING, &ns,
                      "look for the ConfigMap and CronJob/Deployment only here", "every namespace"},
                     FLAG_DEF_OUTPUT(&output),
                     {"v", "v", FLAG_INT, &v,
                      "also write the simulated cycle's log (klog) to stderr at this verbosity",
                      "no log"},
                     {"list-page-size", NULL, FLAG_INT, &page, "objects per LIST page", NULL},
                     {NULL}};
  dserr err;
  int rc = flags_parse_command("check", defs, argc, argv, check_usage, NULL);
  if (rc != FLAGS_RUN)
    return rc;
  output_format format;
  if (output_parse("descheduler check", output, &format) < 0)
    return EXIT_CONFIG;
  if (page < 1) {
    fprintf(stderr, "descheduler check: --list-page-size must be at least 1\n");
    return EXIT_CONFIG;
  }
  if (ns && !*ns)
    ns = NULL;
  FILE *devnull = NULL;
  if (flags_find(defs, "v")->seen) {
    log_set_verbosity((int)v);
  } else {
    devnull = fopen("/dev/null", "w");
    log_set_stream(devnull);
  }
  kube_config *cfg;
  kube_client *c = cli_connect("check", kubeconfig, context, &cfg);
  if (!c) {
    if (devnull)
      fclose(devnull);
    return EXIT_CONFIG;
  }
  check_report *r = check_report_new(DS_VERSION);
  check_inputs in = {0};
  check_read_opts o = {ns, (int)page};
  int status;
  if (check_read(c, &o, &in, r, &err) < 0) {
    fprintf(stderr, "descheduler check: cannot read the cluster: %s\n", err.msg);
    status = EXIT_FAILED;
  } else {
    check_evaluate(&in, r);
    strbuf out = {0};
    if (format != OUTPUT_TEXT) {
      check_render_json(r, &out);
      output_document("descheduler check", format, &out, stdout);
    } else {
      check_render_text(r, &out);
      fputs(sb_str(&out), stdout);
    }
    sb_free(&out);
    status = check_count(r, CHECK_FAIL) ? EXIT_FAILED : 0;
  }
  check_inputs_free(&in);
  check_report_free(r);
  kube_client_free(c);
  kube_config_free(cfg);
  log_set_stream(NULL);
  if (devnull)
    fclose(devnull);
  return status;
}
