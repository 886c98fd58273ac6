/* test_kubedescheduler.c - the KubeDescheduler CR -> DeschedulerPolicy renderer
 * (src/policy/kubedescheduler.c) as a pure function of the CR and the cluster facts: reading
 * the CR (defaults, strict fields), the operator's checks in its order (schema, CEL, interval,
 * namespaces, Route, profiles, Scheduler), the threshold and query tables, namespaces, eviction
 * limits, the operand's arguments, facts from a model, and that what it renders loads with this
 * project's policy loader. The command-line golden cases are in tests/cli/t0300. */
#include "support/support.h"

#include "../../src/plugins/registry.h"
#include "../../src/policy/kubedescheduler.h"
#include "../../src/util/strbuf.h"

#include <string.h>

static const char *const PROTECTED_NAMES[] = {"openshift-kube-scheduler", "default", "kube-system",
                                              "openshift-kube-descheduler-operator"};

/* The facts of a healthy OpenShift cluster with KubeVirt. */
static kd_facts facts(void) {
  kd_facts f;
  memset(&f, 0, sizeof f);
  kd_protected_namespaces(test_mem, PROTECTED_NAMES, 4, &f);
  f.kubevirt_node = true;
  f.route_present = true;
  f.route_ningress = 1;
  f.route_host = "prom.apps.example.com";
  f.scheduler_known = true;
  f.scheduler_profile = "";
  f.psi = KD_PSI_PRESENT;
  f.monitoring_label = 1;
  return f;
}

/* A CR with the given spec lines (YAML, indented by two spaces). */
static char *cr(const char *spec) {
  strbuf sb = {0};
  sb_printf(&sb,
            "apiVersion: operator.openshift.io/v1\nkind: KubeDescheduler\nmetadata:\n"
            "  name: cluster\n  namespace: openshift-kube-descheduler-operator\nspec:\n"
            "  managementState: Managed\n%s",
            spec);
  char *s = arena_strdup(test_mem, sb_str(&sb));
  sb_free(&sb);
  return s;
}

static int parse(const char *yaml, kd_spec *s, dserr *err) {
  doc_node *root;
  if (doc_parse_yaml(test_mem, "cr.yaml", yaml, strlen(yaml), &root, err) < 0)
    fail_msg("test CR is not YAML: %s", err->msg);
  return kd_parse(test_mem, "cr.yaml", root, s, err);
}

static int render_f(const char *spec_lines, const kd_facts *f, kd_result *r, dserr *err) {
  kd_spec s;
  if (parse(cr(spec_lines), &s, err) < 0)
    return -1;
  return kd_render(test_mem, &s, f, r, err);
}

static kd_result render_ok_f(const char *spec_lines, const kd_facts *f) {
  kd_result r;
  dserr err;
  if (render_f(spec_lines, f, &r, &err) < 0)
    fail_msg("render failed: %s\n%s", err.msg, spec_lines);
  return r;
}

static kd_result render_ok(const char *spec_lines) {
  kd_facts f = facts();
  return render_ok_f(spec_lines, &f);
}

#define assert_render_error_f(spec, f, want)                                                       \
  do {                                                                                             \
    kd_result r_;                                                                                  \
    dserr e_;                                                                                      \
    if (render_f((spec), (f), &r_, &e_) == 0)                                                      \
      fail_msg("rendered, expected: %s", (want));                                                  \
    assert_string_equal(e_.msg, (want));                                                           \
  } while (0)
#define assert_render_error(spec, want)                                                            \
  do {                                                                                             \
    kd_facts f_ = facts();                                                                         \
    assert_render_error_f((spec), &f_, (want));                                                    \
  } while (0)

/* pluginConfig args of plugin in profile i */
static const doc_node *args_of(const kd_result *r, size_t i, const char *plugin) {
  const doc_node *profiles = doc_get(r->policy, "profiles");
  assert_true(i < profiles->n);
  const doc_node *configs = doc_get(profiles->items[i], "pluginConfig");
  for (size_t k = 0; k < configs->n; k++)
    if (!strcmp(doc_str(doc_get(configs->items[k], "name")), plugin))
      return doc_get(configs->items[k], "args");
  fail_msg("no %s in profile %zu", plugin, i);
  return NULL;
}

static int64_t int_at(const doc_node *n, const char *a, const char *b) {
  const doc_node *v = b ? doc_path(n, a, b, NULL) : doc_get(n, a);
  if (!v || v->type != DOC_INT)
    fail_msg("%s.%s is not an integer", a, b ? b : "");
  return v->v.i;
}

static const char *str_at(const doc_node *n, const char *a, const char *b, const char *c) {
  return doc_str(c ? doc_path(n, a, b, c, NULL) : b ? doc_path(n, a, b, NULL) : doc_get(n, a));
}

static bool has_arg(const kd_result *r, const char *arg) {
  for (size_t i = 0; i < r->nargs; i++)
    if (!strcmp(r->args[i], arg))
      return true;
  return false;
}

static bool has_warning(const kd_result *r, const char *needle) {
  for (size_t i = 0; i < r->nwarnings; i++)
    if (strstr(r->warnings[i], needle))
      return true;
  return false;
}

#define SEED                                                                                       \
  "  mode: Automatic\n  deschedulingIntervalSeconds: 30\n  profiles:\n"                            \
  "  - SoftTopologyAndDuplicates\n  - DevKubeVirtRelieveAndMigrate\n"                              \
  "  profileCustomizations:\n    devDeviationThresholds: AsymmetricLow\n"                          \
  "    devActualUtilizationProfile: PrometheusCPUCombined\n"

/* ---------------------------------------------------------------- reading the CR */

