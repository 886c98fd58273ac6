/* metricsd.c - test driver for the metrics/health server (tests/cli/t0110-metrics-server.sh).
 *
 * Starts src/obs/server.c with the descheduler's serving flags, records a few series through
 * metrics.h as a descheduling cycle would, prints `ready <port>` on stdout and serves until
 * SIGTERM or SIGINT. A start failure prints the error on stderr and exits 255, as the
 * descheduler does.
 *
 *   metricsd [--bind-address IP] [--secure-port N] [--tls-cert-file F]
 *            [--tls-private-key-file F] [--disable-metrics] [--v N]
 *
 * --secure-port defaults to -1 (a free port chosen by the OS), not 10258, so parallel tests
 * never collide. */
#include "obs/log.h"
#include "obs/metrics.h"
#include "obs/server.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void record_sample_cycle(void) {
  metrics_pods_evicted("success", "RemoveDuplicates", "default", "team-a", "node-1");
  metrics_pods_evicted("success", "RemoveDuplicates", "default", "team-a", "node-1");
  metrics_pods_evicted("error", "RemovePodsViolatingNodeTaints", "default", "team-b", "node-2");
  metrics_pods_evicted("background", "LowNodeUtilization", "vm-rebalance", "vms", "worker-a");
  metrics_pods_evicted("maximum number of evicted pods per node reached", "LowNodeUtilization",
                       "vm-rebalance", "vms", "worker-a");
  metrics_strategy_duration("RemoveDuplicates", "default", 0.02);
  metrics_strategy_duration("LowNodeUtilization", "vm-rebalance", 0.3);
  metrics_loop_duration(0.004);
  metrics_loop_duration(0.35);
}

static int usage(const char *why) {
  fprintf(stderr,
          "metricsd: %s\nusage: metricsd [--bind-address IP] [--secure-port N] "
          "[--tls-cert-file F] [--tls-private-key-file F] [--disable-metrics] [--v N]\n",
          why);
  return 2;
}

int main(int argc, char **argv) {
  server_options opt = {.bind_address = "0.0.0.0", .port = -1, .metrics = true};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "--disable-metrics")) {
      opt.metrics = false;
      continue;
    }
    if (!val)
      return usage(strncmp(a, "--", 2) ? "unexpected argument" : "flag needs a value");
    if (!strcmp(a, "--bind-address"))
      opt.bind_address = val;
    else if (!strcmp(a, "--secure-port"))
      opt.port = atoi(val);
    else if (!strcmp(a, "--tls-cert-file"))
      opt.cert_file = val;
    else if (!strcmp(a, "--tls-private-key-file"))
      opt.key_file = val;
    else if (!strcmp(a, "--v"))
      log_set_verbosity(atoi(val));
    else
      return usage("unknown flag");
    i++;
  }

  /* block the stop signals before the server thread exists, so only sigwait sees them */
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop, NULL);

  if (opt.metrics) /* as --disable-metrics: nothing is recorded */
    metrics_enable("v0.0.0-metricsd");
  record_sample_cycle();

  dserr err = {{0}};
  obs_server *srv = obs_server_start(&opt, &err);
  if (!srv) {
    fprintf(stderr, "%s\n", err.msg);
    return 255;
  }
  printf("ready %d\n", obs_server_port(srv));
  fflush(stdout);

  int sig;
  sigwait(&stop, &sig);
  obs_server_stop(srv);
  return 0;
}
