/* topologyspreadconstraint.c - RemovePodsViolatingTopologySpreadConstraint (Balance), as
 * upstream's pkg/framework/plugins/removepodsviolatingtopologyspreadconstraint/ does.
 *
 * For every namespace, the topology spread constraints its pods declare (only the
 * whenUnsatisfiable kinds named in `constraints`) are rebuilt into internal constraints
 * (selector plus matchLabelKeys, inclusion policies with the owner pod's node affinity and
 * tolerations) and deduplicated. Each constraint splits the evictable pods it selects into
 * topology domains; when the largest and smallest domain differ by more than maxSkew, pods
 * are moved on paper from the largest domains to the smallest until every domain is near the
 * ideal average. The pods moved on paper are evicted at the end, after P and
 * PreEvictionFilter are checked again.
 *
 * Only pods that pass the plugin filter P (namespaces, labelSelector, Evictor Filter) are
 * counted: non-evictable pods are invisible to the skew computation, as upstream.
 *
 * Ordering choices where upstream's order is random (map iteration):
 * - namespaces are processed in name order; constraints in the order first seen while
 *   walking that namespace's pods (cycle nodes by name, each node's pods by name);
 * - domains start in topology-value order, then a stable sort by size, so equal-sized
 *   domains stay in value order;
 * - within a domain, pods are stable-sorted (nodeSelector/nodeAffinity first, then ascending
 *   priority, absent first); equal pods keep listing order (node name, pod name);
 * - the final eviction pass evicts in selection order: namespace order, then constraint
 *   order, then the order the balancing loop picked the pods. A pod picked by several
 *   constraints is evicted once, at its first position. */
#include "../framework/podutil.h"
#include "common.h"
#include "registry.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------- args ---------- */

typedef struct {
  ns_filter namespaces;
  label_selector *label_selector;
  str_list constraints; /* whenUnsatisfiable kinds to balance */
  opt_bool node_fit;    /* topologyBalanceNodeFit, default true */
} tsc_args;

static const args_field tsc_fields[] = {
    {"namespaces", AF_NAMESPACES, offsetof(tsc_args, namespaces)},
    {"labelSelector", AF_SELECTOR, offsetof(tsc_args, label_selector)},
    {"constraints", AF_STRINGS, offsetof(tsc_args, constraints)},
    {"topologyBalanceNodeFit", AF_OPT_BOOL, offsetof(tsc_args, node_fit)},
    {NULL}};

static const char *tsc_default_constraints[] = {"DoNotSchedule"};

static bool tsc_known_constraint(const char *c) {
  return strcmp(c, "DoNotSchedule") == 0 || strcmp(c, "ScheduleAnyway") == 0;
}

static int tsc_validate(const void *vargs, dserr *err) {
  const tsc_args *a = vargs;
  errlist e = {0};
  validate_namespaces(&a->namespaces, &e);
  validate_label_selector(a->label_selector, &e);
  for (size_t i = 0; i < a->constraints.n; i++)
    if (!tsc_known_constraint(a->constraints.items[i]))
      errlist_add(&e, "constraint %s is not one of map[DoNotSchedule:{} ScheduleAnyway:{}]",
                  a->constraints.items[i]);
  return errlist_finish(&e, err);
}

static void tsc_set_defaults(void *vargs) {
  tsc_args *a = vargs;
  if (a->constraints.n == 0)
    a->constraints = (str_list){true, 1, tsc_default_constraints};
  if (!a->node_fit.set)
    a->node_fit = (opt_bool){true, true};
}

/* ---------- internal constraints ---------- */

typedef struct {
  const spread_constraint *src; /* as written on the owner pod (for logs) */
  const pod *owner;             /* whose affinity / tolerations the policies honour */
  int32_t max_skew;
  const char *topology_key;
  const label_selector *selector; /* constraint selector plus matchLabelKeys requirements */
  bool honor_affinity, honor_taints;
} tsc_constraint;

static bool tsc_strs_equal_as_sets(const char *const *a, size_t na, const char *const *b,
                                   size_t nb) {
  if (na != nb)
    return false;
  for (size_t i = 0; i < na; i++) {
    bool found = false;
    for (size_t k = 0; k < nb && !found; k++)
      found = strcmp(a[i], b[k]) == 0;
    if (!found)
      return false;
  }
  return true;
}

