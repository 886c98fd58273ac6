/* kubedescheduler.c - KubeDescheduler CR -> DeschedulerPolicy + operand flags; see
 * kubedescheduler.h and docs/openshift.md.
 *
 * The order of checks is the operator's (pkg/operator/target_config_reconciler.go, sync):
 * the CRD schema (all errors, joined with "; " behind "validation errors: "), the CEL rules
 * on spec.profiles (first failing rule wins), the interval, then manageConfigMap (namespaces,
 * profiles, the Prometheus Route, each profile in list order with its own checks, eviction
 * limits, the Scheduler conflicts), then the Deployment's arguments. Where the operator's
 * order is random (Go iterates the schema's properties as a map), the schema's own order
 * (alphabetical) is used. */
#include "kubedescheduler.h"

#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ====================================================================================
 * Reading the CR (what the API server would admit)
 * ==================================================================================== */

typedef struct {
  arena *a;
  dserr *err;
} pctx;

static bool is_null(const doc_node *n) {
  return !n || n->type == DOC_NULL;
}

static int expected(pctx *c, const char *path, const char *want, const doc_node *got) {
  return dserr_set(c->err, "%s: expected %s, got %s", path, want,
                   got->type == DOC_STR ? doc_describe(c->a, got)
                   : got->type == DOC_MAP || got->type == DOC_SEQ || got->type == DOC_NULL
                       ? doc_type_name(got->type)
                   : got->text ? got->text
                               : doc_type_name(got->type));
}

/* Unknown keys are refused as `kubectl apply` (strict field validation) refuses them. */
static int known_fields(pctx *c, const doc_node *map, const char *path, const char *const *keys) {
  for (size_t i = 0; i < map->n; i++) {
    bool ok = false;
    for (const char *const *k = keys; *k && !ok; k++)
      ok = strcmp(*k, map->pairs[i].key) == 0;
    if (ok)
      continue;
    strbuf want = {0};
    for (const char *const *k = keys; *k; k++)
      sb_printf(&want, "%s%s", k == keys ? "" : ", ", *k);
    dserr_set(c->err, "%s%s%s: unknown field (expected one of: %s)", path, *path ? "." : "",
              map->pairs[i].key, sb_str(&want));
    sb_free(&want);
    return -1;
  }
  return 0;
}

static int want_map(pctx *c, const doc_node *n, const char *path) {
  if (is_null(n) || n->type == DOC_MAP)
    return 0;
  return expected(c, path, "a map", n);
}

static int get_string(pctx *c, const doc_node *map, const char *key, const char *path,
                      const char **out) {
  const doc_node *n = doc_get(map, key);
  if (is_null(n))
    return 0;
  if (n->type != DOC_STR)
    return expected(c, path, "a string", n);
  *out = n->text;
  return 0;
}

static int get_bool(pctx *c, const doc_node *map, const char *key, const char *path, bool *out) {
  const doc_node *n = doc_get(map, key);
  if (is_null(n))
    return 0;
  if (n->type != DOC_BOOL)
    return expected(c, path, "true or false", n);
  *out = n->v.b;
  return 0;
}

static int get_int32(pctx *c, const doc_node *map, const char *key, const char *path, kd_int *out) {
  const doc_node *n = doc_get(map, key);
  if (is_null(n))
    return 0;
  if (n->type != DOC_INT || n->big || n->v.i < INT32_MIN || n->v.i > INT32_MAX)
    return expected(c, path, "an integer (int32)", n);
  *out = (kd_int){true, n->v.i};
  return 0;
}

/* metav1.Duration: a Go duration string ("5m", "1h30m") */
static int get_duration(pctx *c, const doc_node *map, const char *key, const char *path,
                        kd_int *out) {
  const char *s = NULL;
  if (get_string(c, map, key, path, &s) < 0)
    return -1;
  if (!s)
    return 0;
  int64_t ns;
  dserr e;
  if (duration_parse(s, &ns, &e) < 0)
    return dserr_set(c->err, "%s: expected a duration such as \"5m\" or \"1h30m\", got \"%s\"",
                     path, s);
  *out = (kd_int){true, ns};
  return 0;
}

static int get_strings(pctx *c, const doc_node *map, const char *key, const char *path,
                       const char ***out, size_t *n) {
  const doc_node *l = doc_get(map, key);
  *n = 0;
  *out = NULL;
  if (is_null(l))
    return 0;
  if (l->type != DOC_SEQ)
    return expected(c, path, "a list of strings", l);
  *out = ARENA_NEWN(c->a, const char *, l->n ? l->n : 1);
  for (size_t i = 0; i < l->n; i++) {
    if (l->items[i]->type != DOC_STR) {
      char p[256];
      snprintf(p, sizeof p, "%s[%zu]", path, i);
      return expected(c, p, "a string", l->items[i]);
    }
    (*out)[i] = l->items[i]->text;
  }
  *n = l->n;
  return 0;
}

static int parse_customizations(pctx *c, const doc_node *pc, kd_spec *s) {
  static const char *const keys[] = {"podLifetime",
                                     "thresholdPriority",
                                     "thresholdPriorityClassName",
                                     "namespaces",
                                     "devLowNodeUtilizationThresholds",
                                     "devEnableSoftTainter",
                                     "devEnableEvictionsInBackground",
                                     "devHighNodeUtilizationThresholds",
                                     "devActualUtilizationProfile",
                                     "devDeviationThresholds",
                                     "devMigrationCooldown",
                                     "devMaxMigrationCooldown",
                                     "devMigrationHistoryWindow",
                                     NULL};
  static const char *const ns_keys[] = {"included", "excluded", NULL};
  const char *P = "spec.profileCustomizations";
  char p[160];
#define FIELD(k) (snprintf(p, sizeof p, "%s.%s", P, k), p)
  if (known_fields(c, pc, P, keys) < 0 ||
      get_duration(c, pc, "podLifetime", FIELD("podLifetime"), &s->pod_lifetime) < 0 ||
      get_int32(c, pc, "thresholdPriority", FIELD("thresholdPriority"), &s->threshold_priority) <
          0 ||
      get_string(c, pc, "thresholdPriorityClassName", FIELD("thresholdPriorityClassName"),
                 &s->threshold_priority_class) < 0 ||
      get_string(c, pc, "devLowNodeUtilizationThresholds", FIELD("devLowNodeUtilizationThresholds"),
                 &s->dev_low) < 0 ||
      get_bool(c, pc, "devEnableSoftTainter", FIELD("devEnableSoftTainter"), &s->dev_soft_tainter) <
          0 ||
      get_bool(c, pc, "devEnableEvictionsInBackground", FIELD("devEnableEvictionsInBackground"),
               &s->dev_evictions_in_background) < 0 ||
      get_string(c, pc, "devHighNodeUtilizationThresholds",
                 FIELD("devHighNodeUtilizationThresholds"), &s->dev_high) < 0 ||
      get_string(c, pc, "devActualUtilizationProfile", FIELD("devActualUtilizationProfile"),
                 &s->dev_actual) < 0 ||
      get_string(c, pc, "devDeviationThresholds", FIELD("devDeviationThresholds"),
                 &s->dev_deviation) < 0 ||
      get_duration(c, pc, "devMigrationCooldown", FIELD("devMigrationCooldown"),
                   &s->migration_cooldown) < 0 ||
      get_duration(c, pc, "devMaxMigrationCooldown", FIELD("devMaxMigrationCooldown"),
                   &s->max_migration_cooldown) < 0 ||
      get_duration(c, pc, "devMigrationHistoryWindow", FIELD("devMigrationHistoryWindow"),
                   &s->migration_history_window) < 0)
    return -1;
#undef FIELD
  if (!s->threshold_priority_class)
    s->threshold_priority_class = "";
  if (!s->dev_actual)
    s->dev_actual = "";
  if (s->pod_lifetime.set && s->pod_lifetime.v < 0)
    return dserr_set(c->err,
                     "%s.podLifetime: expected a duration of zero or more, got a negative one", P);
  const doc_node *ns = doc_get(pc, "namespaces");
  if (want_map(c, ns, "spec.profileCustomizations.namespaces") < 0)
    return -1;
  if (!is_null(ns) &&
      (known_fields(c, ns, "spec.profileCustomizations.namespaces", ns_keys) < 0 ||
       get_strings(c, ns, "included", "spec.profileCustomizations.namespaces.included",
                   &s->included, &s->nincluded) < 0 ||
       get_strings(c, ns, "excluded", "spec.profileCustomizations.namespaces.excluded",
                   &s->excluded, &s->nexcluded) < 0))
    return -1;
  return 0;
}

