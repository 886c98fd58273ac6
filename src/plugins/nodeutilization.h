/* nodeutilization.h - what LowNodeUtilization and HighNodeUtilization share, as upstream's
 * pkg/framework/plugins/nodeutilization/nodeutilization.go does.
 *
 * Node usage (from pod requests, or actual utilization read into the model: metrics.k8s.io
 * or a Prometheus query, as upstream's usage clients give it), percentages computed in IEEE
 * double exactly as upstream (used / capacity * 100, so 57% can be 56.99999999999999), the
 * threshold pair and the under/over tests (also used by the soft-tainter), per-node caps
 * from a threshold, and the eviction engine that moves pods off source nodes while the
 * destinations have room.
 *
 * Quantities are "scaled": millicores for cpu, whole units (bytes, pods) for everything
 * else, as upstream compares them. The synthetic resource MetricResource (a Prometheus
 * query's value, 0-100) has a capacity of 100 on every node. */
#ifndef DS_NODEUTILIZATION_H
#define DS_NODEUTILIZATION_H

#include "../framework/framework.h"
#include "../policy/args.h"
#include "vmsafety.h"

#include <stdbool.h>
#include <stdint.h>

#define NU_MAX_RES 32
#define NU_METRIC_RESOURCE "MetricResource"

/* Where usage comes from (upstream's usage clients, usageclients.go). */
typedef enum {
  NU_REQUESTS,    /* Σ requests of the node's non-terminal pods (the default) */
  NU_METRICS_API, /* metrics.k8s.io NodeMetrics / PodMetrics (KubernetesMetrics, metricsServer) */
  NU_PROMETHEUS,  /* one Prometheus query: MetricResource per node; no pod usage */
} nu_source;

typedef struct {
  nu_source kind;
  const char *query; /* NU_PROMETHEUS */
} nu_usage;

typedef struct {
  size_t n;
  const char *names[NU_MAX_RES]; /* R_ext: threshold keys, then cpu, memory, pods if missing */
} nu_resources;

typedef struct {
  node *node;
  int64_t usage[NU_MAX_RES];    /* scaled */
  int64_t capacity[NU_MAX_RES]; /* scaled; 0 when absent */
  bool has_capacity[NU_MAX_RES];
  double pct[NU_MAX_RES];
  bool has_pct[NU_MAX_RES];
  int64_t cap[NU_MAX_RES]; /* the node's limit from its high threshold (scaled) */
  pod **pods;              /* present non-terminal pods, name order */
  size_t npods;
} nu_node;

/* Builds R_ext from the threshold keys (at most NU_MAX_RES - 3), plus cpu, memory and pods
 * unless only_thresholds (Prometheus mode, where R_ext is the threshold keys alone). */
void nu_resources_init(nu_resources *r, const pct_map *thresholds, bool only_thresholds);
int nu_index(const nu_resources *r, const char *name);

/* Scaled request of one pod for resource name (cpu milli, else units rounded up). */
int64_t nu_pod_request(const pod *p, const char *name);

/* Usage, capacity and percentages of the nodes from the usage source (NULL = requests), *nout
 * of them. With actual utilization and the policy's usageSamples.skipNodesWithoutSamples (the
 * default) a node without a usable sample (none, NaN, older than maxSampleAge) is left out
 * (logged, counted in descheduler_usage_untrusted_nodes_total) unless more than
 * maxMissingFraction of them are, which fails; without it, as upstream, a source that cannot
 * give every node's usage returns NULL with upstream's error (e.g. `unable to find metric
 * entry for node-a`, `prometheus client not initialized` when nothing answered the query). */
nu_node *nu_compute(plugin_handle *h, const nu_resources *r, node **nodes, size_t n,
                    const nu_usage *src, size_t *nout, dserr *err);
/* Capacity and percentages of one node whose usage[] is set (MetricResource: 100). */
void nu_set_percentages(nu_node *nn, const nu_resources *r);
/* The usable answer to query, or NULL with the reason: `prometheus client not initialized`
 * when nothing answered, else the answer's own error (upstream's words; with nan_fails a NaN
 * sample is one, as upstream's check of the range refuses it). */
const prom_answer *nu_prom_answer(const model *m, const char *query, bool nan_fails, dserr *err);
/* One node's MetricResource usage from a Prometheus answer: trunc(value * 100), then the
 * percentages. -1 with `unable to find metric entry for <node>` when it has no sample. */
int nu_prom_node_usage(const prom_answer *a, const nu_resources *r, nu_node *nn, dserr *err);

/* The threshold pair over the threshold keys: static (thresholds / target as given), or with
 * deviation the mean percentage of the nodes (those having one) minus `thresholds` and plus
 * `target`, clamped to [0, 100]. avg (thresholds->n values) may be NULL. Values live in a. */
void nu_assess_thresholds(arena *a, const pct_map *thresholds, const pct_map *target,
                          bool deviation, const nu_resources *r, const nu_node *nodes, size_t n,
                          pct_map *low, pct_map *high, double *avg);
