#!/usr/bin/env bash
# Events are sent in the background (kube/events.h), as upstream's event broadcaster sends
# them: with every Event POST answered a second late, the cycle's evictions do not wait on
# them (the second eviction reaches the server before the first Event is answered), every
# Event still reaches the server before a one-shot run exits, and when the exit's time for
# them runs out the rest are dropped and counted, never sent after the program says so.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
live_backend_is apisim || skip_script "it needs the simulator's fault rules and request journal"
# two nodes, eight pods of a ReplicaSet filling n1's CPU: LowNodeUtilization evicts four
CLUSTER=$TMP/cluster.json
python3 - "$DATA/../live/pdb-cluster.json" "$CLUSTER" <<'PY' || fail "the cluster"
import copy, json, sys
d = json.load(open(sys.argv[1]))
pod = next(i for i in d["items"] if i["kind"] == "Pod")
items = [i for i in d["items"] if i["kind"] not in ("Pod", "PodDisruptionBudget")]
for k in range(8):
    p = copy.deepcopy(pod)
    p["metadata"]["name"] = "web-6d4b9-%d" % k
    p["metadata"]["uid"] = "00000000-web%d-4000-8000-000000000000" % k
    p["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "500m", "memory": "512Mi"}
    items.append(p)
d["items"] = items
json.dump(d, open(sys.argv[2], "w"))
PY
POLICY=$DATA/../live/pdb-policy.yaml

# what the journal says of evictions and Events: "E t end" / "V t end" lines, in order
journal() {
  sim_ctl GET /_sim/journal | python3 -c '
import json, sys
for e in json.load(sys.stdin)["items"]:
    if e["method"] != "POST":
        continue
    if e["path"].endswith("/eviction"):
        print("E", e["t"], e["end"], e["status"])
    elif e["path"].endswith("/events"):
        print("V", e["t"], e["end"], e["status"])'
}
settle() { # waits until the simulator has journalled every request it is serving
  for _ in $(seq 1 100); do
    [ "$(sim_ctl GET /_sim/journal | json_eval /dev/stdin 'd["inFlight"]')" = 0 ] && return
    sleep 0.1
  done
  fail "the simulator is still serving requests"
}

# part 1: each Event answered after 0.8 s; four evictions, so their Events take 3.2 s to send,
# within the 5 s a one-shot run leaves them at exit
sim_start "$CLUSTER"
sim_ctl POST /_sim/faults '{"method":"POST","path":"/events$","latency":0.8}' >/dev/null || fail "fault rule"
sim_ctl DELETE /_sim/journal >/dev/null
run_live --policy-config-file "$POLICY" --descheduling-interval 0 --v 2
expect_status 0
settle
journal >"$TMP/j1"
evicted=$(grep -c '^E .* 20[01]$' "$TMP/j1")
checks=$((checks + 1))
[ "$evicted" -eq 4 ] || fail "expected four evictions, the journal has: $(cat "$TMP/j1")"
expect_err_count "$evicted" '"Evicted pod"'
checks=$((checks + 1))
[ "$(grep -c '^V .* 201$' "$TMP/j1")" -eq "$evicted" ] ||
  fail "one Event per eviction expected before the exit: $(cat "$TMP/j1")"
checks=$((checks + 1))
python3 - "$TMP/j1" <<'PY' || fail "the second eviction waited for the first Event"
import sys
rows = [l.split() for l in open(sys.argv[1])]
ev = [r for r in rows if r[0] == "E"]
first_event_end = min(float(r[2]) for r in rows if r[0] == "V")
assert float(ev[1][1]) < first_event_end, (ev[1], first_event_end)
PY
checks=$((checks + 1))
! grep -q '"Events not sent before exit"' "$TMP/err" || fail "no Event should have been dropped"

# part 2 (the same cluster again): each Event answered after 3 s; two are sent in the 5 s at
# exit, the other two are dropped and counted: what reached the server plus what was dropped is
# one per eviction
sim_start "$CLUSTER"
sim_ctl POST /_sim/faults '{"method":"POST","path":"/events$","latency":3}' >/dev/null || fail "fault rule"
sim_ctl DELETE /_sim/journal >/dev/null
start=$(date +%s)
run_live --policy-config-file "$POLICY" --descheduling-interval 0 --v 1
took=$(($(date +%s) - start))
expect_status 0
settle
journal >"$TMP/j2"
evicted=$(grep -c '^E .* 20[01]$' "$TMP/j2")
sent=$(grep -c '^V ' "$TMP/j2")
dropped=$(sed -n 's/.*"Events not sent before exit" count=\([0-9]*\).*/\1/p' "$TMP/err")
checks=$((checks + 1))
[ -n "$dropped" ] && [ "$dropped" -ge 1 ] && [ "$evicted" -eq 4 ] || fail "expected Events dropped at exit; stderr: $(tail -3 "$TMP/err")"
checks=$((checks + 1))
[ $((sent + dropped)) -eq "$evicted" ] || fail "sent $sent + dropped $dropped != evictions $evicted"
checks=$((checks + 1))
# the exit waits at most 5 s for the queue, and a request in flight at most its 5 s
[ "$took" -le 12 ] || fail "the run took ${took}s"
echo "t0214: $checks checks"
