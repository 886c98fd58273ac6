/* usage.h - actual utilization as an input: fetched before a cycle (live) or read from files
 * (simulate), stored in the model, never queried by a plugin (docs/utilization.md).
 *
 * What is read follows the policy's enabled plugins (fw_usage_needs) and its metrics
 * settings, as upstream's descheduler sets its clients up (pkg/descheduler/descheduler.go):
 * - metrics.k8s.io, when a plugin uses `source: KubernetesMetrics` / `metricsServer: true`
 *   and the policy runs a collector (`metricsCollector.enabled` or a KubernetesMetrics
 *   provider). Node usage is smoothed like upstream's collector, which samples every 5 s and
 *   keeps round(0.9 * previous + 0.1 * sample) (the first sample as is): live mode samples
 *   before each cycle and every 5 s between cycles. PodMetrics are read fresh each cycle.
 * - Prometheus, when a plugin uses `source: Prometheus` and the policy has a Prometheus
 *   provider with a URL: one instant query per distinct query per cycle. The bearer token is
 *   the provider's `authToken.secretReference` Secret (data key `prometheusAuthToken`, read
 *   through the API every cycle), else, in a pod, the service-account token (re-read when it
 *   changes); outside a pod without a Secret no token is sent (upstream then has no client).
 *   TLS trusts the service-account CA bundle (`ca.crt`) when present, else the system roots.
 * A source the policy does not configure is not read; the plugin then reports upstream's
 * `metrics client not initialized` / `prometheus client not initialized`. */
#ifndef DS_USAGE_H
#define DS_USAGE_H

#include "../kube/client.h"
#include "../model/model.h"
#include "../policy/policy.h"
#include "../util/err.h"

typedef struct usage_live usage_live;

/* The live reader for a policy; api is the Kubernetes client (borrowed, same thread). */
usage_live *usage_live_new(const policy *pol, kube_client *api);
void usage_live_free(usage_live *u);
/* Reads what the policy needs into m (after model_finish) and links it. Returns -1 with err
 * only when the cycle must not run (the in-cluster token for Prometheus cannot be read, as
 * upstream fails the cycle); every other failure is left in the model for the plugins to
 * report. */
int usage_live_fetch(usage_live *u, model *m, dserr *err);
/* Between cycles: one metrics-collector sample when 5 s have passed since the last one
 * (no-op when no collector is needed). */
void usage_live_tick(usage_live *u);
/* Seconds between collector samples (5, as upstream). */
#define USAGE_COLLECT_SECONDS 5

/* The Prometheus side of a metrics provider, kept across cycles: the client and the token it
 * was made with. Used by usage_live and by the soft-tainter. */
typedef struct usage_prom usage_prom;
/* Copies what it needs from mp (a Prometheus provider with a URL). */
usage_prom *usage_prom_new(const metrics_provider *mp);
/* Whether mp still names the same URL and Secret (else make a new one). */
bool usage_prom_same(const usage_prom *p, const metrics_provider *mp);
void usage_prom_free(usage_prom *p);
/* Brings the client in line with the current credentials (the Secret, read through api, or
 * the in-cluster token) and asks every query into m (one answer each, or none at all when
 * there is no client). -1 with err only when the in-cluster token cannot be read. */
int usage_prom_query(usage_prom *p, kube_client *api, model *m, const char *const *queries,
                     size_t n, dserr *err);

/* simulate: reads --metrics files into m (after model_finish) and links them. A file that
 * cannot be read or is not a metrics answer fails with err naming it and the field; answers
 * the policy would not read live are ignored with a warning. */
int usage_load_files(model *m, const policy *pol, const char *const *paths, size_t n, dserr *err);

#endif
