#!/usr/bin/env bash
# The README's "Rebalancing VMs, step by step", run as written: the block between the
# `runbook-demo` markers is executed by bash (-e: every command must succeed) against the
# simulator started by tests/apisim/demo-live.sh (what `make demo-live` runs), with the built
# binary and Debian's kubectl first on the PATH, from a directory that sees the repository's
# deploy/, examples/ and tests/ (so descheduler.log lands in the test's temp dir). Then the output of
# each step is checked.
. "$(dirname "$0")/lib.sh"
KUBECTL_BIN=${KUBECTL:-$ROOT/.deps/bin/kubectl}
[ -x "$KUBECTL_BIN" ] || { echo "kubectl not found at $KUBECTL_BIN (run scripts/deps.sh test)" >&2; exit 1; }

sed -n '/<!-- runbook-demo: begin -->/,/<!-- runbook-demo: end -->/p' "$ROOT/README.md" |
  sed '1,2d;$d' | sed '$d' >"$TMP/steps.sh"
checks=$((checks + 1))
[ "$(grep -c '^descheduler ' "$TMP/steps.sh")" -ge 5 ] || fail "README block not found or too short"

# make demo-live, on a free port
APISIM_PORT=0 bash "$ROOT/tests/apisim/demo-live.sh" "$ROOT/examples/kubevirt-rebalance/cluster.json" \
  >"$TMP/demo.out" 2>"$TMP/demo.err" &
demo=$!
trap 'kill "$demo" 2>/dev/null; wait "$demo" 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 1 100); do
  grep -q 'Press Ctrl-C' "$TMP/demo.out" 2>/dev/null && break
  sleep 0.1
done
KC=$(sed -n 's/^ *kubeconfig: \([^ ]*\).*/\1/p' "$TMP/demo.out" | head -n1)
[ -n "$KC" ] && [ -r "$KC" ] || { cat "$TMP/demo.out" "$TMP/demo.err" >&2; fail "demo-live printed no kubeconfig"; }

mkdir -p "$TMP/bin" "$TMP/work"
ln -s "$DESCHEDULER" "$TMP/bin/descheduler"
ln -s "$KUBECTL_BIN" "$TMP/bin/kubectl"
ln -s "$ROOT/examples" "$TMP/work/examples"
ln -s "$ROOT/tests" "$TMP/work/tests"
ln -s "$ROOT/deploy" "$TMP/work/deploy"
(cd "$TMP/work" && KC=$KC PATH=$TMP/bin:$PATH bash -e "$TMP/steps.sh") >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 0

# install
expect_out 'cronjob.batch/descheduler created'
# 1. check
expect_out '0 failed: the installation can rebalance VMs by live migration'
expect_out 'would request 1 eviction: 1 live migration'
# 2. the run asked for vm-alpha, in background
expect_out '"Eviction in background assumed" pod="vms/virt-launcher-vm-alpha-4f551"'
# 3. the migration
expect_out 'kubevirt-evacuation-'
# 4. verify waited for it and paired it with the log line
expect_out 'migration     PASS        kubevirt-evacuation-'
expect_out 'Succeeded: worker-a -> worker-b'
expect_out 'as --uid: the same VMI moved'
expect_out 'log: descheduler.log line '
expect_out 'verified: vms/vm-alpha moved from worker-a to worker-b by live migration'
expect_err 'waiting: '
# 5. pause and resume
expect_out 'Paused CronJob descheduler/descheduler: spec.suspend true'
expect_out 'No migration is running'
expect_out 'Resumed CronJob descheduler/descheduler: spec.suspend false'
echo "t0603: $checks checks"