static void test_parse_defaults_and_fields(void **state) {
  (void)state;
  kd_spec s;
  dserr err;
  assert_int_equal(parse(cr("  profiles: [AffinityAndTaints]\n"), &s, &err), 0);
  assert_string_equal(s.mode, "Predictive"); /* the CRD's defaults */
  assert_string_equal(s.log_level, "Normal");
  assert_string_equal(s.operator_log_level, "Normal");
  assert_false(s.interval.set);
  assert_false(s.has_customizations);
  assert_string_equal(s.dev_actual, "");
  assert_null(s.dev_low);
  assert_int_equal(parse(cr(SEED "    podLifetime: 1h30m\n    thresholdPriority: -7\n"
                                 "    devMigrationCooldown: 90s\n"),
                         &s, &err),
                   0);
  assert_string_equal(s.mode, "Automatic");
  assert_int_equal(s.interval.v, 30);
  assert_int_equal(s.nprofiles, 2);
  assert_string_equal(s.dev_deviation, "AsymmetricLow");
  assert_int_equal(s.pod_lifetime.v, 5400LL * 1000000000LL);
  assert_int_equal(s.threshold_priority.v, -7);
  assert_int_equal(s.migration_cooldown.v, 90LL * 1000000000LL);
  /* an empty string is a value (Go: a non-nil pointer to ""), not an absent field */
  assert_int_equal(
      parse(cr("  profileCustomizations: {devLowNodeUtilizationThresholds: ''}\n"), &s, &err), 0);
  assert_non_null(s.dev_low);
  assert_string_equal(s.dev_low, "");
}

