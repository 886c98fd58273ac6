/* nodeutilization.c - shared node-usage arithmetic and eviction engine; see nodeutilization.h. */
#include "nodeutilization.h"

#include "../framework/podutil.h"
#include "../apimachinery/timeutil.h"
#include "../obs/metrics.h"
#include "../kubevirt/vm.h"
#include "../util/par.h"
#include "../apimachinery/quantity.h"
#include "../util/strbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nu_resources_init(nu_resources *r, const pct_map *thresholds, bool only_thresholds) {
  r->n = 0;
  for (size_t i = 0; i < thresholds->n && r->n < NU_MAX_RES - 3; i++)
    r->names[r->n++] = res_name(thresholds->keys[i]); /* found by pointer (model.h) */
  if (only_thresholds)
    return;
  static const char *basic[] = {RES_CPU, RES_MEMORY, RES_PODS};
  for (size_t b = 0; b < 3; b++)
    if (nu_index(r, basic[b]) < 0)
      r->names[r->n++] = basic[b];
}

int nu_index(const nu_resources *r, const char *name) {
  for (size_t i = 0; i < r->n; i++)
    if (strcmp(r->names[i], name) == 0)
      return (int)i;
  return -1;
}

static bool is_cpu(const char *name) {
  return strcmp(name, "cpu") == 0;
}

int64_t nu_pod_request(const pod *p, const char *name) {
  int64_t milli = res_get(&p->requests, name, NULL);
  return is_cpu(name) ? milli : quantity_units(milli);
}

void nu_set_percentages(nu_node *nn, const nu_resources *r) {
  const node *nd = nn->node;
  const res_list *capsrc = nd->allocatable.n ? &nd->allocatable : &nd->capacity;
  for (size_t j = 0; j < r->n; j++) {
    const char *name = r->names[j];
    bool found;
    int64_t c = res_get(capsrc, name, &found);
    if (strcmp(name, NU_METRIC_RESOURCE) == 0) {
      /* upstream gives every node this synthetic capacity (a query's 0-100 scale) */
      found = true;
      c = 100 * 1000;
    }
    nn->has_capacity[j] = found;
    nn->capacity[j] = found ? (is_cpu(name) ? c : quantity_units(c)) : 0;
    nn->has_pct[j] = found;
    nn->pct[j] = 0;
    if (found)
      nn->pct[j] = nn->capacity[j] == 0 ? 0 : (double)nn->usage[j] / (double)nn->capacity[j] * 100;
  }
}

int nu_prom_node_usage(const prom_answer *a, const nu_resources *r, nu_node *nn, dserr *err) {
  double v;
  if (!prom_answer_value(a, nn->node->name, &v))
    return dserr_set(err, "unable to find metric entry for %s", nn->node->name);
  for (size_t j = 0; j < r->n; j++)
    nn->usage[j] = strcmp(r->names[j], NU_METRIC_RESOURCE) == 0 ? (int64_t)(v * 100) : 0;
  nu_set_percentages(nn, r);
  return 0;
}

/* metrics.k8s.io: cpu and memory from NodeMetrics, pods counted; nothing else exists there */
static int metrics_api_node_usage(const nu_resources *r, nu_node *nn, dserr *err) {
  const node *nd = nn->node;
  if (!nd->actual)
    return dserr_set(err, "unable to find node \"%s\" in the collected metrics", nd->name);
  for (size_t j = 0; j < r->n; j++) {
    const char *name = r->names[j];
    if (strcmp(name, "pods") == 0)
      nn->usage[j] = (int64_t)nn->npods;
    else if (is_cpu(name))
      nn->usage[j] = res_get(nd->actual, RES_CPU, NULL);
    else if (strcmp(name, "memory") == 0)
      nn->usage[j] = quantity_units(res_get(nd->actual, RES_MEMORY, NULL));
    else
      return dserr_set(err, "unable to find \"%s\" resource for collected \"%s\" node metric",
                       name, nd->name);
  }
  nu_set_percentages(nn, r);
  return 0;
}

static void requests_node_usage(const nu_resources *r, nu_node *nn) {
  /* sum requests in milli, then scale once, as upstream sums exact quantities */
  int64_t milli[NU_MAX_RES] = {0};
  for (size_t k = 0; k < nn->npods; k++) {
    if (k + POD_AHEAD / 2 < nn->npods) /* the pods were read just now; their arrays were not */
      __builtin_prefetch(nn->pods[k + POD_AHEAD / 2]->requests.items);
    for (size_t j = 0; j < r->n; j++)
      milli[j] = quantity_add(milli[j], res_get(&nn->pods[k]->requests, r->names[j], NULL));
  }
  for (size_t j = 0; j < r->n; j++) {
    const char *name = r->names[j];
    if (strcmp(name, "pods") == 0)
      nn->usage[j] = (int64_t)nn->npods;
    else
      nn->usage[j] = is_cpu(name) ? milli[j] : quantity_units(milli[j]);
  }
  nu_set_percentages(nn, r);
}

/* ---------- every node's requests, on both cores ---------- */

typedef struct {
  const nu_resources *r;
  node **nodes;
  nu_node *out;
} usage_job;

/* Nodes [lo, hi): their present pods and the sums of their requests (each part writes only
 * its own nodes' entries, whose pod arrays were allocated before). */
static void usage_part(void *ctx, size_t lo, size_t hi) {
  usage_job *j = ctx;
  for (size_t i = lo; i < hi; i++) {
    nu_node *nn = &j->out[i];
    nn->npods = fw_node_pods_into(j->nodes[i], true, nn->pods);
    requests_node_usage(j->r, nn);
  }
}

