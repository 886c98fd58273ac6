/* run.c - `descheduler [flags]`: upstream's command, against a cluster.
 *
 * descheduler-core.md §1 and §9: flags (upstream's names and defaults; `_` accepted for
 * `-`), feature gates, the HTTPS /metrics + /healthz listener, the API client, the policy,
 * eviction discovery, then the loop. --descheduling-interval 0 runs one cycle and exits
 * (CronJob); otherwise a cycle starts every interval, measured from the previous start
 * (Deployment). --leader-elect guards the loop with a Lease; losing it exits 0. SIGTERM and
 * SIGINT stop between requests, release the lease and exit 0.
 *
 * Each cycle lists the cluster afresh into a new model (paged), brings the background
 * eviction cache up to date from it, and runs the same framework as `simulate`. A cycle whose
 * lists fail evicts nothing; a one-shot run then retries with backoff and exits 1 when the
 * cluster stays unreadable (upstream retries forever). */
#include "../framework/framework.h"
#include "../kube/cluster.h"
#include "../kube/config.h"
#include "../kube/lease.h"
#include "../obs/log.h"
#include "../obs/metrics.h"
#include "../obs/server.h"
#include "../plugins/registry.h"
#include "../policy/policy.h"
#include "cli.h"
#include "flags.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop;
static volatile sig_atomic_t g_leader_lost;

/* a one-shot (CronJob) run whose cycle cannot read the cluster tries this often in all */
#define CRONJOB_ATTEMPTS 4

static void on_signal(int sig) {
  (void)sig;
  g_stop = 1;
}

typedef struct {
  int64_t interval_ns;
  const char *policy;
  bool dry_run;
  const char *kubeconfig, *kubeconfig2;
  double qps;
  long long burst;
  bool disable_metrics, enable_http2;
  const char *gates;
  bool leader_elect;
  int64_t lease_duration, renew_deadline, retry_period;
  const char *lock, *lease_name, *lease_ns;
  const char *bind_address;
  long long secure_port;
  const char *cert_dir, *tls_cert, *tls_key, *tls_ciphers, *tls_min, *tls_curves, *tls_sni;
  long long h2_streams;
  bool port_sharing, address_sharing, disable_h2;
  long long v;
  const char *vmodule, *logging_format;
  int64_t flush_frequency;
  bool text_split, json_split;
  const char *text_buf, *json_buf;
  const char *otel_endpoint, *otel_ca, *otel_service, *otel_ns;
  double otel_rate;
  bool otel_fallback;
  long long page_size;
  int64_t request_timeout, exec_timeout;
  bool allow_http;
} run_opts;

static double mono_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Sleeps up to ns, waking early on a signal. Returns false when stopping. */
static bool sleep_ns(int64_t ns) {
  while (ns > 0 && !g_stop) {
    int64_t step = ns > 100000000LL ? 100000000LL : ns;
    struct timespec ts = {step / 1000000000LL, step % 1000000000LL};
    nanosleep(&ts, NULL);
    ns -= step;
  }
  return !g_stop;
}

typedef struct {
  kube_client *client;
  policy *pol;
  kube_discovery disc;
  bg_cache bg;
  bool first;
  feature_gates gates;
  run_opts *o;
  char hostname[256];
} runner;

