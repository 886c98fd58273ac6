/* kubeget.c - a tiny driver for the kube client, used by tests/cli/t0100-kube-client.sh.
 *
 *   kubeget [--kubeconfig FILE] [--qps Q] [--burst B] [--v N] [--timeout S] [--stats]
 *           [-X METHOD] [-d BODY] [--content-type T] [--sh CMD] PATH...
 *
 * Loads the config (no --kubeconfig: the in-cluster config), makes one client and sends one
 * request per PATH over it, in order; -X/-d/--content-type apply to the PATHs after them and
 * `--sh CMD` runs a shell command at that point (to rotate a token file between requests).
 * Bodies go to stdout; every response adds a line `HTTP <status> <METHOD> <PATH>` to stderr
 * (with `: <reason>: <message>` from a Status body when not 2xx). With --stats the last
 * stderr line is `connections=<n>`.
 *
 * Exit status: 0 all responses 2xx; 3 some response was not 2xx; 1 transport error (the
 * message on stderr, later PATHs are not sent); 2 bad usage, config or client error. */
#include "../../src/kube/client.h"
#include "../../src/kube/config.h"
#include "../../src/obs/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void) {
  fprintf(stderr, "usage: kubeget [--kubeconfig FILE] [--qps Q] [--burst B] [--v N] "
                  "[--timeout S] [--stats] [-X METHOD] [-d BODY] [--content-type T] "
                  "[--sh CMD] PATH...\n");
  return 2;
}

int main(int argc, char **argv) {
  const char *kubeconfig = NULL;
  double qps = 0;
  int burst = 0;
  long timeout = -1;
  int stats = 0, i;
  /* first pass: the options that shape the client */
  for (i = 1; i < argc; i++) {
    const char *a = argv[i];
    int has_value = i + 1 < argc;
    if (strcmp(a, "--kubeconfig") == 0 && has_value)
      kubeconfig = argv[++i];
    else if (strcmp(a, "--qps") == 0 && has_value)
      qps = atof(argv[++i]);
    else if (strcmp(a, "--burst") == 0 && has_value)
      burst = atoi(argv[++i]);
    else if ((strcmp(a, "--v") == 0 || strcmp(a, "-v") == 0) && has_value)
      log_set_verbosity(atoi(argv[++i]));
    else if (strcmp(a, "--timeout") == 0 && has_value)
      timeout = atol(argv[++i]);
    else if (strcmp(a, "--stats") == 0)
      stats = 1;
    else if ((strcmp(a, "-X") == 0 || strcmp(a, "-d") == 0 || strcmp(a, "--content-type") == 0 ||
              strcmp(a, "--sh") == 0) &&
             has_value)
      i++;
    else if (a[0] == '-')
      return usage();
  }
  dserr err = {{0}};
  kube_config *cfg = NULL;
  if (kube_config_load(kubeconfig, &cfg, &err) < 0) {
    fprintf(stderr, "error: %s\n", err.msg);
    return 2;
  }
  kube_client *c = kube_client_new(cfg, qps, burst, &err);
  kube_config_free(cfg);
  if (!c) {
    fprintf(stderr, "error: %s\n", err.msg);
    return 2;
  }
  if (timeout >= 0)
    kube_client_set_timeout(c, timeout);

  const char *method = "GET", *body = NULL, *ctype = NULL;
  int rc = 0;
  for (i = 1; i < argc && rc != 1; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--kubeconfig") == 0 || strcmp(a, "--qps") == 0 || strcmp(a, "--burst") == 0 ||
        strcmp(a, "--v") == 0 || strcmp(a, "-v") == 0 || strcmp(a, "--timeout") == 0) {
      i++;
      continue;
    }
    if (strcmp(a, "--stats") == 0)
      continue;
    if (strcmp(a, "-X") == 0) {
      method = argv[++i];
      continue;
    }
    if (strcmp(a, "-d") == 0) {
      body = argv[++i];
      continue;
    }
    if (strcmp(a, "--content-type") == 0) {
      ctype = argv[++i];
      continue;
    }
    if (strcmp(a, "--sh") == 0) {
      fflush(stdout);
      if (system(argv[++i]) != 0) {
        fprintf(stderr, "error: --sh command failed: %s\n", argv[i]);
        rc = 2;
        break;
      }
      continue;
    }
    kube_response resp;
    if (kube_request(c, method, a, ctype, body, &resp, &err) < 0) {
      fprintf(stderr, "error: %s\n", err.msg);
      rc = 1;
      break;
    }
    fwrite(resp.body, 1, resp.len, stdout);
    if (resp.status >= 200 && resp.status < 300) {
      fprintf(stderr, "HTTP %ld %s %s\n", resp.status, method, a);
    } else {
      char message[1024], reason[128];
      kube_status_text(&resp, message, sizeof message, reason, sizeof reason);
      fprintf(stderr, "HTTP %ld %s %s: %s: %s\n", resp.status, method, a, reason, message);
      rc = 3;
    }
    kube_response_free(&resp);
  }
  fflush(stdout);
  if (stats)
    fprintf(stderr, "connections=%ld\n", kube_client_connections(c));
  kube_client_free(c);
  return rc;
}