static void test_parse_errors(void **state) {
  (void)state;
  static const struct {
    const char *spec, *want;
  } cases[] = {
      {"  deschedulingIntervalSeconds: 1.5\n",
       "spec.deschedulingIntervalSeconds: expected an integer (int32), got 1.5"},
      {"  profiles: {a: b}\n", "spec.profiles: expected a list of strings, got a map"},
      {"  evictionLimits: {total: x}\n",
       "spec.evictionLimits.total: expected an integer (int32), got \"x\""},
      {"  evictionLimits: {nodes: 1}\n",
       "spec.evictionLimits.nodes: unknown field (expected one of: total, node)"},
      {"  profileCustomizations: {namespaces: {include: [a]}}\n",
       "spec.profileCustomizations.namespaces.include: unknown field (expected one of: included, "
       "excluded)"},
      {"  profileCustomizations: {podLifetime: -5m}\n",
       "spec.profileCustomizations.podLifetime: expected a duration of zero or more, got a "
       "negative "
       "one"},
      {"  profileCustomizations: {thresholdPriorityClassName: 5}\n",
       "spec.profileCustomizations.thresholdPriorityClassName: expected a string, got 5"},
      {"  observedConfig: {servingInfo: {cipherSuites: TLS_X}}\n",
       "spec.observedConfig.servingInfo.cipherSuites: expected a list of strings, got \"TLS_X\""},
      {"  logLevel: [Debug]\n", "spec.logLevel: expected a string, got a list"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    kd_spec s;
    dserr err;
    if (parse(cr(cases[i].spec), &s, &err) == 0)
      fail_msg("parsed: %s", cases[i].spec);
    assert_string_equal(err.msg, cases[i].want);
  }
  kd_spec s;
  dserr err;
  const char *named = "apiVersion: operator.openshift.io/v1\nkind: KubeDescheduler\n"
                      "metadata: {name: descheduler}\nspec: {}\n";
  assert_int_equal(parse(named, &s, &err), -1);
  assert_string_equal(err.msg, "kubedescheduler is a singleton, .metadata.name must be 'cluster'");
  /* observedConfig and unsupportedConfigOverrides are free-form */
  assert_int_equal(parse(cr("  unsupportedConfigOverrides: {anything: [1, 2]}\n"
                            "  observedConfig: {servingInfo: {other: 1}, extra: true}\n"),
                         &s, &err),
                   0);
}

/* ---------------------------------------------------------------- the operator's checks */

static void test_schema_errors_joined_in_schema_order(void **state) {
  (void)state;
  assert_render_error(
      "  deschedulingIntervalSeconds: 0\n  mode: Soon\n  logLevel: Loud\n"
      "  profileCustomizations: {devHighNodeUtilizationThresholds: Max}\n"
      "  profiles: [Foo, AffinityAndTaints, Bar]\n",
      "validation errors: spec.deschedulingIntervalSeconds in body should be greater "
      "than or equal to 1; spec.logLevel in body should be one of [ Normal Debug "
      "Trace TraceAll]; spec.mode in body should be one of [Automatic Predictive]; "
      "spec.profileCustomizations.devHighNodeUtilizationThresholds in body should be "
      "one of [Minimal Modest Moderate ]; spec.profiles[0] in body should be one of "
      "[AffinityAndTaints TopologyAndDuplicates LifecycleAndUtilization "
      "DevPreviewLongLifecycle LongLifecycle SoftTopologyAndDuplicates "
      "EvictPodsWithLocalStorage EvictPodsWithPVC CompactAndScale "
      "DevKubeVirtRelieveAndMigrate KubeVirtRelieveAndMigrate]; spec.profiles[2] in "
      "body should be one of [AffinityAndTaints TopologyAndDuplicates "
      "LifecycleAndUtilization DevPreviewLongLifecycle LongLifecycle "
      "SoftTopologyAndDuplicates EvictPodsWithLocalStorage EvictPodsWithPVC "
      "CompactAndScale DevKubeVirtRelieveAndMigrate KubeVirtRelieveAndMigrate]");
}

static void test_cel_rules_in_order(void **state) {
  (void)state;
  static const char *const pairs[][2] = {
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
  char spec[256], want[256];
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
    snprintf(spec, sizeof spec, "  deschedulingIntervalSeconds: 5\n  profiles: [%s, %s]\n",
             pairs[i][1], pairs[i][0]);
    snprintf(want, sizeof want, "cannot declare %s and %s profiles simultaneously", pairs[i][0],
             pairs[i][1]);
    assert_render_error(spec, want);
  }
  /* the duplicate rule comes first; then the CRD's order, whatever the order in the CR */
  assert_render_error("  profiles: [CompactAndScale, LongLifecycle, CompactAndScale, "
                      "LifecycleAndUtilization]\n",
                      "duplicate profiles are not allowed");
  assert_render_error("  profiles: [CompactAndScale, KubeVirtRelieveAndMigrate, LongLifecycle]\n",
                      "cannot declare LongLifecycle and KubeVirtRelieveAndMigrate profiles "
                      "simultaneously");
  /* CEL runs before the interval check */
  assert_render_error("  profiles: [TopologyAndDuplicates, SoftTopologyAndDuplicates]\n",
                      "cannot declare SoftTopologyAndDuplicates and TopologyAndDuplicates profiles "
                      "simultaneously");
  /* allowed combinations */
  render_ok(
      "  deschedulingIntervalSeconds: 5\n  profiles: [LongLifecycle, DevPreviewLongLifecycle]\n");
  render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [CompactAndScale, "
            "SoftTopologyAndDuplicates]\n");
  render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [AffinityAndTaints, "
            "KubeVirtRelieveAndMigrate]\n");
}

static void test_interval_and_profiles_required(void **state) {
  (void)state;
  assert_render_error("  profiles: [AffinityAndTaints]\n",
                      "descheduler should have an interval set and it should be greater than 0");
  assert_render_error("  deschedulingIntervalSeconds: 5\n  profiles: []\n",
                      "descheduler should have at least 1 profile enabled");
  assert_render_error("  deschedulingIntervalSeconds: 5\n",
                      "validation errors: spec.profiles in body must be of type array: \"null\"");
}

/* ---------------------------------------------------------------- the seed CR */

static void test_seed(void **state) {
  (void)state;
  kd_result r = render_ok(SEED);
  const doc_node *p = r.policy;
  assert_string_equal(str_at(p, "apiVersion", NULL, NULL), "descheduler/v1alpha2");
  assert_string_equal(str_at(p, "nodeSelector", NULL, NULL), "kubevirt.io/schedulable=true");
  assert_int_equal(int_at(p, "maxNoOfPodsToEvictTotal", NULL), 5);
  assert_int_equal(int_at(p, "maxNoOfPodsToEvictPerNode", NULL), 2);
  const doc_node *mp = doc_get(p, "metricsProviders");
  assert_int_equal(mp->n, 1);
  assert_string_equal(str_at(mp->items[0], "prometheus", "url", NULL),
                      "https://prom.apps.example.com");
  const doc_node *profiles = doc_get(p, "profiles");
  assert_int_equal(profiles->n, 2);
  assert_string_equal(str_at(profiles->items[0], "name", NULL, NULL), "SoftTopologyAndDuplicates");
  assert_string_equal(str_at(profiles->items[1], "name", NULL, NULL), "KubeVirtRelieveAndMigrate");
  const doc_node *lnu = args_of(&r, 1, "LowNodeUtilization");
  assert_int_equal(int_at(lnu, "thresholds", "MetricResource"), 0);
  assert_int_equal(int_at(lnu, "targetThresholds", "MetricResource"), 10);
  assert_true(doc_get(lnu, "useDeviationThresholds")->v.b);
  assert_string_equal(str_at(lnu, "metricsUtilization", "prometheus", "query"),
                      "descheduler:combined_utilization_and_pressure:avg1m");
  assert_int_equal(int_at(lnu, "evictionLimits", "node"), 2);
  const doc_node *de = args_of(&r, 1, "DefaultEvictor");
  assert_null(doc_get(de, "ignorePvcPods"));
  assert_true(doc_get(de, "evictLocalStoragePods")->v.b);
  assert_string_equal(str_at(de, "noEvictionPolicy", NULL, NULL), "Mandatory");
  assert_int_equal(args_of(&r, 1, "KubevirtMigrationAware")->n, 0);
  const doc_node *filter = doc_path(profiles->items[1], "plugins", "filter", "enabled", NULL);
  assert_int_equal(filter->n, 2);
  assert_string_equal(filter->items[1]->text, "KubevirtMigrationAware");
  assert_int_equal(doc_path(profiles->items[1], "plugins", "deschedule", "enabled", NULL)->type,
                   DOC_NULL);
  /* the operand's arguments */
  static const char *const want[] = {"--policy-config-file=/policy-dir/policy.yaml",
                                     "--logging-format=text",
                                     "--tls-cert-file=/certs-dir/tls.crt",
                                     "--tls-private-key-file=/certs-dir/tls.key",
                                     "--descheduling-interval=30s",
                                     "--feature-gates=EvictionsInBackground=true",
                                     "-v=2"};
  assert_int_equal(r.nargs, 7);
  for (size_t i = 0; i < 7; i++)
    assert_string_equal(r.args[i], want[i]);
  assert_int_equal(r.interval_seconds, 30);
  assert_false(r.dry_run);
  assert_int_equal(r.verbosity, 2);
  assert_true(r.evictions_in_background);
  assert_true(r.kubevirt_profile);
  assert_true(has_warning(&r, "soft-tainter"));
}

/* ---------------------------------------------------------------- thresholds and queries */

static void test_kubevirt_threshold_table(void **state) {
  (void)state;
  static const struct {
    const char *custom;
    bool deviation;
    int64_t low, high;
  } table[] = {
      {"{}", true, 0, 10},
      {"{devDeviationThresholds: Low}", true, 10, 10},
      {"{devDeviationThresholds: Medium}", true, 20, 20},
      {"{devDeviationThresholds: High}", true, 30, 30},
      {"{devDeviationThresholds: AsymmetricLow}", true, 0, 10},
      {"{devDeviationThresholds: AsymmetricMedium}", true, 0, 20},
      {"{devDeviationThresholds: AsymmetricHigh}", true, 0, 30},
      {"{devLowNodeUtilizationThresholds: Low}", false, 10, 30},
      {"{devLowNodeUtilizationThresholds: Medium}", false, 20, 50},
      {"{devLowNodeUtilizationThresholds: High}", false, 40, 70},
      {"{devLowNodeUtilizationThresholds: ''}", true, 20, 50},
  };
  char spec[256];
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    snprintf(spec, sizeof spec,
             "  deschedulingIntervalSeconds: 5\n  profiles: [KubeVirtRelieveAndMigrate]\n"
             "  profileCustomizations: %s\n",
             table[i].custom);
    kd_result r = render_ok(spec);
    const doc_node *lnu = args_of(&r, 0, "LowNodeUtilization");
    if (int_at(lnu, "thresholds", "MetricResource") != table[i].low ||
        int_at(lnu, "targetThresholds", "MetricResource") != table[i].high ||
        (doc_get(lnu, "useDeviationThresholds") != NULL) != table[i].deviation)
      fail_msg("%s: thresholds %lld/%lld deviation %d", table[i].custom,
               (long long)int_at(lnu, "thresholds", "MetricResource"),
               (long long)int_at(lnu, "targetThresholds", "MetricResource"),
               doc_get(lnu, "useDeviationThresholds") != NULL);
  }
  assert_render_error(
      "  deschedulingIntervalSeconds: 5\n  profiles: [KubeVirtRelieveAndMigrate]\n"
      "  profileCustomizations: {devDeviationThresholds: ''}\n",
      "unknown Descheduler DeviationThresholds threshold , only 'Low', 'Medium' and "
      "'High' are supported");
  assert_render_error("  deschedulingIntervalSeconds: 5\n  profiles: [KubeVirtRelieveAndMigrate]\n"
                      "  profileCustomizations: {devDeviationThresholds: Low, "
                      "devLowNodeUtilizationThresholds: Low}\n",
                      "only one of DevLowNodeUtilizationThresholds and DevDeviationThresholds "
                      "customizations can be configured simultaneously");
}