/* One cycle: read, sync the background cache, decide, evict. -1 when the reads failed. */
static int run_cycle(runner *r) {
  model *m = model_new();
  dserr err;
  int rc = 0;
  int rr = kube_read_cluster(r->client, m, r->disc.kubevirt, (int)r->o->page_size, &err);
  if (rr == KUBE_READ_EXPIRED) {
    /* as client-go's pager: the expired list is read again from the start, once */
    LOGW(NULL, "A paged list expired while it was read; reading the cluster again from the start",
         LSTR("err", err.msg));
    model_free(m);
    m = model_new();
    rr = kube_read_cluster(r->client, m, r->disc.kubevirt, (int)r->o->page_size, &err);
  }
  if (rr < 0 || model_finish(m, &err) < 0) {
    LOGE(NULL, "Failed to read the cluster state; nothing is evicted this cycle", err.msg);
    rc = -1;
    goto out;
  }
  if (r->gates.evictions_in_background)
    bg_sync(&r->bg, m, (int64_t)time(NULL), r->first);
  r->first = false;
  live_sink sink;
  live_sink_init(&sink, r->client, r->disc.policy_group_version, r->hostname, r->o->dry_run, &g_stop);
  fw_options opt = {r->gates.evictions_in_background, (int64_t)time(NULL)};
  fw_result res;
  if (fw_run_cycle(r->pol, m, &r->bg, &sink.base, &opt, &res, &err) < 0) {
    LOGE(NULL, "failed to run descheduler loop", err.msg);
    rc = -1;
  }
  fw_result_free(&res);
out:
  model_free(m);
  return rc;
}

/* The leader renews its Lease every retry period in its own thread with its own client
 * (client-go's elector runs beside the loop the same way), so a long cycle cannot let the
 * lease lapse unnoticed. Failing to renew for the renew deadline stops the process. */
typedef struct {
  lease_elector *le;
  int64_t retry_period, renew_deadline;
  volatile sig_atomic_t quit;
} renewer;

static void *renew_loop(void *arg) {
  renewer *rn = arg;
  dserr err;
  while (!rn->quit && !g_stop) {
    int64_t slept = 0;
    while (slept < rn->retry_period && !rn->quit && !g_stop) {
      struct timespec ts = {0, 50000000L};
      nanosleep(&ts, NULL);
      slept += 50000000LL;
    }
    if (rn->quit || g_stop)
      break;
    int got = lease_try(rn->le, &err);
    if (got < 0)
      LOGE(NULL, "Failed to renew the leader lease", err.msg);
    if (got != 1 && lease_monotonic_ns() - rn->le->last_renewed > rn->renew_deadline) {
      LOGV(1, NULL, "Leader lost");
      g_leader_lost = 1;
      g_stop = 1;
      break;
    }
  }
  return NULL;
}

static void warn_unsupported(const run_opts *o, const flag_def *defs) {
  static const char *ignored[] = {"enable-http2", "tls-cipher-suites", "tls-min-version",
                                  "tls-curve-preferences", "tls-sni-cert-key",
                                  "http2-max-streams-per-connection", "permit-port-sharing",
                                  "permit-address-sharing", "disable-http2-serving", "vmodule",
                                  "log-flush-frequency", "log-text-split-stream",
                                  "log-json-split-stream", "log-text-info-buffer-size",
                                  "log-json-info-buffer-size", "otel-collector-endpoint",
                                  "otel-transport-ca-cert", "otel-service-name",
                                  "otel-trace-namespace", "otel-sample-rate",
                                  "otel-fallback-no-op-on-error", "cert-dir", NULL};
  (void)o;
  for (size_t i = 0; ignored[i]; i++) {
    const flag_def *d = flags_find(defs, ignored[i]);
    if (d && d->seen)
      LOGW(NULL, "Flag accepted for compatibility but has no effect in this build",
           LSTR("flag", ignored[i]));
  }
}

static void usage(FILE *out, const flag_def *defs) {
  fprintf(out, "Usage: descheduler [flags]\n\nRuns the descheduler against a cluster: one cycle with "
               "--descheduling-interval 0 (CronJob), else a cycle every interval (Deployment).\n"
               "Other commands: descheduler simulate --help, descheduler version.\n\nFlags:\n");
  flags_usage(out, defs);
}

