#!/usr/bin/env bash
# The live decision record (--decisions-file) in Deployment mode: three cycles two seconds
# apart against the simulator on the small cluster of t0005 (two overutilized nodes, at most
# one eviction per node and two per cycle). Each cycle appends one JSON line; every node entry
# carries its category, why, the thresholds in force, the usage the plugin compared and the
# requested figures before and after the cycle, as simulate's record does. The evictions are
# real (the simulator deletes the pods), so each cycle starts where the previous one ended:
# cycle N+1's "before" is cycle N's "after". The first cycle's node entries and reasons are
# simulate's for the same cluster and policy.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"

LIM=$DATA/limits-cluster.json

# what simulate records for the same cluster and policy (the first live cycle must match)
run simulate --policy-config-file "$DATA/limits-policy.yaml" --snapshot "$LIM" -o json
expect_status 0
cp "$TMP/out" "$TMP/simulate.json"

sim_start "$LIM"
rec=$TMP/decisions.jsonl
start=$SECONDS
# the client's rate limit lifted so that a cycle is far shorter than the interval and SIGTERM
# lands between cycles (a cycle under way when it comes is finished first, then one more line)
"$DESCHEDULER" --kubeconfig "$SIM_KC" --secure-port 0 --policy-config-file "$DATA/limits-policy.yaml" \
  --descheduling-interval 2s --v 1 --decisions-file "$rec" --decision-examples 3 \
  --client-connection-qps 1000 --client-connection-burst 1000 >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 1 200); do # at most 20 s
  [ -f "$rec" ] && [ "$(wc -l <"$rec")" -ge 3 ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -TERM "$pid" 2>/dev/null
wait "$pid"
status=$?
expect_status 0
# one line per cycle the process ran, at least three
cycles=$(grep -c '"Number of evictions/requests"' "$TMP/err")
checks=$((checks + 1))
[ -f "$rec" ] && [ "$(wc -l <"$rec")" -eq "$cycles" ] && [ "$cycles" -ge 3 ] ||
  fail "$(wc -l <"$rec" 2>/dev/null) lines in --decisions-file for $cycles cycles (expected one per cycle, at least 3)"

checks=$((checks + 1))
python3 - "$rec" "$TMP/simulate.json" <<'PY' || fail "the live decision record"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]).read().splitlines()]
assert [r["cycle"] for r in lines] == list(range(1, len(lines) + 1)), [r["cycle"] for r in lines]
later = lines[3:]  # a fourth cycle (SIGTERM came during it) has nothing left to evict
assert all(r["totals"]["evicted"] == 0 for r in later), later
lines = lines[:3]
sim = json.load(open(sys.argv[2]))["decisions"]
assert [r["cycle"] for r in lines] == [1, 2, 3], [r["cycle"] for r in lines]
assert all(r["dryRun"] is False for r in lines), lines
# cycle 1: 2 evictions (the limits), cycle 2: 2, cycle 3: over-a still above target gives one,
# over-b (3 pods, cpu 45%) is no longer overutilized
assert [r["totals"]["evicted"] for r in lines] == [2, 2, 1], [r["totals"] for r in lines]

def nodes(r):
    return {n["name"]: n for n in r["decisions"]["nodes"]}

for r in lines:
    ns = nodes(r)
    assert set(ns) == {"over-a", "over-b", "under-c"}, ns
    for name, n in ns.items():
        # every node of every line: category, why, thresholds, the plugin's usage, requested
        for key in ("category", "why", "thresholds", "usage", "thresholdPercentages",
                    "usagePercentage", "usagePercentageAfter"):
            assert key in n, (r["cycle"], name, key, n)
        assert set(n["usage"]) == {"cpu", "memory", "pods"}, n
        assert n["thresholdPercentages"]["cpu"] == {"low": 20.0, "high": 50.0}, n
        # the plugin classified on requests: its usage is the requested figure before the cycle
        assert n["usage"] == n["usagePercentage"], (r["cycle"], name, n)

# the first live cycle records what simulate records: node entries and reasons
one = lines[0]["decisions"]
assert one["nodes"] == sim["nodes"], (one["nodes"], sim["nodes"])
strip = lambda rs: [(x["outcome"], x["by"], x["count"], x["examples"]) +
                    ((x["reason"],) if x["outcome"] != "evicted" else ()) for x in rs]
assert strip(one["reasons"]) == strip(sim["reasons"]), (one["reasons"], sim["reasons"])
assert one["outcomes"]["limit"] == 8, one["outcomes"]

# usage goes down cycle by cycle on over-a, and each cycle starts where the last one ended
cpu = [nodes(r)["over-a"]["usagePercentage"]["cpu"] for r in lines]
assert cpu == [87.5, 70.0, 52.5], cpu
for prev, cur in zip(lines, lines[1:]):
    for name, n in nodes(cur).items():
        assert n["usagePercentage"] == nodes(prev)[name]["usagePercentageAfter"], (cur["cycle"], name)
assert nodes(lines[2])["over-b"]["category"] == "appropriately utilized", nodes(lines[2])["over-b"]
assert nodes(lines[2])["over-b"]["why"] == "above the low and at or below the high thresholds", nodes(lines[2])["over-b"]
assert nodes(lines[2])["over-a"]["usagePercentageAfter"]["cpu"] == 35.0, nodes(lines[2])["over-a"]
PY
# the pods the record says were evicted are gone from the server
kc get pods -n shop -o name | sort >"$TMP/pods.txt"
checks=$((checks + 1))
[ "$(tr '\n' ' ' <"$TMP/pods.txt")" = "pod/cache-c-0 pod/web-a-3 pod/web-a-4 pod/web-b-2 pod/web-b-3 pod/web-b-4 " ] ||
  fail "pods left on the server: $(tr '\n' ' ' <"$TMP/pods.txt")"
echo "t0211: $checks checks ($((SECONDS - start)) s of live loop)"
