/* test_policy.c - the DeschedulerPolicy loader (src/policy, upstream's policyconfig.go): version
 * and kind, every top-level validation message and the aggregate format, strict decoding of
 * plugin args, type errors naming the field path, the DefaultEvictor injection, profile build
 * errors, priority threshold resolution, and the fields upstream ignores (reported here with a
 * warning). */
#include "support/support.h"

#include "../../src/obs/log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD "apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\n"
#define WRAP "failed decoding descheduler's policy config \"policy.yaml\": "
#define BUILD "failed to create new descheduler: unable to create \"p\" profile: "
#define SCHEME "sigs.k8s.io/descheduler/pkg/descheduler/scheme/scheme.go:40"

/* A profile `p` whose PodLifeTime runs at deschedule; extra lines go under pluginConfig. */
#define PLT_PROFILE                                                                                \
  "profiles:\n"                                                                                    \
  "- name: p\n"                                                                                    \
  "  pluginConfig:\n"                                                                              \
  "  - name: PodLifeTime\n"                                                                        \
  "    args: {maxPodLifeTimeSeconds: 60}\n"                                                        \
  "  plugins:\n"                                                                                   \
  "    deschedule:\n"                                                                              \
  "      enabled: [PodLifeTime]\n"

static char last_error[DSERR_MAX];
static char *last_logs;

/* Loads the policy capturing the log; returns it (caller frees) or NULL with last_error. */
static policy *load(const char *yaml) {
  free(last_logs);
  last_logs = NULL;
  size_t len = 0;
  FILE *logs = open_memstream(&last_logs, &len);
  log_set_stream(logs);
  dserr err;
  err.msg[0] = 0;
  policy *p = load_policy_text(yaml, &err);
  log_set_stream(NULL);
  fclose(logs);
  snprintf(last_error, sizeof last_error, "%s", p ? "" : err.msg);
  return p;
}

static const char *load_error(const char *yaml) {
  policy *p = load(yaml);
  if (p) {
    policy_free(p);
    fail_msg("policy loaded; expected an error");
  }
  return last_error;
}

/* The message is exactly `want`. */
static void assert_error(const char *yaml, const char *want) {
  assert_string_equal(load_error(yaml), want);
}

/* The message ends with the complete upstream text `tail` (upstream's validation errors are
 * not wrapped; this loader wraps them in the decoding context). */
static void assert_error_tail(const char *yaml, const char *tail) {
  const char *msg = load_error(yaml);
  size_t n = strlen(msg), t = strlen(tail);
  if (n < t || strcmp(msg + n - t, tail) != 0)
    fail_msg("error\n  %s\ndoes not end with\n  %s", msg, tail);
  if (n > t && strncmp(msg + n - t - 2, ": ", 2) != 0)
    fail_msg("error\n  %s\nhas text glued to\n  %s", msg, tail);
}

static void assert_error_contains(const char *yaml, const char *want) {
  const char *msg = load_error(yaml);
  if (!strstr(msg, want))
    fail_msg("error\n  %s\ndoes not contain\n  %s", msg, want);
}

static policy *load_ok(const char *yaml) {
  policy *p = load(yaml);
  if (!p)
    fail_msg("policy rejected: %s", last_error);
  return p;
}

static bool logged(const char *needle) {
  return last_logs && strstr(last_logs, needle);
}

/* ---------- version and kind ---------- */

static void test_version_and_kind(void **state) {
  (void)state;
  assert_error("apiVersion: descheduler/v1alpha1\nkind: DeschedulerPolicy\n", WRAP
               "no kind \"DeschedulerPolicy\" is registered for version \"descheduler/v1alpha1\" "
               "in scheme \"" SCHEME "\"");
  assert_error("apiVersion: descheduler/v1alpha2\nkind: Policy\n", WRAP
               "no kind \"Policy\" is registered for version \"descheduler/v1alpha2\" in scheme "
               "\"" SCHEME "\"");
  assert_error("apiVersion: descheduler/v1alpha1\nkind: Foo\n",
               WRAP "no kind \"Foo\" is registered for version \"descheduler/v1alpha1\" in scheme "
                    "\"" SCHEME "\"");
  /* kind may be omitted */
  policy *p = load_ok("apiVersion: descheduler/v1alpha2\n" PLT_PROFILE);
  assert_int_equal(p->nprofiles, 1);
  policy_free(p);
  /* YAML errors are decoding errors */
  assert_error_contains(HEAD "profiles: [\n",
                        WRAP "invalid YAML at line " /* the file is named once */);
}

