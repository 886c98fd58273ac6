/* interpodantiaffinity.c - RemovePodsViolatingInterPodAntiAffinity (Deschedule), as upstream's
 * pkg/framework/plugins/removepodsviolatinginterpodantiaffinity/pod_antiaffinity.go.
 *
 * Evicts pods whose own required pod anti-affinity terms are violated by another pod in the
 * same topology domain. Only the candidate's terms count (it is asymmetric: a pod is never
 * evicted because of someone else's terms), preferred terms and namespaceSelector are
 * ignored, and the conflicting pods are every non-terminal pod of the cycle's nodes passing
 * the plugin's namespaces/labelSelector, evictable or not. A pod evicted here stops
 * conflicting with the pods examined after it, so of two pods that exclude each other only
 * the first in order goes.
 *
 * Order: nodes by name; a node's pods SortPodsBasedOnPriorityLowToHigh (pods.go), the ties that
 * upstream leaves to its unstable sort kept in name order. */
#include "../framework/podutil.h"
#include "common.h"
#include "registry.h"

#include <string.h>

typedef struct {
  ns_filter namespaces;
  label_selector *label_selector;
} ipa_args;

static const args_field ipa_fields[] = {
    {"namespaces", AF_NAMESPACES, offsetof(ipa_args, namespaces)},
    {"labelSelector", AF_SELECTOR, offsetof(ipa_args, label_selector)},
    {NULL}};

static int ipa_validate(const void *vargs, dserr *err) {
  const ipa_args *a = vargs;
  errlist e = {0};
  validate_namespaces(&a->namespaces, &e);
  validate_label_selector(a->label_selector, &e);
  return errlist_finish(&e, err);
}

/* The pods that can conflict, grouped by namespace (namespace names are interned, so a
 * group is found by pointer). Evicted pods are taken out of their group. */
typedef struct {
  const char *ns;
  pod_vec pods;
} ipa_group;

typedef struct {
  ipa_group *items;
  size_t n, cap;
} ipa_groups;

static ipa_group *ipa_group_of(plugin_handle *h, ipa_groups *g, const char *ns, bool create) {
  for (size_t i = 0; i < g->n; i++)
    if (g->items[i].ns == ns || strcmp(g->items[i].ns, ns) == 0)
      return &g->items[i];
  if (!create)
    return NULL;
  if (g->n == g->cap) {
    size_t cap = g->cap ? g->cap * 2 : 16;
    ipa_group *items = ARENA_NEWN(h->scratch, ipa_group, cap);
    if (g->n)
      memcpy(items, g->items, g->n * sizeof *items);
    g->items = items;
    g->cap = cap;
  }
  g->items[g->n] = (ipa_group){ns, {0}};
  return &g->items[g->n++];
}

static void ipa_forget(plugin_handle *h, ipa_groups *g, const pod *p) {
  ipa_group *grp = ipa_group_of(h, g, p->ns, false);
  if (!grp)
    return;
  pod_vec *v = &grp->pods;
  for (size_t k = 0; k < v->n; k++)
    if (v->items[k] == p) {
      memmove(&v->items[k], &v->items[k + 1], (v->n - k - 1) * sizeof *v->items);
      v->n--;
      return;
    }
}

/* Same node, or both nodes labelled with the topology key and the same value. */
static bool ipa_same_topology(const node *a, const node *b, const char *key) {
  if (a == b)
    return true;
  const char *va = kv_get(&a->labels, key), *vb = kv_get(&b->labels, key);
  return va && vb && strcmp(va, vb) == 0;
}

static bool ipa_term_violated(plugin_handle *h, ipa_groups *g, const pod *c,
                              const pod_affinity_term *t, const char *ns) {
  ipa_group *grp = ipa_group_of(h, g, ns, false);
  if (!grp)
    return false;
  for (size_t i = 0; i < grp->pods.n; i++) {
    const pod *o = grp->pods.items[i];
    if (strcmp(o->name, c->name) == 0 || !selector_matches(t->selector, &o->labels))
      continue;
    if (ipa_same_topology(c->node, o->node, t->topology_key))
      return true;
  }
  return false;
}

/* c's own required anti-affinity terms against every pod still in the groups. As upstream's
 * CheckPodsWithAntiAffinityExist, a term whose labelSelector does not convert ends the check
 * with "no violation" (terms before it still count). */
static bool ipa_violates(plugin_handle *h, ipa_groups *g, const pod *c) {
  for (size_t t = 0; t < pod_x(c)->nanti_affinity; t++) {
    const pod_affinity_term *term = &pod_x(c)->anti_affinity[t];
    if (term->selector && term->selector->invalid) {
      char ref[512];
      LOGE(NULL, "Unable to convert LabelSelector into Selector", term->selector->invalid,
           LSTR("pod", pod_ref(c, ref, sizeof ref)));
      return false;
    }
    if (!term->nnamespaces) {
      if (ipa_term_violated(h, g, c, term, c->ns))
        return true;
      continue;
    }
    for (size_t k = 0; k < term->nnamespaces; k++)
      if (ipa_term_violated(h, g, c, term, term->namespaces[k]))
        return true;
  }
  return false;
}

static int ipa_run(plugin_handle *h, const void *vargs, dserr *err) {
  (void)err;
  const ipa_args *a = vargs;
  ipa_groups groups = {0};
  pod_vec *by_node = ARENA_NEWN(h->scratch, pod_vec, h->nnodes ? h->nnodes : 1);
  for (size_t i = 0; i < h->nnodes; i++) {
    by_node[i] = (pod_vec){0};
    size_t count;
    pod **pods = fw_node_pods(h, h->nodes[i], true, &count);
    for (size_t k = 0; k < count; k++) {
      if (!pod_passes_ns_and_labels(&a->namespaces, a->label_selector, pods[k]))
        continue;
      pod_vec_push(h->scratch, &ipa_group_of(h, &groups, pods[k]->ns, true)->pods, pods[k]);
      pod_vec_push(h->scratch, &by_node[i], pods[k]);
    }
  }
  for (size_t i = 0; i < h->nnodes; i++) {
    LOGV(2, &h->log, "Processing node", LSTR("node", h->nodes[i]->name));
    pod_vec *v = &by_node[i];
    pods_sort_priority_low_to_high(v->items, v->n);
    for (size_t k = 0; k < v->n; k++) {
      pod *p = v->items[k];
      if (!pod_x(p)->nanti_affinity || !ipa_violates(h, &groups, p) || !fw_filter(h, p) ||
          !fw_pre_eviction_filter(h, p))
        continue;
      evict_status st = fw_evict(h, p, "");
      if (st == EVICT_OK) {
        ipa_forget(h, &groups, p);
        continue;
      }
      if (st == EVICT_LIMIT_TOTAL)
        return 0;
      if (st == EVICT_LIMIT_NODE)
        break;
      if (st != EVICT_VETOED)
        log_eviction_failed(h, p);
    }
  }
  return 0;
}

const plugin_desc plugin_inter_pod_anti_affinity = {
    .name = "RemovePodsViolatingInterPodAntiAffinity",
    .points = PLUGIN_DESCHEDULE,
    .args_size = sizeof(ipa_args),
    .fields = ipa_fields,
    .validate = ipa_validate,
    .run = ipa_run,
};
