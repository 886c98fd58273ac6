/* cmd_version.c - `descheduler version`, shaped like upstream's line. */
#include "cli.h"

#include <stdio.h>

int cmd_version(int argc, char **argv) {
  (void)argc;
  (void)argv;
  printf("Descheduler version {Major:0 Minor:36 GitVersion:%s GitBranch: GitSha1: BuildDate: "
         "GoVersion:none Compiler:gcc Platform:linux}\n",
         DS_VERSION);
  return 0;
}
