/* podlifetime.c - PodLifeTime (Deschedule), as upstream's
 * pkg/framework/plugins/podlifetime/pod_lifetime.go.
 *
 * Evicts pods that match every configured criterion: older than maxPodLifeTimeSeconds, in
 * one of `states` (pod phase, pod reason, or a container's waiting/terminated reason), owned
 * (or not) by `ownerKinds`, with a matching pod condition, or with a container that exited
 * with one of `exitCodes`. Pods of every node are gathered (any phase), sorted oldest first
 * and evicted in that order; a node limit skips just that pod. Ties in age keep node order
 * then name order (upstream's is unspecified). */
#include "../framework/podutil.h"
#include "common.h"
#include "registry.h"

#include <stdio.h>
#include <string.h>

typedef struct {
  const char *type, *status, *reason;
  opt_uint min_since;
} plt_condition;

typedef struct {
  ns_filter namespaces;
  label_selector *label_selector;
  struct {
    str_list include, exclude;
  } owner_kinds;
  opt_uint max_age;
  str_list states;
  obj_list conditions; /* plt_condition */
  i32_list exit_codes;
  bool init_containers, ephemeral_containers;
} plt_args;

static const args_field owner_kind_fields[] = {
    {"include", AF_STRINGS, 0},
    {"exclude", AF_STRINGS, sizeof(str_list)},
    {NULL}};
static const args_field condition_fields[] = {
    {"type", AF_STRING, offsetof(plt_condition, type)},
    {"status", AF_STRING, offsetof(plt_condition, status)},
    {"reason", AF_STRING, offsetof(plt_condition, reason)},
    {"minTimeSinceLastTransitionSeconds", AF_OPT_UINT, offsetof(plt_condition, min_since)},
    {NULL}};
static const args_field plt_fields[] = {
    {"namespaces", AF_NAMESPACES, offsetof(plt_args, namespaces)},
    {"labelSelector", AF_SELECTOR, offsetof(plt_args, label_selector)},
    {"ownerKinds", AF_OBJECT, offsetof(plt_args, owner_kinds), owner_kind_fields},
    {"maxPodLifeTimeSeconds", AF_OPT_UINT, offsetof(plt_args, max_age)},
    {"states", AF_STRINGS, offsetof(plt_args, states)},
    {"conditions", AF_OBJECTS, offsetof(plt_args, conditions), condition_fields, sizeof(plt_condition)},
    {"exitCodes", AF_INT32S, offsetof(plt_args, exit_codes)},
    {"includingInitContainers", AF_BOOL, offsetof(plt_args, init_containers)},
    {"includingEphemeralContainers", AF_BOOL, offsetof(plt_args, ephemeral_containers)},
    {NULL}};

static const char *const allowed_states[] = {
    "Completed", "ContainerCannotRun", "ContainerCreating", "CrashLoopBackOff",
    "CreateContainerConfigError", "CreateContainerError", "DeadlineExceeded", "ErrImagePull",
    "Error", "Evicted", "Failed", "ImagePullBackOff", "InvalidImageName", "NodeAffinity",
    "NodeLost", "OOMKilled", "Pending", "PodInitializing", "Running", "Shutdown", "StartError",
    "Succeeded", "UnexpectedAdmissionError", "Unknown", NULL};

static int plt_validate(const void *vargs, dserr *err) {
  const plt_args *a = vargs;
  errlist e = {0};
  validate_namespaces(&a->namespaces, &e);
  if (a->owner_kinds.include.n && a->owner_kinds.exclude.n)
    errlist_add(&e, "only one of Include/Exclude ownerKinds can be set");
  validate_label_selector(a->label_selector, &e);
  for (size_t i = 0; i < a->states.n; i++) {
    bool ok = false;
    for (size_t k = 0; allowed_states[k] && !ok; k++)
      ok = strcmp(a->states.items[i], allowed_states[k]) == 0;
    if (!ok) {
      strbuf list = {0};
      for (size_t k = 0; allowed_states[k]; k++)
        sb_printf(&list, "%s%s", k ? " " : "", allowed_states[k]);
      errlist_add(&e, "states must be one of [%s]", sb_str(&list));
      sb_free(&list);
      break;
    }
  }
  const plt_condition *c = a->conditions.items;
  for (size_t i = 0; i < a->conditions.n; i++)
    if (!(c[i].type && *c[i].type) && !(c[i].status && *c[i].status) &&
        !(c[i].reason && *c[i].reason) && !c[i].min_since.set)
      errlist_add(&e, "conditions[%zu]: at least one of type, status, reason, or minTimeSinceLastTransitionSeconds must be set", i);
  if (!a->max_age.set && !a->states.n && !a->conditions.n && !a->exit_codes.n)
    errlist_add(&e, "at least one filtering criterion must be specified (maxPodLifeTimeSeconds, states, conditions, or exitCodes)");
  return errlist_finish(&e, err);
}