static void requests_usage_all(plugin_handle *h, const nu_resources *r, node **nodes, size_t n,
                               nu_node *out) {
  for (size_t i = 0; i < n; i++) {
    out[i].node = nodes[i];
    out[i].pods = ARENA_NEWN(h->scratch, pod *, nodes[i]->npods ? nodes[i]->npods : 1);
  }
  usage_job j = {r, nodes, out};
  par_halves(n, model_nodes_half_pods(nodes, n), 256, usage_part, &j);
}

const prom_answer *nu_prom_answer(const model *m, const char *query, bool nan_fails, dserr *err) {
  const prom_answer *a = model_find_prom_answer(m, query);
  const char *error = !a ? NULL : nan_fails && a->nan_error ? a->nan_error : a->error;
  if (!a)
    dserr_set(err, "prometheus client not initialized");
  else if (error)
    dserr_set(err, "%s", error);
  return a && !error ? a : NULL;
}

/* Why a node's actual usage cannot be trusted this cycle (policy usageSamples), or NULL; *code
 * is the metric's reason: missing, nan or stale. */
static const char *untrusted(const usage_trust *t, nu_source kind, const prom_answer *a,
                             const node *nd, const char **code, char *buf, size_t cap) {
  *code = "missing";
  if (kind == NU_METRICS_API)
    return nd->actual ? NULL : "no NodeMetrics for the node";
  const prom_sample *s = prom_answer_sample(a, nd->name);
  if (!s)
    return "no sample for the node in the query's answer";
  *code = "nan";
  if (isnan(s->value))
    return "the sample is NaN";
  *code = "stale";
  double age = a->at - s->ts;
  if (t->max_age_ns > 0 && !isnan(age) && age * 1e9 > (double)t->max_age_ns) {
    strbuf d = {0};
    duration_format(&d, t->max_age_ns);
    snprintf(buf, cap, "the sample is %.0fs old, older than maxSampleAge %s", age, sb_str(&d));
    sb_free(&d);
    return buf;
  }
  return NULL;
}

/* Leaves out of nodes (in place, order kept) those whose usage sample cannot be trusted,
 * logging each and counting it; -1 with err when more than maxMissingFraction of them are. */
static int drop_untrusted(plugin_handle *h, const usage_trust *t, nu_source kind,
                          const prom_answer *a, node **nodes, size_t n, size_t *kept,
                          dserr *err) {
  const char **why = ARENA_NEWN(h->scratch, const char *, n ? n : 1);
  size_t out = 0, first = n;
  for (size_t i = 0; i < n; i++) {
    char buf[160];
    const char *code;
    why[i] = untrusted(t, kind, a, nodes[i], &code, buf, sizeof buf);
    if (!why[i])
      continue;
    why[i] = arena_strdup(h->scratch, why[i]);
    if (first == n)
      first = i;
    out++;
    LOGV(2, &h->log, "Node left out of this cycle: its usage sample cannot be trusted",
         LSTR("node", nodes[i]->name), LSTR("reason", why[i]));
    metrics_usage_untrusted(nodes[i]->name, code);
  }
  *kept = n;
  if (!out)
    return 0;
  if ((double)out > t->max_missing * (double)n)
    return dserr_set(err,
                     "%zu of %zu nodes have no usable usage sample, more than maxMissingFraction "
                     "%g allows (%s: %s); nothing is evicted",
                     out, n, t->max_missing, nodes[first]->name, why[first]);
  LOGV(0, &h->log, "Nodes left out of this cycle: their usage samples cannot be trusted",
       LUINT("leftOut", out), LUINT("nodes", n), LSTR("first", nodes[first]->name),
       LSTR("reason", why[first]));
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    if (!why[i]) {
      nodes[k++] = nodes[i];
      continue;
    }
    fw_note_category(h, nodes[i], "left out (no usable usage sample)");
    fw_note_node_why(h, nodes[i], why[i], NULL);
  }
  *kept = k;
  return 0;
}

nu_node *nu_compute(plugin_handle *h, const nu_resources *r, node **nodes, size_t n,
                    const nu_usage *src, size_t *nout, dserr *err) {
  nu_source kind = src ? src->kind : NU_REQUESTS;
  const prom_answer *answer = NULL;
  const usage_trust *trust = fw_usage_trust(h);
  bool skip = kind != NU_REQUESTS && trust->skip_nodes;
  *nout = n;
  if (kind == NU_METRICS_API && !h->m->node_metrics_read) {
    dserr_set(err, "metrics client not initialized");
    return NULL;
  }
  if (kind == NU_PROMETHEUS && !(answer = nu_prom_answer(h->m, src->query, !skip, err)))
    return NULL;
  if (skip) {
    /* a copy: the cycle's node list stays whole for the other plugins */
    node **mine = ARENA_NEWN(h->scratch, node *, n ? n : 1);
    memcpy(mine, nodes, n * sizeof *mine);
    if (drop_untrusted(h, trust, kind, answer, mine, n, nout, err) < 0)
      return NULL;
    nodes = mine;
    n = *nout;
  }
  nu_node *out = ARENA_NEWN(h->scratch, nu_node, n ? n : 1);
  if (kind == NU_REQUESTS) {
    requests_usage_all(h, r, nodes, n, out);
    return out;
  }
  for (size_t i = 0; i < n; i++) {
    nu_node *nn = &out[i];
    nn->node = nodes[i];
    nn->pods = fw_node_pods(h, nodes[i], true, &nn->npods);
    int rc = 0;
    if (kind == NU_PROMETHEUS)
      rc = nu_prom_node_usage(answer, r, nn, err);
    else if (kind == NU_METRICS_API)
      rc = metrics_api_node_usage(r, nn, err);
    else
      requests_node_usage(r, nn);
    if (rc < 0)
      return NULL;
  }
  return out;
}

