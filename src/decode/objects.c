/* objects.c - one Kubernetes object (a doc_node tree) into compact model structs.
 *
 * Every reader takes the tree of one object and copies what the decisions need into the
 * model arena; repeated strings are interned. Type errors on fields that are read are
 * reported with the field path; fields that are not read are ignored, as a Kubernetes
 * client ignores unknown fields. */
#include "decode.h"

#include "../obs/log.h"
#include "../apimachinery/quantity.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct decode_ctx {
  model *m;
  dserr *err;
  /* where flat arrays go (labels, owners, tolerations, statuses...): the model's arena, or
   * for a pod a scratch arena whose arrays are then shared (model_share) */
  arena *flat;
  bool own_names; /* metadata.name and uid are left in the tree for the caller to copy */
  pod_extra *x;   /* the pod being decoded: where its rarely set fields go (scratch) */
} dctx;

static int type_err(dctx *c, const char *path, const char *want, const doc_node *got) {
  return dserr_set(c->err, "%s: expected %s, got %s", path, want, doc_type_name(got->type));
}

static bool absent(const doc_node *n) { return !n || n->type == DOC_NULL; }

/* Interned string field; NULL if absent. Returns -1 on a type error. */
static int get_str(dctx *c, const doc_node *n, const char *path, const char **out) {
  *out = NULL;
  if (absent(n))
    return 0;
  if (n->type != DOC_STR)
    return type_err(c, path, "a string", n);
  *out = intern(c->m->strings, n->text);
  return 0;
}

/* get_str without interning: the tree's own text (valid while the tree lives). */
static int get_str_raw(dctx *c, const doc_node *n, const char *path, const char **out) {
  *out = NULL;
  if (absent(n))
    return 0;
  if (n->type != DOC_STR)
    return type_err(c, path, "a string", n);
  *out = n->text;
  return 0;
}

static const char *str_or(const char *s, const char *dflt) { return s ? s : dflt; }

static int get_i64(dctx *c, const doc_node *n, const char *path, int64_t *out, bool *present) {
  if (present)
    *present = false;
  if (absent(n))
    return 0;
  if (n->type != DOC_INT || n->big)
    return type_err(c, path, "an integer", n);
  *out = n->v.i;
  if (present)
    *present = true;
  return 0;
}

static int get_bool(dctx *c, const doc_node *n, const char *path, bool *out) {
  *out = false;
  if (absent(n))
    return 0;
  if (n->type != DOC_BOOL)
    return type_err(c, path, "true or false", n);
  *out = n->v.b;
  return 0;
}

static int get_time(dctx *c, const doc_node *n, const char *path, int64_t *out, bool *present) {
  *present = false;
  if (absent(n))
    return 0;
  if (n->type != DOC_STR)
    return type_err(c, path, "an RFC 3339 time string", n);
  if (time_parse_rfc3339(n->text, out, NULL, c->err) < 0)
    return dserr_prefix(c->err, "%s", path);
  *present = true;
  return 0;
}

static int want_map(dctx *c, const doc_node *n, const char *path) {
  if (absent(n) || n->type == DOC_MAP)
    return 0;
  return type_err(c, path, "a map", n);
}

static int want_seq(dctx *c, const doc_node *n, const char *path) {
  if (absent(n) || n->type == DOC_SEQ)
    return 0;
  return type_err(c, path, "a list", n);
}

static size_t seq_len(const doc_node *n) { return n && n->type == DOC_SEQ ? n->n : 0; }

/* "<prefix>[<i>]<suffix>" and "<a>.<b>" into buf, cut to cap as snprintf would: the paths
 * errors name are built for every element read, so they are built without snprintf. */
static size_t path_put(char *buf, size_t cap, size_t at, const char *s, size_t n) {
  if (at + n >= cap)
    n = at < cap - 1 ? cap - 1 - at : 0;
  memcpy(buf + at, s, n);
  buf[at + n] = 0;
  return at + n;
}

static const char *path_at(char *buf, size_t cap, const char *prefix, size_t i,
                           const char *suffix) {
  char num[24];
  size_t k = sizeof num;
  num[--k] = ']';
  do
    num[--k] = (char)('0' + i % 10);
  while ((i /= 10) != 0);
  num[--k] = '[';
  size_t at = path_put(buf, cap, 0, prefix, strlen(prefix));
  at = path_put(buf, cap, at, num + k, sizeof num - k);
  path_put(buf, cap, at, suffix, strlen(suffix));
  return buf;
}

static const char *path_join(char *buf, size_t cap, const char *a, const char *b) {
  size_t at = path_put(buf, cap, 0, a, strlen(a));
  at = path_put(buf, cap, at, ".", 1);
  path_put(buf, cap, at, b, strlen(b));
  return buf;
}

/* map[string]string (labels, annotations, nodeSelector) into a kvlist of interned strings */
static int get_kvlist(dctx *c, const doc_node *n, const char *path, kvlist *out) {
  out->n = 0;
  out->items = NULL;
  if (absent(n))
    return 0;
  if (n->type != DOC_MAP)
    return type_err(c, path, "a map of strings", n);
  out->items = ARENA_NEWN(c->flat, kv, n->n ? n->n : 1);
  for (size_t i = 0; i < n->n; i++) {
    const doc_node *v = n->pairs[i].value;
    if (v->type != DOC_STR) {
      char p[512];
      snprintf(p, sizeof p, "%s.%s", path, n->pairs[i].key);
      return type_err(c, p, "a string", v);
    }
    out->items[out->n].key = intern(c->m->strings, n->pairs[i].key);
    out->items[out->n].value = intern(c->m->strings, v->text);
    out->n++;
  }
  return 0;
}

/* map[resource]quantity into a res_list */
static int get_resources(dctx *c, const doc_node *n, const char *path, res_list *out) {
  out->n = 0;
  out->items = NULL;
  if (absent(n))
    return 0;
  if (n->type != DOC_MAP)
    return type_err(c, path, "a map of resource quantities", n);
  out->items = ARENA_NEWN(c->flat, res_q, n->n ? n->n : 1);
  for (size_t i = 0; i < n->n; i++) {
    const doc_node *v = n->pairs[i].value;
    int64_t milli;
    if (v->type == DOC_INT && !v->big && v->v.i <= INT64_MAX / 1000 &&
        v->v.i >= INT64_MIN / 1000) {
      milli = v->v.i * 1000; /* a bare number, as YAML or a test may write it */
    } else if (v->type == DOC_STR || v->type == DOC_FLOAT || v->type == DOC_INT) {
      /* a bare number too large for milli-units gets the parser's "too large" */
      if (quantity_parse(v->text, &milli, c->err) < 0)
        return dserr_prefix(c->err, "%s.%s", path, n->pairs[i].key);
    } else {
      char p[512];
      snprintf(p, sizeof p, "%s.%s", path, n->pairs[i].key);
      return type_err(c, p, "a quantity string", v);
    }
    out->items[out->n].name = intern(c->m->strings, n->pairs[i].key);
    out->items[out->n].milli = milli;
    out->n++;
  }
  return 0;
}

static int get_string_list(dctx *c, const doc_node *n, const char *path, const char ***out,
                           size_t *count) {
  *out = NULL;
  *count = 0;
  if (absent(n))
    return 0;
  if (n->type != DOC_SEQ)
    return type_err(c, path, "a list of strings", n);
  *out = ARENA_NEWN(c->m->mem, const char *, n->n ? n->n : 1);
  for (size_t i = 0; i < n->n; i++) {
    if (n->items[i]->type != DOC_STR) {
      char p[512];
      path_at(p, sizeof p, path, i, "");
      return type_err(c, p, "a string", n->items[i]);
    }
    (*out)[i] = intern(c->m->strings, n->items[i]->text);
  }
  *count = n->n;
  return 0;
}

/* ---------- shared pieces ---------- */