static bool reason_in(const str_list *states, const char *reason) {
  return reason && *reason && str_list_contains(states, reason);
}

static bool statuses_match_states(const str_list *states, const container_status *cs, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (reason_in(states, cs[i].waiting_reason) || reason_in(states, cs[i].terminated_reason))
      return true;
  return false;
}

static bool matches_states(const plt_args *a, const pod *p) {
  const pod_extra *x = pod_x(p);
  if (reason_in(&a->states, pod_phase_name(p->phase)) || reason_in(&a->states, x->status_reason))
    return true;
  if (statuses_match_states(&a->states, p->container_status, p->ncontainer_status))
    return true;
  if (a->init_containers && statuses_match_states(&a->states, x->init_status, x->ninit_status))
    return true;
  if (a->ephemeral_containers &&
      statuses_match_states(&a->states, x->ephemeral_status, x->nephemeral_status))
    return true;
  return false;
}

static bool matches_owner_kinds(const plt_args *a, const pod *p) {
  if (a->owner_kinds.include.n) {
    for (size_t i = 0; i < p->nowners; i++)
      if (str_list_contains(&a->owner_kinds.include, p->owners[i].kind))
        return true;
    return false;
  }
  for (size_t i = 0; i < p->nowners; i++)
    if (str_list_contains(&a->owner_kinds.exclude, p->owners[i].kind))
      return false;
  return true;
}

static bool field_eq(const char *want, const char *have) {
  return !want || !*want || strcmp(want, have) == 0;
}

static bool matches_conditions(const plt_args *a, const pod *p, int64_t now) {
  const plt_condition *f = a->conditions.items;
  for (size_t i = 0; i < a->conditions.n; i++)
    for (size_t k = 0; k < p->nconditions; k++) {
      const pod_condition *c = &p->conditions[k];
      if (!field_eq(f[i].type, c->type) || !field_eq(f[i].status, c->status) ||
          !field_eq(f[i].reason, c->reason))
        continue;
      if (f[i].min_since.set) {
        if (!c->has_transition || now - c->last_transition < 0 ||
            (uint64_t)(now - c->last_transition) < f[i].min_since.v)
          continue;
      }
      return true;
    }
  return false;
}

static bool plt_pod_filter(plugin_handle *h, const plt_args *a, const pod *p) {
  if (!pod_passes_ns_and_labels(&a->namespaces, a->label_selector, p))
    return false;
  if (!fw_filter(h, p) || !fw_pre_eviction_filter(h, p))
    return false;
  if (a->max_age.set) {
    /* no creationTimestamp is Go's zero time: as old as it gets */
    if (p->has_creation) {
      int64_t age = h->now - p->creation;
      if (age < 0 || (uint64_t)age <= a->max_age.v)
        return false;
    }
  }
  if (a->states.n && !matches_states(a, p))
    return false;
  if ((a->owner_kinds.include.n || a->owner_kinds.exclude.n) && !matches_owner_kinds(a, p))
    return false;
  if (a->conditions.n && !matches_conditions(a, p, h->now))
    return false;
  if (a->exit_codes.n && !statuses_exited_with(&a->exit_codes, p->container_status, p->ncontainer_status) &&
      !(a->init_containers && statuses_exited_with(&a->exit_codes, pod_x(p)->init_status, pod_x(p)->ninit_status)))
    return false;
  return true;
}

static int cmp_oldest_first(const pod *x, const pod *y) {
  int64_t a = x->has_creation ? x->creation : INT64_MIN;
  int64_t b = y->has_creation ? y->creation : INT64_MIN;
  return a < b ? -1 : a > b;
}

static int plt_run(plugin_handle *h, const void *vargs, dserr *err) {
  (void)err;
  const plt_args *a = vargs;
  pod_vec all = {0};
  for (size_t i = 0; i < h->nnodes; i++) {
    LOGV(2, &h->log, "Processing node", LSTR("node", h->nodes[i]->name));
    size_t n;
    pod **pods = fw_node_pods(h, h->nodes[i], false, &n);
    for (size_t k = 0; k < n; k++)
      if (plt_pod_filter(h, a, pods[k]))
        pod_vec_push(h->scratch, &all, pods[k]);
  }
  pods_stable_sort(all.items, all.n, cmp_oldest_first);
  evict_in_order(h, all.items, all.n, true);
  return 0;
}

static bool plt_reads_conditions(const void *args) {
  return ((const plt_args *)args)->conditions.n > 0;
}

const plugin_desc plugin_pod_life_time = {
    .name = "PodLifeTime",
    .points = PLUGIN_DESCHEDULE,
    .args_size = sizeof(plt_args),
    .fields = plt_fields,
    .validate = plt_validate,
    .run = plt_run,
    .reads_pod_conditions = plt_reads_conditions,
};