void nu_assess_thresholds(arena *a, const pct_map *thresholds, const pct_map *target,
                          bool deviation, const nu_resources *r, const nu_node *nodes, size_t n,
                          pct_map *low, pct_map *high, double *avg) {
  if (!deviation) {
    *low = *thresholds;
    *high = *target;
    return;
  }
  size_t k = thresholds->n;
  low->set = high->set = true;
  low->n = high->n = k;
  low->keys = high->keys = thresholds->keys;
  low->values = ARENA_NEWN(a, double, k ? k : 1);
  high->values = ARENA_NEWN(a, double, k ? k : 1);
  for (size_t t = 0; t < k; t++) {
    int j = nu_index(r, thresholds->keys[t]);
    double sum = 0;
    size_t cnt = 0;
    for (size_t i = 0; i < n && j >= 0; i++)
      if (nodes[i].has_pct[j]) {
        sum += nodes[i].pct[j];
        cnt++;
      }
    double mean = cnt ? sum / (double)cnt : 0;
    double up = 0;
    for (size_t u = 0; u < target->n; u++)
      if (strcmp(target->keys[u], thresholds->keys[t]) == 0)
        up = target->values[u];
    double lo = mean - thresholds->values[t], hi = mean + up;
    low->values[t] = lo < 0 ? 0 : lo > 100 ? 100 : lo;
    high->values[t] = hi < 0 ? 0 : hi > 100 ? 100 : hi;
    if (avg)
      avg[t] = mean;
  }
}

static double pct_of(const nu_resources *r, const nu_node *nn, const char *name) {
  int j = nu_index(r, name);
  return j >= 0 && nn->has_pct[j] ? nn->pct[j] : 0;
}

bool nu_below(const nu_resources *r, const nu_node *nn, const pct_map *low) {
  for (size_t t = 0; t < low->n; t++)
    if (!(pct_of(r, nn, low->keys[t]) <= low->values[t]))
      return false;
  return true;
}

bool nu_above(const nu_resources *r, const nu_node *nn, const pct_map *high) {
  for (size_t t = 0; t < high->n; t++)
    if (pct_of(r, nn, high->keys[t]) > high->values[t])
      return true;
  return false;
}

/* "cpu 20.00% memory 30.00%" */
static void pct_list(strbuf *sb, const pct_map *m) {
  for (size_t t = 0; t < m->n; t++)
    sb_printf(sb, "%s%s %.2f%%", t ? " " : "", m->keys[t], m->values[t]);
}

const char *nu_thresholds_text(plugin_handle *h, const pct_map *low, const pct_map *high) {
  if (!fw_recording(h) || (!low && !high))
    return NULL;
  strbuf thr = {0};
  if (low) {
    sb_append(&thr, "low ");
    pct_list(&thr, low);
  }
  if (high) {
    sb_append(&thr, low ? "; high " : "high ");
    pct_list(&thr, high);
  }
  char *text = arena_strdup(h->scratch, sb_str(&thr));
  sb_free(&thr);
  return text;
}

void nu_note_why(plugin_handle *h, const nu_resources *r, const nu_node *nn, const pct_map *low,
                 const pct_map *high, const char *thresholds, const char *category) {
  if (!fw_recording(h))
    return;
  strbuf why = {0};
  /* over: the first resource above the high threshold (HighNodeUtilization, which has only
   * one map: above the low one) */
  const pct_map *over = high ? high : low;
  if (!strcmp(category, "overutilized") && over) {
    for (size_t t = 0; t < over->n; t++)
      if (pct_of(r, nn, over->keys[t]) > over->values[t]) {
        sb_printf(&why, "%s %.2f%% > %.2f%%", over->keys[t], pct_of(r, nn, over->keys[t]),
                  over->values[t]);
        break;
      }
  } else if (!strcmp(category, "underutilized") && low) {
    for (size_t t = 0; t < low->n; t++)
      sb_printf(&why, "%s%s %.2f%% <= %.2f%%", t ? ", " : "", low->keys[t],
                pct_of(r, nn, low->keys[t]), low->values[t]);
  } else if (nn->node->unschedulable) {
    sb_append(&why, "unschedulable, so never a destination");
  } else {
    sb_append(&why, "above the low and at or below the high thresholds");
  }
  fw_note_node_why(h, nn->node, sb_str(&why), thresholds);
  const char *names[NU_MAX_RES];
  double pcts[NU_MAX_RES];
  size_t k = 0;
  for (size_t j = 0; j < r->n; j++)
    if (nn->has_pct[j]) {
      names[k] = r->names[j];
      pcts[k++] = nn->pct[j];
    }
  fw_note_node_usage(h, nn->node, names, pcts, k);
  for (size_t t = 0; low && t < low->n; t++) {
    bool f = false;
    double hv = 0;
    for (size_t k = 0; high && k < high->n; k++)
      if (!strcmp(high->keys[k], low->keys[t]))
        hv = high->values[k], f = true;
    fw_note_node_threshold(h, nn->node, low->keys[t], low->values[t], f ? hv : low->values[t]);
  }
  sb_free(&why);
}

