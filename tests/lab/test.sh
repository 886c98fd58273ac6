#!/usr/bin/env bash
# The cluster lab's part of `make test`: builds the lab's components if they are not built yet
# (tests/lab/build.sh, once per machine), then runs the offline tests (scenario files, the
# exporter), the lab's own test and the small scenarios (test_scenario_file.py,
# test_exporter.py, test_lab.py, test_scenarios.py, test_scale.py). Exit 3
# (a skip, with the reason printed) when the components cannot be built on this machine; 1 when
# a build or a test fails.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
"$here/build.sh"
rc=$?
if [ $rc -eq 3 ]; then
  echo "cluster lab: skipped: its components cannot be built on this machine (see above)"
  exit 3
fi
[ $rc -eq 0 ] || { echo "cluster lab: a component failed to build (see above)"; exit 1; }
cd "$here" || exit 1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
python3 -m unittest -v test_scenario_file test_exporter test_lab test_scenarios test_scale 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
[ $rc -eq 0 ] || exit 1
# a test that could not run is a skip of the suite, never a pass
if grep -q "skipped" "$out"; then
  echo "cluster lab: some tests were skipped (above, with their reasons): the suite is a skip"
  exit 3
fi
