/* framework.h - one descheduling cycle: profiles, extension points, evictor, limits, sink.
 *
 * The decision code never does I/O. A cycle reads the model, asks the profile's evictor
 * plugins whether a pod may go (Filter / PreEvictionFilter), and hands each eviction to an
 * eviction_sink: the live sink calls the Eviction API, the simulate sink records. So
 * `simulate` and a live run make the same decisions by construction.
 *
 * Pods a cycle has evicted are marked gone in the model: later plugins of the same cycle no
 * longer list them, as upstream's dry run deletes them from its in-memory store. Pods whose
 * eviction became a request in background (KubeVirt live migration) stay listed. */
#ifndef DS_FRAMEWORK_H
#define DS_FRAMEWORK_H

#include "../model/model.h"
#include "../obs/log.h"
#include "../policy/policy.h"
#include "../util/arena.h"
#include "../util/err.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------- eviction sink ---------- */

typedef enum {
  SINK_EVICTED,      /* 2xx: the pod is being deleted */
  SINK_TOO_MANY,     /* 429 (PDB, KubeVirt webhook denial, rate limit); message holds the text */
  SINK_NOT_FOUND,    /* 404 */
  SINK_ERROR,        /* anything else (500, 403, transport); message holds the text */
  SINK_UNKNOWN,      /* sent, but no answer came (timeout, reset): the pod may be leaving.
                        Counted against the limits (never over-evict), logged as an error */
  SINK_MIGRATING,    /* a targeted move (eviction_request.to_node): KubeVirt accepted a
                        VirtualMachineInstanceMigration of the pod's VMI to that node; message
                        holds the migration's name */
} sink_result;

typedef struct {
  const char *profile, *strategy, *reason;
  bool has_grace_period;
  int64_t grace_period_seconds;
  /* NULL: evict the pod. A node name: the pod is a virt-launcher and the request is a live
   * migration of its VMI to that node (a VirtualMachineInstanceMigration with
   * spec.addedNodeSelector; docs/vm-safety.md); a sink that cannot ask for one falls back to
   * the eviction and says so once. */
  const char *to_node;
} eviction_request;

typedef struct eviction_sink {
  /* Requests the eviction of p. Fills message (the server's text) for non-success. */
  sink_result (*evict)(struct eviction_sink *self, const pod *p, const eviction_request *req,
                       char *message, size_t cap);
  /* Records a Kubernetes Event about p (type "Normal" or "Warning"); NULL = no events. */
  void (*event)(struct eviction_sink *self, const pod *p, const char *type, const char *reason,
                const char *note);
  /* log "Evicted pod in dry run mode", emit no events; a pod this cycle already evicted
   * fails with the fake store's not-found without reaching the sink */
  bool dry_run;
} eviction_sink;

/* ---------- requests in background (EvictionsInBackground, docs/behaviour.md) ---------- */

typedef struct {
  const char *uid, *ns, *name, *node, *strategy, *profile; /* heap copies */
  bool assumed;
  int64_t assumed_at;
  bool in_progress; /* the pod carried eviction-in-progress when last seen */
} bg_entry;

typedef struct {
  size_t n, cap;
  bg_entry *items;
} bg_cache;

bg_entry *bg_find(bg_cache *c, const char *uid);
/* Adds (un-assumed or assumed); an existing entry is upgraded to assumed, never recounted. */
void bg_put(bg_cache *c, const pod *p, const char *strategy, const char *profile, bool assumed,
            int64_t now);
void bg_remove(bg_cache *c, const char *uid);
void bg_clear(bg_cache *c);
/* Brings the cache up to date with a fresh model, as upstream's pod informer handlers do
 * (registered by NewPodEvictor, pkg/descheduler/evictions/evictions.go): a cached pod that was
 * deleted, lost request-evict-only, reached a terminal phase or lost eviction-in-progress
 * leaves the cache (metrics as upstream); a pod with both annotations in a non-terminal phase
 * is added; assumed entries older than 600 s expire. `first` selects the start-up wording
 * ("Adding pod to the cache."). */
void bg_sync(bg_cache *c, const model *m, int64_t now, bool first);

/* ---------- state across cycles ---------- */

/* Since when each node has been seen overutilized by a balance plugin that keeps hysteresis
 * (VMSafety's overutilizedFor). The caller owns it: a Deployment keeps it from one cycle to the
 * next, and every cycle adds what the nodes' NODE_OVER_SINCE_ANNOTATION says of nodes it does
 * not know (fw_history_seed), so the state holds across one-shot runs and restarts; after the
 * cycle the caller writes back the annotations that differ (fw_history_since). */
typedef struct {
  char *node; /* heap copy */
  int64_t since;
} fw_over;

typedef struct {
  size_t n, cap;
  fw_over *items;
} fw_history;

void fw_history_seed(fw_history *h, const model *m);
/* When node (by name) was first seen overutilized, 0 when it is not. */
int64_t fw_history_since(const fw_history *h, const char *node);
void fw_history_free(fw_history *h);