static void test_lifecycle_threshold_table(void **state) {
  (void)state;
  static const struct {
    const char *custom;
    int64_t low, high;
  } table[] = {{"{}", 20, 50},
               {"{devLowNodeUtilizationThresholds: Low}", 10, 30},
               {"{devLowNodeUtilizationThresholds: Medium}", 20, 50},
               {"{devLowNodeUtilizationThresholds: ''}", 20, 50},
               {"{devLowNodeUtilizationThresholds: High}", 40, 70},
               /* ignored: "ignore dynamic" */
               {"{devDeviationThresholds: High}", 20, 50},
               {"{devDeviationThresholds: '', devLowNodeUtilizationThresholds: Low}", 10, 30}};
  char spec[256];
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    for (int longl = 0; longl < 2; longl++) {
      snprintf(spec, sizeof spec,
               "  deschedulingIntervalSeconds: 5\n  profiles: [%s]\n  profileCustomizations: %s\n",
               longl ? "LongLifecycle" : "LifecycleAndUtilization", table[i].custom);
      kd_result r = render_ok(spec);
      const doc_node *lnu = args_of(&r, 0, "LowNodeUtilization");
      static const char *const res[] = {"cpu", "memory", "pods"};
      for (size_t k = 0; k < 3; k++) {
        assert_int_equal(int_at(lnu, "thresholds", res[k]), table[i].low);
        assert_int_equal(int_at(lnu, "targetThresholds", res[k]), table[i].high);
      }
      assert_null(doc_get(lnu, "useDeviationThresholds"));
      assert_null(doc_get(lnu, "metricsUtilization"));
    }
}

static void test_compact_and_scale_thresholds(void **state) {
  (void)state;
  static const struct {
    const char *custom;
    int64_t t;
  } table[] = {{"{}", 20},
               {"{devHighNodeUtilizationThresholds: Minimal}", 10},
               {"{devHighNodeUtilizationThresholds: Modest}", 20},
               {"{devHighNodeUtilizationThresholds: ''}", 20},
               {"{devHighNodeUtilizationThresholds: Moderate}", 30}};
  char spec[256];
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
    snprintf(spec, sizeof spec,
             "  deschedulingIntervalSeconds: 5\n  profiles: [CompactAndScale]\n"
             "  profileCustomizations: %s\n",
             table[i].custom);
    kd_result r = render_ok(spec);
    const doc_node *hnu = args_of(&r, 0, "HighNodeUtilization");
    assert_int_equal(int_at(hnu, "thresholds", "cpu"), table[i].t);
    assert_int_equal(int_at(hnu, "thresholds", "memory"), table[i].t);
    assert_int_equal(int_at(hnu, "thresholds", "pods"), table[i].t);
  }
}

