/* framework.c - the descheduling cycle and the evictor; see framework.h.
 *
 * Upstream's order (runDeschedulerLoop and runProfiles in pkg/descheduler/descheduler.go):
 * reset counters, pick ready nodes matching the policy's nodeSelector, stop below two nodes,
 * run every profile's Deschedule plugins, then every profile's Balance plugins, logging
 * per-plugin deltas. Evict() applies the limits (total, node, namespace; each counting
 * in-flight background requests) before asking the sink, then classifies the answer as
 * upstream's PodEvictor.EvictPod does (pkg/descheduler/evictions/evictions.go; see
 * docs/behaviour.md, "Eviction limits" and "EvictionsInBackground"). One answer upstream
 * calls a failure is a move all the same: KubeVirt's 429 "Eviction triggered evacuation"
 * outside the background cache starts a live migration, so unless the profile's evictors say
 * otherwise (VMSafety's countEvacuationsAgainstLimits) it counts against the limits, and the
 * plan lists it as an evacuation. */
#include "framework.h"

#include "../obs/metrics.h"
#include "decisions.h"
#include "../apimachinery/quantity.h"
#include "../util/strbuf.h"
#include "podutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EVICTION_IN_BACKGROUND_TEXT "Eviction triggered evacuation"

typedef struct {
  const char *ns;
  uint64_t count;
} ns_count;

typedef struct {
  bool valid;
  int64_t pods;
  res_list used;
} node_usage;

typedef struct {
  const char *selector; /* NULL = all */
  node **nodes;
  size_t n;
  bool bad;
} ready_cache;

typedef struct {
  const char *uid;
  size_t count;
} owner_count;

struct cycle {
  const policy *pol;
  model *m;
  bg_cache *bg;
  eviction_sink *sink;
  const fw_options *opt;
  arena *mem;
  node **nodes;
  size_t nnodes;
  bool *is_cycle_node; /* by node index */
  uint64_t total;
  uint64_t *per_node; /* by node index */
  size_t nns;
  ns_count *per_ns;
  node_usage *usage; /* by node index */
  size_t nready;
  ready_cache ready[8];
  owner_count *owners; /* sorted by uid, built on first use */
  size_t nowners;
  bool owners_built;
  uint64_t *evacuations; /* by node index: evictions answered with a KubeVirt evacuation, and
                            targeted migrations out of the node */
  uint64_t evacuations_total;
  uint64_t *inbound; /* by node index: targeted migrations to the node (fw_migrate) */
  fw_history *history; /* opt->history, or own_history */
  fw_history own_history;
  struct {
    const char *key;
    void *value;
  } memo[8];
  size_t nmemo;
  decisions *rec;           /* opt->decisions */
  double *req_before;       /* with rec: requested percentages before the cycle, 3 per node */
  bool *req_has;
  bool *req_changed;        /* by node index: a pod on it was evicted or is leaving */
  const char *reject_why;   /* set by fw_reject_reason for the filter call under way */
  bool stopping;            /* opt->stop was seen set: no more evictions this cycle */
  fw_result *out;
};

/* ---------- state across cycles ---------- */

static fw_over *history_find(const fw_history *h, const char *node) {
  for (size_t i = 0; i < h->n; i++)
    if (!strcmp(h->items[i].node, node))
      return &h->items[i];
  return NULL;
}

static void history_set(fw_history *h, const char *node, int64_t since) {
  fw_over *e = history_find(h, node);
  if (e) {
    e->since = since;
    return;
  }
  if (h->n == h->cap) {
    h->cap = h->cap ? h->cap * 2 : 16;
    h->items = realloc(h->items, h->cap * sizeof *h->items);
    if (!h->items)
      abort();
  }
  h->items[h->n].node = strdup(node);
  if (!h->items[h->n].node)
    abort();
  h->items[h->n++].since = since;
}

static void history_clear(fw_history *h, const char *node) {
  fw_over *e = history_find(h, node);
  if (e)
    e->since = 0;
}

void fw_history_seed(fw_history *h, const model *m) {
  for (size_t i = 0; i < m->nodes.n; i++) {
    const node *n = m->nodes.items[i];
    if (n->over_since > 0 && !history_find(h, n->name))
      history_set(h, n->name, n->over_since);
  }
}

int64_t fw_history_since(const fw_history *h, const char *node) {
  const fw_over *e = history_find(h, node);
  return e ? e->since : 0;
}

void fw_history_free(fw_history *h) {
  for (size_t i = 0; i < h->n; i++)
    free(h->items[i].node);
  free(h->items);
  memset(h, 0, sizeof *h);
}

int64_t fw_overutilized(plugin_handle *h, const node *n, bool over) {
  fw_history *hist = h->cy->history;
  if (!over) {
    history_clear(hist, n->name);
    return 0;
  }
  int64_t since = fw_history_since(hist, n->name);
  if (since <= 0) {
    since = h->now;
    history_set(hist, n->name, since);
  }
  return since;
}

/* ---------- background cache ---------- */

bg_entry *bg_find(bg_cache *c, const char *uid) {
  for (size_t i = 0; i < c->n; i++)
    if (strcmp(c->items[i].uid, uid) == 0)
      return &c->items[i];
  return NULL;
}

void bg_put(bg_cache *c, const pod *p, const char *strategy, const char *profile, bool assumed,
            int64_t now) {
  bg_entry *e = bg_find(c, p->uid);
  if (e) {
    if (assumed && !e->assumed) {
      e->assumed = true;
      e->assumed_at = now;
    }
    return;
  }
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 16;
    c->items = realloc(c->items, c->cap * sizeof *c->items);
    if (!c->items)
      abort();
  }
  c->items[c->n++] = (bg_entry){strdup(p->uid), strdup(p->ns), strdup(p->name),
                                strdup(p->node_name), strdup(strategy ? strategy : ""),
                                strdup(profile ? profile : ""), assumed, assumed ? now : 0};
}