/* ---------- options and results ---------- */

struct decisions; /* framework/decisions.h */

typedef struct {
  bool evictions_in_background; /* feature gate */
  int64_t now;                  /* seconds since epoch; ages are measured against it */
  struct decisions *decisions;  /* where to record every pod's outcome; NULL = not recorded */
  /* set (by a signal handler) when the process is to stop: from then on the cycle tries no
   * eviction, and its plugins stop as at the total limit; NULL = never */
  const volatile sig_atomic_t *stop;
  /* the state kept across cycles; NULL: the cycle keeps one of its own, seeded from the
   * nodes' annotations (simulate, check) */
  fw_history *history;
} fw_options;

/* One eviction, background request or evacuation the cycle made, in order. */
typedef struct {
  const pod *pod;
  const char *profile, *plugin;
  bool background;
  const char *to; /* a targeted live migration: the node chosen (model string); else NULL */
  /* KubeVirt answered the eviction by starting a live migration (429 "Eviction triggered
   * evacuation") that is neither an eviction nor a request in background: upstream counts it
   * as a failed eviction (without EvictionsInBackground, or a pod without request-evict-only),
   * and the VM moves all the same. `counted`: it counted against the policy's limits
   * (plugin_desc.counts_evacuations, VMSafety's countEvacuationsAgainstLimits). */
  bool evacuation, counted;
} fw_eviction;

typedef struct {
  size_t nevictions, cap;
  fw_eviction *evictions;
  const char **node_category; /* by model node index: first classification a plugin logged */
  uint64_t evicted;  /* totalEvicted */
  uint64_t requests; /* evictionRequests: the background cache size at the end */
  uint64_t migrations; /* targeted moves KubeVirt accepted (fw_migrate) */
  uint64_t evacuations; /* evictions answered by an evacuation outside the background cache
                           (fw_eviction.evacuation); not in `evicted` nor `requests` */
  bool skipped;      /* fewer than 2 nodes */
  size_t nnodes;     /* nodes in the cycle */
} fw_result;

void fw_result_free(fw_result *r);

/* Runs one cycle. bg persists across cycles (Deployment mode). Returns -1 only when the
 * cycle cannot run at all (bad node selector); plugin errors are logged, never fatal. */
int fw_run_cycle(const policy *pol, model *m, bg_cache *bg, eviction_sink *sink,
                 const fw_options *opt, fw_result *out, dserr *err);

/* Requested cpu, memory and pods of n's pods as percentages of its allocatable (capacity when
 * it gives none); pods evicted or requested in background (p->evicted, p->leaving) and
 * finished pods do not count. has[r] is false when the node gives no such capacity. What
 * simulate's plan and the decision record print as a node's usagePercentage. */
void fw_node_request_pcts(const node *n, double pct[3], bool has[3]);

/* ---------- actual utilization (usage.c) ---------- */

/* The actual-utilization inputs the policy's enabled plugins read (NodeMetrics, PodMetrics,
 * distinct Prometheus queries). Query strings are borrowed from the policy. */
void fw_usage_needs(const policy *pol, usage_needs *out);
/* Whether an enabled plugin of the policy reads pod.conditions (plugin_desc). */
bool fw_reads_pod_conditions(const policy *pol);

/* ---------- what plugins see ---------- */

typedef struct cycle cycle;

struct plugin_handle {
  cycle *cy;
  model *m;
  const profile *prof;
  const char *plugin;    /* plugin name, also the eviction "strategy" */
  const char *ext_point; /* "Deschedule" or "Balance" */
  node **nodes;          /* the cycle's nodes, sorted by name */
  size_t nnodes;
  log_ctx log; /* plugin=<name> ExtensionPoint=<point> */
  int64_t now;
  arena *scratch; /* reset after the plugin returns */
};

/* The policy's usageSamples: which actual-utilization samples the cycle trusts. */
const usage_trust *fw_usage_trust(const plugin_handle *h);

bool fw_filter(plugin_handle *h, const pod *p);
bool fw_pre_eviction_filter(plugin_handle *h, const pod *p);

typedef enum {
  EVICT_OK,
  EVICT_LIMIT_TOTAL,
  EVICT_LIMIT_NODE,
  EVICT_LIMIT_NAMESPACE,
  EVICT_FAILED,
  EVICT_VETOED, /* an evictor plugin's admit() said no (and logged why): go on to the next pod */
} evict_status;

/* Evicts p through the profile's sink with upstream's limits, logs and metrics. reason may be
 * "" (plugins pass only their name as strategy). */
evict_status fw_evict(plugin_handle *h, pod *p, const char *reason);
/* The same limits and checks, but asks for a live migration of p's VMI to dest (p is a
 * virt-launcher); `why` (why dest, for the decision record) may be NULL. EVICT_OK when KubeVirt
 * accepted the migration (or, where targeted migrations are not served, the eviction it fell
 * back to went through). */
