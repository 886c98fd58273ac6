/* kubedescheduler.h - the OpenShift KubeDescheduler CR turned into a DeschedulerPolicy.
 *
 * OpenShift does not let users write a DeschedulerPolicy: they apply a KubeDescheduler
 * (operator.openshift.io/v1, `openshift-kube-descheduler-operator/cluster`) naming profiles
 * and a few customizations, and the cluster-kube-descheduler-operator renders the policy
 * (pkg/operator/target_config_reconciler.go: manageConfigMap and the *Profile functions) and
 * the operand's command line (manageDeschedulerDeployment). This module does the same
 * translation so the CR can be run by this descheduler, simulated offline, or inspected.
 *
 * Two steps, both pure (no I/O):
 *  - kd_parse reads the CR as the API server would admit it: strict field names and types
 *    (our messages, naming the field), the CRD's defaults (mode Predictive, logLevel Normal),
 *    the singleton rule on metadata.name;
 *  - kd_render validates as the operator does (its schema check and the 17 CEL rules on
 *    spec.profiles, then manageConfigMap's checks, in the operator's order, with its messages
 *    verbatim) and builds the policy tree, the operand's arguments and the warnings the
 *    operator would log.
 * What the operator reads from the cluster is passed in as kd_facts; kd_facts_from_model
 * derives them from a model (a snapshot, or the objects read live).
 *
 * Everything returned lives in the arena passed in. docs/openshift.md lists the mapping and
 * every deliberate difference. */
#ifndef DS_KUBEDESCHEDULER_H
#define DS_KUBEDESCHEDULER_H

#include "../model/model.h"
#include "../util/arena.h"
#include "../doc/doc.h"
#include "../util/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KD_OPERATOR_NAMESPACE "openshift-kube-descheduler-operator"
#define KD_NAME "cluster"
#define KD_KUBEVIRT_NODE_SELECTOR "kubevirt.io/schedulable=true"

typedef struct {
  bool set;
  int64_t v;
} kd_int;

/* The CR's fields, after the API server's defaulting. Strings are NULL when absent unless
 * noted. */
typedef struct {
  const char *file;                           /* names the CR in messages */
  const char *ns, *name, *resource_version;   /* "" when absent */
  const char *management_state;               /* NULL when absent */
  const char *log_level, *operator_log_level; /* "Normal" when absent (CRD default) */
  const char *mode;                           /* "Predictive" when absent (CRD default) */
  kd_int interval;                            /* deschedulingIntervalSeconds */
  bool profiles_null;                         /* spec.profiles absent or null */
  size_t nprofiles;
  const char **profiles;
  kd_int limit_total, limit_node; /* evictionLimits */
  bool has_customizations;
  kd_int pod_lifetime; /* nanoseconds */
  kd_int threshold_priority;
  const char *threshold_priority_class; /* "" when absent */
  size_t nincluded, nexcluded;
  const char **included, **excluded;
  const char *dev_low, *dev_high, *dev_deviation; /* NULL when absent (Go nil pointer) */
  const char *dev_actual;                         /* "" when absent */
  bool dev_evictions_in_background, dev_soft_tainter;
  kd_int migration_cooldown, max_migration_cooldown, migration_history_window; /* ns */
  size_t nciphers; /* observedConfig.servingInfo.cipherSuites */
  const char **ciphers;
  const char *min_tls_version; /* observedConfig.servingInfo.minTLSVersion */
} kd_spec;

/* Reads a KubeDescheduler object (file is kept in out->file). Errors name the field and what
 * was expected, `spec.deschedulingIntervalSeconds: expected an integer (int32), got "30"`; the
 * caller puts the file in front. The object must be a map with apiVersion
 * operator.openshift.io/v1 and kind KubeDescheduler. */
int kd_parse(arena *a, const char *file, const doc_node *obj, kd_spec *out, dserr *err);

typedef enum { KD_PSI_UNKNOWN, KD_PSI_PRESENT, KD_PSI_ABSENT } kd_psi;

/* What the operator reads from the cluster. */
typedef struct {
  /* kube-system, hypershift, openshift, then every existing namespace named openshift-* (the
   * operator's list, computed when it starts) */
  size_t nprotected;
  const char **protected_ns;
  bool kubevirt_node; /* some node is labelled kubevirt.io/schedulable=true */
  /* Route openshift-monitoring/prometheus-k8s */
  bool route_present;
  const char *route_error; /* why it could not be read when !route_present; NULL = not found */
  size_t route_ningress;
  const char *route_host;
  const char *prometheus_url; /* replaces the Route when non-NULL (--prometheus-url) */
  /* Scheduler config.openshift.io/v1 "cluster" */
  bool scheduler_known; /* false: not readable (not OpenShift, not in the snapshot) */
  const char *scheduler_profile;
  kd_psi psi;           /* /proc/pressure in the operator's pod: see docs/openshift.md */
  int monitoring_label; /* operator namespace labelled openshift.io/cluster-monitoring=true:
                           1 yes, 0 no, -1 unknown */
} kd_facts;

/* The operator's protected namespaces from a list of existing namespace names (any order;
 * the openshift-* ones are kept in the order given). */
void kd_protected_namespaces(arena *a, const char *const *names, size_t n, kd_facts *f);
/* Facts from a model: namespaces, node labels, the Route, the Scheduler, the operator
 * namespace's labels. psi and prometheus_url are left for the caller (UNKNOWN, NULL). */
void kd_facts_from_model(arena *a, const model *m, kd_facts *f);

typedef struct {
  doc_node *policy; /* the DeschedulerPolicy (descheduler/v1alpha2) */
  size_t nargs;     /* the operand container's args, in the operator's order */
  const char **args;
  size_t nwarnings; /* what the operator would log as warnings, and our own notes */
  const char **warnings;
  /* the one of them saying that the descheduler command does not taint nodes (a KubeVirt
   * profile), which the soft-tainter itself leaves out; NULL when not among them */
  const char *soft_tainter_note;
  /* the run settings the args stand for */
  int64_t interval_seconds;
  bool dry_run;
  bool automatic; /* spec.mode is Automatic: the operator's soft-tainter patches nodes only then */
  int verbosity;
  bool evictions_in_background;
  bool kubevirt_profile; /* a (Dev)KubeVirtRelieveAndMigrate profile is listed */
} kd_result;

/* Validates and renders. On an invalid CR returns -1 with the operator's message verbatim
 * (e.g. `cannot declare LongLifecycle and LifecycleAndUtilization profiles simultaneously`). */
int kd_render(arena *a, const kd_spec *spec, const kd_facts *facts, kd_result *out, dserr *err);

/* The rendered policy as YAML (what the operator writes to its ConfigMap's policy.yaml). */
int kd_policy_yaml(const kd_result *r, strbuf *out, dserr *err);

#endif
