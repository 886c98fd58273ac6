/* lownodeutilization.c - LowNodeUtilization (Balance), as upstream's
 * pkg/framework/plugins/nodeutilization/lownodeutilization.go.
 *
 * Classifies the cycle's nodes by requested resources: underutilized when every resource is
 * at or below `thresholds` (and the node is schedulable), overutilized when any resource is
 * above `targetThresholds`; with useDeviationThresholds both are offsets from the average.
 * Then moves pods off overutilized nodes, most used first, while they stay above target and
 * the underutilized nodes keep room. Ordering choices where upstream's is random: nodes are
 * visited by name; equal drain keys keep name order; equal-priority pods keep name order.
 *
 * With `metricsUtilization` the usage is actual utilization instead of requests, read from
 * the model (fetched before the cycle, or given to simulate as files; the plugin never
 * queries): `source: KubernetesMetrics` (or the deprecated `metricsServer: true`) takes
 * cpu and memory from metrics.k8s.io NodeMetrics and a pod's usage from its PodMetrics;
 * `source: Prometheus` takes one value in [0, 1] per node from the policy's query as the
 * resource MetricResource (0-100). A Prometheus value says nothing about single pods, so, as
 * upstream, each overutilized node gives up one pod per cycle, or up to evictionLimits.node
 * when set. Any usage error stops the plugin with upstream's message and evicts nothing. */
#include "../framework/framework.h"
#include "../framework/podutil.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"
#include "nodeutilization.h"
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  bool use_deviation;
  pct_map thresholds, target;
  int64_t number_of_nodes;
  struct {
    bool metrics_server;
    const char *source;
    struct {
      const char *query;
    } prometheus;
    bool has_prometheus;
  } metrics;
  bool has_metrics;
  ns_filter evictable_namespaces;
  struct {
    opt_uint node;
  } limits;
} lnu_args;

static const args_field prometheus_fields[] = {{"query", AF_STRING, 0}, {NULL}};
static const args_field metrics_fields[] = {
    {"metricsServer", AF_BOOL,
     offsetof(lnu_args, metrics.metrics_server) - offsetof(lnu_args, metrics)},
    {"source", AF_STRING, offsetof(lnu_args, metrics.source) - offsetof(lnu_args, metrics)},
    {"prometheus", AF_OBJECT, offsetof(lnu_args, metrics.prometheus) - offsetof(lnu_args, metrics),
     prometheus_fields, 0,
     offsetof(lnu_args, metrics.has_prometheus) - offsetof(lnu_args, metrics)},
    {NULL}};
static const args_field limits_fields[] = {{"node", AF_OPT_UINT, 0}, {NULL}};
static const args_field lnu_fields[] = {
    {"useDeviationThresholds", AF_BOOL, offsetof(lnu_args, use_deviation)},
    {"thresholds", AF_PCT_MAP, offsetof(lnu_args, thresholds)},
    {"targetThresholds", AF_PCT_MAP, offsetof(lnu_args, target)},
    {"numberOfNodes", AF_INT64, offsetof(lnu_args, number_of_nodes)},
    {"metricsUtilization", AF_OBJECT, offsetof(lnu_args, metrics), metrics_fields, 0,
     offsetof(lnu_args, has_metrics)},
    {"evictableNamespaces", AF_NAMESPACES, offsetof(lnu_args, evictable_namespaces)},
    {"evictionLimits", AF_OBJECT, offsetof(lnu_args, limits), limits_fields},
    {NULL}};

static double pct_get(const pct_map *m, const char *key, bool *found) {
  for (size_t i = 0; i < m->n; i++)
    if (strcmp(m->keys[i], key) == 0) {
      *found = true;
      return m->values[i];
    }
  *found = false;
  return 0;
}

