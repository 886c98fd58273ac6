/* highnodeutilization.c - HighNodeUtilization (Balance), as upstream's
 * pkg/framework/plugins/nodeutilization/highnodeutilization.go.
 *
 * The opposite of LowNodeUtilization: it empties the least used nodes so that the cluster
 * autoscaler can remove them. A node is underutilized when every resource in `thresholds` is
 * at or below its percentage (cordoned nodes included: draining them is the point); every
 * other schedulable node is a target that receives the pods, with its whole capacity as the
 * limit. Pods leave the emptiest underutilized node first, and stop as soon as any resource
 * of the targets' combined free capacity reaches zero. The node arithmetic and the eviction
 * loop are the shared engine in nodeutilization.c.
 *
 * With `evictionModes: [OnlyThresholdingResources]` only pods that request (in a regular or
 * init container) one of the threshold resources are candidates, so pods that cannot change
 * the measured utilization are left alone.
 *
 * Ordering choices where upstream's is random: nodes are classified and logged in name order
 * (underutilized group first, then targets, as upstream logs the groups); sources with equal
 * usage sums keep name order; equal-priority pods keep name order. */
#include "../framework/framework.h"
#include "common.h"
#include "nodeutilization.h"
#include "registry.h"

#include <stdlib.h>
#include <string.h>

#define HNU_MODE_ONLY_THRESHOLDING "OnlyThresholdingResources"

typedef struct {
  pct_map thresholds;
  int64_t number_of_nodes;
  str_list eviction_modes;
  ns_filter evictable_namespaces;
} hnu_args;

static const args_field hnu_fields[] = {
    {"thresholds", AF_PCT_MAP, offsetof(hnu_args, thresholds)},
    {"numberOfNodes", AF_INT64, offsetof(hnu_args, number_of_nodes)},
    {"evictionModes", AF_STRINGS, offsetof(hnu_args, eviction_modes)},
    {"evictableNamespaces", AF_NAMESPACES, offsetof(hnu_args, evictable_namespaces)},
    {NULL}};

/* First failing check wins (no aggregation), threshold texts without a prefix. */
static int hnu_validate(const void *vargs, dserr *err) {
  const hnu_args *a = vargs;
  if (a->evictable_namespaces.include.n)
    return dserr_set(err, "only Exclude namespaces can be set, inclusion is not supported");
  if (nu_validate_thresholds(&a->thresholds, err) < 0)
    return -1;
  for (size_t i = 0; i < a->eviction_modes.n; i++)
    if (strcmp(a->eviction_modes.items[i], HNU_MODE_ONLY_THRESHOLDING) != 0)
      return dserr_set(err, "invalid eviction mode %s", a->eviction_modes.items[i]);
  return 0;
}

/* The pod names a threshold resource in some container's requests (presence, not value). */
static bool hnu_requests_threshold_resource(const hnu_args *a, const pod *p) {
  for (size_t i = 0; i < p->nrequest_keys; i++)
    for (size_t t = 0; t < a->thresholds.n; t++)
      if (strcmp(p->request_keys[i], a->thresholds.keys[t]) == 0)
        return true;
  return false;
}

static bool hnu_pod_filter(plugin_handle *h, const void *ctx, const pod *p) {
  const hnu_args *a = ctx;
  if (!fw_filter(h, p))
    return false;
  if (str_list_contains(&a->eviction_modes, HNU_MODE_ONLY_THRESHOLDING) &&
      !hnu_requests_threshold_resource(a, p))
    return false;
  return true;
}

/* C(node): every resource of the targets' combined free capacity is still positive. */
static bool hnu_continue(const nu_resources *r, const nu_node *src, const int64_t *avail) {
  (void)src;
  for (size_t j = 0; j < r->n; j++)
    if (avail[j] <= 0)
      return false;
  return true;
}

static int hnu_run(plugin_handle *h, const void *vargs, dserr *err) {
  const hnu_args *a = vargs;
  nu_resources r;
  nu_resources_init(&r, &a->thresholds, false);
  size_t n = h->nnodes;
  /* upstream's HighNodeUtilization always uses requests (it has no metricsUtilization) */
  nu_node *nodes = nu_compute(h, &r, h->nodes, n, NULL, &n, err);
  if (!nodes)
    return dserr_prefix(err, "error getting node usage");

  nu_node **under = ARENA_NEWN(h->scratch, nu_node *, n ? n : 1);
  nu_node **targets = ARENA_NEWN(h->scratch, nu_node *, n ? n : 1);
  size_t nunder = 0, ntargets = 0;
  /* targets may take up to their whole capacity: a cap from an empty threshold map is
   * the full capacity of every resource (0 where the node lacks the resource) */
  const pct_map full = {0};
  for (size_t i = 0; i < n; i++) {
    nu_node *nn = &nodes[i];
    nu_set_caps(nn, &r, &full);
    if (nu_below(&r, nn, &a->thresholds))
      under[nunder++] = nn;
    else if (nn->node->unschedulable)
      LOGV(2, &h->log, "Node is unschedulable", LSTR("node", nn->node->name));
    else
      targets[ntargets++] = nn;
  }
  const char *thr = nu_thresholds_text(h, &a->thresholds, NULL);
  for (size_t i = 0; i < nunder; i++) {
    nu_log_classified(h, &r, under[i], "underutilized");
    nu_note_why(h, &r, under[i], &a->thresholds, NULL, thr, "underutilized");
  }
  for (size_t i = 0; i < ntargets; i++) {
    nu_log_classified(h, &r, targets[i], "overutilized");
    nu_note_why(h, &r, targets[i], &a->thresholds, NULL, thr, "overutilized");
  }
  nu_log_criteria(h, "Criteria for a node below target utilization", &a->thresholds);
  LOGV(1, &h->log, "Number of underutilized nodes", LUINT("totalNumber", nunder));

  if (nu_nothing_to_do(h, nunder, n, a->number_of_nodes))
    return 0;
  if (ntargets == 0) {
    LOGV(1, &h->log, "No node is available to schedule the pods, nothing to do here");
    return 0;
  }
  /* sources: the emptiest first */
  nu_sort_by_usage(h, &r, under, nunder, false);
  /* no per-node limit: HighNodeUtilization has no evictionLimits */
  nu_plan plan = {.res = &r,
                  .sources = under,
                  .nsources = nunder,
                  .dests = targets,
                  .ndests = ntargets,
                  .cont = hnu_continue,
                  .excluded = &a->evictable_namespaces,
                  .pod_filter = hnu_pod_filter,
                  .filter_ctx = a};
  return nu_evict(h, &plan, err);
}

const plugin_desc plugin_high_node_utilization = {
    .name = "HighNodeUtilization",
    .points = PLUGIN_BALANCE,
    .args_size = sizeof(hnu_args),
    .fields = hnu_fields,
    .validate = hnu_validate,
    .run = hnu_run,
};
