/* cmd_profile.c - `descheduler profile render`: the DeschedulerPolicy and operand flags an
 * OpenShift KubeDescheduler CR stands for.
 *
 * The CR comes from --kubedescheduler FILE, --kubedescheduler-ref NAMESPACE/NAME (live), or the
 * snapshot. What the operator reads from the cluster (namespaces, nodes, the prometheus-k8s
 * Route, the Scheduler) comes from --snapshot FILE, or live from --kubeconfig / the in-cluster
 * config. Output: `-o yaml` (default; `-o text` is the same, the form people read) is the
 * policy as a YAML document, preceded by comment lines naming the source and the operand's
 * arguments, so the output loads as a policy file; `-o json` is {"policy": {...}, "args":
 * [...], "warnings": [...]}. Warnings also go to stderr. Exit 0; 2 with one message for a bad
 * flag, file, kubeconfig or CR (a reference that is not there included); 1 when the cluster
 * could not be read. */
#include "../decode/decode.h"
#include "../kube/config.h"
#include "../kube/openshift.h"
#include "../kube/pager.h"
#include "../obs/log.h"
#include "../util/strbuf.h"
#include "cli.h"
#include "flags.h"
#include "kdsource.h"
#include "output.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *kd_file, *kd_ref, *snapshot, *kubeconfig, *context, *prometheus_url, *psi, *output;
  long long v;
} render_opts;

static void render_usage(FILE *out, const flag_def *defs) {
  cli_usage_head(out, "profile");
  fprintf(
      out,
      "\nPrints the DeschedulerPolicy and the descheduler arguments that the OpenShift\n"
      "cluster-kube-descheduler-operator renders from a KubeDescheduler CR. What the operator\n"
      "reads from the cluster (openshift-* namespaces, nodes labelled "
      "kubevirt.io/schedulable=true,\n"
      "the openshift-monitoring/prometheus-k8s Route, the Scheduler \"cluster\") is read from the\n"
      "snapshot, or from the API server (found as kubectl finds it: --kubeconfig, $KUBECONFIG,\n"
      "~/.kube/config, the in-cluster config; --context). -o text and\n"
      "-o yaml print the policy as YAML, the arguments in a comment above it; -o json prints\n"
      "{\"policy\", \"args\", \"warnings\"}.\n\nFlags:\n");
  flags_usage(out, defs);
  cli_exit_status(out, "the cluster (or the CR --kubedescheduler-ref names) could not be read");
}

/* Reads the facts into a model: a snapshot, or the API server cfg names (the caller loaded
 * it). NULL with err and *status: 2 for a bad snapshot or kubeconfig, 1 when the API server
 * could not be read. */
static model *read_facts(const render_opts *o, const kube_config *cfg, kube_client **client,
                         char *route_error, size_t cap, int *status, dserr *err) {
  model *m = model_new();
  *status = EXIT_CONFIG;
  if (o->snapshot) {
    if (decode_snapshot_file(m, o->snapshot, err) < 0)
      goto fail;
  } else {
    *client = kube_client_new(cfg, 0, 0, err);
    if (!*client)
      goto fail;
    *status = EXIT_FAILED; /* from here on, what fails is the cluster */
    if (kube_read_openshift_facts(*client, m, KUBE_LIST_PAGE_SIZE_DEFAULT, route_error, cap, err) <
        0)
      goto fail;
  }
  if (model_finish(m, err) < 0)
    goto fail;
  return m;
fail:
  model_free(m);
  return NULL;
}

static void print_yaml(const kdsrc *s) {
  const kd_result *r = kdsrc_result(s);
  printf("# DeschedulerPolicy rendered from %s\n# descheduler args:", kdsrc_name(s));
  for (size_t i = 0; i < r->nargs; i++)
    printf(" %s", r->args[i]);
  printf("\n");
  fputs(kdsrc_policy_yaml(s), stdout);
}

static void print_json(const kdsrc *s) {
  const kd_result *r = kdsrc_result(s);
  strbuf sb = {0};
  sb_append(&sb, "{\"policy\":");
  doc_write_json(&sb, r->policy, 0);
  sb_append(&sb, ",\"args\":[");
  for (size_t i = 0; i < r->nargs; i++) {
    if (i)
      sb_appendc(&sb, ',');
    sb_append_json_str(&sb, r->args[i]);
  }
  sb_append(&sb, "],\"warnings\":[");
  for (size_t i = 0; i < r->nwarnings; i++) {
    if (i)
      sb_appendc(&sb, ',');
    sb_append_json_str(&sb, r->warnings[i]);
  }
  sb_append(&sb, "]}\n");
  fputs(sb_str(&sb), stdout);
  sb_free(&sb);
}

