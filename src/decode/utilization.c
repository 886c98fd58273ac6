/* utilization.c - actual utilization into the model: Prometheus instant-query answers and
 * metrics.k8s.io NodeMetrics / PodMetrics lists (decode.h).
 *
 * A Prometheus answer is checked here, once, the way upstream's Prometheus usage client
 * checks it (sigs.k8s.io/descheduler pkg/framework/plugins/nodeutilization/usageclients.go,
 * NodeUsageFromPrometheusMetrics): an error answer, a result that is not a vector, a sample
 * without an `instance` label or with a value outside [0, 1] leave the answer with upstream's
 * error text and no samples, so every plugin reading it reports the same reason and evicts
 * nothing. A response that is not the Prometheus HTTP API's JSON at all is a decode error
 * naming the field (simulate exits 2 on it; live mode reports it as a bad response).
 *
 * Samples are kept sorted by instance with duplicates resolved as upstream's map does (the
 * last sample of an instance wins), so lookups by node name are a binary search. */
#include "decode.h"

#include "../obs/log.h"
#include "../util/strbuf.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *model_printf(model *m, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static const char *model_printf(model *m, const char *fmt, ...) {
  strbuf sb = {0};
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  const char *s = arena_strdup(m->mem, sb_str(&sb));
  sb_free(&sb);
  return s;
}

/* Go's strconv.ParseFloat for a sample value: the whole text must be a number (NaN and
 * infinities included). */
static int parse_sample_value(const char *text, double *out) {
  if (!*text || text[0] == ' ' || text[0] == '\t' || text[0] == '\n')
    return -1;
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (*end || (errno == ERANGE && !isinf(v) && v != 0))
    return -1;
  if (errno == ERANGE && isinf(v))
    v = v > 0 ? INFINITY : -INFINITY;
  *out = v;
  return 0;
}

typedef struct {
  const char *instance;
  double value;
  size_t pos;
} keyed_sample;

static int cmp_keyed(const void *a, const void *b) {
  const keyed_sample *x = a, *y = b;
  int c = strcmp(x->instance, y->instance);
  return c ? c : x->pos < y->pos ? -1 : x->pos > y->pos;
}

typedef struct {
  const char *instance; /* NULL: no instance label */
  double value;
  double at; /* the evaluation time */
} raw_sample;

/* Structure of one vector sample: {"metric": {labels}, "value": [<time>, "<number>"]}. */
static int read_sample(const doc_node *s, size_t i, raw_sample *out, dserr *err) {
  if (s->type != DOC_MAP)
    return dserr_set(err, "data.result[%zu]: expected a sample (a map), got %s", i,
                     doc_type_name(s->type));
  const doc_node *metric = doc_get(s, "metric"), *value = doc_get(s, "value");
  out->instance = NULL;
  if (metric && metric->type != DOC_NULL) {
    if (metric->type != DOC_MAP)
      return dserr_set(err, "data.result[%zu].metric: expected a map of labels, got %s", i,
                       doc_type_name(metric->type));
    for (size_t k = 0; k < metric->n; k++) {
      const doc_node *lv = metric->pairs[k].value;
      if (lv->type != DOC_STR)
        return dserr_set(err, "data.result[%zu].metric.%s: expected a string, got %s", i,
                         metric->pairs[k].key, doc_type_name(lv->type));
      if (strcmp(metric->pairs[k].key, "instance") == 0)
        out->instance = lv->text;
    }
  }
  if (!value || value->type != DOC_SEQ || value->n != 2 ||
      (value->items[0]->type != DOC_INT && value->items[0]->type != DOC_FLOAT) ||
      value->items[1]->type != DOC_STR)
    return dserr_set(err, "data.result[%zu].value: expected [<unix time>, \"<number>\"], got %s", i,
                     value ? doc_type_name(value->type) : "nothing");
  if (parse_sample_value(value->items[1]->text, &out->value) < 0)
    return dserr_set(err, "data.result[%zu].value[1]: \"%s\" is not a number", i,
                     value->items[1]->text);
  const doc_node *t = value->items[0];
  out->at = t->type == DOC_INT ? (double)t->v.i : t->v.f;
  return 0;
}

