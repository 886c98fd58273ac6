/* metrics.h - the Prometheus metrics registry (upstream's metrics/metrics.go).
 *
 * Upstream's metric names, labels, help texts and buckets, including the deprecated twins
 * that always move together. The registry is process state (like the logger); it starts
 * disabled, and recording is a no-op until metrics_enable() (so `--disable-metrics` and
 * `simulate` record nothing). Thread-safe: the HTTP server renders while a cycle records. */
#ifndef DS_METRICS_H
#define DS_METRICS_H

#include "../util/strbuf.h"

void metrics_enable(const char *version);
int metrics_enabled(void);
void metrics_pods_evicted(const char *result, const char *strategy, const char *profile,
                          const char *ns, const char *node);
void metrics_loop_duration(double seconds);
void metrics_strategy_duration(const char *strategy, const char *profile, double seconds);
/* The OpenShift KubeVirt profile's KubevirtMigrationAware plugin: blocks by reason
 * ("migration_in_progress" | "cooldown"), node and namespace, and the histogram of effective
 * cooldowns, which appears once the plugin is in use (metrics_kubevirt_register). */
void metrics_kubevirt_register(void);
void metrics_kubevirt_block(const char *reason, const char *node, const char *ns);
void metrics_kubevirt_cooldown(double seconds);
/* This project's VMSafety evictor plugin: rejections by rule, node and namespace. */
void metrics_vmsafety_block(const char *rule, const char *node, const char *ns);
/* descheduler_objects_skipped_total{kind}: objects a live cycle left out because they could
 * not be decoded (this project's own metric; upstream has none). */
void metrics_objects_skipped(const char *kind);
/* The watch cache of Deployment mode (kube/watch.h; this project's own metrics): events by
 * kind and type, full lists by kind and reason. */
void metrics_watch_event(const char *kind, const char *type);
void metrics_watch_list(const char *kind, const char *reason);
/* descheduler_policy_reloads_total{result}: a running process met a changed policy (the
 * file's new content, or a KubeDescheduler's new rendering): "loaded" (used from that cycle)
 * or "rejected" (invalid; the last good policy keeps running). This project's own metric. */
void metrics_policy_reload(const char *result);
/* descheduler_usage_untrusted_nodes_total{node,reason}: a node left out of a utilization
 * plugin's classification because its actual-usage sample was missing, NaN or stale
 * (policy usageSamples). This project's own metric. */
void metrics_usage_untrusted(const char *node, const char *reason);
/* Prometheus text exposition format 0.0.4. */
void metrics_render(strbuf *out);
/* DELETE /metrics: forget every series. */
void metrics_reset(void);

#endif
