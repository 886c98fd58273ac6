/* defaultevictor.c - the DefaultEvictor: which pods may be evicted at all.
 *
 * As upstream's pkg/framework/plugins/defaultevictor (defaultevictor.go, constraints.go,
 * validation.go). Filter rejects mirror, static and terminating pods and pods protected by the
 * enabled pod protections (local storage, system-critical priority and the priority threshold,
 * bare pods, DaemonSet pods, PVCs, pods without a PDB, resource claims), pods outside
 * labelSelector, pods whose owner has fewer than minReplicas pods and pods younger than
 * minPodAge. The `evict` annotation bypasses all of it. PreEvictionFilter applies nodeFit (the
 * pod must fit some other ready node) and namespaceLabelSelector.
 *
 * Protections are resolved once per config: with podProtections given, defaults minus
 * defaultDisabled plus extraEnabled; otherwise the deprecated booleans. */
#include "../framework/framework.h"
#include "../kubevirt/vm.h"
#include "../framework/podutil.h"
#include "../policy/args.h"
#include "../util/strbuf.h"
#include "../apimachinery/timeutil.h"
#include "common.h"
#include "defaultevictor.h"
#include "registry.h"

#include <stdio.h>
#include <string.h>

#define SYSTEM_CRITICAL_PRIORITY 2000000000

enum {
  PROT_LOCAL_STORAGE = 1 << 0,
  PROT_SYSTEM_CRITICAL = 1 << 1,
  PROT_FAILED_BARE = 1 << 2,
  PROT_DAEMONSET = 1 << 3,
  PROT_PVC = 1 << 4,
  PROT_WITHOUT_PDB = 1 << 5,
  PROT_RESOURCE_CLAIMS = 1 << 6,
};

static const struct {
  const char *name;
  unsigned bit;
  bool by_default;
} protections[] = {
    {"PodsWithLocalStorage", PROT_LOCAL_STORAGE, true},
    {"SystemCriticalPods", PROT_SYSTEM_CRITICAL, true},
    {"FailedBarePods", PROT_FAILED_BARE, true},
    {"DaemonSetPods", PROT_DAEMONSET, true},
    {"PodsWithPVC", PROT_PVC, false},
    {"PodsWithoutPDB", PROT_WITHOUT_PDB, false},
    {"PodsWithResourceClaims", PROT_RESOURCE_CLAIMS, false},
};
#define NPROT (sizeof protections / sizeof protections[0])

typedef struct {
  const char *name;
} storage_class_ref;

typedef struct {
  const char *node_selector;
  label_selector *label_selector;
  label_selector *namespace_label_selector;
  struct {
    opt_int value;
    const char *name;
  } priority_threshold;
  bool node_fit;
  uint64_t min_replicas;
  const char *min_pod_age;
  const char *no_eviction_policy;
  struct {
    str_list default_disabled, extra_enabled;
    obj_list protected_storage_classes; /* of storage_class_ref */
  } pod_protections;
  bool evict_local_storage_pods, evict_daemonset_pods, evict_system_critical_pods;
  bool ignore_pvc_pods, ignore_pods_without_pdb, evict_failed_bare_pods;
  /* resolved by prepare */
  unsigned protections;
  int64_t threshold;
  bool has_min_age;
  int64_t min_age_ns;
  bool mandatory;
} de_args;

static const args_field storage_class_fields[] = {
    {"name", AF_STRING, offsetof(storage_class_ref, name)}, {NULL}};
static const args_field pvc_config_fields[] = {
    {"protectedStorageClasses", AF_OBJECTS, 0, storage_class_fields, sizeof(storage_class_ref)},
    {NULL}};
static const args_field protection_config_fields[] = {
    {"PodsWithPVC", AF_OBJECT, 0, pvc_config_fields}, {NULL}};
static const args_field protections_fields[] = {
    {"defaultDisabled", AF_STRINGS,
     offsetof(de_args, pod_protections.default_disabled) - offsetof(de_args, pod_protections)},
    {"extraEnabled", AF_STRINGS,
     offsetof(de_args, pod_protections.extra_enabled) - offsetof(de_args, pod_protections)},
    {"config", AF_OBJECT,
     offsetof(de_args, pod_protections.protected_storage_classes) -
         offsetof(de_args, pod_protections),
     protection_config_fields},
    {NULL}};