static int lnu_validate(const void *vargs, dserr *err) {
  const lnu_args *a = vargs;
  if (a->evictable_namespaces.include.n)
    return dserr_set(err, "only Exclude namespaces can be set, inclusion is not supported");
  if (nu_validate_thresholds(&a->thresholds, err) < 0)
    return dserr_prefix(err, "thresholds config is not valid");
  if (nu_validate_thresholds(&a->target, err) < 0)
    return dserr_prefix(err, "targetThresholds config is not valid");
  bool same = a->thresholds.n == a->target.n;
  for (size_t i = 0; i < a->thresholds.n && same; i++)
    pct_get(&a->target, a->thresholds.keys[i], &same);
  if (!same)
    return dserr_set(err, "thresholds and targetThresholds configured different resources");
  if (!a->use_deviation)
    for (size_t i = 0; i < a->thresholds.n; i++) {
      bool f;
      if (a->thresholds.values[i] > pct_get(&a->target, a->thresholds.keys[i], &f))
        return dserr_set(err, "thresholds' %s percentage is greater than targetThresholds'",
                         a->thresholds.keys[i]);
    }
  if (a->has_metrics) {
    const char *src = a->metrics.source ? a->metrics.source : "";
    if (!strcmp(src, "KubernetesMetrics") && a->metrics.metrics_server)
      return dserr_set(
          err, "it is not allowed to set both \"KubernetesMetrics\" source and metricsServer");
    if (!strcmp(src, "KubernetesMetrics") && a->metrics.has_prometheus)
      return dserr_set(err, "prometheus configuration is not allowed to set when source is set to "
                            "\"KubernetesMetrics\"");
    if (!strcmp(src, "Prometheus") && (!a->metrics.has_prometheus || !a->metrics.prometheus.query ||
                                       !*a->metrics.prometheus.query))
      return dserr_set(err,
                       "prometheus query is required when metrics source is set to \"Prometheus\"");
  }
  return 0;
}

static int lnu_prepare(void *vargs, const plugin_env *env, dserr *err) {
  (void)env;
  lnu_args *a = vargs;
  if (a->has_metrics && a->metrics.source && !strcmp(a->metrics.source, "Prometheus")) {
    if (!a->metrics.has_prometheus)
      return dserr_set(err, "prometheus property is missing");
    if (!a->metrics.prometheus.query || !*a->metrics.prometheus.query)
      return dserr_set(err, "prometheus query is missing");
    const pct_map *maps[2] = {&a->thresholds, &a->target};
    const char *names[2] = {"thresholds", "targetThresholds"};
    for (int i = 0; i < 2; i++)
      if (maps[i]->n != 1 || strcmp(maps[i]->keys[0], "MetricResource") != 0) {
        strbuf got = {0};
        for (size_t k = 0; k < maps[i]->n; k++)
          sb_printf(&got, "%s%s", k ? " " : "", maps[i]->keys[k]);
        dserr_set(err,
                  "%s are expected to specify a single instance of \"MetricResource\" resource, "
                  "got [%s] instead",
                  names[i], sb_str(&got));
        sb_free(&got);
        return -1;
      }
  }
  return 0;
}

static bool lnu_pod_filter(plugin_handle *h, const void *ctx, const pod *p) {
  (void)ctx;
  return fw_filter(h, p);
}

/* C(node): above its cap on some resource, and every destination resource has room */
static bool lnu_continue(const nu_resources *r, const nu_node *src, const int64_t *avail) {
  bool over = false;
  for (size_t j = 0; j < r->n; j++)
    over |= src->usage[j] > src->cap[j];
  if (!over)
    return false;
  for (size_t j = 0; j < r->n; j++)
    if (avail[j] <= 0)
      return false;
  return true;
}

/* Threshold pairs as pct_maps over R_thr: static, or deviation from the average. */
static void thresholds_for(plugin_handle *h, const lnu_args *a, const nu_resources *r,
                           const nu_node *nodes, size_t n, pct_map *low, pct_map *high) {
  double avg[NU_MAX_RES];
  nu_assess_thresholds(h->scratch, &a->thresholds, &a->target, a->use_deviation, r, nodes, n, low,
                       high, avg);
  if (!a->use_deviation || !LOG_ON(3))
    return;
  size_t k = a->thresholds.n < NU_MAX_RES ? a->thresholds.n : NU_MAX_RES;
  log_field avgf[NU_MAX_RES], lowf[NU_MAX_RES], highf[NU_MAX_RES];
  for (size_t t = 0; t < k; t++) {
    avgf[t] = LSTR(a->thresholds.keys[t], nu_pct_str(h, avg[t]));
    lowf[t] = LSTR(a->thresholds.keys[t], nu_pct_str(h, low->values[t]));
    highf[t] = LSTR(a->thresholds.keys[t], nu_pct_str(h, high->values[t]));
  }
  log_write('I', 3, __FILE__, __LINE__, "Assessed average usage", NULL, &h->log, avgf, k);
  log_write('I', 3, __FILE__, __LINE__, "Assessed thresholds for underutilized nodes", NULL,
            &h->log, lowf, k);
  log_write('I', 3, __FILE__, __LINE__, "Assessed thresholds for overutilized nodes", NULL,
            &h->log, highf, k);
}