static bool tsc_req_equal(const sel_req *x, const sel_req *y) {
  return x->op == y->op && strcmp(x->key, y->key) == 0 &&
         tsc_strs_equal_as_sets(x->values, x->nvalues, y->values, y->nvalues);
}

/* Selectors compare as sets of requirements: upstream's parsed selectors keep requirements
 * sorted by key, so the written order does not matter. */
static bool tsc_selector_equal(const label_selector *x, const label_selector *y) {
  bool xn = !x || x->nothing, yn = !y || y->nothing;
  if (xn || yn)
    return xn == yn;
  if (x->n != y->n)
    return false;
  for (size_t i = 0; i < x->n; i++) {
    bool found = false;
    for (size_t k = 0; k < y->n && !found; k++)
      found = tsc_req_equal(&x->reqs[i], &y->reqs[k]);
    if (!found)
      return false;
  }
  return true;
}

static bool tsc_kvlist_equal(const kvlist *x, const kvlist *y) {
  if (x->n != y->n)
    return false;
  for (size_t i = 0; i < x->n; i++) {
    const char *v = kv_get(y, x->items[i].key);
    if (!v || strcmp(v, x->items[i].value) != 0)
      return false;
  }
  return true;
}

static bool tsc_term_equal(const node_term *x, const node_term *y) {
  if (x->empty != y->empty)
    return false;
  bool xl = x->labels && x->labels->n, yl = y->labels && y->labels->n;
  bool xf = x->fields && x->fields->n, yf = y->fields && y->fields->n;
  if (xl != yl || xf != yf)
    return false;
  return (!xl || tsc_selector_equal(x->labels, y->labels)) &&
         (!xf || tsc_selector_equal(x->fields, y->fields));
}

/* The owner pods' required node affinity (nodeSelector + required terms) are the same. */
static bool tsc_required_affinity_equal(const pod *a, const pod *b) {
  if (!tsc_kvlist_equal(&a->node_selector, &b->node_selector))
    return false;
  const node_affinity *x = pod_x(a)->node_affinity, *y = pod_x(b)->node_affinity;
  bool ra = x && x->has_required;
  bool rb = y && y->has_required;
  if (ra != rb)
    return false;
  if (!ra)
    return true;
  if (x->nrequired != y->nrequired)
    return false;
  for (size_t i = 0; i < x->nrequired; i++) /* terms are ORed, but compared in order */
    if (!tsc_term_equal(&x->required[i], &y->required[i]))
      return false;
  return true;
}

static bool tsc_tolerations_equal(const pod *a, const pod *b) {
  if (a->ntolerations != b->ntolerations)
    return false;
  for (size_t i = 0; i < a->ntolerations; i++) {
    const toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
    if (x->op != y->op || strcmp(x->key, y->key) || strcmp(x->value, y->value) ||
        strcmp(x->effect, y->effect))
      return false;
  }
  return true;
}

/* Exact equality of internal constraints: the same constraint declared by pods with
 * different nodeSelectors stays several entries when the affinity policy is Honor. */
static bool tsc_constraint_equal(const tsc_constraint *x, const tsc_constraint *y) {
  if (x->max_skew != y->max_skew || strcmp(x->topology_key, y->topology_key) != 0 ||
      x->honor_affinity != y->honor_affinity || x->honor_taints != y->honor_taints)
    return false;
  if (!tsc_selector_equal(x->selector, y->selector))
    return false;
  if (x->honor_affinity && !tsc_required_affinity_equal(x->owner, y->owner))
    return false;
  if (x->honor_taints && !tsc_tolerations_equal(x->owner, y->owner))
    return false;
  return true;
}

/* The constraint's selector with an equality requirement for every matchLabelKeys key the
 * owner pod carries. A nil selector (matches nothing) stays as it is. */
