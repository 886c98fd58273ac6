/* vmsafety.h - the VMSafety evictor plugin's one question for the rest of the program. */
#ifndef DS_PLUGINS_VMSAFETY_H
#define DS_PLUGINS_VMSAFETY_H

#include "../policy/policy.h"

#include <stdbool.h>

/* true when some profile's VMSafety keeps a cooldown, so moves must be recorded on VMIs */
bool vmsafety_records_moves(const policy *pol);

#endif