evict_status fw_migrate(plugin_handle *h, pod *p, const node *dest, const char *reason,
                        const char *why);
/* Hysteresis (VMSafety's overutilizedFor): records whether n is overutilized at this cycle
 * and returns since when it has been (the cycle's time when it just became so; 0 when it is
 * not). */
int64_t fw_overutilized(plugin_handle *h, const node *n, bool over);
/* Migrations this cycle asked for to n (fw_migrate), for an inbound limit. */
uint64_t fw_cycle_inbound(plugin_handle *h, const node *n);

/* Pods bound to n and still present, in name order; non_terminal drops Succeeded/Failed.
 * The array lives in h->scratch. */
pod **fw_node_pods(plugin_handle *h, const node *n, bool non_terminal, size_t *count);
/* The same into out (room for n->npods), returning the count: reads only n and its pods, so
 * it may run beside other readers of the model. */
size_t fw_node_pods_into(const node *n, bool non_terminal, pod **out);
/* true when the cycle evicted p (it is gone for the rest of the cycle). */
bool fw_pod_gone(const pod *p);
/* Σ requests of the present non-terminal pods on n for resource `name` (milli), cached. */
int64_t fw_node_requested(plugin_handle *h, const node *n, const char *name);
/* Number of present non-terminal pods on n, cached. */
int64_t fw_node_pod_count(plugin_handle *h, const node *n);
/* true if n is one of the cycle's nodes. */
bool fw_is_cycle_node(plugin_handle *h, const node *n);
/* Ready nodes of the whole model matching a selector (NULL = all), cached per selector text. */
node **fw_ready_nodes(plugin_handle *h, const char *selector_text, size_t *count);
/* Records how a utilization plugin classified n ("underutilized", "overutilized",
 * "appropriately utilized"); the first classification of the cycle is kept for reports. */
void fw_note_category(plugin_handle *h, const node *n, const char *category);
/* true when this cycle keeps a decision record (the fw_note_* calls below store something):
 * plugins test it before building texts only the record reads. */
bool fw_recording(const plugin_handle *h);
/* For the decision record: why n got its category ("memory 72.00% > 68.00%") and the
 * thresholds in force. Either may be NULL. */
void fw_note_node_why(plugin_handle *h, const node *n, const char *why, const char *thresholds);
/* For the decision record and the report's bars: the low and high percentages of one resource
 * in force for n. */
void fw_note_node_threshold(plugin_handle *h, const node *n, const char *resource, double low,
                            double high);
/* For the decision record: the usage percentages n was classified with, one per resource of
 * the plugin (names borrowed for the call). */
void fw_note_node_usage(plugin_handle *h, const node *n, const char *const *resources,
                        const double *pcts, size_t count);
/* For the decision record: a balance plugin found no destination for p's targeted move (why),
 * so p stays. */
void fw_note_no_move(plugin_handle *h, const pod *p, const char *why);
/* For the decision record: p stays because its node reached its target while being drained. */
void fw_note_node_at_target(plugin_handle *h, const pod *p);
/* For the decision record: p stays because a limit of the plugin's own (e.g. LowNodeUtilization's
 * evictionLimits.node) was reached; why names it. */
void fw_note_plugin_limit(plugin_handle *h, const pod *p, const char *why);
/* For the decision record: fw_evict just answered st (EVICT_LIMIT_TOTAL, _NODE or _NAMESPACE)
 * for another pod and the plugin stops its walk there, so p's turn never comes: p stays
 * because of that limit (the same text as the pod that met it). */
void fw_note_limit_stop(plugin_handle *h, const pod *p, evict_status st);
/* Evictor plugins call this just before their Filter, PreEvictionFilter or admit returns
 * false: the reason lands in the decision record (no cost when none is kept). */
void fw_reject_reason(plugin_handle *h, const char *reason);
/* Number of pods in the model (any phase, any namespace) with an owner reference of this uid. */
size_t fw_owner_pod_count(plugin_handle *h, const char *owner_uid);

/* Evictions this cycle that KubeVirt answered by starting an evacuation (the 429 text
 * "Eviction triggered evacuation", with or without the EvictionsInBackground gate): from node
 * n, or in all when n is NULL. Evictor plugins use it to keep new migrations within KubeVirt's
 * limits while the cycle is under way. */
uint64_t fw_cycle_evacuations(plugin_handle *h, const node *n);

/* A value computed once per cycle and shared by every plugin call of the cycle (an index over
 * the model, say): the first call with `key` runs build(h, ctx) and keeps its result; later
 * calls return it. The result should live in h's cycle arena (fw_cycle_arena). */
void *fw_cycle_memo(plugin_handle *h, const char *key, void *(*build)(plugin_handle *h, void *ctx),
                    void *ctx);
/* The cycle's arena: freed when the cycle ends. */
arena *fw_cycle_arena(plugin_handle *h);

#endif