static void bg_entry_free(bg_entry *e) {
  free((char *)e->uid);
  free((char *)e->ns);
  free((char *)e->name);
  free((char *)e->node);
  free((char *)e->strategy);
  free((char *)e->profile);
}

void bg_remove(bg_cache *c, const char *uid) {
  bg_entry *e = bg_find(c, uid);
  if (!e)
    return;
  bg_entry_free(e);
  *e = c->items[--c->n];
}

void bg_clear(bg_cache *c) {
  for (size_t i = 0; i < c->n; i++)
    bg_entry_free(&c->items[i]);
  free(c->items);
  c->items = NULL;
  c->n = c->cap = 0;
}

static const pod *find_pod_by_uid(const model *m, const char *uid) {
  for (size_t i = 0; i < m->pods.n; i++)
    if (strcmp(m->pods.items[i]->uid, uid) == 0)
      return m->pods.items[i];
  return NULL;
}

#define ASSUMED_TIMEOUT_SECONDS 600

void bg_sync(bg_cache *c, const model *m, int64_t now, bool first) {
  char ref[512];
  for (size_t i = 0; i < c->n;) {
    bg_entry *e = &c->items[i];
    const pod *p = find_pod_by_uid(m, e->uid);
    snprintf(ref, sizeof ref, "%s/%s", e->ns, e->name);
    const char *why = NULL, *result = NULL;
    if (!p) {
      why = "Pod with eviction in background deleted/evicted. Removing pod from the cache.";
      result = e->assumed ? "success" : NULL;
    } else if (!(p->annotations & ANN_REQUEST_EVICT_ONLY)) {
      why = "Pod with eviction in background lost annotation. Removing pod from the cache.";
    } else if (pod_is_terminal(p)) {
      why = "Pod with eviction in background completed. Removing pod from the cache.";
      result = e->assumed ? (p->phase == PHASE_SUCCEEDED ? "success" : "error") : NULL;
    } else if (!(p->annotations & ANN_EVICTION_IN_PROGRESS) && e->in_progress) {
      LOGV(3, NULL, "Eviction in background canceled (annotation removed). Removing pod from the cache.",
           LSTR("annotation", "descheduler.alpha.kubernetes.io/eviction-in-progress"), LSTR("pod", ref));
      bg_remove(c, e->uid);
      continue;
    } else if (e->assumed && now - e->assumed_at > ASSUMED_TIMEOUT_SECONDS) {
      /* upstream's janitor; a pod still marked is picked up again below, un-assumed */
      LOGV(4, NULL, "Assumed eviction request in background timed out, deleting",
           LINT("timeout", ASSUMED_TIMEOUT_SECONDS), LSTR("podNamespace", e->ns),
           LSTR("podName", e->name));
      metrics_pods_evicted("error", e->strategy, e->profile, e->ns, e->node);
      bg_remove(c, e->uid);
      continue;
    }
    if (why) {
      LOGV(3, NULL, why, LSTR("pod", ref));
      if (result)
        metrics_pods_evicted(result, e->strategy, e->profile, e->ns, e->node);
      bg_remove(c, e->uid);
      continue;
    }
    e->in_progress = (p->annotations & ANN_EVICTION_IN_PROGRESS) != 0;
    i++;
  }
  for (size_t i = 0; i < m->pods.n; i++) {
    const pod *p = m->pods.items[i];
    if (!(p->annotations & ANN_REQUEST_EVICT_ONLY) || !(p->annotations & ANN_EVICTION_IN_PROGRESS) ||
        pod_is_terminal(p) || !*p->uid || bg_find(c, p->uid))
      continue;
    LOGV(3, NULL, first ? "Eviction in background detected. Adding pod to the cache."
                        : "Eviction in background detected. Updating the cache.",
         LSTR("pod", pod_ref(p, ref, sizeof ref)));
    bg_put(c, p, "", "", false, 0);
    bg_find(c, p->uid)->in_progress = true;
  }
}

static uint64_t bg_count_node(const bg_cache *c, const char *node) {
  uint64_t n = 0;
  for (size_t i = 0; i < c->n; i++)
    n += strcmp(c->items[i].node, node) == 0;
  return n;
}

static uint64_t bg_count_ns(const bg_cache *c, const char *ns) {
  uint64_t n = 0;
  for (size_t i = 0; i < c->n; i++)
    n += strcmp(c->items[i].ns, ns) == 0;
  return n;
}

/* ---------- results ---------- */

void fw_result_free(fw_result *r) {
  free(r->evictions);
  free(r->node_category);
  memset(r, 0, sizeof *r);
}

static void record_entry(cycle *cy, fw_eviction e) {
  fw_result *r = cy->out;
  if (r->nevictions == r->cap) {
    r->cap = r->cap ? r->cap * 2 : 64;
    r->evictions = realloc(r->evictions, r->cap * sizeof *r->evictions);
    if (!r->evictions)
      abort();
  }
  r->evictions[r->nevictions++] = e;
}

static void record(cycle *cy, const pod *p, const char *profile, const char *plugin, bool bg,
                   const char *to) {
  record_entry(cy, (fw_eviction){p, profile, plugin, bg, to, false, false});
}

/* ---------- listing and caches ---------- */

bool fw_pod_gone(const pod *p) { return p->evicted; }

