/* policy.h - the DeschedulerPolicy (descheduler/v1alpha2): load, validate, default.
 *
 * policy_load follows upstream's order (LoadPolicyConfig, pkg/descheduler/policyconfig.go):
 * decode the file (plugin args strictly), validate every plugin's args as written and the
 * metrics settings (all errors collected), inject the DefaultEvictor into each profile, run
 * each plugin's defaults and construction checks, then check that every enabled plugin exists
 * at that extension point and has its pluginConfig. Every failure is one message naming the
 * file; where upstream has an exact text it is used verbatim inside that message.
 *
 * Fields upstream silently ignores (unknown top-level keys, `preEvictionFilter` spelled in
 * camel case, `disabled` lists, `presort`/`sort`) are ignored here too, but each one is
 * reported with a warning so a typo does not go unnoticed, and kept in policy.ignored for
 * commands that report them otherwise (`check`). */
#ifndef DS_POLICY_H
#define DS_POLICY_H

#include "../util/arena.h"
#include "../doc/doc.h"
#include "../util/err.h"
#include "args.h"
#include "plugin_desc.h"

typedef struct {
  const char *name;
  const plugin_desc *desc; /* NULL when not registered */
  void *args;              /* decoded args (desc->args_size bytes) */
} plugin_config;

/* An extension point's enabled plugins, resolved to their configs. */
typedef struct {
  size_t n;
  const char **names;
  plugin_config **configs; /* filled by policy_load for enabled plugins */
} plugin_set;

typedef struct {
  const char *name;
  size_t nconfig;
  plugin_config *config;
  plugin_set deschedule, balance, filter, preevictionfilter;
} profile;

typedef struct {
  const char *source;
  bool has_prometheus;
  const char *prometheus_url;
  bool has_auth_token, has_secret_ref;
  const char *secret_namespace, *secret_name;
} metrics_provider;

/* A field the loader ignored, as upstream does (logged when it was met). */
typedef struct {
  const char *field;  /* its path, e.g. "maxNoOfPodToEvictTotal", "profiles[0].plugins.Balance" */
  const char *reason; /* e.g. "unknown field" */
} policy_ignored;

/* usageSamples (this project's; upstream ignores the field): which actual-utilization samples
 * a cycle trusts (docs/utilization.md, "Usage you can trust"). */
#define USAGE_MAX_SAMPLE_AGE_DEFAULT_NS (120LL * 1000000000LL) /* twice the shipped rules' 1m */
#define USAGE_MAX_MISSING_FRACTION_DEFAULT 0.1
typedef struct {
  bool skip_nodes;          /* skipNodesWithoutSamples (true); false: upstream's rule */
  int64_t max_age_ns;       /* maxSampleAge; 0: not checked */
  double max_missing;       /* maxMissingFraction */
} usage_trust;

typedef struct policy {
  arena *mem;
  const char *path;
  size_t nignored, cap_ignored;
  policy_ignored *ignored; /* in file order, in mem */
  size_t nprofiles;
  profile *profiles;
  const char *node_selector; /* NULL when unset */
  opt_uint max_per_node, max_per_namespace, max_total;
  bool eviction_failure_events;
  opt_int grace_period_seconds;
  bool metrics_collector_enabled;
  usage_trust usage;
  size_t nproviders;
  metrics_provider *providers;
} policy;

/* Loads and prepares the policy file. lookup resolves plugin names; env serves plugins'
 * construction checks (may be NULL when no plugin needs it). Returns NULL with err. */
policy *policy_load(const char *path, plugin_lookup_fn lookup, const plugin_env *env, dserr *err);
/* Same from a string (tests). `name` stands for the file name in messages. */
policy *policy_load_string(const char *name, const char *text, plugin_lookup_fn lookup,
                           const plugin_env *env, dserr *err);
void policy_free(policy *p);

/* The metrics provider of a source ("Prometheus", "KubernetesMetrics"), the last one as
 * upstream's map keeps it, or NULL. */
const metrics_provider *policy_metrics_provider(const policy *p, const char *source);
/* Whether upstream would run a metrics.k8s.io collector: metricsCollector.enabled or a
 * KubernetesMetrics provider. */
bool policy_metrics_collector(const policy *p);

/* The pluginConfig entry that wins for name in a profile (the first one), or NULL. */
plugin_config *profile_config(const profile *pr, const char *name);
/* The name of the first profile that enables plugin `name` at any extension point, or NULL. */
const char *policy_profile_enabling(const policy *p, const char *name);

#endif