void nu_set_caps(nu_node *nn, const nu_resources *r, const pct_map *high) {
  for (size_t j = 0; j < r->n; j++) {
    if (!nn->has_capacity[j]) {
      nn->cap[j] = 0;
      continue;
    }
    int k = -1;
    for (size_t t = 0; t < high->n; t++)
      if (strcmp(high->keys[t], r->names[j]) == 0)
        k = (int)t;
    if (k < 0)
      nn->cap[j] = nn->capacity[j];
    else
      nn->cap[j] = (int64_t)(high->values[k] * 0.01 * (double)nn->capacity[j]);
  }
}

/* upstream's validateThresholds (pkg/framework/plugins/nodeutilization/validation.go) */
int nu_validate_thresholds(const pct_map *m, dserr *err) {
  if (m->n == 0)
    return dserr_set(err, "no resource threshold is configured");
  for (size_t i = 0; i < m->n; i++)
    if (m->values[i] < 0 || m->values[i] > 100)
      return dserr_set(err, "%s threshold not in [0, 100] range", m->keys[i]);
  return 0;
}

int64_t nu_usage_sum(const nu_resources *r, const nu_node *nn) {
  int64_t s = 0;
  for (size_t j = 0; j < r->n; j++)
    s = quantity_add(s, nn->usage[j]);
  return s;
}

typedef struct {
  nu_node *n;
  int64_t key;
  size_t pos;
} keyed_node;

