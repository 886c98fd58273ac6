/* plugin_desc.h - what a plugin tells the rest of the program about itself.
 *
 * Each plugin file under plugins/ defines one plugin_desc: its registered name, the
 * extension points it serves, the layout of its args (decoded strictly by policy/args.c),
 * its validation and defaults (run by the policy loader in upstream's order), an optional
 * construction check, and the functions the framework calls during a cycle. The registry
 * (plugins/registry.c) maps names to descriptors. */
#ifndef DS_PLUGIN_DESC_H
#define DS_PLUGIN_DESC_H

#include "../model/model.h"
#include "../util/err.h"
#include "args.h"

#include <stdbool.h>
#include <stddef.h>

enum { PLUGIN_DESCHEDULE = 1, PLUGIN_BALANCE = 2, PLUGIN_EVICTOR = 4 };

typedef struct plugin_handle plugin_handle;

/* What a plugin may consult while the policy is being prepared (before any cycle). */
typedef struct {
  /* Looks up a PriorityClass value; returns -1 with err when it cannot. */
  int (*priority_class_value)(void *ctx, const char *name, int32_t *value, dserr *err);
  void *ctx;
  /* Whether the cluster serves KubeVirt's API: 1 yes, -1 no, 0 unknown (a snapshot). */
  int kubevirt;
} plugin_env;

/* The actual-utilization inputs a policy's plugins read (docs/utilization.md). Live mode
 * fetches exactly these before a cycle; simulate reads them from --metrics files. */
#define USAGE_MAX_QUERIES 32
typedef struct {
  bool node_metrics; /* metrics.k8s.io NodeMetrics (source KubernetesMetrics / metricsServer) */
  bool pod_metrics;  /* metrics.k8s.io PodMetrics (the same sources: a pod's usage) */
  size_t nqueries;   /* distinct Prometheus queries, first-use order */
  const char *queries[USAGE_MAX_QUERIES];
} usage_needs;

/* Adds a Prometheus query to needs unless already there (or the table is full: a policy with
 * more distinct queries than USAGE_MAX_QUERIES gets "prometheus client not initialized" for
 * the rest, which is logged). */
void usage_needs_add_query(usage_needs *needs, const char *query);

typedef struct plugin_desc {
  const char *name;
  unsigned points;
  size_t args_size;
  const args_field *fields;
  /* Validation of args as written. Returns -1 with the (already aggregated) upstream text. */
  int (*validate)(const void *args, dserr *err);
  /* Fills defaults after validation. */
  void (*set_defaults)(void *args);
  /* Construction-time work and checks (upstream's plugin constructor), after defaults:
   * e.g. resolving a PriorityClass. -1 with err fails the policy. Logs build-time lines. */
  int (*prepare)(void *args, const plugin_env *env, dserr *err);
  /* Deschedule or Balance: one run over the cycle's nodes. Returns -1 with err for the
   * "plugin finished with error" case; evictions go through the framework. */
  int (*run)(plugin_handle *h, const void *args, dserr *err);
  /* Evictor plugins: Filter and PreEvictionFilter. */
  bool (*filter)(plugin_handle *h, const void *args, const pod *p);
  bool (*pre_eviction_filter)(plugin_handle *h, const void *args, const pod *p);
  /* Evictor plugins, not upstream: the last word at the moment of eviction, after the
   * eviction limits, for rules that depend on what the cycle has done so far (several
   * plugins run PreEvictionFilter over all candidates before evicting any). false vetoes
   * this eviction (fw_evict answers EVICT_VETOED); the plugin logs why. */
  bool (*admit)(plugin_handle *h, const void *args, const pod *p);
  /* Evictor plugins, not upstream: true when an eviction KubeVirt answered by starting an
   * evacuation (a 429 "Eviction triggered evacuation" that upstream counts as a failed
   * eviction: without EvictionsInBackground, or a pod without request-evict-only) counts
   * against the policy's eviction limits of the cycle all the same, since the VM moves. One
   * evictor of the profile saying so is enough; NULL or false: upstream's way, not counted. */
  bool (*counts_evacuations)(const void *args);
  /* Optional: adds the actual-utilization inputs this configuration reads. */
  void (*add_usage_needs)(const void *args, usage_needs *needs);
  /* Optional: true when this configuration reads pod.conditions; a live read then keeps
   * them (model.keep_pod_conditions: they are a third of a pod's model). */
  bool (*reads_pod_conditions)(const void *args);
} plugin_desc;

typedef const plugin_desc *(*plugin_lookup_fn)(const char *name);

#endif