static int parse_observed(pctx *c, const doc_node *oc, kd_spec *s) {
  /* free-form (x-kubernetes-preserve-unknown-fields); only servingInfo's TLS settings are read */
  const doc_node *si = doc_get(oc, "servingInfo");
  if (want_map(c, si, "spec.observedConfig.servingInfo") < 0 ||
      get_strings(c, si, "cipherSuites", "spec.observedConfig.servingInfo.cipherSuites",
                  &s->ciphers, &s->nciphers) < 0 ||
      get_string(c, si, "minTLSVersion", "spec.observedConfig.servingInfo.minTLSVersion",
                 &s->min_tls_version) < 0)
    return -1;
  return 0;
}

static int parse_spec(pctx *c, const doc_node *spec, kd_spec *s) {
  static const char *const keys[] = {"managementState",
                                     "logLevel",
                                     "operatorLogLevel",
                                     "unsupportedConfigOverrides",
                                     "observedConfig",
                                     "profiles",
                                     "deschedulingIntervalSeconds",
                                     "evictionLimits",
                                     "profileCustomizations",
                                     "mode",
                                     NULL};
  static const char *const limit_keys[] = {"total", "node", NULL};
  if (known_fields(c, spec, "spec", keys) < 0 ||
      get_string(c, spec, "managementState", "spec.managementState", &s->management_state) < 0 ||
      get_string(c, spec, "logLevel", "spec.logLevel", &s->log_level) < 0 ||
      get_string(c, spec, "operatorLogLevel", "spec.operatorLogLevel", &s->operator_log_level) <
          0 ||
      get_string(c, spec, "mode", "spec.mode", &s->mode) < 0 ||
      get_int32(c, spec, "deschedulingIntervalSeconds", "spec.deschedulingIntervalSeconds",
                &s->interval) < 0)
    return -1;
  /* the CRD's defaults, applied by the API server when the field is absent */
  if (!s->log_level)
    s->log_level = "Normal";
  if (!s->operator_log_level)
    s->operator_log_level = "Normal";
  if (!s->mode)
    s->mode = "Predictive";

  const doc_node *profiles = doc_get(spec, "profiles");
  s->profiles_null = is_null(profiles);
  if (get_strings(c, spec, "profiles", "spec.profiles", &s->profiles, &s->nprofiles) < 0)
    return -1;

  const doc_node *limits = doc_get(spec, "evictionLimits");
  if (want_map(c, limits, "spec.evictionLimits") < 0)
    return -1;
  if (!is_null(limits)) {
    if (known_fields(c, limits, "spec.evictionLimits", limit_keys) < 0 ||
        get_int32(c, limits, "total", "spec.evictionLimits.total", &s->limit_total) < 0 ||
        get_int32(c, limits, "node", "spec.evictionLimits.node", &s->limit_node) < 0)
      return -1;
    /* the operator converts with uint(): -1 would become 18446744073709551615 (no limit) */
    const char *which = s->limit_total.set && s->limit_total.v < 0 ? "total"
                        : s->limit_node.set && s->limit_node.v < 0 ? "node"
                                                                   : NULL;
    if (which)
      return dserr_set(c->err,
                       "spec.evictionLimits.%s: expected an integer of 0 or more, got %" PRId64
                       " (the operator would turn it into 18446744073709551615, no limit)",
                       which, (which[0] == 't' ? s->limit_total : s->limit_node).v);
  }

  const doc_node *pc = doc_get(spec, "profileCustomizations");
  if (want_map(c, pc, "spec.profileCustomizations") < 0)
    return -1;
  s->threshold_priority_class = "";
  s->dev_actual = "";
  if (!is_null(pc)) {
    s->has_customizations = true;
    if (parse_customizations(c, pc, s) < 0)
      return -1;
  }
  const doc_node *oc = doc_get(spec, "observedConfig");
  if (want_map(c, oc, "spec.observedConfig") < 0 ||
      want_map(c, doc_get(spec, "unsupportedConfigOverrides"), "spec.unsupportedConfigOverrides") <
          0)
    return -1;
  if (!is_null(oc) && parse_observed(c, oc, s) < 0)
    return -1;
  return 0;
}

int kd_parse(arena *a, const char *file, const doc_node *obj, kd_spec *s, dserr *err) {
  static const char *const keys[] = {"apiVersion", "kind", "metadata", "spec", "status", NULL};
  pctx c = {a, err};
  memset(s, 0, sizeof *s);
  s->file = file;
  s->ns = s->name = s->resource_version = "";
  if (is_null(obj) || obj->type != DOC_MAP)
    return dserr_set(err, "expected a KubeDescheduler object (a map), got %s",
                     obj ? doc_type_name(obj->type) : "an empty document");
  const char *av = NULL, *kind = NULL;
  if (get_string(&c, obj, "apiVersion", "apiVersion", &av) < 0 ||
      get_string(&c, obj, "kind", "kind", &kind) < 0)
    return -1;
  if (!kind || strcmp(kind, "KubeDescheduler") != 0)
    return dserr_set(err, "kind: expected \"KubeDescheduler\", got %s%s%s", kind ? "\"" : "",
                     kind ? kind : "nothing", kind ? "\"" : "");
  if (!av || strcmp(av, "operator.openshift.io/v1") != 0)
    return dserr_set(err, "apiVersion: expected \"operator.openshift.io/v1\", got %s%s%s",
                     av ? "\"" : "", av ? av : "nothing", av ? "\"" : "");
  if (known_fields(&c, obj, "", keys) < 0)
    return -1;
  const doc_node *md = doc_get(obj, "metadata");
  if (want_map(&c, md, "metadata") < 0 ||
      get_string(&c, md, "name", "metadata.name", &s->name) < 0 ||
      get_string(&c, md, "namespace", "metadata.namespace", &s->ns) < 0)
    return -1;
  const char *rv = NULL;
  if (get_string(&c, md, "resourceVersion", "metadata.resourceVersion", &rv) < 0)
    return -1;
  s->name = s->name ? s->name : "";
  s->ns = s->ns ? s->ns : "";
  s->resource_version = rv ? rv : "";
  /* the CRD's CEL rule on the object, enforced by the API server */
  if (strcmp(s->name, KD_NAME) != 0)
    return dserr_set(err, "kubedescheduler is a singleton, .metadata.name must be 'cluster'");
  const doc_node *spec = doc_get(obj, "spec");
  if (is_null(spec))
    return dserr_set(err, "spec: required (a KubeDescheduler needs spec.profiles and "
                          "spec.deschedulingIntervalSeconds)");
  if (want_map(&c, spec, "spec") < 0)
    return -1;
  return parse_spec(&c, spec, s);
}