static const label_selector *tsc_build_selector(arena *a, const spread_constraint *sc,
                                                const pod *owner) {
  const label_selector *base = sc->selector;
  if (!base || base->nothing || sc->nmatch_label_keys == 0 || owner->labels.n == 0)
    return base;
  label_selector *sel = ARENA_NEW(a, label_selector);
  sel->reqs = ARENA_NEWN(a, sel_req, base->n + sc->nmatch_label_keys);
  if (base->n)
    memcpy(sel->reqs, base->reqs, base->n * sizeof *sel->reqs);
  sel->n = base->n;
  for (size_t i = 0; i < sc->nmatch_label_keys; i++) {
    const char *key = sc->match_label_keys[i];
    const char *value = kv_get(&owner->labels, key);
    bool repeated = false;
    for (size_t k = 0; k < i && !repeated; k++) /* upstream collects the keys into a set */
      repeated = strcmp(sc->match_label_keys[k], key) == 0;
    if (!value || repeated)
      continue;
    sel_req *r = &sel->reqs[sel->n++];
    r->key = key;
    r->op = SEL_EQUALS;
    r->values = ARENA_NEWN(a, const char *, 1);
    r->values[0] = value;
    r->nvalues = 1;
  }
  return sel;
}

/* Inclusion policies: may a pod of this constraint's owner land on n at all? */
static bool tsc_node_included(const tsc_constraint *c, const node *n) {
  if (c->honor_affinity && !pod_matches_node_selector_and_affinity(c->owner, n))
    return false;
  if (c->honor_taints && !pod_tolerates_node_scheduling_taints(c->owner, n))
    return false;
  return true;
}

static void tsc_log_constraint(plugin_handle *h, const char *msg, const tsc_constraint *c) {
  if (!LOG_ON(2))
    return;
  char json[1024];
  snprintf(json, sizeof json,
           "{\"MaxSkew\":%d,\"TopologyKey\":\"%s\",\"WhenUnsatisfiable\":\"%s\","
           "\"NodeAffinityPolicy\":\"%s\",\"NodeTaintsPolicy\":\"%s\"}",
           c->max_skew, c->topology_key, c->src->when_unsatisfiable,
           c->honor_affinity ? "Honor" : "Ignore", c->honor_taints ? "Honor" : "Ignore");
  LOGV(2, &h->log, msg, LJSON("constraint", json));
}

/* ---------- domains ---------- */

typedef struct {
  const char *value; /* topology value */
  bool exists;       /* an eligible node has this value, or a counted pod runs there */
  pod_vec pods;
} tsc_domain;

typedef struct {
  const char *value;
  node *n;
} tsc_node_value;

static int tsc_cmp_node_value(const void *a, const void *b) {
  const tsc_node_value *x = a, *y = b;
  int c = strcmp(x->value, y->value);
  return c ? c : strcmp(x->n->name, y->n->name);
}

/* Pods carrying a nodeSelector or node affinity are kept at the front (evicted last), then
 * ascending priority, absent first: the tail holds the best candidates. As upstream's
 * hasSelectorOrAffinity tests the Go map for nil, `nodeSelector: {}` counts as carrying one
 * (and `nodeAffinity: {}` as affinity). */
static bool tsc_has_selector_or_affinity(const pod *p) {
  return p->has_node_selector || pod_x(p)->node_affinity != NULL;
}

static int tsc_cmp_domain_pod(const pod *a, const pod *b) {
  bool sa = tsc_has_selector_or_affinity(a), sb = tsc_has_selector_or_affinity(b);
  if (sa != sb)
    return sa ? -1 : 1;
  if (a->has_priority != b->has_priority)
    return a->has_priority ? 1 : -1;
  if (a->has_priority && a->priority != b->priority)
    return a->priority < b->priority ? -1 : 1;
  return 0;
}

/* Stable insertion sort of domains by size (few domains; ties keep value order). */
static void tsc_sort_domains(tsc_domain **d, size_t n) {
  for (size_t i = 1; i < n; i++) {
    tsc_domain *x = d[i];
    size_t k = i;
    for (; k > 0 && d[k - 1]->pods.n > x->pods.n; k--)
      d[k] = d[k - 1];
    d[k] = x;
  }
}

/* ---------- one run ---------- */

/* A set of pod pointers (open addressing), so a pod picked by several constraints is
 * evicted once while the selection keeps its first-picked order. */
typedef struct {
  const pod **slots;
  size_t cap, n;
} tsc_pod_set;

static size_t tsc_ptr_hash(const void *p) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x;
}

