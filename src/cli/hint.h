/* hint.h - one line of advice under an upstream message that says what went wrong in Go's
 * words but not how to fix it.
 *
 * The message itself stays upstream's, verbatim (a drop-in replacement keeps its errors); the
 * advice is a line of its own after it, on stderr, so that what greps for upstream's text still
 * finds it. Recognized: a plugin name that is not registered (`non-existing plugins:
 * map[LowNodeUtilisation:{}]`, `plugin X in pluginConfig not registered`): the registered name
 * it most likely misspells, or the extension points a registered plugin serves; a
 * descheduler/v1alpha1 policy: since when upstream no longer reads it and what to write
 * instead; and the values of the --tls-* flags (obs/tlsconfig.h's tls_flag_hint). The advice
 * is found in the message's text, which is upstream's and fixed (tests pin it): the policy
 * loader that writes it (layer 6) sits below the plugin registry (layer 9) and cannot name
 * the registered plugins itself. */
#ifndef DS_CLI_HINT_H
#define DS_CLI_HINT_H

#include "../util/strbuf.h"

#include <stdbool.h>

/* The advice for msg into out (one line, no newline); false when there is none. */
bool cli_hint(const char *msg, strbuf *out);

/* Prints `<who>: <msg>` and, when cli_hint has one, the advice on the next line, to stderr. */
void cli_error(const char *who, const char *msg);

#endif
