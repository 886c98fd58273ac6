/* main.c - the `descheduler` command: the commands table and dispatch.
 *
 * With no subcommand (only flags) the program is upstream's descheduler against a cluster
 * (cmd_run.c). Every subcommand is one row of commands[] below (git's commands[] in git.c is
 * the model): the row dispatches it, and `descheduler --help` lists the rows, so a command
 * cannot be run without being listed or listed without being run. `descheduler help COMMAND`
 * is `descheduler COMMAND --help`. */
#include "cli.h"

#include "../util/strbuf.h"

#include <stdio.h>
#include <string.h>

static int cmd_help(int argc, char **argv);

static const cli_command commands[] = {
    {"simulate", cmd_simulate,
     "--policy-config-file FILE --snapshot FILE [flags]\n"
     "--kubedescheduler FILE --snapshot FILE [flags]\n"
     "(--policy-config-file | --kubedescheduler) FILE --from-cluster [flags]",
     "run one descheduling cycle on a saved (or the live) cluster state and print the plan"},
    {"explain", cmd_explain,
     "NAMESPACE/NAME --snapshot FILE --policy-config-file FILE [flags]\n"
     "NAMESPACE/NAME --snapshot FILE --kubedescheduler FILE [flags]\n"
     "NAMESPACE/NAME --from-cluster --policy-config-file FILE [flags]",
     "why that cycle evicted a pod, or did not"},
    {"profile", cmd_profile,
     "render [--kubedescheduler FILE | --kubedescheduler-ref NS/NAME]\n"
     "       [--snapshot FILE | --kubeconfig FILE [--context NAME]] [-o text|json|yaml]",
     "render: the policy and flags an OpenShift KubeDescheduler CR stands for"},
    {"soft-taint", cmd_softtaint,
     "(--policy-config-file FILE | --kubedescheduler FILE |\n"
     " --kubedescheduler-ref NAMESPACE/NAME) [flags]",
     "keep PreferNoSchedule taints on hot nodes (actual utilization)"},
    {"check", cmd_check,
     "[--kubeconfig FILE] [--context NAME] [--namespace NS] [-o text|json|yaml]",
     "runbook: can this installation move VMs without stopping any?"},
    {"verify", cmd_verify,
     "--vmi NAMESPACE/NAME --from NODE [--uid UID] [--timeout D] [--log FILE] [flags]",
     "runbook: did the requested move of a VM really happen?"},
    {"pause", cmd_pause,
     "[--namespace NS] [--kubeconfig FILE] [--context NAME] [--dry-run] [-o text|json|yaml]",
     "runbook: suspend the descheduler's CronJob or Deployment"},
    {"resume", cmd_resume,
     "[--namespace NS] [--kubeconfig FILE] [--context NAME] [--dry-run] [-o text|json|yaml]",
     "runbook: undo pause, once no VM migration is running"},
    {"version", cmd_version, "[-o text|json|yaml]", "print the version"},
    {"completion", cmd_completion, "bash|zsh", "print a shell completion script"},
    {"help", cmd_help, "[COMMAND]", "help about the descheduler or one of its commands"},
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

const cli_command *cli_commands(size_t *n) {
  *n = NCOMMANDS;
  return commands;
}

const cli_command *cli_command_find(const char *name) {
  for (size_t i = 0; i < NCOMMANDS; i++)
    if (!strcmp(commands[i].name, name))
      return &commands[i];
  return NULL;
}

void cli_usage_head(FILE *out, const char *name) {
  const cli_command *c = cli_command_find(name);
  const char *s = c ? c->synopsis : "[flags]";
  for (bool first = true; *s; first = false) {
    size_t n = strcspn(s, "\n");
    /* a line that starts with a blank continues the one before it */
    if (*s == ' ')
      fprintf(out, "       %*s%.*s\n", (int)strlen(name) + 13, "", (int)n, s);
    else
      fprintf(out, "%s descheduler %s %.*s\n", first ? "Usage:" : "      ", name, (int)n, s);
    s += n + (s[n] == '\n');
  }
}

void cli_commands_list(FILE *out) {
  fprintf(out, "Available Commands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++)
    fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].help);
}

void cli_exit_status(FILE *out, const char *one) {
  fprintf(out, "\nExit status:\n  0  success\n");
  if (one) {
    fprintf(out, "  1  ");
    for (const char *c = one; *c; c++)
      if (*c == '\n')
        fprintf(out, "\n     ");
      else
        fputc(*c, out);
    fputc('\n', out);
  }
  fprintf(out, "  2  bad input (a flag, a file, the policy, a snapshot, the kubeconfig), said before\n"
               "     anything is contacted\n");
}

/* `descheduler help [COMMAND [SUBCOMMAND...]]`: the command's own --help. */
static int cmd_help(int argc, char **argv) {
  if (argc < 3 || !strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) {
    char *help[] = {argv[0], "--help", NULL};
    return cmd_run(2, help);
  }
  const cli_command *c = cli_command_find(argv[2]);
  if (!c) {
    fprintf(stderr, "descheduler help: unknown command \"%s\"\n", argv[2]);
    return EXIT_CONFIG;
  }
  /* argv[2..] then --help: `help profile render` is `profile render --help` */
  char *args[64];
  int n = 0;
  args[n++] = argv[0];
  for (int i = 2; i < argc && n < 62; i++)
    args[n++] = argv[i];
  args[n++] = "--help";
  args[n] = NULL;
  return c->run(n, args);
}

static void unknown_command(const char *cmd) {
  fprintf(stderr, "descheduler: unknown command \"%s\"\n", cmd);
  const char *names[NCOMMANDS];
  for (size_t i = 0; i < NCOMMANDS; i++)
    names[i] = commands[i].name;
  const char *near = str_nearest(cmd, names, NCOMMANDS);
  if (near)
    fprintf(stderr, "did you mean %s?\n", near);
  fprintf(stderr, "Run 'descheduler --help' for the commands.\n");
}

int main(int argc, char **argv) {
  if (argc >= 2 && argv[1][0] != '-') {
    const cli_command *c = cli_command_find(argv[1]);
    if (!c) {
      unknown_command(argv[1]);
      return EXIT_CONFIG;
    }
    return c->run(argc, argv);
  }
  return cmd_run(argc, argv);
}