/* ====================================================================================
 * Cluster facts
 * ==================================================================================== */

static int cmp_str(const void *x, const void *y) {
  return strcmp(*(const char *const *)x, *(const char *const *)y);
}

void kd_protected_namespaces(arena *a, const char *const *names, size_t n, kd_facts *f) {
  const char **list = ARENA_NEWN(a, const char *, n + 3);
  size_t k = 0;
  list[k++] = "kube-system";
  list[k++] = "hypershift";
  list[k++] = "openshift";
  size_t first = k;
  for (size_t i = 0; i < n; i++)
    if (strncmp(names[i], "openshift-", 10) == 0)
      list[k++] = arena_strdup(a, names[i]);
  /* the operator lists namespaces from the API server, which returns them by name */
  qsort(list + first, k - first, sizeof *list, cmp_str);
  f->protected_ns = list;
  f->nprotected = k;
}

void kd_facts_from_model(arena *a, const model *m, kd_facts *f) {
  memset(f, 0, sizeof *f);
  const char **names = ARENA_NEWN(a, const char *, m->namespaces.n + 1);
  f->monitoring_label = 0;
  bool operator_ns = false;
  for (size_t i = 0; i < m->namespaces.n; i++) {
    const namespace_obj *ns = m->namespaces.items[i];
    names[i] = ns->name;
    if (strcmp(ns->name, KD_OPERATOR_NAMESPACE) == 0) {
      const char *v = kv_get(&ns->labels, "openshift.io/cluster-monitoring");
      operator_ns = true;
      f->monitoring_label = v && strcmp(v, "true") == 0;
    }
  }
  if (!operator_ns)
    f->monitoring_label = -1;
  kd_protected_namespaces(a, names, m->namespaces.n, f);
  for (size_t i = 0; i < m->nodes.n && !f->kubevirt_node; i++) {
    const char *v = kv_get(&m->nodes.items[i]->labels, "kubevirt.io/schedulable");
    f->kubevirt_node = v && strcmp(v, "true") == 0;
  }
  const openshift_objs *o = &m->openshift;
  f->route_present = o->route_present;
  f->route_ningress = o->route_ningress;
  f->route_host = o->route_host ? o->route_host : "";
  f->scheduler_known = o->scheduler_present;
  f->scheduler_profile = o->scheduler_profile ? o->scheduler_profile : "";
  f->psi = KD_PSI_UNKNOWN;
}

/* ====================================================================================
 * Validation and rendering (what the operator does)
 * ==================================================================================== */

static const char *const PROFILES[] = {"AffinityAndTaints",
                                       "TopologyAndDuplicates",
                                       "LifecycleAndUtilization",
                                       "DevPreviewLongLifecycle",
                                       "LongLifecycle",
                                       "SoftTopologyAndDuplicates",
                                       "EvictPodsWithLocalStorage",
                                       "EvictPodsWithPVC",
                                       "CompactAndScale",
                                       "DevKubeVirtRelieveAndMigrate",
                                       "KubeVirtRelieveAndMigrate",
                                       NULL};
static const char *const LOG_LEVELS[] = {"", "Normal", "Debug", "Trace", "TraceAll", NULL};
static const char *const MODES[] = {"Automatic", "Predictive", NULL};
static const char *const DEVIATIONS[] = {
    "Low", "Medium", "High", "AsymmetricLow", "AsymmetricMedium", "AsymmetricHigh", "", NULL};
static const char *const HIGH_THRESHOLDS[] = {"Minimal", "Modest", "Moderate", "", NULL};
static const char *const LOW_THRESHOLDS[] = {"Low", "Medium", "High", "", NULL};

/* The CEL rules of spec.profiles after the duplicate rule, in the CRD's order: pairs that
 * may not be declared together. */
static const char *const CEL_PAIRS[][2] = {
    {"DevPreviewLongLifecycle", "LifecycleAndUtilization"},
    {"LongLifecycle", "LifecycleAndUtilization"},
    {"DevPreviewLongLifecycle", "DevKubeVirtRelieveAndMigrate"},
    {"LongLifecycle", "DevKubeVirtRelieveAndMigrate"},
    {"LifecycleAndUtilization", "DevKubeVirtRelieveAndMigrate"},
    {"KubeVirtRelieveAndMigrate", "DevKubeVirtRelieveAndMigrate"},
    {"DevPreviewLongLifecycle", "KubeVirtRelieveAndMigrate"},
    {"LongLifecycle", "KubeVirtRelieveAndMigrate"},
    {"LifecycleAndUtilization", "KubeVirtRelieveAndMigrate"},
    {"SoftTopologyAndDuplicates", "TopologyAndDuplicates"},
    {"CompactAndScale", "LifecycleAndUtilization"},
    {"CompactAndScale", "LongLifecycle"},
    {"CompactAndScale", "DevPreviewLongLifecycle"},
    {"CompactAndScale", "DevKubeVirtRelieveAndMigrate"},
    {"CompactAndScale", "KubeVirtRelieveAndMigrate"},
    {"CompactAndScale", "TopologyAndDuplicates"},
};

static const char *const PROMETHEUS_QUERIES[][2] = {
    {"PrometheusCPUUsage", "instance:node_cpu:rate:sum"},
    {"PrometheusCPUPSIPressure", "rate(node_pressure_cpu_waiting_seconds_total[1m])"},
    {"PrometheusCPUPSIPressureByUtilization",
     "avg by (instance) ( rate(node_pressure_cpu_waiting_seconds_total[1m])) and (1 - avg by "
     "(instance) (rate(node_cpu_seconds_total{mode=\"idle\"}[1m]))) > 0.7 or avg by (instance) ( "
     "rate(node_pressure_cpu_waiting_seconds_total[1m])) * 0"},
    {"PrometheusMemoryPSIPressure", "rate(node_pressure_memory_waiting_seconds_total[1m])"},
    {"PrometheusIOPSIPressure", "rate(node_pressure_io_waiting_seconds_total[1m])"},
    {"PrometheusCPUCombined", "descheduler:combined_utilization_and_pressure:avg1m"},
    {"PrometheusCPUMemoryCombinedProfile",
     "descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m"},
};

#define KUBEVIRT_DEFAULT_QUERY_PROFILE "PrometheusCPUMemoryCombinedProfile"
/* KubeVirt's parallelMigrationsPerCluster and parallelOutboundMigrationsPerNode defaults */
#define KUBEVIRT_TOTAL_LIMIT 5
#define KUBEVIRT_NODE_LIMIT 2

