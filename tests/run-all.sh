#!/usr/bin/env bash
# Runs every test suite in turn and prints one summary line per suite.
# Suites: unit (cmocka), unit under ASan+UBSan, a libFuzzer smoke run of every parser,
# valgrind over the real binary (simulate on every example, a live one-shot run and a loop),
# upstream conformance vectors, CLI scripts (the live ones against the API simulator, the
# container image), the fault matrix (tests/faults: the live binary while the simulator fails on
# purpose; it must reproduce docs/fault-matrix.md), the API simulator's own tests, the install
# manifests (deploy/) and their RBAC against the requests the binary makes, and the real
# kube-apiserver tier (tests/realapi: the live scripts and the RBAC test against etcd + a real
# kube-apiserver; skipped, saying why, only where kube-apiserver cannot be built), the Helm
# chart (tests/helm: lint, template against the kustomize bases, install on the real
# kube-apiserver; skipped, saying why, where Helm cannot be built), the release artifacts
# (tests/release: tarball, .deb installed in a clean chroot, OCI archive, SBOM), and the
# cluster lab (tests/lab: real control plane, KWOK, KubeVirt's own controllers; its smoke test
# and the small runbook and pinned scenarios; skipped, saying why, where they cannot be built).
# CLI scripts that cannot run here exit 77 (lib.sh's skip_script) and are listed as skips with
# their reason, counted apart from the passes (tests/cli/run-scripts.sh).
# Exit status: 0 only when every suite passes (a skip is not a failure).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"

scripts/deps.sh test || { echo "dependencies could not be installed" >&2; exit 1; }

declare -a summary
failed=0
suite() { # name, command...
  local name=$1; shift
  local start=$SECONDS
  echo "=== $name"
  if "$@"; then
    summary+=("PASS  $name ($((SECONDS - start))s)")
  else
    summary+=("FAIL  $name ($((SECONDS - start))s)")
    failed=1
  fi
}
# skippable_suite name, command...: as suite, but exit status 3 means the suite cannot run on
# this machine (it printed why): a SKIP line, not a failure
skippable_suite() {
  local name=$1; shift
  local start=$SECONDS rc
  echo "=== $name"
  "$@"
  rc=$?
  case $rc in
    0) summary+=("PASS  $name ($((SECONDS - start))s)") ;;
    3) summary+=("SKIP  $name: cannot run on this machine, see its output above") ;;
    *) summary+=("FAIL  $name ($((SECONDS - start))s)"); failed=1 ;;
  esac
}

