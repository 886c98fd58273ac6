/* podutil.h - pod and node predicates shared by plugins (docs/behaviour.md has each rule).
 *
 * Priority order, tolerations, node affinity, inter-pod anti-affinity and NodeFit, written
 * once here so that the DefaultEvictor and every plugin answer these questions the same way. */
#ifndef DS_PODUTIL_H
#define DS_PODUTIL_H

#include "framework.h"

/* Upstream's SortPodsBasedOnPriorityLowToHigh (pkg/descheduler/pod/pods.go): no priority
 * first, then ascending priority; then QoS BestEffort < Burstable < Guaranteed; then pods
 * without prefer-no-eviction first. qsort comparator over pod*; ties broken by (namespace,
 * name) so the order is fixed. */
int pod_cmp_priority_low_to_high(const void *a, const void *b);
/* Stable sort of pods by the comparator above (equal pods keep their listing order). */
void pods_sort_priority_low_to_high(pod **pods, size_t n);
/* Stable merge sort of pods with any comparator. */
void pods_stable_sort(pod **pods, size_t n, int (*cmp)(const pod *a, const pod *b));

/* Upstream's TolerationsTolerateTaint (pkg/utils/predicates.go). */
bool toleration_tolerates(const toleration *t, const taint *taint);
bool pod_tolerates_taint(const pod *p, const taint *taint);
/* Every taint of n whose effect is NoSchedule or NoExecute is tolerated by p. */
bool pod_tolerates_node_scheduling_taints(const pod *p, const node *n);

/* A node selector term matches the node (labels and metadata.name fields). */
bool node_term_matches(const node_term *t, const node *n);
/* NodeFit's second check (upstream's PodMatchNodeSelector, pkg/utils/predicates.go):
 * nodeSelector and required node affinity terms (ORed) both match. */
bool pod_matches_node_selector_and_affinity(const pod *p, const node *n);
/* Σ weights of preferred node affinity terms matching n. */
int64_t pod_preferred_affinity_weight(const pod *p, const node *n);

/* Upstream's NodeFit (pkg/descheduler/node/node.go): NULL when p fits on n, else the reason
 * ("node is not schedulable", "insufficient cpu" ...). Returned strings are static or live in
 * h->scratch. */
const char *node_fit(plugin_handle *h, const pod *p, const node *n);
/* NodeFit succeeds on some node other than the pod's own (PodFitsAnyOtherNode). */
bool pod_fits_any_other_node(plugin_handle *h, const pod *p, node **nodes, size_t n);
/* Same including the pod's own node (PodFitsAnyNode). */
bool pod_fits_any_node(plugin_handle *h, const pod *p, node **nodes, size_t n);

/* true when an owner reference is of kind DaemonSet (a bit the decoder sets). */
static inline bool pod_is_daemonset(const pod *p) {
  return p->daemonset_owner;
}
/* p carries the descheduler.alpha.kubernetes.io/... annotation bit. */
static inline bool pod_has(const pod *p, unsigned ann) { return (p->annotations & ann) != 0; }

#endif