typedef struct {
  arena *a;
  const kd_spec *s;
  const kd_facts *f;
  kd_result *out;
  dserr *err;
  /* namespaces passed to the plugins (manageConfigMap) */
  size_t ninc, nexc;
  const char **inc, **exc;
  bool ignore_pvc, evict_local;
  strbuf warnings;
} rctx;

static bool in_list(const char *s, const char *const *list) {
  for (; *list; list++)
    if (strcmp(s, *list) == 0)
      return true;
  return false;
}

static bool has_profile(const kd_spec *s, const char *name) {
  for (size_t i = 0; i < s->nprofiles; i++)
    if (strcmp(s->profiles[i], name) == 0)
      return true;
  return false;
}

static bool has_kubevirt_profile(const kd_spec *s) {
  return has_profile(s, "KubeVirtRelieveAndMigrate") ||
         has_profile(s, "DevKubeVirtRelieveAndMigrate");
}

/* Go's %v of a []string or []interface{} of strings: [a b c] */
static void go_list(strbuf *sb, const char *const *items, size_t n) {
  sb_appendc(sb, '[');
  for (size_t i = 0; i < n; i++)
    sb_printf(sb, "%s%s", i ? " " : "", items[i]);
  sb_appendc(sb, ']');
}

static size_t count(const char *const *list) {
  size_t n = 0;
  while (list[n])
    n++;
  return n;
}

static void warn(rctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void warn(rctx *c, const char *fmt, ...) {
  strbuf sb = {0};
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  for (size_t i = 0; i < c->out->nwarnings; i++)
    if (strcmp(c->out->warnings[i], sb_str(&sb)) == 0) {
      sb_free(&sb);
      return; /* once is enough */
    }
  const char **w = ARENA_NEWN(c->a, const char *, c->out->nwarnings + 1);
  if (c->out->nwarnings)
    memcpy(w, c->out->warnings, c->out->nwarnings * sizeof *w);
  w[c->out->nwarnings++] = arena_strdup(c->a, sb_str(&sb));
  c->out->warnings = w;
  sb_free(&sb);
}

static void enum_error(strbuf *errs, const char *path, const char *const *allowed) {
  if (errs->len)
    sb_append(errs, "; ");
  sb_printf(errs, "%s in body should be one of ", path);
  go_list(errs, allowed, count(allowed));
}

/* validateDeschedulerCR, first half: the OpenAPI schema of the CRD as the operator checks it
 * (on the typed object, so an absent managementState is an empty string). */
static void schema_errors(const kd_spec *s, strbuf *errs) {
  if (s->interval.set && s->interval.v < 1) {
    sb_printf(errs,
              "%sspec.deschedulingIntervalSeconds in body should be greater than or equal to 1",
              errs->len ? "; " : "");
  }
  if (!in_list(s->log_level, LOG_LEVELS))
    enum_error(errs, "spec.logLevel", LOG_LEVELS);
  const char *ms = s->management_state ? s->management_state : "";
  static const char *const states[] = {"Managed", "Unmanaged", "Force", "Removed", NULL};
  if (!in_list(ms, states))
    sb_printf(errs,
              "%sspec.managementState in body should match '^(Managed|Unmanaged|Force|Removed)$'",
              errs->len ? "; " : "");
  if (!in_list(s->mode, MODES))
    enum_error(errs, "spec.mode", MODES);
  if (!in_list(s->operator_log_level, LOG_LEVELS))
    enum_error(errs, "spec.operatorLogLevel", LOG_LEVELS);
  if (s->dev_deviation && !in_list(s->dev_deviation, DEVIATIONS))
    enum_error(errs, "spec.profileCustomizations.devDeviationThresholds", DEVIATIONS);
  if (s->dev_high && !in_list(s->dev_high, HIGH_THRESHOLDS))
    enum_error(errs, "spec.profileCustomizations.devHighNodeUtilizationThresholds",
               HIGH_THRESHOLDS);
  if (s->dev_low && !in_list(s->dev_low, LOW_THRESHOLDS))
    enum_error(errs, "spec.profileCustomizations.devLowNodeUtilizationThresholds", LOW_THRESHOLDS);
  if (s->profiles_null) {
    sb_printf(errs, "%sspec.profiles in body must be of type array: \"null\"",
              errs->len ? "; " : "");
    return;
  }
  for (size_t i = 0; i < s->nprofiles; i++)
    if (!in_list(s->profiles[i], PROFILES)) {
      char path[64];
      snprintf(path, sizeof path, "spec.profiles[%zu]", i);
      enum_error(errs, path, PROFILES);
    }
  if (s->nprofiles > 11)
    sb_printf(errs, "%sspec.profiles in body should have at most 11 items", errs->len ? "; " : "");
}

/* validateDeschedulerCR, second half: the CEL rules on spec.profiles; the first that fails */
static const char *cel_error(const kd_spec *s, char *buf, size_t cap) {
  for (size_t i = 0; i < s->nprofiles; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(s->profiles[i], s->profiles[j]) == 0)
        return "duplicate profiles are not allowed";
  for (size_t r = 0; r < sizeof CEL_PAIRS / sizeof CEL_PAIRS[0]; r++)
    if (has_profile(s, CEL_PAIRS[r][0]) && has_profile(s, CEL_PAIRS[r][1])) {
      snprintf(buf, cap, "cannot declare %s and %s profiles simultaneously", CEL_PAIRS[r][0],
               CEL_PAIRS[r][1]);
      return buf;
    }
  return NULL;
}

/* ---------- tree helpers ---------- */

static doc_node *str(rctx *c, const char *s) {
  return doc_new_str(c->a, s);
}
static doc_node *num(rctx *c, int64_t v) {
  return doc_new_int(c->a, v);
}
static doc_node *put(rctx *c, doc_node *map, const char *key, doc_node *v) {
  return doc_map_put(c->a, map, key, v);
}

static doc_node *names(rctx *c, const char *const *list, size_t n) {
  return n ? doc_new_strs(c->a, list, n) : doc_new_null(c->a);
}

/* `namespaces: {include, exclude}` with empty lists left out (Go's omitempty) */
static doc_node *ns_filter(rctx *c, size_t ninc, const char **inc, size_t nexc, const char **exc) {
  doc_node *m = doc_new_map(c->a);
  if (ninc)
    put(c, m, "include", doc_new_strs(c->a, inc, ninc));
  if (nexc)
    put(c, m, "exclude", doc_new_strs(c->a, exc, nexc));
  return m;
}

static void set_namespaces(rctx *c, doc_node *args) {
  if (c->ninc || c->nexc)
    put(c, args, "namespaces", ns_filter(c, c->ninc, c->inc, c->nexc, c->exc));
}

static doc_node *plugin_config(rctx *c, doc_node *list, const char *name, doc_node *args) {
  doc_node *pc = doc_seq_add(c->a, list, doc_new_map(c->a));
  put(c, pc, "name", str(c, name));
  put(c, pc, "args", args);
  return args;
}

/* every extension point, each with enabled and disabled (null when empty), as Go writes them */
static doc_node *plugin_sets(rctx *c, const char *const *deschedule, const char *const *balance,
                             const char *const *filter, const char *const *preevictionfilter) {
  doc_node *p = doc_new_map(c->a);
  struct {
    const char *point;
    const char *const *enabled;
  } points[] = {{"balance", balance}, {"deschedule", deschedule},
                {"filter", filter},   {"preevictionfilter", preevictionfilter},
                {"presort", NULL},    {"sort", NULL}};
  for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
    doc_node *set = put(c, p, points[i].point, doc_new_map(c->a));
    size_t n = points[i].enabled ? count(points[i].enabled) : 0;
    put(c, set, "enabled", names(c, points[i].enabled, n));
    put(c, set, "disabled", doc_new_null(c->a));
  }
  return p;
}