size_t fw_node_pods_into(const node *n, bool non_terminal, pod **out) {
  size_t k = 0;
  for (size_t i = 0; i < n->npods; i++) {
    pod *p = n->pods[i];
    if (i + POD_AHEAD < n->npods)
      pod_prefetch(n->pods[i + POD_AHEAD]);
    if (p->evicted || (non_terminal && pod_is_terminal(p)))
      continue;
    out[k++] = p;
  }
  return k;
}

pod **fw_node_pods(plugin_handle *h, const node *n, bool non_terminal, size_t *count) {
  pod **out = ARENA_NEWN(h->scratch, pod *, n->npods ? n->npods : 1);
  *count = fw_node_pods_into(n, non_terminal, out);
  return out;
}

static node_usage *usage_of(cycle *cy, const node *n) {
  node_usage *u = &cy->usage[n->index];
  if (u->valid)
    return u;
  size_t cap = 8, k = 0;
  res_q *items = malloc(cap * sizeof *items);
  if (!items)
    abort();
  u->pods = 0;
  for (size_t i = 0; i < n->npods; i++) {
    const pod *p = n->pods[i];
    if (p->evicted || pod_is_terminal(p))
      continue;
    u->pods++;
    for (size_t r = 0; r < p->requests.n; r++) {
      size_t j = 0;
      while (j < k && items[j].name != p->requests.items[r].name)
        j++;
      if (j == k) {
        if (k == cap)
          items = realloc(items, (cap *= 2) * sizeof *items);
        items[k++] = (res_q){p->requests.items[r].name, 0};
      }
      items[j].milli = quantity_add(items[j].milli, p->requests.items[r].milli);
    }
  }
  u->used.items = ARENA_NEWN(cy->mem, res_q, k ? k : 1);
  memcpy(u->used.items, items, k * sizeof *items);
  u->used.n = k;
  free(items);
  u->valid = true;
  return u;
}

int64_t fw_node_requested(plugin_handle *h, const node *n, const char *name) {
  return res_get(&usage_of(h->cy, n)->used, name, NULL);
}

int64_t fw_node_pod_count(plugin_handle *h, const node *n) { return usage_of(h->cy, n)->pods; }

bool fw_is_cycle_node(plugin_handle *h, const node *n) { return h->cy->is_cycle_node[n->index]; }

node **fw_ready_nodes(plugin_handle *h, const char *selector_text, size_t *count) {
  cycle *cy = h->cy;
  const char *key = selector_text && *selector_text ? selector_text : NULL;
  for (size_t i = 0; i < cy->nready; i++) {
    ready_cache *rc = &cy->ready[i];
    if ((rc->selector == NULL && key == NULL) ||
        (rc->selector && key && strcmp(rc->selector, key) == 0)) {
      *count = rc->n;
      return rc->bad ? NULL : rc->nodes;
    }
  }
  ready_cache tmp = {key, NULL, 0, false};
  label_selector *sel = NULL;
  dserr err;
  if (key && selector_parse(cy->mem, key, &sel, &err) < 0) {
    tmp.bad = true;
  } else {
    tmp.nodes = ARENA_NEWN(cy->mem, node *, cy->m->nodes.n ? cy->m->nodes.n : 1);
    for (size_t i = 0; i < cy->m->nodes.n; i++) {
      node *n = cy->m->nodes.items[i];
      if (n->ready && (!sel || selector_matches(sel, &n->labels)))
        tmp.nodes[tmp.n++] = n;
    }
  }
  if (cy->nready < sizeof cy->ready / sizeof cy->ready[0])
    cy->ready[cy->nready++] = tmp;
  *count = tmp.n;
  return tmp.bad ? NULL : tmp.nodes;
}

void fw_note_category(plugin_handle *h, const node *n, const char *category) {
  const char **slot = &h->cy->out->node_category[n->index];
  if (!*slot)
    *slot = category;
  if (h->cy->rec)
    decisions_node(h->cy->rec, n, category, NULL, NULL);
}

static int cmp_owner(const void *a, const void *b) {
  return strcmp(((const owner_count *)a)->uid, ((const owner_count *)b)->uid);
}

size_t fw_owner_pod_count(plugin_handle *h, const char *owner_uid) {
  cycle *cy = h->cy;
  if (!cy->owners_built) {
    size_t cap = 0;
    for (size_t i = 0; i < cy->m->pods.n; i++)
      cap += cy->m->pods.items[i]->nowners;
    owner_count *all = ARENA_NEWN(cy->mem, owner_count, cap ? cap : 1);
    size_t k = 0;
    for (size_t i = 0; i < cy->m->pods.n; i++) {
      const pod *p = cy->m->pods.items[i];
      for (size_t o = 0; o < p->nowners; o++)
        if (*p->owners[o].uid)
          all[k++] = (owner_count){p->owners[o].uid, 1};
    }
    qsort(all, k, sizeof *all, cmp_owner);
    size_t u = 0;
    for (size_t i = 0; i < k; i++) {
      if (u && strcmp(all[u - 1].uid, all[i].uid) == 0)
        all[u - 1].count++;
      else
        all[u++] = all[i];
    }
    cy->owners = all;
    cy->nowners = u;
    cy->owners_built = true;
  }
  owner_count key = {owner_uid, 0};
  owner_count *f = bsearch(&key, cy->owners, cy->nowners, sizeof key, cmp_owner);
  return f ? f->count : 0;
}

uint64_t fw_cycle_evacuations(plugin_handle *h, const node *n) {
  return n ? h->cy->evacuations[n->index] : h->cy->evacuations_total;
}

uint64_t fw_cycle_inbound(plugin_handle *h, const node *n) { return h->cy->inbound[n->index]; }

