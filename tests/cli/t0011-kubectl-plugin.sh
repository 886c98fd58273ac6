#!/usr/bin/env bash
# kubectl's habits: the binary installed as `kubectl-descheduler` on PATH is a kubectl plugin
# (`kubectl plugin list` finds it, `kubectl descheduler simulate ...` runs it and prints what the
# binary prints), and `descheduler completion bash|zsh` completes the commands and each
# command's flags as its --help lists them.
. "$(dirname "$0")/lib.sh"
KUBECTL=${KUBECTL:-$ROOT/.deps/bin/kubectl}

# --- completion: the script parses, and completes commands, subcommands and flags
run completion bash
expect_status 0
cp "$TMP/out" "$TMP/completion.bash"
checks=$((checks + 1)); bash -n "$TMP/completion.bash" || fail "the bash completion does not parse"
complete_words() { # WORDS...: what TAB offers after them (the last word is the one completed)
  bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _descheduler; echo "${COMPREPLY[*]}"' \
    _ "$TMP/completion.bash" "$@"
}
expect_completion() { # EXPECTED WORDS...
  checks=$((checks + 1))
  local want=$1 got; shift
  got=$(complete_words "$@")
  [ "$got" = "$want" ] || fail "completing '$*': got '$got', expected '$want'"
}
expect_completion "simulate soft-taint" "$DESCHEDULER" s
expect_completion "render" "$DESCHEDULER" profile ""
expect_completion "--kubedescheduler --kubedescheduler-ref" "$DESCHEDULER" profile render --kubed
expect_completion "--from-cluster" "$DESCHEDULER" simulate --policy-config-file p.yaml --from
expect_completion "--context" "$DESCHEDULER" check --con
expect_completion "--descheduling-interval" "$DESCHEDULER" --deschedul
expect_completion "bash zsh" "$DESCHEDULER" completion ""
run completion fish
expect_status 2
expect_err 'descheduler completion: name the shell: bash or zsh (got "fish")'
if command -v zsh >/dev/null; then
  run completion zsh
  expect_status 0
  cp "$TMP/out" "$TMP/completion.zsh"
  checks=$((checks + 1))
  # zsh runs the same function through bashcompinit: it loads, registers and offers the
  # command's flags (zsh's compgen leaves matching the typed prefix to zsh's completion system)
  got=$(zsh -c '. "$1" || exit 1; COMP_WORDS=("$2" check --con); COMP_CWORD=2; _descheduler; echo " ${COMPREPLY[*]} "' \
    _ "$TMP/completion.zsh" "$DESCHEDULER" 2>"$TMP/err")
  case $got in *" --context "*" --kubeconfig "*) ;; *) fail "zsh: completing 'check --con': got '$got'" ;; esac
  case $got in *--from-cluster*) fail "zsh: check was offered simulate's --from-cluster" ;; esac
else
  skip_part "zsh completion: zsh is not installed (the bash function it wraps is tested above)"
fi

# --- the kubectl plugin
[ -x "$KUBECTL" ] || skip_script "no kubectl at $KUBECTL (scripts/deps.sh test unpacks Debian's)"
mkdir -p "$TMP/bin"
ln -s "$DESCHEDULER" "$TMP/bin/kubectl-descheduler"
PATH="$TMP/bin:$PATH" "$KUBECTL" plugin list >"$TMP/out" 2>"$TMP/err"
checks=$((checks + 1)); grep -qF "$TMP/bin/kubectl-descheduler" "$TMP/out" || fail "kubectl plugin list does not find kubectl-descheduler"
run simulate --snapshot "$EXAMPLE/cluster.json" --policy-config-file "$EXAMPLE/policy.yaml" -o json
cp "$TMP/out" "$TMP/direct.json"
PATH="$TMP/bin:$PATH" "$KUBECTL" descheduler simulate --snapshot "$EXAMPLE/cluster.json" \
  --policy-config-file "$EXAMPLE/policy.yaml" -o json >"$TMP/out" 2>"$TMP/err"; status=$?
expect_status 0
checks=$((checks + 1)); cmp -s "$TMP/out" "$TMP/direct.json" || fail "kubectl descheduler simulate printed another plan"
PATH="$TMP/bin:$PATH" "$KUBECTL" descheduler version -o yaml >"$TMP/out" 2>"$TMP/err"; status=$?
expect_status 0
expect_out "gitVersion: v0."
PATH="$TMP/bin:$PATH" "$KUBECTL" descheduler verify -n vms --vmi vm-a >"$TMP/out" 2>"$TMP/err"; status=$?
expect_status 2
expect_err "descheduler verify: --from NODE is required"
echo "t0011: $checks checks"