static doc_node *new_profile(rctx *c, const char *name, doc_node **configs) {
  doc_node *pr = doc_new_map(c->a);
  put(c, pr, "name", str(c, name));
  *configs = put(c, pr, "pluginConfig", doc_new_seq(c->a));
  return pr;
}

/* defaultEvictorOverrides */
static int evictor_overrides(rctx *c, doc_node *args) {
  const kd_spec *s = c->s;
  if (!s->has_customizations)
    return 0;
  if (s->threshold_priority.set && *s->threshold_priority_class)
    return dserr_set(c->err,
                     "It is invalid to set both .spec.profileCustomizations.thresholdPriority "
                     "and .spec.profileCustomizations.ThresholdPriorityClassName fields");
  if (s->threshold_priority.set || *s->threshold_priority_class) {
    doc_node *pt = put(c, args, "priorityThreshold", doc_new_map(c->a));
    put(c, pt, "name", str(c, s->threshold_priority_class));
    put(c, pt, "value",
        s->threshold_priority.set ? num(c, s->threshold_priority.v) : doc_new_null(c->a));
  }
  return 0;
}

static doc_node *default_evictor(rctx *c, doc_node *configs, bool ignore_pvc, bool evict_local,
                                 const char *no_eviction_policy) {
  doc_node *args = doc_new_map(c->a);
  if (ignore_pvc)
    put(c, args, "ignorePvcPods", doc_new_bool(c->a, true));
  if (evict_local)
    put(c, args, "evictLocalStoragePods", doc_new_bool(c->a, true));
  if (no_eviction_policy)
    put(c, args, "noEvictionPolicy", str(c, no_eviction_policy));
  put(c, args, "podProtections", doc_new_map(c->a));
  return plugin_config(c, configs, "DefaultEvictor", args);
}

static const char *query_for(rctx *c, const char *profile) {
  for (size_t i = 0; i < sizeof PROMETHEUS_QUERIES / sizeof PROMETHEUS_QUERIES[0]; i++)
    if (strcmp(profile, PROMETHEUS_QUERIES[i][0]) == 0)
      return PROMETHEUS_QUERIES[i][1];
  if (strncmp(profile, "query:", 6) == 0)
    return profile + 6;
  dserr_set(c->err, "unknown prometheus profile: %s", profile);
  return NULL;
}

static doc_node *metrics_utilization(rctx *c, const char *query) {
  doc_node *mu = doc_new_map(c->a);
  put(c, mu, "source", str(c, "Prometheus"));
  put(c, put(c, mu, "prometheus", doc_new_map(c->a)), "query", str(c, query));
  return mu;
}

static void set_thresholds(rctx *c, doc_node *args, bool metric, int64_t low, int64_t high) {
  static const char *const basic[] = {"cpu", "memory", "pods", NULL};
  static const char *const metrics[] = {"MetricResource", NULL};
  const char *const *res = metric ? metrics : basic;
  doc_node *t = put(c, args, "thresholds", doc_new_map(c->a));
  doc_node *tt = put(c, args, "targetThresholds", doc_new_map(c->a));
  for (; *res; res++) {
    put(c, t, *res, num(c, low));
    put(c, tt, *res, num(c, high));
  }
}

/* setExcludedNamespacesForLowNodeUtilizationPlugin (called when either list is non-empty) */
static void lnu_namespaces(rctx *c, doc_node *args) {
  if (!c->ninc && !c->nexc)
    return;
  if (c->ninc) {
    warn(c, "LowNodeUtilization is enabled, however it does not support namespace inclusion. "
            "Namespace inclusion will only be considered by other strategies (like "
            "RemovePodsHavingTooManyRestarts and PodLifeTime). Falling back to a list of excluded "
            "protected namespaces.");
    if (!c->nexc)
      put(c, args, "evictableNamespaces",
          ns_filter(c, 0, NULL, c->f->nprotected, (const char **)c->f->protected_ns));
  }
  if (c->nexc)
    put(c, args, "evictableNamespaces", ns_filter(c, 0, NULL, c->nexc, c->exc));
}