/* ---------- validation messages and the aggregate ---------- */

static void test_unregistered_plugin_config(void **state) {
  (void)state;
  assert_error_tail(HEAD "profiles:\n- name: p\n  pluginConfig:\n  - name: Foo\n",
                    "in profile p: plugin Foo in pluginConfig not registered");
  /* several: [e1, e2] in profile then config order */
  assert_error_tail(
      HEAD "profiles:\n"
           "- name: a\n  pluginConfig:\n  - name: Foo\n  - name: Bar\n"
           "- name: b\n  pluginConfig:\n  - name: Baz\n",
      "[in profile a: plugin Foo in pluginConfig not registered, in profile a: plugin "
      "Bar in pluginConfig not registered, in profile b: plugin Baz in pluginConfig "
      "not registered]");
  /* duplicates merged: one error prints as itself */
  assert_error_tail(HEAD "profiles:\n"
                         "- name: a\n  pluginConfig:\n  - name: Foo\n  - name: Foo\n"
                         "- name: a\n  pluginConfig:\n  - name: Foo\n",
                    "in profile a: plugin Foo in pluginConfig not registered");
  /* profile names are not checked: empty names are fine */
  assert_error_tail(HEAD "profiles:\n- pluginConfig:\n  - name: Foo\n",
                    "in profile : plugin Foo in pluginConfig not registered");
  /* plugin validators and registration errors in one aggregate, in config order */
  assert_error_tail(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                         "  - name: DefaultEvictor\n    args: {noEvictionPolicy: Never}\n"
                         "  - name: Foo\n",
                    "[in profile p: noEvictionPolicy accepts only [\"Preferred\" \"Mandatory\"] "
                    "values, in profile p: plugin Foo in pluginConfig not registered]");
  /* a validator's own aggregate is nested as it is */
  assert_error_tail(
      HEAD "profiles:\n- name: p\n  pluginConfig:\n"
           "  - name: DefaultEvictor\n"
           "    args:\n      noEvictionPolicy: Never\n"
           "      priorityThreshold: {value: 1, name: x}\n",
      "in profile p: [priority threshold misconfigured, only one of priorityThreshold "
      "fields can be set, noEvictionPolicy accepts only [\"Preferred\" \"Mandatory\"] "
      "values]");
  /* duplicate pluginConfig names: every entry is validated */
  assert_error_tail(
      HEAD "profiles:\n- name: p\n  pluginConfig:\n"
           "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 5}\n"
           "  - name: PodLifeTime\n    args: {states: [Bogus]}\n",
      "in profile p: states must be one of [Completed ContainerCannotRun "
      "ContainerCreating CrashLoopBackOff CreateContainerConfigError "
      "CreateContainerError DeadlineExceeded ErrImagePull Error Evicted Failed "
      "ImagePullBackOff InvalidImageName NodeAffinity NodeLost OOMKilled Pending "
      "PodInitializing Running Shutdown StartError Succeeded UnexpectedAdmissionError "
      "Unknown]");
}

