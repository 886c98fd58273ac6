/* cmd_softtaint.c - `descheduler soft-taint`: flags of the soft-tainter (the logic is in
 * src/softtaint/).
 *
 *   descheduler soft-taint (--policy-config-file FILE | --kubedescheduler FILE |
 *                           --kubedescheduler-ref NAMESPACE/NAME) [--kubeconfig FILE]
 *                          [--context NAME]
 *                          [--mode Automatic|Predictive] [--interval 1m] [--once] [--v N]
 *
 * A pass every --interval (from the start of the previous one) until SIGTERM/SIGINT (exit 0);
 * --once runs one pass and exits 0, or 1 when the pass failed. A failed pass changes nothing
 * it could not classify and is retried at the next interval. Bad flags, kubeconfig or policy
 * (checked once at start) exit 2. Signals and the API client are set up as for the run
 * command (cli/live.h), except that the kubeconfig is found as kubectl finds it ($KUBECONFIG,
 * ~/.kube/config, then in-cluster, which is what a pod without those finds).
 *
 * With a KubeDescheduler the policy is rendered from it at every pass, as the operator writes
 * it into the ConfigMap its soft-tainter reads, and the mode and the interval are the CR's, as
 * the operator's soft-tainter takes them (spec.mode, spec.deschedulingIntervalSeconds): nodes
 * are patched only when the CR says Automatic. --mode Predictive still forces log-only;
 * --interval, when given, replaces the CR's. */
#include "../softtaint/softtaint.h"
#include "../kube/client.h"
#include "../kube/cluster.h"
#include "../kube/config.h"
#include "../kube/openshift.h"
#include "../obs/log.h"
#include "../plugins/registry.h"
#include "../policy/policy.h"
#include "../apimachinery/timeutil.h"
#include "cli.h"
#include "flags.h"
#include "hint.h"
#include "kdsource.h"
#include "live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void st_usage(FILE *out, const void *ctx, const flag_def *defs) {
  (void)ctx;
  cli_usage_head(out, "soft-taint");
  fprintf(
      out,
      "\nKeeps the PreferNoSchedule taints " SOFTTAINT_OVERUTILIZED " and\n" SOFTTAINT_APPROPRIATE
      " on the policy's nodes in step with their\n"
      "actual utilization (the KubeVirtRelieveAndMigrate profile's LowNodeUtilization query and\n"
      "thresholds), so the scheduler stops sending migrated VMs back to hot nodes. With a policy\n"
      "file, mode Predictive (the default) only logs what it would change. With a KubeDescheduler\n"
      "the policy is rendered from it at every pass, and its spec.mode and\n"
      "spec.deschedulingIntervalSeconds are the mode and the interval, as for the operator's\n"
      "soft-tainter (--mode Predictive and --interval still apply when given).\n\nFlags:\n");
  flags_usage(out, defs);
  cli_exit_status(out, "with --once, the pass failed (the cluster could not be read)");
}

/* A policy file, read again every pass, and the mode --mode gives. */
typedef struct {
  const char *path;
  bool automatic;
  const plugin_env *env;
} file_source;

static policy *from_file(void *ctx, bool *automatic, dserr *err) {
  file_source *f = ctx;
  *automatic = f->automatic;
  return policy_load(f->path, plugin_lookup, f->env, err);
}

/* A KubeDescheduler, rendered against what the operator reads at every pass. */
typedef struct {
  kdsrc *kd;
  kube_client *client;
  const plugin_env *env;
  bool force_predictive; /* --mode Predictive given */
  bool broken;           /* the last pass could not render or load it */
  bool facts_failed;     /* ... because the cluster could not be read (not the CR's fault) */
  bool unreadable;       /* ... because the reference could not be read (not the CR's fault) */
  int64_t interval_ns;   /* the CR's deschedulingIntervalSeconds, from the last rendering */
} kd_source;

/* Reads the facts and renders: 1 changed (or first), 0 the same, -1 with err. */
static int kd_render_now(kd_source *k, dserr *err) {
  char route_error[1024];
  model *facts = kube_openshift_facts_model(k->client, 500, route_error, sizeof route_error, err);
  k->facts_failed = !facts;
  if (!facts)
    return -1;
  int rc = kdsrc_render(k->kd, facts, k->client, route_error, err);
  model_free(facts);
  k->unreadable = rc == KDSRC_UNREADABLE;
  return rc;
}