void *fw_cycle_memo(plugin_handle *h, const char *key, void *(*build)(plugin_handle *h, void *ctx),
                    void *ctx) {
  cycle *cy = h->cy;
  for (size_t i = 0; i < cy->nmemo; i++)
    if (strcmp(cy->memo[i].key, key) == 0)
      return cy->memo[i].value;
  void *v = build(h, ctx);
  if (cy->nmemo < sizeof cy->memo / sizeof cy->memo[0])
    cy->memo[cy->nmemo++] = (typeof(cy->memo[0])){key, v};
  return v;
}

arena *fw_cycle_arena(plugin_handle *h) { return h->cy->mem; }

/* ---------- the decision record ---------- */

static void note(plugin_handle *h, const pod *p, dec_outcome o, const char *by, const char *why) {
  if (h->cy->rec)
    decisions_pod(h->cy->rec, p, o, h->prof->name, h->plugin, by, why);
}

void fw_reject_reason(plugin_handle *h, const char *reason) {
  if (h->cy->rec)
    h->cy->reject_why = arena_strdup(h->cy->mem, reason);
}

bool fw_recording(const plugin_handle *h) { return h->cy->rec != NULL; }

const usage_trust *fw_usage_trust(const plugin_handle *h) { return &h->cy->pol->usage; }

void fw_note_node_why(plugin_handle *h, const node *n, const char *why, const char *thresholds) {
  if (h->cy->rec)
    decisions_node(h->cy->rec, n, NULL, why, thresholds);
}

void fw_note_node_threshold(plugin_handle *h, const node *n, const char *resource, double low,
                            double high) {
  if (h->cy->rec)
    decisions_node_threshold(h->cy->rec, n, resource, low, high);
}

void fw_note_node_usage(plugin_handle *h, const node *n, const char *const *resources,
                        const double *pcts, size_t count) {
  if (h->cy->rec)
    decisions_node_usage(h->cy->rec, n, resources, pcts, count);
}

void fw_note_node_at_target(plugin_handle *h, const pod *p) {
  note(h, p, DEC_NODE_AT_TARGET, h->plugin, "its node reached the plugin's target before this pod's turn");
}

void fw_note_no_move(plugin_handle *h, const pod *p, const char *why) {
  note(h, p, DEC_VETOED, h->plugin, why);
}

void fw_note_plugin_limit(plugin_handle *h, const pod *p, const char *why) {
  note(h, p, DEC_LIMIT, h->plugin, why);
}

/* an evictor said no: record it with the reason it gave (or a plain one) */
static void note_rejection(plugin_handle *h, const pod *p, const char *evictor, const char *point,
                           dec_outcome o) {
  cycle *cy = h->cy;
  if (!cy->rec)
    return;
  char plain[256];
  const char *why = cy->reject_why;
  if (!why) {
    snprintf(plain, sizeof plain, "%s rejected the pod at %s", evictor, point);
    why = plain;
  }
  note(h, p, o, evictor, why);
  cy->reject_why = NULL;
}

/* ---------- evictor ---------- */

bool fw_filter(plugin_handle *h, const pod *p) {
  const plugin_set *s = &h->prof->filter;
  for (size_t i = 0; i < s->n; i++) {
    plugin_config *pc = s->configs[i];
    h->cy->reject_why = NULL;
    if (pc->desc->filter && !pc->desc->filter(h, pc->args, p)) {
      note_rejection(h, p, pc->name, "Filter", DEC_REJECTED);
      return false;
    }
  }
  return true;
}

bool fw_pre_eviction_filter(plugin_handle *h, const pod *p) {
  const plugin_set *s = &h->prof->preevictionfilter;
  for (size_t i = 0; i < s->n; i++) {
    plugin_config *pc = s->configs[i];
    h->cy->reject_why = NULL;
    if (pc->desc->pre_eviction_filter && !pc->desc->pre_eviction_filter(h, pc->args, p)) {
      note_rejection(h, p, pc->name, "PreEvictionFilter", DEC_REJECTED);
      return false;
    }
  }
  return true;
}

static uint64_t *ns_counter(cycle *cy, const char *ns) {
  for (size_t i = 0; i < cy->nns; i++)
    if (strcmp(cy->per_ns[i].ns, ns) == 0)
      return &cy->per_ns[i].count;
  cy->per_ns = realloc(cy->per_ns, (cy->nns + 1) * sizeof *cy->per_ns);
  if (!cy->per_ns)
    abort();
  cy->per_ns[cy->nns] = (ns_count){ns, 0};
  return &cy->per_ns[cy->nns++].count;
}

/* Warning event (only with evictionFailureEventNotification), as upstream's EvictPod */
static void failure_event(cycle *cy, const pod *p, const char *what) {
  if (!cy->pol->eviction_failure_events || !cy->sink->event || cy->sink->dry_run)
    return;
  strbuf note = {0};
  sb_printf(&note, "pod eviction from %s node by sigs.k8s.io/descheduler failed: %s", p->node_name,
            what);
  cy->sink->event(cy->sink, p, "Warning", "EvictionFailed", sb_str(&note));
  sb_free(&note);
}

static const char *limit_text(evict_status st) {
  return st == EVICT_LIMIT_TOTAL  ? "maximum number of evicted pods per a descheduling cycle reached"
         : st == EVICT_LIMIT_NODE ? "maximum number of evicted pods per node reached"
                                  : "maximum number of evicted pods per namespace reached";
}

/* the decision record's reason of a limit: upstream's text and the limit */
static void note_limit(plugin_handle *h, const pod *p, evict_status st, uint64_t limit) {
  char why[160];
  snprintf(why, sizeof why, "%s (%llu)", limit_text(st), (unsigned long long)limit);
  note(h, p, DEC_LIMIT, "limits", why);
}

