/* nodeaffinity.c - RemovePodsViolatingNodeAffinity (Deschedule), as upstream's
 * pkg/framework/plugins/removepodsviolatingnodeaffinity/node_affinity.go.
 *
 * Evicts pods whose node affinity no longer agrees with the node they run on, provided they
 * could be scheduled somewhere in the cycle. Each configured nodeAffinityType is a separate
 * pass over the nodes, in the order written:
 *   requiredDuringSchedulingIgnoredDuringExecution: the pod has a required node-affinity
 *     object and its nodeSelector + required terms no longer match its node (a pod with
 *     only a nodeSelector is never considered);
 *   preferredDuringSchedulingIgnoredDuringExecution: some cycle node scores a higher sum of
 *     preferred-term weights than the pod's node (the best score is taken over all cycle
 *     nodes, not only those the pod fits).
 * In both cases the pod must fit (NodeFit) on at least one cycle node, its own included.
 * Unknown types are logged and skipped at run time, as upstream does, not rejected.
 *
 * Order: nodes by name, pods of a node by name (upstream's are informer-index order). A pod
 * evicted by the first pass is gone for the second. A node limit moves on to the next node;
 * the total limit ends the plugin, remaining types included (they could evict nothing). */
#include "../framework/podutil.h"
#include "common.h"
#include "registry.h"

#include <string.h>

#define NA_REQUIRED "requiredDuringSchedulingIgnoredDuringExecution"
#define NA_PREFERRED "preferredDuringSchedulingIgnoredDuringExecution"

typedef struct {
  ns_filter namespaces;
  label_selector *label_selector;
  str_list affinity_types;
} na_args;

static const args_field na_fields[] = {
    {"namespaces", AF_NAMESPACES, offsetof(na_args, namespaces)},
    {"labelSelector", AF_SELECTOR, offsetof(na_args, label_selector)},
    {"nodeAffinityType", AF_STRINGS, offsetof(na_args, affinity_types)},
    {NULL}};

static int na_validate(const void *vargs, dserr *err) {
  const na_args *a = vargs;
  errlist e = {0};
  if (!a->affinity_types.n)
    errlist_add(&e, "nodeAffinityType needs to be set");
  validate_namespaces(&a->namespaces, &e);
  validate_label_selector(a->label_selector, &e);
  return errlist_finish(&e, err);
}

typedef enum { NA_TYPE_REQUIRED, NA_TYPE_PREFERRED } na_type;

/* The highest preferred-affinity score p gets on any cycle node. */
static int64_t na_best_weight(plugin_handle *h, const pod *p) {
  int64_t best = 0;
  for (size_t i = 0; i < h->nnodes; i++) {
    int64_t w = pod_preferred_affinity_weight(p, h->nodes[i]);
    if (i == 0 || w > best)
      best = w;
  }
  return best;
}

/* The type-specific half of the pod filter; the generic half (namespaces, labels, evictor
 * filters) has already passed. */
static bool na_violates(plugin_handle *h, na_type type, const pod *p, const node *n) {
  const node_affinity *aff = pod_x(p)->node_affinity;
  if (type == NA_TYPE_REQUIRED) {
    if (!aff || !aff->has_required)
      return false;
    return pod_fits_any_node(h, p, h->nodes, h->nnodes) &&
           !pod_matches_node_selector_and_affinity(p, n);
  }
  if (!aff || !aff->npreferred)
    return false;
  return pod_fits_any_node(h, p, h->nodes, h->nnodes) &&
         na_best_weight(h, p) > pod_preferred_affinity_weight(p, n);
}

/* One pass over the nodes for one affinity type. false when the total limit was hit. */
static bool na_process_nodes(plugin_handle *h, const na_args *a, na_type type) {
  for (size_t i = 0; i < h->nnodes; i++) {
    node *n = h->nodes[i];
    LOGV(2, &h->log, "Processing node", LSTR("node", n->name));
    size_t count;
    pod **pods = fw_node_pods(h, n, true, &count);
    pod_vec victims = {0};
    for (size_t k = 0; k < count; k++) {
      pod *p = pods[k];
      if (!pod_passes_ns_and_labels(&a->namespaces, a->label_selector, p) || !fw_filter(h, p) ||
          !fw_pre_eviction_filter(h, p))
        continue;
      if (na_violates(h, type, p, n))
        pod_vec_push(h->scratch, &victims, p);
    }
    for (size_t k = 0; k < victims.n; k++) {
      char ref[512];
      LOGV(1, &h->log, "Evicting pod", LSTR("pod", pod_ref(victims.items[k], ref, sizeof ref)));
      evict_status st = fw_evict(h, victims.items[k], "");
      if (st == EVICT_LIMIT_TOTAL)
        return false;
      if (st == EVICT_LIMIT_NODE)
        break;
      if (st != EVICT_OK && st != EVICT_VETOED)
        log_eviction_failed(h, victims.items[k]);
    }
  }
  return true;
}

static int na_run(plugin_handle *h, const void *vargs, dserr *err) {
  (void)err;
  const na_args *a = vargs;
  for (size_t i = 0; i < a->affinity_types.n; i++) {
    const char *t = a->affinity_types.items[i];
    LOGV(2, &h->log, "Executing for nodeAffinityType", LSTR("nodeAffinity", t));
    na_type type;
    if (strcmp(t, NA_REQUIRED) == 0)
      type = NA_TYPE_REQUIRED;
    else if (strcmp(t, NA_PREFERRED) == 0)
      type = NA_TYPE_PREFERRED;
    else {
      LOGE(&h->log, "Invalid nodeAffinityType", NULL, LSTR("nodeAffinity", t));
      continue;
    }
    if (!na_process_nodes(h, a, type))
      break; /* total limit: nothing more can be evicted this cycle */
  }
  return 0;
}

const plugin_desc plugin_node_affinity = {
    .name = "RemovePodsViolatingNodeAffinity",
    .points = PLUGIN_DESCHEDULE,
    .args_size = sizeof(na_args),
    .fields = na_fields,
    .validate = na_validate,
    .run = na_run,
};
