/* kdsource.h - a KubeDescheduler CR as the source of the policy, for the commands that take
 * one (`profile render`, `simulate --kubedescheduler`, the run command and `soft-taint` with
 * --kubedescheduler or --kubedescheduler-ref).
 *
 * A source holds the CR (read once from a file, or read again from the API server at every
 * render for a reference), the options that stand in for what the operator reads from its
 * own pod (--prometheus-url, --psi), and the protected-namespace list, which the operator
 * computes once when it starts. kdsrc_render turns the CR and a model holding the cluster's
 * namespaces, nodes, Route and Scheduler into a rendering (policy/kubedescheduler.h), and tells
 * whether it differs from the previous one, so a long-running command can switch policies
 * between cycles. */
#ifndef DS_CLI_KDSOURCE_H
#define DS_CLI_KDSOURCE_H

#include "../kube/client.h"
#include "../policy/kubedescheduler.h"
#include "../policy/policy.h"

typedef struct kdsrc kdsrc;

typedef struct {
  const char *file;           /* --kubedescheduler FILE */
  const char *ref;            /* --kubedescheduler-ref NAMESPACE/NAME (live only) */
  const char *prometheus_url; /* --prometheus-url, replaces the Route */
  const char *psi;            /* --psi auto|present|absent (NULL = auto) */
  bool in_cluster;            /* running in a pod with the in-cluster config (for --psi auto) */
} kdsrc_options;

/* Checks the options and reads the file (YAML or JSON: one KubeDescheduler object, or a List
 * holding exactly one). With neither file nor ref, the CR is taken from the model at the first
 * render (a snapshot that holds KubeDescheduler openshift-kube-descheduler-operator/cluster).
 * Returns NULL with err (naming the file). Caller frees with kdsrc_free. */
kdsrc *kdsrc_new(const kdsrc_options *o, dserr *err);
void kdsrc_free(kdsrc *s);

/* Renders against m (model_finish done; its namespaces, nodes, Route and Scheduler are the
 * facts). The protected namespaces are fixed at the first call. A reference is read from the
 * API through c (NULL offline); route_error is what reading the Route failed with, or NULL.
 * Returns 1 when the rendering (policy and settings) changed since the last successful call or
 * is the first, 0 when it is the same, -1 with err when the CR is invalid (bad input),
 * KDSRC_NOT_FOUND with err when the reference names no CR, KDSRC_UNREADABLE with err when the
 * API server could not be asked for the reference (err names the CR: `<file>: <message>`). */
#define KDSRC_UNREADABLE (-2)
#define KDSRC_NOT_FOUND (-3)
int kdsrc_render(kdsrc *s, const model *m, kube_client *c, const char *route_error, dserr *err);

/* Forgets the last rendering's identity, so that the next kdsrc_render returns 1 (a rendering
 * whose policy was refused is tried again, not taken as the one in force). */
void kdsrc_forget(kdsrc *s);
/* The last successful rendering (valid until the next kdsrc_render that returns 1). */
const kd_result *kdsrc_result(const kdsrc *s);
/* The last rendering's policy as YAML. Borrowed. */
const char *kdsrc_policy_yaml(const kdsrc *s);
/* How the source is named in messages: the file, or "kubedescheduler NAMESPACE/NAME". */
const char *kdsrc_name(const kdsrc *s);
/* The reference's namespace and name (--kubedescheduler-ref); NULL for a file. */
const char *kdsrc_namespace(const kdsrc *s);
const char *kdsrc_object_name(const kdsrc *s);
/* Whether the source is a reference read from the API server. */
bool kdsrc_is_ref(const kdsrc *s);

/* Logs the last rendering's warnings as klog warning lines (the soft-tainter leaves out the
 * one telling to run it). */
void kdsrc_log_warnings(const kdsrc *s, bool soft_tainter);

/* Loads the last rendering's policy as if it were a policy file named "<name> (rendered)". */
policy *kdsrc_load_policy(const kdsrc *s, const plugin_env *env, dserr *err);

#endif
