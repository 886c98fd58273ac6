/* featuregates.h - upstream's --feature-gates, and Go's boolean syntax.
 *
 * Parsed by the command line (cli/) and by `check`, which reads the flags a CronJob or
 * Deployment passes to the descheduler; so both read `EvictionsInBackground=true` the same
 * way upstream's component-base does. */
#ifndef DS_FEATUREGATES_H
#define DS_FEATUREGATES_H

#include "../util/err.h"

#include <stdbool.h>

/* Go's strconv.ParseBool: 1 t T true TRUE True / 0 f F false FALSE False. -1 otherwise. */
int go_parse_bool(const char *v, bool *out);

/* Feature gates (--feature-gates K=V,...): EvictionsInBackground (alpha, off), AllAlpha,
 * AllBeta. Unknown keys give upstream's `unrecognized feature gate: <k>`. */
typedef struct {
  bool evictions_in_background;
} feature_gates;
int feature_gates_parse(const char *text, feature_gates *out, dserr *err);

#endif
