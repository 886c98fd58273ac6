/* cli.h - subcommands. Each returns the process exit code. */
#ifndef DS_CLI_H
#define DS_CLI_H

#include <stdbool.h>
#include <stdio.h>

#define DS_VERSION "v0.36.0-c.1"
#define EXIT_CONFIG 2 /* bad flag, policy, snapshot or kubeconfig */

int cmd_simulate(int argc, char **argv);
int cmd_explain(int argc, char **argv);

/* simulate.c: the simulate cycle; with explain, the first positional argument names a pod and
 * its record is printed instead of the plan (explain.c). `who` prefixes messages. */
int simulate_run(int argc, char **argv, const char *who, bool explain);
int cmd_version(int argc, char **argv);
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

/* The client of a runbook command from --kubeconfig (NULL or "": in-cluster config). On
 * failure prints `descheduler <cmd>: <why>` and returns NULL (exit EXIT_CONFIG). The caller
 * frees both with kube_client_free and kube_config_free. */
#include "../kube/client.h"
kube_client *cli_connect(const char *cmd, const char *kubeconfig, kube_config **cfg);

#endif