static int cmd_render(int argc, char **argv) {
  render_opts o = {0};
  o.output = "yaml";
  o.psi = "auto";
  flag_def defs[] = {
      {"kubedescheduler", NULL, FLAG_STRING, &o.kd_file, "KubeDescheduler CR file (YAML or JSON)",
       NULL},
      {"kubedescheduler-ref", NULL, FLAG_STRING, &o.kd_ref,
       "read the CR NAMESPACE/NAME from the API server", NULL},
      {"snapshot", NULL, FLAG_STRING, &o.snapshot,
       "cluster state (v1 List, as `simulate` reads): the facts, and the CR when no "
       "--kubedescheduler is given",
       NULL},
      {"kubeconfig", NULL, FLAG_STRING, &o.kubeconfig,
       "read the facts from this cluster (without --snapshot; empty = as kubectl: $KUBECONFIG, "
       "~/.kube/config, the in-cluster config)",
       NULL},
      FLAG_DEF_CONTEXT(&o.context),
      {"prometheus-url", NULL, FLAG_STRING, &o.prometheus_url,
       "Prometheus URL for metricsProviders, instead of the prometheus-k8s Route", NULL},
      {"psi", NULL, FLAG_STRING, &o.psi,
       "PSI on the worker nodes (the KubeVirt profile needs it): auto (checked only in a pod of "
       "the cluster, else unknown), present, absent",
       NULL},
      FLAG_DEF_OUTPUT(&o.output),
      FLAG_DEF_VERBOSITY(&o.v),
      {NULL}};
  const char *pos[1];
  int npos;
  dserr err;
  int rc = flags_parse(defs, argc, argv, 3, pos, 0, &npos, &err);
  if (rc == 1) {
    render_usage(stdout, defs);
    return 0;
  }
  if (rc < 0) {
    fprintf(stderr, "descheduler profile render: %s\n", err.msg);
    return EXIT_CONFIG;
  }
  output_format format;
  if (output_parse("descheduler profile render", o.output, &format) < 0)
    return EXIT_CONFIG;
  if (o.snapshot && flags_find(defs, "kubeconfig")->seen) {
    fprintf(stderr, "descheduler profile render: --snapshot and --kubeconfig cannot be used "
                    "together: the cluster facts come from one of them\n");
    return EXIT_CONFIG;
  }
  if (o.kd_ref && o.snapshot) {
    fprintf(stderr, "descheduler profile render: --kubedescheduler-ref reads the API server; "
                    "with --snapshot use --kubedescheduler FILE\n");
    return EXIT_CONFIG;
  }
  if (o.snapshot && flags_find(defs, "context")->seen) {
    fprintf(stderr, "descheduler profile render: --context picks a kubeconfig context; with "
                    "--snapshot no cluster is read\n");
    return EXIT_CONFIG;
  }
  log_set_verbosity((int)o.v);
  /* the kubeconfig says whether this runs in a pod (--psi auto); its error is said after the
   * flags' own */
  kube_config *cfg = NULL;
  dserr cfg_err;
  int cfg_rc = o.snapshot ? 0 : kube_config_load_kubectl(o.kubeconfig, o.context, &cfg, &cfg_err);
  if (cfg_rc == 0 && cfg && kube_config_check_transport(cfg, false, false, &cfg_err) < 0)
    cfg_rc = -1;
  bool in_cluster = kube_config_in_cluster(cfg);
  kdsrc_options ko = {o.kd_file, o.kd_ref, o.prometheus_url, o.psi, in_cluster};
  kdsrc *src = kdsrc_new(&ko, &err);
  if (!src || cfg_rc < 0) {
    if (!src)
      fprintf(stderr, "descheduler profile render: %s\n", err.msg);
    else
      fprintf(stderr,
              "descheduler profile render: cluster facts: give --snapshot FILE or --kubeconfig "
              "FILE: %s\n",
              cfg_err.msg);
    kube_config_free(cfg);
    kdsrc_free(src);
    return EXIT_CONFIG;
  }
  kube_client *client = NULL;
  char route_error[1024] = "";
  int status;
  model *m = read_facts(&o, cfg, &client, route_error, sizeof route_error, &status, &err);
  if (!m) {
    if (o.snapshot && strncmp(err.msg, o.snapshot, strlen(o.snapshot)) != 0)
      dserr_prefix(&err, "%s", o.snapshot);
    fprintf(stderr, "descheduler profile render: %s\n", err.msg);
    goto out;
  }
  int rrc = kdsrc_render(src, m, client, route_error, &err);
  if (rrc < 0) {
    fprintf(stderr, "descheduler profile render: %s\n", err.msg);
    status = rrc == KDSRC_UNREADABLE ? EXIT_FAILED : EXIT_CONFIG;
    goto out;
  }
  kdsrc_log_warnings(src, false);
  if (format == OUTPUT_JSON)
    print_json(src);
  else
    print_yaml(src);
  status = 0;
out:
  model_free(m);
  kube_client_free(client);
  kube_config_free(cfg);
  kdsrc_free(src);
  return status;
}

int cmd_profile(int argc, char **argv) {
  if (argc >= 3 && !strcmp(argv[2], "render"))
    return cmd_render(argc, argv);
  FILE *out = argc >= 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) ? stdout : stderr;
  if (argc >= 3 && out == stderr)
    fprintf(stderr, "descheduler profile: unknown subcommand \"%s\"\n\n", argv[2]);
  cli_usage_head(out, "profile");
  fprintf(out, "\nOne subcommand: render (descheduler profile render --help).\n");
  return out == stdout ? 0 : EXIT_CONFIG;
}