/* Every resource of low at or below it (a missing percentage counts as 0). */
bool nu_below(const nu_resources *r, const nu_node *nn, const pct_map *low);
/* Some resource of high strictly above it. */
bool nu_above(const nu_resources *r, const nu_node *nn, const pct_map *high);

/* cap[R] = trunc(high[R] * 0.01 * capacity[R]); full capacity when high has no entry. */
void nu_set_caps(nu_node *nn, const nu_resources *r, const pct_map *high);

/* JSON renderings for the "usage" and "usagePercentage" log keys (in h->scratch, the only
 * member of h they use). */
const char *nu_usage_json(plugin_handle *h, const nu_resources *r, const int64_t *usage);
const char *nu_pct_json(plugin_handle *h, const nu_resources *r, const nu_node *nn);
const char *nu_pct_str(plugin_handle *h, double v); /* "70.00%" */
/* v rounded to two decimals (half away from zero) as Go's JSON writes that double: the
 * usagePercentage values of "Node has been classified" */
void nu_format_pct(strbuf *sb, double v);

/* "Node has been classified" (category "underutilized" / "overutilized") with usage and
 * percentages; also records the category for the report. */
void nu_log_classified(plugin_handle *h, const nu_resources *r, const nu_node *nn,
                       const char *category);
/* For the decision record: the thresholds in force as one text ("low cpu 20.00% ...; high
 * ..."; low or high may be NULL), in h's scratch; NULL when no record is kept. The same for
 * every node of a run: made once, passed to nu_note_why. */
const char *nu_thresholds_text(plugin_handle *h, const pct_map *low, const pct_map *high);
/* For the decision record: why nn got `category` (e.g. "memory 72.00% > 68.00%") and the
 * thresholds in force (low and/or high may be NULL; thresholds their nu_thresholds_text). */
void nu_note_why(plugin_handle *h, const nu_resources *r, const nu_node *nn, const pct_map *low,
                 const pct_map *high, const char *thresholds, const char *category);
/* A V1 criteria line: one key per threshold resource, values as "70.00%". */
void nu_log_criteria(plugin_handle *h, const char *msg, const pct_map *m);

/* The source node's continue-condition (LNU: over cap and room left; HNU: room left). */
typedef bool (*nu_continue_fn)(const nu_resources *r, const nu_node *src, const int64_t *avail);

typedef struct {
  const nu_resources *res;
  nu_node **sources; /* in the order to drain */
  size_t nsources;
  nu_node **dests;
  size_t ndests;
  nu_continue_fn cont;
  opt_uint node_limit;          /* evictionLimits.node */
  const ns_filter *excluded;    /* evictableNamespaces (exclude only) */
  bool (*pod_filter)(plugin_handle *h, const void *ctx, const pod *p); /* plugin's pod filter */
  const void *filter_ctx;
  const nu_usage *usage; /* where a pod's usage comes from; NULL = its requests */
  /* targeted moves (vmsafety.h; NULL or targeted off: evictions, as upstream): a launcher's
   * destination is chosen among `dests` (choose_destination in nodeutilization.c), and the
   * imbalance a move must reduce is measured over `all`, the plugin's nodes */
  const vmsafety_moves *moves;
  nu_node *all;
  size_t nall;
} nu_plan;

/* The eviction engine (upstream's evictPodsFromSourceNodes and evictPods in
 * nodeutilization.go). Returns -1 only for a plugin error (err set). */
int nu_evict(plugin_handle *h, const nu_plan *plan, dserr *err);

/* Threshold map checks shared by both plugins (upstream's validateThresholds), unprefixed:
 * "no resource threshold is configured", "<R> threshold not in [0, 100] range". */
int nu_validate_thresholds(const pct_map *m, dserr *err);

/* Σ of a node's usage over its resources (cpu milli, others units): the drain order key. */
int64_t nu_usage_sum(const nu_resources *r, const nu_node *nn);
/* Orders nodes by nu_usage_sum (descending for LowNodeUtilization, ascending for High);
 * equal sums keep their order (name order). */
void nu_sort_by_usage(plugin_handle *h, const nu_resources *r, nu_node **nodes, size_t n,
                      bool descending);
/* The early exits both plugins share (as both upstream Balance functions): no underutilized
 * node, no more than numberOfNodes of them, or all cycle nodes underutilized. Logs the reason
 * and returns true when the plugin should stop. */
bool nu_nothing_to_do(plugin_handle *h, size_t nunder, size_t nnodes, int64_t number_of_nodes);

/* What the soft-tainter reads from a LowNodeUtilization configuration (the KubeVirt profile's):
 * its thresholds and its Prometheus query. */
typedef struct {
  bool use_deviation;
  const pct_map *thresholds, *target;
  const char *query; /* metricsUtilization.prometheus.query; NULL when there is none */
} lnu_classification;
/* args: the decoded args of a pluginConfig named LowNodeUtilization (borrowed into out). */
void lnu_classification_of(const void *args, lnu_classification *out);

#endif