/* Adds p; false if it was already there. */
static bool tsc_pod_set_add(arena *a, tsc_pod_set *s, const pod *p) {
  if ((s->n + 1) * 2 > s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 64;
    const pod **slots = ARENA_NEWN(a, const pod *, cap);
    for (size_t i = 0; i < s->cap; i++)
      if (s->slots[i]) {
        size_t k = tsc_ptr_hash(s->slots[i]) & (cap - 1);
        while (slots[k])
          k = (k + 1) & (cap - 1);
        slots[k] = s->slots[i];
      }
    s->slots = slots;
    s->cap = cap;
  }
  size_t k = tsc_ptr_hash(p) & (s->cap - 1);
  while (s->slots[k]) {
    if (s->slots[k] == p)
      return false;
    k = (k + 1) & (s->cap - 1);
  }
  s->slots[k] = p;
  s->n++;
  return true;
}

typedef struct {
  plugin_handle *h;
  const tsc_args *args;
  bool node_fit;        /* topologyBalanceNodeFit */
  int32_t *node_domain; /* by model node index: domain of the node for the current constraint */
  tsc_pod_set picked;
  pod_vec selected; /* pods to evict, in selection order */
} tsc_state;

/* P: namespaces, labelSelector and the evictor's Filter. */
static bool tsc_pod_filter(plugin_handle *h, const tsc_args *a, const pod *p) {
  return pod_passes_ns_and_labels(&a->namespaces, a->label_selector, p) && fw_filter(h, p);
}

/* Stable reorder of a domain: pods that fit on some below-average node (other than their
 * own) go to the tail, where the eviction candidates are taken from. fits[] follows. */
static bool *tsc_reorder_by_fit(plugin_handle *h, tsc_domain *d, node **below, size_t nbelow) {
  size_t n = d->pods.n;
  bool *fits = ARENA_NEWN(h->scratch, bool, n ? n : 1);
  pod **tmp = ARENA_NEWN(h->scratch, pod *, n ? n : 1);
  bool *tmp_fits = ARENA_NEWN(h->scratch, bool, n ? n : 1);
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    fits[i] = pod_fits_any_other_node(h, d->pods.items[i], below, nbelow);
  for (int pass = 0; pass < 2; pass++)
    for (size_t i = 0; i < n; i++)
      if (fits[i] == (pass == 1)) {
        tmp_fits[k] = fits[i];
        tmp[k++] = d->pods.items[i];
      }
  memcpy(d->pods.items, tmp, n * sizeof *tmp);
  memcpy(fits, tmp_fits, n * sizeof *fits);
  return fits;
}

/* The balancing loop (upstream's balanceDomains). doms are all domains in
 * value order (node_domain indexes them); list holds the existing ones and is reordered.
 * Pods are moved on paper from the large end (j) to the small end (i). */
static void tsc_balance_domains(tsc_state *st, const tsc_constraint *c, tsc_domain *doms,
                                tsc_domain **list, size_t nl, double sum, node **eligible,
                                size_t neligible) {
  plugin_handle *h = st->h;
  double avg = sum / (double)nl;
  for (size_t k = 0; k < nl; k++)
    pods_stable_sort(list[k]->pods.items, list[k]->pods.n, tsc_cmp_domain_pod);
  tsc_sort_domains(list, nl);

  /* Targets: eligible nodes whose domain is below the average, sizes taken once, before
   * anything moves. */
  node **below = ARENA_NEWN(h->scratch, node *, neligible ? neligible : 1);
  size_t nbelow = 0;
  for (size_t k = 0; k < neligible; k++) {
    int32_t d = st->node_domain[eligible[k]->index];
    if (d >= 0 && (double)doms[d].pods.n < avg)
      below[nbelow++] = eligible[k];
  }

  size_t i = 0, j = nl - 1;
  while (i < j) {
    /* j cannot give without falling below the average: next one down (once per round) */
    if ((double)list[j]->pods.n <= avg)
      j--;
    long long skew = (long long)list[j]->pods.n - (long long)list[i]->pods.n;
    if (skew <= c->max_skew) {
      i++;
      continue;
    }
    double give = ceil((double)list[j]->pods.n - avg);
    double take = ceil(avg - (double)list[i]->pods.n);
    double half = ceil((double)(skew - c->max_skew) / 2.0);
    int move = (int)fmin(fmin(give, take), half);
    if (move <= 0) {
      i++;
      continue;
    }
    tsc_domain *from = list[j], *to = list[i];
    bool *fits = tsc_reorder_by_fit(h, from, below, nbelow);
    size_t start = from->pods.n - (size_t)move;
    for (size_t k = start; k < from->pods.n; k++) {
      pod *p = from->pods.items[k];
      if (st->node_fit && !fits[k]) {
        char ref[512];
        LOGV(2, &h->log, "ignoring pod for eviction as it does not fit on any other node",
             LSTR("pod", pod_ref(p, ref, sizeof ref)));
      } else if (tsc_pod_set_add(h->scratch, &st->picked, p)) {
        pod_vec_push(h->scratch, &st->selected, p);
      }
      /* moved on paper either way, so the loop converges */
      pod_vec_push(h->scratch, &to->pods, p);
    }
    from->pods.n = start;
  }
}

