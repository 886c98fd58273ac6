/* cmd_version.c - `descheduler version` (and `descheduler --version`), the text shaped like
 * upstream's line; -o json|yaml gives the same fields with the json names of upstream's
 * version.Info (pkg/version/version.go). */
#include "cli.h"
#include "flags.h"
#include "output.h"

#include "../util/strbuf.h"

#include <stdio.h>

#define VERSION_MAJOR "0"
#define VERSION_MINOR "36"
#define VERSION_GO "none"
#define VERSION_COMPILER "gcc"
#define VERSION_PLATFORM "linux"

void version_print_text(FILE *out) {
  fprintf(out,
          "Descheduler version {Major:" VERSION_MAJOR " Minor:" VERSION_MINOR
          " GitVersion:%s GitBranch: GitSha1: BuildDate: GoVersion:" VERSION_GO
          " Compiler:" VERSION_COMPILER " Platform:" VERSION_PLATFORM "}\n",
          DS_VERSION);
}

static void version_usage(FILE *out, const void *ctx, const flag_def *defs) {
  (void)ctx;
  cli_usage_head(out, "version");
  fprintf(out, "\nPrints the version, as upstream's `descheduler version` does.\n\nFlags:\n");
  flags_usage(out, defs);
  cli_exit_status(out, NULL);
}

int cmd_version(int argc, char **argv) {
  const char *output = "text";
  flag_def defs[] = {FLAG_DEF_OUTPUT(&output), {NULL}};
  int rc = flags_parse_command("version", defs, argc, argv, version_usage, NULL);
  if (rc != FLAGS_RUN)
    return rc;
  output_format f;
  if (output_parse("descheduler version", output, &f) < 0)
    return EXIT_CONFIG;
  if (f == OUTPUT_TEXT) {
    version_print_text(stdout);
    return 0;
  }
  strbuf sb = {0};
  sb_append(&sb, "{\"major\":\"" VERSION_MAJOR "\",\"minor\":\"" VERSION_MINOR "\",\"gitVersion\":");
  sb_append_json_str(&sb, DS_VERSION);
  sb_append(&sb, ",\"buildDate\":\"\",\"goVersion\":\"" VERSION_GO
                 "\",\"compiler\":\"" VERSION_COMPILER "\",\"platform\":\"" VERSION_PLATFORM "\"}");
  rc = output_document("descheduler version", f, &sb, stdout);
  sb_free(&sb);
  return rc < 0 ? EXIT_FAILED : 0;
}