static void test_metrics_provider_messages(void **state) {
  (void)state;
  assert_error_tail(
      HEAD "metricsProviders:\n- source: KubernetesMetrics\n- source: KubernetesMetrics\n",
      "metric provider \"KubernetesMetrics\" is already configured, each source can be "
      "configured only once");
  assert_error_tail(
      HEAD "metricsCollector: {enabled: true}\nmetricsProviders:\n- source: KubernetesMetrics\n",
      "it is not allowed to combine metrics provider when metrics collector is enabled");
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n",
                    "prometheus configuration is required when prometheus source is enabled");
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n  prometheus: {}\n",
                    "prometheus URL is required when prometheus is enabled");
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n  prometheus: {url: \"\"}\n",
                    "prometheus URL is required when prometheus is enabled");
  /* upstream's own test vector for a URL Go's url.Parse refuses */
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n"
                         "  prometheus: {url: \"http://example.com:-80\"}\n",
                    "error parsing prometheus URL: parse \"http://example.com:-80\": invalid port "
                    "\":-80\" after host");
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n"
                         "  prometheus: {url: \"https://user:pw@prom:90x/api?q=1\"}\n",
                    "error parsing prometheus URL: parse \"https://user:pw@prom:90x/api?q=1\": "
                    "invalid port \":90x\" after host");
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n"
                         "  prometheus: {url: \"https://[::1]x/\"}\n",
                    "error parsing prometheus URL: parse \"https://[::1]x/\": invalid port \"x\" "
                    "after host");
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n"
                         "  prometheus: {url: \"https://example.com:80\", authToken: {}}\n",
                    "prometheus authToken secret is expected to be set when authToken field is");
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n"
                         "  prometheus:\n    url: https://example.com:80\n"
                         "    authToken: {secretReference: {}}\n",
                    "prometheus authToken secret reference does not set both namespace and name");
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n"
                         "  prometheus:\n    url: https://example.com:80\n"
                         "    authToken: {secretReference: {name: secretname}}\n",
                    "prometheus authToken secret reference does not set both namespace and name");
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n"
                         "  prometheus:\n    url: https://example.com:80\n"
                         "    authToken: {secretReference: {namespace: secretnamespace}}\n",
                    "prometheus authToken secret reference does not set both namespace and name");
  /* all of URL and token errors at once */
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n"
                         "  prometheus: {authToken: {}}\n",
                    "[prometheus URL is required when prometheus is enabled, prometheus authToken "
                    "secret is expected to be set when authToken field is]");
  /* valid ones load */
  policy *p = load_ok(HEAD "metricsProviders:\n- source: Prometheus\n"
                           "  prometheus:\n    url: https://example.com:80\n"
                           "    authToken: {secretReference: {namespace: ns, name: token}}\n"
                           "- source: KubernetesMetrics\n" PLT_PROFILE);
  assert_int_equal(p->nproviders, 2);
  assert_string_equal(p->providers[0].secret_name, "token");
  policy_free(p);
  p = load_ok(HEAD "metricsProviders:\n- source: Prometheus\n  prometheus: {url: "
                   "\"http://prometheus.monitoring.svc:9090\"}\n" PLT_PROFILE);
  policy_free(p);
  const char *fine[] = {"https://[::1]:9090/", "https://prom:/", "https://u@prom:9090?x=a:b",
                        "http://prom/path:with:colons"};
  for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
    char text[512];
    snprintf(text, sizeof text,
             HEAD "metricsProviders:\n- source: Prometheus\n  prometheus: {url: \"%s\"}\n",
             fine[i]);
    policy_free(load_ok(text));
  }
  p = load_ok(HEAD "metricsCollector: {enabled: true}\n" PLT_PROFILE);
  assert_true(p->metrics_collector_enabled);
  policy_free(p);
}

/* The order of the aggregate: duplicates (provider order), then the collector conflict, then
 * the (first) Prometheus provider's checks. */
static void test_metrics_provider_aggregate_order(void **state) {
  (void)state;
  assert_error_tail(
      HEAD "metricsCollector: {enabled: true}\n"
           "metricsProviders:\n- source: KubernetesMetrics\n- source: KubernetesMetrics\n",
      "[metric provider \"KubernetesMetrics\" is already configured, each source can be "
      "configured only once, it is not allowed to combine metrics provider when metrics "
      "collector is enabled]");
  assert_error_tail(
      HEAD "metricsCollector: {enabled: true}\n"
           "metricsProviders:\n- source: Prometheus\n- source: KubernetesMetrics\n",
      "[it is not allowed to combine metrics provider when metrics collector is "
      "enabled, prometheus configuration is required when prometheus source is enabled]");
  /* a repeated Prometheus entry is only a duplicate: the first one is the configuration */
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n  prometheus: {url: "
                         "\"https://a:1\"}\n- source: Prometheus\n",
                    "metric provider \"Prometheus\" is already configured, each source can be "
                    "configured only once");
  /* plugin errors come before metrics errors */
  assert_error_tail(HEAD "metricsProviders:\n- source: Prometheus\n"
                         "profiles:\n- name: p\n  pluginConfig:\n  - name: Foo\n",
                    "[in profile p: plugin Foo in pluginConfig not registered, prometheus "
                    "configuration is required when prometheus source is enabled]");
}

/* ---------- strict decoding of plugin args ---------- */

