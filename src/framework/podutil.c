/* podutil.c - shared pod/node predicates; see podutil.h and docs/behaviour.md. */
#include "podutil.h"

#include "../apimachinery/quantity.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int priority_key_cmp(const pod *x, const pod *y) {
  if (x->has_priority != y->has_priority)
    return x->has_priority ? 1 : -1; /* no priority first */
  if (x->has_priority && x->priority != y->priority)
    return x->priority < y->priority ? -1 : 1;
  if (x->qos != y->qos)
    return x->qos < y->qos ? -1 : 1; /* enum order is BestEffort < Burstable < Guaranteed */
  bool xp = pod_has(x, ANN_PREFER_NO_EVICTION), yp = pod_has(y, ANN_PREFER_NO_EVICTION);
  if (xp != yp)
    return xp ? 1 : -1;
  return 0;
}

int pod_cmp_priority_low_to_high(const void *a, const void *b) {
  const pod *x = *(pod *const *)a, *y = *(pod *const *)b;
  int c = priority_key_cmp(x, y);
  if (c)
    return c;
  c = strcmp(x->ns, y->ns);
  return c ? c : strcmp(x->name, y->name);
}

void pods_stable_sort(pod **pods, size_t n, int (*cmp)(const pod *a, const pod *b)) {
  if (n < 2)
    return;
  pod **tmp = malloc(n * sizeof *tmp);
  if (!tmp)
    abort();
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        tmp[k++] = cmp(pods[j], pods[i]) < 0 ? pods[j++] : pods[i++];
      while (i < mid)
        tmp[k++] = pods[i++];
      while (j < hi)
        tmp[k++] = pods[j++];
    }
    memcpy(pods, tmp, n * sizeof *pods);
  }
  free(tmp);
}

void pods_sort_priority_low_to_high(pod **pods, size_t n) {
  pods_stable_sort(pods, n, priority_key_cmp);
}

static bool parse_i64(const char *s, long long *out) {
  char *end;
  if (!s || !*s)
    return false;
  *out = strtoll(s, &end, 10);
  return *end == 0;
}

bool toleration_tolerates(const toleration *t, const taint *tn) {
  if (*t->effect && strcmp(t->effect, tn->effect) != 0)
    return false;
  if (*t->key && strcmp(t->key, tn->key) != 0)
    return false;
  long long a, b;
  switch (t->op) {
  case TOL_EQUAL:
    return strcmp(t->value, tn->value) == 0;
  case TOL_EXISTS:
    return true;
  case TOL_LT:
    return parse_i64(tn->value, &a) && parse_i64(t->value, &b) && a < b;
  case TOL_GT:
    return parse_i64(tn->value, &a) && parse_i64(t->value, &b) && a > b;
  case TOL_OTHER:
    return false;
  }
  return false;
}

bool pod_tolerates_taint(const pod *p, const taint *tn) {
  for (size_t i = 0; i < p->ntolerations; i++)
    if (toleration_tolerates(&p->tolerations[i], tn))
      return true;
  return false;
}

bool pod_tolerates_node_scheduling_taints(const pod *p, const node *n) {
  for (size_t i = 0; i < n->ntaints; i++) {
    const taint *t = &n->taints[i];
    if ((strcmp(t->effect, "NoSchedule") == 0 || strcmp(t->effect, "NoExecute") == 0) &&
        !pod_tolerates_taint(p, t))
      return false;
  }
  return true;
}

bool node_term_matches(const node_term *t, const node *n) {
  if (t->empty)
    return false;
  if (t->labels && t->labels->n && !selector_matches(t->labels, &n->labels))
    return false;
  if (t->fields && t->fields->n) {
    kv field = {"metadata.name", n->name};
    kvlist fields = {1, &field};
    if (!selector_matches(t->fields, &fields))
      return false;
  }
  return true;
}

bool pod_matches_node_selector_and_affinity(const pod *p, const node *n) {
  for (size_t i = 0; i < p->node_selector.n; i++) {
    const char *v = kv_get(&n->labels, p->node_selector.items[i].key);
    if (!v || strcmp(v, p->node_selector.items[i].value) != 0)
      return false;
  }
  const node_affinity *a = pod_x(p)->node_affinity;
  if (!a || !a->has_required)
    return true;
  for (size_t i = 0; i < a->nrequired; i++)
    if (node_term_matches(&a->required[i], n))
      return true;
  return false;
}

int64_t pod_preferred_affinity_weight(const pod *p, const node *n) {
  int64_t w = 0;
  const node_affinity *a = pod_x(p)->node_affinity;
  if (!a)
    return 0;
  for (size_t i = 0; i < a->npreferred; i++)
    if (node_term_matches(&a->preferred[i].term, n))
      w += a->preferred[i].weight;
  return w;
}

