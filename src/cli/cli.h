/* cli.h - the commands table (main.c) and what the subcommands share. Each command returns
 * the process exit code. */
#ifndef DS_CLI_H
#define DS_CLI_H

#include <stdbool.h>
#include <stdio.h>

#define DS_VERSION "v0.36.0-c.1"

/* The exit-code rule every command keeps (docs/errors.md): 0 success; EXIT_FAILED when the
 * cluster could not be read or a check failed; EXIT_CONFIG for bad input (a flag, a file, the
 * policy, a snapshot, the kubeconfig), said before anything is contacted. */
#define EXIT_FAILED 1
#define EXIT_CONFIG 2

/* How a user saves the cluster state simulate reads: one string for --help, the messages and
 * the docs (tests/cli/t0009 checks that docs/install.md, docs/simulate.md and
 * docs/utilization.md give exactly this command). */
#define CLI_SNAPSHOT_COMMAND                                                                     \
  "kubectl get nodes,pods,namespaces,pdb,priorityclasses,pvc,vmi,vmim,kubevirt -A -o json"

/* One row of the commands table: `descheduler NAME ...` runs run(argc, argv) with argv[1] the
 * name; `descheduler --help` lists name and help; synopsis is what follows `descheduler NAME`
 * in the command's usage (alternatives on lines of their own). */
typedef struct {
  const char *name;
  int (*run)(int argc, char **argv);
  const char *synopsis;
  const char *help;
} cli_command;

/* The whole table (*n rows), in the order --help lists it. */
const cli_command *cli_commands(size_t *n);
/* The row of a command, or NULL. */
const cli_command *cli_command_find(const char *name);
/* `Usage: descheduler NAME SYNOPSIS` (a line per alternative) of a command of the table. */
void cli_usage_head(FILE *out, const char *name);
/* The table, as `descheduler --help` lists it ("Available Commands:"). */
void cli_commands_list(FILE *out);
/* The command's exit codes in its --help: `Exit status: 0 ...; 1 <one>; 2 bad input (...)`.
 * one NULL: the command never exits 1. */
void cli_exit_status(FILE *out, const char *one);

int cmd_simulate(int argc, char **argv);
int cmd_explain(int argc, char **argv);

/* cmd_simulate.c: the simulate cycle; with explain, the first positional argument names a pod
 * and its record is printed instead of the plan (cmd_explain.c). `who` prefixes messages. */
int simulate_run(int argc, char **argv, const char *who, bool explain);
int cmd_version(int argc, char **argv);
/* `descheduler completion bash|zsh` (cmd_completion.c) */
int cmd_completion(int argc, char **argv);
/* What `descheduler version` prints, as text (also `descheduler --version`). */
void version_print_text(FILE *out);
/* `profile render`: a KubeDescheduler CR as a DeschedulerPolicy */
int cmd_profile(int argc, char **argv);
/* upstream's command: the descheduler against a cluster */
int cmd_run(int argc, char **argv);
/* the soft-tainter: PreferNoSchedule taints from actual utilization */
int cmd_softtaint(int argc, char **argv);
/* the runbook's commands (check.c, verify.c, pause.c) */
int cmd_check(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_pause(int argc, char **argv);
int cmd_resume(int argc, char **argv);

/* The client of a runbook command from --kubeconfig and --context, found as kubectl finds
 * them (kube_config_load_kubectl). On failure prints `descheduler <cmd>: <why>` and returns
 * NULL (exit EXIT_CONFIG). The caller frees both with kube_client_free and kube_config_free. */
#include "../kube/client.h"
kube_client *cli_connect(const char *cmd, const char *kubeconfig, const char *context,
                         kube_config **cfg);

#endif