static void test_strict_decoding(void **state) {
  (void)state;
  assert_error_contains(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                             "  - name: DefaultEvictor\n    args: {nodeFitt: true}\n",
                        WRAP "strict decoding error: unknown field \"nodeFitt\"");
  assert_error_contains(HEAD
                        "profiles:\n- name: p\n  pluginConfig:\n"
                        "  - name: DefaultEvictor\n    args: {podProtections: {extraEnable: []}}\n",
                        WRAP "strict decoding error: unknown field \"podProtections.extraEnable\"");
  assert_error_contains(
      HEAD "profiles:\n- name: p\n  pluginConfig:\n  - name: DefaultEvictor\n    args:\n"
           "      podProtections:\n        config:\n          PodsWithPVC:\n"
           "            protectedStorageClasses: [{name: a}, {nme: b}]\n",
      WRAP "strict decoding error: unknown field "
           "\"podProtections.config.PodsWithPVC.protectedStorageClasses[1].nme\"");
  /* several problems joined by ", ", duplicates too */
  assert_error_contains(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                             "  - name: DefaultEvictor\n    args: {a: 1, nodeFit: true, b: 2}\n",
                        WRAP "strict decoding error: unknown field \"a\", unknown field \"b\"");
  assert_error_contains(HEAD
                        "profiles:\n- name: p\n  pluginConfig:\n"
                        "  - name: DefaultEvictor\n    args: {nodeFit: true, nodeFit: false}\n",
                        WRAP "strict decoding error: duplicate field \"nodeFit\"");
  assert_error_contains(HEAD "profiles:\n- name: p\n  pluginConfig:\n  - name: PodLifeTime\n"
                             "    args: {maxPodLifeTimeSeconds: 1, namespaces: {include: [a], "
                             "exclud: [b]}}\n",
                        WRAP "strict decoding error: unknown field \"namespaces.exclud\"");
  /* the args of an unregistered plugin are not decoded: only the registration error */
  assert_error_tail(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                         "  - name: Foo\n    args: {whatever: 1}\n",
                    "in profile p: plugin Foo in pluginConfig not registered");
}

static void test_type_errors_name_the_path(void **state) {
  (void)state;
  assert_error_contains(
      HEAD "profiles:\n- name: p\n  pluginConfig:\n"
           "  - name: DefaultEvictor\n    args: {nodeFit: \"yes\"}\n",
      "profiles[0].pluginConfig[0].args.nodeFit: expected true or false, got \"yes\"");
  assert_error_contains(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                             "  - name: DefaultEvictor\n    args: {minReplicas: -1}\n",
                        "profiles[0].pluginConfig[0].args.minReplicas: expected a non-negative "
                        "integer, got -1");
  assert_error_contains(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                             "  - name: DefaultEvictor\n  - name: PodLifeTime\n"
                             "    args: {maxPodLifeTimeSeconds: 1h}\n",
                        "profiles[0].pluginConfig[1].args.maxPodLifeTimeSeconds: expected a "
                        "non-negative integer, got \"1h\"");
  assert_error_contains(
      HEAD "profiles:\n- name: p\n  pluginConfig:\n"
           "  - name: DefaultEvictor\n    args: {labelSelector: {matchLabels: [a]}}\n",
      "profiles[0].pluginConfig[0].args.labelSelector.matchLabels: expected a map");
  assert_error_contains(HEAD "maxNoOfPodsToEvictTotal: abc\n", WRAP
                        "maxNoOfPodsToEvictTotal: expected a non-negative integer, got \"abc\"");
  assert_error_contains(HEAD "maxNoOfPodsToEvictPerNode: -1\n",
                        "maxNoOfPodsToEvictPerNode: expected a non-negative integer, got -1");
  assert_error_contains(HEAD "nodeSelector: 5\n",
                        "nodeSelector: expected a label selector string, got 5");
  assert_error_contains(HEAD "profiles: {}\n", "profiles: expected a list of profiles, got a map");
  assert_error_contains(
      HEAD "profiles:\n- name: p\n  plugins:\n    deschedule:\n      enabled: PodLifeTime\n",
      "profiles[0].plugins.deschedule.enabled: expected a list of plugin names");
  assert_error_contains(HEAD "profiles:\n- name: p\n  pluginConfig:\n  - args: {}\n",
                        "profiles[0].pluginConfig[0].name: required");
  assert_error_contains(HEAD "evictionFailureEventNotification: maybe\n",
                        "evictionFailureEventNotification: expected true or false, got \"maybe\"");
  /* typed top-level fields */
  policy *p = load_ok(HEAD "nodeSelector: \"role=worker\"\nmaxNoOfPodsToEvictPerNode: 2\n"
                           "maxNoOfPodsToEvictPerNamespace: 0\ngracePeriodSeconds: 30\n"
                           "evictionFailureEventNotification: true\n" PLT_PROFILE);
  assert_string_equal(p->node_selector, "role=worker");
  assert_true(p->max_per_node.set);
  assert_int_equal(p->max_per_node.v, 2);
  assert_true(p->max_per_namespace.set);
  assert_int_equal(p->max_per_namespace.v, 0);
  assert_false(p->max_total.set);
  assert_true(p->grace_period_seconds.set);
  assert_int_equal(p->grace_period_seconds.v, 30);
  assert_true(p->eviction_failure_events);
  policy_free(p);
}

