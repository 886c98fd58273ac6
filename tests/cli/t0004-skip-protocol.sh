#!/usr/bin/env bash
# A skip is never a pass: tests/cli/run-scripts.sh (what tests/run-all.sh runs the CLI scripts
# with) on small scripts that pass, skip (lib.sh's skip_script: exit 77 and the reason), skip a
# part (skip_part), fail, exit 77 without a reason, or print a SKIP line of their own and exit 0.
# Each gets its own line, the summary counts them apart, and only failures fail the run.
. "$(dirname "$0")/lib.sh"

mk() { # NAME BODY: a script that sources lib.sh and runs BODY
  printf '%s\n' '#!/usr/bin/env bash' ". \"$ROOT/tests/cli/lib.sh\"" "$2" >"$TMP/$1"
}
mk t9001-pass.sh 'echo "t9001: 1 checks"'
mk t9002-skip.sh 'command -v no-such-tool-here >/dev/null || skip_script "no-such-tool-here is not installed"
echo "never printed"'
mk t9003-part.sh 'skip_part "the podman part: podman cannot run containers here"
skip_part "the http part: no address"
echo "t9003: 3 checks"'
mk t9004-fail.sh 'exit 1'
mk t9005-mute77.sh 'exit 77'
mk t9006-oldskip.sh 'echo "t9006: SKIP (chromium is not installed)"; exit 0'
mk t9007-skip0.sh 'echo "SKIP t9007-skip0.sh: says skip, exits 0"; exit 0'
runner=$ROOT/tests/cli/run-scripts.sh

# passes, a skip and a part skip: exit 0, and the skip is shown and counted as a skip
"$runner" --summary "$TMP/summary" "$TMP/t9001-pass.sh" "$TMP/t9002-skip.sh" "$TMP/t9003-part.sh" \
  >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 0
expect_out "ok   $TMP/t9001-pass.sh"
expect_out "skip $TMP/t9002-skip.sh: no-such-tool-here is not installed"
expect_out "ok   $TMP/t9003-part.sh (parts skipped: the podman part: podman cannot run containers here; the http part: no address)"
expect_out 'CLI scripts: 1 passed, 1 passed with parts skipped, 1 skipped, 0 failed'
checks=$((checks + 1))
! grep -q "never printed" "$TMP/out" || fail "skip_script did not stop the script"
checks=$((checks + 1))
[ "$(grep -c "^ok   $TMP/t9002" "$TMP/out")" -eq 0 ] || fail "a skipped script was reported ok"
checks=$((checks + 1))
diff <(printf '%s\n' 'CLI scripts: 1 passed, 1 passed with parts skipped, 1 skipped, 0 failed' \
  "skip $TMP/t9002-skip.sh: no-such-tool-here is not installed" \
  "ok   $TMP/t9003-part.sh (parts skipped: the podman part: podman cannot run containers here; the http part: no address)") \
  "$TMP/summary" >"$TMP/err" || fail "--summary file"

# the skip's own exit status is 77, whoever runs it
DESCHEDULER=$DESCHEDULER bash "$TMP/t9002-skip.sh" >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 77
expect_out 'SKIP t9002-skip.sh: no-such-tool-here is not installed'

# what fails: a failing script, exit 77 with no reason, a SKIP line of the script's own making,
# and a skip line with exit 0; each with its own reason, and the run fails
"$runner" --label "(x)" "$TMP/t9004-fail.sh" "$TMP/t9005-mute77.sh" "$TMP/t9006-oldskip.sh" "$TMP/t9007-skip0.sh" \
  "$TMP/t9001-pass.sh" >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 1
expect_out "FAIL $TMP/t9004-fail.sh (x) (exit 1)"
expect_out "FAIL $TMP/t9005-mute77.sh (x): exit 77 (skip) without a SKIP line saying why"
expect_out "FAIL $TMP/t9006-oldskip.sh (x): a SKIP line not written by lib.sh's skip_script/skip_part: t9006: SKIP (chromium is not installed)"
expect_out "FAIL $TMP/t9007-skip0.sh (x): printed SKIP (says skip, exits 0) but exited 0: a skipped script exits 77 (skip_script)"
expect_out "ok   $TMP/t9001-pass.sh (x)"
expect_out 'CLI scripts (x): 1 passed, 0 passed with parts skipped, 0 skipped, 4 failed'
echo "t0004: $checks checks"