/* Which usage this configuration reads (upstream's usageClientForMetrics): -1 with the
 * "error initializing usage client" reason. */
static int usage_source(plugin_handle *h, const lnu_args *a, nu_usage *u, dserr *err) {
  u->kind = NU_REQUESTS;
  u->query = NULL;
  if (!a->has_metrics)
    return 0;
  const char *src = a->metrics.source ? a->metrics.source : "";
  if (a->metrics.metrics_server || !strcmp(src, "KubernetesMetrics")) {
    if (!h->m->node_metrics_read)
      return dserr_set(err, "metrics client not initialized");
    u->kind = NU_METRICS_API;
    return 0;
  }
  if (!strcmp(src, "Prometheus")) {
    if (!model_find_prom_answer(h->m, a->metrics.prometheus.query))
      return dserr_set(err, "prometheus client not initialized");
    u->kind = NU_PROMETHEUS;
    u->query = a->metrics.prometheus.query;
    return 0;
  }
  return dserr_set(err, *src ? "unrecognized metrics source" : "metrics source is empty");
}

/* VMSafety's overutilizedFor: every classified node's state goes into the cycle's history, and
 * an overutilized node is a source only once it has been so for that long. Returns how many of
 * over[] stay sources (in their order). */
static size_t hysteresis(plugin_handle *h, const vmsafety_moves *mv, nu_node *nodes, size_t n,
                         const bool *is_over_at, nu_node **over, size_t nover) {
  for (size_t i = 0; i < n; i++)
    fw_overutilized(h, nodes[i].node, is_over_at[i]);
  size_t kept = 0;
  for (size_t i = 0; i < nover; i++) {
    int64_t since = fw_overutilized(h, over[i]->node, true);
    int64_t age = h->now - since;
    if (age >= mv->overutilized_for_s) {
      over[kept++] = over[i];
      continue;
    }
    strbuf f = {0}, g = {0}, why = {0};
    duration_format(&f, (age > 0 ? age : 0) * 1000000000LL);
    duration_format(&g, mv->overutilized_for_s * 1000000000LL);
    sb_printf(&why, "overutilized for %s of VMSafety's overutilizedFor %s: not a source yet",
              sb_str(&f), sb_str(&g));
    LOGV(2, &h->log, "Node is overutilized, but not for long enough to give up pods",
         LSTR("node", over[i]->node->name), LSTR("overutilizedFor", sb_str(&f)),
         LSTR("required", sb_str(&g)));
    fw_note_node_why(h, over[i]->node, sb_str(&why), NULL);
    sb_free(&f);
    sb_free(&g);
    sb_free(&why);
  }
  return kept;
}

static void lnu_add_usage_needs(const void *vargs, usage_needs *needs) {
  const lnu_args *a = vargs;
  if (!a->has_metrics)
    return;
  const char *src = a->metrics.source ? a->metrics.source : "";
  if (a->metrics.metrics_server || !strcmp(src, "KubernetesMetrics"))
    needs->node_metrics = needs->pod_metrics = true;
  else if (!strcmp(src, "Prometheus") && a->metrics.prometheus.query)
    usage_needs_add_query(needs, a->metrics.prometheus.query);
}

