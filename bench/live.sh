#!/usr/bin/env bash
# One live descheduling cycle against the API simulator holding a large synthetic cluster:
# prints the cycle's wall time, CPU time and peak RSS (GNU time) and the requests it made.
# Usage: bench/live.sh [NODES:PODS:VMS] [extra descheduler flags...]   (default 5000:150000:20000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${DESCHEDULER:-$root/build/descheduler}
size=${1:-5000:150000:20000}
shift || true
IFS=: read -r n p v <<<"$size"
mkdir -p "$here/out"
snap="$here/out/cluster-$n-$p-$v.json"
[ -f "$snap" ] || python3 "$here/gen_cluster.py" --nodes "$n" --pods "$p" --vms "$v" --out "$snap"
tmp=$(mktemp -d)
python3 "$root/tests/apisim/apisim.py" --snapshot "$snap" --port 0 --kubeconfig-out "$tmp/kc" \
  --migration-seconds 3600 >"$tmp/sim.out" 2>"$tmp/sim.err" &
sim=$!
trap 'kill $sim 2>/dev/null; wait $sim 2>/dev/null; rm -rf "$tmp"' EXIT
t0=$SECONDS
until grep -q '^ready' "$tmp/sim.out" 2>/dev/null; do
  kill -0 $sim 2>/dev/null || { cat "$tmp/sim.err" >&2; exit 1; }
  sleep 0.5
done
echo "simulator ready with $n nodes / $p pods / $v VMs after $((SECONDS - t0)) s"
url=$(sed -n 's/.*server: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$tmp/kc" | head -n1)
for qps in 5 1000; do
  curl -s -X DELETE "$url/_sim/requests" >/dev/null
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$bin" --kubeconfig "$tmp/kc" --secure-port 0 \
    --policy-config-file "$here/policy-lnu.yaml" --feature-gates EvictionsInBackground=true \
    --client-connection-qps "$qps" --client-connection-burst "$qps" "$@" >/dev/null 2>"$tmp/err" || {
    tail -5 "$tmp/err" >&2; exit 1; }
  read -r wall user sys rss <"$tmp/time"
  reqs=$(curl -s "$url/_sim/requests" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["total"], sum(v for k, v in d["byPath"].items() if k.endswith("/eviction")))')
  read -r total evictions <<<"$reqs"
  echo "qps=$qps burst=$qps: wall ${wall}s cpu $(python3 -c "print(f'{$user + $sys:.2f}')")s peak_rss $((rss / 1024))MB requests=$total evictions=$evictions"
done