static policy *from_kubedescheduler(void *ctx, bool *automatic, dserr *err) {
  kd_source *k = ctx;
  int changed = kd_render_now(k, err);
  policy *pol = changed < 0 ? NULL : kdsrc_load_policy(k->kd, k->env, err);
  if (!pol) {
    k->broken = true;
    return NULL;
  }
  const kd_result *r = kdsrc_result(k->kd);
  *automatic = r->automatic && !k->force_predictive;
  k->interval_ns = r->interval_seconds * 1000000000LL;
  if (changed)
    kdsrc_log_warnings(k->kd, true);
  if (changed || k->broken)
    LOGV(0, NULL, "Using the policy rendered from the KubeDescheduler",
         LSTR("kubedescheduler", kdsrc_name(k->kd)),
         LSTR("mode", *automatic ? "Automatic" : "Predictive"),
         LINT("intervalSeconds", r->interval_seconds));
  k->broken = false;
  return pol;
}

int cmd_softtaint(int argc, char **argv) {
  const char *policy_path = NULL, *kubeconfig = NULL, *context = NULL, *mode = "Predictive";
  const char *kd_file = NULL, *kd_ref = NULL, *prometheus_url = NULL, *psi = "auto";
  int64_t interval = 60LL * 1000000000LL;
  bool once = false, allow_http = false;
  long long v = 0;
  flag_def defs[] = {
      {"policy-config-file", NULL, FLAG_STRING, &policy_path,
       "DeschedulerPolicy file (read again every pass)", NULL},
      {"kubedescheduler", NULL, FLAG_STRING, &kd_file,
       "OpenShift KubeDescheduler CR file: the policy rendered from it, its mode and interval "
       "(instead of --policy-config-file)",
       NULL},
      {"kubedescheduler-ref", NULL, FLAG_STRING, &kd_ref,
       "the same, reading NAMESPACE/NAME from the API server at every pass", NULL},
      {"prometheus-url", NULL, FLAG_STRING, &prometheus_url,
       "with a KubeDescheduler: Prometheus URL instead of the openshift-monitoring/prometheus-k8s "
       "Route",
       NULL},
      {"psi", NULL, FLAG_STRING, &psi,
       "with a KubeDescheduler: PSI on the worker nodes (the KubeVirt profile needs it): auto, "
       "present, absent",
       NULL},
      FLAG_DEF_KUBECONFIG_KUBECTL(&kubeconfig),
      FLAG_DEF_CONTEXT(&context),
      {"allow-insecure-http", NULL, FLAG_BOOL, &allow_http,
       "allow a plain http:// API server that is not loopback; the kubeconfig must also say "
       "insecure-skip-tls-verify (as the run command)",
       NULL},
      {"mode", NULL, FLAG_STRING, &mode,
       "Automatic (patch the nodes) or Predictive (log what would change); with a "
       "KubeDescheduler its spec.mode, which Predictive overrides",
       NULL},
      {"interval", NULL, FLAG_DURATION, &interval,
       "time between passes; with a KubeDescheduler its deschedulingIntervalSeconds unless given",
       NULL},
      {"once", NULL, FLAG_BOOL, &once, "run one pass and exit (1 if it failed)", NULL},
      FLAG_DEF_VERBOSITY(&v),
      {NULL}};
  dserr err;
  int rc = flags_parse_command("soft-taint", defs, argc, argv, st_usage, NULL);
  if (rc != FLAGS_RUN)
    return rc;
  bool kd = (kd_file && *kd_file) || (kd_ref && *kd_ref);
  bool explicit_mode = flags_find(defs, "mode")->seen;
  bool explicit_interval = flags_find(defs, "interval")->seen;
  if (kd && policy_path && *policy_path) {
    fprintf(stderr,
            "descheduler soft-taint: --policy-config-file and --kubedescheduler%s cannot be used "
            "together: the policy is rendered from the KubeDescheduler\n",
            kd_ref && *kd_ref ? "-ref" : "");
    return EXIT_CONFIG;
  }
  if (!kd && (!policy_path || !*policy_path)) {
    fprintf(stderr, "descheduler soft-taint: --policy-config-file, --kubedescheduler or "
                    "--kubedescheduler-ref is required\n");
    return EXIT_CONFIG;
  }
  bool explicit_url = flags_find(defs, "prometheus-url")->seen;
  if (!kd && (explicit_url || flags_find(defs, "psi")->seen)) {
    fprintf(stderr,
            "descheduler soft-taint: --%s is only used with --kubedescheduler or "
            "--kubedescheduler-ref\n",
            explicit_url ? "prometheus-url" : "psi");
    return EXIT_CONFIG;
  }
  if (strcmp(mode, "Automatic") && strcmp(mode, "Predictive")) {
    fprintf(stderr,
            "descheduler soft-taint: --mode: expected Automatic or Predictive, got \"%s\"\n", mode);
    return EXIT_CONFIG;
  }
  if (kd && explicit_mode && !strcmp(mode, "Automatic")) {
    fprintf(stderr, "descheduler soft-taint: --mode Automatic cannot be used with a "
                    "KubeDescheduler: its spec.mode decides (--mode Predictive forces log-only)\n");
    return EXIT_CONFIG;
  }
  if (interval <= 0 && !once && (!kd || explicit_interval)) {
    fprintf(stderr, "descheduler soft-taint: --interval must be positive (or use --once)\n");
    return EXIT_CONFIG;
  }
  log_set_verbosity((int)v);

  live_signals();
  kube_config *cfg = NULL;
  live_client_options lo = {kubeconfig, allow_http, 0, 0, 0, 0, true, context};
  kube_client *client = live_connect("descheduler soft-taint", &lo, &cfg);
  if (!client) {
    kube_config_free(cfg);
    return EXIT_CONFIG;
  }
  int status = 0;
  softtainter *st = NULL;
  plugin_env env = {kube_priority_class_value, client};
  file_source fs = {policy_path, !strcmp(mode, "Automatic"), &env};
  kd_source ks = {NULL, client, &env, explicit_mode, false, false, false, 0};
  if (kd) {
    kdsrc_options ko = {kd_file, kd_ref, prometheus_url, psi, kube_config_in_cluster(cfg)};
    ks.kd = kdsrc_new(&ko, &err);
    if (!ks.kd) {
      fprintf(stderr, "descheduler soft-taint: %s\n", err.msg);
      status = EXIT_CONFIG;
      goto out;
    }
    LOGV(0, NULL, "Starting the soft-tainter", LSTR("kubedescheduler", kdsrc_name(ks.kd)));
    /* a CR that does not render or load is a configuration error at start (exit 2); a cluster
     * that cannot be read, not (exit 1); later passes render it again */
    bool automatic;
    policy *pol = from_kubedescheduler(&ks, &automatic, &err);
    if (!pol) {
      if (ks.facts_failed)
        LOGE(NULL, "Failed to read the cluster state the KubeDescheduler rendering needs", err.msg);
      else if (ks.unreadable)
        LOGE(NULL, "Failed to read the KubeDescheduler", err.msg);
      else
        cli_error("descheduler soft-taint", err.msg);
      status = ks.facts_failed || ks.unreadable ? EXIT_FAILED : EXIT_CONFIG;
      goto out;
    }
    policy_free(pol);
    st = softtaint_new(client, from_kubedescheduler, &ks);
  } else {
    /* a bad policy is a configuration error (exit 2); later passes read it again */
    policy *pol = policy_load(policy_path, plugin_lookup, &env, &err);
    if (!pol) {
      cli_error("descheduler soft-taint", err.msg);
      status = EXIT_CONFIG;
      goto out;
    }
    policy_free(pol);
    LOGV(0, NULL, "Starting the soft-tainter", LSTR("mode", mode), LSTR("policy", policy_path));
    st = softtaint_new(client, from_file, &fs);
  }
  while (!live_stopping()) {
    double start = time_mono_seconds();
    if (softtaint_reconcile(st, &err) < 0) {
      LOGE(NULL, "Soft-taint pass failed; nothing was changed that could not be classified",
           err.msg);
      status = 1;
    } else {
      status = 0;
    }
    if (once)
      break;
    status = 0;
    /* with a KubeDescheduler, its interval as last rendered (the first rendering at start) */
    int64_t wait = kd && !explicit_interval ? ks.interval_ns : interval;
    live_sleep(wait - (int64_t)((time_mono_seconds() - start) * 1e9), NULL, NULL);
  }
out:
  softtaint_free(st);
  kdsrc_free(ks.kd);
  kube_client_free(client);
  kube_config_free(cfg);
  return status;
}