static void test_query_table(void **state) {
  (void)state;
  static const char *const table[][2] = {
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
      {"'query:sum by (instance) (x{a=\"b\"})'", "sum by (instance) (x{a=\"b\"})"},
      {"'query:'", ""},
  };
  char spec[512];
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    for (int lifecycle = 0; lifecycle < 2; lifecycle++) {
      snprintf(spec, sizeof spec,
               "  deschedulingIntervalSeconds: 5\n  profiles: [%s]\n"
               "  profileCustomizations:\n    devActualUtilizationProfile: %s\n",
               lifecycle ? "LifecycleAndUtilization" : "KubeVirtRelieveAndMigrate", table[i][0]);
      kd_result r = render_ok(spec);
      const doc_node *lnu = args_of(&r, 0, "LowNodeUtilization");
      assert_string_equal(str_at(lnu, "metricsUtilization", "prometheus", "query"), table[i][1]);
      assert_string_equal(str_at(lnu, "metricsUtilization", "source", NULL), "Prometheus");
      /* with metrics the only resource is MetricResource */
      assert_int_equal(doc_get(lnu, "thresholds")->n, 1);
      assert_non_null(doc_path(lnu, "thresholds", "MetricResource", NULL));
      assert_string_equal(
          str_at(doc_get(r.policy, "metricsProviders")->items[0], "source", NULL, NULL),
          "Prometheus");
    }
  assert_render_error("  deschedulingIntervalSeconds: 5\n  profiles: [LongLifecycle]\n"
                      "  profileCustomizations: {devActualUtilizationProfile: cpu}\n",
                      "unknown prometheus profile: cpu");
}

/* ---------------------------------------------------------------- namespaces */

static void test_namespaces(void **state) {
  (void)state;
  /* none: every plugin excludes the protected list */
  kd_result r =
      render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [LifecycleAndUtilization]\n");
  const doc_node *ex = doc_path(args_of(&r, 0, "PodLifeTime"), "namespaces", "exclude", NULL);
  static const char *const protected_ns[] = {"kube-system", "hypershift", "openshift",
                                             "openshift-kube-descheduler-operator",
                                             "openshift-kube-scheduler"};
  assert_int_equal(ex->n, 5);
  for (size_t i = 0; i < 5; i++)
    assert_string_equal(ex->items[i]->text, protected_ns[i]);
  assert_int_equal(
      doc_path(args_of(&r, 0, "LowNodeUtilization"), "evictableNamespaces", "exclude", NULL)->n, 5);
  /* excluded: appended to the protected list, everywhere */
  r = render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [LifecycleAndUtilization]\n"
                "  profileCustomizations: {namespaces: {excluded: [a, b]}}\n");
  ex = doc_path(args_of(&r, 0, "RemovePodsHavingTooManyRestarts"), "namespaces", "exclude", NULL);
  assert_int_equal(ex->n, 7);
  assert_string_equal(ex->items[6]->text, "b");
  assert_int_equal(
      doc_path(args_of(&r, 0, "LowNodeUtilization"), "evictableNamespaces", "exclude", NULL)->n, 7);
  assert_int_equal(r.nwarnings, 0);
  r = render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [CompactAndScale]\n"
                "  profileCustomizations: {namespaces: {excluded: [a, b]}}\n");
  assert_int_equal(
      doc_path(args_of(&r, 0, "HighNodeUtilization"), "evictableNamespaces", "exclude", NULL)->n,
      7);
  assert_int_equal(r.nwarnings, 0);
  /* included: include lists; LNU falls back to the protected list (warning once, though two
   * profiles use LNU) */
  r = render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [LongLifecycle, "
                "DevPreviewLongLifecycle, AffinityAndTaints]\n"
                "  profileCustomizations: {namespaces: {included: [team]}}\n");
  const doc_node *inc =
      doc_path(args_of(&r, 2, "RemovePodsViolatingNodeTaints"), "namespaces", "include", NULL);
  assert_int_equal(inc->n, 1);
  assert_string_equal(inc->items[0]->text, "team");
  assert_null(
      doc_path(args_of(&r, 0, "RemovePodsHavingTooManyRestarts"), "namespaces", "exclude", NULL));
  assert_int_equal(
      doc_path(args_of(&r, 1, "LowNodeUtilization"), "evictableNamespaces", "exclude", NULL)->n, 5);
  assert_int_equal(r.nwarnings, 1);
  assert_true(has_warning(&r, "LowNodeUtilization is enabled, however it does not support "
                              "namespace inclusion"));
  /* HNU gets no namespaces at all */
  r = render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [CompactAndScale]\n"
                "  profileCustomizations: {namespaces: {included: [team]}}\n");
  assert_null(doc_get(args_of(&r, 0, "HighNodeUtilization"), "evictableNamespaces"));
  assert_true(has_warning(&r, "HighNodeUtilization is enabled, however it does not support "
                              "namespace inclusion"));
  assert_render_error("  deschedulingIntervalSeconds: 5\n  profiles: [AffinityAndTaints]\n"
                      "  profileCustomizations: {namespaces: {included: [a], excluded: [b]}}\n",
                      "It is forbidden to combine both included and excluded namespaces");
  assert_render_error(
      "  deschedulingIntervalSeconds: 5\n  profiles: [AffinityAndTaints]\n"
      "  profileCustomizations: {namespaces: {included: [a, openshift]}}\n",
      "Protected namespace openshift included. It is forbidden to include any of the "
      "protected namespaces from [kube-system hypershift openshift "
      "openshift-kube-descheduler-operator openshift-kube-scheduler]");
}

/* ---------------------------------------------------------------- DefaultEvictor, limits */