static const args_field threshold_fields[] = {
    {"value", AF_OPT_INT, 0},
    {"name", AF_STRING,
     offsetof(de_args, priority_threshold.name) - offsetof(de_args, priority_threshold)},
    {NULL}};

static const args_field de_fields[] = {
    {"nodeSelector", AF_STRING, offsetof(de_args, node_selector)},
    {"labelSelector", AF_SELECTOR, offsetof(de_args, label_selector)},
    {"namespaceLabelSelector", AF_SELECTOR, offsetof(de_args, namespace_label_selector)},
    {"priorityThreshold", AF_OBJECT, offsetof(de_args, priority_threshold), threshold_fields},
    {"nodeFit", AF_BOOL, offsetof(de_args, node_fit)},
    {"minReplicas", AF_UINT, offsetof(de_args, min_replicas)},
    {"minPodAge", AF_STRING, offsetof(de_args, min_pod_age)},
    {"noEvictionPolicy", AF_STRING, offsetof(de_args, no_eviction_policy)},
    {"podProtections", AF_OBJECT, offsetof(de_args, pod_protections), protections_fields},
    {"evictLocalStoragePods", AF_BOOL, offsetof(de_args, evict_local_storage_pods)},
    {"evictDaemonSetPods", AF_BOOL, offsetof(de_args, evict_daemonset_pods)},
    {"evictSystemCriticalPods", AF_BOOL, offsetof(de_args, evict_system_critical_pods)},
    {"ignorePvcPods", AF_BOOL, offsetof(de_args, ignore_pvc_pods)},
    {"ignorePodsWithoutPDB", AF_BOOL, offsetof(de_args, ignore_pods_without_pdb)},
    {"evictFailedBarePods", AF_BOOL, offsetof(de_args, evict_failed_bare_pods)},
    {NULL}};

static int find_protection(const char *name) {
  for (size_t i = 0; i < NPROT; i++)
    if (strcmp(protections[i].name, name) == 0)
      return (int)i;
  return -1;
}

static bool has_duplicates(const str_list *l) {
  for (size_t i = 0; i < l->n; i++)
    for (size_t j = 0; j < i; j++)
      if (strcmp(l->items[i], l->items[j]) == 0)
        return true;
  return false;
}

/* Filter's failed checks, ", "-joined (each check adds at most one text). */
static void add_error(strbuf *errs, int *count, const char *msg) {
  if ((*count)++)
    sb_append(errs, ", ");
  sb_append(errs, msg);
}

