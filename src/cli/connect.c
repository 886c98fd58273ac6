/* connect.c - the API client of the runbook commands (check, verify, pause, resume).
 *
 * They are run from a workstation as kubectl is, so they find the kubeconfig as kubectl does
 * (--kubeconfig, else $KUBECONFIG's files merged, else ~/.kube/config, else the in-cluster
 * config; --context picks the context); the main command keeps upstream's rule (the flag, else
 * in-cluster). A bad kubeconfig is a configuration error (exit 2).
 * They are short interactive commands, so their client-side rate limit is 50 requests per
 * second (burst 100) rather than the descheduler's (client-go's default 5/10). */
#include "../kube/config.h"
#include "cli.h"

#include <stdio.h>

kube_client *cli_connect(const char *cmd, const char *kubeconfig, const char *context,
                         kube_config **cfg) {
  dserr err;
  *cfg = NULL;
  /* plain http:// to a host that is not loopback is refused, as by the main command (which
   * alone has --allow-insecure-http; docs/security.md) */
  if (kube_config_load_kubectl(kubeconfig, context, cfg, &err) < 0 ||
      kube_config_check_transport(*cfg, false, false, &err) < 0) {
    fprintf(stderr, "descheduler %s: %s\n", cmd, err.msg);
    kube_config_free(*cfg);
    *cfg = NULL;
    return NULL;
  }
  kube_client *c = kube_client_new(*cfg, 50, 100, &err);
  if (!c) {
    fprintf(stderr, "descheduler %s: %s\n", cmd, err.msg);
    kube_config_free(*cfg);
    *cfg = NULL;
  }
  return c;
}
