#!/usr/bin/env bash
# The repository stands on its own: a plain clone of the committed tree, in an empty
# directory with nothing beside it, builds the binary and passes the conformance vectors with
# the runner and data it carries. No file of the repository may point outside it, and every
# document the code and the docs cite is in it.
. "$(dirname "$0")/lib.sh"

command -v git >/dev/null || skip_script "git is not installed"
git -C "$ROOT" rev-parse HEAD >/dev/null 2>&1 || skip_script "$ROOT is not a git checkout"

lone=$TMP/empty/clone
mkdir -p "$TMP/empty"
git clone -q "$ROOT" "$lone" || fail "git clone"
checks=$((checks + 1))
[ ! -e "$TMP/empty/shared" ] || fail "the clone has a sibling"

cmake -S "$lone" -B "$lone/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$TMP/out" 2>"$TMP/err" ||
  fail "cmake configure in the clone"
cmake --build "$lone/build" -j2 --target descheduler >>"$TMP/out" 2>>"$TMP/err" ||
  fail "build in the clone"
(cd "$lone" && tests/conformance/run.py --binary build/descheduler) >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 0
expect_out "310 passed, 0 failed"

# no committed file names a path outside the repository (the shared reference folder beside
# the development checkout, or a development machine's absolute paths), and every document the
# code and the docs cite is in the repository: no behaviour-reference file or section sign of
# the development folder; every docs page named and every relative Markdown link (with its anchor)
# resolves (tests/cli/check_refs.py says what it reads)
python3 "$lone/tests/cli/check_refs.py" "$lone" >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 0
expect_out "0 problems"
echo "t0003: $checks checks"
