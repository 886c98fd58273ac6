/* nodeutilization.h - what LowNodeUtilization and HighNodeUtilization share (plugins.md §2).
 *
 * Node usage from pod requests, percentages computed in IEEE double exactly as upstream
 * (used / capacity * 100, so 57% can be 56.99999999999999), per-node caps from a threshold,
 * and the eviction engine that moves pods off source nodes while the destinations have room.
 *
 * Quantities are "scaled": millicores for cpu, whole units (bytes, pods) for everything
 * else, as upstream compares them. */
#ifndef DS_NODEUTILIZATION_H
#define DS_NODEUTILIZATION_H

#include "../framework/framework.h"
#include "../policy/args.h"

#include <stdbool.h>
#include <stdint.h>

#define NU_MAX_RES 32

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

/* Builds R_ext from the threshold keys (at most NU_MAX_RES - 3). */
void nu_resources_init(nu_resources *r, const pct_map *thresholds);
int nu_index(const nu_resources *r, const char *name);

/* Scaled request of one pod for resource name (cpu milli, else units rounded up). */
int64_t nu_pod_request(const pod *p, const char *name);

/* Usage, capacity and percentages of every node (requests-based usage client). */
nu_node *nu_compute(plugin_handle *h, const nu_resources *r, node **nodes, size_t n);

/* cap[R] = trunc(high[R] * 0.01 * capacity[R]); full capacity when high has no entry. */
void nu_set_caps(nu_node *nn, const nu_resources *r, const pct_map *high);

/* JSON renderings for the "usage" and "usagePercentage" log keys (in h->scratch). */
const char *nu_usage_json(plugin_handle *h, const nu_resources *r, const int64_t *usage);
const char *nu_pct_json(plugin_handle *h, const nu_resources *r, const nu_node *nn);
const char *nu_pct_str(plugin_handle *h, double v); /* "70.00%" */

/* "Node has been classified" (category "underutilized" / "overutilized") with usage and
 * percentages; also records the category for the report. */
void nu_log_classified(plugin_handle *h, const nu_resources *r, const nu_node *nn,
                       const char *category);
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
} nu_plan;

/* §2.9. Returns -1 only for a plugin error (err set). */
int nu_evict(plugin_handle *h, const nu_plan *plan, dserr *err);

/* Threshold map checks shared by both plugins (plugins.md §2.2 step 2), unprefixed:
 * "no resource threshold is configured", "<R> threshold not in [0, 100] range". */
int nu_validate_thresholds(const pct_map *m, dserr *err);

/* Σ of a node's usage over its resources (cpu milli, others units): the drain order key. */
int64_t nu_usage_sum(const nu_resources *r, const nu_node *nn);
/* Orders nodes by nu_usage_sum (descending for LowNodeUtilization, ascending for High);
 * equal sums keep their order (name order). */
void nu_sort_by_usage(plugin_handle *h, const nu_resources *r, nu_node **nodes, size_t n,
                      bool descending);
/* The early exits both plugins share (plugins.md §2.8): no underutilized node, no more than
 * numberOfNodes of them, or all cycle nodes underutilized. Logs the reason and returns true
 * when the plugin should stop. */
bool nu_nothing_to_do(plugin_handle *h, size_t nunder, int64_t number_of_nodes);

#endif