/* ---------- DefaultEvictor injection ---------- */

static void test_default_evictor_injection(void **state) {
  (void)state;
  policy *p = load_ok(HEAD PLT_PROFILE);
  profile *pr = &p->profiles[0];
  /* DefaultEvictor, then this project's VMSafety, lead both evictor extension points */
  assert_int_equal(pr->filter.n, 2);
  assert_string_equal(pr->filter.names[0], "DefaultEvictor");
  assert_string_equal(pr->filter.names[1], "VMSafety");
  assert_int_equal(pr->preevictionfilter.n, 2);
  assert_string_equal(pr->preevictionfilter.names[0], "DefaultEvictor");
  assert_string_equal(pr->preevictionfilter.names[1], "VMSafety");
  /* default pluginConfigs are prepended */
  assert_int_equal(pr->nconfig, 3);
  assert_string_equal(pr->config[0].name, "DefaultEvictor");
  assert_string_equal(pr->config[1].name, "VMSafety");
  assert_string_equal(pr->config[2].name, "PodLifeTime");
  assert_ptr_equal(pr->filter.configs[0], &pr->config[0]);
  assert_ptr_equal(pr->filter.configs[1], &pr->config[1]);
  assert_ptr_equal(pr->deschedule.configs[0], &pr->config[2]);
  policy_free(p);

  /* listed already: kept once, in place; an existing config keeps its position */
  p = load_ok(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                   "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 60}\n"
                   "  - name: DefaultEvictor\n    args: {nodeFit: true}\n"
                   "  plugins:\n    filter:\n      enabled: [DefaultEvictor]\n"
                   "    preevictionfilter:\n      enabled: [DefaultEvictor]\n"
                   "    deschedule:\n      enabled: [PodLifeTime]\n");
  pr = &p->profiles[0];
  /* VMSafety follows the configured DefaultEvictor, wherever it stands */
  assert_int_equal(pr->filter.n, 2);
  assert_string_equal(pr->filter.names[1], "VMSafety");
  assert_int_equal(pr->preevictionfilter.n, 2);
  assert_string_equal(pr->preevictionfilter.names[1], "VMSafety");
  assert_int_equal(pr->nconfig, 3);
  assert_string_equal(pr->config[0].name, "PodLifeTime");
  assert_string_equal(pr->config[1].name, "DefaultEvictor");
  assert_string_equal(pr->config[2].name, "VMSafety");
  assert_ptr_equal(pr->filter.configs[0], &pr->config[1]);
  assert_ptr_equal(pr->filter.configs[1], &pr->config[2]);
  policy_free(p);

  /* a VMSafety configured before the DefaultEvictor keeps its place; the evictor's config is
   * put first */
  p = load_ok(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                   "  - name: VMSafety\n    args: {cooldown: 0s}\n"
                   "  plugins:\n    filter:\n      enabled: [VMSafety]\n");
  pr = &p->profiles[0];
  assert_int_equal(pr->filter.n, 2);
  assert_string_equal(pr->filter.names[0], "DefaultEvictor");
  assert_string_equal(pr->filter.names[1], "VMSafety");
  assert_int_equal(pr->nconfig, 2);
  policy_free(p);

  /* every profile gets its own; a profile without plugins too */
  p = load_ok(HEAD "profiles:\n- name: a\n- name: b\n  pluginConfig:\n  - name: DefaultEvictor\n");
  assert_int_equal(p->nprofiles, 2);
  for (size_t i = 0; i < 2; i++) {
    assert_int_equal(p->profiles[i].nconfig, 2);
    assert_int_equal(p->profiles[i].filter.n, 2);
    assert_int_equal(p->profiles[i].preevictionfilter.n, 2);
  }
  policy_free(p);

  /* duplicate pluginConfig names: the first one is used */
  p = load_ok(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                   "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 60}\n"
                   "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 99}\n"
                   "  plugins:\n    deschedule:\n      enabled: [PodLifeTime]\n");
  pr = &p->profiles[0];
  assert_ptr_equal(pr->deschedule.configs[0], &pr->config[2]); /* after DefaultEvictor, VMSafety */
  assert_ptr_equal(profile_config(pr, "PodLifeTime"), &pr->config[2]);
  policy_free(p);

  /* disabled lists cannot remove it (and are reported) */
  p = load_ok(HEAD "profiles:\n- name: p\n  plugins:\n"
                   "    filter:\n      disabled: [DefaultEvictor]\n"
                   "    preevictionfilter:\n      disabled: [DefaultEvictor]\n");
  assert_int_equal(p->profiles[0].filter.n, 2); /* DefaultEvictor, VMSafety */
  assert_int_equal(p->profiles[0].preevictionfilter.n, 2);
  assert_true(logged(
      "field=\"profiles[0].plugins.filter.disabled\" reason=\"disabled lists have no effect\""));
  policy_free(p);
}

