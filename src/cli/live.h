/* live.h - what the long-running commands against a cluster share: the run command (cmd_run.c)
 * and the soft-tainter (cmd_softtaint.c) stop the same way on a signal and make their API
 * client the same way.
 *
 * SIGTERM and SIGINT set one stop flag; code below cli/ that must stop between requests (the
 * live eviction sink, the framework's cycle) polls it through live_stop_flag. SIGPIPE is
 * ignored: a peer that went away is an error of that request, not the end of the process. */
#ifndef DS_CLI_LIVE_H
#define DS_CLI_LIVE_H

#include "../kube/client.h"
#include "../kube/config.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

void live_signals(void);
bool live_stopping(void);
/* Asks the process to stop as a signal would (the lease renewer, when leadership is lost). */
void live_stop(void);
volatile sig_atomic_t *live_stop_flag(void);

typedef struct {
  const char *kubeconfig;  /* NULL or "": the in-cluster config (kubectl: see below) */
  bool allow_http;         /* --allow-insecure-http (kube_config_check_transport) */
  int64_t timeout_ns;      /* a whole request; 0: the client's default, negative: none */
  int64_t exec_timeout_ns; /* a kubeconfig exec plugin; 0: the client's default */
  double qps;              /* client-side rate limit; 0: client-go's default 5/10 */
  int burst;
  bool kubectl;            /* find the kubeconfig as kubectl does (kube_config_load_kubectl) */
  const char *context;     /* with kubectl: --context (NULL: the current-context) */
} live_client_options;

/* Loads the kubeconfig, checks its transport and makes the client. NULL after printing
 * `<who>: <why>` to stderr: the kubeconfig is bad input (exit 2). *cfg (freed by the caller
 * with kube_config_free, also on failure) outlives the client. */
kube_client *live_connect(const char *who, const live_client_options *o, kube_config **cfg);

/* Sleeps up to ns, waking early when the process is asked to stop; calls tick(ctx) (may be
 * NULL) every 100 ms meanwhile. Returns false when stopping. */
bool live_sleep(int64_t ns, void (*tick)(void *ctx), void *ctx);

#endif
