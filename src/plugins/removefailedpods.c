/* removefailedpods.c - RemoveFailedPods (Deschedule), as upstream's
 * pkg/framework/plugins/removefailedpods/failedpods.go.
 *
 * Evicts pods in phase Failed that are at least minPodLifetimeSeconds old (3600 unless set;
 * age against the cycle's `now`), not owned by one of excludeOwnerKinds, and, when given,
 * failed for one of `reasons` (a container's waiting/terminated reason or the pod's
 * status.reason) or with one of `exitCodes`; init containers are looked at too with
 * includingInitContainers. Bare failed pods still need DefaultEvictor's FailedBarePods
 * protection turned off.
 *
 * Age: a pod without creationTimestamp counts as infinitely old (Go's zero time); one
 * created after `now` (clock skew) counts as age 0, i.e. too young for any minimum > 0.
 *
 * Order: nodes by name, pods of a node by name (upstream's are informer-index order). */
#include "../framework/podutil.h"
#include "common.h"
#include "registry.h"

#include <stdio.h>
#include <string.h>

#define RFP_DEFAULT_MIN_LIFETIME 3600

typedef struct {
  ns_filter namespaces;
  label_selector *label_selector;
  str_list exclude_owner_kinds;
  opt_uint min_lifetime;
  str_list reasons;
  i32_list exit_codes;
  bool init_containers;
} rfp_args;

static const args_field rfp_fields[] = {
    {"namespaces", AF_NAMESPACES, offsetof(rfp_args, namespaces)},
    {"labelSelector", AF_SELECTOR, offsetof(rfp_args, label_selector)},
    {"excludeOwnerKinds", AF_STRINGS, offsetof(rfp_args, exclude_owner_kinds)},
    {"minPodLifetimeSeconds", AF_OPT_UINT, offsetof(rfp_args, min_lifetime)},
    {"reasons", AF_STRINGS, offsetof(rfp_args, reasons)},
    {"exitCodes", AF_INT32S, offsetof(rfp_args, exit_codes)},
    {"includingInitContainers", AF_BOOL, offsetof(rfp_args, init_containers)},
    {NULL}};

static int rfp_validate(const void *vargs, dserr *err) {
  const rfp_args *a = vargs;
  errlist e = {0};
  validate_namespaces(&a->namespaces, &e);
  validate_label_selector(a->label_selector, &e);
  return errlist_finish(&e, err);
}

static void rfp_set_defaults(void *vargs) {
  rfp_args *a = vargs;
  if (!a->min_lifetime.set)
    a->min_lifetime = (opt_uint){true, RFP_DEFAULT_MIN_LIFETIME};
}

static bool rfp_reason_listed(const str_list *reasons, const char *r) {
  return r && *r && str_list_contains(reasons, r);
}

static bool rfp_statuses_match_reasons(const str_list *reasons, const container_status *cs,
                                       size_t n) {
  for (size_t i = 0; i < n; i++)
    if (rfp_reason_listed(reasons, cs[i].waiting_reason) ||
        rfp_reason_listed(reasons, cs[i].terminated_reason))
      return true;
  return false;
}

static bool rfp_matches_reasons(const rfp_args *a, const pod *p) {
  return rfp_reason_listed(&a->reasons, pod_x(p)->status_reason) ||
         rfp_statuses_match_reasons(&a->reasons, p->container_status, p->ncontainer_status) ||
         (a->init_containers &&
          rfp_statuses_match_reasons(&a->reasons, pod_x(p)->init_status, pod_x(p)->ninit_status));
}

static bool rfp_matches_exit_codes(const rfp_args *a, const pod *p) {
  return statuses_exited_with(&a->exit_codes, p->container_status, p->ncontainer_status) ||
         (a->init_containers &&
          statuses_exited_with(&a->exit_codes, pod_x(p)->init_status, pod_x(p)->ninit_status));
}

/* The criteria after the evictor's filters; every failure is collected so the V4 line says
 * all the reasons at once, as upstream's aggregate does. */
static bool rfp_criteria(plugin_handle *h, const rfp_args *a, const pod *p) {
  errlist e = {0};
  if (a->min_lifetime.set && p->has_creation) {
    int64_t age = h->now - p->creation;
    if (age < 0)
      age = 0;
    if ((uint64_t)age < a->min_lifetime.v)
      errlist_add(&e, "pod does not exceed the min age seconds of %llu",
                  (unsigned long long)a->min_lifetime.v);
  }
  for (size_t i = 0; i < p->nowners; i++)
    if (str_list_contains(&a->exclude_owner_kinds, p->owners[i].kind))
      errlist_add(&e, "pod's owner kind of %s is excluded", p->owners[i].kind);
  if (a->reasons.n && !rfp_matches_reasons(a, p))
    errlist_add(&e, "pod does not match any of the reasons");
  if (a->exit_codes.n && !rfp_matches_exit_codes(a, p))
    errlist_add(&e, "pod does not match any of the exitCodes");
  if (!e.n)
    return true;
  dserr why;
  errlist_finish(&e, &why);
  if (LOG_ON(4)) {
    char msg[DSERR_MAX + 64], ref[512];
    snprintf(msg, sizeof msg, "ignoring pod for eviction due to: %s", why.msg);
    LOGV(4, &h->log, msg, LSTR("pod", pod_ref(p, ref, sizeof ref)));
  }
  return false;
}

static bool rfp_pod_filter(plugin_handle *h, const rfp_args *a, const pod *p) {
  if (p->phase != PHASE_FAILED)
    return false;
  if (!pod_passes_ns_and_labels(&a->namespaces, a->label_selector, p) || !fw_filter(h, p) ||
      !fw_pre_eviction_filter(h, p))
    return false;
  return rfp_criteria(h, a, p);
}

static int rfp_run(plugin_handle *h, const void *vargs, dserr *err) {
  (void)err;
  const rfp_args *a = vargs;
  for (size_t i = 0; i < h->nnodes; i++) {
    node *n = h->nodes[i];
    LOGV(2, &h->log, "Processing node", LSTR("node", n->name));
    size_t count;
    pod **pods = fw_node_pods(h, n, false, &count);
    pod_vec listed = {0};
    for (size_t k = 0; k < count; k++)
      if (rfp_pod_filter(h, a, pods[k]))
        pod_vec_push(h->scratch, &listed, pods[k]);
    if (evict_in_order(h, listed.items, listed.n, false))
      return 0;
  }
  return 0;
}

const plugin_desc plugin_remove_failed_pods = {
    .name = "RemoveFailedPods",
    .points = PLUGIN_DESCHEDULE,
    .args_size = sizeof(rfp_args),
    .fields = rfp_fields,
    .validate = rfp_validate,
    .set_defaults = rfp_set_defaults,
    .run = rfp_run,
};
