/* simsink.h - the eviction sink of `descheduler simulate`.
 *
 * Nothing leaves the process: an eviction is recorded and the pod is gone for the rest of
 * the cycle, as upstream's dry run does. For a KubeVirt virt-launcher pod the sink answers
 * what KubeVirt's eviction webhook would (vm.h, kubevirt_view) from the VMI and KubeVirt CR in
 * the snapshot: a live-migratable VM makes a 429 "Eviction triggered evacuation of VMI ...",
 * which the framework turns into a request in background (with EvictionsInBackground) or an
 * eviction failure (without), exactly as it would against a live cluster. When the snapshot
 * holds no VMI for a launcher, the KubeVirt CR's default strategy is used (LiveMigrate when
 * the snapshot has no CR either) and the VM is taken as live-migratable; the sink keeps the
 * list of such launchers so the plan can say which answers were assumed. A targeted move
 * (eviction_request.to_node) is answered as KubeVirt's migration-create webhook would: created
 * (SINK_MIGRATING) for a running, live-migratable VMI with no migration in flight. The VMIs
 * the sink marked for evacuation stay marked for the rest of the cycle, as KubeVirt marks them:
 * a second eviction of the same launcher is answered "Evacuation in progress: ...", which is
 * not a new evacuation. */
#ifndef DS_SIMSINK_H
#define DS_SIMSINK_H

#include "../framework/framework.h"
#include "vm.h"

typedef struct {
  eviction_sink base;
  const model *m;
  arena *mem;                  /* the flights index, built at the first targeted move */
  kubevirt_flights *flights;
  size_t nassumed, cap;
  const pod **assumed; /* launchers answered without their VMI, in request order (heap) */
  size_t nmarked, cap_marked;
  const pod **marked; /* launchers whose eviction started an evacuation this cycle (heap) */
} sim_sink;

void sim_sink_init(sim_sink *s, const model *m);
void sim_sink_free(sim_sink *s);

/* KubeVirt's webhook decision for a launcher pod (exposed for tests and `check`):
 * returns SINK_EVICTED when KubeVirt lets the eviction through, else SINK_TOO_MANY with its
 * message as the API server relays it. Non-launcher pods give SINK_EVICTED. */
sink_result kubevirt_webhook_decision(const model *m, const pod *p, char *message, size_t cap);

#endif
