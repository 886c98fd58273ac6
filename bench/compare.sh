#!/usr/bin/env bash
# This descheduler and upstream's (sigs.k8s.io/descheduler, built by bench/upstream.sh) side by
# side: the same synthetic cluster (bench/gen_cluster.py, fixed seed), the same policy
# (bench/policy-lnu.yaml: bounded LowNodeUtilization + RemoveDuplicates), the same API
# simulator (tests/apisim), one cycle each (interval 0, the CronJob's way), EvictionsInBackground
# on, --v=3, the client rate limit lifted (--client-connection-qps/-burst 1000) on both so the
# figures are work, not throttling. Every run gets a freshly started simulator (the same
# starting state: a run's evictions would change what the next one sees); runs alternate between
# the two binaries. Per size it prints min and median of wall time, CPU time (user+sys) and peak
# RSS (GNU time), the LIST and WATCH requests and eviction requests the simulator saw, and the
# ratio upstream/ours of the medians. (Upstream's client-go reads with streaming watch-lists,
# `sendInitialEvents=true`, instead of paged LISTs: its reads show in the WATCH row.)
# At the end, one table of the ratios upstream/ours for every size.
# Usage: bench/compare.sh [--repeats N] [NODES:PODS:VMS ...]   (default 3; 500:15000:2000 5000:150000:20000)
# Exit status: 0 when every size was compared; 3 (after a NOT RUN line) when upstream's
# descheduler cannot be built on this machine (bench/upstream.sh: no Go 1.26, no module proxy);
# another non-zero status when a build or a run failed. bench/run.sh (`make bench`) calls it.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
ours=${DESCHEDULER:-$root/build/descheduler}
repeats=3
if [ "${1:-}" = --repeats ]; then repeats=$2; shift 2; fi
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(500:15000:2000 5000:150000:20000)
[ -x "$ours" ] || { echo "compare.sh: build first (make build): $ours is missing" >&2; exit 1; }
set +e
upstream=$("$here/upstream.sh" --print)
rc=$?
set -e
if [ $rc -eq 3 ]; then
  echo "compare.sh: NOT RUN: upstream's descheduler cannot be built on this machine (see above); no figures to compare"
  exit 3
fi
if [ $rc -ne 0 ]; then
  echo "compare.sh: NOT RUN: bench/upstream.sh failed to build upstream's descheduler (exit $rc, see above)"
  exit $rc
fi
mkdir -p "$here/out"
tmp=$(mktemp -d)
sim=
stop_sim() { [ -z "$sim" ] || { kill "$sim" 2>/dev/null; wait "$sim" 2>/dev/null; }; sim=; }
trap 'stop_sim; rm -rf "$tmp"' EXIT