static int de_validate(const void *vargs, dserr *err) {
  const de_args *a = vargs;
  errlist e = {0};
  if (a->priority_threshold.value.set && a->priority_threshold.name && *a->priority_threshold.name)
    errlist_add(
        &e, "%s",
        "priority threshold misconfigured, only one of priorityThreshold fields can be set");
  if (a->no_eviction_policy && *a->no_eviction_policy &&
      strcmp(a->no_eviction_policy, "Preferred") && strcmp(a->no_eviction_policy, "Mandatory"))
    errlist_add(&e, "%s", "noEvictionPolicy accepts only [\"Preferred\" \"Mandatory\"] values");
  const str_list *dd = &a->pod_protections.default_disabled,
                 *ee = &a->pod_protections.extra_enabled;
  bool deprecated = a->evict_local_storage_pods || a->evict_daemonset_pods ||
                    a->evict_system_critical_pods || a->ignore_pvc_pods ||
                    a->ignore_pods_without_pdb || a->evict_failed_bare_pods;
  if (deprecated && (dd->n || ee->n))
    errlist_add(&e, "%s",
                "cannot use Deprecated fields alongside PodProtections.ExtraEnabled or "
                "PodProtections.DefaultDisabled");
  for (size_t i = 0; i < ee->n; i++) {
    int k = find_protection(ee->items[i]);
    if (k < 0 || protections[k].by_default) {
      errlist_add(&e,
                  "invalid pod protection policy in ExtraEnabled: \"%s\". Valid options are: "
                  "[PodsWithPVC PodsWithoutPDB PodsWithResourceClaims]",
                  ee->items[i]);
    }
  }
  for (size_t i = 0; i < dd->n; i++) {
    int k = find_protection(dd->items[i]);
    if (k < 0 || !protections[k].by_default) {
      errlist_add(&e,
                  "invalid pod protection policy in DefaultDisabled: \"%s\". Valid options are: "
                  "[PodsWithLocalStorage SystemCriticalPods FailedBarePods DaemonSetPods]",
                  dd->items[i]);
    }
  }
  if (has_duplicates(dd))
    errlist_add(&e, "%s", "PodProtections.DefaultDisabled contains duplicate entries");
  if (has_duplicates(ee))
    errlist_add(&e, "%s", "PodProtections.ExtraEnabled contains duplicate entries");
  if (str_list_contains(ee, "PodsWithPVC")) {
    const storage_class_ref *sc = a->pod_protections.protected_storage_classes.items;
    for (size_t i = 0; i < a->pod_protections.protected_storage_classes.n; i++)
      if (!sc[i].name || !*sc[i].name) {
        errlist_add(
            &e,
            "PodProtections.Config.PodsWithPVC.ProtectedStorageClasses[%zu] name cannot be empty",
            i);
      }
  }
  if (a->min_pod_age) {
    int64_t ns;
    dserr ignored;
    if (duration_parse(a->min_pod_age, &ns, &ignored) < 0)
      errlist_add(&e, "time: invalid duration \"%s\"", a->min_pod_age);
  }
  /* upstream's aggregate lists a repeated message once; errlist does the same */
  return errlist_finish(&e, err);
}

static unsigned resolve_protections(const de_args *a) {
  const str_list *dd = &a->pod_protections.default_disabled,
                 *ee = &a->pod_protections.extra_enabled;
  unsigned on = 0;
  if (dd->n || ee->n) {
    for (size_t i = 0; i < NPROT; i++)
      if (protections[i].by_default && !str_list_contains(dd, protections[i].name))
        on |= protections[i].bit;
    for (size_t i = 0; i < ee->n; i++) {
      int k = find_protection(ee->items[i]);
      if (k >= 0)
        on |= protections[k].bit;
    }
    return on;
  }
  if (!a->evict_local_storage_pods)
    on |= PROT_LOCAL_STORAGE;
  if (!a->evict_system_critical_pods)
    on |= PROT_SYSTEM_CRITICAL;
  if (!a->evict_failed_bare_pods)
    on |= PROT_FAILED_BARE;
  if (!a->evict_daemonset_pods)
    on |= PROT_DAEMONSET;
  if (a->ignore_pvc_pods)
    on |= PROT_PVC;
  if (a->ignore_pods_without_pdb)
    on |= PROT_WITHOUT_PDB;
  return on;
}

