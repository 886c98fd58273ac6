/* live.c - see live.h. */
#include "live.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t g_stop;

static void on_signal(int sig) {
  (void)sig;
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
}

void live_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
}

/* the flag is set by one thread (or a signal handler) and read by others: atomically */
bool live_stopping(void) {
  return __atomic_load_n(&g_stop, __ATOMIC_ACQUIRE);
}

void live_stop(void) {
  __atomic_store_n(&g_stop, 1, __ATOMIC_RELEASE);
}

volatile sig_atomic_t *live_stop_flag(void) {
  return &g_stop;
}

kube_client *live_connect(const char *who, const live_client_options *o, kube_config **cfg) {
  dserr err;
  *cfg = NULL;
  int rc = o->kubectl ? kube_config_load_kubectl(o->kubeconfig, o->context, cfg, &err)
                      : kube_config_load(o->kubeconfig, cfg, &err);
  if (rc < 0 ||
      kube_config_check_transport(*cfg, o->allow_http, true, &err) < 0) {
    fprintf(stderr, "%s: %s\n", who, err.msg);
    return NULL;
  }
  if (o->timeout_ns)
    (*cfg)->timeout_ns = o->timeout_ns;
  if (o->exec_timeout_ns)
    (*cfg)->exec_timeout_ns = o->exec_timeout_ns;
  kube_client *c = kube_client_new(*cfg, o->qps, o->burst, &err);
  if (!c)
    fprintf(stderr, "%s: %s\n", who, err.msg);
  return c;
}

bool live_sleep(int64_t ns, void (*tick)(void *ctx), void *ctx) {
  while (ns > 0 && !live_stopping()) {
    if (tick)
      tick(ctx);
    int64_t step = ns > 100000000LL ? 100000000LL : ns;
    struct timespec ts = {step / 1000000000LL, step % 1000000000LL};
    nanosleep(&ts, NULL);
    ns -= step;
  }
  return !live_stopping();
}