static int decode_taints(dctx *c, const doc_node *n, taint **out, size_t *count) {
  if (want_seq(c, n, "spec.taints") < 0)
    return -1;
  *count = seq_len(n);
  *out = ARENA_NEWN(c->m->mem, taint, *count ? *count : 1);
  for (size_t i = 0; i < *count; i++) {
    const doc_node *t = n->items[i];
    char p[128];
    path_at(p, sizeof p, "spec.taints", i, "");
    if (want_map(c, t, p) < 0)
      return -1;
    const char *k, *v, *e;
    if (get_str(c, doc_get(t, "key"), p, &k) < 0 || get_str(c, doc_get(t, "value"), p, &v) < 0 ||
        get_str(c, doc_get(t, "effect"), p, &e) < 0)
      return -1;
    (*out)[i] = (taint){str_or(k, ""), str_or(v, ""), str_or(e, "")};
  }
  return 0;
}

static int decode_tolerations(dctx *c, const doc_node *n, toleration **out, uint32_t *count) {
  if (want_seq(c, n, "spec.tolerations") < 0)
    return -1;
  *count = seq_len(n);
  *out = ARENA_NEWN(c->flat, toleration, *count ? *count : 1);
  for (size_t i = 0; i < *count; i++) {
    const doc_node *t = n->items[i];
    char p[128];
    path_at(p, sizeof p, "spec.tolerations", i, "");
    if (want_map(c, t, p) < 0)
      return -1;
    const char *k, *v, *e, *op;
    if (get_str(c, doc_get(t, "key"), p, &k) < 0 || get_str(c, doc_get(t, "value"), p, &v) < 0 ||
        get_str(c, doc_get(t, "effect"), p, &e) < 0 ||
        get_str(c, doc_get(t, "operator"), p, &op) < 0)
      return -1;
    toleration_op o = TOL_OTHER;
    if (!op || !*op || strcmp(op, "Equal") == 0)
      o = TOL_EQUAL;
    else if (strcmp(op, "Exists") == 0)
      o = TOL_EXISTS;
    else if (strcmp(op, "Lt") == 0)
      o = TOL_LT;
    else if (strcmp(op, "Gt") == 0)
      o = TOL_GT;
    (*out)[i].key = str_or(k, "");
    (*out)[i].value = str_or(v, "");
    (*out)[i].effect = str_or(e, "");
    (*out)[i].op = o;
  }
  return 0;
}

static int decode_node_term(dctx *c, const doc_node *t, const char *path, node_term *out) {
  if (want_map(c, t, path) < 0)
    return -1;
  arena *a = c->m->mem;
  out->labels = ARENA_NEW(a, label_selector);
  out->fields = ARENA_NEW(a, label_selector);
  char p[512];
  path_join(p, sizeof p, path, "matchExpressions");
  if (selector_add_node_reqs(a, out->labels, doc_get(t, "matchExpressions"), p, c->err) < 0)
    return -1;
  path_join(p, sizeof p, path, "matchFields");
  if (selector_add_node_reqs(a, out->fields, doc_get(t, "matchFields"), p, c->err) < 0)
    return -1;
  out->empty = out->labels->n == 0 && out->fields->n == 0;
  return 0;
}

static int decode_node_affinity(dctx *c, const doc_node *na, node_affinity **out) {
  *out = NULL;
  if (absent(na))
    return 0;
  if (want_map(c, na, "spec.affinity.nodeAffinity") < 0)
    return -1;
  node_affinity *aff = ARENA_NEW(c->m->mem, node_affinity);
  const doc_node *req = doc_get(na, "requiredDuringSchedulingIgnoredDuringExecution");
  if (!absent(req)) {
    const char *rp = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution";
    if (want_map(c, req, rp) < 0)
      return -1;
    aff->has_required = true;
    const doc_node *terms = doc_get(req, "nodeSelectorTerms");
    if (want_seq(c, terms, "nodeSelectorTerms") < 0)
      return -1;
    aff->nrequired = seq_len(terms);
    aff->required = ARENA_NEWN(c->m->mem, node_term, aff->nrequired ? aff->nrequired : 1);
    for (size_t i = 0; i < aff->nrequired; i++) {
      char p[256];
      snprintf(p, sizeof p, "%s.nodeSelectorTerms[%zu]", rp, i);
      if (decode_node_term(c, terms->items[i], p, &aff->required[i]) < 0)
        return -1;
    }
  }
  const doc_node *pref = doc_get(na, "preferredDuringSchedulingIgnoredDuringExecution");
  if (want_seq(c, pref, "preferredDuringSchedulingIgnoredDuringExecution") < 0)
    return -1;
  aff->npreferred = seq_len(pref);
  aff->preferred = ARENA_NEWN(c->m->mem, weighted_term, aff->npreferred ? aff->npreferred : 1);
  for (size_t i = 0; i < aff->npreferred; i++) {
    char p[256];
    snprintf(p, sizeof p,
             "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[%zu]", i);
    const doc_node *w = pref->items[i];
    if (want_map(c, w, p) < 0)
      return -1;
    int64_t weight = 0;
    if (get_i64(c, doc_get(w, "weight"), p, &weight, NULL) < 0)
      return -1;
    aff->preferred[i].weight = (int32_t)weight;
    strncat(p, ".preference", sizeof p - strlen(p) - 1);
    if (decode_node_term(c, doc_get(w, "preference"), p, &aff->preferred[i].term) < 0)
      return -1;
  }
  *out = aff;
  return 0;
}

static int decode_anti_affinity(dctx *c, const doc_node *paa) {
  if (absent(paa))
    return 0;
  const doc_node *req = doc_get(paa, "requiredDuringSchedulingIgnoredDuringExecution");
  const char *path = "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution";
  if (want_seq(c, req, path) < 0)
    return -1;
  c->x->nanti_affinity = seq_len(req);
  c->x->anti_affinity =
      c->x->nanti_affinity ? ARENA_NEWN(c->m->mem, pod_affinity_term, c->x->nanti_affinity) : NULL;
  for (size_t i = 0; i < c->x->nanti_affinity; i++) {
    const doc_node *t = req->items[i];
    char tp[256];
    path_at(tp, sizeof tp, path, i, "");
    if (want_map(c, t, tp) < 0)
      return -1;
    pod_affinity_term *term = &c->x->anti_affinity[i];
    char sp[300];
    path_join(sp, sizeof sp, tp, "labelSelector");
    if (selector_from_doc(c->m->mem, doc_get(t, "labelSelector"), sp, &term->selector, c->err) < 0)
      return -1;
    path_join(sp, sizeof sp, tp, "namespaces");
    if (get_string_list(c, doc_get(t, "namespaces"), sp, &term->namespaces, &term->nnamespaces) < 0)
      return -1;
    if (get_str(c, doc_get(t, "topologyKey"), tp, &term->topology_key) < 0)
      return -1;
    term->topology_key = str_or(term->topology_key, "");
  }
  return 0;
}

static int decode_spread(dctx *c, const doc_node *list) {
  if (want_seq(c, list, "spec.topologySpreadConstraints") < 0)
    return -1;
  c->x->nspread = seq_len(list);
  /* most pods have none: no array then (150,000 empty ones of 64 bytes would be 9.6 MB) */
  c->x->spread = c->x->nspread ? ARENA_NEWN(c->m->mem, spread_constraint, c->x->nspread) : NULL;
  for (size_t i = 0; i < c->x->nspread; i++) {
    const doc_node *t = list->items[i];
    char tp[128];
    path_at(tp, sizeof tp, "spec.topologySpreadConstraints", i, "");
    if (want_map(c, t, tp) < 0)
      return -1;
    spread_constraint *s = &c->x->spread[i];
    int64_t skew = 0;
    char sp[256];
    path_join(sp, sizeof sp, tp, "maxSkew");
    if (get_i64(c, doc_get(t, "maxSkew"), sp, &skew, NULL) < 0)
      return -1;
    s->max_skew = (int32_t)skew;
    if (get_str(c, doc_get(t, "topologyKey"), tp, &s->topology_key) < 0 ||
        get_str(c, doc_get(t, "whenUnsatisfiable"), tp, &s->when_unsatisfiable) < 0 ||
        get_str(c, doc_get(t, "nodeAffinityPolicy"), tp, &s->node_affinity_policy) < 0 ||
        get_str(c, doc_get(t, "nodeTaintsPolicy"), tp, &s->node_taints_policy) < 0)
      return -1;
    s->topology_key = str_or(s->topology_key, "");
    s->when_unsatisfiable = str_or(s->when_unsatisfiable, "");
    s->node_affinity_policy = str_or(s->node_affinity_policy, "");
    s->node_taints_policy = str_or(s->node_taints_policy, "");
    path_join(sp, sizeof sp, tp, "labelSelector");
    if (selector_from_doc(c->m->mem, doc_get(t, "labelSelector"), sp, &s->selector, c->err) < 0)
      return -1;
    path_join(sp, sizeof sp, tp, "matchLabelKeys");
    if (get_string_list(c, doc_get(t, "matchLabelKeys"), sp, &s->match_label_keys,
                        &s->nmatch_label_keys) < 0)
      return -1;
  }
  return 0;
}