static int de_prepare(void *vargs, const plugin_env *env, dserr *err) {
  de_args *a = vargs;
  a->protections = resolve_protections(a);
  a->mandatory = a->no_eviction_policy && strcmp(a->no_eviction_policy, "Mandatory") == 0;
  if (a->priority_threshold.value.set) {
    a->threshold = a->priority_threshold.value.v;
  } else if (a->priority_threshold.name && *a->priority_threshold.name) {
    int32_t v;
    dserr e;
    if (!env || !env->priority_class_value) {
      return dserr_set(err,
                       "unable to get priority value from the priority class: no cluster "
                       "to look up PriorityClass \"%s\"",
                       a->priority_threshold.name);
    }
    if (env->priority_class_value(env->ctx, a->priority_threshold.name, &v, &e) < 0)
      return dserr_set(err, "unable to get priority value from the priority class: %s", e.msg);
    a->threshold = v;
  } else {
    a->threshold = SYSTEM_CRITICAL_PRIORITY;
  }
  if (a->threshold > SYSTEM_CRITICAL_PRIORITY)
    return dserr_set(err, "priority threshold can't be greater than %d", SYSTEM_CRITICAL_PRIORITY);
  if (a->min_pod_age) {
    dserr e;
    a->has_min_age = duration_parse(a->min_pod_age, &a->min_age_ns, &e) == 0;
  }
  const log_field bound[] = {LSTR("plugin", "DefaultEvictor")};
  log_ctx ctx = {bound, 1};
  if (!(a->protections & PROT_FAILED_BARE))
    LOGV(1, &ctx,
         "Warning: EvictFailedBarePods is set to True. This could cause eviction of pods without "
         "ownerReferences.");
  if (!(a->protections & PROT_SYSTEM_CRITICAL))
    LOGV(1, &ctx,
         "Warning: System critical pod protection is disabled. This could cause eviction of "
         "Kubernetes system pods.");
  if (a->min_replicas == 1) /* klog.V(4).Info upstream: unstructured, no keys */
    LOGF(4, "DefaultEvictor minReplicas must be greater than 1 to check for min pods during "
            "eviction. This check will be ignored during eviction.");
  /* upstream's constructor converts both selectors; a refused one fails the profile */
  if (a->label_selector && a->label_selector->invalid) {
    LOGE(&ctx, "could not get selector from label selector", a->label_selector->invalid);
    return dserr_set(err, "%s", a->label_selector->invalid);
  }
  if (a->namespace_label_selector && a->namespace_label_selector->invalid)
    return dserr_set(err, "unable to convert namespaceLabelSelector to label selector: %s",
                     a->namespace_label_selector->invalid);
  return 0;
}

static bool storage_class_protected(const de_args *a, const char *sc) {
  const storage_class_ref *list = a->pod_protections.protected_storage_classes.items;
  for (size_t i = 0; i < a->pod_protections.protected_storage_classes.n; i++)
    if (list[i].name && strcmp(list[i].name, sc) == 0)
      return true;
  return false;
}

/* PodsWithPVC: any PVC volume, or with protectedStorageClasses only claims of those classes */
static void check_pvc(const model *m, const de_args *a, const pod *p, strbuf *fails, int *n) {
  const pod_extra *x = pod_x(p);
  if (!x->npvc)
    return;
  if (!a->pod_protections.protected_storage_classes.n) {
    add_error(fails, n, "pod with PVC is protected against eviction");
    return;
  }
  char buf[512];
  for (size_t i = 0; i < x->npvc; i++) {
    const pvc_obj *c = model_find_pvc(m, p->ns, x->pvc_claims[i]);
    if (!c) {
      snprintf(buf, sizeof buf,
               "failed to get persistent volume claim \"%s\"/\"%s\": persistentvolumeclaim \"%s\" "
               "not found",
               p->ns, x->pvc_claims[i], x->pvc_claims[i]);
      add_error(fails, n, buf);
      return;
    }
    if (!*c->storage_class) {
      snprintf(buf, sizeof buf, "failed to resolve storage class for pod \"%s\"/\"%s\"", p->ns,
               x->pvc_claims[i]);
      add_error(fails, n, buf);
      return;
    }
    if (storage_class_protected(a, c->storage_class)) {
      snprintf(buf, sizeof buf, "pod using protected storage class \"%s\"", c->storage_class);
      add_error(fails, n, buf);
      return;
    }
  }
}

static bool covered_by_pdb(plugin_handle *h, const pod *p) {
  for (size_t i = 0; i < h->m->pdbs.n; i++) {
    const pdb_obj *d = h->m->pdbs.items[i];
    if (strcmp(d->ns, p->ns) == 0 && selector_matches(d->selector, &p->labels))
      return true;
  }
  return false;
}