/* ---------- profile build ---------- */

static void test_profile_build_errors(void **state) {
  (void)state;
  assert_error(HEAD "profiles:\n- name: p\n  pluginConfig:\n  - name: LowNodeUtilization\n"
                    "    args: {thresholds: {cpu: 10}, targetThresholds: {cpu: 50}}\n"
                    "  plugins:\n    deschedule:\n      enabled: [LowNodeUtilization]\n",
               BUILD "profile \"p\" configures deschedule extension point of non-existing plugins: "
                     "map[LowNodeUtilization:{}]");
  assert_error(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                    "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 60}\n"
                    "  plugins:\n    balance:\n      enabled: [PodLifeTime]\n",
               BUILD "profile \"p\" configures balance extension point of non-existing plugins: "
                     "map[PodLifeTime:{}]");
  assert_error(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                    "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 60}\n"
                    "  plugins:\n    filter:\n      enabled: [PodLifeTime]\n",
               BUILD "profile \"p\" configures filter extension point of non-existing plugins: "
                     "map[PodLifeTime:{}]");
  assert_error(HEAD
               "profiles:\n- name: p\n  plugins:\n    preevictionfilter:\n      enabled: [Foo]\n",
               BUILD "profile \"p\" configures preEvictionFilter extension point of non-existing "
                     "plugins: map[Foo:{}]");
  /* Go prints the set sorted, each name once */
  assert_error(HEAD "profiles:\n- name: p\n  plugins:\n    deschedule:\n"
                    "      enabled: [Zed, Foo, Zed, DefaultEvictor]\n",
               BUILD "profile \"p\" configures deschedule extension point of non-existing plugins: "
                     "map[DefaultEvictor:{} Foo:{} Zed:{}]");
  /* enabled but never configured */
  assert_error(
      HEAD "profiles:\n- name: p\n  plugins:\n    deschedule:\n      enabled: [PodLifeTime]\n",
      BUILD "unable to build PodLifeTime plugin: unable to find \"PodLifeTime\" plugin config");
  /* the profile named in the wrapper is the failing one */
  assert_error_contains(
      HEAD "profiles:\n- name: good\n- name: bad\n  plugins:\n    balance:\n"
           "      enabled: [Nope]\n",
      "failed to create new descheduler: unable to create \"bad\" profile: profile "
      "\"bad\" configures balance extension point");
  /* a name listed twice runs twice */
  policy *p =
      load_ok(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                   "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 60}\n"
                   "  plugins:\n    deschedule:\n      enabled: [PodLifeTime, PodLifeTime]\n");
  assert_int_equal(p->profiles[0].deschedule.n, 2);
  assert_ptr_equal(p->profiles[0].deschedule.configs[0], p->profiles[0].deschedule.configs[1]);
  policy_free(p);
}

