/* decisions.c - the decision record and its JSON and text renderings; see decisions.h.
 *
 * Pods are found by pointer through an open-addressing table sized once for the model; event
 * strings are interned (thousands of pods share a handful of reasons), so the record of a
 * 150,000-pod cycle stays a few megabytes. */
#include "decisions.h"

#include "../util/arena.h"
#include "../util/intern.h"
#include "../util/xalloc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct decisions {
  const model *m;
  arena *mem;
  intern_table *strings;
  dec_pod *pods; /* parallel to m->pods.items */
  size_t npods;
  uint32_t *slots; /* hash of pod pointer -> index + 1 (0 = empty) */
  size_t nslots;
  dec_node *nodes; /* by node index */
  bool finished;   /* decisions_finish ran: events may be shared */
};

static const char *const outcome_names[DEC_NOUTCOMES] = {
    "not-considered", "node-at-target", "rejected", "vetoed",
    "limit",          "failed",         "requested", "evicted"};

const char *dec_outcome_name(dec_outcome o) {
  return o < DEC_NOUTCOMES ? outcome_names[o] : "unknown";
}

static size_t hash_ptr(const void *p, size_t mask) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x & mask;
}

decisions *decisions_new(const model *m) {
  decisions *d = xcalloc(1, sizeof *d);
  d->m = m;
  d->mem = arena_new(64 * 1024);
  d->strings = intern_new();
  d->npods = m->pods.n;
  if (d->npods >= UINT32_MAX)
    abort(); /* a model holds far fewer (the decoders' counts are 32-bit) */
  d->pods = ARENA_NEWN(d->mem, dec_pod, d->npods ? d->npods : 1);
  d->nslots = 16;
  while (d->nslots < d->npods * 2)
    d->nslots *= 2;
  d->slots = ARENA_NEWN(d->mem, uint32_t, d->nslots);
  for (size_t i = 0; i < d->npods; i++) {
    d->pods[i].pod = m->pods.items[i];
    size_t s = hash_ptr(m->pods.items[i], d->nslots - 1);
    while (d->slots[s])
      s = (s + 1) & (d->nslots - 1);
    d->slots[s] = (uint32_t)(i + 1);
  }
  d->nodes = ARENA_NEWN(d->mem, dec_node, m->nodes.n ? m->nodes.n : 1);
  return d;
}

void decisions_free(decisions *d) {
  if (!d)
    return;
  intern_free(d->strings);
  arena_free(d->mem);
  free(d);
}

static dec_pod *find(const decisions *d, const pod *p) {
  size_t s = hash_ptr(p, d->nslots - 1);
  while (d->slots[s]) {
    dec_pod *dp = &d->pods[d->slots[s] - 1];
    if (dp->pod == p)
      return dp;
    s = (s + 1) & (d->nslots - 1);
  }
  return NULL;
}

const dec_pod *decisions_find(const decisions *d, const pod *p) { return find(d, p); }

static const char *str(decisions *d, const char *s) { return intern(d->strings, s ? s : ""); }

/* Appends an event to dp; profile, plugin, by and reason are interned already. */
static void add_event(decisions *d, dec_pod *dp, dec_outcome o, const char *profile,
                      const char *plugin, const char *by, const char *reason) {
  dec_event *l = dp->last;
  if (l && l->outcome == o && l->profile == profile && l->plugin == plugin && l->by == by &&
      l->reason == reason)
    return; /* the same filter asked again */
  dec_event *e = ARENA_NEW(d->mem, dec_event);
  *e = (dec_event){o, profile, plugin, by, reason, NULL};
  if (l)
    l->next = e;
  else
    dp->events = e;
  dp->last = e;
  dp->nevents++;
  if (o > dp->outcome)
    dp->outcome = o;
}

void decisions_pod(decisions *d, const pod *p, dec_outcome o, const char *profile,
                   const char *plugin, const char *by, const char *reason) {
  if (d->finished)
    abort(); /* a pod's events may be shared with other pods now (decisions_finish) */
  dec_pod *dp = find(d, p);
  if (dp)
    add_event(d, dp, o, str(d, profile), str(d, plugin), str(d, by), str(d, reason));
}

void decisions_node(decisions *d, const node *n, const char *category, const char *why,
                    const char *thresholds) {
  dec_node *dn = &d->nodes[n->index];
  if (category && !dn->category)
    dn->category = str(d, category);
  if (why)
    dn->why = str(d, why);
  if (thresholds)
    dn->thresholds = str(d, thresholds);
}

