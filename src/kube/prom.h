/* prom.h - a Prometheus HTTP API client for instant queries, beside the Kubernetes client.
 *
 * It is the Kubernetes REST client (client.h) pointed at the policy's Prometheus URL: the
 * same libcurl handle with keep-alive, TLS always verified (the given CA bundle, else the
 * system roots), and a bearer token that is either fixed or read from a file and re-read
 * when the file changes (the in-cluster service-account token rotates). The token never
 * appears in a log line or a message.
 *
 * A query is sent as upstream's client (prometheus/client_golang api/prometheus/v1) sends it:
 * POST <url>/api/v1/query with the form `query=...&time=...`, falling back to GET on 405 and
 * 501, and its failures are worded as that client words them (`client_error: client error:
 * 401`, `Post "<url>/api/v1/query": dial tcp ...: connection refused`), behind upstream's
 * `unable to capture prometheus metrics: `. The answer always lands in the model: samples or
 * the reason there are none. */
#ifndef DS_KUBE_PROM_H
#define DS_KUBE_PROM_H

#include "../model/model.h"
#include "../util/err.h"

typedef struct {
  const char *url;        /* the provider's URL, e.g. https://prometheus-k8s.example:9091 */
  const char *token;      /* bearer token, or NULL */
  const char *token_file; /* bearer token file re-read when it changes, or NULL */
  const char *ca_file;    /* PEM bundle trusted for https, or NULL for the system roots */
} prom_config;

typedef struct prom_client prom_client;

/* Returns NULL with err (unreadable CA or token file, bad URL). Caller frees. */
prom_client *prom_client_new(const prom_config *cfg, dserr *err);
void prom_client_free(prom_client *c);

/* One instant query evaluated at `at` (Unix seconds) into m->prom_answers. */
void prom_query(prom_client *c, model *m, const char *query, double at);

#endif
