#!/usr/bin/env bash
# Benchmarks `descheduler simulate` on synthetic clusters and prints one line per size:
# wall time, CPU time and peak RSS (GNU time), evictions planned. Snapshots are generated
# into bench/out/ (git-ignored) by gen_cluster.py with a fixed seed, so runs are comparable.
# Usage: bench/run.sh [SIZE ...]   sizes as NODES:PODS:VMS (default 500:15000:2000 5000:150000:20000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
bin=${DESCHEDULER:-$root/build/descheduler}
[ -x "$bin" ] || { echo "build first: make build" >&2; exit 1; }
mkdir -p "$here/out"
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(500:15000:2000 5000:150000:20000)
printf '%-22s %10s %10s %10s %12s %10s\n' "nodes/pods/vms" "snapshot" "wall_s" "cpu_s" "peak_rss_MB" "planned"
for s in "${sizes[@]}"; do
  IFS=: read -r n p v <<<"$s"
  snap="$here/out/cluster-$n-$p-$v.json"
  [ -f "$snap" ] || python3 "$here/gen_cluster.py" --nodes "$n" --pods "$p" --vms "$v" --out "$snap"
  size=$(du -m "$snap" | cut -f1)
  /usr/bin/time -f '%e %U %S %M' -o "$here/out/time.txt" "$bin" simulate \
    --policy-config-file "$here/policy-lnu.yaml" --snapshot "$snap" \
    --feature-gates EvictionsInBackground=true -o json >"$here/out/plan.json" 2>/dev/null
  read -r wall user sys rss <"$here/out/time.txt"
  planned=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["evictions"]))' "$here/out/plan.json")
  cpu=$(python3 -c "print(f'{$user + $sys:.2f}')")
  printf '%-22s %8sMB %10s %10s %12s %10s\n' "$n/$p/$v" "$size" "$wall" "$cpu" "$((rss / 1024))" "$planned"
done