void decisions_node_in_cycle(decisions *d, const node *n) { d->nodes[n->index].in_cycle = true; }

void decisions_node_threshold(decisions *d, const node *n, const char *resource, double low,
                              double high) {
  dec_node *dn = &d->nodes[n->index];
  resource = str(d, resource);
  for (size_t i = 0; i < dn->nthresholds; i++)
    if (dn->thresholds_by_resource[i].resource == resource)
      return;
  if (dn->nthresholds < DEC_MAX_THRESHOLDS)
    dn->thresholds_by_resource[dn->nthresholds++] = (dec_threshold){resource, low, high};
}

void decisions_node_usage(decisions *d, const node *n, const char *const *resources,
                          const double *pcts, size_t count) {
  dec_node *dn = &d->nodes[n->index];
  dn->usage = count ? ARENA_NEWN(d->mem, dec_usage, count) : NULL;
  dn->nusage = count;
  for (size_t i = 0; i < count; i++)
    dn->usage[i] = (dec_usage){str(d, resources[i]), pcts[i]};
}

void decisions_node_requested(decisions *d, const node *n, const double before[3],
                              const double after[3], const bool has[3]) {
  dec_node *dn = &d->nodes[n->index];
  dn->requested_set = true;
  for (int r = 0; r < 3; r++) {
    dn->has_requested[r] = has[r];
    dn->requested[r] = before[r];
    dn->requested_after[r] = after[r];
  }
}

const dec_node *decisions_node_of(const decisions *d, const node *n) { return &d->nodes[n->index]; }

/* dp's only event: not considered for reason (interned), shared with the pods before it
 * that had the same reason (*shared: the last such event made) */
static void not_considered(decisions *d, dec_pod *dp, dec_event **shared, const char *reason) {
  if (!*shared || (*shared)->reason != reason) {
    const char *empty = str(d, "");
    dec_event *e = ARENA_NEW(d->mem, dec_event);
    *e = (dec_event){DEC_NOT_CONSIDERED, empty, empty, empty, reason, NULL};
    *shared = e;
  }
  dp->events = dp->last = *shared;
  dp->nevents = 1;
  dp->outcome = DEC_NOT_CONSIDERED;
}

void decisions_finish(decisions *d) {
  /* most pods end here, and most of their reasons are one of a few texts: those depending only
   * on the node's category are interned once per category (the utilization plugins make
   * three), and each such reason is one event all its pods share (150,000 pods would otherwise
   * carry 7 MB of equal events) */
  d->finished = true;
  dec_event *last = NULL;
  struct {
    const char *category, *reason; /* both interned */
    dec_event *event;              /* the one its pods share */
  } seen[8];
  size_t nseen = 0;
  strbuf sb = {0};
  for (size_t i = 0; i < d->npods; i++) {
    dec_pod *dp = &d->pods[i];
    if (dp->nevents)
      continue;
    const pod *p = dp->pod;
    const char *reason;
    sb_clear(&sb);
    if (!*p->node_name) {
      sb_append(&sb, "the pod is not bound to a node");
    } else if (!p->node) {
      sb_printf(&sb, "its node %s is not in the cluster state", p->node_name);
    } else if (!d->nodes[p->node->index].in_cycle) {
      sb_printf(&sb, "its node %s is not one of the cycle's nodes (not Ready, or outside the "
                     "policy's nodeSelector)",
                p->node_name);
    } else if (pod_is_terminal(p)) {
      sb_printf(&sb, "the pod has finished (phase %s)", pod_phase_name(p->phase));
    } else if (d->nodes[p->node->index].category) {
      const char *c = d->nodes[p->node->index].category; /* interned */
      size_t k = 0;
      while (k < nseen && seen[k].category != c)
        k++;
      if (k == nseen) {
        sb_printf(&sb, "no enabled plugin selected it (its node was classified %s)", c);
        if (nseen == sizeof seen / sizeof seen[0]) /* more categories than plugins make */
          k = --nseen;
        seen[k].category = c;
        seen[k].reason = str(d, sb_str(&sb));
        seen[k].event = NULL;
        nseen++;
      }
      not_considered(d, dp, &seen[k].event, seen[k].reason);
      continue;
    } else {
      sb_append(&sb, "no enabled plugin selected it");
    }
    reason = str(d, sb_str(&sb));
    not_considered(d, dp, &last, reason);
  }
  sb_free(&sb);
}