void fw_note_limit_stop(plugin_handle *h, const pod *p, evict_status st) {
  const policy *pol = h->cy->pol;
  if (!h->cy->rec)
    return;
  if (st == EVICT_LIMIT_TOTAL)
    note_limit(h, p, st, pol->max_total.v);
  else if (st == EVICT_LIMIT_NODE)
    note_limit(h, p, st, pol->max_per_node.v);
  else if (st == EVICT_LIMIT_NAMESPACE)
    note_limit(h, p, st, pol->max_per_namespace.v);
}

static evict_status limit_hit(plugin_handle *h, const pod *p, evict_status st, uint64_t limit) {
  cycle *cy = h->cy;
  char ref[512];
  const char *text = limit_text(st);
  const char *what = st == EVICT_LIMIT_TOTAL  ? "total eviction limit exceeded"
                     : st == EVICT_LIMIT_NODE ? "node eviction limit exceeded"
                                              : "namespace eviction limit exceeded";
  metrics_pods_evicted(text, h->plugin, h->prof->name, p->ns, p->node_name);
  note_limit(h, p, st, limit);
  if (st == EVICT_LIMIT_TOTAL)
    LOGE(NULL, "Error evicting pod", text, LUINT("limit", limit));
  else if (st == EVICT_LIMIT_NODE)
    LOGE(NULL, "Error evicting pod", text, LUINT("limit", limit), LSTR("node", p->node_name));
  else
    LOGE(NULL, "Error evicting pod", text, LUINT("limit", limit), LSTR("namespace", p->ns),
         LSTR("pod", pod_ref(p, ref, sizeof ref)));
  char what_n[128];
  snprintf(what_n, sizeof what_n, "%s (%llu)", what, (unsigned long long)limit);
  failure_event(cy, p, what_n);
  return st;
}

/* p was evicted: its node's usage is summed again, as are the record's requested figures */
static void pod_gone(cycle *cy, const pod *p) {
  if (!p->node)
    return;
  cy->usage[p->node->index].valid = false;
  cy->req_changed[p->node->index] = true;
}

/* A targeted move KubeVirt accepted: it counts against the policy's limits as an eviction
 * does, and against KubeVirt's own as an evacuation does; the pod stays listed (the VM runs
 * on until the migration completes) but its requests leave with the VM. */
static evict_status migrating(plugin_handle *h, pod *p, const node *dest, const char *reason,
                              const char *why_dest, const char *ref, const char *msg) {
  cycle *cy = h->cy;
  if (*p->node_name && p->node) {
    cy->per_node[p->node->index]++;
    cy->evacuations[p->node->index]++;
  }
  (*ns_counter(cy, p->ns))++;
  cy->total++;
  cy->evacuations_total++;
  cy->inbound[dest->index]++;
  p->leaving = true;
  if (p->node)
    cy->req_changed[p->node->index] = true;
  record(cy, p, h->prof->name, h->plugin, true, dest->name);
  cy->out->migrations++;
  strbuf why = {0};
  sb_printf(&why, "live migration to %s requested (%s)", dest->name, msg);
  if (why_dest)
    sb_printf(&why, "; chosen: %s", why_dest);
  note(h, p, DEC_REQUESTED, "KubeVirt", sb_str(&why));
  sb_free(&why);
  metrics_pods_evicted("background", h->plugin, h->prof->name, p->ns, p->node_name);
  LOGV(1, NULL, cy->sink->dry_run ? "Migration requested in dry run mode" : "Migration requested",
       LSTR("pod", ref), LSTR("reason", reason), LSTR("strategy", h->plugin),
       LSTR("node", p->node_name), LSTR("to", dest->name), LSTR("migration", msg),
       LSTR("profile", h->prof->name));
  if (!cy->sink->dry_run && cy->sink->event) {
    strbuf note_text = {0};
    sb_printf(&note_text, "pod live migration from %s node to %s node by sigs.k8s.io/descheduler",
              p->node_name, dest->name);
    cy->sink->event(cy->sink, p, "Normal", *reason ? reason : *h->plugin ? h->plugin : "NotSet",
                    sb_str(&note_text));
    sb_free(&note_text);
  }
  return EVICT_OK;
}

/* Whether the profile's evictors count an evacuation against the policy's limits
 * (plugin_desc.counts_evacuations): VMSafety does by default. */
static bool profile_counts_evacuations(const profile *pr) {
  const plugin_set *s = &pr->filter;
  for (size_t i = 0; i < s->n; i++) {
    const plugin_config *pc = s->configs[i];
    if (pc->desc->counts_evacuations && pc->desc->counts_evacuations(pc->args))
      return true;
  }
  return false;
}

/* KubeVirt answered p's eviction by starting a live migration, and the answer is not a request
 * in background: upstream calls it a failed eviction (logged as such by the caller), yet the
 * VM leaves the node. It counts against the policy's limits when the profile says so, as an
 * eviction would, so that a limit of one moves one VM; the plan lists it, the record says
 * KubeVirt moves it, and its requests leave the node in the reports. */
static void evacuation_started(plugin_handle *h, pod *p, const char *ref, const char *msg) {
  cycle *cy = h->cy;
  bool counted = profile_counts_evacuations(h->prof);
  if (counted) {
    if (*p->node_name && p->node)
      cy->per_node[p->node->index]++;
    (*ns_counter(cy, p->ns))++;
    cy->total++;
  }
  p->leaving = true;
  if (p->node)
    cy->req_changed[p->node->index] = true;
  record_entry(cy, (fw_eviction){p, h->prof->name, h->plugin, false, NULL, true, counted});
  cy->out->evacuations++;
  strbuf why = {0};
  sb_printf(&why, "live migration started by the eviction (%s); upstream counts the answer as a "
                  "failed eviction, %s",
            msg,
            counted ? "this descheduler counts it against the eviction limits"
                    : "and so does this profile (VMSafety's countEvacuationsAgainstLimits is "
                      "false): it does not count against the eviction limits");
  note(h, p, DEC_REQUESTED, "KubeVirt", sb_str(&why));
  sb_free(&why);
  if (counted)
    LOGV(3, NULL, "Evacuation counted against the eviction limits", LSTR("pod", ref));
}

