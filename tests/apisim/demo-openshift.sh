#!/usr/bin/env bash
# The OpenShift example (examples/openshift-kubevirt/kubedescheduler.yaml, the KubeDescheduler the
# hosted-control-planes guide applies) run live, end to end, with nothing but this repository:
# the API simulator serves the example cluster (with the operator's Route and Scheduler), a
# real Prometheus (Debian's package) holds node-exporter and kube-state-metrics series in which
# worker-a is hot by usage though not by requests, and evaluates the project's recording rules
# (deploy/monitoring); then one descheduler cycle runs from the CR, as the operator's Deployment
# would, and the script prints the cycle's key log lines and the live migrations KubeVirt (the
# simulator) started. Everything is stopped and removed at the end.
#
# Usage: tests/apisim/demo-openshift.sh [DESCHEDULER]   (default build/descheduler; `make
#        demo-openshift` builds it and installs what is missing first)
# Exit status: the descheduler's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
bin=${1:-$repo/build/descheduler}
example=$repo/examples/openshift-kubevirt
[ -x "$bin" ] || { echo "demo-openshift: no binary at $bin (run: make build)" >&2; exit 2; }
for p in prometheus promtool python3 curl; do
  command -v "$p" >/dev/null || { echo "demo-openshift: $p not found (scripts/deps.sh test installs it)" >&2; exit 2; }
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/demo-openshift.XXXXXX")
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { # WHAT SECONDS COMMAND...
  local what=$1 n=$(($2 * 10)) i
  shift 2
  for ((i = 0; i < n; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.1; done
  echo "demo-openshift: $what not ready after ${n}00 ms" >&2
  return 1
}

# 1. the API simulator on the example cluster
port=$(free_port)
python3 "$here/apisim.py" --snapshot "$example/cluster.json" --port "$port" \
  --kubeconfig-out "$tmp/kubeconfig" --migration-seconds 30 >"$tmp/apisim.out" 2>"$tmp/apisim.log" &
pids+=($!)
wait_for "the API simulator" 60 grep -qx ready "$tmp/apisim.out" || { cat "$tmp/apisim.log" >&2; exit 1; }

# 2. Prometheus: 15 minutes of node metrics, worker-a busy and under CPU pressure
now=$(date +%s)
cat >"$tmp/nodes.json" <<'JSON'
{"nodes": {
  "worker-a": {"busy": 0.75, "psi_cpu": 0.25, "mem_used": 0.6, "psi_mem": 0.05},
  "worker-b": {"busy": 0.2, "psi_cpu": 0.0, "mem_used": 0.3, "psi_mem": 0.0},
  "control-plane-0": {"busy": 0.3, "psi_cpu": 0.0, "mem_used": 0.4, "role": "control-plane"}}}
JSON
python3 "$repo/tests/tools/promdata.py" --start $((now - 900)) --end $((now + 1800)) \
  "$tmp/nodes.json" "$tmp/nodes.om"
promtool tsdb create-blocks-from openmetrics "$tmp/nodes.om" "$tmp/tsdb" >"$tmp/promtool.log" 2>&1 ||
  { cat "$tmp/promtool.log" >&2; exit 1; }
# the shipped rules, evaluated every second instead of every 30 s so the demo need not wait
sed 's/^    interval: 30s$/    interval: 1s/' "$repo/deploy/monitoring/descheduler-rules.yaml" >"$tmp/rules.yaml"
cat >"$tmp/prometheus.yml" <<'YAML'
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: [rules.yaml]
storage: {tsdb: {out_of_order_time_window: 2h}}
YAML
pport=$(free_port)
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
  --web.listen-address="127.0.0.1:$pport" --log.level=warn >"$tmp/prometheus.log" 2>&1 &
pids+=($!)
prom=http://127.0.0.1:$pport
query=descheduler:combined_utilization_and_pressure:avg1m
samples() {
  curl -sf "$prom/api/v1/query" --data-urlencode "query=$query" |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; sys.exit(0 if len(r) >= 2 else 1)'
}
wait_for "Prometheus" 20 curl -sf "$prom/-/ready" || { cat "$tmp/prometheus.log" >&2; exit 1; }
wait_for "the recorded series $query" 30 samples || exit 1

echo "== Prometheus at $prom answers the profile's query ($query):"
curl -sf "$prom/api/v1/query" --data-urlencode "query=$query" | python3 -c '
import json, sys
for s in sorted(json.load(sys.stdin)["data"]["result"], key=lambda s: s["metric"]["instance"]):
    print("   %-16s %.2f" % (s["metric"]["instance"], float(s["value"][1])))'

# 3. one cycle from the KubeDescheduler CR, Prometheus given instead of the Route's host
echo "== descheduler --kubedescheduler $(basename "$example")/kubedescheduler.yaml (one cycle)"
set +e
"$bin" --kubeconfig "$tmp/kubeconfig" --kubedescheduler "$example/kubedescheduler.yaml" \
  --prometheus-url "$prom" --descheduling-interval 0 --secure-port 0 --v 3 2>"$tmp/descheduler.log"
rc=$?
set -e
grep -E '"(Using the policy rendered from the KubeDescheduler|Node has been classified|Eviction in background assumed|Number of evictions/requests)"|VM safety' \
  "$tmp/descheduler.log" | sed 's/^/   /' || true
echo "== live migrations KubeVirt started (the simulator's VirtualMachineInstanceMigrations):"
curl -sf "http://127.0.0.1:$port/apis/kubevirt.io/v1/virtualmachineinstancemigrations" | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
for m in items:
    print("   %s/%s  vmi=%s  phase=%s" % (m["metadata"]["namespace"], m["metadata"]["name"],
          m["spec"]["vmiName"], m.get("status", {}).get("phase", "")))
if not items:
    print("   (none)")'
[ "$rc" = 0 ] || { echo "demo-openshift: the descheduler exited $rc; its log:" >&2; cat "$tmp/descheduler.log" >&2; }
exit "$rc"
