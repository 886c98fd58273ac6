# lib.sh - helpers for the numbered CLI test scripts (git t/ style).
# Each script runs the real binary ($DESCHEDULER) like a user would and checks exit codes,
# stdout and stderr. A failed check prints what was expected and exits 1.
set -u
: "${DESCHEDULER:?set DESCHEDULER to the built binary}"
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
DATA=$ROOT/tests/data/cli
EXAMPLE=$ROOT/examples/kubevirt-rebalance
TMP=$(mktemp -d)
# stop_jobs: stops what the script left running in the background (a descheduler loop started
# with & and not yet stopped when a check failed), so that it does not outlive the script and
# run on beside the next ones. The EXIT traps of lib.sh, livelib.sh and promlib.sh call it.
stop_jobs() {
  local p
  for p in $(jobs -p); do kill "$p" 2>/dev/null; done
}
trap 'stop_jobs; rm -rf "$TMP"' EXIT
checks=0

# Skips. A script that cannot run here says so on stdout with skip_script (exit 77, the code
# automake's test harness uses for a skip); one part of a script that cannot run says so with
# skip_part and the script goes on. tests/cli/run-scripts.sh (run by tests/run-all.sh) reports
# them as "skip SCRIPT: REASON" and "ok SCRIPT (parts skipped: ...)" and counts them apart from
# the passes; a script that prints any other SKIP line, or exits 77 without saying why, fails.
# skip_script REASON: the whole script cannot run on this machine
skip_script() { echo "SKIP ${0##*/}: $*"; exit 77; }
# skip_part REASON: one part (named in REASON) cannot run; the rest of the script does
skip_part() { echo "SKIP part ${0##*/}: $*"; }

# run ARGS...: runs the binary, keeps status in $status, output in $TMP/out and $TMP/err
run() {
  "$DESCHEDULER" "$@" >"$TMP/out" 2>"$TMP/err"
  status=$?
}

fail() {
  echo "  FAILED: $*" >&2
  echo "  --- stdout:" >&2; sed 's/^/  | /' "$TMP/out" | head -40 >&2
  echo "  --- stderr:" >&2; sed 's/^/  | /' "$TMP/err" | head -40 >&2
  exit 1
}

expect_status() { checks=$((checks + 1)); [ "$status" -eq "$1" ] || fail "exit status $status, expected $1"; }
expect_out() { checks=$((checks + 1)); grep -qF -- "$1" "$TMP/out" || fail "stdout lacks: $1"; }
expect_err() { checks=$((checks + 1)); grep -qF -- "$1" "$TMP/err" || fail "stderr lacks: $1"; }
expect_err_count() { # N TEXT: exactly N stderr lines contain TEXT
  checks=$((checks + 1))
  local n; n=$(grep -cF -- "$2" "$TMP/err")
  [ "$n" -eq "$1" ] || fail "stderr has $n lines with '$2', expected $1"
}
expect_err_lines() { # N: stderr has exactly N lines
  checks=$((checks + 1))
  local n; n=$(wc -l <"$TMP/err")
  [ "$n" -eq "$1" ] || fail "stderr has $n lines, expected $1"
}
expect_out_lines() { # N: stdout has exactly N lines
  checks=$((checks + 1))
  local n; n=$(wc -l <"$TMP/out")
  [ "$n" -eq "$1" ] || fail "stdout has $n lines, expected $1"
}
expect_out_empty() { checks=$((checks + 1)); [ ! -s "$TMP/out" ] || fail "stdout is not empty"; }
