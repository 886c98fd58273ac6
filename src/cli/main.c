/* main.c - the `descheduler` command: subcommand dispatch.
 *
 * With no subcommand (only flags) the program is upstream's descheduler against a cluster.
 * Subcommands: simulate, explain, version, `profile render`, soft-taint, and the VM rebalancing
 * runbook's check, verify, pause and resume. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static void usage(FILE *out) {
  fprintf(out,
          "descheduler - a Kubernetes descheduler for rebalancing KubeVirt virtual machines\n\n"
          "Usage:\n"
          "  descheduler simulate --policy-config-file FILE --snapshot FILE [flags]\n"
          "  descheduler simulate --kubedescheduler FILE --snapshot FILE [flags]\n"
          "                                 run one descheduling cycle on a saved cluster state\n"
          "  descheduler explain NAMESPACE/NAME --policy-config-file FILE --snapshot FILE [flags]\n"
          "                                 why the cycle evicted that pod, or did not\n"
          "  descheduler profile render --kubedescheduler FILE [--snapshot FILE] [-o yaml|json]\n"
          "                                 the policy an OpenShift KubeDescheduler CR stands for\n"
          "  descheduler soft-taint --policy-config-file FILE [--mode Automatic|Predictive]\n"
          "                                 keep soft taints on hot nodes (actual utilization)\n"
          "  descheduler version            print the version\n"
          "  descheduler [flags]            run against a cluster, as upstream's descheduler\n"
          "  descheduler --kubedescheduler FILE | --kubedescheduler-ref NS/NAME [flags]\n"
          "                                 run against a cluster with the policy a CR renders\n"
          "The VM rebalancing runbook, against a cluster (--kubeconfig, else in-cluster config):\n"
          "  descheduler check              can this installation move VMs without stopping any?\n"
          "  descheduler verify --vmi NS/NAME --from NODE [--uid UID] [--log FILE]\n"
          "                                 did the requested move really happen?\n"
          "  descheduler pause | resume     suspend the descheduler; resume once no migration runs\n\n"
          "Run 'descheduler --help' for the cluster flags, 'descheduler COMMAND --help' for a\n"
          "command's flags.\n");
}

int main(int argc, char **argv) {
  if (argc >= 2) {
    const char *cmd = argv[1];
    if (!strcmp(cmd, "simulate"))
      return cmd_simulate(argc, argv);
    if (!strcmp(cmd, "explain"))
      return cmd_explain(argc, argv);
    if (!strcmp(cmd, "version"))
      return cmd_version(argc, argv);
    if (!strcmp(cmd, "soft-taint"))
      return cmd_softtaint(argc, argv);
    if (!strcmp(cmd, "check"))
      return cmd_check(argc, argv);
    if (!strcmp(cmd, "verify"))
      return cmd_verify(argc, argv);
    if (!strcmp(cmd, "pause"))
      return cmd_pause(argc, argv);
    if (!strcmp(cmd, "resume"))
      return cmd_resume(argc, argv);
    if (!strcmp(cmd, "profile"))
      return cmd_profile(argc, argv);
    if (!strcmp(cmd, "help")) {
      usage(stdout);
      return 0;
    }
    if (cmd[0] != '-') {
      fprintf(stderr, "descheduler: unknown command \"%s\"\n\n", cmd);
      usage(stderr);
      return EXIT_CONFIG;
    }
  }
  return cmd_run(argc, argv);
}