/* The answer's error or samples, from the data of a "success" response. */
static int read_data(model *m, prom_answer *a, const doc_node *data, dserr *err) {
  if (!data || data->type != DOC_MAP)
    return dserr_set(err, "data: expected a map with resultType and result, got %s",
                     data ? doc_type_name(data->type) : "nothing");
  const char *type = doc_str(doc_get(data, "resultType"));
  const doc_node *result = doc_get(data, "result");
  if (!type)
    return dserr_set(err, "data.resultType: expected \"vector\", \"matrix\", \"scalar\" or "
                          "\"string\"");
  if (strcmp(type, "matrix") == 0 || strcmp(type, "scalar") == 0) {
    a->error = model_printf(
        m, "expected query results to be of type \"vector\", got \"%s\" instead", type);
    return 0;
  }
  if (strcmp(type, "string") == 0) {
    a->error = "unable to capture prometheus metrics: unexpected value type \"string\"";
    return 0;
  }
  if (strcmp(type, "vector") != 0) {
    a->error =
        model_printf(m, "unable to capture prometheus metrics: unknown value type \"%s\"", type);
    return 0;
  }
  if (!result || (result->type != DOC_SEQ && result->type != DOC_NULL))
    return dserr_set(err, "data.result: expected a list of samples, got %s",
                     result ? doc_type_name(result->type) : "nothing");
  size_t n = result->type == DOC_SEQ ? result->n : 0;
  raw_sample *raw = calloc(n ? n : 1, sizeof *raw);
  if (!raw)
    abort();
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++)
    rc = read_sample(result->items[i], i, &raw[i], err);
  /* upstream's checks, in answer order: the first failing sample decides. A NaN is kept apart
   * (nan_error): the plugins either refuse the answer for it, as here before, or leave that
   * node out of the cycle (policy usageSamples; upstream lets NaN through and turns it into a
   * huge negative usage) */
  /* the samples' times (timestamp(<query>), usage.c) are seconds, not utilization */
  bool times = strncmp(a->query, "timestamp(", strlen("timestamp(")) == 0;
  for (size_t i = 0; i < n && rc == 0 && !a->error; i++) {
    const char *why = NULL;
    if (!raw[i].instance) {
      why = "the collected metrics sample is missing 'instance' key";
    } else if (!times && !(raw[i].value >= 0 && raw[i].value <= 1)) {
      strbuf v = {0};
      sb_append_go_float(&v, raw[i].value);
      why = model_printf(
          m, "the collected metrics sample for \"%s\" has value %s outside of <0; 1> interval",
          raw[i].instance, sb_str(&v));
      sb_free(&v);
    }
    if (why && !a->nan_error)
      a->nan_error = why;
    /* a sample without an instance is refused whatever its value, as upstream refuses it: it
     * names no node that could be left out */
    if (why && (!raw[i].instance || !isnan(raw[i].value)))
      a->error = why;
  }
  if (n && rc == 0)
    a->at = raw[0].at;
  if (rc == 0 && !a->error && n) {
    /* sorted by (instance, position); the last sample of an instance wins, as in a Go map */
    keyed_sample *k = malloc(n * sizeof *k);
    if (!k)
      abort();
    for (size_t i = 0; i < n; i++)
      k[i] = (keyed_sample){raw[i].instance, raw[i].value, i};
    qsort(k, n, sizeof *k, cmp_keyed);
    prom_sample *out = ARENA_NEWN(m->mem, prom_sample, n);
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
      if (kept && strcmp(out[kept - 1].instance, k[i].instance) == 0)
        kept--;
      out[kept++] = (prom_sample){intern(m->strings, k[i].instance), k[i].value, NAN};
    }
    free(k);
    a->samples = out;
    a->nsamples = kept;
  }
  free(raw);
  return rc;
}

int decode_prom_answer(model *m, const char *query, const doc_node *root, dserr *err) {
  if (!root || root->type != DOC_MAP)
    return dserr_set(err, "expected a Prometheus API response (a map with status and data), got %s",
                     root ? doc_type_name(root->type) : "nothing");
  const doc_node *status = doc_get(root, "status");
  if (!status || status->type != DOC_STR ||
      (strcmp(status->text, "success") && strcmp(status->text, "error")))
    return dserr_set(err, "status: expected \"success\" or \"error\", got %s",
                     status ? doc_describe(m->mem, status) : "nothing");
  const doc_node *warnings = doc_get(root, "warnings");
  if (warnings && warnings->type != DOC_NULL) {
    if (warnings->type != DOC_SEQ)
      return dserr_set(err, "warnings: expected a list of strings, got %s",
                       doc_type_name(warnings->type));
    strbuf w = {0};
    for (size_t i = 0; i < warnings->n; i++) {
      if (warnings->items[i]->type != DOC_STR) {
        sb_free(&w);
        return dserr_set(err, "warnings[%zu]: expected a string, got %s", i,
                         doc_type_name(warnings->items[i]->type));
      }
      sb_printf(&w, "%s%s", i ? " " : "", warnings->items[i]->text);
    }
    if (warnings->n)
      LOGV(0, NULL, "prometheus metrics warnings", LSTR("query", query),
           LSTR("warnings", sb_str(&w)));
    sb_free(&w);
  }
  prom_answer *a = ARENA_NEW(m->mem, prom_answer);
  a->query = arena_strdup(m->mem, query);
  a->at = NAN;
  if (strcmp(status->text, "error") == 0) {
    const char *type = doc_str(doc_get(root, "errorType")), *msg = doc_str(doc_get(root, "error"));
    a->error = model_printf(m, "unable to capture prometheus metrics: %s: %s", type ? type : "",
                            msg ? msg : "");
  } else if (read_data(m, a, doc_get(root, "data"), err) < 0) {
    return -1;
  }
  MODEL_PUSH(m, prom_answers, a);
  return 0;
}