static int lnu_run(plugin_handle *h, const void *vargs, dserr *err) {
  const lnu_args *a = vargs;
  nu_usage usage;
  if (usage_source(h, a, &usage, err) < 0)
    return dserr_prefix(err, "error initializing usage client");
  nu_resources r;
  nu_resources_init(&r, &a->thresholds, usage.kind == NU_PROMETHEUS);
  size_t n;
  nu_node *nodes = nu_compute(h, &r, h->nodes, h->nnodes, &usage, &n, err);
  if (!nodes)
    return dserr_prefix(err, "error getting node usage");
  pct_map low, high;
  thresholds_for(h, a, &r, nodes, n, &low, &high);

  nu_node **under = ARENA_NEWN(h->scratch, nu_node *, n);
  nu_node **over = ARENA_NEWN(h->scratch, nu_node *, n);
  bool *is_over_at = ARENA_NEWN(h->scratch, bool, n ? n : 1);
  size_t nunder = 0, nover = 0;
  const char *thr = nu_thresholds_text(h, &low, &high);
  for (size_t i = 0; i < n; i++) {
    nu_node *nn = &nodes[i];
    bool is_under = true;
    if (nn->node->unschedulable) {
      LOGV(2, &h->log, "Node is unschedulable, thus not considered as underutilized",
           LSTR("node", nn->node->name));
      is_under = false;
    }
    is_under = is_under && nu_below(&r, nn, &low);
    bool is_over = !is_under && nu_above(&r, nn, &high);
    if (is_under || is_over) {
      nu_set_caps(nn, &r, &high);
      if (is_under)
        under[nunder++] = nn;
      else
        over[nover++] = nn;
      is_over_at[i] = is_over;
      nu_log_classified(h, &r, nn, is_under ? "underutilized" : "overutilized");
      nu_note_why(h, &r, nn, &low, &high, thr, is_under ? "underutilized" : "overutilized");
    } else {
      fw_note_category(h, nn->node, "appropriately utilized");
      nu_note_why(h, &r, nn, &low, &high, thr, "appropriately utilized");
      LOGV(0, &h->log, "Node is appropriately utilized", LSTR("node", nn->node->name),
           LJSON("usage", nu_usage_json(h, &r, nn->usage)),
           LJSON("usagePercentage", nu_pct_json(h, &r, nn)));
    }
  }
  /* upstream logs the configured maps here, not the assessed deviation values */
  nu_log_criteria(h, "Criteria for a node under utilization", &a->thresholds);
  LOGV(1, &h->log, "Number of underutilized nodes", LUINT("totalNumber", nunder));
  nu_log_criteria(h, "Criteria for a node above target utilization", &a->target);
  LOGV(1, &h->log, "Number of overutilized nodes", LUINT("totalNumber", nover));

  vmsafety_moves moves;
  vmsafety_moves_of(h->prof, &moves);
  if (moves.overutilized_for_s > 0)
    nover = hysteresis(h, &moves, nodes, n, is_over_at, over, nover);

  if (nu_nothing_to_do(h, nunder, n, a->number_of_nodes))
    return 0;
  if (nover == 0) {
    LOGV(1, &h->log, "All nodes are under target utilization, nothing to do here");
    return 0;
  }
  /* sources: the most used first */
  nu_sort_by_usage(h, &r, over, nover, true);
  nu_plan plan = {&r,
                  over,
                  nover,
                  under,
                  nunder,
                  lnu_continue,
                  a->limits.node,
                  &a->evictable_namespaces,
                  lnu_pod_filter,
                  NULL,
                  &usage,
                  &moves,
                  nodes,
                  n};
  return nu_evict(h, &plan, err);
}

void lnu_classification_of(const void *vargs, lnu_classification *out) {
  const lnu_args *a = vargs;
  out->use_deviation = a->use_deviation;
  out->thresholds = &a->thresholds;
  out->target = &a->target;
  out->query = a->has_metrics && a->metrics.has_prometheus && a->metrics.prometheus.query &&
                       *a->metrics.prometheus.query
                   ? a->metrics.prometheus.query
                   : NULL;
}

const plugin_desc plugin_low_node_utilization = {
    .name = "LowNodeUtilization",
    .points = PLUGIN_BALANCE,
    .args_size = sizeof(lnu_args),
    .fields = lnu_fields,
    .validate = lnu_validate,
    .prepare = lnu_prepare,
    .run = lnu_run,
    .add_usage_needs = lnu_add_usage_needs,
};
