/* softtaint.c - `descheduler soft-taint`: flags of the soft-tainter (the logic is in
 * src/softtaint/).
 *
 *   descheduler soft-taint --policy-config-file FILE [--kubeconfig FILE]
 *                          [--mode Automatic|Predictive] [--interval 1m] [--once] [--v N]
 *
 * A pass every --interval (from the start of the previous one) until SIGTERM/SIGINT (exit 0);
 * --once runs one pass and exits 0, or 1 when the pass failed. A failed pass changes nothing
 * it could not classify and is retried at the next interval. Bad flags, kubeconfig or policy
 * (checked once at start) exit 2. */
#include "../softtaint/softtaint.h"
#include "../kube/client.h"
#include "../kube/cluster.h"
#include "../kube/config.h"
#include "../obs/log.h"
#include "../plugins/registry.h"
#include "../policy/policy.h"
#include "cli.h"
#include "flags.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t g_stop;

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

static double mono_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void st_usage(FILE *out, const void *ctx, const flag_def *defs) {
  (void)ctx;
  fprintf(
      out,
      "Usage: descheduler soft-taint --policy-config-file FILE [flags]\n\n"
      "Keeps the PreferNoSchedule taints " SOFTTAINT_OVERUTILIZED " and\n" SOFTTAINT_APPROPRIATE
      " on the policy's nodes in step with their\n"
      "actual utilization (the KubeVirtRelieveAndMigrate profile's LowNodeUtilization query and\n"
      "thresholds), so the scheduler stops sending migrated VMs back to hot nodes. Mode\n"
      "Predictive (the default) only logs what it would change.\n\nFlags:\n");
  flags_usage(out, defs);
}

int cmd_softtaint(int argc, char **argv) {
  const char *policy_path = NULL, *kubeconfig = NULL, *mode = "Predictive";
  int64_t interval = 60LL * 1000000000LL;
  bool once = false;
  long long v = 0;
  flag_def defs[] = {
      {"policy-config-file", NULL, FLAG_STRING, &policy_path,
       "DeschedulerPolicy file (read again every pass)", NULL},
      {"kubeconfig", NULL, FLAG_STRING, &kubeconfig, "kubeconfig file; empty = in-cluster config",
       NULL},
      {"mode", NULL, FLAG_STRING, &mode,
       "Automatic (patch the nodes) or Predictive (log what would change)", "Predictive"},
      {"interval", NULL, FLAG_DURATION, &interval, "time between passes", "1m"},
      {"once", NULL, FLAG_BOOL, &once, "run one pass and exit (1 if it failed)", "false"},
      {"v", "v", FLAG_INT, &v, "log verbosity", "0"},
      {NULL}};
  dserr err;
  int rc = flags_parse_command("soft-taint", defs, argc, argv, st_usage, NULL);
  if (rc != FLAGS_RUN)
    return rc;
  if (!policy_path || !*policy_path) {
    fprintf(stderr, "descheduler soft-taint: --policy-config-file is required\n");
    return EXIT_CONFIG;
  }
  if (strcmp(mode, "Automatic") && strcmp(mode, "Predictive")) {
    fprintf(stderr,
            "descheduler soft-taint: --mode: expected Automatic or Predictive, got \"%s\"\n", mode);
    return EXIT_CONFIG;
  }
  if (interval <= 0 && !once) {
    fprintf(stderr, "descheduler soft-taint: --interval must be positive (or use --once)\n");
    return EXIT_CONFIG;
  }
  log_set_verbosity((int)v);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  kube_config *cfg = NULL;
  if (kube_config_load(kubeconfig, &cfg, &err) < 0) {
    fprintf(stderr, "descheduler soft-taint: %s\n", err.msg);
    return EXIT_CONFIG;
  }
  kube_client *client = kube_client_new(cfg, 0, 0, &err);
  if (!client) {
    fprintf(stderr, "descheduler soft-taint: %s\n", err.msg);
    kube_config_free(cfg);
    return EXIT_CONFIG;
  }
  /* a bad policy is a configuration error (exit 2); later passes read it again */
  plugin_env env = {kube_priority_class_value, client};
  policy *pol = policy_load(policy_path, plugin_lookup, &env, &err);
  if (!pol) {
    fprintf(stderr, "descheduler soft-taint: %s\n", err.msg);
    kube_client_free(client);
    kube_config_free(cfg);
    return EXIT_CONFIG;
  }
  policy_free(pol);
  LOGV(0, NULL, "Starting the soft-tainter", LSTR("mode", mode), LSTR("policy", policy_path));
  softtainter *st = softtaint_new(client, policy_path, !strcmp(mode, "Automatic"));
  int status = 0;
  while (!g_stop) {
    double start = mono_seconds();
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
    while (!g_stop && (mono_seconds() - start) * 1e9 < (double)interval) {
      struct timespec ts = {0, 50000000L};
      nanosleep(&ts, NULL);
    }
  }
  softtaint_free(st);
  kube_client_free(client);
  kube_config_free(cfg);
  return status;
}