int decode_prom_response(model *m, const char *query, const char *name, const char *body,
                         size_t len, dserr *err) {
  arena *tmp = arena_new(64 * 1024);
  doc_node *root = NULL;
  int rc = doc_parse_json(tmp, name, body, len, &root, err);
  if (rc == 0 && decode_prom_answer(m, query, root, err) < 0) {
    dserr_prefix(err, "%s", name);
    rc = -1;
  }
  arena_free(tmp);
  return rc;
}

void decode_prom_failure(model *m, const char *query, const char *error) {
  prom_answer *a = ARENA_NEW(m->mem, prom_answer);
  a->query = arena_strdup(m->mem, query);
  a->at = NAN;
  a->error = arena_strdup(m->mem, error);
  MODEL_PUSH(m, prom_answers, a);
}

/* ---------- --metrics files (simulate) ---------- */

typedef struct {
  model *m;
  const char *query; /* the policy's Prometheus query, NULL when it has none */
  metrics_file_info *info;
  size_t index;
} file_ctx;

/* A Prometheus HTTP API answer: `status` with `data` (success) or with `errorType` / `error` (a
 * refused query has no `data`). NodeMetrics and PodMetrics carry none of these keys. */
static bool looks_like_prom_response(const doc_node *item) {
  return doc_get(item, "status") &&
         (doc_get(item, "data") || doc_get(item, "errorType") || doc_get(item, "error"));
}

static int on_metrics_item(void *vctx, doc_node *item, dserr *err) {
  file_ctx *c = vctx;
  size_t i = c->index++;
  if (looks_like_prom_response(item)) {
    if (c->info->prometheus)
      return dserr_set(err, "a file holds one Prometheus response");
    c->info->prometheus = true;
    if (!c->query)
      return 0; /* the caller says why it is not used */
    return decode_prom_answer(c->m, c->query, item, err);
  }
  const char *kind = doc_str(doc_get(item, "kind"));
  if (!kind)
    kind = doc_get(item, "containers") ? "PodMetrics"
           : doc_get(item, "usage")    ? "NodeMetrics"
                                       : NULL;
  if (!kind || (strcmp(kind, "NodeMetrics") && strcmp(kind, "PodMetrics")))
    return dserr_set(err,
                     "items[%zu]: expected NodeMetrics or PodMetrics (kubectl get --raw "
                     "/apis/metrics.k8s.io/v1beta1/nodes or pods), got %s",
                     i, kind ? kind : "an object with neither usage nor containers");
  if (decode_object(c->m, item, kind, err) < 0) {
    const char *name = doc_str(doc_path(item, "metadata", "name", NULL));
    return dserr_prefix(err, "items[%zu] (%s %s)", i, kind, name ? name : "?");
  }
  if (strcmp(kind, "NodeMetrics") == 0)
    c->info->node_metrics++;
  else
    c->info->pod_metrics++;
  return 0;
}

int decode_metrics_file(model *m, const char *path, const char *query, metrics_file_info *info,
                        dserr *err) {
  memset(info, 0, sizeof *info);
  file_ctx c = {m, query, info, 0};
  arena *hdr = arena_new(4096);
  doc_node *header = NULL;
  int rc = doc_stream_file(path, on_metrics_item, &c, hdr, &header, err);
  if (rc == 0) {
    const char *kind = doc_str(doc_get(header, "kind"));
    if (kind && strcmp(kind, "NodeMetricsList") == 0)
      info->node_list = true;
    if (kind && strcmp(kind, "PodMetricsList") == 0)
      info->pod_list = true;
    if (!info->prometheus && !info->node_metrics && !info->pod_metrics && !info->node_list &&
        !info->pod_list)
      rc = dserr_set(err, "expected a Prometheus query response or a NodeMetricsList / "
                          "PodMetricsList, found none");
  }
  if (rc != 0 && strncmp(err->msg, path, strlen(path)) != 0)
    dserr_prefix(err, "%s", path);
  arena_free(hdr);
  return rc < 0 ? -1 : rc;
}