/* getLowNodeUtilizationThresholds */
static int lnu_thresholds(rctx *c, bool ignore_dynamic, int64_t *low, int64_t *high) {
  const kd_spec *s = c->s;
  *low = 20;
  *high = 50;
  if (!s->has_customizations)
    return 0;
  if (!ignore_dynamic && s->dev_low && s->dev_deviation)
    return dserr_set(c->err,
                     "only one of DevLowNodeUtilizationThresholds and DevDeviationThresholds "
                     "customizations can be configured simultaneously");
  if (s->dev_low) {
    if (!strcmp(s->dev_low, "Low"))
      *low = 10, *high = 30;
    else if (!strcmp(s->dev_low, "Medium") || !*s->dev_low)
      *low = 20, *high = 50;
    else if (!strcmp(s->dev_low, "High"))
      *low = 40, *high = 70;
    else
      return dserr_set(c->err,
                       "unknown Descheduler LowNodeUtilization threshold %s, only 'Low', "
                       "'Medium' and 'High' are supported",
                       s->dev_low);
  }
  if (!ignore_dynamic && s->dev_deviation) {
    static const struct {
      const char *name;
      int64_t low, high;
    } table[] = {{"Low", 10, 10},          {"Medium", 20, 20},          {"High", 30, 30},
                 {"AsymmetricLow", 0, 10}, {"AsymmetricMedium", 0, 20}, {"AsymmetricHigh", 0, 30}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
      if (!strcmp(s->dev_deviation, table[i].name)) {
        *low = table[i].low;
        *high = table[i].high;
        return 0;
      }
    return dserr_set(c->err,
                     "unknown Descheduler DeviationThresholds threshold %s, only 'Low', "
                     "'Medium' and 'High' are supported",
                     s->dev_deviation);
  }
  return 0;
}

/* ---------- the profiles ---------- */

static doc_node *affinity_and_taints(rctx *c) {
  static const char *const deschedule[] = {"RemovePodsViolatingInterPodAntiAffinity",
                                           "RemovePodsViolatingNodeTaints",
                                           "RemovePodsViolatingNodeAffinity", NULL};
  static const char *const filter[] = {"DefaultEvictor", NULL};
  static const char *const affinity_types[] = {"requiredDuringSchedulingIgnoredDuringExecution"};
  doc_node *configs, *pr = new_profile(c, "AffinityAndTaints", &configs);
  set_namespaces(c, plugin_config(c, configs, deschedule[0], doc_new_map(c->a)));
  set_namespaces(c, plugin_config(c, configs, deschedule[1], doc_new_map(c->a)));
  doc_node *na = plugin_config(c, configs, deschedule[2], doc_new_map(c->a));
  put(c, na, "nodeAffinityType", doc_new_strs(c->a, affinity_types, 1));
  set_namespaces(c, na);
  doc_node *de = default_evictor(c, configs, c->ignore_pvc, c->evict_local, NULL);
  put(c, pr, "plugins", plugin_sets(c, deschedule, NULL, filter, NULL));
  return evictor_overrides(c, de) < 0 ? NULL : pr;
}

static doc_node *topology_and_duplicates(rctx *c, bool soft) {
  static const char *const balance[] = {"RemovePodsViolatingTopologySpreadConstraint",
                                        "RemoveDuplicates", NULL};
  static const char *const filter[] = {"DefaultEvictor", NULL};
  static const char *const constraints[] = {"DoNotSchedule", "ScheduleAnyway"};
  doc_node *configs,
      *pr = new_profile(c, soft ? "SoftTopologyAndDuplicates" : "TopologyAndDuplicates", &configs);
  doc_node *ts = plugin_config(c, configs, balance[0], doc_new_map(c->a));
  put(c, ts, "constraints", doc_new_strs(c->a, constraints, soft ? 2 : 1));
  set_namespaces(c, ts);
  set_namespaces(c, plugin_config(c, configs, balance[1], doc_new_map(c->a)));
  doc_node *de = default_evictor(c, configs, c->ignore_pvc, c->evict_local, NULL);
  put(c, pr, "plugins", plugin_sets(c, NULL, balance, filter, NULL));
  return evictor_overrides(c, de) < 0 ? NULL : pr;
}

/* LifecycleAndUtilization, and LongLifecycle (the same without PodLifeTime) */
static doc_node *lifecycle(rctx *c, bool long_lifecycle) {
  static const char *const deschedule[] = {"PodLifeTime", "RemovePodsHavingTooManyRestarts", NULL};
  static const char *const balance[] = {"LowNodeUtilization", NULL};
  static const char *const filter[] = {"DefaultEvictor", NULL};
  const kd_spec *s = c->s;
  doc_node *configs,
      *pr = new_profile(c, long_lifecycle ? "LongLifecycle" : "LifecycleAndUtilization", &configs);
  if (!long_lifecycle) {
    doc_node *pl = plugin_config(c, configs, "PodLifeTime", doc_new_map(c->a));
    /* uint(PodLifetime.Seconds()): whole seconds */
    put(c, pl, "maxPodLifeTimeSeconds",
        num(c, s->has_customizations && s->pod_lifetime.set ? s->pod_lifetime.v / 1000000000LL
                                                            : 86400));
    set_namespaces(c, pl);
  }
  doc_node *tr = plugin_config(c, configs, "RemovePodsHavingTooManyRestarts", doc_new_map(c->a));
  put(c, tr, "podRestartThreshold", num(c, 100));
  put(c, tr, "includingInitContainers", doc_new_bool(c->a, true));
  set_namespaces(c, tr);
  doc_node *lnu = plugin_config(c, configs, "LowNodeUtilization", doc_new_map(c->a));
  lnu_namespaces(c, lnu);
  doc_node *de = default_evictor(c, configs, c->ignore_pvc, c->evict_local, NULL);
  put(c, pr, "plugins",
      plugin_sets(c, long_lifecycle ? deschedule + 1 : deschedule, balance, filter, NULL));
  int64_t low, high;
  if (lnu_thresholds(c, true, &low, &high) < 0)
    return NULL;
  bool metric = false;
  if (s->has_customizations && *s->dev_actual) {
    const char *q = query_for(c, s->dev_actual);
    if (!q)
      return NULL;
    put(c, lnu, "metricsUtilization", metrics_utilization(c, q));
    metric = true;
  }
  if (evictor_overrides(c, de) < 0)
    return NULL;
  set_thresholds(c, lnu, metric, low, high);
  return pr;
}

static doc_node *compact_and_scale(rctx *c) {
  static const char *const balance[] = {"HighNodeUtilization", NULL};
  static const char *const filter[] = {"DefaultEvictor", NULL};
  const kd_spec *s = c->s;
  doc_node *configs, *pr = new_profile(c, "CompactAndScale", &configs);
  doc_node *hnu = plugin_config(c, configs, "HighNodeUtilization", doc_new_map(c->a));
  doc_node *de = default_evictor(c, configs, c->ignore_pvc, c->evict_local, NULL);
  put(c, pr, "plugins", plugin_sets(c, NULL, balance, filter, NULL));
  if (c->ninc)
    warn(c, "HighNodeUtilization is enabled, however it does not support namespace inclusion. "
            "Namespace inclusion will only be considered by other strategies (like "
            "RemovePodsHavingTooManyRestarts and PodLifeTime)");
  if (c->nexc)
    put(c, hnu, "evictableNamespaces", ns_filter(c, 0, NULL, c->nexc, c->exc));
  int64_t t = 20;
  if (s->has_customizations && s->dev_high) {
    if (!strcmp(s->dev_high, "Minimal"))
      t = 10;
    else if (!strcmp(s->dev_high, "Modest") || !*s->dev_high)
      t = 20;
    else if (!strcmp(s->dev_high, "Moderate"))
      t = 30;
    else {
      dserr_set(c->err,
                "unknown Descheduler HighNodeUtilization threshold %s, only 'Minimal', "
                "'Modest' and 'Moderate' are supported",
                s->dev_high);
      return NULL;
    }
  }
  doc_node *th = put(c, hnu, "thresholds", doc_new_map(c->a));
  put(c, th, "cpu", num(c, t));
  put(c, th, "memory", num(c, t));
  put(c, th, "pods", num(c, t));
  return evictor_overrides(c, de) < 0 ? NULL : pr;
}

static void migration_arg(rctx *c, doc_node *args, const char *key, kd_int d) {
  if (!d.set)
    return;
  strbuf sb = {0};
  duration_format(&sb, d.v);
  put(c, args, key, str(c, sb_str(&sb)));
  sb_free(&sb);
}

static doc_node *kubevirt_relieve_and_migrate(rctx *c, const char *listed_as) {
  static const char *const balance[] = {"LowNodeUtilization", NULL};
  static const char *const filter[] = {"DefaultEvictor", "KubevirtMigrationAware", NULL};
  static const char *const preevictionfilter[] = {"KubevirtMigrationAware", NULL};
  const kd_spec *s = c->s;
  const kd_facts *f = c->f;
  if (!f->kubevirt_node) {
    dserr_set(c->err, "profile %s can only be used when KubeVirt is properly deployed", listed_as);
    return NULL;
  }
  if (f->psi == KD_PSI_ABSENT) {
    dserr_set(c->err,
              "profile %s can only be used when PSI metrics are enabled for the worker nodes",
              listed_as);
    return NULL;
  }
  if (f->psi == KD_PSI_UNKNOWN)
    warn(c,
         "profile %s: whether PSI (/proc/pressure) is enabled on the worker nodes was not "
         "checked; the operator refuses this profile without it (see --psi)",
         listed_as);
  put(c, c->out->policy, "nodeSelector", str(c, KD_KUBEVIRT_NODE_SELECTOR));
  doc_node *configs, *pr = new_profile(c, "KubeVirtRelieveAndMigrate", &configs);
  doc_node *lnu = plugin_config(c, configs, "LowNodeUtilization", doc_new_map(c->a));
  lnu_namespaces(c, lnu);
  doc_node *de = default_evictor(c, configs, false, true, "Mandatory");
  put(c, pr, "plugins", plugin_sets(c, NULL, balance, filter, preevictionfilter));
  bool deviation = true;
  put(c, put(c, lnu, "evictionLimits", doc_new_map(c->a)), "node", num(c, KUBEVIRT_NODE_LIMIT));
  const char *query = query_for(c, KUBEVIRT_DEFAULT_QUERY_PROFILE);
  if (s->has_customizations) {
    if (s->dev_deviation && s->dev_low) {
      dserr_set(c->err, "only one of DevLowNodeUtilizationThresholds and DevDeviationThresholds "
                        "customizations can be configured simultaneously");
      return NULL;
    }
    if (s->dev_deviation)
      deviation = *s->dev_deviation != 0;
    else if (s->dev_low)
      deviation = *s->dev_low == 0;
    if (*s->dev_actual && !(query = query_for(c, s->dev_actual)))
      return NULL;
    if (evictor_overrides(c, de) < 0)
      return NULL;
  }
  put(c, lnu, "metricsUtilization", metrics_utilization(c, query));
  if (deviation)
    put(c, lnu, "useDeviationThresholds", doc_new_bool(c->a, true));
  /* KubevirtMigrationAware: only the customized keys */
  doc_node *kma = plugin_config(c, configs, "KubevirtMigrationAware", doc_new_map(c->a));
  migration_arg(c, kma, "migrationCooldown", s->migration_cooldown);
  migration_arg(c, kma, "maxMigrationCooldown", s->max_migration_cooldown);
  migration_arg(c, kma, "migrationHistoryWindow", s->migration_history_window);
  /* getKubeVirtRelieveAndMigrateThresholds */
  int64_t low = deviation ? 0 : 20, high = deviation ? 10 : 50;
  if (s->has_customizations && (s->dev_low || s->dev_deviation) &&
      lnu_thresholds(c, false, &low, &high) < 0)
    return NULL;
  set_thresholds(c, lnu, true, low, high);
  return pr;
}

/* ---------- manageConfigMap ---------- */

static int namespaces(rctx *c) {
  const kd_spec *s = c->s;
  const kd_facts *f = c->f;
  c->exc = ARENA_NEWN(c->a, const char *, f->nprotected + s->nexcluded + 1);
  memcpy(c->exc, f->protected_ns, f->nprotected * sizeof *c->exc);
  c->nexc = f->nprotected;
  c->inc = NULL;
  c->ninc = 0;
  if (!s->has_customizations)
    return 0;
  if (s->nexcluded && s->nincluded)
    return dserr_set(c->err, "It is forbidden to combine both included and excluded namespaces");
  if (s->nincluded) {
    for (size_t i = 0; i < s->nincluded; i++)
      for (size_t k = 0; k < f->nprotected; k++)
        if (strcmp(s->included[i], f->protected_ns[k]) == 0) {
          strbuf list = {0};
          go_list(&list, f->protected_ns, f->nprotected);
          dserr_set(c->err,
                    "Protected namespace %s included. It is forbidden to include any of the "
                    "protected namespaces from %s",
                    s->included[i], sb_str(&list));
          sb_free(&list);
          return -1;
        }
    c->inc = s->included;
    c->ninc = s->nincluded;
    c->nexc = 0;
  }
  for (size_t i = 0; i < s->nexcluded; i++)
    c->exc[c->nexc++] = s->excluded[i];
  return 0;
}

static int metrics_provider(rctx *c) {
  const kd_spec *s = c->s;
  const kd_facts *f = c->f;
  if (!has_kubevirt_profile(s) && !(s->has_customizations && *s->dev_actual))
    return 0;
  strbuf url = {0};
  if (f->prometheus_url) {
    sb_append(&url, f->prometheus_url);
  } else {
    if (!f->route_present)
      return dserr_set(c->err, "unable to get openshift-monitoring/prometheus-k8s route: %s",
                       f->route_error ? f->route_error
                                      : "route.route.openshift.io \"prometheus-k8s\" not found");
    if (!f->route_ningress)
      return dserr_set(c->err, "No ingress found in openshift-monitoring/prometheus-k8s route");
    if (!f->route_host || !*f->route_host)
      return dserr_set(c->err,
                       "Host for status.ingress[0] in openshift-monitoring/prometheus-k8s route is "
                       "empty");
    sb_printf(&url, "https://%s", f->route_host);
  }
  if (f->monitoring_label == 0)
    warn(c,
         "namespace %s is not labeled with openshift.io/cluster-monitoring=true (the operator "
         "waits for this label before it renders the policy)",
         KD_OPERATOR_NAMESPACE);
  doc_node *providers = put(c, c->out->policy, "metricsProviders", doc_new_seq(c->a));
  doc_node *p = doc_seq_add(c->a, providers, doc_new_map(c->a));
  put(c, p, "source", str(c, "Prometheus"));
  put(c, put(c, p, "prometheus", doc_new_map(c->a)), "url", str(c, sb_str(&url)));
  sb_free(&url);
  return 0;
}

/* setEvictionsLimits */
static void eviction_limits(rctx *c) {
  const kd_spec *s = c->s;
  doc_node *pol = c->out->policy;
  if (has_kubevirt_profile(s)) {
    put(c, pol, "maxNoOfPodsToEvictTotal", num(c, KUBEVIRT_TOTAL_LIMIT));
    put(c, pol, "maxNoOfPodsToEvictPerNode", num(c, KUBEVIRT_NODE_LIMIT));
  }
  if (s->limit_total.set)
    put(c, pol, "maxNoOfPodsToEvictTotal", num(c, s->limit_total.v));
  if (!s->limit_node.set)
    return;
  put(c, pol, "maxNoOfPodsToEvictPerNode", num(c, s->limit_node.v));
  const doc_node *profiles = doc_get(pol, "profiles");
  for (size_t i = 0; i < profiles->n; i++) {
    const doc_node *configs = doc_get(profiles->items[i], "pluginConfig");
    for (size_t k = 0; k < configs->n; k++) {
      const char *name = doc_str(doc_get(configs->items[k], "name"));
      if (strcmp(name, "LowNodeUtilization") != 0)
        continue;
      doc_node *args = doc_get(configs->items[k], "args");
      doc_node *lim = doc_get(args, "evictionLimits");
      if (!lim)
        lim = put(c, args, "evictionLimits", doc_new_map(c->a));
      put(c, lim, "node", num(c, s->limit_node.v));
    }
  }
}

static int scheduler_conflicts(rctx *c) {
  const kd_spec *s = c->s;
  const char *sp = c->f->scheduler_profile ? c->f->scheduler_profile : "";
  if (!strcmp(sp, "HighNodeUtilization") &&
      (has_profile(s, "LifecycleAndUtilization") || has_profile(s, "DevPreviewLongLifecycle") ||
       has_profile(s, "LongLifecycle")))
    return dserr_set(c->err, "enabling Descheduler LowNodeUtilization with Scheduler "
                             "HighNodeUtilization may cause an eviction/scheduling hot loop");
  if (!strcmp(sp, "LowNodeUtilization") && has_profile(s, "CompactAndScale"))
    return dserr_set(c->err, "enabling Descheduler CompactAndScale with Scheduler "
                             "LowNodeUtilization may cause an eviction/scheduling hot loop");
  return 0;
}

static int config_map(rctx *c) {
  const kd_spec *s = c->s;
  if (!c->f->scheduler_known)
    warn(c, "the Scheduler config.openshift.io/v1 \"cluster\" could not be read; rendering as if "
            "it set no profile (the operator would wait for it: scheduler.config.openshift.io "
            "\"cluster\" not found)");
  if (namespaces(c) < 0)
    return -1;
  if (!s->nprofiles)
    return dserr_set(c->err, "descheduler should have at least 1 profile enabled");
  doc_node *pol = c->out->policy;
  put(c, pol, "apiVersion", str(c, "descheduler/v1alpha2"));
  put(c, pol, "kind", str(c, "DeschedulerPolicy"));
  doc_node *profiles = put(c, pol, "profiles", doc_new_seq(c->a));
  if (metrics_provider(c) < 0)
    return -1;
  c->ignore_pvc = !has_profile(s, "EvictPodsWithPVC");
  c->evict_local = has_profile(s, "EvictPodsWithLocalStorage");
  for (size_t i = 0; i < s->nprofiles; i++) {
    const char *p = s->profiles[i];
    doc_node *pr;
    if (!strcmp(p, "AffinityAndTaints"))
      pr = affinity_and_taints(c);
    else if (!strcmp(p, "TopologyAndDuplicates") || !strcmp(p, "SoftTopologyAndDuplicates"))
      pr = topology_and_duplicates(c, p[0] == 'S');
    else if (!strcmp(p, "LifecycleAndUtilization"))
      pr = lifecycle(c, false);
    else if (!strcmp(p, "EvictPodsWithLocalStorage") || !strcmp(p, "EvictPodsWithPVC"))
      continue;
    else if (!strcmp(p, "DevPreviewLongLifecycle") || !strcmp(p, "LongLifecycle"))
      pr = lifecycle(c, true);
    else if (!strcmp(p, "CompactAndScale"))
      pr = compact_and_scale(c);
    else if (!strcmp(p, "KubeVirtRelieveAndMigrate") || !strcmp(p, "DevKubeVirtRelieveAndMigrate"))
      pr = kubevirt_relieve_and_migrate(c, p);
    else
      return dserr_set(c->err, "Profile \"%s\" not recognized", p);
    if (!pr)
      return -1;
    doc_seq_add(c->a, profiles, pr);
  }
  eviction_limits(c);
  return scheduler_conflicts(c);
}

/* ---------- manageDeschedulerDeployment ---------- */

static void add_arg(rctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_arg(rctx *c, const char *fmt, ...) {
  strbuf sb = {0};
  va_list ap;
  va_start(ap, fmt);
  sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  kd_result *r = c->out;
  const char **args = ARENA_NEWN(c->a, const char *, r->nargs + 1);
  if (r->nargs)
    memcpy(args, r->args, r->nargs * sizeof *args);
  args[r->nargs++] = arena_strdup(c->a, sb_str(&sb));
  r->args = args;
  sb_free(&sb);
}

static int deployment_args(rctx *c) {
  const kd_spec *s = c->s;
  kd_result *r = c->out;
  add_arg(c, "--policy-config-file=/policy-dir/policy.yaml");
  add_arg(c, "--logging-format=text");
  add_arg(c, "--tls-cert-file=/certs-dir/tls.crt");
  add_arg(c, "--tls-private-key-file=/certs-dir/tls.key");
  add_arg(c, "--descheduling-interval=%" PRId64 "s", s->interval.v);
  r->interval_seconds = s->interval.v;
  r->evictions_in_background =
      (s->has_customizations && s->dev_evictions_in_background) || has_kubevirt_profile(s);
  if (r->evictions_in_background)
    add_arg(c, "--feature-gates=EvictionsInBackground=true");
  if (s->nciphers) {
    strbuf sb = {0};
    for (size_t i = 0; i < s->nciphers; i++)
      sb_printf(&sb, "%s%s", i ? "," : "", s->ciphers[i]);
    add_arg(c, "--tls-cipher-suites=%s", sb_str(&sb));
    sb_free(&sb);
  }
  if (s->min_tls_version && *s->min_tls_version)
    add_arg(c, "--tls-min-version=%s", s->min_tls_version);
  r->automatic = !strcmp(s->mode, "Automatic");
  if (!strcmp(s->mode, "Predictive")) {
    add_arg(c, "--dry-run=true");
    r->dry_run = true;
  } else if (*s->mode && strcmp(s->mode, "Automatic") != 0) {
    return dserr_set(c->err, "descheduler mode %s not recognized", s->mode);
  }
  static const struct {
    const char *level;
    int v;
  } levels[] = {{"Normal", 2}, {"Debug", 4}, {"Trace", 6}, {"TraceAll", 8}};
  r->verbosity = 2;
  for (size_t i = 0; i < sizeof levels / sizeof levels[0]; i++)
    if (!strcmp(s->log_level, levels[i].level))
      r->verbosity = levels[i].v;
  add_arg(c, "-v=%d", r->verbosity);
  return 0;
}

int kd_render(arena *a, const kd_spec *s, const kd_facts *f, kd_result *out, dserr *err) {
  memset(out, 0, sizeof *out);
  rctx c = {a, s, f, out, err};
  out->policy = doc_new_map(a);
  out->kubevirt_profile = has_kubevirt_profile(s);
  strbuf errs = {0};
  schema_errors(s, &errs);
  if (errs.len) {
    dserr_set(err, "validation errors: %s", sb_str(&errs));
    sb_free(&errs);
    return -1;
  }
  sb_free(&errs);
  char buf[256];
  const char *cel = cel_error(s, buf, sizeof buf);
  if (cel)
    return dserr_set(err, "%s", cel);
  if (!s->interval.set || s->interval.v <= 0)
    return dserr_set(err,
                     "descheduler should have an interval set and it should be greater than 0");
  if (config_map(&c) < 0 || deployment_args(&c) < 0)
    return -1;
  if (s->has_customizations && s->dev_soft_tainter)
    warn(&c, "spec.profileCustomizations.devEnableSoftTainter is deprecated and ignored");
  if (out->kubevirt_profile) {
    warn(&c, "the operator also runs its soft-tainter for the KubeVirtRelieveAndMigrate profile "
             "(PreferNoSchedule taints on overutilized nodes); the descheduler command does not "
             "taint nodes: run `descheduler soft-taint` with the same --kubedescheduler or "
             "--kubedescheduler-ref for that");
    out->soft_tainter_note = out->warnings[out->nwarnings - 1];
  }
  return 0;
}

int kd_policy_yaml(const kd_result *r, strbuf *out, dserr *err) {
  return doc_write_yaml(out, r->policy, err);
}