/* ---------- priority threshold ---------- */

static const char *threshold_policy(const char *threshold) {
  static char buf[1024];
  snprintf(buf, sizeof buf,
           HEAD "profiles:\n- name: p\n  pluginConfig:\n  - name: DefaultEvictor\n"
                "    args: {priorityThreshold: %s}\n",
           threshold);
  return buf;
}

static const char *cluster_with_classes =
    "{\"kind\":\"List\",\"apiVersion\":\"v1\",\"items\":["
    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n1\"}},"
    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"n2\"}},"
    "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\",\"metadata\":{\"name\":"
    "\"high\"},\"value\":1000},"
    "{\"kind\":\"PriorityClass\",\"apiVersion\":\"scheduling.k8s.io/v1\",\"metadata\":{\"name\":"
    "\"too-high\"},\"value\":2000000001}]}";

static void test_priority_threshold(void **state) {
  (void)state;
  assert_error_tail(threshold_policy("{value: 2000000001}"),
                    "priority threshold can't be greater than 2000000000");
  policy *p = load_ok(threshold_policy("{value: 2000000000}"));
  policy_free(p);
  p = load_ok(threshold_policy("{value: -5}"));
  policy_free(p);
  p = load_ok(threshold_policy("{}"));
  policy_free(p);
  assert_error_tail(threshold_policy("{value: 10, name: high}"),
                    "in profile p: priority threshold misconfigured, only one of priorityThreshold "
                    "fields can be set");
  /* beyond int32 (upstream's type) it is refused too */
  assert_non_null(load_error(threshold_policy("{value: 3000000000}")));

  /* names are looked up in the cluster */
  sim_run r;
  assert_int_equal(
      sim_run_strings(&r, threshold_policy("{name: nope}"), cluster_with_classes, false, NULL, 0),
      -1);
  const char *want = "unable to get priority value from the priority class: "
                     "priorityclasses.scheduling.k8s.io \"nope\" not found";
  size_t n = strlen(r.err.msg), t = strlen(want);
  if (n < t || strcmp(r.err.msg + n - t, want) != 0)
    fail_msg("error\n  %s\ndoes not end with\n  %s", r.err.msg, want);
  sim_run_free(&r);

  assert_int_equal(sim_run_strings(&r, threshold_policy("{name: too-high}"), cluster_with_classes,
                                   false, NULL, 0),
                   -1);
  assert_non_null(strstr(r.err.msg, "priority threshold can't be greater than 2000000000"));
  sim_run_free(&r);

  assert_int_equal(
      sim_run_strings(&r, threshold_policy("{name: high}"), cluster_with_classes, false, NULL, 0),
      0);
  sim_run_free(&r);
}

/* ---------- fields upstream ignores ---------- */

