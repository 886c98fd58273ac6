#!/usr/bin/env bash
# Runs numbered CLI scripts and says, one line each, what became of them:
#   ok   SCRIPT                               exit 0, every part ran
#   ok   SCRIPT (parts skipped: REASON; ...)  exit 0, but the parts named did not run here
#   skip SCRIPT: REASON                       exit 77 after a "SKIP SCRIPT: REASON" line
#                                             (skip_script in lib.sh): nothing was checked
#   FAIL SCRIPT                               any other exit status; also a script that exits 77
#                                             without saying why, or exits 0 after a SKIP line
#                                             that is not lib.sh's (a skip must never pass), and
#                                             one still running after SCRIPT_TIMEOUT seconds
#                                             (default 900): it and what it started are sent
#                                             SIGTERM (its exit traps run), SIGKILL 30 s later
# then a summary that counts passes, passes with skipped parts, skips and failures apart.
# Usage: tests/cli/run-scripts.sh [--label TEXT] [--summary FILE] SCRIPT...
#   --label TEXT    appended to each script's line, e.g. "(realapi)"
#   --summary FILE  also write the summary and the skip lines there (tests/run-all.sh prints
#                   them in its final summary)
# DESCHEDULER must name the binary, as for each script. Exit status: 1 when a script failed,
# else 0 (skips are not failures, and not passes either).
set -uo pipefail
label="" summary_file=""
while [ $# -gt 0 ]; do
  case $1 in
    --label) label=" $2"; shift 2 ;;
    --summary) summary_file=$2; shift 2 ;;
    --) shift; break ;;
    -*) echo "usage: tests/cli/run-scripts.sh [--label TEXT] [--summary FILE] SCRIPT..." >&2; exit 2 ;;
    *) break ;;
  esac
done
: "${DESCHEDULER:?set DESCHEDULER to the built binary}"
limit=${SCRIPT_TIMEOUT:-900}
case $limit in '' | *[!0-9]*) echo "SCRIPT_TIMEOUT must be a number of seconds, not '$limit'" >&2; exit 2 ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

passed=0 partial=0 skipped=0 failed=0
notes=()
for t in "$@"; do
  name=${t##*/}
  # stdout to a file (the SKIP lines are read from it), then shown; stderr goes straight through
  timeout --kill-after=30 "$limit" bash "$t" >"$work/out"
  rc=$?
  cat "$work/out"
  # lib.sh's forms: "SKIP part NAME: REASON" and "SKIP NAME: REASON"; any other line with the
  # word SKIP is a skip the runner would not see
  parts=$(sed -n "s/^SKIP part $name: //p" "$work/out")
  whole=$(sed -n "/^SKIP part /d; s/^SKIP $name: //p" "$work/out" | head -n1)
  stray=$(grep -w SKIP "$work/out" | grep -v -e "^SKIP part $name: " -e "^SKIP $name: " | head -n1)
  if [ -n "$stray" ]; then
    echo "FAIL $t$label: a SKIP line not written by lib.sh's skip_script/skip_part: $stray"
    failed=$((failed + 1))
  elif [ $rc -eq 77 ] && [ -n "$whole" ]; then
    echo "skip $t$label: $whole"
    notes+=("skip $t$label: $whole")
    skipped=$((skipped + 1))
  elif [ $rc -eq 77 ]; then
    echo "FAIL $t$label: exit 77 (skip) without a SKIP line saying why"
    failed=$((failed + 1))
  elif [ $rc -eq 0 ] && [ -n "$whole" ]; then
    echo "FAIL $t$label: printed SKIP ($whole) but exited 0: a skipped script exits 77 (skip_script)"
    failed=$((failed + 1))
  elif [ $rc -eq 0 ] && [ -n "$parts" ]; then
    line="ok   $t$label (parts skipped: $(printf '%s' "$parts" | paste -sd ';' | sed 's/;/; /g'))"
    echo "$line"
    notes+=("$line")
    partial=$((partial + 1))
  elif [ $rc -eq 0 ]; then
    echo "ok   $t$label"
    passed=$((passed + 1))
  elif [ $rc -eq 124 ]; then
    echo "FAIL $t$label: still running after ${limit}s (SCRIPT_TIMEOUT); stopped"
    failed=$((failed + 1))
  else
    echo "FAIL $t$label (exit $rc)"
    failed=$((failed + 1))
  fi
done
total="CLI scripts$label: $passed passed, $partial passed with parts skipped, $skipped skipped, $failed failed"
echo "$total"
if [ -n "$summary_file" ]; then
  { echo "$total"; [ ${#notes[@]} -eq 0 ] || printf '%s\n' "${notes[@]}"; } >"$summary_file"
fi
[ $failed -eq 0 ]