static int decode_statuses(dctx *c, const doc_node *list, const char *path, container_status **out,
                           uint32_t *count) {
  if (want_seq(c, list, path) < 0)
    return -1;
  *count = seq_len(list);
  *out = ARENA_NEWN(c->flat, container_status, *count ? *count : 1);
  for (size_t i = 0; i < *count; i++) {
    const doc_node *s = list->items[i];
    char p[160];
    path_at(p, sizeof p, path, i, "");
    if (want_map(c, s, p) < 0)
      return -1;
    container_status *cs = &(*out)[i];
    int64_t restarts = 0;
    if (get_str(c, doc_get(s, "name"), p, &cs->name) < 0 ||
        get_i64(c, doc_get(s, "restartCount"), p, &restarts, NULL) < 0)
      return -1;
    cs->restarts = (int32_t)restarts;
    const doc_node *st = doc_get(s, "state");
    if (get_str(c, doc_path(st, "waiting", "reason", NULL), p, &cs->waiting_reason) < 0)
      return -1;
    if (!cs->waiting_reason && !absent(doc_get(st, "waiting")))
      cs->waiting_reason = "";
    const doc_node *term = doc_get(st, "terminated");
    if (!absent(term)) {
      int64_t code = 0;
      cs->terminated = true;
      if (get_str(c, doc_get(term, "reason"), p, &cs->terminated_reason) < 0 ||
          get_i64(c, doc_get(term, "exitCode"), p, &code, NULL) < 0)
        return -1;
      cs->exit_code = (int32_t)code;
    }
  }
  return 0;
}

/* ---------- pod resources ---------- */

/* A container's requests and limits, as read. */
typedef struct {
  res_list req, lim;
  bool sidecar; /* init container with restartPolicy Always */
} ctr;

static int read_containers(dctx *c, const doc_node *list, const char *path, ctr **out,
                           size_t *count, bool init) {
  if (want_seq(c, list, path) < 0)
    return -1;
  *count = seq_len(list);
  *out = calloc(*count ? *count : 1, sizeof **out);
  if (!*out)
    abort();
  for (size_t i = 0; i < *count; i++) {
    const doc_node *k = list->items[i];
    char p[160];
    path_at(p, sizeof p, path, i, "");
    if (want_map(c, k, p) < 0)
      return -1;
    const doc_node *res = doc_get(k, "resources");
    char rp[200];
    path_join(rp, sizeof rp, p, "resources.requests");
    if (get_resources(c, doc_get(res, "requests"), rp, &(*out)[i].req) < 0)
      return -1;
    path_join(rp, sizeof rp, p, "resources.limits");
    if (get_resources(c, doc_get(res, "limits"), rp, &(*out)[i].lim) < 0)
      return -1;
    if (init) {
      const char *rpol;
      if (get_str(c, doc_get(k, "restartPolicy"), p, &rpol) < 0)
        return -1;
      (*out)[i].sidecar = rpol && strcmp(rpol, "Always") == 0;
    }
  }
  return 0;
}

typedef struct {
  const char *name;
  int64_t regular, sidecar_sum, init_max, total;
} res_acc;

static res_acc *acc_find(res_acc *acc, size_t *n, const char *name) {
  for (size_t i = 0; i < *n; i++)
    if (acc[i].name == name)
      return &acc[i];
  acc[*n] = (res_acc){name, 0, 0, 0, 0};
  return &acc[(*n)++];
}

static bool pod_level_resource(const char *name) {
  return strcmp(name, "cpu") == 0 || strcmp(name, "memory") == 0 ||
         strncmp(name, "hugepages-", 10) == 0;
}

/* As k8s.io/component-helpers/resource PodRequests (docs/behaviour.md, Pod requests): the
 * max of regular + sidecars and the largest init demand, pod-level override, plus overhead. */
static void compute_requests(arena *flat, pod *p, ctr *regular, size_t nreg, ctr *init,
                             size_t ninit, const res_list *pod_level, const res_list *overhead) {
  size_t cap = overhead->n + pod_level->n + 1;
  for (size_t i = 0; i < nreg; i++)
    cap += regular[i].req.n;
  for (size_t i = 0; i < ninit; i++)
    cap += init[i].req.n;
  res_acc *acc = calloc(cap, sizeof *acc);
  size_t n = 0;
  if (!acc)
    abort();
  for (size_t i = 0; i < nreg; i++)
    for (size_t j = 0; j < regular[i].req.n; j++) {
      res_acc *r = acc_find(acc, &n, regular[i].req.items[j].name);
      r->regular = quantity_add(r->regular, regular[i].req.items[j].milli);
    }
  /* init containers in order; a sidecar's request counts toward every later init's demand */
  for (size_t i = 0; i < ninit; i++) {
    for (size_t j = 0; j < init[i].req.n; j++)
      acc_find(acc, &n, init[i].req.items[j].name);
    for (size_t a = 0; a < n; a++) {
      int64_t q = res_get(&init[i].req, acc[a].name, NULL);
      int64_t demand;
      if (init[i].sidecar) {
        acc[a].regular = quantity_add(acc[a].regular, q);
        acc[a].sidecar_sum = quantity_add(acc[a].sidecar_sum, q);
        demand = acc[a].sidecar_sum;
      } else {
        demand = quantity_add(q, acc[a].sidecar_sum);
      }
      if (demand > acc[a].init_max)
        acc[a].init_max = demand;
    }
  }
  for (size_t a = 0; a < n; a++)
    acc[a].total = acc[a].regular > acc[a].init_max ? acc[a].regular : acc[a].init_max;
  for (size_t j = 0; j < pod_level->n; j++)
    if (pod_level_resource(pod_level->items[j].name))
      acc_find(acc, &n, pod_level->items[j].name)->total = pod_level->items[j].milli;
  for (size_t j = 0; j < overhead->n; j++) {
    res_acc *r = acc_find(acc, &n, overhead->items[j].name);
    r->total = quantity_add(r->total, overhead->items[j].milli);
  }
  p->requests.items = ARENA_NEWN(flat, res_q, n ? n : 1);
  p->requests.n = n;
  for (size_t a = 0; a < n; a++)
    p->requests.items[a] = (res_q){acc[a].name, acc[a].total};
  /* resource names any container requests (HighNodeUtilization's OnlyThresholdingResources) */
  p->request_keys = ARENA_NEWN(flat, const char *, cap);
  p->nrequest_keys = 0;
  for (size_t pass = 0; pass < 2; pass++) {
    ctr *list = pass ? init : regular;
    size_t cnt = pass ? ninit : nreg;
    for (size_t i = 0; i < cnt; i++)
      for (size_t j = 0; j < list[i].req.n; j++) {
        const char *name = list[i].req.items[j].name;
        bool seen = false;
        for (size_t k = 0; k < p->nrequest_keys; k++)
          seen |= p->request_keys[k] == name;
        if (!seen)
          p->request_keys[p->nrequest_keys++] = name;
      }
  }
  free(acc);
}