static bool de_filter(plugin_handle *h, const void *vargs, const pod *p) {
  const de_args *a = vargs;
  if (pod_has(p, ANN_EVICT))
    return true;
  if (a->mandatory && pod_has(p, ANN_PREFER_NO_EVICTION)) {
    fw_reject_reason(h, "the pod asks not to be evicted (annotation "
                        "descheduler.alpha.kubernetes.io/prefer-no-eviction, noEvictionPolicy "
                        "Mandatory)");
    return false;
  }
  /* a VM asks on its VMI: the launcher pod only gets the VMI's annotations when the VM starts */
  if (a->mandatory && kubevirt_vm_prefers_no_eviction(h->m, p)) {
    fw_reject_reason(h, "the VM asks not to be evicted (annotation "
                        "descheduler.alpha.kubernetes.io/prefer-no-eviction on its VMI, "
                        "noEvictionPolicy Mandatory)");
    return false;
  }
  strbuf fails = {0};
  int n = 0;
  char buf[256];
  if (pod_has(p, ANN_MIRROR))
    add_error(&fails, &n, "pod is a mirror pod");
  if (pod_has(p, ANN_CONFIG_SOURCE) && strcmp(pod_x(p)->config_source, "api") != 0)
    add_error(&fails, &n, "pod is a static pod");
  if (p->deleting)
    add_error(&fails, &n, "pod is terminating");
  if (a->protections & PROT_SYSTEM_CRITICAL) {
    if (p->has_priority && p->priority >= SYSTEM_CRITICAL_PRIORITY)
      add_error(&fails, &n, "pod has system critical priority and is protected against eviction");
    if (p->has_priority && p->priority >= a->threshold)
      add_error(&fails, &n, "pod has higher priority than specified priority class threshold");
  }
  if (a->protections & PROT_FAILED_BARE) {
    if (!p->nowners)
      add_error(&fails, &n, "pod does not have any ownerRefs");
  } else if (!p->nowners && p->phase != PHASE_FAILED) {
    add_error(&fails, &n, "pod does not have any ownerRefs and is not in failed phase");
  }
  if ((a->protections & PROT_LOCAL_STORAGE) && p->local_storage)
    add_error(&fails, &n, "pod has local storage and is protected against eviction");
  if ((a->protections & PROT_DAEMONSET) && pod_is_daemonset(p))
    add_error(&fails, &n, "daemonset pods are protected against eviction");
  if (a->protections & PROT_PVC)
    check_pvc(h->m, a, p, &fails, &n);
  if ((a->protections & PROT_WITHOUT_PDB) && !covered_by_pdb(h, p))
    add_error(&fails, &n,
              "pod does not have a PodDisruptionBudget and is protected against eviction");
  if ((a->protections & PROT_RESOURCE_CLAIMS) && p->resource_claims)
    add_error(
        &fails, &n,
        "pod has ResourceClaims and descheduler is configured to protect ResourceClaims pods");
  if (a->label_selector && !selector_is_empty(a->label_selector) &&
      !selector_matches(a->label_selector, &p->labels))
    add_error(&fails, &n,
              "pod labels do not match the labelSelector filter in the policy parameter");
  if (a->min_replicas > 1) {
    if (p->nowners == 1) {
      size_t have = fw_owner_pod_count(h, p->owners[0].uid);
      if (have < a->min_replicas) {
        snprintf(buf, sizeof buf, "owner has %zu replicas which is less than minReplicas of %llu",
                 have, (unsigned long long)a->min_replicas);
        add_error(&fails, &n, buf);
      }
    } else if (p->nowners > 1) {
      char ref[512];
      LOGV(5, NULL,
           "pod has multiple owner references which is not supported for minReplicas check",
           LSTR("pod", pod_ref(p, ref, sizeof ref)));
    }
  }
  if (a->has_min_age) {
    /* Go's time.Since saturates: a start time centuries away must not overflow */
    int64_t age_ns = -1;
    if (p->has_start_time && __builtin_mul_overflow(h->now - p->start_time, 1000000000LL, &age_ns))
      age_ns = h->now > p->start_time ? INT64_MAX : INT64_MIN;
    if (!p->has_start_time || age_ns < a->min_age_ns) {
      strbuf d = {0};
      duration_format(&d, a->min_age_ns);
      snprintf(buf, sizeof buf, "pod age is not older than MinPodAge: %s seconds", sb_str(&d));
      sb_free(&d);
      add_error(&fails, &n, buf);
    }
  }
  if (n) {
    log_field bound[] = {LSTR("plugin", "DefaultEvictor"), LSTR("ExtensionPoint", "Filter")};
    log_ctx ctx = {bound, 2};
    char ref[512];
    strbuf checks = {0};
    if (n > 1)
      sb_printf(&checks, "[%s]", sb_str(&fails));
    else
      sb_append(&checks, sb_str(&fails));
    LOGV(4, &ctx, "Pod fails the following checks", LSTR("pod", pod_ref(p, ref, sizeof ref)),
         LSTR("checks", sb_str(&checks)));
    fw_reject_reason(h, sb_str(&checks));
    sb_free(&checks);
  }
  sb_free(&fails);
  return n == 0;
}