/* ---------- JSON ---------- */

/* the event that decided the pod's outcome: the last one with that outcome */
static const dec_event *deciding(const dec_pod *dp) {
  const dec_event *best = NULL;
  for (const dec_event *e = dp->events; e; e = e->next)
    if (e->outcome == dp->outcome)
      best = e;
  return best;
}

/* a pod and its deciding event (whose outcome is the pod's): 16 bytes, 150,000 of them */
typedef struct {
  const pod *pod;
  const dec_event *e;
} row;

/* same outcome, by and reason (interned: the same pointer is the same text) */
static bool same_group(const dec_event *x, const dec_event *y) {
  return x == y || (x->outcome == y->outcome && x->by == y->by && x->reason == y->reason);
}

static int cmp_row(const void *a, const void *b) {
  const row *x = a, *y = b;
  int c = 0;
  if (!same_group(x->e, y->e)) {
    if (x->e->outcome != y->e->outcome)
      return x->e->outcome > y->e->outcome ? -1 : 1;
    c = x->e->by == y->e->by ? 0 : strcmp(x->e->by, y->e->by);
    if (!c)
      c = x->e->reason == y->e->reason ? 0 : strcmp(x->e->reason, y->e->reason);
  }
  if (!c)
    c = x->pod->ns == y->pod->ns ? 0 : strcmp(x->pod->ns, y->pod->ns);
  if (!c)
    c = strcmp(x->pod->name, y->pod->name);
  return c;
}

static void json_pod_ref(strbuf *out, const pod *p) {
  char ref[512];
  sb_append_json_str(out, pod_ref(p, ref, sizeof ref));
}

static void json_event(strbuf *out, const dec_event *e) {
  sb_append(out, "{\"outcome\":");
  sb_append_json_str(out, dec_outcome_name(e->outcome));
  if (*e->profile) {
    sb_append(out, ",\"profile\":");
    sb_append_json_str(out, e->profile);
  }
  if (*e->plugin) {
    sb_append(out, ",\"plugin\":");
    sb_append_json_str(out, e->plugin);
  }
  if (*e->by) {
    sb_append(out, ",\"by\":");
    sb_append_json_str(out, e->by);
  }
  sb_append(out, ",\"reason\":");
  sb_append_json_str(out, e->reason);
  sb_appendc(out, '}');
}

/* Every pod's deciding event, sorted by outcome (strongest first), by, reason, pod; counts[]
 * gets the number of pods per outcome. Caller frees the rows. */
static row *sorted_rows(const decisions *d, size_t counts[DEC_NOUTCOMES], size_t *n) {
  row *rows = xcalloc(d->npods ? d->npods : 1, sizeof *rows);
  size_t k = 0;
  memset(counts, 0, DEC_NOUTCOMES * sizeof *counts);
  for (size_t i = 0; i < d->npods; i++) {
    const dec_pod *dp = &d->pods[i];
    const dec_event *e = deciding(dp);
    counts[dp->outcome]++;
    if (e)
      rows[k++] = (row){dp->pod, e};
  }
  qsort(rows, k, sizeof *rows, cmp_row);
  *n = k;
  return rows;
}

/* end of the group of rows starting at i (same outcome, by and reason) */
static size_t group_end(const row *rows, size_t n, size_t i) {
  size_t j = i;
  while (j < n && same_group(rows[j].e, rows[i].e))
    j++;
  return j;
}

static const char *const requested_names[3] = {"cpu", "memory", "pods"};

static void json_requested(strbuf *out, const char *key, const dec_node *dn, const double *pct) {
  sb_printf(out, ",\"%s\":{", key);
  bool first = true;
  for (int r = 0; r < 3; r++) {
    if (!dn->has_requested[r])
      continue;
    sb_printf(out, "%s\"%s\":%.2f", first ? "" : ",", requested_names[r], pct[r]);
    first = false;
  }
  sb_appendc(out, '}');
}