/* upstream's GetPodQOS (pkg/utils/qos.go), used when status.qosClass is empty */
static qos_class compute_qos(model *m, ctr *regular, size_t nreg, ctr *init, size_t ninit) {
  const char *cpu = intern(m->strings, "cpu"), *mem = intern(m->strings, "memory");
  const char *names[2] = {cpu, mem};
  int64_t req_sum[2] = {0, 0}, lim_sum[2] = {0, 0};
  bool has_req[2] = {false, false}, has_lim[2] = {false, false};
  bool guaranteed = true;
  for (size_t pass = 0; pass < 2; pass++) {
    ctr *list = pass ? init : regular;
    size_t cnt = pass ? ninit : nreg;
    for (size_t i = 0; i < cnt; i++) {
      bool lim_found[2] = {false, false};
      for (int r = 0; r < 2; r++) {
        int64_t q = res_get(&list[i].req, names[r], NULL);
        if (q > 0) {
          req_sum[r] = quantity_add(req_sum[r], q);
          has_req[r] = true;
        }
        q = res_get(&list[i].lim, names[r], NULL);
        if (q > 0) {
          lim_sum[r] = quantity_add(lim_sum[r], q);
          has_lim[r] = true;
          lim_found[r] = true;
        }
      }
      if (!lim_found[0] || !lim_found[1])
        guaranteed = false;
    }
  }
  int nreq = has_req[0] + has_req[1], nlim = has_lim[0] + has_lim[1];
  if (nreq == 0 && nlim == 0)
    return QOS_BESTEFFORT;
  if (guaranteed) {
    for (int r = 0; r < 2; r++)
      if (has_req[r] && (!has_lim[r] || lim_sum[r] != req_sum[r]))
        guaranteed = false;
    if (nreq != nlim)
      guaranteed = false;
  }
  return guaranteed ? QOS_GUARANTEED : QOS_BURSTABLE;
}

/* ---------- kinds ---------- */

static int decode_metadata_common(dctx *c, const doc_node *md, const char **ns, const char **name,
                                  const char **uid, bool namespaced) {
  if (absent(md))
    return dserr_set(c->err, "metadata: required");
  if (want_map(c, md, "metadata") < 0)
    return -1;
  int (*name_str)(dctx *, const doc_node *, const char *, const char **) =
      c->own_names ? get_str_raw : get_str;
  if (name_str(c, doc_get(md, "name"), "metadata.name", name) < 0)
    return -1;
  if (!*name || !**name)
    return dserr_set(c->err, "metadata.name: required");
  if (ns) {
    if (get_str(c, doc_get(md, "namespace"), "metadata.namespace", ns) < 0)
      return -1;
    if (namespaced && (!*ns || !**ns))
      return dserr_set(c->err, "metadata.namespace: required for a namespaced object");
  }
  if (uid) {
    if (name_str(c, doc_get(md, "uid"), "metadata.uid", uid) < 0)
      return -1;
    *uid = str_or(*uid, "");
  }
  return 0;
}

static int decode_annotations(dctx *c, pod *p, const doc_node *ann) {
  if (absent(ann))
    return 0;
  if (ann->type != DOC_MAP)
    return type_err(c, "metadata.annotations", "a map of strings", ann);
  static const struct {
    const char *key;
    uint32_t bit;
  } known[] = {{"descheduler.alpha.kubernetes.io/evict", ANN_EVICT},
               {"descheduler.alpha.kubernetes.io/prefer-no-eviction", ANN_PREFER_NO_EVICTION},
               {"kubernetes.io/config.mirror", ANN_MIRROR},
               {"kubernetes.io/config.source", ANN_CONFIG_SOURCE},
               {"descheduler.alpha.kubernetes.io/request-evict-only", ANN_REQUEST_EVICT_ONLY},
               {"descheduler.alpha.kubernetes.io/eviction-in-progress", ANN_EVICTION_IN_PROGRESS},
               {"kubevirt.io/domain", ANN_KUBEVIRT_DOMAIN},
               {VM_NO_EVICTION_ANNOTATION, ANN_VM_NO_EVICTION}};
  for (size_t i = 0; i < ann->n; i++) {
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) {
      if (strcmp(ann->pairs[i].key, known[k].key) != 0)
        continue;
      const doc_node *v = ann->pairs[i].value;
      if (v->type != DOC_STR) {
        char path[200];
        snprintf(path, sizeof path, "metadata.annotations.%s", known[k].key);
        return type_err(c, path, "a string", v);
      }
      p->annotations |= known[k].bit;
      if (known[k].bit == ANN_CONFIG_SOURCE)
        c->x->config_source = intern(c->m->strings, v->text);
      if (known[k].bit == ANN_KUBEVIRT_DOMAIN)
        c->x->kubevirt_domain = intern(c->m->strings, v->text);
    }
  }
  return 0;
}

static int decode_owners(dctx *c, pod *p, const doc_node *list) {
  if (want_seq(c, list, "metadata.ownerReferences") < 0)
    return -1;
  p->nowners = seq_len(list);
  p->owners = ARENA_NEWN(c->flat, owner_ref, p->nowners ? p->nowners : 1);
  for (size_t i = 0; i < p->nowners; i++) {
    const doc_node *o = list->items[i];
    char path[64];
    path_at(path, sizeof path, "metadata.ownerReferences", i, "");
    if (want_map(c, o, path) < 0)
      return -1;
    owner_ref *r = &p->owners[i];
    if (get_str(c, doc_get(o, "kind"), path, &r->kind) < 0 ||
        get_str(c, doc_get(o, "name"), path, &r->name) < 0 ||
        get_str(c, doc_get(o, "uid"), path, &r->uid) < 0 ||
        get_bool(c, doc_get(o, "controller"), path, &r->controller) < 0)
      return -1;
    r->kind = str_or(r->kind, "");
    r->name = str_or(r->name, "");
    r->uid = str_or(r->uid, "");
    /* read by the DefaultEvictor at every pod of every cycle: kept as a bit */
    if (strcmp(r->kind, "DaemonSet") == 0)
      p->daemonset_owner = true;
  }
  return 0;
}

static int decode_volumes(dctx *c, pod *p, const doc_node *vols) {
  if (want_seq(c, vols, "spec.volumes") < 0)
    return -1;
  size_t n = seq_len(vols);
  c->x->pvc_claims = ARENA_NEWN(c->flat, const char *, n ? n : 1);
  for (size_t i = 0; i < n; i++) {
    const doc_node *v = vols->items[i];
    if (!absent(doc_get(v, "hostPath")) || !absent(doc_get(v, "emptyDir")))
      p->local_storage = true;
    const doc_node *pvc = doc_get(v, "persistentVolumeClaim");
    if (!absent(pvc)) {
      const char *claim;
      char path[80];
      path_at(path, sizeof path, "spec.volumes", i, ".persistentVolumeClaim.claimName");
      if (get_str(c, doc_get(pvc, "claimName"), path, &claim) < 0)
        return -1;
      c->x->pvc_claims[c->x->npvc++] = str_or(claim, "");
    }
  }
  return 0;
}

static pod_phase phase_from(const char *s) {
  if (!s)
    return PHASE_NONE;
  if (!strcmp(s, "Pending"))
    return PHASE_PENDING;
  if (!strcmp(s, "Running"))
    return PHASE_RUNNING;
  if (!strcmp(s, "Succeeded"))
    return PHASE_SUCCEEDED;
  if (!strcmp(s, "Failed"))
    return PHASE_FAILED;
  if (!strcmp(s, "Unknown"))
    return PHASE_UNKNOWN;
  return PHASE_NONE;
}

