/* flags.h - command-line flags as upstream's (pflag) accepts them.
 *
 * `--name=value`, `--name value`, single-dash forms for one-letter flags (`-v 3`, `-o json`,
 * and kubectl's attached `-v3`, `-ojson`), and `_` accepted for `-` in names. Boolean flags
 * take no value or `=true|false`. Each subcommand declares a table; flags_parse fills the
 * targets and collects positional arguments. Errors are one line naming the flag.
 *
 * A flag's default is written once: as the value its target holds when flags_parse starts.
 * The parser keeps that value as text (pflag's DefValue) and --help shows it as pflag does:
 * `(default 10258)`, `(default text)` (strings unquoted, see flags.c), durations as Go's
 * Duration.String() (`2m17s`), and nothing for a zero value (false, "", 0), unless the flag
 * says what its zero value means (unset_text: `(default every namespace)`). */
#ifndef DS_FLAGS_H
#define DS_FLAGS_H

#include "../util/err.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef enum { FLAG_BOOL, FLAG_STRING, FLAG_INT, FLAG_DURATION, FLAG_FLOAT, FLAG_STRINGS } flag_kind;

/* Target of a FLAG_STRINGS flag: every occurrence appends its value (argv strings). */
#define FLAG_STRINGS_MAX 16
typedef struct {
  size_t n;
  const char *items[FLAG_STRINGS_MAX];
} flag_strings;

#define FLAG_DEFAULT_MAX 96

typedef struct {
  const char *name;      /* long name without dashes */
  const char *shorthand; /* one letter or NULL */
  flag_kind kind;
  void *target; /* bool*, const char**, long long*, int64_t* (nanoseconds), double*,
                   flag_strings* */
  const char *help;
  /* What the target's zero value (false, NULL or "", 0) means, shown as its default in
   * --help ("every namespace", "the current time"); NULL: a zero value shows no default. */
  const char *unset_text;
  /* set by the parser */
  bool seen;
  char defval[FLAG_DEFAULT_MAX]; /* the default as --help shows it; "" for none */
} flag_def;

/* Parses argv[start..argc). Positional args are stored into positional (up to max_pos).
 * Returns 0, 1 when --help/-h was given, or -1 with err. */
int flags_parse(flag_def *defs, int argc, char **argv, int start, const char **positional,
                int max_pos, int *npos, dserr *err);
/* The flags, one per line, pflag's layout. Only after flags_parse (which records the
 * defaults). */
void flags_usage(FILE *out, const flag_def *defs);

/* A subcommand's flags, `descheduler <cmd> [flags]`, with no positional argument: parses
 * argv[2..argc). Returns FLAGS_RUN when the command should go on; otherwise the process exit
 * code: 0 after --help printed usage(stdout, usage_ctx, defs), 2 after printing
 * `descheduler <cmd>: <why>` to stderr. */
#define FLAGS_RUN (-1)
typedef void (*flags_usage_fn)(FILE *out, const void *usage_ctx, const flag_def *defs);
int flags_parse_command(const char *cmd, flag_def *defs, int argc, char **argv,
                        flags_usage_fn usage, const void *usage_ctx);
/* The same with up to max_pos positional arguments, stored into pos (*npos of them). */
int flags_parse_command_args(const char *cmd, flag_def *defs, int argc, char **argv,
                             flags_usage_fn usage, const void *usage_ctx, const char **pos,
                             int max_pos, int *npos);
const flag_def *flags_find(const flag_def *defs, const char *name);

/* ---- the flags several commands share, declared once ---- */

/* -o/--output: the formats a command prints (cli/output.h) */
#define FLAG_DEF_OUTPUT(target)                                                                    \
  {"output", "o", FLAG_STRING, (target), "output format: text, json or yaml", NULL}
/* --kubeconfig of the commands that talk to a cluster */
#define FLAG_DEF_KUBECONFIG(target)                                                                \
  {"kubeconfig", NULL, FLAG_STRING, (target), "kubeconfig file; empty = in-cluster config", NULL}
/* --kubeconfig and --context of the workstation commands (check, verify, pause, resume, simulate
 * --from-cluster, profile render, soft-taint), which
 * find the kubeconfig as kubectl does (kube_config_load_kubectl) */
#define FLAG_DEF_KUBECONFIG_KUBECTL(target)                                                        \
  {"kubeconfig", NULL, FLAG_STRING, (target),                                                      \
   "kubeconfig file; empty = as kubectl: $KUBECONFIG (a ':' list, merged), then ~/.kube/config, "  \
   "then the in-cluster config",                                                                   \
   NULL}
#define FLAG_DEF_CONTEXT(target)                                                                   \
  {"context", NULL, FLAG_STRING, (target), "the kubeconfig context to use",                       \
   "the kubeconfig's current-context"}
/* -v/--v: klog's verbosity */
#define FLAG_DEF_VERBOSITY(target)                                                                 \
  {"v", "v", FLAG_INT, (target), "log verbosity (klog levels; logs go to stderr)", NULL}

/* --feature-gates: feature_gates_parse (policy/featuregates.h, shared with `check`, which reads
 * a workload's arguments). */
#include "../policy/featuregates.h"

#endif