static void test_default_evictor_customizations(void **state) {
  (void)state;
  kd_result r = render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [AffinityAndTaints, "
                          "EvictPodsWithPVC, EvictPodsWithLocalStorage]\n"
                          "  profileCustomizations: {thresholdPriority: 100}\n");
  assert_int_equal(doc_get(r.policy, "profiles")->n, 1); /* EvictPodsWith* emit no profile */
  const doc_node *de = args_of(&r, 0, "DefaultEvictor");
  assert_null(doc_get(de, "ignorePvcPods"));
  assert_true(doc_get(de, "evictLocalStoragePods")->v.b);
  assert_int_equal(int_at(de, "priorityThreshold", "value"), 100);
  assert_string_equal(str_at(de, "priorityThreshold", "name", NULL), "");
  assert_int_equal(doc_get(de, "podProtections")->type, DOC_MAP);
  r = render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [CompactAndScale]\n"
                "  profileCustomizations: {thresholdPriorityClassName: high}\n");
  de = args_of(&r, 0, "DefaultEvictor");
  assert_true(doc_get(de, "ignorePvcPods")->v.b);
  assert_string_equal(str_at(de, "priorityThreshold", "name", NULL), "high");
  assert_int_equal(doc_path(de, "priorityThreshold", "value", NULL)->type, DOC_NULL);
  r = render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [LifecycleAndUtilization]\n"
                "  profileCustomizations: {podLifetime: 2m30.999s}\n");
  assert_int_equal(int_at(args_of(&r, 0, "PodLifeTime"), "maxPodLifeTimeSeconds", NULL), 150);
  assert_render_error(
      "  deschedulingIntervalSeconds: 5\n  profiles: [CompactAndScale]\n"
      "  profileCustomizations: {thresholdPriority: 1, thresholdPriorityClassName: x}\n",
      "It is invalid to set both .spec.profileCustomizations.thresholdPriority and "
      ".spec.profileCustomizations.ThresholdPriorityClassName fields");
}

static void test_eviction_limits(void **state) {
  (void)state;
  kd_result r =
      render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [TopologyAndDuplicates]\n");
  assert_null(doc_get(r.policy, "maxNoOfPodsToEvictTotal"));
  assert_null(doc_get(r.policy, "maxNoOfPodsToEvictPerNode"));
  r = render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [LongLifecycle]\n"
                "  evictionLimits: {total: 0, node: 7}\n");
  assert_int_equal(int_at(r.policy, "maxNoOfPodsToEvictTotal", NULL), 0);
  assert_int_equal(int_at(r.policy, "maxNoOfPodsToEvictPerNode", NULL), 7);
  assert_int_equal(int_at(args_of(&r, 0, "LowNodeUtilization"), "evictionLimits", "node"), 7);
  r = render_ok("  deschedulingIntervalSeconds: 5\n  profiles: [KubeVirtRelieveAndMigrate]\n"
                "  evictionLimits: {node: 1}\n");
  assert_int_equal(int_at(r.policy, "maxNoOfPodsToEvictTotal", NULL), 5);
  assert_int_equal(int_at(r.policy, "maxNoOfPodsToEvictPerNode", NULL), 1);
  assert_int_equal(int_at(args_of(&r, 0, "LowNodeUtilization"), "evictionLimits", "node"), 1);
}

/* ---------------------------------------------------------------- cluster facts */

static void test_kubevirt_preconditions(void **state) {
  (void)state;
  const char *spec =
      "  deschedulingIntervalSeconds: 5\n  profiles: [DevKubeVirtRelieveAndMigrate]\n";
  kd_facts f = facts();
  f.kubevirt_node = false;
  assert_render_error_f(spec, &f,
                        "profile DevKubeVirtRelieveAndMigrate can only be used when "
                        "KubeVirt is properly deployed");
  f = facts();
  f.psi = KD_PSI_ABSENT;
  assert_render_error_f(spec, &f,
                        "profile DevKubeVirtRelieveAndMigrate can only be used when PSI "
                        "metrics are enabled for the worker nodes");
  f = facts();
  f.psi = KD_PSI_UNKNOWN;
  kd_result r = render_ok_f(spec, &f);
  assert_true(has_warning(&r, "was not checked"));
  f = facts();
  f.route_present = false;
  assert_render_error_f(spec, &f,
                        "unable to get openshift-monitoring/prometheus-k8s route: "
                        "route.route.openshift.io \"prometheus-k8s\" not found");
  f.route_error = "GET /apis/...: HTTP 403: forbidden";
  assert_render_error_f(spec, &f,
                        "unable to get openshift-monitoring/prometheus-k8s route: "
                        "GET /apis/...: HTTP 403: forbidden");
  f.prometheus_url = "https://thanos:9091";
  r = render_ok_f(spec, &f);
  assert_string_equal(
      str_at(doc_get(r.policy, "metricsProviders")->items[0], "prometheus", "url", NULL),
      "https://thanos:9091");
  f = facts();
  f.route_ningress = 0;
  assert_render_error_f(spec, &f, "No ingress found in openshift-monitoring/prometheus-k8s route");
  f = facts();
  f.route_host = "";
  assert_render_error_f(spec, &f,
                        "Host for status.ingress[0] in openshift-monitoring/prometheus-k8s "
                        "route is empty");
  f = facts();
  f.monitoring_label = 0;
  r = render_ok_f(spec, &f);
  assert_true(has_warning(&r, "is not labeled with openshift.io/cluster-monitoring=true"));
  /* the Route is read before any profile is built: its error wins over a profile's */
  f = facts();
  f.route_present = false;
  assert_render_error_f(
      "  deschedulingIntervalSeconds: 5\n  profiles: [KubeVirtRelieveAndMigrate]\n"
      "  profileCustomizations: {thresholdPriority: 1, thresholdPriorityClassName: x}\n",
      &f,
      "unable to get openshift-monitoring/prometheus-k8s route: "
      "route.route.openshift.io \"prometheus-k8s\" not found");
  /* no Prometheus needed, no Route read */
  render_ok_f("  deschedulingIntervalSeconds: 5\n  profiles: [LongLifecycle]\n", &f);
}