static int decode_pod_status(dctx *c, pod *p, const doc_node *st) {
  if (want_map(c, st, "status") < 0)
    return -1;
  const char *phase, *qos;
  bool has_start;
  if (get_str(c, doc_get(st, "phase"), "status.phase", &phase) < 0 ||
      get_str(c, doc_get(st, "reason"), "status.reason", &c->x->status_reason) < 0 ||
      get_str(c, doc_get(st, "qosClass"), "status.qosClass", &qos) < 0 ||
      get_time(c, doc_get(st, "startTime"), "status.startTime", &p->start_time, &has_start) < 0)
    return -1;
  p->has_start_time = has_start;
  p->phase = phase_from(phase);
  if (qos && *qos) {
    p->qos = !strcmp(qos, "Guaranteed") ? QOS_GUARANTEED
             : !strcmp(qos, "BestEffort") ? QOS_BESTEFFORT
                                          : QOS_BURSTABLE;
  }
  if (decode_statuses(c, doc_get(st, "containerStatuses"), "status.containerStatuses",
                      &p->container_status, &p->ncontainer_status) < 0 ||
      decode_statuses(c, doc_get(st, "initContainerStatuses"), "status.initContainerStatuses",
                      &c->x->init_status, &c->x->ninit_status) < 0 ||
      decode_statuses(c, doc_get(st, "ephemeralContainerStatuses"),
                      "status.ephemeralContainerStatuses", &c->x->ephemeral_status,
                      &c->x->nephemeral_status) < 0)
    return -1;
  const doc_node *conds = doc_get(st, "conditions");
  if (want_seq(c, conds, "status.conditions") < 0)
    return -1;
  p->nconditions = seq_len(conds);
  p->conditions = ARENA_NEWN(c->flat, pod_condition, p->nconditions ? p->nconditions : 1);
  for (size_t i = 0; i < p->nconditions; i++) {
    const doc_node *k = conds->items[i];
    char path[64];
    path_at(path, sizeof path, "status.conditions", i, "");
    pod_condition *pc = &p->conditions[i];
    if (want_map(c, k, path) < 0 || get_str(c, doc_get(k, "type"), path, &pc->type) < 0 ||
        get_str(c, doc_get(k, "status"), path, &pc->status) < 0 ||
        get_str(c, doc_get(k, "reason"), path, &pc->reason) < 0 ||
        get_time(c, doc_get(k, "lastTransitionTime"), path, &pc->last_transition,
                 &pc->has_transition) < 0)
      return -1;
    pc->type = str_or(pc->type, "");
    pc->status = str_or(pc->status, "");
    pc->reason = str_or(pc->reason, "");
  }
  return 0;
}

/* A decoded pod's flat arrays, from the scratch arena into the model: one shared copy of
 * each distinct array (model_share). */
static void share_pod_arrays(model *m, pod *p, pod_extra *x) {
  /* every flat element holds pointers or 64-bit integers: 8-byte alignment fits them all */
  _Static_assert(_Alignof(kv) <= 8 && _Alignof(owner_ref) <= 8 && _Alignof(res_q) <= 8 &&
                     _Alignof(toleration) <= 8 && _Alignof(container_status) <= 8 &&
                     _Alignof(pod_condition) <= 8,
                 "flat arrays need more than 8-byte alignment");
#define SHARE(field, n) field = (void *)model_share(m, field, (n) * sizeof *(field), 8)
  SHARE(p->labels.items, p->labels.n);
  SHARE(p->node_selector.items, p->node_selector.n);
  SHARE(p->owners, p->nowners);
  SHARE(p->requests.items, p->requests.n);
  SHARE(p->request_keys, p->nrequest_keys);
  SHARE(p->images, p->nimages);
  SHARE(p->tolerations, p->ntolerations);
  SHARE(p->container_status, p->ncontainer_status);
  SHARE(x->init_status, x->ninit_status);
  SHARE(x->ephemeral_status, x->nephemeral_status);
#undef SHARE
  /* conditions carry the pod's own times and claims its own names: copied, not shared */
#define COPY(field, n)                                                                             \
  field = (n) ? memcpy(arena_alloc_uninit(m->mem, (n) * sizeof *(field), 8), field,                \
                       (n) * sizeof *(field))                                                      \
              : (void *)model_share(m, NULL, 0, 8)
  if (!m->keep_pod_conditions)
    p->nconditions = 0; /* read and checked all the same: one bad object is still one */
  COPY(p->conditions, p->nconditions);
  COPY(x->pvc_claims, x->npvc);
#undef COPY
}

static int decode_pod_fields(dctx *c, pod *p, const doc_node *obj);

static int decode_pod(dctx *c, const doc_node *obj) {
  model *m = c->m;
  if (!m->scratch)
    m->scratch = arena_new(16 * 1024);
  arena_reset(m->scratch);
  pod *p = ARENA_NEW(m->scratch, pod);
  pod_extra *x = ARENA_NEW(m->scratch, pod_extra);
  c->flat = m->scratch;
  c->own_names = true;
  c->x = x;
  int rc = decode_pod_fields(c, p, obj);
  c->flat = m->mem;
  c->own_names = false;
  c->x = NULL;
  if (rc < 0)
    return -1;
  /* a pod's own name and uid are its alone: copied, not interned (a watch cache would
   * grow the intern table with every pod it ever saw) */
  p->name = arena_strdup(m->mem, p->name);
  p->uid = arena_strdup(m->mem, p->uid);
  share_pod_arrays(m, p, x);
  /* most pods have none of the extra fields: they carry no copy of them */
  if (x->status_reason || x->config_source || x->kubevirt_domain || x->node_affinity ||
      x->nanti_affinity || x->nspread || x->ninit_status || x->nephemeral_status || x->npvc) {
    pod_extra *kx = arena_alloc_uninit(m->mem, sizeof *kx, _Alignof(pod_extra));
    *kx = *x;
    p->extra = kx;
  }
  /* at the struct's own alignment: arena_alloc would round it up to a multiple of 16 */
  pod *kept = arena_alloc_uninit(m->mem, sizeof *kept, _Alignof(pod));
  *kept = *p;
  MODEL_PUSH(m, pods, kept);
  return 0;
}

static int decode_pod_fields(dctx *c, pod *p, const doc_node *obj) {
  model *m = c->m;
  const doc_node *md = doc_get(obj, "metadata"), *spec = doc_get(obj, "spec");
  if (decode_metadata_common(c, md, &p->ns, &p->name, &p->uid, true) < 0)
    return -1;
  bool has_creation, deleting, has_priority;
  if (get_kvlist(c, doc_get(md, "labels"), "metadata.labels", &p->labels) < 0 ||
      decode_annotations(c, p, doc_get(md, "annotations")) < 0 ||
      decode_owners(c, p, doc_get(md, "ownerReferences")) < 0 ||
      get_time(c, doc_get(md, "creationTimestamp"), "metadata.creationTimestamp", &p->creation,
               &has_creation) < 0 ||
      get_time(c, doc_get(md, "deletionTimestamp"), "metadata.deletionTimestamp", &p->deletion,
               &deleting) < 0)
    return -1;
  p->has_creation = has_creation;
  p->deleting = deleting;
  /* read by the VM-safety rules at every pod of every cycle: kept as a bit */
  const char *app = kv_get(&p->labels, "kubevirt.io");
  p->launcher_label = app && strcmp(app, "virt-launcher") == 0;
  if (want_map(c, spec, "spec") < 0)
    return -1;
  const char *node_name;
  int64_t prio = 0;
  if (get_str(c, doc_get(spec, "nodeName"), "spec.nodeName", &node_name) < 0 ||
      get_i64(c, doc_get(spec, "priority"), "spec.priority", &prio, &has_priority) < 0 ||
      get_kvlist(c, doc_get(spec, "nodeSelector"), "spec.nodeSelector", &p->node_selector) < 0)
    return -1;
  p->has_priority = has_priority;
  p->node_name = node_name ? node_name : intern(m->strings, "");
  p->has_node_selector = !absent(doc_get(spec, "nodeSelector"));
  p->priority = (int32_t)prio;
  const doc_node *aff = doc_get(spec, "affinity");
  if (want_map(c, aff, "spec.affinity") < 0 ||
      decode_node_affinity(c, doc_get(aff, "nodeAffinity"), &c->x->node_affinity) < 0 ||
      decode_anti_affinity(c, doc_get(aff, "podAntiAffinity")) < 0 ||
      decode_tolerations(c, doc_get(spec, "tolerations"), &p->tolerations, &p->ntolerations) < 0 ||
      decode_spread(c, doc_get(spec, "topologySpreadConstraints")) < 0 ||
      decode_volumes(c, p, doc_get(spec, "volumes")) < 0)
    return -1;
  const doc_node *rc = doc_get(spec, "resourceClaims");
  p->resource_claims = rc && rc->type == DOC_SEQ && rc->n > 0;

  ctr *regular = NULL, *init = NULL;
  size_t nreg = 0, ninit = 0;
  res_list pod_level = {0}, overhead = {0};
  int rcode = -1;
  if (read_containers(c, doc_get(spec, "containers"), "spec.containers", &regular, &nreg, false) < 0 ||
      read_containers(c, doc_get(spec, "initContainers"), "spec.initContainers", &init, &ninit,
                      true) < 0 ||
      get_resources(c, doc_path(spec, "resources", "requests", NULL), "spec.resources.requests",
                    &pod_level) < 0 ||
      get_resources(c, doc_get(spec, "overhead"), "spec.overhead", &overhead) < 0)
    goto out;
  compute_requests(c->flat, p, regular, nreg, init, ninit, &pod_level, &overhead);
  p->qos = compute_qos(m, regular, nreg, init, ninit);
  const doc_node *ctrs = doc_get(spec, "containers");
  p->nimages = nreg;
  p->images = ARENA_NEWN(c->flat, const char *, nreg ? nreg : 1);
  for (size_t i = 0; i < nreg; i++) {
    char path[64];
    path_at(path, sizeof path, "spec.containers", i, ".image");
    if (get_str(c, doc_get(ctrs->items[i], "image"), path, &p->images[i]) < 0)
      goto out;
    p->images[i] = str_or(p->images[i], "");
  }
  if (decode_pod_status(c, p, doc_get(obj, "status")) < 0)
    goto out;
  rcode = 0;
out:
  free(regular);
  free(init);
  return rcode;
}