/* Builds the domains of one constraint over the namespace's pods and balances them. */
static void tsc_process_constraint(tsc_state *st, const tsc_constraint *c, pod **pods,
                                   size_t npods) {
  plugin_handle *h = st->h;
  arena *a = h->scratch;

  /* Every cycle node carrying the key, grouped by value; a domain exists up front when a
   * node of that value passes the inclusion policies. */
  tsc_node_value *nv = ARENA_NEWN(a, tsc_node_value, h->nnodes ? h->nnodes : 1);
  size_t nnv = 0;
  for (size_t k = 0; k < h->nnodes; k++) {
    st->node_domain[h->nodes[k]->index] = -1;
    const char *v = kv_get(&h->nodes[k]->labels, c->topology_key);
    if (v)
      nv[nnv++] = (tsc_node_value){v, h->nodes[k]};
  }
  qsort(nv, nnv, sizeof *nv, tsc_cmp_node_value);
  tsc_domain *doms = ARENA_NEWN(a, tsc_domain, nnv ? nnv : 1);
  node **eligible = ARENA_NEWN(a, node *, h->nnodes ? h->nnodes : 1);
  size_t nd = 0, neligible = 0;
  for (size_t k = 0; k < nnv; k++) {
    if (nd == 0 || strcmp(doms[nd - 1].value, nv[k].value) != 0)
      doms[nd++].value = nv[k].value;
    st->node_domain[nv[k].n->index] = (int32_t)(nd - 1);
  }
  /* eligible nodes in node-name order; nodes without the key can never be targets */
  for (size_t k = 0; k < h->nnodes; k++) {
    node *n = h->nodes[k];
    if (!tsc_node_included(c, n))
      continue;
    eligible[neligible++] = n;
    if (st->node_domain[n->index] >= 0)
      doms[st->node_domain[n->index]].exists = true;
  }

  /* Count the selected pods per domain; a pod on an excluded node still makes its domain. */
  double sum = 0;
  for (size_t k = 0; k < npods; k++) {
    pod *p = pods[k];
    if (p->deleting || !selector_matches(c->selector, &p->labels))
      continue;
    if (!p->node || !fw_is_cycle_node(h, p->node))
      continue;
    int32_t d = st->node_domain[p->node->index];
    if (d < 0)
      continue;
    pod_vec_push(a, &doms[d].pods, p);
    doms[d].exists = true;
    sum++;
  }

  tsc_domain **list = ARENA_NEWN(a, tsc_domain *, nd ? nd : 1);
  size_t nl = 0, min = SIZE_MAX, max = 0;
  for (size_t k = 0; k < nd; k++)
    if (doms[k].exists) {
      list[nl++] = &doms[k];
      min = doms[k].pods.n < min ? doms[k].pods.n : min;
      max = doms[k].pods.n > max ? doms[k].pods.n : max;
    }
  if (nl == 0 || (long long)(max - min) <= c->max_skew) {
    tsc_log_constraint(h, "Skipping topology constraint because it is already balanced", c);
    return;
  }
  tsc_balance_domains(st, c, doms, list, nl, sum, eligible, neligible);
}

static int tsc_cmp_namespace(const pod *a, const pod *b) {
  return strcmp(a->ns, b->ns);
}

