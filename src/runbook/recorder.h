/* recorder.h - live mode: remember on the VMI that this descheduler asked KubeVirt to move it.
 *
 * An eviction sink that wraps the live one. When KubeVirt answers an eviction by starting an
 * evacuation (429 "Eviction triggered evacuation of VMI ..."), or accepts a targeted
 * migration (SINK_MIGRATING), it adds the time to the VMI's
 * annotation VMI_MOVES_ANNOTATION with a JSON merge patch, so the VMSafety cooldown holds
 * across cycles and across restarts of the descheduler (a Deployment's new pod, the next
 * CronJob run). A patch that fails is logged and does not undo or fail the eviction. Nothing is
 * written in dry-run mode. */
#ifndef DS_RUNBOOK_RECORDER_H
#define DS_RUNBOOK_RECORDER_H

#include "../framework/framework.h"
#include "../kube/client.h"

typedef struct {
  eviction_sink base;
  eviction_sink *inner; /* borrowed: the sink that really evicts */
  kube_client *client;  /* borrowed */
  const model *m;       /* borrowed: the VMIs' current annotations */
  int64_t now;
  size_t recorded, failed; /* patches made and failed (for tests and logs) */
} move_recorder;

void move_recorder_init(move_recorder *r, eviction_sink *inner, kube_client *client,
                        const model *m, int64_t now);

#endif
