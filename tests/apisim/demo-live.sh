#!/usr/bin/env bash
# Starts the API simulator on a cluster snapshot so a newcomer can run the real descheduler
# binary (or kubectl) against it; writes a kubeconfig to a temp dir, prints how to use it, and
# waits until Ctrl-C, then stops the simulator and removes the temp dir.
#
# Usage: tests/apisim/demo-live.sh SNAPSHOT [PORT]
#   SNAPSHOT   a v1 List (JSON), e.g. tests/apisim/data/cluster.json
#   PORT       default $APISIM_PORT or 16443
# Environment: APISIM_MIGRATION_SECONDS (default 10), APISIM_ARGS (extra apisim.py flags)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
snapshot=${1:?usage: demo-live.sh SNAPSHOT [PORT]}
port=${2:-${APISIM_PORT:-16443}}
[ -r "$snapshot" ] || { echo "demo-live: cannot read snapshot $snapshot" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/apisim-demo.XXXXXX")
kubeconfig=$tmp/kubeconfig
pid=
cleanup() {
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck disable=SC2086  # APISIM_ARGS is a list of flags on purpose
python3 "$here/apisim.py" --snapshot "$snapshot" --port "$port" --kubeconfig-out "$kubeconfig" \
  --migration-seconds "${APISIM_MIGRATION_SECONDS:-10}" ${APISIM_ARGS:-} >"$tmp/stdout" 2>"$tmp/apisim.log" &
pid=$!

for _ in $(seq 1 600); do
  grep -qx ready "$tmp/stdout" 2>/dev/null && break
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "demo-live: the simulator failed to start:" >&2
    cat "$tmp/apisim.log" >&2
    exit 1
  fi
  sleep 0.1
done
grep -qx ready "$tmp/stdout" || { echo "demo-live: simulator not ready after 60s" >&2; exit 1; }

kubectl=kubectl
[ -x "$repo/.deps/bin/kubectl" ] && kubectl=$repo/.deps/bin/kubectl
base=http://127.0.0.1:$port
cat <<EOF
The API simulator is serving $snapshot at $base
  kubeconfig: $kubeconfig          (log: $tmp/apisim.log)

Look at the cluster:
  export KUBECONFIG=$kubeconfig
  $kubectl get nodes,pods -A -o wide
  $kubectl get vmi,vmim -A

Run the descheduler against it (one cycle, KubeVirt-aware evictions in background):
  descheduler --kubeconfig $kubeconfig --policy-config-file POLICY.yaml \\
      --feature-gates EvictionsInBackground=true --v 3

Live migrations take ${APISIM_MIGRATION_SECONDS:-10}s. Simulator controls:
  curl -s $base/_sim/migrations                          # migrations by phase
  curl -s -X POST $base/_sim/migrations/advance          # finish running migrations now
  curl -s -X POST $base/_sim/migrations/fail -d '{"vmi":"*","count":1}'   # fail the next one
  curl -s $base/_sim/requests                            # requests by verb and path
  curl -s $base/_sim/state > state.json                  # the cluster now, as a v1 List

Press Ctrl-C to stop.
EOF
wait "$pid"