start_sim() { # SNAPSHOT
  rm -f "$tmp/sim.out"
  python3 "$root/tests/apisim/apisim.py" --snapshot "$1" --port 0 --kubeconfig-out "$tmp/kc" \
    --migration-seconds 3600 >"$tmp/sim.out" 2>"$tmp/sim.err" &
  sim=$!
  until grep -q '^ready' "$tmp/sim.out" 2>/dev/null; do
    kill -0 "$sim" 2>/dev/null || { cat "$tmp/sim.err" >&2; exit 1; }
    sleep 0.2
  done
  url=$(sed -n 's/.*server: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$tmp/kc" | head -n1)
}

run_one() { # LABEL BINARY SNAPSHOT: one cycle on a fresh simulator; appends a line to $tmp/LABEL
  start_sim "$3"
  /usr/bin/time -f '%e %U %S %M' -o "$tmp/time" "$2" --kubeconfig "$tmp/kc" --secure-port 0 \
    --policy-config-file "$here/policy-lnu.yaml" --feature-gates EvictionsInBackground=true --v 3 \
    --client-connection-qps 1000 --client-connection-burst 1000 >/dev/null 2>"$tmp/err" || {
    echo "compare.sh: $1 failed:" >&2; tail -5 "$tmp/err" >&2; exit 1; }
  read -r wall user sys rss <"$tmp/time"
  curl -s "$url/_sim/requests" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ev = sum(v for k, v in d["byPath"].items() if k.endswith("/eviction"))
print(d["byVerb"].get("list", 0), d["byVerb"].get("watch", 0), ev)' >"$tmp/reqs"
  read -r lists watches evictions <"$tmp/reqs"
  echo "$wall $(python3 -c "print(f'{$user + $sys:.2f}')") $((rss / 1024)) $lists $watches $evictions" >>"$tmp/$1"
  stop_sim
}

echo "upstream: $("$upstream" version 2>&1 | sed -n 's/.*GoVersion:\([^ ]*\).*/sigs.k8s.io\/descheduler '"$(basename "$(dirname "$upstream")")"' (\1)/p')"
echo "ours:     $("$ours" version 2>&1 | head -n1)"
for s in "${sizes[@]}"; do
  IFS=: read -r n p v <<<"$s"
  snap="$here/out/cluster-$n-$p-$v.json"
  [ -f "$snap" ] || python3 "$here/gen_cluster.py" --nodes "$n" --pods "$p" --vms "$v" --out "$snap"
  rm -f "$tmp/ours" "$tmp/upstream"
  for r in $(seq 1 "$repeats"); do
    if [ $((r % 2)) = 1 ]; then
      run_one ours "$ours" "$snap"; run_one upstream "$upstream" "$snap"
    else
      run_one upstream "$upstream" "$snap"; run_one ours "$ours" "$snap"
    fi
  done
  python3 - "$tmp/ours" "$tmp/upstream" "$n/$p/$v" "$repeats" "$tmp/ratios" <<'EOF'
import statistics, sys
cols = ["wall_s", "cpu_s", "peak_rss_MB", "LIST", "WATCH", "evictions"]
def load(path):
    rows = [list(map(float, line.split())) for line in open(path)]
    return [[r[i] for r in rows] for i in range(len(cols))]
ours, up = load(sys.argv[1]), load(sys.argv[2])
print()
print("%s nodes/pods/VMs, %s runs each (min / median); ratio = upstream median / ours median" % (sys.argv[3], sys.argv[4]))
print("%-12s %22s %22s %8s" % ("", "ours", "upstream", "ratio"))
def fmt(x):
    return ("%d" % x) if x == int(x) else ("%.2f" % x)
for i, c in enumerate(cols):
    mo, mu = statistics.median(ours[i]), statistics.median(up[i])
    ratio = "%.2f" % (mu / mo) if mo and mu else "-"
    print("%-12s %22s %22s %8s" % (c, "%s / %s" % (fmt(min(ours[i])), fmt(mo)),
                                    "%s / %s" % (fmt(min(up[i])), fmt(mu)), ratio))
# one line for the final table: size, ratios of wall, CPU and peak RSS, the reads of each
med = statistics.median
r = lambda i: "%.2f" % (med(up[i]) / med(ours[i])) if med(ours[i]) and med(up[i]) else "-"
reads = lambda d: "%s LIST + %s WATCH" % (fmt(med(d[3])), fmt(med(d[4])))
with open(sys.argv[5], "a") as f:
    f.write("\t".join([sys.argv[3], r(0), r(1), r(2), reads(ours), reads(up)]) + "\n")
EOF
done

echo
echo "upstream / ours, medians of $repeats run(s) each (reads: the requests each one made)"
python3 - "$tmp/ratios" <<'EOF'
import sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
head = ["nodes/pods/VMs", "wall", "CPU", "peak RSS", "reads ours", "reads upstream"]
w = [max(len(x) for x in col) for col in zip(head, *rows)]
for row in [head] + rows:
    print("  ".join(x.ljust(w[i]) if i in (0, 4, 5) else x.rjust(w[i]) for i, x in enumerate(row)).rstrip())
EOF
