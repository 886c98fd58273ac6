/* moves.h - where the pods a plan moves will land.
 *
 * A targeted move (docs/vm-safety.md) goes to the node the cycle chose. Otherwise the
 * descheduler only evicts, and the scheduler (or, for a VM, KubeVirt's migration controller)
 * picks the destination: for the report, each such pod is placed, in plan order, on the
 * node the default scheduler would most likely choose among those where it fits as NodeFit
 * checks it: Ready, schedulable, the pod's nodeSelector and required node affinity match, the
 * node's NoSchedule/NoExecute taints are tolerated, and its requests fit in what the node has
 * left (allocatable minus the requests of the pods staying there and of the pods placed there
 * earlier in the plan). Among those, the one with the most memory left, then cpu, then name
 * (the scheduler's LeastAllocated scoring, simplified). Never the pod's own node. Pure: reads
 * the model after the cycle (evicted and leaving pods no longer count on their node). */
#ifndef DS_REPORT_MOVES_H
#define DS_REPORT_MOVES_H

#include "../framework/framework.h"

typedef struct {
  const pod *pod;
  const node *from;
  const node *to; /* NULL when no node fits */
  bool chosen;    /* to is the node of a targeted move, not the likely one */
  const char *why_none; /* static text when to is NULL */
} planned_move;

/* One entry per eviction, request or evacuation of res, in order. Caller frees the array. */
planned_move *report_moves(const model *m, const fw_result *res, size_t *count);

#endif