/* A node's figures: the plugin's usage and thresholds in numbers, requested before and after */
static void json_node_figures(strbuf *out, const dec_node *dn) {
  if (dn->nusage) {
    sb_append(out, ",\"usage\":{");
    for (size_t i = 0; i < dn->nusage; i++) {
      sb_append(out, i ? "," : "");
      sb_append_json_str(out, dn->usage[i].resource);
      sb_printf(out, ":%.2f", dn->usage[i].pct);
    }
    sb_appendc(out, '}');
  }
  if (dn->nthresholds) {
    sb_append(out, ",\"thresholdPercentages\":{");
    for (size_t i = 0; i < dn->nthresholds; i++) {
      const dec_threshold *t = &dn->thresholds_by_resource[i];
      sb_append(out, i ? "," : "");
      sb_append_json_str(out, t->resource);
      sb_printf(out, ":{\"low\":%.2f,\"high\":%.2f}", t->low, t->high);
    }
    sb_appendc(out, '}');
  }
  if (dn->requested_set) {
    json_requested(out, "usagePercentage", dn, dn->requested);
    json_requested(out, "usagePercentageAfter", dn, dn->requested_after);
  }
}

/* A node's entry: {"name", "inCycle", "category", "why", "thresholds", figures} */
static void json_node(strbuf *out, const decisions *d, const node *n) {
  const dec_node *dn = &d->nodes[n->index];
  sb_append(out, "{\"name\":");
  sb_append_json_str(out, n->name);
  sb_printf(out, ",\"inCycle\":%s,\"category\":", dn->in_cycle ? "true" : "false");
  sb_append_json_str(out, dn->category ? dn->category : "");
  if (dn->why) {
    sb_append(out, ",\"why\":");
    sb_append_json_str(out, dn->why);
  }
  if (dn->thresholds) {
    sb_append(out, ",\"thresholds\":");
    sb_append_json_str(out, dn->thresholds);
  }
  json_node_figures(out, dn);
  sb_appendc(out, '}');
}

/* A pod's entry: {"pod", "node", "outcome", "events": [...]}, with the node's own entry
 * before the events when with_node is set and the pod has a node. */
static void json_pod(strbuf *out, const decisions *d, const dec_pod *dp, bool with_node) {
  sb_append(out, "{\"pod\":");
  json_pod_ref(out, dp->pod);
  sb_append(out, ",\"node\":");
  sb_append_json_str(out, dp->pod->node_name);
  sb_append(out, ",\"outcome\":");
  sb_append_json_str(out, dec_outcome_name(dp->outcome));
  if (with_node && dp->pod->node) {
    sb_append(out, ",\"nodeRecord\":");
    json_node(out, d, dp->pod->node);
  }
  sb_append(out, ",\"events\":[");
  for (const dec_event *e = dp->events; e; e = e->next) {
    if (e != dp->events)
      sb_appendc(out, ',');
    json_event(out, e);
  }
  sb_append(out, "]}");
}

void decisions_json(const decisions *d, size_t examples, bool all_pods, strbuf *out) {
  const model *m = d->m;
  sb_append(out, "{\"nodes\":[");
  for (size_t i = 0; i < m->nodes.n; i++) {
    if (i)
      sb_appendc(out, ',');
    json_node(out, d, m->nodes.items[i]);
  }
  size_t counts[DEC_NOUTCOMES], nrows;
  row *rows = sorted_rows(d, counts, &nrows);
  sb_append(out, "],\"outcomes\":{");
  for (size_t o = DEC_NOUTCOMES; o-- > 0;)
    sb_printf(out, "%s\"%s\":%zu", o == DEC_NOUTCOMES - 1 ? "" : ",", outcome_names[o], counts[o]);
  sb_append(out, "},\"reasons\":[");
  for (size_t i = 0; i < nrows;) {
    size_t j = group_end(rows, nrows, i);
    sb_append(out, i ? ",{\"outcome\":" : "{\"outcome\":");
    sb_append_json_str(out, dec_outcome_name(rows[i].e->outcome));
    sb_append(out, ",\"by\":");
    sb_append_json_str(out, rows[i].e->by);
    sb_append(out, ",\"reason\":");
    sb_append_json_str(out, rows[i].e->reason);
    sb_printf(out, ",\"count\":%zu,\"examples\":[", j - i);
    for (size_t k = i; k < j && k - i < examples; k++) {
      if (k > i)
        sb_appendc(out, ',');
      json_pod_ref(out, rows[k].pod);
    }
    sb_append(out, "]}");
    i = j;
  }
  free(rows);
  sb_appendc(out, ']');
  if (all_pods) {
    sb_append(out, ",\"pods\":[");
    for (size_t i = 0; i < d->npods; i++) {
      if (i)
        sb_appendc(out, ',');
      json_pod(out, d, &d->pods[i], false);
    }
    sb_appendc(out, ']');
  }
  sb_appendc(out, '}');
}