static evict_status evict_to(plugin_handle *h, pod *p, const node *dest, const char *reason,
                             const char *why_dest);

evict_status fw_evict(plugin_handle *h, pod *p, const char *reason) {
  return evict_to(h, p, NULL, reason, NULL);
}

evict_status fw_migrate(plugin_handle *h, pod *p, const node *dest, const char *reason,
                        const char *why) {
  return evict_to(h, p, dest, reason, why);
}

static evict_status evict_to(plugin_handle *h, pod *p, const node *dest, const char *reason,
                             const char *why_dest) {
  cycle *cy = h->cy;
  const policy *pol = cy->pol;
  bool gate = cy->opt->evictions_in_background;
  char ref[512];
  pod_ref(p, ref, sizeof ref);
  /* set by a signal handler or the lease renewer's thread */
  if (cy->opt->stop && __atomic_load_n(cy->opt->stop, __ATOMIC_ACQUIRE)) {
    /* the plugins stop as at the total limit: a cycle that went on asking would try (and
     * log, and read again before the request) every pod left, long past the grace period */
    if (!cy->stopping)
      LOGV(0, NULL, "Stopping: this cycle requests no more evictions", LSTR("pod", ref));
    cy->stopping = true;
    note(h, p, DEC_LIMIT, "limits", "the descheduler was stopping");
    return EVICT_LIMIT_TOTAL;
  }
  if (!*p->uid) {
    LOGV(0, NULL, "Ignoring pod eviction due to missing UID", LSTR("pod", ref));
    return EVICT_FAILED;
  }
  if (gate && (p->annotations & ANN_REQUEST_EVICT_ONLY) && bg_find(cy->bg, p->uid)) {
    LOGV(3, NULL, "Eviction in background already requested (ignoring)", LSTR("pod", ref));
    note(h, p, DEC_REQUESTED, "KubeVirt", "already requested in background by an earlier cycle");
    return EVICT_OK;
  }
  uint64_t bg_total = gate ? cy->bg->n : 0;
  if (pol->max_total.set && cy->total + bg_total + 1 > pol->max_total.v)
    return limit_hit(h, p, EVICT_LIMIT_TOTAL, pol->max_total.v);
  if (*p->node_name && pol->max_per_node.set) {
    uint64_t here = (p->node ? cy->per_node[p->node->index] : 0) +
                    (gate ? bg_count_node(cy->bg, p->node_name) : 0);
    if (here + 1 > pol->max_per_node.v)
      return limit_hit(h, p, EVICT_LIMIT_NODE, pol->max_per_node.v);
  }
  if (pol->max_per_namespace.set) {
    uint64_t here = *ns_counter(cy, p->ns) + (gate ? bg_count_ns(cy->bg, p->ns) : 0);
    if (here + 1 > pol->max_per_namespace.v)
      return limit_hit(h, p, EVICT_LIMIT_NAMESPACE, pol->max_per_namespace.v);
  }

  const plugin_set *ev = &h->prof->filter;
  for (size_t i = 0; i < ev->n; i++) {
    plugin_config *pc = ev->configs[i];
    cy->reject_why = NULL;
    if (pc->desc->admit && !pc->desc->admit(h, pc->args, p)) {
      note_rejection(h, p, pc->name, "the eviction", DEC_VETOED);
      return EVICT_VETOED;
    }
  }

  eviction_request req = {h->prof->name, h->plugin, reason, pol->grace_period_seconds.set,
                          pol->grace_period_seconds.v, dest ? dest->name : NULL};
  char msg[2048] = "";
  sink_result res;
  if (p->evicted && cy->sink->dry_run) {
    /* a dry run deleted the pod from its store: a second request finds nothing, as
     * upstream's fake client answers */
    snprintf(msg, sizeof msg, "unable to delete pod %s: pods \"%s\" not found", ref, p->name);
    res = SINK_ERROR;
  } else {
    res = cy->sink->evict(cy->sink, p, &req, msg, sizeof msg);
  }
  if (res == SINK_MIGRATING && dest)
    return migrating(h, p, dest, reason, why_dest, ref, msg);

  /* KubeVirt started (or already runs) an evacuation: a new one counts against its limits;
   * "Evacuation in progress" is one the model already shows in flight */
  bool evacuation = res == SINK_TOO_MANY && strstr(msg, EVICTION_IN_BACKGROUND_TEXT) &&
                    !strstr(msg, "Evacuation in progress");
  if (evacuation) {
    if (p->node)
      cy->evacuations[p->node->index]++;
    cy->evacuations_total++;
  }
  if (res == SINK_EVICTED) {
    if (*p->node_name && p->node)
      cy->per_node[p->node->index]++;
    (*ns_counter(cy, p->ns))++;
    cy->total++;
    p->evicted = true;
    pod_gone(cy, p);
    cy->out->evicted++;
    record(cy, p, h->prof->name, h->plugin, false, NULL);
    note(h, p, DEC_EVICTED, h->plugin, cy->sink->dry_run ? "evicted (dry run)" : "evicted");
    metrics_pods_evicted("success", h->plugin, h->prof->name, p->ns, p->node_name);
    LOGV(1, NULL, cy->sink->dry_run ? "Evicted pod in dry run mode" : "Evicted pod",
         LSTR("pod", ref), LSTR("reason", reason), LSTR("strategy", h->plugin),
         LSTR("node", p->node_name), LSTR("profile", h->prof->name));
    if (!cy->sink->dry_run && cy->sink->event) {
      strbuf note = {0};
      sb_printf(&note, "pod eviction from %s node by sigs.k8s.io/descheduler", p->node_name);
      cy->sink->event(cy->sink, p, "Normal", *reason ? reason : *h->plugin ? h->plugin : "NotSet",
                      sb_str(&note));
      sb_free(&note);
    }
    return EVICT_OK;
  }
  if (res == SINK_TOO_MANY && gate && (p->annotations & ANN_REQUEST_EVICT_ONLY) &&
      strstr(msg, EVICTION_IN_BACKGROUND_TEXT)) {
    if (pod_is_terminal(p)) {
      LOGV(3, NULL, "Ignoring eviction of a completed/failed pod", LSTR("pod", ref));
      note(h, p, DEC_FAILED, "KubeVirt", "the pod had already finished");
      return EVICT_OK;
    }
    LOGV(3, NULL, "Eviction in background assumed", LSTR("pod", ref));
    bg_put(cy->bg, p, h->plugin, h->prof->name, true, cy->opt->now);
    p->leaving = true; /* reports: its requests leave the node with the VM */
    if (p->node)
      cy->req_changed[p->node->index] = true;
    record(cy, p, h->prof->name, h->plugin, true, NULL);
    note(h, p, DEC_REQUESTED, "KubeVirt", msg);
    metrics_pods_evicted("background", h->plugin, h->prof->name, p->ns, p->node_name);
    return EVICT_OK;
  }
  if (res == SINK_UNKNOWN) {
    /* the server may have carried the eviction out: count it, so that evicting another pod
     * instead cannot go past a limit, and leave the pod alone for the rest of the cycle. A
     * launcher's eviction may have started an evacuation: it counts against KubeVirt's
     * migration limits too (VMSafety's migrationLimits) */
    if (*p->node_name && p->node)
      cy->per_node[p->node->index]++;
    (*ns_counter(cy, p->ns))++;
    cy->total++;
    if (p->launcher_label) {
      if (p->node)
        cy->evacuations[p->node->index]++;
      cy->evacuations_total++;
    }
    p->evicted = true;
    pod_gone(cy, p);
  }
  strbuf e = {0};
  if (res == SINK_TOO_MANY)
    sb_printf(&e, "error when evicting pod (ignoring) \"%s\": %s", p->name, msg);
  else if (res == SINK_UNKNOWN)
    sb_printf(&e, "%s (the request may have been carried out: it counts against the eviction "
                  "limits)",
              msg);
  else if (res == SINK_NOT_FOUND)
    sb_printf(&e, "pod not found when evicting \"%s\": %s", p->name, msg);
  else
    sb_append(&e, msg);
  LOGE(NULL, "Error evicting pod", sb_str(&e), LSTR("pod", ref), LSTR("reason", reason));
  note(h, p, DEC_FAILED, "API server", sb_str(&e));
  metrics_pods_evicted("error", h->plugin, h->prof->name, p->ns, p->node_name);
  failure_event(cy, p, sb_str(&e));
  sb_free(&e);
  /* still a failure to the plugin, as upstream's: only the limits see the move */
  if (evacuation)
    evacuation_started(h, p, ref, msg);
  return EVICT_FAILED;
}