static void test_scheduler_conflicts(void **state) {
  (void)state;
  kd_facts f = facts();
  f.scheduler_profile = "HighNodeUtilization";
  assert_render_error_f(
      "  deschedulingIntervalSeconds: 5\n  profiles: [AffinityAndTaints, "
      "DevPreviewLongLifecycle]\n",
      &f,
      "enabling Descheduler LowNodeUtilization with Scheduler HighNodeUtilization "
      "may cause an eviction/scheduling hot loop");
  render_ok_f("  deschedulingIntervalSeconds: 5\n  profiles: [KubeVirtRelieveAndMigrate]\n", &f);
  render_ok_f("  deschedulingIntervalSeconds: 5\n  profiles: [CompactAndScale]\n", &f);
  f.scheduler_profile = "LowNodeUtilization";
  assert_render_error_f(
      "  deschedulingIntervalSeconds: 5\n  profiles: [CompactAndScale]\n", &f,
      "enabling Descheduler CompactAndScale with Scheduler LowNodeUtilization may "
      "cause an eviction/scheduling hot loop");
  f.scheduler_known = false;
  f.scheduler_profile = NULL;
  kd_result r =
      render_ok_f("  deschedulingIntervalSeconds: 5\n  profiles: [CompactAndScale]\n", &f);
  assert_true(has_warning(&r, "could not be read"));
}

static void test_args(void **state) {
  (void)state;
  kd_result r = render_ok("  deschedulingIntervalSeconds: 600\n  profiles: [AffinityAndTaints]\n"
                          "  logLevel: TraceAll\n"
                          "  profileCustomizations: {devEnableEvictionsInBackground: true}\n"
                          "  observedConfig: {servingInfo: {cipherSuites: [A, B], minTLSVersion: "
                          "VersionTLS13}}\n");
  static const char *const want[] = {"--policy-config-file=/policy-dir/policy.yaml",
                                     "--logging-format=text",
                                     "--tls-cert-file=/certs-dir/tls.crt",
                                     "--tls-private-key-file=/certs-dir/tls.key",
                                     "--descheduling-interval=600s",
                                     "--feature-gates=EvictionsInBackground=true",
                                     "--tls-cipher-suites=A,B",
                                     "--tls-min-version=VersionTLS13",
                                     "--dry-run=true",
                                     "-v=8"};
  assert_int_equal(r.nargs, 10);
  for (size_t i = 0; i < 10; i++)
    assert_string_equal(r.args[i], want[i]);
  assert_true(r.dry_run);
  assert_int_equal(r.verbosity, 8);
  static const struct {
    const char *level;
    const char *arg;
  } levels[] = {{"Normal", "-v=2"}, {"Debug", "-v=4"}, {"Trace", "-v=6"}, {"''", "-v=2"}};
  char spec[256];
  for (size_t i = 0; i < 4; i++) {
    snprintf(spec, sizeof spec,
             "  deschedulingIntervalSeconds: 5\n  profiles: [AffinityAndTaints]\n  mode: "
             "Automatic\n  logLevel: %s\n",
             levels[i].level);
    r = render_ok(spec);
    assert_true(has_arg(&r, levels[i].arg));
    assert_false(has_arg(&r, "--dry-run=true"));
    assert_false(r.evictions_in_background);
  }
}

static void test_facts_from_model(void **state) {
  (void)state;
  dserr err;
  model *m = load_model_text(
      "{\"kind\":\"List\",\"items\":["
      "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"openshift-z\"}},"
      "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"openshift-kube-descheduler-operator\","
      "\"labels\":{\"openshift.io/cluster-monitoring\":\"true\"}}},"
      "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"openshiftx\"}},"
      "{\"kind\":\"Namespace\",\"metadata\":{\"name\":\"openshift-a\"}},"
      "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\",\"labels\":{\"kubevirt.io/"
      "schedulable\":\"false\"}}},"
      "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\",\"labels\":{\"kubevirt.io/"
      "schedulable\":\"true\"}}},"
      "{\"apiVersion\":\"serving.knative.dev/v1\",\"kind\":\"Route\",\"metadata\":{\"name\":"
      "\"prometheus-k8s\",\"namespace\":\"openshift-monitoring\"},\"status\":{}},"
      "{\"apiVersion\":\"route.openshift.io/"
      "v1\",\"kind\":\"Route\",\"metadata\":{\"name\":\"other\","
      "\"namespace\":\"openshift-monitoring\"},\"status\":{\"ingress\":[{\"host\":\"x\"}]}},"
      "{\"apiVersion\":\"route.openshift.io/v1\",\"kind\":\"Route\",\"metadata\":{\"name\":"
      "\"prometheus-k8s\",\"namespace\":\"openshift-monitoring\"},\"status\":{\"ingress\":"
      "[{\"host\":\"p.example\"},{\"host\":\"q\"}]}},"
      "{\"apiVersion\":\"config.openshift.io/v1\",\"kind\":\"Scheduler\",\"metadata\":{\"name\":"
      "\"cluster\"},\"spec\":{\"profile\":\"HighNodeUtilization\"}},"
      "{\"apiVersion\":\"operator.openshift.io/v1\",\"kind\":\"KubeDescheduler\",\"metadata\":"
      "{\"name\":\"cluster\",\"namespace\":\"elsewhere\"},\"spec\":{}},"
      "{\"apiVersion\":\"operator.openshift.io/v1\",\"kind\":\"KubeDescheduler\",\"metadata\":"
      "{\"name\":\"cluster\",\"namespace\":\"openshift-kube-descheduler-operator\"},"
      "\"spec\":{\"profiles\":[\"AffinityAndTaints\"]}}]}",
      &err);
  if (!m)
    fail_msg("%s", err.msg);
  kd_facts f;
  kd_facts_from_model(test_mem, m, &f);
  static const char *const want[] = {"kube-system",
                                     "hypershift",
                                     "openshift",
                                     "openshift-a",
                                     "openshift-kube-descheduler-operator",
                                     "openshift-z"};
  assert_int_equal(f.nprotected, 6);
  for (size_t i = 0; i < 6; i++)
    assert_string_equal(f.protected_ns[i], want[i]);
  assert_true(f.kubevirt_node);
  assert_true(f.route_present);
  assert_int_equal(f.route_ningress, 2);
  assert_string_equal(f.route_host, "p.example");
  assert_true(f.scheduler_known);
  assert_string_equal(f.scheduler_profile, "HighNodeUtilization");
  assert_int_equal(f.monitoring_label, 1);
  assert_int_equal(f.psi, KD_PSI_UNKNOWN);
  assert_non_null(m->openshift.kubedescheduler);
  assert_int_equal(m->openshift.other_kubedeschedulers, 1);
  assert_string_equal(
      doc_path(m->openshift.kubedescheduler, "spec", "profiles", NULL)->items[0]->text,
      "AffinityAndTaints");
  model_free(m);
  /* nothing known */
  m = load_model_text("{\"kind\":\"List\",\"items\":[]}", &err);
  kd_facts_from_model(test_mem, m, &f);
  assert_int_equal(f.nprotected, 3);
  assert_false(f.kubevirt_node || f.route_present || f.scheduler_known);
  assert_int_equal(f.monitoring_label, -1);
  model_free(m);
  /* a Route with a malformed status is an error naming the field */
  assert_null(
      load_model_text("{\"kind\":\"List\",\"items\":[{\"apiVersion\":\"route.openshift.io/v1\","
                      "\"kind\":\"Route\",\"metadata\":{\"name\":\"prometheus-k8s\","
                      "\"namespace\":\"openshift-monitoring\"},\"status\":{\"ingress\":{}}}]}",
                      &err));
  assert_non_null(strstr(err.msg, "status.ingress: expected a list"));
}

