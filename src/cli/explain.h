/* explain.h - what cmd_simulate.c calls for `descheduler explain` (see cmd_explain.c). */
#ifndef DS_CLI_EXPLAIN_H
#define DS_CLI_EXPLAIN_H

#include "../framework/decisions.h"
#include "flags.h"
#include "output.h"

#include <stdio.h>

void explain_usage(FILE *out, const flag_def *defs);
/* Prints the record of pod ref ("ns/name") in format f; 1 with a message naming `who` when it
 * is not in the model, else 0. */
int explain_print(const model *m, const decisions *dec, const char *ref, const char *who,
                  output_format f);

#endif