static int decode_node(dctx *c, const doc_node *obj) {
  model *m = c->m;
  node *n = ARENA_NEW(m->mem, node);
  const doc_node *md = doc_get(obj, "metadata"), *spec = doc_get(obj, "spec"),
                 *st = doc_get(obj, "status");
  if (decode_metadata_common(c, md, NULL, &n->name, &n->uid, false) < 0 ||
      get_kvlist(c, doc_get(md, "labels"), "metadata.labels", &n->labels) < 0 ||
      want_map(c, spec, "spec") < 0 || want_map(c, st, "status") < 0 ||
      get_bool(c, doc_get(spec, "unschedulable"), "spec.unschedulable", &n->unschedulable) < 0 ||
      decode_taints(c, doc_get(spec, "taints"), &n->taints, &n->ntaints) < 0 ||
      get_resources(c, doc_get(st, "allocatable"), "status.allocatable", &n->allocatable) < 0 ||
      get_resources(c, doc_get(st, "capacity"), "status.capacity", &n->capacity) < 0)
    return -1;
  /* this descheduler's own annotation: one that is not a time is as good as none (the next
   * cycle writes it again), never a reason to drop the node */
  const char *since = doc_str(doc_path(md, "annotations", NODE_OVER_SINCE_ANNOTATION, NULL));
  if (since) {
    dserr ignored;
    if (time_parse_rfc3339(since, &n->over_since, NULL, &ignored) < 0) {
      LOGV(2, NULL, "Ignoring a node annotation that is not an RFC 3339 time", LSTR("node", n->name),
           LSTR("annotation", NODE_OVER_SINCE_ANNOTATION), LSTR("value", since));
      n->over_since = 0;
    }
  }
  /* ready unless a Ready condition says otherwise (upstream's IsReady, pkg/descheduler/node) */
  n->ready = true;
  n->ready_status = "";
  const doc_node *conds = doc_get(st, "conditions");
  if (want_seq(c, conds, "status.conditions") < 0)
    return -1;
  for (size_t i = 0; i < seq_len(conds); i++) {
    const char *type, *status;
    if (get_str(c, doc_get(conds->items[i], "type"), "status.conditions", &type) < 0 ||
        get_str(c, doc_get(conds->items[i], "status"), "status.conditions", &status) < 0)
      return -1;
    if (type && strcmp(type, "Ready") == 0) {
      n->ready_status = str_or(status, "");
      n->ready = status && strcmp(status, "True") == 0;
    }
  }
  MODEL_PUSH(m, nodes, n);
  return 0;
}

/* metrics.k8s.io/v1beta1 NodeMetrics: name and usage (kubectl get --raw .../nodes items carry
 * no kind; the caller gives the hint). */
static int decode_node_metrics(dctx *c, const doc_node *obj) {
  node_metrics_obj *nm = ARENA_NEW(c->m->mem, node_metrics_obj);
  if (decode_metadata_common(c, doc_get(obj, "metadata"), NULL, &nm->name, NULL, false) < 0 ||
      get_resources(c, doc_get(obj, "usage"), "usage", &nm->usage) < 0)
    return -1;
  MODEL_PUSH(c->m, node_metrics, nm);
  return 0;
}

/* metrics.k8s.io/v1beta1 PodMetrics: usage per container. */
static int decode_pod_metrics(dctx *c, const doc_node *obj) {
  pod_metrics_obj *pm = ARENA_NEW(c->m->mem, pod_metrics_obj);
  const doc_node *list = doc_get(obj, "containers");
  if (decode_metadata_common(c, doc_get(obj, "metadata"), &pm->ns, &pm->name, NULL, true) < 0 ||
      want_seq(c, list, "containers") < 0)
    return -1;
  pm->ncontainers = seq_len(list);
  pm->containers = ARENA_NEWN(c->m->mem, container_usage, pm->ncontainers ? pm->ncontainers : 1);
  for (size_t i = 0; i < pm->ncontainers; i++) {
    char path[64];
    const doc_node *ct = list->items[i];
    path_at(path, sizeof path, "containers", i, "");
    if (want_map(c, ct, path) < 0)
      return -1;
    path_at(path, sizeof path, "containers", i, ".name");
    if (get_str(c, doc_get(ct, "name"), path, &pm->containers[i].name) < 0)
      return -1;
    pm->containers[i].name = str_or(pm->containers[i].name, "");
    path_at(path, sizeof path, "containers", i, ".usage");
    if (get_resources(c, doc_get(ct, "usage"), path, &pm->containers[i].usage) < 0)
      return -1;
  }
  MODEL_PUSH(c->m, pod_metrics, pm);
  return 0;
}

static int decode_namespace(dctx *c, const doc_node *obj) {
  namespace_obj *ns = ARENA_NEW(c->m->mem, namespace_obj);
  const doc_node *md = doc_get(obj, "metadata");
  if (decode_metadata_common(c, md, NULL, &ns->name, NULL, false) < 0 ||
      get_kvlist(c, doc_get(md, "labels"), "metadata.labels", &ns->labels) < 0)
    return -1;
  MODEL_PUSH(c->m, namespaces, ns);
  return 0;
}

static int decode_pdb(dctx *c, const doc_node *obj) {
  pdb_obj *p = ARENA_NEW(c->m->mem, pdb_obj);
  if (decode_metadata_common(c, doc_get(obj, "metadata"), &p->ns, &p->name, NULL, true) < 0 ||
      selector_from_doc(c->m->mem, doc_path(obj, "spec", "selector", NULL), "spec.selector",
                        &p->selector, c->err) < 0)
    return -1;
  MODEL_PUSH(c->m, pdbs, p);
  return 0;
}