int cmd_run(int argc, char **argv) {
  run_opts o = {0};
  o.bind_address = "0.0.0.0";
  o.secure_port = 10258;
  o.lease_duration = 137LL * 1000000000LL;
  o.renew_deadline = 107LL * 1000000000LL;
  o.retry_period = 26LL * 1000000000LL;
  o.lock = "leases";
  o.lease_name = "descheduler";
  o.lease_ns = "kube-system";
  o.logging_format = "text";
  o.otel_service = "descheduler";
  o.otel_rate = 1;
  o.page_size = 500;
  o.request_timeout = 60LL * 1000000000LL;
  o.exec_timeout = KUBE_EXEC_TIMEOUT_DEFAULT_NS;
  flag_def defs[] = {
      {"descheduling-interval", NULL, FLAG_DURATION, &o.interval_ns, "time between descheduling cycles; 0 runs one cycle and exits", "0s"},
      {"policy-config-file", NULL, FLAG_STRING, &o.policy, "DeschedulerPolicy file", NULL},
      {"dry-run", NULL, FLAG_BOOL, &o.dry_run, "decide and log, evict nothing", "false"},
      {"kubeconfig", NULL, FLAG_STRING, &o.kubeconfig, "kubeconfig file (deprecated alias of --client-connection-kubeconfig); empty = in-cluster config", NULL},
      {"client-connection-kubeconfig", NULL, FLAG_STRING, &o.kubeconfig2, "kubeconfig file; empty = in-cluster config", NULL},
      {"client-connection-qps", NULL, FLAG_FLOAT, &o.qps, "client-side requests per second (0 = 5)", "0"},
      {"client-connection-burst", NULL, FLAG_INT, &o.burst, "client-side request burst (0 = 10)", "0"},
      {"client-connection-timeout", NULL, FLAG_DURATION, &o.request_timeout, "longest time one API request may take, connecting included; 0 = no limit (not in upstream, whose client has none)", "1m0s"},
      {"client-connection-exec-timeout", NULL, FLAG_DURATION, &o.exec_timeout, "longest time a kubeconfig exec credential plugin may run before it is killed (not in upstream, which waits for ever)", "1m0s"},
      {"allow-insecure-http", NULL, FLAG_BOOL, &o.allow_http, "allow a plain http:// API server that is not loopback; the kubeconfig must also say insecure-skip-tls-verify (not in upstream)", "false"},
      {"disable-metrics", NULL, FLAG_BOOL, &o.disable_metrics, "serve no /metrics and record no metrics", "false"},
      {"enable-http2", NULL, FLAG_BOOL, &o.enable_http2, "HTTP/2 on the HTTPS server (accepted; HTTP/1.1 is served)", "false"},
      {"feature-gates", NULL, FLAG_STRING, &o.gates, "key=true|false,...: EvictionsInBackground (alpha), AllAlpha, AllBeta", NULL},
      {"leader-elect", NULL, FLAG_BOOL, &o.leader_elect, "run the loop only while holding the leader Lease", "false"},
      {"leader-elect-lease-duration", NULL, FLAG_DURATION, &o.lease_duration, "lease duration", "137s"},
      {"leader-elect-renew-deadline", NULL, FLAG_DURATION, &o.renew_deadline, "the leader gives up when it cannot renew for this long", "107s"},
      {"leader-elect-retry-period", NULL, FLAG_DURATION, &o.retry_period, "time between acquire and renew attempts", "26s"},
      {"leader-elect-resource-lock", NULL, FLAG_STRING, &o.lock, "lock type; only leases", "leases"},
      {"leader-elect-resource-name", NULL, FLAG_STRING, &o.lease_name, "Lease name", "descheduler"},
      {"leader-elect-resource-namespace", NULL, FLAG_STRING, &o.lease_ns, "Lease namespace", "kube-system"},
      {"bind-address", NULL, FLAG_STRING, &o.bind_address, "address of the HTTPS /metrics and /healthz listener", "0.0.0.0"},
      {"secure-port", NULL, FLAG_INT, &o.secure_port, "port of the HTTPS listener; 0 = none", "10258"},
      {"cert-dir", NULL, FLAG_STRING, &o.cert_dir, "accepted for compatibility; without cert files a self-signed certificate is made in memory", NULL},
      {"tls-cert-file", NULL, FLAG_STRING, &o.tls_cert, "serving certificate (PEM)", NULL},
      {"tls-private-key-file", NULL, FLAG_STRING, &o.tls_key, "serving key (PEM)", NULL},
      {"tls-cipher-suites", NULL, FLAG_STRING, &o.tls_ciphers, "accepted for compatibility, no effect", NULL},
      {"tls-min-version", NULL, FLAG_STRING, &o.tls_min, "accepted for compatibility, no effect", NULL},
      {"tls-curve-preferences", NULL, FLAG_STRING, &o.tls_curves, "accepted for compatibility, no effect", NULL},
      {"tls-sni-cert-key", NULL, FLAG_STRING, &o.tls_sni, "accepted for compatibility, no effect", NULL},
      {"http2-max-streams-per-connection", NULL, FLAG_INT, &o.h2_streams, "accepted for compatibility, no effect", "0"},
      {"permit-port-sharing", NULL, FLAG_BOOL, &o.port_sharing, "accepted for compatibility, no effect", "false"},
      {"permit-address-sharing", NULL, FLAG_BOOL, &o.address_sharing, "accepted for compatibility, no effect", "false"},
      {"disable-http2-serving", NULL, FLAG_BOOL, &o.disable_h2, "accepted for compatibility, no effect", "false"},
      {"v", "v", FLAG_INT, &o.v, "log verbosity", "0"},
      {"vmodule", NULL, FLAG_STRING, &o.vmodule, "accepted for compatibility, no effect", NULL},
      {"log-flush-frequency", NULL, FLAG_DURATION, &o.flush_frequency, "accepted; lines are written at once", "5s"},
      {"logging-format", NULL, FLAG_STRING, &o.logging_format, "text or json", "text"},
      {"log-text-split-stream", NULL, FLAG_BOOL, &o.text_split, "accepted for compatibility, no effect", "false"},
      {"log-json-split-stream", NULL, FLAG_BOOL, &o.json_split, "accepted for compatibility, no effect", "false"},
      {"log-text-info-buffer-size", NULL, FLAG_STRING, &o.text_buf, "accepted for compatibility, no effect", "0"},
      {"log-json-info-buffer-size", NULL, FLAG_STRING, &o.json_buf, "accepted for compatibility, no effect", "0"},
      {"otel-collector-endpoint", NULL, FLAG_STRING, &o.otel_endpoint, "tracing is not built; accepted, no effect", NULL},
      {"otel-transport-ca-cert", NULL, FLAG_STRING, &o.otel_ca, "tracing is not built; accepted, no effect", NULL},
      {"otel-service-name", NULL, FLAG_STRING, &o.otel_service, "tracing is not built; accepted, no effect", "descheduler"},
      {"otel-trace-namespace", NULL, FLAG_STRING, &o.otel_ns, "tracing is not built; accepted, no effect", NULL},
      {"otel-sample-rate", NULL, FLAG_FLOAT, &o.otel_rate, "tracing is not built; accepted, no effect", "1"},
      {"otel-fallback-no-op-on-error", NULL, FLAG_BOOL, &o.otel_fallback, "tracing is not built; accepted, no effect", "false"},
      {"list-page-size", NULL, FLAG_INT, &o.page_size, "objects per LIST page (client-go's pager uses 500)", "500"},
      {NULL}};
  const char *pos[1];
  int npos;
  dserr err;
  int rc = flags_parse(defs, argc, argv, 1, pos, 0, &npos, &err);
  if (rc == 1) {
    usage(stdout, defs);
    return 0;
  }
  if (rc < 0) {
    fprintf(stderr, "descheduler: %s\nRun 'descheduler --help' for the flags.\n", err.msg);
    return EXIT_CONFIG;
  }
  if (strcmp(o.logging_format, "text") && strcmp(o.logging_format, "json")) {
    fprintf(stderr, "descheduler: --logging-format: expected text or json, got \"%s\"\n", o.logging_format);
    return EXIT_CONFIG;
  }
  log_set_verbosity((int)o.v);
  log_set_format(strcmp(o.logging_format, "json") ? LOG_TEXT : LOG_JSON);
  warn_unsupported(&o, defs);
  runner r = {0};
  r.o = &o;
  r.first = true;
  if (feature_gates_parse(o.gates, &r.gates, &err) < 0) {
    fprintf(stderr, "descheduler: --feature-gates: %s\n", err.msg);
    return EXIT_CONFIG;
  }
  if (o.request_timeout < 0 || o.exec_timeout <= 0) {
    fprintf(stderr, "descheduler: %s must be %s\n",
            o.request_timeout < 0 ? "--client-connection-timeout" : "--client-connection-exec-timeout",
            o.request_timeout < 0 ? "0 (no limit) or positive" : "positive");
    return EXIT_CONFIG;
  }
  if (o.page_size < 1) {
    fprintf(stderr, "descheduler: --list-page-size must be at least 1\n");
    return EXIT_CONFIG;
  }
  if (!o.policy || !*o.policy) {
    LOGV(1, NULL, "Policy config file not specified");
    fprintf(stderr, "descheduler: --policy-config-file is required (upstream: deschedulerPolicy is nil)\n");
    return EXIT_CONFIG;
  }
  if (strcmp(o.lock, "leases")) {
    fprintf(stderr, "descheduler: Invalid lock-type %s\n", o.lock);
    return EXIT_CONFIG;
  }
  if (o.leader_elect && !o.dry_run && o.interval_ns == 0) {
    fprintf(stderr, "descheduler: leaderElection must be used with deschedulingInterval\n");
    return EXIT_CONFIG;
  }
  if ((o.tls_cert && !o.tls_key) || (!o.tls_cert && o.tls_key)) {
    fprintf(stderr, "descheduler: --tls-cert-file and --tls-private-key-file must be given together\n");
    return EXIT_CONFIG;
  }
  gethostname(r.hostname, sizeof r.hostname - 1);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);

  if (!o.disable_metrics)
    metrics_enable(DS_VERSION);
  obs_server *srv = NULL;
  if (o.secure_port != 0) {
    server_options so = {o.bind_address, (int)o.secure_port, o.tls_cert, o.tls_key, !o.disable_metrics};
    srv = obs_server_start(&so, &err);
    if (!srv) {
      LOGE(NULL, "failed to run descheduler server", err.msg);
      return 1;
    }
  }
  int status = 1;
  kube_config *cfg = NULL;
  bool elect = o.leader_elect && !o.dry_run;
  lease_elector le;
  kube_client *lease_client = NULL;
  renewer rn = {&le, o.retry_period, o.renew_deadline, 0};
  pthread_t renew_thread;
  bool renewing = false;
  const char *kc = o.kubeconfig2 && *o.kubeconfig2 ? o.kubeconfig2 : o.kubeconfig;
  if (kube_config_load(kc, &cfg, &err) < 0 ||
      kube_config_check_transport(cfg, o.allow_http, &err) < 0) {
    fprintf(stderr, "descheduler: %s\n", err.msg);
    status = EXIT_CONFIG;
    goto out;
  }
  cfg->timeout_ns = o.request_timeout > 0 ? o.request_timeout : -1;
  cfg->exec_timeout_ns = o.exec_timeout;
  r.client = kube_client_new(cfg, o.qps, (int)o.burst, &err);
  if (!r.client) {
    fprintf(stderr, "descheduler: %s\n", err.msg);
    status = EXIT_CONFIG;
    goto out;
  }
  plugin_env env = {kube_priority_class_value, r.client};
  r.pol = policy_load(o.policy, plugin_lookup, &env, &err);
  if (!r.pol) {
    fprintf(stderr, "descheduler: %s\n", err.msg);
    status = EXIT_CONFIG;
    goto out;
  }
  if (kube_discover(r.client, &r.disc, &err) < 0) {
    LOGE(NULL, "failed to run descheduler server", err.msg);
    goto out;
  }
  if (r.disc.server_major == 1 && abs(r.disc.server_minor - 36) > 3)
    LOGW(NULL, "descheduler version may not be supported on your version of Kubernetes",
         LSTR("descheduler", "0.36"), LSTR("kubernetes", r.disc.git_version));
  if (!*r.disc.policy_group_version || !r.disc.eviction_supported) {
    /* upstream exits 0 without a word here; say why instead */
    LOGE(NULL, "The API server does not offer the Eviction API (policy group or pods/eviction missing); nothing can be evicted",
         "eviction API not available");
    goto out;
  }
  if (o.leader_elect && o.dry_run)
    LOGV(1, NULL, "Warning: DryRun is set to True. You need to disable it to use Leader Election.");
  if (elect) {
    lease_client = kube_client_new(cfg, o.qps, (int)o.burst, &err);
    if (!lease_client) {
      fprintf(stderr, "descheduler: %s\n", err.msg);
      goto out;
    }
    if (!*o.lease_name || !*o.lease_ns) {
      fprintf(stderr, "descheduler: %s\n", !*o.lease_name ? "name may not be empty" : "namespace may not be empty");
      status = EXIT_CONFIG;
      goto out;
    }
    lease_init(&le, lease_client, o.lease_ns, o.lease_name, o.lease_duration, o.renew_deadline,
               o.retry_period);
    char lock[600];
    snprintf(lock, sizeof lock, "%s/%s", o.lease_ns, o.lease_name);
    LOGV(0, NULL, "Attempting to acquire leader lease...", LSTR("lock", lock));
    for (;;) {
      int got = lease_try(&le, &err);
      if (got < 0)
        LOGE(NULL, "error retrieving resource lock", err.msg, LSTR("lock", lock));
      if (got == 1)
        break;
      if (!sleep_ns(o.retry_period)) {
        status = 0;
        goto out;
      }
    }
    LOGV(0, NULL, "Successfully acquired lease", LSTR("lock", lock));
    LOGV(1, NULL, "Started leading");
    if (pthread_create(&renew_thread, NULL, renew_loop, &rn) != 0) {
      LOGE(NULL, "failed to run descheduler server", "cannot start the lease renewal thread");
      goto out;
    }
    renewing = true;
  }
  int failures = 0;
  for (;;) {
    double start = mono_seconds();
    int crc = run_cycle(&r);
    metrics_loop_duration(mono_seconds() - start);
    if (g_stop) {
      status = 0;
      break;
    }
    if (o.interval_ns == 0) {
      if (crc == 0) {
        status = 0;
        break;
      }
      /* upstream retries at once, forever, until a cycle succeeds; here a CronJob run retries
       * with backoff (1 s, 2 s, 4 s) and then fails, so the Job shows the failure */
      if (++failures >= CRONJOB_ATTEMPTS) {
        LOGE(NULL, "Giving up: the cycle could not read the cluster", "cycle failed",
             LINT("attempts", failures));
        status = 1;
        break;
      }
      if (!sleep_ns(1000000000LL << (failures - 1))) {
        status = 0;
        break;
      }
      continue;
    }
    int64_t wait = o.interval_ns - (int64_t)((mono_seconds() - start) * 1e9);
    if (wait > 0)
      sleep_ns(wait);
    if (g_stop) {
      status = 0;
      break;
    }
  }
out:
  if (renewing) {
    rn.quit = 1;
    pthread_join(renew_thread, NULL);
  }
  if (elect && lease_client && !g_leader_lost)
    lease_release(&le);
  kube_client_free(lease_client);
  bg_clear(&r.bg);
  policy_free(r.pol);
  kube_client_free(r.client);
  kube_config_free(cfg);
  obs_server_stop(srv);
  return status;
}
