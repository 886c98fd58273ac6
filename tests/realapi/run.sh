#!/usr/bin/env bash
# The real kube-apiserver tier (`make test-realapi`; `make test` runs it as one suite): builds
# kube-apiserver if this machine has not yet (tests/realapi/build.sh, once per machine), then
# runs against etcd + kube-apiserver + the KubeVirt stand-in:
#   - the live CLI scripts that have a real-server meaning, with LIVE_BACKEND=realapi
#     (tests/cli/livelib.sh starts tests/realapi/realapi.py instead of the simulator);
#   - tests/deploy/test_rbac.py with LIVE_BACKEND=realapi: the shipped roles, bound to the
#     workloads' ServiceAccounts, judged by the real RBAC authorizer;
#   - tests/realapi/test_*.py: what only a real server checks (a narrowed role refused, paging,
#     loop mode across etcd compactions, leader election told from the audit log) and the
#     differences between the simulator and it.
# Exit status: 0 when all pass, 1 when one fails, 3 (after saying why) when the tier cannot run
# on this machine: no Go 1.26 or no Go module proxy to build kube-apiserver, or no etcd.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
export DESCHEDULER=${DESCHEDULER:-$root/build/descheduler}
[ -x "$DESCHEDULER" ] || { echo "realapi: build first: $DESCHEDULER is missing" >&2; exit 1; }

start=$SECONDS
tests/realapi/build.sh
rc=$?
if [ $rc -eq 3 ]; then echo "SKIP realapi tier: kube-apiserver cannot be built on this machine (above)"; exit 3; fi
[ $rc -eq 0 ] || exit 1
echo "realapi: kube-apiserver ready after $((SECONDS - start))s"
command -v etcd >/dev/null || { echo "SKIP realapi tier: no etcd (Debian package etcd-server; scripts/deps.sh test installs it)"; exit 3; }

export LIVE_BACKEND=realapi
failed=0
# the live scripts that make sense on a real server: the seed scenario, failures (PDB 429),
# leader election on a real Lease, the watch cache (lists, watches, a cycle on it equal to one on
# a fresh list), VM safety rules. The others drive the simulator itself
# (faults, TLS/token set-ups, objects a real server refuses to store).
# (tests/cli/run-scripts.sh: a skipped script or part is reported as such, never as a pass)
tests/cli/run-scripts.sh --label "(realapi)" tests/cli/t0200-live-seed.sh tests/cli/t0201-live-failures.sh \
  tests/cli/t0203-live-leader.sh tests/cli/t0207-live-watch-cache.sh tests/cli/t0210-live-vm-safety.sh || failed=1
# the RBAC test and the real-server tests run side by side, each with servers of its own
# (ports are picked free, directories are temporary): both mostly wait on the servers, and one
# after the other they were about four of the tier's seven minutes. Each one's output is
# printed whole when it is done.
logs=$(mktemp -d)
python3 -m unittest discover -s tests/deploy -p 'test_rbac.py' >"$logs/rbac" 2>&1 &
rbac=$!
python3 -m unittest discover -s tests/realapi -p 'test_*.py' >"$logs/realapi" 2>&1 &
real=$!
wait "$rbac"; rbac_rc=$?
wait "$real"; real_rc=$?
cat "$logs/rbac"
if [ $rbac_rc -eq 0 ]; then echo "ok   tests/deploy/test_rbac.py (realapi)"
else echo "FAIL tests/deploy/test_rbac.py (realapi)"; failed=1; fi
cat "$logs/realapi"
if [ $real_rc -eq 0 ]; then echo "ok   tests/realapi/test_*.py"
else echo "FAIL tests/realapi/test_*.py"; failed=1; fi
rm -rf "$logs"
echo "realapi tier: $((SECONDS - start))s"
exit $failed
