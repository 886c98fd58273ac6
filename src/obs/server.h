/* server.h - the HTTPS endpoint for /metrics and /healthz.
 *
 * Served on --bind-address:--secure-port by libmicrohttpd in its own thread, HTTPS with
 * --tls-cert-file/--tls-private-key-file (re-read within a second when they change; a pair
 * that does not load keeps the previous one) or, when none is given, a self-signed
 * certificate generated in memory at start (CN apiserver-loopback-client); the TLS versions,
 * cipher suites and groups are those of --tls-min-version, --tls-cipher-suites and
 * --tls-curve-preferences (tlsconfig.h). A plain HTTP request gets Go's `400 Client sent an
 * HTTP request to an HTTPS server.` One server per process. No authentication, as upstream.
 * Routes: GET /metrics (Prometheus text from metrics.h; absent with --disable-metrics), DELETE
 * /metrics (reset, answers "metrics reset"), GET /healthz (200 "ok"; ?verbose lists
 * "[+]Descheduler ok" and "healthz check passed"; ?exclude=Descheduler accepted), GET
 * /healthz/Descheduler (200 "ok"); anything else 404. */
#ifndef DS_SERVER_H
#define DS_SERVER_H

#include "../util/err.h"

#include <stdbool.h>

typedef struct {
  const char *bind_address; /* "0.0.0.0" */
  int port;                 /* 0 = no server */
  const char *cert_file, *key_file; /* both NULL = self-signed */
  bool metrics;             /* serve /metrics */
  /* GnuTLS priority string from the --tls-* flags (tlsconfig.h's tls_priorities); NULL:
   * TLS 1.2 and 1.3 with GnuTLS's NORMAL set, as without those flags */
  const char *tls_priorities;
} server_options;

typedef struct obs_server obs_server;

/* Starts serving; NULL with err (`failed to start secure server: <reason>`). Caller stops
 * and frees the result with obs_server_stop. port 0 gives a handle that serves nothing (so
 * callers need no special case); port -1 lets the OS pick a free port (tests). A NULL or
 * empty bind_address means 0.0.0.0, which (as in Go) listens dual-stack on [::] where the
 * host has IPv6. Reasons read like Go's: `listen tcp 127.0.0.1:10258: bind: address already
 * in use`, `invalid bind address "x": not an IP address`, `open <file>: no such file or
 * directory`, `<cert>, <key>: tls: private key does not match public key`. */
obs_server *obs_server_start(const server_options *opt, dserr *err);
/* The port actually bound (useful when opt->port was chosen by the OS in tests); 0 when
 * not serving. */
int obs_server_port(const obs_server *s);
void obs_server_stop(obs_server *s);

#endif