/* ---------- the cycle ---------- */

void fw_node_request_pcts(const node *n, double pct[3], bool has[3]) {
  static const char *const names[3] = {RES_CPU, RES_MEMORY, RES_PODS};
  int64_t used[3] = {0, 0, 0};
  for (size_t i = 0; i < n->npods; i++) {
    const pod *p = n->pods[i];
    if (p->evicted || p->leaving || pod_is_terminal(p))
      continue;
    used[0] += res_get(&p->requests, RES_CPU, NULL);
    used[1] += res_get(&p->requests, RES_MEMORY, NULL);
    used[2] += 1;
  }
  used[1] = quantity_units(used[1]);
  const res_list *cap = n->allocatable.n ? &n->allocatable : &n->capacity;
  for (int r = 0; r < 3; r++) {
    bool found;
    int64_t c = res_get(cap, names[r], &found);
    if (r > 0)
      c = quantity_units(c);
    has[r] = found;
    pct[r] = found && c ? (double)used[r] / (double)c * 100 : 0;
  }
}

/* the decision record's requested figures: before the cycle (called first) and after it */
static void requested_before(cycle *cy) {
  size_t nn = cy->m->nodes.n;
  cy->req_before = ARENA_NEWN(cy->mem, double, 3 * (nn ? nn : 1));
  cy->req_has = ARENA_NEWN(cy->mem, bool, 3 * (nn ? nn : 1));
  for (size_t i = 0; i < nn; i++)
    fw_node_request_pcts(cy->m->nodes.items[i], &cy->req_before[3 * i], &cy->req_has[3 * i]);
}

/* only the nodes a pod left are summed again: the others' figures are the ones before */
static void requested_after(cycle *cy) {
  for (size_t i = 0; i < cy->m->nodes.n; i++) {
    const node *n = cy->m->nodes.items[i];
    double *before = &cy->req_before[3 * i], after[3];
    bool has[3];
    if (cy->req_changed[i])
      fw_node_request_pcts(n, after, has);
    else
      memcpy(after, before, sizeof after);
    decisions_node_requested(cy->rec, n, before, after, &cy->req_has[3 * i]);
  }
}

