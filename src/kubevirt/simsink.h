/* simsink.h - the eviction sink of `descheduler simulate`.
 *
 * Nothing leaves the process: an eviction is recorded and the pod is gone for the rest of
 * the cycle, as upstream's dry run does. For a KubeVirt virt-launcher pod the sink answers
 * what KubeVirt's eviction webhook would (kubevirt.md §3.2) from the VMI and KubeVirt CR in
 * the snapshot: a live-migratable VM makes a 429 "Eviction triggered evacuation of VMI ...",
 * which the framework turns into a request in background (with EvictionsInBackground) or an
 * eviction failure (without), exactly as it would against a live cluster. When the snapshot
 * holds no VMI for a launcher, the VM is taken as live-migratable (LiveMigrate). */
#ifndef DS_SIMSINK_H
#define DS_SIMSINK_H

#include "../framework/framework.h"

typedef struct {
  eviction_sink base;
  const model *m;
} sim_sink;

void sim_sink_init(sim_sink *s, const model *m);

/* KubeVirt's webhook decision for a launcher pod (exposed for tests and `check`):
 * returns SINK_EVICTED when KubeVirt lets the eviction through, else SINK_TOO_MANY with its
 * message. Non-launcher pods give SINK_EVICTED. */
sink_result kubevirt_webhook_decision(const model *m, const pod *p, char *message, size_t cap);

#endif
