/* cli.h - subcommands. Each returns the process exit code. */
#ifndef DS_CLI_H
#define DS_CLI_H

#define DS_VERSION "v0.36.0-c.1"
#define EXIT_CONFIG 2 /* bad flag, policy, snapshot or kubeconfig */

int cmd_simulate(int argc, char **argv);
int cmd_version(int argc, char **argv);
/* upstream's command: the descheduler against a cluster */
int cmd_run(int argc, char **argv);
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