static void test_ignored_fields_warn(void **state) {
  (void)state;
  policy *p = load_ok(HEAD "strategies: {}\nmaxNoOfPodsToEvictTotl: 3\n" PLT_PROFILE);
  assert_false(p->max_total.set);
  assert_true(logged("\"Ignoring a policy field, as upstream does\" file=\"policy.yaml\" "
                     "field=\"strategies\" reason=\"unknown field\""));
  assert_true(logged("field=\"maxNoOfPodsToEvictTotl\" reason=\"unknown field\""));
  /* kept for the commands that report them otherwise (check), in file order */
  assert_int_equal(p->nignored, 2);
  assert_string_equal(p->ignored[0].field, "strategies");
  assert_string_equal(p->ignored[1].field, "maxNoOfPodsToEvictTotl");
  assert_string_equal(p->ignored[1].reason, "unknown field");
  policy_free(p);

  /* camel-case preEvictionFilter is not an extension point: its list is ignored */
  p = load_ok(HEAD "profiles:\n- name: p\n  plugins:\n    preEvictionFilter:\n"
                   "      enabled: [NotAPlugin]\n    Deschedule:\n      enabled: [AlsoNot]\n");
  assert_int_equal(p->profiles[0].preevictionfilter.n, 2);
  assert_string_equal(p->profiles[0].preevictionfilter.names[0], "DefaultEvictor");
  assert_int_equal(p->profiles[0].deschedule.n, 0);
  assert_true(
      logged("field=\"profiles[0].plugins.preEvictionFilter\" reason=\"not an extension "
             "point (they are lowercase: deschedule, balance, filter, preevictionfilter)\""));
  assert_true(logged("field=\"profiles[0].plugins.Deschedule\""));
  policy_free(p);

  /* presort and sort are not used; unknown keys of profiles and pluginConfig entries */
  p = load_ok(HEAD "profiles:\n- name: p\n  pluginconfig: []\n  pluginConfig:\n"
                   "  - name: DefaultEvictor\n    arg: {}\n"
                   "  plugins:\n    presort: {enabled: [X]}\n    sort: {enabled: [Y]}\n"
                   "    filter: {enabled: [DefaultEvictor], enable: [Z]}\n");
  assert_true(logged("field=\"profiles[0].pluginconfig\" reason=\"unknown field\""));
  assert_true(logged("field=\"profiles[0].pluginConfig[0].arg\" reason=\"unknown field\""));
  assert_true(
      logged("field=\"profiles[0].plugins.presort\" reason=\"the presort and sort extension "
             "points are not used\""));
  assert_true(logged("field=\"profiles[0].plugins.sort\""));
  assert_true(logged("field=\"profiles[0].plugins.filter.enable\" reason=\"unknown field\""));
  assert_int_equal(p->nignored, 5);
  assert_string_equal(p->ignored[4].field, "profiles[0].plugins.filter.enable");
  policy_free(p);

  /* a clean policy warns about nothing */
  p = load_ok(HEAD PLT_PROFILE);
  assert_false(logged("Ignoring a policy field"));
  assert_int_equal(p->nignored, 0);
  policy_free(p);
}

/* A profile with pluginConfig twice counted the first list's entries into the second's
 * array (written past its end: fuzz_policy found the corrupted descriptors and args). The
 * last one is used now, as for any other repeated field, with a warning. */
static void test_repeated_plugin_config(void **state) {
  (void)state;
  policy *p = load_ok(HEAD "profiles:\n- name: p\n  pluginConfig:\n"
                           "  - name: DefaultEvictor\n  - name: RemovePodsHavingTooManyRestarts\n"
                           "    args: {podRestartThreshold: 1}\n"
                           "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 1}\n"
                           "  pluginConfig:\n"
                           "  - name: PodLifeTime\n    args: {maxPodLifeTimeSeconds: 60}\n"
                           "  plugins:\n    deschedule: {enabled: [PodLifeTime]}\n");
  const profile *pr = &p->profiles[0];
  assert_int_equal(pr->nconfig, 3); /* PodLifeTime, the injected DefaultEvictor and VMSafety */
  assert_non_null(profile_config(pr, "PodLifeTime"));
  assert_non_null(profile_config(pr, "DefaultEvictor"));
  assert_null(profile_config(pr, "RemovePodsHavingTooManyRestarts"));
  assert_true(logged("field=\"profiles[0].pluginConfig\" reason=\"pluginConfig is given more "
                     "than once in this profile; the last one is used\""));
  policy_free(p);
  /* the fuzzer's minimized input: an unregistered name in the first list */
  p = load(HEAD "profiles:\n- pluginConfig:\n  - name: L\n  - name: L\n  - name: p\n"
                "  pluginConfig:\n  - name: LowNodeUtilization\n");
  policy_free(p);
  assert_string_equal(last_error, WRAP "in profile : thresholds config is not valid: no resource "
                                       "threshold is configured");
}

static int teardown(void **state) {
  (void)state;
  free(last_logs);
  last_logs = NULL;
  return 0;
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_version_and_kind),
      cmocka_unit_test(test_unregistered_plugin_config),
      cmocka_unit_test(test_metrics_provider_messages),
      cmocka_unit_test(test_metrics_provider_aggregate_order),
      cmocka_unit_test(test_strict_decoding),
      cmocka_unit_test(test_type_errors_name_the_path),
      cmocka_unit_test(test_default_evictor_injection),
      cmocka_unit_test(test_profile_build_errors),
      cmocka_unit_test(test_priority_threshold),
      cmocka_unit_test(test_ignored_fields_warn),
      cmocka_unit_test(test_repeated_plugin_config),
  };
  return cmocka_run_group_tests(tests, NULL, teardown);
}