static int cmp_keyed_asc(const void *a, const void *b) {
  const keyed_node *x = a, *y = b;
  if (x->key != y->key)
    return x->key < y->key ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static int cmp_keyed_desc(const void *a, const void *b) {
  const keyed_node *x = a, *y = b;
  if (x->key != y->key)
    return x->key > y->key ? -1 : 1;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

void nu_sort_by_usage(plugin_handle *h, const nu_resources *r, nu_node **nodes, size_t n,
                      bool descending) {
  keyed_node *k = ARENA_NEWN(h->scratch, keyed_node, n ? n : 1);
  for (size_t i = 0; i < n; i++)
    k[i] = (keyed_node){nodes[i], nu_usage_sum(r, nodes[i]), i};
  qsort(k, n, sizeof *k, descending ? cmp_keyed_desc : cmp_keyed_asc);
  for (size_t i = 0; i < n; i++)
    nodes[i] = k[i].n;
}

bool nu_nothing_to_do(plugin_handle *h, size_t nunder, size_t nnodes, int64_t number_of_nodes) {
  if (nunder == 0) {
    LOGV(1, &h->log,
         "No node is underutilized, nothing to do here, you might tune your thresholds further");
    return true;
  }
  if ((int64_t)nunder <= number_of_nodes) {
    LOGV(1, &h->log,
         "Number of nodes underutilized is less or equal than NumberOfNodes, nothing to do here",
         LUINT("underutilizedNodes", nunder), LINT("numberOfNodes", number_of_nodes));
    return true;
  }
  if (nunder == nnodes) {
    LOGV(1, &h->log, "All nodes are underutilized, nothing to do here");
    return true;
  }
  return false;
}

/* ---------- log renderings ---------- */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* resource indexes in Go's JSON map order (sorted keys) */
static size_t sorted_indexes(const nu_resources *r, size_t *idx) {
  const char *names[NU_MAX_RES];
  memcpy(names, r->names, r->n * sizeof *names);
  qsort(names, r->n, sizeof *names, cmp_str);
  for (size_t i = 0; i < r->n; i++)
    idx[i] = (size_t)nu_index(r, names[i]);
  return r->n;
}

static void format_quantity(strbuf *sb, const char *name, int64_t scaled) {
  if (is_cpu(name))
    quantity_format_decimal(sb, scaled);
  else if (strcmp(name, "memory") == 0)
    quantity_format_binary(sb, scaled);
  else
    quantity_format_decimal(sb, scaled * 1000);
}

const char *nu_usage_json(plugin_handle *h, const nu_resources *r, const int64_t *usage) {
  size_t idx[NU_MAX_RES];
  size_t n = sorted_indexes(r, idx);
  strbuf sb = {0};
  sb_appendc(&sb, '{');
  for (size_t i = 0; i < n; i++) {
    size_t j = idx[i];
    if (i)
      sb_appendc(&sb, ',');
    sb_append_json_str(&sb, r->names[j]);
    sb_append(&sb, ":\"");
    format_quantity(&sb, r->names[j], usage[j]);
    sb_appendc(&sb, '"');
  }
  sb_appendc(&sb, '}');
  char *s = arena_strdup(h->scratch, sb_str(&sb));
  sb_free(&sb);
  return s;
}

/* A percentage rounded to two decimals (half away from zero), as Go's JSON writes it: the
 * shortest form of that double (sb_append_json_double). Below 1e9 the rounded double is the
 * one nearest k/100 for the integer k = round(v * 100), and no decimal with fewer significant
 * digits reads back as it (those are other multiples of 0.01, far more than a double's spacing
 * apart), so k/100 written with at most two decimals, trailing zeros left out, is that shortest
 * form ("%.2f" of it, trimmed), found without sb_append_json_double's trial printings or printf
 * (this runs for every node of a cycle). A negative zero keeps its sign, as "%.2f" does. */
void nu_format_pct(strbuf *sb, double v) {
  double k = round(v * 100), x = k / 100;
  if (!(fabs(x) < 1e9)) {
    sb_append_json_double(sb, x);
    return;
  }
  long long a = llabs((long long)k);
  if (signbit(x))
    sb_appendc(sb, '-');
  sb_append_int(sb, a / 100);
  int frac = (int)(a % 100);
  if (frac) {
    sb_appendc(sb, '.');
    sb_appendc(sb, (char)('0' + frac / 10));
    if (frac % 10)
      sb_appendc(sb, (char)('0' + frac % 10));
  }
}

const char *nu_pct_json(plugin_handle *h, const nu_resources *r, const nu_node *nn) {
  size_t idx[NU_MAX_RES];
  size_t n = sorted_indexes(r, idx);
  strbuf sb = {0};
  sb_appendc(&sb, '{');
  int first = 1;
  for (size_t i = 0; i < n; i++) {
    size_t j = idx[i];
    if (!nn->has_pct[j])
      continue;
    if (!first)
      sb_appendc(&sb, ',');
    first = 0;
    sb_append_json_str(&sb, r->names[j]);
    sb_appendc(&sb, ':');
    nu_format_pct(&sb, nn->pct[j]);
  }
  sb_appendc(&sb, '}');
  char *s = arena_strdup(h->scratch, sb_str(&sb));
  sb_free(&sb);
  return s;
}

const char *nu_pct_str(plugin_handle *h, double v) {
  char buf[64];
  snprintf(buf, sizeof buf, "%.2f%%", v);
  return arena_strdup(h->scratch, buf);
}

void nu_log_classified(plugin_handle *h, const nu_resources *r, const nu_node *nn,
                       const char *category) {
  fw_note_category(h, nn->node, category);
  LOGV(0, &h->log, "Node has been classified", LSTR("category", category),
       LSTR("node", nn->node->name), LJSON("usage", nu_usage_json(h, r, nn->usage)),
       LJSON("usagePercentage", nu_pct_json(h, r, nn)));
}

void nu_log_criteria(plugin_handle *h, const char *msg, const pct_map *m) {
  if (!LOG_ON(1))
    return;
  log_field f[NU_MAX_RES];
  size_t k = 0;
  for (size_t i = 0; i < m->n && k < NU_MAX_RES; i++)
    f[k++] = LSTR(m->keys[i], nu_pct_str(h, m->values[i]));
  log_write('I', 1, __FILE__, __LINE__, msg, NULL, &h->log, f, k);
}

/* ---------- eviction engine ---------- */

/* The pod tolerates every taint of at least one destination (any effect). */
static bool tolerates_some_destination(const nu_plan *plan, const pod *p) {
  for (size_t d = 0; d < plan->ndests; d++) {
    const node *n = plan->dests[d]->node;
    if (n->ntaints > p->ntolerations)
      continue;
    bool all = true;
    for (size_t t = 0; t < n->ntaints && all; t++)
      all = pod_tolerates_taint(p, &n->taints[t]);
    if (all)
      return true;
  }
  return false;
}

static void log_updated_usage(const nu_resources *r, const nu_node *src) {
  if (!LOG_ON(3))
    return;
  log_field f[NU_MAX_RES + 1];
  size_t k = 0;
  f[k++] = LSTR("node", src->node->name);
  strbuf vals[NU_MAX_RES] = {{0}};
  for (size_t j = 0; j < r->n; j++) {
    const char *name = r->names[j];
    const char *key = is_cpu(name)              ? "CPU"
                      : !strcmp(name, "memory") ? "Mem"
                      : !strcmp(name, "pods")   ? "Pods"
                                                : name;
    format_quantity(&vals[j], name, src->usage[j]);
    f[k++] = LSTR(key, sb_str(&vals[j]));
  }
  log_write('I', 3, __FILE__, __LINE__, "Updated node usage", NULL, NULL, f, k);
  for (size_t j = 0; j < r->n; j++)
    sb_free(&vals[j]);
}

static void log_total_capacity(const nu_resources *r, const int64_t *avail) {
  if (!LOG_ON(1))
    return;
  log_field f[NU_MAX_RES];
  size_t k = 0;
  static const char *order[] = {"cpu", "memory", "pods"};
  static const char *keys[] = {"CPU", "Mem", "Pods"};
  for (size_t b = 0; b < 3; b++) {
    int j = nu_index(r, order[b]);
    if (j >= 0)
      f[k++] = LINT(keys[b], avail[j]);
  }
  for (size_t j = 0; j < r->n; j++)
    if (strcmp(r->names[j], "cpu") && strcmp(r->names[j], "memory") && strcmp(r->names[j], "pods"))
      f[k++] = LINT(r->names[j], avail[j]);
  log_write('I', 1, __FILE__, __LINE__, "Total capacity to be moved", NULL, NULL, f, k);
}

/* A pod's usage for the source's bookkeeping: 0 with usage[], 1 when the source has no
 * per-pod figure (Prometheus: "unconstrained" eviction), -1 with err when it cannot be had
 * (the pod is skipped, as upstream skips it). */
static int nu_pod_usage(plugin_handle *h, const nu_plan *plan, const pod *p, int64_t *usage,
                        dserr *err) {
  const nu_resources *r = plan->res;
  nu_source kind = plan->usage ? plan->usage->kind : NU_REQUESTS;
  if (kind == NU_PROMETHEUS)
    return 1;
  if (kind == NU_REQUESTS) {
    for (size_t j = 0; j < r->n; j++)
      usage[j] = nu_pod_request(p, r->names[j]);
    return 0;
  }
  /* metrics.k8s.io PodMetrics, summed over containers (usageclients.go, podUsage) */
  if (h->m->pod_metrics_error || !h->m->pod_metrics_read)
    return dserr_set(err, "unable to get podmetrics for \"%s\"/\"%s\": %s", p->ns, p->name,
                     h->m->pod_metrics_error ? h->m->pod_metrics_error : "no PodMetrics were read");
  if (!p->metrics)
    return dserr_set(err,
                     "unable to get podmetrics for \"%s\"/\"%s\": podmetrics.metrics.k8s.io "
                     "\"%s\" not found",
                     p->ns, p->name, p->name);
  int64_t milli[NU_MAX_RES] = {0};
  for (size_t c = 0; c < p->metrics->ncontainers; c++) {
    const container_usage *cu = &p->metrics->containers[c];
    for (size_t j = 0; j < r->n; j++) {
      if (strcmp(r->names[j], "pods") == 0)
        continue;
      bool found;
      int64_t v = res_get(&cu->usage, r->names[j], &found);
      if (!found)
        return dserr_set(err, "pod %s/%s: container \"%s\" is missing \"%s\" resource", p->ns,
                         p->name, cu->name, r->names[j]);
      milli[j] = quantity_add(milli[j], v);
    }
  }
  for (size_t j = 0; j < r->n; j++)
    usage[j] = is_cpu(r->names[j]) ? milli[j] : quantity_units(milli[j]);
  return 0;
}

/* ---------- targeted moves: the destination of a VM ---------- */

/* A node's CPU allocatable in millicores (0 when it gives none). */
static int64_t cpu_alloc(const node *n) {
  bool found;
  int64_t v = res_get(&n->allocatable, RES_CPU, &found);
  return found ? v : 0;
}

/* With Prometheus the usage is one value per node (MetricResource) and none per pod: a VM's
 * share of its node's value is estimated by its share of the CPU its node's pods request.
 * The estimate is exact for a VM alone on its node and for VMs of one load; it is what keeps a
 * VM hot enough to heat any node from being moved at all (docs/vm-safety.md). */
static void estimate_share(const nu_resources *r, const nu_node *src, const pod *p,
                           int64_t *usage) {
  int64_t mine = nu_pod_request(p, "cpu"), all = 0;
  for (size_t i = 0; i < src->npods; i++)
    all += nu_pod_request(src->pods[i], "cpu");
  for (size_t j = 0; j < r->n; j++)
    usage[j] = all > 0 ? (int64_t)((double)src->usage[j] * (double)mine / (double)all) : 0;
}

/* p's usage as the destination would see it: MetricResource is a share of a node, so a VM's
 * share of src weighs src's CPU over dest's; other resources are absolute. */
static void usage_at(const nu_resources *r, const nu_node *src, const nu_node *dest,
                     const int64_t *usage, bool shares, int64_t *out) {
  int64_t cs = cpu_alloc(src->node), cd = cpu_alloc(dest->node);
  for (size_t j = 0; j < r->n; j++)
    out[j] = shares && cs > 0 && cd > 0 ? (int64_t)((double)usage[j] * (double)cs / (double)cd)
                                        : usage[j];
}

static double pct_with(const nu_node *nn, size_t j, int64_t delta) {
  if (!nn->has_capacity[j] || nn->capacity[j] <= 0)
    return 0;
  return (double)(nn->usage[j] + delta) * 100.0 / (double)nn->capacity[j];
}

/* The plugin's imbalance: the largest, over its resources, standard deviation of its nodes'
 * usage percentages (population; in percentage points). The spread's other measure, max - min,
 * does not fall when one of two equally hot nodes gives a VM to one of two empty ones; the
 * standard deviation falls with every move from above the mean to below it. The sums are taken
 * once per choice (spread_of), and a candidate move changes two terms of them (spread_after). */
typedef struct {
  double sum[NU_MAX_RES], sq[NU_MAX_RES];
  size_t k[NU_MAX_RES];
} spread;

static double spread_sd(const spread *s, size_t j, double sum, double sq) {
  if (!s->k[j])
    return 0;
  double mean = sum / (double)s->k[j], var = sq / (double)s->k[j] - mean * mean;
  return var > 0 ? sqrt(var) : 0;
}

static bool spread_counts(const nu_resources *r, size_t j) {
  return strcmp(r->names[j], "pods") != 0; /* a VM is one pod wherever it runs */
}

static double spread_of(const nu_plan *plan, spread *s) {
  const nu_resources *r = plan->res;
  double worst = 0;
  memset(s, 0, sizeof *s);
  for (size_t j = 0; j < r->n; j++) {
    if (!spread_counts(r, j))
      continue;
    for (size_t i = 0; i < plan->nall; i++) {
      const nu_node *nn = &plan->all[i];
      if (!nn->has_capacity[j])
        continue;
      double v = pct_with(nn, j, 0);
      s->sum[j] += v;
      s->sq[j] += v * v;
      s->k[j]++;
    }
    double sd = spread_sd(s, j, s->sum[j], s->sq[j]);
    worst = sd > worst ? sd : worst;
  }
  return worst;
}

/* The imbalance once src gives src_delta and dest takes dest_delta (both of the plan's nodes). */
static double spread_after(const nu_plan *plan, const spread *s, const nu_node *src,
                           const int64_t *src_delta, const nu_node *dest,
                           const int64_t *dest_delta) {
  const nu_resources *r = plan->res;
  double worst = 0;
  for (size_t j = 0; j < r->n; j++) {
    if (!spread_counts(r, j))
      continue;
    double sum = s->sum[j], sq = s->sq[j];
    if (src->has_capacity[j]) {
      double a = pct_with(src, j, 0), b = pct_with(src, j, -src_delta[j]);
      sum += b - a;
      sq += b * b - a * a;
    }
    if (dest->has_capacity[j]) {
      double a = pct_with(dest, j, 0), b = pct_with(dest, j, dest_delta[j]);
      sum += b - a;
      sq += b * b - a * a;
    }
    double sd = spread_sd(s, j, sum, sq);
    worst = sd > worst ? sd : worst;
  }
  return worst;
}

/* The destination of a targeted move of p off src, or NULL with why. A candidate is one of the
 * plan's destinations (the plugin's underutilized nodes) that
 *  - fits p as upstream's NodeFit sees it (schedulable, selector and affinity, taints, room);
 *  - stays at or below its high threshold on every resource with p's usage added (the usage
 *    the plugin classified by; this cycle's earlier moves to it included);
 *  - has room in the inbound limit (moves to it this cycle);
 * and, with minImprovement, the move takes more than that many points off the imbalance. Of the
 * candidates, the one whose highest usage percentage after the move is lowest wins; equal
 * ones keep the destinations' order (name order). */
static nu_node *choose_destination(plugin_handle *h, const nu_plan *plan, const nu_node *src,
                                   const pod *p, const int64_t *usage, bool shares,
                                   char *why, size_t cap) {
  const nu_resources *r = plan->res;
  nu_node *best = NULL;
  double best_peak = INFINITY;
  size_t unfit = 0, full = 0, inbound = 0, weak = 0;
  const char *unfit_why = NULL, *full_res = NULL;
  bool check = plan->moves->check_improvement;
  spread sp;
  double before = check ? spread_of(plan, &sp) : 0;
  double best_gain = -INFINITY;
  for (size_t d = 0; d < plan->ndests; d++) {
    nu_node *dn = plan->dests[d];
    if (dn->node == src->node)
      continue;
    const char *misfit = node_fit(h, p, dn->node);
    if (misfit) {
      unfit++;
      unfit_why = unfit_why ? unfit_why : misfit;
      continue;
    }
    if (fw_cycle_inbound(h, dn->node) >= plan->moves->max_inbound) {
      inbound++;
      continue;
    }
    int64_t add[NU_MAX_RES];
    usage_at(r, src, dn, usage, shares, add);
    bool over = false;
    double peak = 0;
    for (size_t j = 0; j < r->n; j++) {
      if (!dn->has_capacity[j])
        continue;
      if (dn->usage[j] + add[j] > dn->cap[j]) {
        over = true;
        full_res = full_res ? full_res : r->names[j];
      }
      double v = pct_with(dn, j, add[j]);
      peak = v > peak ? v : peak;
    }
    if (over) {
      full++;
      continue;
    }
    if (check) {
      double gain = before - spread_after(plan, &sp, src, usage, dn, add);
      best_gain = gain > best_gain ? gain : best_gain;
      if (!(gain > plan->moves->min_improvement)) {
        weak++;
        continue;
      }
    }
    if (peak < best_peak) {
      best = dn;
      best_peak = peak;
    }
  }
  if (best) {
    snprintf(why, cap, "%s: the lowest usage after the move (%.2f%%) of %zu destination%s",
             best->node->name, best_peak, plan->ndests, plan->ndests == 1 ? "" : "s");
    return best;
  }
  strbuf sb = {0};
  sb_printf(&sb, "no destination for a targeted move among %zu underutilized node%s", plan->ndests,
            plan->ndests == 1 ? "" : "s");
  if (unfit)
    sb_printf(&sb, "; %zu do not fit the pod (%s)", unfit, unfit_why);
  if (inbound)
    sb_printf(&sb, "; %zu reached maxInboundPerNode (%llu)", inbound,
              (unsigned long long)plan->moves->max_inbound);
  if (full)
    sb_printf(&sb, "; %zu would be overutilized after the move (%s)", full, full_res);
  if (weak)
    sb_printf(&sb, "; %zu would take no more than minImprovement (%g points) off the imbalance "
                   "(at best %.2f)",
              weak, plan->moves->min_improvement, best_gain);
  snprintf(why, cap, "%s", sb_str(&sb));
  sb_free(&sb);
  return NULL;
}

typedef enum { NODE_NEXT, PLUGIN_STOP } drain_result;

/* the removable pods from..n stay: the node (or the destinations' room) reached the target */
static void note_rest_at_target(plugin_handle *h, pod **removable, size_t from, size_t n) {
  for (size_t k = from; k < n; k++)
    fw_note_node_at_target(h, removable[k]);
}

static drain_result drain_node(plugin_handle *h, const nu_plan *plan, nu_node *src,
                               int64_t *avail) {
  const nu_resources *r = plan->res;
  char ref[512];
  LOGV(3, NULL, "Evicting pods from node", LSTR("node", src->node->name),
       LJSON("usage", nu_usage_json(h, r, src->usage)));
  pod **removable = ARENA_NEWN(h->scratch, pod *, src->npods ? src->npods : 1);
  size_t nrem = 0;
  for (size_t i = 0; i < src->npods; i++)
    if (plan->pod_filter(h, plan->filter_ctx, src->pods[i]))
      removable[nrem++] = src->pods[i];
  LOGV(2, NULL, "Pods on node", LSTR("node", src->node->name), LUINT("allPods", src->npods),
       LUINT("nonRemovablePods", src->npods - nrem), LUINT("removablePods", nrem));
  if (nrem == 0) {
    LOGV(1, &h->log, "No removable pods on node, try next node", LSTR("node", src->node->name));
    return NODE_NEXT;
  }
  LOGV(1, &h->log,
       "Evicting pods based on priority, if they have same priority, they'll be evicted based on "
       "QoS tiers");
  pods_sort_priority_low_to_high(removable, nrem);
  if (!plan->cont(r, src, avail)) {
    note_rest_at_target(h, removable, 0, nrem);
    return NODE_NEXT;
  }
  uint64_t count = 0;
  for (size_t i = 0; i < nrem; i++) {
    pod *p = removable[i];
    if (plan->node_limit.set && count >= plan->node_limit.v) {
      LOGV(3, &h->log, "Max number of evictions per node per plugin reached",
           LUINT("limit", plan->node_limit.v));
      char why[128];
      snprintf(why, sizeof why, "evictionLimits.node of the plugin reached (%llu)",
               (unsigned long long)plan->node_limit.v);
      for (size_t k = i; k < nrem; k++)
        fw_note_plugin_limit(h, removable[k], why);
      return NODE_NEXT;
    }
    if (!tolerates_some_destination(plan, p)) {
      LOGV(3, &h->log, "Skipping eviction for pod, doesn't tolerate node taint",
           LSTR("pod", pod_ref(p, ref, sizeof ref)));
      continue;
    }
    if (plan->excluded && plan->excluded->exclude.n &&
        str_list_contains(&plan->excluded->exclude, p->ns))
      continue;
    if (!fw_pre_eviction_filter(h, p))
      continue;
    int64_t pod_usage[NU_MAX_RES];
    dserr uerr;
    int urc = nu_pod_usage(h, plan, p, pod_usage, &uerr);
    if (urc < 0) {
      LOGE(&h->log, "unable to get pod usage", uerr.msg, LSTR("pod", pod_ref(p, ref, sizeof ref)));
      continue;
    }
    bool unconstrained = urc == 1;
    nu_node *dest = NULL;
    int64_t dest_usage[NU_MAX_RES];
    char why[1024];
    if (plan->moves && plan->moves->targeted && kubevirt_is_launcher(p)) {
      if (unconstrained)
        estimate_share(r, src, p, pod_usage);
      dest = choose_destination(h, plan, src, p, pod_usage, unconstrained, why, sizeof why);
      if (!dest) {
        LOGV(2, &h->log, "No destination for a targeted move: the VM stays",
             LSTR("pod", pod_ref(p, ref, sizeof ref)), LSTR("reason", why));
        fw_note_no_move(h, p, why);
        continue;
      }
      LOGV(3, &h->log, "Destination chosen for a targeted move",
           LSTR("pod", pod_ref(p, ref, sizeof ref)), LSTR("to", dest->node->name),
           LSTR("reason", why));
      usage_at(r, src, dest, pod_usage, unconstrained, dest_usage);
    }
    evict_status st = dest ? fw_migrate(h, p, dest->node, "", why) : fw_evict(h, p, "");
    if (st == EVICT_LIMIT_NODE || st == EVICT_LIMIT_TOTAL) {
      /* upstream's evictPods returns on these two: the node's other pods get no turn */
      for (size_t k = i + 1; k < nrem; k++)
        fw_note_limit_stop(h, removable[k], st);
      return st == EVICT_LIMIT_NODE ? NODE_NEXT : PLUGIN_STOP;
    }
    if (st == EVICT_VETOED)
      continue;
    if (st != EVICT_OK) {
      LOGE(&h->log, "eviction failed", "the pod could not be evicted",
           LSTR("pod", pod_ref(p, ref, sizeof ref)));
      continue;
    }
    /* the destination carries the VM from now on, for the next choices of this cycle (and,
     * where the usage has no per-pod figures, the source no longer does by the estimate) */
    if (dest)
      for (size_t j = 0; j < r->n; j++) {
        dest->usage[j] =
            quantity_add(dest->usage[j], strcmp(r->names[j], "pods") ? dest_usage[j] : 1);
        if (unconstrained)
          src->usage[j] = quantity_sub(src->usage[j], pod_usage[j]);
      }
    /* a usage without per-pod figures (Prometheus): upstream moves one pod per node unless
     * evictionLimits.node allows more, and then without re-checking the node */
    if (unconstrained && !plan->node_limit.set) {
      LOGV(3, &h->log, "Currently, only a single pod eviction is allowed");
      return NODE_NEXT;
    }
    count++;
    LOGV(3, &h->log, "Evicted pods", LSTR("pod", pod_ref(p, ref, sizeof ref)));
    if (unconstrained)
      continue;
    for (size_t j = 0; j < r->n; j++) {
      int64_t d = strcmp(r->names[j], "pods") == 0 ? 1 : pod_usage[j];
      src->usage[j] = quantity_sub(src->usage[j], d);
      avail[j] = quantity_sub(avail[j], d);
    }
    log_updated_usage(r, src);
    if (!plan->cont(r, src, avail)) {
      note_rest_at_target(h, removable, i + 1, nrem);
      return NODE_NEXT;
    }
  }
  return NODE_NEXT;
}

int nu_evict(plugin_handle *h, const nu_plan *plan, dserr *err) {
  (void)err;
  const nu_resources *r = plan->res;
  int64_t avail[NU_MAX_RES] = {0};
  for (size_t d = 0; d < plan->ndests; d++)
    for (size_t j = 0; j < r->n; j++)
      avail[j] =
          quantity_add(avail[j], quantity_sub(plan->dests[d]->cap[j], plan->dests[d]->usage[j]));
  log_total_capacity(r, avail);
  for (size_t s = 0; s < plan->nsources; s++)
    if (drain_node(h, plan, plan->sources[s], avail) == PLUGIN_STOP)
      break;
  return 0;
}