/* Collects the namespace's distinct internal constraints, in first-seen order. */
static tsc_constraint *tsc_collect_constraints(tsc_state *st, pod **pods, size_t npods,
                                               size_t *count) {
  arena *a = st->h->scratch;
  size_t cap = 0, n = 0;
  for (size_t k = 0; k < npods; k++)
    cap += pod_x(pods[k])->nspread;
  tsc_constraint *out = ARENA_NEWN(a, tsc_constraint, cap ? cap : 1);
  for (size_t k = 0; k < npods; k++) {
    const pod *p = pods[k];
    const pod_extra *x = pod_x(p);
    for (size_t s = 0; s < x->nspread; s++) {
      const spread_constraint *sc = &x->spread[s];
      if (!str_list_contains(&st->args->constraints, sc->when_unsatisfiable))
        continue;
      if (sc->selector && sc->selector->invalid) {
        /* upstream skips the constraint (and only it); the pod names the object to fix */
        char ref[512];
        LOGE(&st->h->log, "cannot process topology spread constraint", sc->selector->invalid,
             LSTR("pod", pod_ref(p, ref, sizeof ref)));
        continue;
      }
      const char *ap = sc->node_affinity_policy, *tp = sc->node_taints_policy;
      tsc_constraint c = {
          .src = sc,
          .owner = p,
          .max_skew = sc->max_skew,
          .topology_key = sc->topology_key,
          .selector = tsc_build_selector(a, sc, p),
          .honor_affinity = !*ap || strcmp(ap, "Honor") == 0, /* default Honor */
          .honor_taints = strcmp(tp, "Honor") == 0,           /* default Ignore */
      };
      bool seen = false;
      for (size_t i = 0; i < n && !seen; i++)
        seen = tsc_constraint_equal(&out[i], &c);
      if (!seen)
        out[n++] = c;
    }
  }
  *count = n;
  return out;
}

static int tsc_run(plugin_handle *h, const void *vargs, dserr *err) {
  (void)err;
  const tsc_args *a = vargs;
  tsc_state st = {.h = h, .args = a, .node_fit = !a->node_fit.set || a->node_fit.v};
  st.node_domain = ARENA_NEWN(h->scratch, int32_t, h->m->nodes.n ? h->m->nodes.n : 1);

  LOGV(1, &h->log, "Processing namespaces for topology spread constraints");
  pod_vec all = {0};
  for (size_t i = 0; i < h->nnodes; i++) {
    size_t n;
    pod **pods = fw_node_pods(h, h->nodes[i], true, &n);
    for (size_t k = 0; k < n; k++)
      if (tsc_pod_filter(h, a, pods[k]))
        pod_vec_push(h->scratch, &all, pods[k]);
  }
  /* group by namespace; within a namespace pods keep listing order */
  pods_stable_sort(all.items, all.n, tsc_cmp_namespace);
  for (size_t lo = 0; lo < all.n;) {
    size_t hi = lo + 1;
    while (hi < all.n && strcmp(all.items[hi]->ns, all.items[lo]->ns) == 0)
      hi++;
    LOGV(4, &h->log, "Processing namespace for topology spread constraints",
         LSTR("namespace", all.items[lo]->ns));
    size_t nc;
    tsc_constraint *cs = tsc_collect_constraints(&st, all.items + lo, hi - lo, &nc);
    for (size_t k = 0; k < nc; k++)
      tsc_process_constraint(&st, &cs[k], all.items + lo, hi - lo);
    lo = hi;
  }

  /* Evict what the balancing picked. Nothing was evicted while balancing, so P and
   * PreEvictionFilter are asked again here, as upstream does. */
  bool *node_limited = ARENA_NEWN(h->scratch, bool, h->m->nodes.n ? h->m->nodes.n : 1);
  for (size_t i = 0; i < st.selected.n; i++) {
    pod *p = st.selected.items[i];
    if (p->node && node_limited[p->node->index])
      continue;
    if (!tsc_pod_filter(h, a, p) || !fw_pre_eviction_filter(h, p))
      continue;
    switch (fw_evict(h, p, "")) {
    case EVICT_OK: break;
    case EVICT_LIMIT_NODE:
      if (p->node)
        node_limited[p->node->index] = true;
      break;
    case EVICT_LIMIT_TOTAL: return 0;
    case EVICT_LIMIT_NAMESPACE:
    case EVICT_FAILED: log_eviction_failed(h, p); break;
    case EVICT_VETOED: break;
    }
  }
  return 0;
}

const plugin_desc plugin_topology_spread = {
    .name = "RemovePodsViolatingTopologySpreadConstraint",
    .points = PLUGIN_BALANCE,
    .args_size = sizeof(tsc_args),
    .fields = tsc_fields,
    .validate = tsc_validate,
    .set_defaults = tsc_set_defaults,
    .run = tsc_run,
};
