#!/usr/bin/env bash
# The quick loop (`make check`): what can be checked in about two minutes on two cores,
# with no server started: the include rule of the layers, the cluster lab's scenario files, the
# unit tests, upstream's conformance vectors and the offline CLI scripts (those that start no API simulator,
# Prometheus or kube-apiserver), the scripts in two lanes side by side.
# `make test` runs all of this and the rest (sanitizers, fuzzing, valgrind, the live
# scripts, the fault matrix, the simulator's own tests, the real kube-apiserver tier and the
# cluster lab's smoke scenario); docs/HACKING.md says which to run when.
# Usage: tests/check.sh   (after `make build`; exit 0 only when everything passed)
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
bin=$here/build/descheduler
[ -x "$bin" ] || { echo "check: $bin is not built (make build)" >&2; exit 1; }

# Offline scripts, in two lanes of about equal length. Left to `make test`: t0003 (a clone
# built from scratch), t0401 (the Containerfile against apt's package lists) and the two that
# start a simulator through a demo script (t0304, t0603).
lane1=(t0007 t0100 t0110 t0300 t0008 t0004 t0302 t0504 t0010 t0012)
lane2=(t0006 t0001 t0002 t0005 t0301 t0500 t0009 t0011 t0111)
offline=$(grep -L 'livelib.sh\|promlib.sh\|realapi' tests/cli/t[0-9]*.sh | sed 's|.*/||; s|-.*||' | sort)
listed=$(printf '%s\n' "${lane1[@]}" "${lane2[@]}" t0003 t0401 t0304 t0603 | sort)
# a new offline script must be put in a lane (or said to be left to make test) here
if [ "$offline" != "$listed" ]; then
  echo "check: the offline CLI scripts and tests/check.sh's lanes differ:" >&2
  diff <(echo "$offline") <(echo "$listed") >&2
  exit 1
fi
scripts() { for s in "$@"; do ls tests/cli/"$s"-*.sh; done; }

failed=0
step() { # name, command...
  local name=$1 start=$SECONDS; shift
  if "$@" >"$here/build/check-$name.log" 2>&1; then
    printf 'PASS  %-22s %3ds\n' "$name" $((SECONDS - start))
  else
    printf 'FAIL  %-22s %3ds  (build/check-%s.log)\n' "$name" $((SECONDS - start)) "$name"
    tail -n 30 "$here/build/check-$name.log" | sed 's/^/      /'
    failed=1
  fi
}
start=$SECONDS
step layers bash -c "python3 tests/tools/check_layers.py && python3 tests/tools/check_layers.py --self-test"
step lab-offline bash -c "cd tests/lab && python3 -m unittest test_scenario_file test_exporter"
# the CLI lanes run beside the unit tests and the vectors
export DESCHEDULER=$bin
tests/cli/run-scripts.sh $(scripts "${lane1[@]}") >"$here/build/check-cli1.log" 2>&1 &
l1=$!
tests/cli/run-scripts.sh $(scripts "${lane2[@]}") >"$here/build/check-cli2.log" 2>&1 &
l2=$!
step unit ctest --test-dir build --output-on-failure -j2
step conformance tests/conformance/run.py --binary "$bin"
for lane in 1 2; do
  pid=$l1; [ $lane = 2 ] && pid=$l2
  if wait "$pid"; then
    printf 'PASS  %-22s %3ds  %s\n' "cli lane $lane" $((SECONDS - start)) "$(tail -n1 "$here/build/check-cli$lane.log")"
  else
    printf 'FAIL  %-22s       (build/check-cli%s.log)\n' "cli lane $lane" "$lane"
    grep -E '^FAIL|FAILED' "$here/build/check-cli$lane.log" | head -20 | sed 's/^/      /'
    failed=1
  fi
done
echo "check: $((SECONDS - start))s in all"
exit $failed
