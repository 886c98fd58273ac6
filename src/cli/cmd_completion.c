/* cmd_completion.c - `descheduler completion bash|zsh`: a shell completion script.
 *
 * The commands come from the commands table (main.c); a command's flags are read, when the
 * user presses TAB, from that command's own --help (every flag there is printed as
 * `--name`), so the completion can never offer a flag the binary does not take. zsh runs
 * the bash function through bashcompinit. Installed as `kubectl-descheduler`, the same
 * function completes `kubectl descheduler ...` where kubectl's own plugin completion asks
 * for it. */
#include "cli.h"
#include "flags.h"

#include <stdio.h>
#include <string.h>

static void completion_usage(FILE *out, const void *ctx, const flag_def *defs) {
  (void)ctx;
  cli_usage_head(out, "completion");
  fprintf(out, "\nPrints a shell completion script for the commands and their flags:\n"
               "  source <(descheduler completion bash)      # bash (bash-completion not needed)\n"
               "  source <(descheduler completion zsh)       # zsh\n\nFlags:\n  none\n");
  (void)defs;
  cli_exit_status(out, NULL);
}

static void print_bash(void) {
  printf("# descheduler completion (descheduler completion bash)\n"
         "_descheduler() {\n"
         "  [ -n \"${ZSH_VERSION:-}\" ] && setopt localoptions ksharrays  # arrays from 0, as bash\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} cmd='' sub='' w i\n"
         "  local cmds='");
  size_t n;
  const cli_command *c = cli_commands(&n);
  for (size_t i = 0; i < n; i++)
    printf("%s%s", i ? " " : "", c[i].name);
  printf("'\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    w=${COMP_WORDS[i]}\n"
         "    case \" $cmds \" in *\" $w \"*) [ -z \"$cmd\" ] && cmd=$w && continue ;; esac\n"
         "    [ \"$cmd\" = profile ] && [ \"$w\" = render ] && sub=render\n"
         "  done\n"
         "  if [ -z \"$cmd\" ] && [[ $cur != -* ]] && [ \"$COMP_CWORD\" -eq 1 ]; then\n"
         "    COMPREPLY=($(compgen -W \"$cmds\" -- \"$cur\")); return\n"
         "  fi\n"
         "  if [ \"$cmd\" = profile ] && [ -z \"$sub\" ] && [[ $cur != -* ]]; then\n"
         "    COMPREPLY=($(compgen -W render -- \"$cur\")); return\n"
         "  fi\n"
         "  if [ \"$cmd\" = completion ] && [[ $cur != -* ]]; then\n"
         "    COMPREPLY=($(compgen -W 'bash zsh' -- \"$cur\")); return\n"
         "  fi\n"
         "  if [[ $cur == -* ]]; then\n"
         "    local flags\n"
         "    flags=$(\"${COMP_WORDS[0]}\" $cmd $sub --help 2>/dev/null | grep -oE -- "
         "'--[a-z0-9][a-z0-9-]*' | sort -u)\n"
         "    COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\")); return\n"
         "  fi\n"
         "  COMPREPLY=()\n"
         "}\n"
         "complete -o default -F _descheduler descheduler kubectl-descheduler\n");
}

int cmd_completion(int argc, char **argv) {
  flag_def defs[] = {{NULL}};
  const char *pos[1];
  int npos;
  int rc = flags_parse_command_args("completion", defs, argc, argv, completion_usage, NULL, pos,
                                    1, &npos);
  if (rc != FLAGS_RUN)
    return rc;
  if (npos != 1 || (strcmp(pos[0], "bash") && strcmp(pos[0], "zsh"))) {
    fprintf(stderr, "descheduler completion: name the shell: bash or zsh%s%s%s\n",
            npos == 1 ? " (got \"" : "", npos == 1 ? pos[0] : "", npos == 1 ? "\")" : "");
    return EXIT_CONFIG;
  }
  if (!strcmp(pos[0], "zsh"))
    printf("# zsh runs the bash completion through bashcompinit (after compinit, for compdef)\n"
           "(( $+functions[compdef] )) || { autoload -U +X compinit && compinit -u; }\n"
           "autoload -U +X bashcompinit && bashcompinit\n");
  print_bash();
  return 0;
}
