/* vmsafety.h - the VMSafety evictor plugin's one question for the rest of the program. */
#ifndef DS_PLUGINS_VMSAFETY_H
#define DS_PLUGINS_VMSAFETY_H

#include "../policy/policy.h"

#include <stdbool.h>

/* true when some profile's VMSafety keeps a cooldown, so moves must be recorded on VMIs */
bool vmsafety_records_moves(const policy *pol);

/* true when the profile's VMSafety keeps requireLiveMigration on (the default) */
bool vmsafety_requires_live_migration(const profile *pr);

/* Sets requireLiveMigration in every profile of a loaded policy. `check` turns it off to see
 * which launchers the policy's cycle would evict without the rule, as upstream's descheduler
 * would: the VMs whose eviction stops them are the runbook's trap. */
void vmsafety_set_require_live_migration(policy *pol, bool value);

#endif