build() {
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null && cmake --build build -j2 >/dev/null
}
build_asan() {
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DDS_SANITIZE=ON >/dev/null &&
    cmake --build build-asan -j2 >/dev/null
}
conformance() {
  local out rc
  out=$(tests/conformance/run.py --binary build/descheduler 2>&1)
  rc=$?
  echo "$out" | tail -n 40
  return $rc
}
# A second opinion when this checkout sits beside the project's shared reference runner;
# never required (a plain clone has no such sibling).
shared_conformance() {
  ../shared/conformance/run --binary build/descheduler 2>&1 | grep -v '^PASS' | tail -n 20
  return "${PIPESTATUS[0]}"
}
# every numbered CLI script through tests/cli/run-scripts.sh: "ok", "skip SCRIPT: REASON" (exit
# 77 with lib.sh's skip_script), "ok ... (parts skipped: ...)" or "FAIL" per script; its counts
# and skip lines go into the final summary, so a skip is never shown as a pass
# Two lanes side by side (the scripts mostly wait on servers and timers; each has its own
# temporary directory and free ports): the two longest, t0213 (paged decode at scale) and t0207
# (the watch cache), land in different lanes, the rest by rough weight, in order. Each lane's
# output is printed whole when both are done.
cli() {
  local a=() b=() wa=0 wb=0 w t rc=0
  for t in tests/cli/t[0-9]*.sh; do
    case ${t##*/} in t0213-*) w=140 ;; t0207-*) w=90 ;; t0003-* | t0007-*) w=25 ;; *) w=7 ;; esac
    if [ $wa -le $wb ]; then a+=("$t"); wa=$((wa + w)); else b+=("$t"); wb=$((wb + w)); fi
  done
  DESCHEDULER="$here/build/descheduler" tests/cli/run-scripts.sh --summary build/cli-summary-1.txt \
    "${a[@]}" >build/cli-lane1.log 2>&1 &
  local lane1=$!
  DESCHEDULER="$here/build/descheduler" tests/cli/run-scripts.sh --summary build/cli-summary-2.txt \
    "${b[@]}" >build/cli-lane2.log 2>&1 || rc=1
  wait "$lane1" || rc=1
  cat build/cli-lane1.log build/cli-lane2.log
  cat build/cli-summary-1.txt build/cli-summary-2.txt >build/cli-summary.txt 2>/dev/null
  return $rc
}

# kube-apiserver for the real-API-server tier, Helm for the chart's tests, and the cluster lab's components (kube-scheduler,
# kube-controller-manager, KWOK, KubeVirt's virt-api and virt-controller) are built from the Go
# module proxy once per machine (minutes of CPU on a fresh machine): start that now, at low
# priority, so it overlaps the suites that mostly wait on servers and timeouts; the tiers wait
# for it (each build holds a lock) and print its log. The simulator's protobuf encoder (tests/apisim/pbenc,
# about a minute) is built first in the same background job; its tests wait on the same kind
# of lock and skip, saying why, when it cannot be built here.
mkdir -p build
(nice -n 10 tests/apisim/pbenc/build.sh >build/pbenc-build.log 2>&1
 nice -n 10 tests/realapi/build.sh >build/realapi-build.log 2>&1
 nice -n 10 tests/helm/build.sh >build/helm-build.log 2>&1
 nice -n 10 tests/lab/build.sh >build/lab-build.log 2>&1) &
go_builds=$!

suite "build" build || true
suite "layers" bash -c "python3 tests/tools/check_layers.py && python3 tests/tools/check_layers.py --self-test"
suite "unit tests" ctest --test-dir build --output-on-failure -j2
suite "unit tests (ASan+UBSan)" bash -c "$(declare -f build_asan); build_asan && ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build-asan --output-on-failure -j2"
suite "fuzz smoke" tests/fuzz/smoke.sh
suite "memcheck (valgrind)" tests/memcheck/memcheck.sh build/descheduler
suite "upstream conformance" conformance
if [ -x ../shared/conformance/run ]; then
  suite "upstream conformance (shared runner)" shared_conformance
fi
rm -f build/cli-summary*.txt
suite "CLI" cli
# the CLI counts (passed, passed with parts skipped, skipped, failed) and each skip, under its line
if [ -s build/cli-summary.txt ]; then
  while IFS= read -r line; do summary+=("      $line"); done <build/cli-summary.txt
fi
suite "fault matrix" python3 tests/faults/fault_matrix.py --binary build/descheduler
suite "API simulator" python3 -m unittest discover -s tests/apisim -p 'test_*.py'
suite "install manifests and RBAC" env DESCHEDULER="$here/build/descheduler" \
  python3 -m unittest discover -s tests/deploy -p 'test_*.py'
# the tiers' own build scripts wait for the background builds (each holds a lock) and build
# what they still lack; the lab's components come after kube-apiserver in that job, whose log
# is printed once it has ended
skippable_suite "real kube-apiserver (tests/realapi)" env DESCHEDULER="$here/build/descheduler" tests/realapi/run.sh
skippable_suite "Helm chart (tests/helm)" env DESCHEDULER="$here/build/descheduler" tests/helm/test.sh
skippable_suite "release artifacts (tests/release)" env DESCHEDULER="$here/build/descheduler" tests/release/test.sh
wait "$go_builds"
cat build/realapi-build.log build/lab-build.log
skippable_suite "cluster lab (tests/lab)" env DESCHEDULER="$here/build/descheduler" tests/lab/test.sh

echo
printf '%s\n' "${summary[@]}"
exit $failed