/* ---------- words ---------- */

void decisions_text(const decisions *d, size_t examples, strbuf *out) {
  size_t counts[DEC_NOUTCOMES], nrows;
  row *rows = sorted_rows(d, counts, &nrows);
  sb_append(out, "Decisions (pods by outcome):");
  for (size_t o = DEC_NOUTCOMES; o-- > 0;)
    if (counts[o])
      sb_printf(out, " %s=%zu", outcome_names[o], counts[o]);
  sb_appendc(out, '\n');
  for (size_t i = 0; i < nrows;) {
    size_t j = group_end(rows, nrows, i);
    sb_printf(out, "  %-15s %5zu  %s%s%s\n", dec_outcome_name(rows[i].e->outcome), j - i,
              rows[i].e->by, *rows[i].e->by ? ": " : "", rows[i].e->reason);
    sb_append(out, "                        e.g.");
    char ref[512];
    for (size_t k = i; k < j && k - i < examples; k++)
      sb_printf(out, " %s", pod_ref(rows[k].pod, ref, sizeof ref));
    if (j - i > examples)
      sb_printf(out, " (+%zu more)", j - i - examples);
    sb_appendc(out, '\n');
    i = j;
  }
  free(rows);
}

static const char *outcome_words(dec_outcome o) {
  switch (o) {
  case DEC_EVICTED:
    return "evicted";
  case DEC_REQUESTED:
    return "requested (KubeVirt live-migrates the VM)";
  case DEC_FAILED:
    return "the eviction was asked for and failed";
  case DEC_LIMIT:
    return "stopped by an eviction limit";
  case DEC_VETOED:
    return "held back at the eviction";
  case DEC_REJECTED:
    return "not evictable";
  case DEC_NODE_AT_TARGET:
    return "left in place: its node reached its target";
  default:
    return "never considered";
  }
}

void decisions_explain(const decisions *d, const pod *p, strbuf *out) {
  char ref[512];
  const dec_pod *dp = find(d, p);
  if (!dp) {
    sb_printf(out, "Pod %s is not in the cluster state.\n", pod_ref(p, ref, sizeof ref));
    return;
  }
  sb_printf(out, "Pod %s on node %s: %s.\n", pod_ref(p, ref, sizeof ref),
            *p->node_name ? p->node_name : "(none)", outcome_words(dp->outcome));
  if (p->node) {
    const dec_node *dn = &d->nodes[p->node->index];
    sb_printf(out, "Node %s: %s", p->node_name,
              !dn->in_cycle   ? "not one of the cycle's nodes"
              : dn->category  ? dn->category
                              : "not classified by any plugin");
    if (dn->why)
      sb_printf(out, " (%s)", dn->why);
    sb_append(out, ".\n");
    if (dn->nusage) {
      sb_append(out, "Usage the plugin compared:");
      for (size_t i = 0; i < dn->nusage; i++)
        sb_printf(out, " %s %.2f%%", dn->usage[i].resource, dn->usage[i].pct);
      sb_append(out, ".\n");
    }
    if (dn->thresholds)
      sb_printf(out, "Thresholds in force: %s.\n", dn->thresholds);
  }
  size_t k = 0;
  for (const dec_event *e = dp->events; e; e = e->next) {
    sb_printf(out, "  %zu. ", ++k);
    if (*e->profile || *e->plugin)
      sb_printf(out, "[%s/%s] ", e->profile, e->plugin);
    sb_append(out, dec_outcome_name(e->outcome));
    if (*e->by)
      sb_printf(out, " by %s", e->by);
    sb_printf(out, ": %s\n", e->reason);
  }
}

void decisions_explain_json(const decisions *d, const pod *p, strbuf *out) {
  const dec_pod *dp = find(d, p);
  if (!dp) {
    sb_append(out, "{\"pod\":");
    json_pod_ref(out, p);
    sb_append(out, ",\"outcome\":null}");
    return;
  }
  json_pod(out, d, dp, true);
}
