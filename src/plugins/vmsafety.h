/* vmsafety.h - the VMSafety evictor plugin's one question for the rest of the program. */
#ifndef DS_PLUGINS_VMSAFETY_H
#define DS_PLUGINS_VMSAFETY_H

#include "../policy/policy.h"

#include <stdbool.h>
#include <stdint.h>

/* How a profile's balance plugins move VMs, from its VMSafety args (docs/vm-safety.md):
 * all off unless the policy sets them. */
typedef struct {
  bool targeted;            /* targetedMigration: choose each launcher's destination */
  uint64_t max_inbound;     /* maxInboundPerNode: targeted moves to one node per cycle */
  bool check_improvement;  /* minImprovement is set */
  double min_improvement;  /* minImprovement: a move must take more than these percentage
                              points off the plugin's imbalance (the standard deviation of its
                              nodes' usage percentages) */
  int64_t overutilized_for_s; /* overutilizedFor: a node is a source only once it has been
                                 overutilized this long (seconds); 0: off */
} vmsafety_moves;

/* The moves configuration of profile pr (zeroes when it has no VMSafety). */
void vmsafety_moves_of(const profile *pr, vmsafety_moves *out);

/* true when some profile's VMSafety keeps a cooldown, so moves must be recorded on VMIs */
bool vmsafety_records_moves(const policy *pol);

/* true when some profile's VMSafety keeps overutilizedFor: the live run then writes the
 * nodes' NODE_OVER_SINCE_ANNOTATION after each cycle */
bool vmsafety_keeps_history(const policy *pol);

/* true when the profile's VMSafety keeps requireLiveMigration on (the default) */
bool vmsafety_requires_live_migration(const profile *pr);

/* Sets requireLiveMigration in every profile of a loaded policy. `check` turns it off to see
 * which launchers the policy's cycle would evict without the rule, as upstream's descheduler
 * would: the VMs whose eviction stops them are the runbook's trap. */
void vmsafety_set_require_live_migration(policy *pol, bool value);

#endif
