/* decisions.h - the decision record: why each pod was evicted, and why each other one was not.
 *
 * Upstream's only answer to "why this pod and not that one" is its --v=4 log. This record is
 * kept by the framework during a cycle (fw_options.decisions): plugins only report outcomes
 * through the framework's calls (fw_evict, the evictor filters, fw_note_*), and the record holds,
 * per pod, its final outcome and the events that led there, and per node its category, the
 * usage and thresholds that put it there, and its requested resources before and after the
 * cycle. It is a plain data structure of the model's pods and nodes: no I/O; renderings (JSON,
 * words, HTML) read it. `simulate -o json` and a live run's --decisions-file render the same
 * record with the same function (decisions_json), so the two carry the same fields.
 *
 * Outcomes, from weakest to strongest (a pod's outcome is the strongest event it had):
 *   not-considered  no plugin of the cycle looked at the pod (why: its node is not in the cycle,
 *                   or it broke no rule of an enabled plugin)
 *   node-at-target  its node reached its target while the plugin drained it
 *   rejected        an evictor's Filter or PreEvictionFilter said no (the evictor's own texts,
 *                   e.g. DefaultEvictor's "Pod fails the following checks")
 *   vetoed          an evictor vetoed it at the eviction (VMSafety's migration limits)
 *   limit           an eviction limit stopped it (upstream's limit texts)
 *   failed          the eviction was sent and failed (the server's answer)
 *   requested       KubeVirt turned the eviction into a live migration (a request in background,
 *                   a targeted move, or an evacuation upstream counts as a failed eviction)
 *   evicted         evicted */
#ifndef DS_FRAMEWORK_DECISIONS_H
#define DS_FRAMEWORK_DECISIONS_H

#include "../model/model.h"
#include "../util/strbuf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum {
  DEC_NOT_CONSIDERED,
  DEC_NODE_AT_TARGET,
  DEC_REJECTED,
  DEC_VETOED,
  DEC_LIMIT,
  DEC_FAILED,
  DEC_REQUESTED,
  DEC_EVICTED,
} dec_outcome;

#define DEC_NOUTCOMES (DEC_EVICTED + 1)

const char *dec_outcome_name(dec_outcome o);

typedef struct dec_event {
  dec_outcome outcome;
  const char *profile, *plugin; /* the profile and plugin the cycle was running ("" if none) */
  const char *by;               /* who decided: an evictor's name, "limits", "KubeVirt", ... */
  const char *reason;           /* in words */
  struct dec_event *next;
} dec_event;

typedef struct {
  const pod *pod;
  dec_event *events, *last; /* in order; repeats of the last event are not kept */
  uint32_t nevents;
  dec_outcome outcome;
} dec_pod;

#define DEC_MAX_THRESHOLDS 8

typedef struct {
  const char *resource; /* "cpu", "memory", "pods", "MetricResource", ... */
  double low, high;     /* percentages in force for this node */
} dec_threshold;

typedef struct {
  const char *resource; /* as the plugin names it: "cpu", "memory", "pods", "MetricResource" */
  double pct;
} dec_usage;

typedef struct {
  const char *category;   /* "overutilized", ... or NULL when no plugin classified the node */
  const char *why;        /* e.g. "memory 72.00% > 68.00%" */
  const char *thresholds; /* the thresholds in force, e.g. "low cpu 20.00% memory 30.00%; high ..." */
  bool in_cycle;          /* the node is one of the cycle's (ready, matches nodeSelector) */
  size_t nthresholds;
  dec_threshold thresholds_by_resource[DEC_MAX_THRESHOLDS];
  /* the percentages the plugin that gave `why` compared with the thresholds (requests, or
   * actual utilization when the plugin reads it) */
  size_t nusage;
  dec_usage *usage;
  /* requested cpu, memory and pods as percentages of allocatable, before and after the cycle
   * (pods evicted or requested in background no longer count), as simulate's plan prints
   * them; has_requested[r] is false when the node gives no such capacity */
  bool requested_set;
  bool has_requested[3];
  double requested[3], requested_after[3];
} dec_node;

typedef struct decisions decisions;

/* A record for one cycle on model m (the model must outlive it). Caller frees. */
decisions *decisions_new(const model *m);
void decisions_free(decisions *d);

/* Adds an event for p (strings are copied). */
void decisions_pod(decisions *d, const pod *p, dec_outcome o, const char *profile,
                   const char *plugin, const char *by, const char *reason);
/* Node facts: the first category given is kept; why and thresholds are replaced when given. */
void decisions_node(decisions *d, const node *n, const char *category, const char *why,
                    const char *thresholds);
void decisions_node_in_cycle(decisions *d, const node *n);
/* The numeric thresholds of one resource for n (the first plugin to give them wins). */
void decisions_node_threshold(decisions *d, const node *n, const char *resource, double low,
                              double high);
/* The usage percentages a plugin classified n with (n resources, names copied); replaces
 * what an earlier plugin gave, as `why` is replaced. */
void decisions_node_usage(decisions *d, const node *n, const char *const *resources,
                          const double *pcts, size_t count);
/* Requested cpu, memory and pods of n in percent, before and after the cycle. */
void decisions_node_requested(decisions *d, const node *n, const double before[3],
                              const double after[3], const bool has[3]);
/* Ends the cycle: every pod without events gets its not-considered reason. Pods with the
 * same reason share that one event, so nothing may be recorded after this (it aborts). */
void decisions_finish(decisions *d);

/* The record of p (NULL if p is not in the model). Borrowed. */
const dec_pod *decisions_find(const decisions *d, const pod *p);
const dec_node *decisions_node_of(const decisions *d, const node *n);

/* Renders the record as one JSON object: {"nodes": [...], "outcomes": {"evicted": N, ...},
 * "reasons": [{"outcome","by","reason","count","examples":[...]}]} with at most `examples`
 * pods named per reason (bounded at any scale), and, when all_pods is true, "pods": [...] with
 * every pod's outcome and events. */
void decisions_json(const decisions *d, size_t examples, bool all_pods, strbuf *out);
/* The same summary as text lines: counts per outcome, then per reason with up to `examples`
 * pods named. */
void decisions_text(const decisions *d, size_t examples, strbuf *out);
/* The record of one pod in words, several lines. */
void decisions_explain(const decisions *d, const pod *p, strbuf *out);
/* The same record as one JSON object: {"pod", "node", "outcome", "nodeRecord": {the node's
 * entry as decisions_json writes it}, "events": [...]}. */
void decisions_explain_json(const decisions *d, const pod *p, strbuf *out);

/* How many pods the decision summary names per reason unless told (--decision-examples of
 * `simulate`, `explain` and a live run's --decisions-file alike). */
#define DECISION_EXAMPLES_DEFAULT 3

#endif
