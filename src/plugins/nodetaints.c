/* nodetaints.c - RemovePodsViolatingNodeTaints (Deschedule), as upstream's
 * pkg/framework/plugins/removepodsviolatingnodetaints/node_taint.go.
 *
 * Evicts pods that do not tolerate a "relevant" taint of their node. A taint is relevant
 * when its effect is NoSchedule (or PreferNoSchedule with includePreferNoSchedule), it is
 * not in excludedTaints and it is in includedTaints. NoExecute taints are never relevant:
 * the kubelet evicts those pods itself. A cordoned node carries the unschedulable NoSchedule
 * taint, so its non-tolerating pods go too.
 *
 * includedTaints keeps nil and empty apart, as upstream does: absent means every taint is
 * included, `[]` means none is (so nothing is ever evicted).
 *
 * Order: nodes by name, pods of a node by name (upstream's are informer-index order). */
#include "../framework/podutil.h"
#include "common.h"
#include "registry.h"

#include <string.h>

typedef struct {
  ns_filter namespaces;
  label_selector *label_selector;
  bool include_prefer_no_schedule;
  str_list excluded_taints, included_taints;
} nt_args;

static const args_field nt_fields[] = {
    {"namespaces", AF_NAMESPACES, offsetof(nt_args, namespaces)},
    {"labelSelector", AF_SELECTOR, offsetof(nt_args, label_selector)},
    {"includePreferNoSchedule", AF_BOOL, offsetof(nt_args, include_prefer_no_schedule)},
    {"excludedTaints", AF_STRINGS, offsetof(nt_args, excluded_taints)},
    {"includedTaints", AF_STRINGS, offsetof(nt_args, included_taints)},
    {NULL}};

static int nt_validate(const void *vargs, dserr *err) {
  const nt_args *a = vargs;
  errlist e = {0};
  validate_namespaces(&a->namespaces, &e);
  validate_label_selector(a->label_selector, &e);
  if (a->excluded_taints.n && a->included_taints.n)
    errlist_add(&e, "either includedTaints or excludedTaints can be set, but not both");
  return errlist_finish(&e, err);
}

/* A list entry names a taint by its key, or by `key=value` when the taint has a value. */
static bool nt_list_names_taint(const str_list *l, const taint *t) {
  size_t klen = strlen(t->key);
  for (size_t i = 0; i < l->n; i++) {
    const char *e = l->items[i];
    if (strcmp(e, t->key) == 0)
      return true;
    if (*t->value && strncmp(e, t->key, klen) == 0 && e[klen] == '=' &&
        strcmp(e + klen + 1, t->value) == 0)
      return true;
  }
  return false;
}

static bool nt_taint_relevant(const nt_args *a, const taint *t) {
  bool effect = strcmp(t->effect, "NoSchedule") == 0 ||
                (a->include_prefer_no_schedule && strcmp(t->effect, "PreferNoSchedule") == 0);
  if (!effect || nt_list_names_taint(&a->excluded_taints, t))
    return false;
  /* nil includedTaints includes everything; an empty (but present) list includes nothing */
  return !a->included_taints.set || nt_list_names_taint(&a->included_taints, t);
}

static bool nt_tolerates_relevant(const nt_args *a, const pod *p, const node *n) {
  for (size_t i = 0; i < n->ntaints; i++)
    if (nt_taint_relevant(a, &n->taints[i]) && !pod_tolerates_taint(p, &n->taints[i]))
      return false;
  return true;
}

static int nt_run(plugin_handle *h, const void *vargs, dserr *err) {
  (void)err;
  const nt_args *a = vargs;
  for (size_t i = 0; i < h->nnodes; i++) {
    node *n = h->nodes[i];
    LOGV(1, &h->log, "Processing node", LSTR("node", n->name));
    size_t count;
    pod **pods = fw_node_pods(h, n, true, &count);
    pod_vec listed = {0};
    for (size_t k = 0; k < count; k++)
      if (pod_passes_ns_and_labels(&a->namespaces, a->label_selector, pods[k]) &&
          fw_filter(h, pods[k]) && fw_pre_eviction_filter(h, pods[k]))
        pod_vec_push(h->scratch, &listed, pods[k]);
    for (size_t k = 0; k < listed.n; k++) {
      pod *p = listed.items[k];
      if (nt_tolerates_relevant(a, p, n))
        continue;
      char ref[512];
      LOGV(2, &h->log,
           "Not all taints with NoSchedule effect are tolerated after update for pod on node",
           LSTR("pod", pod_ref(p, ref, sizeof ref)), LSTR("node", n->name));
      evict_status st = fw_evict(h, p, "");
      if (st == EVICT_LIMIT_TOTAL)
        return 0;
      if (st == EVICT_LIMIT_NODE)
        break;
      if (st != EVICT_OK && st != EVICT_VETOED)
        log_eviction_failed(h, p);
    }
  }
  return 0;
}

const plugin_desc plugin_node_taints = {
    .name = "RemovePodsViolatingNodeTaints",
    .points = PLUGIN_DESCHEDULE,
    .args_size = sizeof(nt_args),
    .fields = nt_fields,
    .validate = nt_validate,
    .run = nt_run,
};
