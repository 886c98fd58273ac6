/* toomanyrestarts.c - RemovePodsHavingTooManyRestarts (Deschedule), as upstream's
 * pkg/framework/plugins/removepodshavingtoomanyrestarts/toomanyrestarts.go.
 *
 * Evicts pods whose containers restarted at least podRestartThreshold times in total (init
 * containers counted too with includingInitContainers), optionally only while the pod is in
 * one of `states`: its phase (Running) or a container's waiting reason (CrashLoopBackOff).
 * Every pod bound to the node is looked at, whatever its phase.
 *
 * Order: nodes by name; on a node, most restarts first. Upstream's sort is unstable; equal
 * counts keep name order here. */
#include "../framework/podutil.h"
#include "common.h"
#include "registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  ns_filter namespaces;
  label_selector *label_selector;
  int32_t threshold;
  bool init_containers;
  str_list states;
} tmr_args;

static const args_field tmr_fields[] = {
    {"namespaces", AF_NAMESPACES, offsetof(tmr_args, namespaces)},
    {"labelSelector", AF_SELECTOR, offsetof(tmr_args, label_selector)},
    {"podRestartThreshold", AF_INT32, offsetof(tmr_args, threshold)},
    {"includingInitContainers", AF_BOOL, offsetof(tmr_args, init_containers)},
    {"states", AF_STRINGS, offsetof(tmr_args, states)},
    {NULL}};

static int tmr_validate(const void *vargs, dserr *err) {
  const tmr_args *a = vargs;
  errlist e = {0};
  validate_namespaces(&a->namespaces, &e);
  validate_label_selector(a->label_selector, &e);
  if (a->threshold < 1)
    errlist_add(&e, "invalid PodsHavingTooManyRestarts threshold");
  for (size_t i = 0; i < a->states.n; i++)
    if (strcmp(a->states.items[i], "Running") && strcmp(a->states.items[i], "CrashLoopBackOff")) {
      errlist_add(&e, "states must be one of [CrashLoopBackOff Running]");
      break;
    }
  return errlist_finish(&e, err);
}

static int64_t tmr_restarts_of(const container_status *cs, size_t n) {
  int64_t sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += cs[i].restarts;
  return sum;
}

static int64_t tmr_restarts(const tmr_args *a, const pod *p) {
  int64_t n = tmr_restarts_of(p->container_status, p->ncontainer_status);
  if (a->init_containers)
    n += tmr_restarts_of(pod_x(p)->init_status, pod_x(p)->ninit_status);
  return n;
}

static bool tmr_waiting_in(const str_list *states, const container_status *cs, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (cs[i].waiting_reason && str_list_contains(states, cs[i].waiting_reason))
      return true;
  return false;
}

static bool tmr_in_states(const tmr_args *a, const pod *p) {
  if (str_list_contains(&a->states, pod_phase_name(p->phase)))
    return true;
  if (tmr_waiting_in(&a->states, p->container_status, p->ncontainer_status))
    return true;
  return a->init_containers && tmr_waiting_in(&a->states, pod_x(p)->init_status, pod_x(p)->ninit_status);
}

static bool tmr_pod_filter(plugin_handle *h, const tmr_args *a, const pod *p) {
  if (!pod_passes_ns_and_labels(&a->namespaces, a->label_selector, p) || !fw_filter(h, p) ||
      !fw_pre_eviction_filter(h, p))
    return false;
  int64_t restarts = tmr_restarts(a, p);
  if (restarts < a->threshold) {
    if (LOG_ON(4)) {
      char msg[160], ref[512];
      snprintf(msg, sizeof msg,
               "ignoring pod for eviction due to: number of container restarts (%lld) not "
               "exceeding the threshold",
               (long long)restarts);
      LOGV(4, &h->log, msg, LSTR("pod", pod_ref(p, ref, sizeof ref)));
    }
    return false;
  }
  return !a->states.n || tmr_in_states(a, p);
}

/* A listed pod with its restart count; `pos` (listing position) makes qsort stable. */
typedef struct {
  pod *p;
  int64_t restarts;
  size_t pos;
} tmr_entry;

static int tmr_cmp_most_restarts(const void *x, const void *y) {
  const tmr_entry *a = x, *b = y;
  if (a->restarts != b->restarts)
    return a->restarts > b->restarts ? -1 : 1;
  return a->pos < b->pos ? -1 : a->pos > b->pos;
}

static int tmr_run(plugin_handle *h, const void *vargs, dserr *err) {
  (void)err;
  const tmr_args *a = vargs;
  for (size_t i = 0; i < h->nnodes; i++) {
    node *n = h->nodes[i];
    LOGV(2, &h->log, "Processing node", LSTR("node", n->name));
    size_t count, nlisted = 0;
    pod **pods = fw_node_pods(h, n, false, &count);
    tmr_entry *listed = ARENA_NEWN(h->scratch, tmr_entry, count ? count : 1);
    for (size_t k = 0; k < count; k++)
      if (tmr_pod_filter(h, a, pods[k])) {
        listed[nlisted] = (tmr_entry){pods[k], tmr_restarts(a, pods[k]), nlisted};
        nlisted++;
      }
    qsort(listed, nlisted, sizeof *listed, tmr_cmp_most_restarts);
    for (size_t k = 0; k < nlisted; k++) {
      evict_status st = fw_evict(h, listed[k].p, "");
      if (st == EVICT_LIMIT_TOTAL)
        return 0;
      if (st == EVICT_LIMIT_NODE)
        break;
      if (st != EVICT_OK && st != EVICT_VETOED)
        log_eviction_failed(h, listed[k].p);
    }
  }
  return 0;
}

const plugin_desc plugin_too_many_restarts = {
    .name = "RemovePodsHavingTooManyRestarts",
    .points = PLUGIN_DESCHEDULE,
    .args_size = sizeof(tmr_args),
    .fields = tmr_fields,
    .validate = tmr_validate,
    .run = tmr_run,
};