static int decode_priority_class(dctx *c, const doc_node *obj) {
  priority_class_obj *p = ARENA_NEW(c->m->mem, priority_class_obj);
  int64_t v = 0;
  if (decode_metadata_common(c, doc_get(obj, "metadata"), NULL, &p->name, NULL, false) < 0 ||
      get_i64(c, doc_get(obj, "value"), "value", &v, NULL) < 0)
    return -1;
  p->value = (int32_t)v;
  MODEL_PUSH(c->m, priority_classes, p);
  return 0;
}

static int decode_pvc(dctx *c, const doc_node *obj) {
  pvc_obj *p = ARENA_NEW(c->m->mem, pvc_obj);
  if (decode_metadata_common(c, doc_get(obj, "metadata"), &p->ns, &p->name, NULL, true) < 0 ||
      get_str(c, doc_path(obj, "spec", "storageClassName", NULL), "spec.storageClassName",
              &p->storage_class) < 0)
    return -1;
  p->storage_class = str_or(p->storage_class, "");
  MODEL_PUSH(c->m, pvcs, p);
  return 0;
}

static int condition_status(dctx *c, const doc_node *conds, const char *type, const char **reason) {
  if (reason)
    *reason = "";
  for (size_t i = 0; i < seq_len(conds); i++) {
    const char *t = doc_str(doc_get(conds->items[i], "type"));
    if (t && strcmp(t, type) == 0) {
      const char *s = doc_str(doc_get(conds->items[i], "status"));
      const char *r = doc_str(doc_get(conds->items[i], "reason"));
      if (reason && r)
        *reason = intern(c->m->strings, r);
      return s && strcmp(s, "True") == 0 ? 1 : 0;
    }
  }
  return -1;
}

static int decode_vmi(dctx *c, const doc_node *obj) {
  vmi_obj *v = ARENA_NEW(c->m->mem, vmi_obj);
  const doc_node *st = doc_get(obj, "status"), *ms = doc_get(st, "migrationState");
  bool completed = false, failed = false;
  if (decode_metadata_common(c, doc_get(obj, "metadata"), &v->ns, &v->name, &v->uid, true) < 0 ||
      get_str(c, doc_path(obj, "spec", "evictionStrategy", NULL), "spec.evictionStrategy",
              &v->eviction_strategy) < 0 ||
      get_str(c, doc_get(st, "nodeName"), "status.nodeName", &v->node_name) < 0 ||
      get_str(c, doc_get(st, "phase"), "status.phase", &v->phase) < 0 ||
      get_str(c, doc_get(st, "evacuationNodeName"), "status.evacuationNodeName",
              &v->evacuation_node) < 0 ||
      get_str(c, doc_get(ms, "sourceNode"), "status.migrationState.sourceNode",
              &v->migration_source) < 0 ||
      get_str(c, doc_get(ms, "targetNode"), "status.migrationState.targetNode",
              &v->migration_target) < 0 ||
      get_bool(c, doc_get(ms, "completed"), "status.migrationState.completed", &completed) < 0 ||
      get_bool(c, doc_get(ms, "failed"), "status.migrationState.failed", &failed) < 0 ||
      get_time(c, doc_get(ms, "startTimestamp"), "status.migrationState.startTimestamp",
               &v->migration_start, &v->has_migration_start) < 0 ||
      get_time(c, doc_get(ms, "endTimestamp"), "status.migrationState.endTimestamp",
               &v->migration_end, &v->has_migration_end) < 0 ||
      get_str(c, doc_path(obj, "metadata", "annotations", VMI_MOVES_ANNOTATION, NULL),
              "metadata.annotations", &v->moves) < 0)
    return -1;
  const doc_node *ann = doc_path(obj, "metadata", "annotations", NULL);
  v->no_eviction = doc_get(ann, VM_NO_EVICTION_ANNOTATION) != NULL;
  v->prefer_no_eviction = doc_get(ann, PREFER_NO_EVICTION_ANNOTATION) != NULL;
  v->eviction_strategy = str_or(v->eviction_strategy, "");
  v->node_name = str_or(v->node_name, "");
  v->phase = str_or(v->phase, "");
  v->evacuation_node = str_or(v->evacuation_node, "");
  v->migration_source = str_or(v->migration_source, "");
  v->migration_target = str_or(v->migration_target, "");
  v->migration_completed = completed;
  v->migration_failed = failed;
  const doc_node *conds = doc_get(st, "conditions");
  if (want_seq(c, conds, "status.conditions") < 0)
    return -1;
  v->live_migratable = condition_status(c, conds, "LiveMigratable", &v->live_migratable_reason);
  v->ready = condition_status(c, conds, "Ready", NULL);
  MODEL_PUSH(c->m, vmis, v);
  return 0;
}

/* When a finished migration finished: the Succeeded/Failed phase transition, else the
 * migration state's endTimestamp. */
static int vmim_finished(dctx *c, const doc_node *obj, vmim_obj *v) {
  const doc_node *st = doc_get(obj, "status");
  const char *phase = doc_str(doc_get(st, "phase"));
  if (!phase || (strcmp(phase, "Succeeded") && strcmp(phase, "Failed")))
    return 0;
  const doc_node *pts = doc_get(st, "phaseTransitionTimestamps");
  if (want_seq(c, pts, "status.phaseTransitionTimestamps") < 0)
    return -1;
  for (size_t i = 0; i < seq_len(pts); i++) {
    const char *ph = doc_str(doc_get(pts->items[i], "phase"));
    if (ph && strcmp(ph, phase) == 0)
      return get_time(c, doc_get(pts->items[i], "phaseTransitionTimestamp"),
                      "status.phaseTransitionTimestamps", &v->finished, &v->has_finished);
  }
  return get_time(c, doc_path(st, "migrationState", "endTimestamp", NULL),
                  "status.migrationState.endTimestamp", &v->finished, &v->has_finished);
}

static int decode_vmim(dctx *c, const doc_node *obj) {
  vmim_obj *v = ARENA_NEW(c->m->mem, vmim_obj);
  const doc_node *md = doc_get(obj, "metadata");
  if (decode_metadata_common(c, md, &v->ns, &v->name, &v->uid, true) < 0 ||
      get_str(c, doc_path(obj, "spec", "vmiName", NULL), "spec.vmiName", &v->vmi_name) < 0 ||
      get_str(c, doc_path(obj, "status", "phase", NULL), "status.phase", &v->phase) < 0 ||
      get_str(c, doc_path(md, "annotations", "kubevirt.io/evacuationMigration", NULL),
              "metadata.annotations", &v->evacuation_node) < 0 ||
      get_str(c, doc_path(obj, "status", "migrationState", "sourceNode", NULL),
              "status.migrationState.sourceNode", &v->source_node) < 0 ||
      get_time(c, doc_get(md, "creationTimestamp"), "metadata.creationTimestamp", &v->created,
               &v->has_created) < 0 ||
      vmim_finished(c, obj, v) < 0)
    return -1;
  v->vmi_name = str_or(v->vmi_name, "");
  v->phase = str_or(v->phase, "");
  v->evacuation_node = str_or(v->evacuation_node, "");
  v->source_node = str_or(v->source_node, "");
  MODEL_PUSH(c->m, vmims, v);
  return 0;
}

static int decode_kubevirt(dctx *c, const doc_node *obj) {
  kubevirt_cr *k = &c->m->kubevirt;
  const doc_node *conf = doc_path(obj, "spec", "configuration", NULL);
  const doc_node *mig = doc_get(conf, "migrations");
  int64_t v;
  bool has;
  if (decode_metadata_common(c, doc_get(obj, "metadata"), &k->ns, &k->name, NULL, true) < 0 ||
      get_str(c, doc_get(conf, "evictionStrategy"), "spec.configuration.evictionStrategy",
              &k->eviction_strategy) < 0)
    return -1;
  k->eviction_strategy = str_or(k->eviction_strategy, "");
  if (get_i64(c, doc_get(mig, "parallelMigrationsPerCluster"),
              "spec.configuration.migrations.parallelMigrationsPerCluster", &v, &has) < 0)
    return -1;
  k->parallel_per_cluster = has ? (int)v : -1;
  if (get_i64(c, doc_get(mig, "parallelOutboundMigrationsPerNode"),
              "spec.configuration.migrations.parallelOutboundMigrationsPerNode", &v, &has) < 0)
    return -1;
  k->parallel_outbound_per_node = has ? (int)v : -1;
  k->present = true;
  return 0;
}