/* ---------------------------------------------------------------- loading what is rendered */

static policy *load_rendered(const kd_result *r, dserr *err) {
  strbuf yaml = {0};
  if (kd_policy_yaml(r, &yaml, err) < 0)
    fail_msg("%s", err->msg);
  log_set_stream(tmpfile());
  policy *p = policy_load_string("rendered.yaml", sb_str(&yaml), plugin_lookup, NULL, err);
  log_set_stream(NULL);
  sb_free(&yaml);
  return p;
}

static void test_rendered_policies_load(void **state) {
  (void)state;
  static const char *const specs[] = {
      "  profiles: [AffinityAndTaints, TopologyAndDuplicates, LongLifecycle, EvictPodsWithPVC]\n"
      "  evictionLimits: {total: 3, node: 1}\n  profileCustomizations: {thresholdPriority: 5, "
      "namespaces: {excluded: [x]}}\n",
      "  profiles: [LifecycleAndUtilization, SoftTopologyAndDuplicates]\n"
      "  profileCustomizations: {podLifetime: 1h, devActualUtilizationProfile: PrometheusCPUUsage,"
      " namespaces: {included: [team]}}\n",
      "  profiles: [CompactAndScale, EvictPodsWithLocalStorage]\n"
      "  profileCustomizations: {devHighNodeUtilizationThresholds: Minimal}\n",
  };
  char spec[512];
  for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
    snprintf(spec, sizeof spec, "  deschedulingIntervalSeconds: 5\n%s", specs[i]);
    kd_result r = render_ok(spec);
    dserr err;
    policy *p = load_rendered(&r, &err);
    if (!p)
      fail_msg("rendered policy does not load: %s\n%s", err.msg, spec);
    assert_int_equal(p->nprofiles, doc_get(r.policy, "profiles")->n);
    policy_free(p);
  }
}

static void test_rendered_kubevirt_policy_loads(void **state) {
  (void)state;
  kd_result r = render_ok(SEED "    devMigrationCooldown: 20m\n    devMaxMigrationCooldown: 2h\n");
  assert_string_equal(
      str_at(args_of(&r, 1, "KubevirtMigrationAware"), "migrationCooldown", NULL, NULL), "20m0s");
  assert_string_equal(
      str_at(args_of(&r, 1, "KubevirtMigrationAware"), "maxMigrationCooldown", NULL, NULL),
      "2h0m0s");
  assert_null(doc_get(args_of(&r, 1, "KubevirtMigrationAware"), "migrationHistoryWindow"));
  dserr err;
  policy *p = load_rendered(&r, &err);
  if (!p && strstr(err.msg, "plugin KubevirtMigrationAware in pluginConfig not registered")) {
    print_message("SKIP: KubevirtMigrationAware is not registered in this build\n");
    skip();
  }
  if (!p)
    fail_msg("rendered policy does not load: %s", err.msg);
  assert_int_equal(p->nprofiles, 2);
  assert_string_equal(p->node_selector, "kubevirt.io/schedulable=true");
  assert_int_equal(p->max_total.v, 5);
  assert_int_equal(p->nproviders, 1);
  policy_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_defaults_and_fields),
      cmocka_unit_test(test_parse_errors),
      cmocka_unit_test(test_schema_errors_joined_in_schema_order),
      cmocka_unit_test(test_cel_rules_in_order),
      cmocka_unit_test(test_interval_and_profiles_required),
      cmocka_unit_test(test_seed),
      cmocka_unit_test(test_kubevirt_threshold_table),
      cmocka_unit_test(test_lifecycle_threshold_table),
      cmocka_unit_test(test_compact_and_scale_thresholds),
      cmocka_unit_test(test_query_table),
      cmocka_unit_test(test_namespaces),
      cmocka_unit_test(test_default_evictor_customizations),
      cmocka_unit_test(test_eviction_limits),
      cmocka_unit_test(test_kubevirt_preconditions),
      cmocka_unit_test(test_scheduler_conflicts),
      cmocka_unit_test(test_args),
      cmocka_unit_test(test_facts_from_model),
      cmocka_unit_test(test_rendered_policies_load),
      cmocka_unit_test(test_rendered_kubevirt_policy_loads),
  };
  return cmocka_run_group_tests(tests, test_mem_setup, test_mem_teardown);
}