static double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int select_nodes(cycle *cy, dserr *err) {
  label_selector *sel = NULL;
  if (cy->pol->node_selector && *cy->pol->node_selector &&
      selector_parse(cy->mem, cy->pol->node_selector, &sel, err) < 0)
    return dserr_prefix(err, "nodeSelector");
  model *m = cy->m;
  cy->nodes = ARENA_NEWN(cy->mem, node *, m->nodes.n ? m->nodes.n : 1);
  for (size_t i = 0; i < m->nodes.n; i++) {
    node *n = m->nodes.items[i];
    if (sel && !selector_matches(sel, &n->labels))
      continue;
    if (!n->ready) {
      LOGV(1, NULL, "Ignoring node", LSTR("node", n->name), LSTR("condition", "Ready"),
           LSTR("status", n->ready_status));
      continue;
    }
    cy->nodes[cy->nnodes++] = n;
    cy->is_cycle_node[i] = true;
    if (cy->rec)
      decisions_node_in_cycle(cy->rec, n);
  }
  return 0;
}

/* Runs one plugin and logs its deltas; an error is appended to *errs (aggregated later). */
static void run_plugin(cycle *cy, const profile *pr, plugin_config *pc, const char *point,
                       strbuf *errs, int *nerrs) {
  log_field bound[2] = {LSTR("plugin", pc->name), LSTR("ExtensionPoint", point)};
  plugin_handle h = {cy, cy->m, pr, pc->name, point, cy->nodes, cy->nnodes,
                     {bound, 2}, cy->opt->now, arena_new(256 * 1024)};
  uint64_t ev0 = cy->out->evicted, rq0 = cy->bg->n;
  double t0 = now_seconds();
  dserr err;
  err.msg[0] = 0;
  if (pc->desc->run(&h, pc->args, &err) < 0) {
    if ((*nerrs)++)
      sb_append(errs, ", ");
    sb_printf(errs, "plugin \"%s\" finished with error: %s", pc->name, err.msg);
  }
  metrics_strategy_duration(pc->name, pr->name, now_seconds() - t0);
  uint64_t rq1 = cy->opt->evictions_in_background ? cy->bg->n : 0;
  if (!cy->opt->evictions_in_background)
    rq0 = 0;
  LOGV(1, NULL, "Total number of evictions/requests", LSTR("extension point", point),
       LUINT("evictedPods", cy->out->evicted - ev0), LUINT("evictionRequests", rq1 > rq0 ? rq1 - rq0 : 0));
  arena_free(h.scratch);
}

static void run_point(cycle *cy, bool balance) {
  for (size_t i = 0; i < cy->pol->nprofiles; i++) {
    const profile *pr = &cy->pol->profiles[i];
    const plugin_set *s = balance ? &pr->balance : &pr->deschedule;
    strbuf errs = {0};
    int nerrs = 0;
    for (size_t k = 0; k < s->n; k++)
      run_plugin(cy, pr, s->configs[k], balance ? "Balance" : "Deschedule", &errs, &nerrs);
    if (nerrs) {
      /* one error prints as itself, several as [e1, e2] */
      strbuf agg = {0};
      sb_printf(&agg, nerrs > 1 ? "[%s]" : "%s", sb_str(&errs));
      LOGE(NULL, balance ? "running balance extension point failed with error"
                         : "running deschedule extension point failed with error",
           sb_str(&agg), LSTR("profile", pr->name));
      sb_free(&agg);
    }
    sb_free(&errs);
  }
}

int fw_run_cycle(const policy *pol, model *m, bg_cache *bg, eviction_sink *sink,
                 const fw_options *opt, fw_result *out, dserr *err) {
  memset(out, 0, sizeof *out);
  out->node_category = calloc(m->nodes.n ? m->nodes.n : 1, sizeof *out->node_category);
  if (!out->node_category)
    abort();
  cycle cy = {0};
  cy.pol = pol;
  cy.m = m;
  cy.bg = bg;
  cy.sink = sink;
  cy.opt = opt;
  cy.out = out;
  cy.rec = opt->decisions;
  cy.mem = arena_new(1 << 20);
  size_t nn = m->nodes.n ? m->nodes.n : 1;
  cy.is_cycle_node = ARENA_NEWN(cy.mem, bool, nn);
  cy.per_node = ARENA_NEWN(cy.mem, uint64_t, nn);
  cy.usage = ARENA_NEWN(cy.mem, node_usage, nn);
  cy.evacuations = ARENA_NEWN(cy.mem, uint64_t, nn);
  cy.inbound = ARENA_NEWN(cy.mem, uint64_t, nn);
  cy.req_changed = ARENA_NEWN(cy.mem, bool, nn);
  cy.history = opt->history ? opt->history : &cy.own_history;
  fw_history_seed(cy.history, m);
  if (cy.rec)
    requested_before(&cy);
  double t0 = now_seconds();
  LOGF(3, "Resetting pod evictor counters");
  int rc = 0;
  if (select_nodes(&cy, err) < 0) {
    rc = -1;
    goto done;
  }
  out->nnodes = cy.nnodes;
  if (cy.nnodes < 2) {
    LOGV(0, NULL, "Skipping descheduling cycle: requires >=2 nodes", LINT("found", cy.nnodes));
    out->skipped = true;
    goto done;
  }
  /* the plugins' lines in large writes (log_hold); the API client writes them out before
   * each request it sends */
  log_hold();
  run_point(&cy, false);
  run_point(&cy, true);
  log_release();
  out->requests = opt->evictions_in_background ? bg->n : 0;
  LOGV(1, NULL, "Number of evictions/requests", LUINT("totalEvicted", out->evicted),
       LUINT("evictionRequests", out->requests));
done:
  if (cy.rec) {
    requested_after(&cy);
    decisions_finish(cy.rec);
  }
  metrics_loop_duration(now_seconds() - t0);
  free(cy.per_ns);
  fw_history_free(&cy.own_history);
  arena_free(cy.mem);
  return rc;
}