static bool de_pre_eviction_filter(plugin_handle *h, const void *vargs, const pod *p) {
  const de_args *a = vargs;
  log_field bound[] = {LSTR("plugin", "DefaultEvictor"),
                       LSTR("ExtensionPoint", "PreEvictionFilter")};
  log_ctx ctx = {bound, 2};
  char ref[512];
  if (a->node_fit) {
    size_t count;
    node **nodes = fw_ready_nodes(h, a->node_selector, &count);
    if (!nodes) {
      LOGE(&ctx, "unable to list ready nodes", "invalid nodeSelector",
           LSTR("pod", pod_ref(p, ref, sizeof ref)));
      fw_reject_reason(h, "unable to list ready nodes: invalid nodeSelector");
      return false;
    }
    if (!pod_fits_any_other_node(h, p, nodes, count)) {
      const char *why = "pod does not fit on any other node because of nodeSelector(s), "
                        "Taint(s), or nodes marked as unschedulable";
      LOGV(0, &ctx, why, LSTR("pod", pod_ref(p, ref, sizeof ref)));
      fw_reject_reason(h, why);
      return false;
    }
  }
  if (a->namespace_label_selector && a->namespace_label_selector->n) {
    const namespace_obj *ns = model_find_namespace(h->m, p->ns);
    kvlist none = {0};
    if (!selector_matches(a->namespace_label_selector, ns ? &ns->labels : &none)) {
      const char *why =
          "pod namespace do not match the namespaceLabelSelector filter in the policy parameter";
      LOGV(0, &ctx, why, LSTR("pod", pod_ref(p, ref, sizeof ref)));
      fw_reject_reason(h, why);
      return false;
    }
  }
  return true;
}

const plugin_desc plugin_default_evictor = {
    .name = "DefaultEvictor",
    .points = PLUGIN_EVICTOR,
    .args_size = sizeof(de_args),
    .fields = de_fields,
    .validate = de_validate,
    .prepare = de_prepare,
    .filter = de_filter,
    .pre_eviction_filter = de_pre_eviction_filter,
};

/* ---------- for `check` ---------- */

static const de_args *profile_args(const profile *pr) {
  const plugin_config *pc = profile_config(pr, "DefaultEvictor");
  return pc && pc->args ? pc->args : NULL;
}

bool defaultevictor_protections_of(const profile *pr, defaultevictor_protections *out) {
  memset(out, 0, sizeof *out);
  const de_args *a = profile_args(pr);
  if (!a)
    return false;
  out->local_storage = a->protections & PROT_LOCAL_STORAGE;
  out->pvc = a->protections & PROT_PVC;
  out->by_protections = a->pod_protections.default_disabled.n || a->pod_protections.extra_enabled.n;
  out->label_selector = a->label_selector && !selector_is_empty(a->label_selector)
                            ? a->label_selector
                            : NULL;
  return true;
}

bool defaultevictor_pvc_protects(const profile *pr, const model *m, const pod *p, char *why,
                                 size_t cap) {
  const de_args *a = profile_args(pr);
  if (why && cap)
    *why = 0;
  if (!a || !(a->protections & PROT_PVC))
    return false;
  strbuf fails = {0};
  int n = 0;
  check_pvc(m, a, p, &fails, &n);
  if (n && why)
    snprintf(why, cap, "%s", sb_str(&fails));
  sb_free(&fails);
  return n > 0;
}