/* ---------- OpenShift objects read by the KubeDescheduler rendering ---------- */

/* An object of an OpenShift kind counts only in its own API group (Knative also has a Route):
 * apiVersion "<group>/..." or no apiVersion (items of a typed list carry none). */
static bool in_group(const doc_node *obj, const char *group) {
  const char *av = doc_str(doc_get(obj, "apiVersion"));
  size_t n = strlen(group);
  return !av || (strncmp(av, group, n) == 0 && av[n] == '/');
}

static bool named(dctx *c, const doc_node *obj, const char *ns, const char *name, bool *match) {
  const char *ons = NULL, *oname = NULL;
  if (decode_metadata_common(c, doc_get(obj, "metadata"), ns ? &ons : NULL, &oname, NULL,
                             ns != NULL) < 0)
    return false;
  *match = strcmp(oname, name) == 0 && (!ns || strcmp(ons, ns) == 0);
  return true;
}

static int decode_route(dctx *c, const doc_node *obj) {
  bool match;
  if (!named(c, obj, "openshift-monitoring", "prometheus-k8s", &match))
    return -1;
  if (!match || !in_group(obj, "route.openshift.io")) {
    c->m->skipped++;
    return 0;
  }
  openshift_objs *o = &c->m->openshift;
  const doc_node *ing = doc_path(obj, "status", "ingress", NULL);
  if (want_map(c, doc_get(obj, "status"), "status") < 0 || want_seq(c, ing, "status.ingress") < 0)
    return -1;
  o->route_ningress = seq_len(ing);
  o->route_host = "";
  if (o->route_ningress) {
    if (want_map(c, ing->items[0], "status.ingress[0]") < 0 ||
        get_str(c, doc_get(ing->items[0], "host"), "status.ingress[0].host", &o->route_host) < 0)
      return -1;
    o->route_host = str_or(o->route_host, "");
  }
  o->route_present = true;
  return 0;
}

static int decode_scheduler(dctx *c, const doc_node *obj) {
  bool match;
  if (!named(c, obj, NULL, "cluster", &match))
    return -1;
  if (!match || !in_group(obj, "config.openshift.io")) {
    c->m->skipped++;
    return 0;
  }
  openshift_objs *o = &c->m->openshift;
  if (want_map(c, doc_get(obj, "spec"), "spec") < 0 ||
      get_str(c, doc_path(obj, "spec", "profile", NULL), "spec.profile", &o->scheduler_profile) < 0)
    return -1;
  o->scheduler_profile = str_or(o->scheduler_profile, "");
  o->scheduler_present = true;
  return 0;
}

/* The CR is kept whole: its validation and rendering (policy/kubedescheduler.c) read it as the
 * API server hands it over, with their own messages. */
static int decode_kubedescheduler(dctx *c, const doc_node *obj) {
  bool match;
  if (!named(c, obj, "openshift-kube-descheduler-operator", "cluster", &match))
    return -1;
  if (!in_group(obj, "operator.openshift.io")) {
    c->m->skipped++;
    return 0;
  }
  if (!match) {
    c->m->openshift.other_kubedeschedulers++;
    return 0;
  }
  c->m->openshift.kubedescheduler = doc_copy(c->m->mem, obj);
  return 0;
}

/* ---------- the kind registry (decode.h) ---------- */

#define AT(type, field) offsetof(type, field)
#define NS_NONE KIND_NO_SLOT

const decode_kind decode_kinds[KIND_COUNT] = {
    [KIND_NODE] = {"Node", "/api/v1/nodes", "nodes", false, AT(model, nodes), NS_NONE,
                   AT(node, name), decode_node},
    [KIND_POD] = {"Pod", "/api/v1/pods", "pods", false, AT(model, pods), AT(pod, ns),
                  AT(pod, name), decode_pod},
    [KIND_NAMESPACE] = {"Namespace", "/api/v1/namespaces", "namespaces", false,
                        AT(model, namespaces), NS_NONE, AT(namespace_obj, name),
                        decode_namespace},
    [KIND_PDB] = {"PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets",
                  "poddisruptionbudgets", false, AT(model, pdbs), AT(pdb_obj, ns),
                  AT(pdb_obj, name), decode_pdb},
    [KIND_PRIORITY_CLASS] = {"PriorityClass", "/apis/scheduling.k8s.io/v1/priorityclasses",
                             "priorityclasses", false, AT(model, priority_classes), NS_NONE,
                             AT(priority_class_obj, name), decode_priority_class},
    [KIND_PVC] = {"PersistentVolumeClaim", "/api/v1/persistentvolumeclaims",
                  "persistentvolumeclaims", false, AT(model, pvcs), AT(pvc_obj, ns),
                  AT(pvc_obj, name), decode_pvc},
    [KIND_VMI] = {"VirtualMachineInstance", "/apis/kubevirt.io/v1/virtualmachineinstances",
                  "virtualmachineinstances", true, AT(model, vmis), AT(vmi_obj, ns),
                  AT(vmi_obj, name), decode_vmi},
    [KIND_VMIM] = {"VirtualMachineInstanceMigration",
                   "/apis/kubevirt.io/v1/virtualmachineinstancemigrations",
                   "virtualmachineinstancemigrations", true, AT(model, vmims), AT(vmim_obj, ns),
                   AT(vmim_obj, name), decode_vmim},
    [KIND_KUBEVIRT] = {"KubeVirt", "/apis/kubevirt.io/v1/kubevirts", "kubevirts", true,
                       KIND_NO_SLOT, AT(kubevirt_cr, ns), AT(kubevirt_cr, name),
                       decode_kubevirt},
    /* decoded from files (simulate, profile render) or single GETs; never listed by a cycle */
    [KIND_ROUTE] = {"Route", NULL, "routes", false, KIND_NO_SLOT, NS_NONE, KIND_NO_SLOT,
                    decode_route},
    [KIND_SCHEDULER] = {"Scheduler", NULL, "schedulers", false, KIND_NO_SLOT, NS_NONE,
                        KIND_NO_SLOT, decode_scheduler},
    [KIND_KUBEDESCHEDULER] = {"KubeDescheduler", NULL, "kubedeschedulers", false, KIND_NO_SLOT,
                              NS_NONE, KIND_NO_SLOT, decode_kubedescheduler},
    [KIND_NODE_METRICS] = {"NodeMetrics", NULL, "nodes", false, KIND_NO_SLOT, NS_NONE,
                           KIND_NO_SLOT, decode_node_metrics},
    [KIND_POD_METRICS] = {"PodMetrics", NULL, "pods", false, KIND_NO_SLOT, NS_NONE, KIND_NO_SLOT,
                          decode_pod_metrics},
};

const decode_kind *decode_kind_named(const char *kind) {
  for (size_t i = 0; i < KIND_COUNT; i++)
    if (strcmp(kind, decode_kinds[i].kind) == 0)
      return &decode_kinds[i];
  return NULL;
}

int decode_object(model *m, const doc_node *obj, const char *kind_hint, dserr *err) {
  dctx c = {m, err, m->mem, false};
  if (!obj || obj->type != DOC_MAP)
    return dserr_set(err, "expected a Kubernetes object (a map), got %s",
                     obj ? doc_type_name(obj->type) : "nothing");
  const char *kind = doc_str(doc_get(obj, "kind"));
  if (!kind || !*kind)
    kind = kind_hint;
  if (!kind)
    return dserr_set(err, "kind: required (expected Node, Pod, Namespace, ...)");
  const decode_kind *k = decode_kind_named(kind);
  if (k)
    return k->decode(&c, obj);
  m->skipped++;
  LOGV(4, NULL, "Skipping object of a kind the descheduler does not use", LSTR("kind", kind));
  return 0;
}