static bool ns_in_term(const pod_affinity_term *t, const pod *owner, const char *ns) {
  if (t->nnamespaces == 0)
    return strcmp(owner->ns, ns) == 0;
  for (size_t i = 0; i < t->nnamespaces; i++)
    if (strcmp(t->namespaces[i], ns) == 0)
      return true;
  return false;
}

/* NodeFit's fourth check: p's own required anti-affinity terms against the pods on n. Returns why
 * p does not fit, or NULL. A term whose labelSelector does not convert makes the node unfit
 * with the conversion error, as upstream's NodeFit returns it. */
static const char *anti_affinity_conflict(plugin_handle *h, const pod *p, const node *n) {
  const pod_extra *x = pod_x(p);
  if (!x->nanti_affinity)
    return NULL;
  size_t count;
  pod **pods = fw_node_pods(h, n, true, &count);
  for (size_t t = 0; t < x->nanti_affinity; t++) {
    const pod_affinity_term *term = &x->anti_affinity[t];
    if (term->selector && term->selector->invalid)
      return term->selector->invalid;
    if (!kv_get(&n->labels, term->topology_key))
      continue;
    for (size_t i = 0; i < count; i++) {
      const pod *o = pods[i];
      if (strcmp(o->name, p->name) == 0 || !ns_in_term(term, p, o->ns))
        continue;
      if (selector_matches(term->selector, &o->labels))
        return "pod matches inter-pod anti-affinity rule of other pod on node";
    }
  }
  return NULL;
}

static bool basic_resource(const char *name) {
  return !strcmp(name, "cpu") || !strcmp(name, "memory") || !strcmp(name, "ephemeral-storage") ||
         !strcmp(name, "pods");
}

const char *node_fit(plugin_handle *h, const pod *p, const node *n) {
  if (n->unschedulable)
    return "node is not schedulable";
  if (!pod_matches_node_selector_and_affinity(p, n))
    return "pod node selector does not match the node label";
  if (!pod_tolerates_node_scheduling_taints(p, n))
    return "pod does not tolerate taints on the node";
  const char *conflict = anti_affinity_conflict(h, p, n);
  if (conflict)
    return conflict;
  if (p->node == n)
    return NULL;
  /* resources: remaining = allocatable - requests of the node's non-terminal pods */
  bool found;
  int64_t pods_alloc = quantity_units(res_get(&n->allocatable, RES_PODS, &found));
  int64_t pods_left = pods_alloc - fw_node_pod_count(h, n);
  if (pods_left <= 0)
    return "insufficient pods";
  for (size_t i = 0; i < p->requests.n; i++) {
    const res_q *r = &p->requests.items[i];
    /* decoded names are the model's seeded copies (RES_*): most need no strcmp */
    if (r->name == RES_PODS ||
        (r->name != RES_CPU && r->name != RES_MEMORY && !strcmp(r->name, RES_PODS)))
      continue;
    int64_t alloc = res_get(&n->allocatable, r->name, &found);
    if (!found && !basic_resource(r->name))
      alloc = 0;
    int64_t left = alloc - fw_node_requested(h, n, r->name);
    if (r->milli > left) {
      size_t len = strlen(r->name) + 16;
      char *msg = arena_alloc(h->scratch, len);
      snprintf(msg, len, "insufficient %s", r->name);
      return msg;
    }
  }
  return NULL;
}

static bool fits_any(plugin_handle *h, const pod *p, node **nodes, size_t n, bool skip_own) {
  for (size_t i = 0; i < n; i++) {
    /* node names are unique, and p->node is the node of that name when the model has it */
    if (skip_own && p->node && nodes[i] == p->node)
      continue;
    const char *why = node_fit(h, p, nodes[i]);
    char ref[512];
    if (!why) {
      LOGV(4, NULL, "Pod fits on node", LSTR("pod", pod_ref(p, ref, sizeof ref)),
           LSTR("node", nodes[i]->name));
      return true;
    }
    LOGV(4, NULL, "Pod does not fit on node", LSTR("pod", pod_ref(p, ref, sizeof ref)),
         LSTR("node", nodes[i]->name), LSTR("err", why));
  }
  return false;
}

bool pod_fits_any_other_node(plugin_handle *h, const pod *p, node **nodes, size_t n) {
  return fits_any(h, p, nodes, n, true);
}

bool pod_fits_any_node(plugin_handle *h, const pod *p, node **nodes, size_t n) {
  return fits_any(h, p, nodes, n, false);
}
