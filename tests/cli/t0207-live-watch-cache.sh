#!/usr/bin/env bash
# Deployment mode on the watch cache (src/kube/watch.h). Part 1 also runs against the real
# kube-apiserver (tests/realapi/run.sh); parts 2 and 3 need the simulator.
#  1. Every kind is listed once; the cycles after the first send no LIST; changes made with
#     kubectl (a pod deleted, one created, a node tainted and relabelled, a pod annotated) and
#     a burst of pod churn reach the cache, and a cycle on it decides exactly what a one-shot
#     run on a fresh list decides (dry runs, every pod's decision compared).
#  1b. Compaction: pods relabelled with values never seen leave the strings and arrays they
#     shared unused; the cache drops its objects and lists every kind again into a fresh table
#     (its watches stay open), what it shares shrinks, and the cycles still decide as a fresh
#     list does. The strings and arrays (the timings line's shared minus sharedTables) never
#     grow by the threshold without a compaction.
#  2. (simulator) Watch faults: a 410 ERROR event (the kind is listed again), a stream cut
#     (opened again from its resourceVersion, no list), repeated and reordered events (ignored
#     as older than the cache), a watch answered 503 (the cache is not synced and the cycles
#     evict nothing until it is open again). Each time the decisions still equal a fresh list's.
#     A compaction while the pods' watch lags: its late events are ignored (the list has them);
#     one whose list fails: no cycle runs until the list is retried and the compaction completes.
#     A 410 halfway to the threshold: the compaction still comes at the threshold counted from
#     the first lists (the list after the 410 does not move its base).
#  3. (simulator) A pod replaced behind the cache's back (its events dropped) is not evicted:
#     its eviction carries the UID the cycle decided on and the API server refuses it (409);
#     one deleted behind its back is not either (404); another pod of the same node is evicted.
#  3b. (simulator) Pods deleted, or being deleted, while the cycle runs (after its view was
#     taken, before their turn): the events the watch brought meanwhile stop their evictions
#     before any request is sent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
POLICY=$ROOT/tests/data/live/watch-policy.yaml
CLUSTER=$TMP/cluster.json
python3 "$ROOT/bench/gen_cluster.py" --nodes 30 --pods 600 --vms 60 --out "$CLUSTER" || fail "gen_cluster"

LOOP=
# a failed check must not leave a loop running
trap '[ -n "$LOOP" ] && kill "$LOOP" 2>/dev/null; cleanup_sims' EXIT
start_loop() { # LOG-PREFIX [extra flags...]: a dry-run loop with a decision record per cycle
  local name=$1; shift
  : >"$TMP/$name.jsonl"
  "$DESCHEDULER" --kubeconfig "$SIM_KC" --secure-port 0 --policy-config-file "$POLICY" \
    --descheduling-interval 1s --dry-run --decision-examples 100000 \
    --decisions-file "$TMP/$name.jsonl" "$@" >"$TMP/out" 2>"$TMP/err" &
  LOOP=$!
}
stop_loop() {
  kill -TERM "$LOOP" 2>/dev/null
  wait "$LOOP"
  local rc=$?
  checks=$((checks + 1)); [ "$rc" -eq 0 ] || fail "the loop exited with $rc"
  LOOP=
}
cycles() { grep -c '"Cycle timings"' "$TMP/err"; }
wait_cycles() { # N: until N more cycles have run (at most 60 s)
  local want=$(($(cycles) + $1)) i
  for i in $(seq 1 600); do
    [ "$(cycles)" -ge "$want" ] && return 0
    kill -0 "$LOOP" 2>/dev/null || fail "the loop exited"
    sleep 0.1
  done
  fail "fewer than $want cycles after 60 s"
}
stop_sims() { # the simulators started so far, before a part starts its own
  for p in "${SIM_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  SIM_PIDS=()
}
taint_loop() { # SNAPSHOT FAULTS: a simulator with those faults, and a loop that evicts on it
  #   (policy taints.yaml, written by part 3), once it has run two cycles
  sim_start "$1" --faults "$2"
  "$DESCHEDULER" --kubeconfig "$SIM_KC" --secure-port 0 --policy-config-file "$TMP/taints.yaml" \
    --descheduling-interval 1s --v 3 >"$TMP/out" 2>"$TMP/err" &
  LOOP=$!
  wait_cycles 2
}
# same_as_fresh_list NAME: the last cycle of the loop and a one-shot run on a fresh list made
# the same decision for every pod and node
same_as_fresh_list() {
  "$DESCHEDULER" --kubeconfig "$SIM_KC" --secure-port 0 --policy-config-file "$POLICY" \
    --dry-run --decision-examples 100000 --decisions-file "$TMP/$1.once.jsonl" \
    >"$TMP/once.out" 2>"$TMP/once.err" || { cat "$TMP/once.err" >&2; fail "one-shot run failed"; }
  checks=$((checks + 1))
  python3 - "$TMP/$1.jsonl" "$TMP/$1.once.jsonl" <<'EOF' || fail "$1: the cycle on the watch cache decided otherwise than a fresh list"
import json, sys
loop = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
once = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
a, b = loop[-1]["decisions"], once[-1]["decisions"]
if a != b:
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            print("differs at %s:\n  cache: %s\n  list:  %s" % (key, json.dumps(a.get(key))[:600],
                                                              json.dumps(b.get(key))[:600]))
    sys.exit(1)
pods = sum(r["count"] for r in a["reasons"]) if "reasons" in a else None
print("decisions equal (%s pods)" % pods)
EOF
}
requests() { # list|watch PATH: how many lists (first pages) or watches of PATH the simulator served
  if [ "$1" = watch ]; then # counted when they start (the journal has them when they end)
    sim_ctl GET /_sim/requests | python3 -c "import json,sys; print(json.load(sys.stdin)['byVerbAndPath'].get('watch $2', 0))"
    return
  fi
  sim_ctl GET /_sim/journal | python3 -c '
import json, sys
verb, path = sys.argv[1], sys.argv[2]
n = 0
for e in json.load(sys.stdin)["items"]:
    if e["method"] != "GET" or e["path"] != path:
        continue
    q = e["query"]
    watch = "watch=true" in q or "watch=1" in q
    if (verb == "watch" and watch) or (verb == "list" and not watch and "continue=" not in q):
        n += 1
print(n)' "$1" "$2"
}
KINDS="/api/v1/nodes /api/v1/pods /api/v1/namespaces /apis/policy/v1/poddisruptionbudgets
  /apis/scheduling.k8s.io/v1/priorityclasses /api/v1/persistentvolumeclaims
  /apis/kubevirt.io/v1/virtualmachineinstances /apis/kubevirt.io/v1/virtualmachineinstancemigrations
  /apis/kubevirt.io/v1/kubevirts"
list_counts() { for p in $KINDS; do echo "$p $(requests list "$p")"; done; }
# every LIST request (pages included) by path, as the server counts them (the real server: from
# its audit log)
all_lists() {
  sim_ctl GET /_sim/requests | python3 -c '
import json, sys
counts = json.load(sys.stdin)["byVerbAndPath"]
for p in sys.argv[1:]:
    print(p, counts.get("list " + p, 0))' $KINDS
}
expect_requests() { # VERB PATH OP N
  checks=$((checks + 1))
  local n; n=$(requests "$1" "$2")
  [ "$n" "$3" "$4" ] || fail "$1 $2: $n requests, expected $3 $4"
}

# ---------- 1. one list, then watches; changes reach the cache ----------
sim_start "$CLUSTER"
start_loop basic --v 3
wait_cycles 3
if live_backend_is apisim; then
  # the loop alone so far: one list of each kind, every one asked from the server's watch
  # cache, any version (kube/pager.h: KUBE_LIST_ANY_RV), in pages
  list_counts >"$TMP/lists.start"
  checks=$((checks + 1))
  [ "$(awk '$2 != 1' "$TMP/lists.start")" = "" ] || fail "not one list per kind: $(cat "$TMP/lists.start")"
  sim_ctl GET /_sim/journal >"$TMP/journal.json"
  checks=$((checks + 1))
  got=$(json_eval "$TMP/journal.json" 'sorted({e["path"] for e in d["items"] if e["method"] == "GET" and "watch=" not in e["query"] and "continue=" not in e["query"] and "resourceVersion=1&resourceVersionMatch=NotOlderThan" in e["query"]})')
  want=$(python3 -c 'import sys; print(sorted(sys.argv[1].split()))' "$KINDS")
  [ "$got" = "$want" ] || fail "the kinds listed from the server's cache: $got, expected $want"
fi
kc get pods -A -o json >"$TMP/pods.json"
victim=$(json_eval "$TMP/pods.json" '[p["metadata"]["namespace"]+"/"+p["metadata"]["name"] for p in d["items"] if p["metadata"]["name"].startswith("app-")][3]')
other=$(json_eval "$TMP/pods.json" '[p["metadata"]["namespace"]+"/"+p["metadata"]["name"] for p in d["items"] if p["metadata"]["name"].startswith("app-")][7]')
node=$(json_eval "$TMP/pods.json" '[p["spec"]["nodeName"] for p in d["items"] if p["metadata"]["name"].startswith("app-")][7]')
kc delete pod -n "${victim%/*}" "${victim#*/}" --grace-period=0 --force >/dev/null 2>&1 || fail "kubectl delete"
kc annotate pod -n "${other%/*}" "${other#*/}" descheduler.alpha.kubernetes.io/prefer-no-eviction=true >/dev/null || fail "kubectl annotate"
kc taint node "$node" watch-test=1:NoSchedule >/dev/null || fail "kubectl taint"
kc label node "$(json_eval "$TMP/pods.json" 'd["items"][0]["spec"]["nodeName"]')" kubevirt.io/schedulable=false --overwrite >/dev/null || fail "kubectl label"
cat >"$TMP/newpod.json" <<EOF
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"watch-test-new","namespace":"default",
 "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"watch-test","uid":"6f1c0a1e-0000-4000-8000-000000000001","controller":true}]},
 "spec":{"nodeName":"$node","containers":[{"name":"c","image":"registry.example/app:1","resources":{"requests":{"cpu":"100m","memory":"64Mi"}}}]}}
EOF
kc create -f "$TMP/newpod.json" >/dev/null || fail "kubectl create"
if live_backend_is apisim; then
  sim_ctl POST /_sim/churn '{"count": 60, "seed": 7}' >/dev/null || fail "churn"
fi
all_lists >"$TMP/lists.changed"
wait_cycles 3
# the cycles after the changes sent no LIST: the watches carried them
all_lists >"$TMP/lists.after"
checks=$((checks + 1))
cmp -s "$TMP/lists.changed" "$TMP/lists.after" || fail "the loop listed again: $(diff "$TMP/lists.changed" "$TMP/lists.after")"
live_backend_is apisim && for p in $KINDS; do expect_requests watch "$p" -ge 1; done
same_as_fresh_list basic
stop_loop
checks=$((checks + 1))
[ "$(grep -c '"Listed for the watch cache"' "$TMP/err")" -eq 9 ] || fail "expected 9 lists (one per kind)"
checks=$((checks + 1))
python3 - "$TMP/basic.jsonl" "$victim" <<'EOF' || fail "the last cycle did not see the deleted pod gone and the new one there"
import json, sys
last = [l for l in open(sys.argv[1]) if l.strip()][-1]
assert '"default/watch-test-new"' in last, "the new pod is missing"
assert '"%s"' % sys.argv[2] not in last, "the deleted pod is still there"
EOF

# ---------- 1b. compaction: what no object shares any more is freed ----------
# Every pod relabelled with a value never seen (as a rollout or a Job run does): the label
# arrays and strings of the old values are garbage. Past --watch-cache-compact-bytes of growth
# every kind is listed again into a fresh table (the watches stay open), the shared bytes go
# back down, and the cycles still decide as a fresh list does, changes made after the
# compaction included.
relabel() { # VALUE|-: the pods of twenty namespaces (kubectl 1.20's label has no -A)
  local ns
  for ns in $(json_eval "$TMP/pods.json" '" ".join(sorted({p["metadata"]["namespace"] for p in d["items"]})[:20])'); do
    if [ "$1" = - ]; then
      kc label pods --all -n "$ns" watch-test/generation- >/dev/null || fail "kubectl label"
    else
      kc label pods --all -n "$ns" "watch-test/generation=$1" --overwrite >/dev/null || fail "kubectl label"
    fi
  done
}
start_loop compact --v 3 --watch-cache-compact-bytes 20000
wait_cycles 2
all_lists >"$TMP/lists.before-compact"
for gen in g1 g2; do
  relabel "$gen"
  wait_cycles 1
done
for _ in $(seq 1 100); do grep -q '"Compacted the watch cache"' "$TMP/err" && break; sleep 0.1; done
kc delete pod -n "${other%/*}" "${other#*/}" --grace-period=0 --force >/dev/null 2>&1 || fail "kubectl delete"
relabel -
wait_cycles 3
stop_loop
all_lists >"$TMP/lists.after-compact"
same_as_fresh_list compact
checks=$((checks + 1))
python3 - "$TMP/err" <<'PY' || fail "no compaction that freed what objects shared"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
done = [l for l in lines if '"Compacted the watch cache"' in l]
assert done, "no compaction"
for l in done:
    before = int(re.search(r"sharedBytesBefore=(\d+)", l).group(1))
    after = int(re.search(r"sharedBytesAfter=(\d+)", l).group(1))
    assert after < before, l
first = lines.index(done[0])
shared = [int(m.group(1)) for l in lines[first:] for m in [re.search(r'"Cycle timings".* shared=(\d+)', l)] if m]
assert shared, "no cycle after the compaction"
# Compaction counts the strings and copies alone, not the tables that find them (they grow by
# doubling): the timings line says the tables apart, and what is left has grown by less than
# the threshold since the first cycle or the first after a compaction, whose pump set the base.
# No kind is listed again here but by a compaction, so no margin is needed.
base = None
for l in lines:
    if '"Compacted the watch cache"' in l:
        base = None
    m = re.search(r'"Cycle timings".* shared=(\d+) sharedTables=(\d+)', l)
    if not m:
        continue
    content = int(m.group(1)) - int(m.group(2))
    assert 0 < content < int(m.group(1)), l
    if base is None:
        base = content
    assert content - base < 20000, "the shared content grew %d bytes without a compaction: %s" % (content - base, l)
for l in lines:
    if '"Compacting the watch cache' in l:
        assert int(re.search(r"growthBytes=(\d+)", l).group(1)) >= 20000, l
print("compactions: %d, shared bytes %s" % (len(done), [int(re.search(r"sharedBytesAfter=(\d+)", l).group(1)) for l in done]))
PY
# each compaction listed every kind once, and only that: the watches stayed open
ncompact=$(grep -c '"Compacted the watch cache"' "$TMP/err")
for want in "start 9" "compact $((9 * ncompact))"; do
  checks=$((checks + 1))
  n=$(grep -c "\"Listed for the watch cache\" kind=\"[A-Za-z]*\" reason=\"${want% *}\"" "$TMP/err")
  [ "$n" -eq "${want#* }" ] || fail "$n lists for reason ${want% *}, expected ${want#* }"
done
expect_err_count $((9 * (ncompact + 1))) '"Listed for the watch cache"'
checks=$((checks + 1))
python3 - "$TMP/lists.before-compact" "$TMP/lists.after-compact" "$ncompact" <<'PY' || fail "a compaction did not list every kind once"
import sys
before = dict(l.split() for l in open(sys.argv[1]))
after = dict(l.split() for l in open(sys.argv[2]))
n = int(sys.argv[3])
pages = {p: int(after[p]) - int(before[p]) for p in before}
# as many full lists (of one or more pages each) of every kind as there were compactions
bad = {p: d for p, d in pages.items() if d < n or d % n}
assert not bad, "list requests per kind: %s after %d compactions" % (pages, n)
print("list requests per kind: %s after %d compactions" % (pages, n))
PY

if ! live_backend_is apisim; then
  skip_part "watch faults and the replaced pod: they need the simulator's fault injection"
  echo "t0207: $checks checks"
  exit 0
fi

# ---------- 2. watch faults ----------
fault_case() { # NAME RULES-JSON [extra loop flags]: a fresh simulator whose pod watches misbehave
  local name=$1 rules=$2; shift 2
  stop_sims
  echo "$rules" >"$TMP/$name.faults.json"
  sim_start "$CLUSTER" --faults "$TMP/$name.faults.json"
  start_loop "$name" "$@"
  wait_cycles 2
  sim_ctl POST /_sim/churn '{"count": 40, "seed": 11}' >/dev/null || fail "churn"
  sleep 0.5
  sim_ctl POST /_sim/churn '{"count": 40, "seed": 12}' >/dev/null || fail "churn"
  wait_cycles 3
}

# 410 Gone as an ERROR event: the pods are listed again, the rest is untouched
fault_case expire '[{"verb":"watch","path":"^/api/v1/pods$","watchExpire":1,"count":1}]' --v 3
same_as_fresh_list expire
stop_loop
expect_err '"The watch cannot go on; listing again" kind="Pod" why="apisim injected fault: the watch expired"'
expect_err '"Listed for the watch cache" kind="Pod" reason="expired"'
expect_requests list /api/v1/pods -eq 3
expect_requests list /api/v1/nodes -eq 2
# the loop's first list asks any version, its list after the 410 one not older than its first
# (never back in time); then same_as_fresh_list's one-shot lists anew
sim_ctl GET /_sim/journal >"$TMP/journal.json"
checks=$((checks + 1))
rvs=$(json_eval "$TMP/journal.json" '" ".join(q.split("resourceVersion=")[1].split("&")[0] for q in (e["query"] for e in d["items"] if e["method"] == "GET" and e["path"] == "/api/v1/pods" and "watch=" not in e["query"] and "continue=" not in e["query"]))')
set -- $rvs
[ $# -eq 3 ] && [ "$1" = 1 ] && [ "$2" -gt 1 ] && [ "$3" = 1 ] ||
  fail "the pods' lists asked resourceVersions $rvs, expected 1, the first list's, 1"

# a server that cannot serve a list from its cache at the version asked (504 "Too large
# resource version", as kube-apiserver answers when its cache has not reached it): the first
# page is asked again without a version, and the cache is synced
fault_case toolarge '[{"verb":"list","path":"^/api/v1/pods$","query":"resourceVersionMatch=NotOlderThan","status":504,"reason":"Timeout","message":"Too large resource version: 1, current: 0","count":1}]' --v 3
same_as_fresh_list toolarge
stop_loop
expect_err '"The list could not be served at the resourceVersion asked; listing again without it" url="/api/v1/pods?limit=5000&resourceVersion=1&resourceVersionMatch=NotOlderThan" status=504'
expect_err '"Listed for the watch cache" kind="Pod" reason="start"'
expect_err_count 0 'Failed to list for the watch cache'

# a stream reset after one event: opened again from its resourceVersion, no list
fault_case cut '[{"verb":"watch","path":"^/api/v1/pods$","watchCut":1,"count":1}]' --v 3
same_as_fresh_list cut
stop_loop
expect_err '"Watch stream broke; opening it again"'
expect_err 'kind="Pod"'
expect_requests list /api/v1/pods -eq 2
expect_requests watch /api/v1/pods -ge 2

# every event twice, pairs swapped: the repeats and the older ones are ignored
fault_case dup '[{"verb":"watch","path":"^/api/v1/pods$","watchDuplicate":true,"watchReorder":true,"count":1}]' --v 4
# one pod changed twice in one go: its two events come in one batch, swapped
kc get pods -A -o json >"$TMP/pods.json"
python3 - "$TMP/pods.json" >"$TMP/twice.json" <<'EOF'
import copy, json, sys
pod = [p for p in json.load(open(sys.argv[1]))["items"] if p["metadata"]["name"].startswith("app-")][5]
items = []
for n in ("1", "2"):
    p = copy.deepcopy(pod)
    p["metadata"].setdefault("annotations", {})["watch-test/change"] = n
    items.append(p)
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
EOF
curl -sf -X POST --data-binary @"$TMP/twice.json" "$SIM_CTL/_sim/load" >/dev/null || fail "load"
wait_cycles 2
same_as_fresh_list dup
stop_loop
checks=$((checks + 1))
grep -q '"Ignoring a watch event" kind="Pod" type="[A-Z]*" object="[^"]*" name="[^"]*" why="repeated"' "$TMP/err" || fail "no repeated event ignored"
checks=$((checks + 1))
grep -q '"Ignoring a watch event" kind="Pod" .* why="older than the cache.s object"' "$TMP/err" || fail "no older event ignored"
expect_err_count 1 '"Listed for the watch cache" kind="Pod"'

# the pods' watch cut, then refused three times: not synced, nothing evicted, then synced again
fault_case refused '[{"verb":"watch","path":"^/api/v1/pods$","watchCut":1,"count":1},{"verb":"watch","path":"^/api/v1/pods$","status":503,"count":3}]' --v 3
wait_cycles 2
same_as_fresh_list refused
stop_loop
expect_err '"Watch failed; retrying" err="HTTP 503: apisim injected fault: HTTP 503" kind="Pod"'
expect_err '"Failed to read the cluster state; nothing is evicted this cycle" err="the watch cache is not synced: pods: watch failed: HTTP 503: apisim injected fault: HTTP 503"'
expect_err '"Watch open again; the kind is synced" kind="Pod"'
checks=$((checks + 1))
python3 - "$TMP/err" <<'EOF' || fail "cycles did not resume after the watch was open again"
import sys
lines = open(sys.argv[1]).read().splitlines()
synced = max(i for i, l in enumerate(lines) if '"Watch open again' in l)
unsynced = [i for i, l in enumerate(lines) if "the watch cache is not synced" in l]
assert unsynced and max(unsynced) < synced, "a cycle was refused after the watch was open again"
assert any('"Cycle timings"' in l for l in lines[synced:]), "no cycle after the watch was open again"
EOF

# a compaction while the pods' watch lags 3 s behind: a pod created and deleted meanwhile is
# not in the new list, and its late events, not newer than the list, are ignored
stop_sims
echo '[{"verb":"watch","path":"^/api/v1/pods$","watchDelay":3}]' >"$TMP/lag.faults.json"
sim_start "$CLUSTER" --faults "$TMP/lag.faults.json"
start_loop lag --v 4 --watch-cache-compact-bytes 1
wait_cycles 2
sed "s/watch-test-new/watch-test-ghost/" "$TMP/newpod.json" >"$TMP/ghost.json"
kc create -f "$TMP/ghost.json" >/dev/null || fail "kubectl create"
kc delete pod -n default watch-test-ghost --grace-period=0 --force >/dev/null 2>&1 || fail "kubectl delete"
# a namespace never seen: its event (not delayed) makes what objects share grow
kc create namespace watch-test-compact >/dev/null || fail "kubectl create namespace"
for _ in $(seq 1 100); do grep -q '"Ignoring a watch event" kind="Pod" type="DELETED" object="default" name="watch-test-ghost"' "$TMP/err" && break; sleep 0.1; done
wait_cycles 1
same_as_fresh_list lag
# a compaction whose list of pods fails: the pods are not synced (cycles evict nothing) until
# the list is retried a second later, then the compaction completes
sim_ctl POST /_sim/faults '{"verb":"list","path":"^/api/v1/pods$","status":500,"message":"etcdserver: request timed out","count":1}' >/dev/null || fail "faults"
ndone=$(grep -c '"Compacted the watch cache"' "$TMP/err")
kc create namespace watch-test-compact-2 >/dev/null || fail "kubectl create namespace"
for _ in $(seq 1 100); do [ "$(grep -c '"Compacted the watch cache"' "$TMP/err")" -gt "$ndone" ] && break; sleep 0.1; done
wait_cycles 2
stop_loop
expect_err '"Failed to list for the watch cache; it is not synced until a list succeeds" err="failed to list /api/v1/pods: HTTP 500: etcdserver: request timed out" kind="Pod" retryInSeconds=1'
checks=$((checks + 1))
python3 - "$TMP/err" <<'PY' || fail "the failed list of a compaction was not retried, or cycles ran unsynced"
import sys
lines = open(sys.argv[1]).read().splitlines()
failed = max(i for i, l in enumerate(lines) if '"Failed to list for the watch cache' in l)
start = max(i for i, l in enumerate(lines[:failed]) if '"Compacting the watch cache: every kind is listed again"' in l)
done = min(i for i, l in enumerate(lines) if i > failed and '"Compacted the watch cache"' in l)
assert any('"Listed for the watch cache" kind="Pod" reason="compact"' in l for l in lines[failed:done]), "no retry"
between = lines[start:done]
assert not any('"Cycle timings"' in l for l in between), "a cycle ran on a half-listed cache"
assert sum('"Cycle timings"' in l for l in lines[done:]) >= 2, "fewer than two cycles after it"
PY
expect_err '"Ignoring a watch event" kind="Pod" type="ADDED" object="default" name="watch-test-ghost" why="not newer than the cache'"'"'s list"'
expect_err '"Ignoring a watch event" kind="Pod" type="DELETED" object="default" name="watch-test-ghost" why="not newer than the cache'"'"'s list"'
checks=$((checks + 1))
! grep -q watch-test-ghost "$TMP/lag.jsonl" || fail "a cycle saw the pod created and deleted while the watch lagged"

# a 410 halfway to the compaction threshold: the pods listed again after it leave the base of
# the growth where the first lists put it, so the compaction comes at the threshold counted
# from there, not from the list after the 410
stop_sims
echo '[{"verb":"watch","path":"^/api/v1/pods$","watchExpire":1,"count":1}]' >"$TMP/expire-compact.faults.json"
sim_start "$CLUSTER" --faults "$TMP/expire-compact.faults.json"
start_loop expire-compact --v 3 --watch-cache-compact-bytes 20000
wait_cycles 2
node=$(kc get nodes -o name | head -1)
step=0
grow() { # node labels never seen (long keys and values): a few kB more of strings and arrays
  local i labels=
  step=$((step + 1))
  for i in $(seq 1 10); do
    labels="$labels t0207.example.com/k$(printf '%02d%02d%055d' "$step" "$i" 0)=v$(printf '%02d%02d%058d' "$step" "$i" 0)"
  done
  kc label "$node" $labels >/dev/null || fail "kubectl label"
  wait_cycles 1
}
grown() { # the shared content's growth from the first cycle to the last
  python3 - "$TMP/err" <<'PY'
import re, sys
c = [int(m.group(1)) - int(m.group(2)) for l in open(sys.argv[1])
     for m in [re.search(r'"Cycle timings".* shared=(\d+) sharedTables=(\d+)', l)] if m]
print(c[-1] - c[0])
PY
}
while [ "$(grown)" -lt 10000 ]; do
  [ "$step" -lt 20 ] || fail "the shared content did not grow by 10000 bytes in 20 steps"
  grow
done
checks=$((checks + 1))
! grep -q '"Compacting the watch cache' "$TMP/err" || fail "a compaction before the threshold"
# one pod event, then the 410
kc annotate pod -n "$(json_eval "$TMP/pods.json" 'd["items"][0]["metadata"]["namespace"]')" \
  "$(json_eval "$TMP/pods.json" 'd["items"][0]["metadata"]["name"]')" watch-test/expire=1 --overwrite >/dev/null || fail "kubectl annotate"
for _ in $(seq 1 100); do grep -q '"Listed for the watch cache" kind="Pod" reason="expired"' "$TMP/err" && break; sleep 0.1; done
wait_cycles 1
before=$step
while ! grep -q '"Compacted the watch cache"' "$TMP/err"; do
  [ "$step" -lt $((before + 20)) ] || fail "no compaction in 20 steps after the 410"
  grow
done
wait_cycles 1
stop_loop
expect_err '"Listed for the watch cache" kind="Pod" reason="expired"'
checks=$((checks + 1))
python3 - "$TMP/err" <<'PY' || fail "the list after a 410 moved the base of the compaction's growth"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
relist = min(i for i, l in enumerate(lines) if '"Listed for the watch cache" kind="Pod" reason="expired"' in l)
start = min(i for i, l in enumerate(lines) if '"Compacting the watch cache' in l)
assert relist < start, "the compaction came before the 410"
content = {i: int(m.group(1)) - int(m.group(2)) for i, l in enumerate(lines)
           for m in [re.search(r'"Cycle timings".* shared=(\d+) sharedTables=(\d+)', l)] if m}
base = content[min(content)]
at_relist = max(c for i, c in content.items() if i < relist) - base
peak = max(c for i, c in content.items() if i < start) - base
growth = int(re.search(r"growthBytes=(\d+)", lines[start]).group(1))
# before the 410 the content had grown by half the threshold; it never grew by the threshold
# without a compaction, and the compaction counted from the first lists
assert at_relist >= 10000, at_relist
assert peak < 20000, "grew %d bytes without a compaction" % peak
assert 20000 <= growth, lines[start]
print("410 after %d bytes of growth; compaction at growthBytes=%d" % (at_relist, growth))
PY

# ---------- 3. a pod replaced behind the cache's back is not evicted ----------
stop_sims
cat >"$TMP/small.json" <<'EOF'
{"apiVersion":"v1","kind":"List","items":[
 {"apiVersion":"v1","kind":"Node","metadata":{"name":"n1"},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}},
 {"apiVersion":"v1","kind":"Node","metadata":{"name":"n2"},"status":{"allocatable":{"cpu":"4","memory":"8Gi","pods":"110"},"conditions":[{"type":"Ready","status":"True"}]}},
 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"default","uid":"11111111-1111-4111-8111-111111111111","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"aaaaaaaa-0000-4000-8000-000000000001","controller":true}]},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}},
 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p2","namespace":"default","uid":"22222222-2222-4222-8222-222222222222","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"aaaaaaaa-0000-4000-8000-000000000001","controller":true}]},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}},
 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"p3","namespace":"default","uid":"33333333-3333-4333-8333-333333333333","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"aaaaaaaa-0000-4000-8000-000000000001","controller":true}]},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}}
]}
EOF
cat >"$TMP/taints.yaml" <<'EOF'
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: taints
  pluginConfig:
  - name: DefaultEvictor
  - name: RemovePodsViolatingNodeTaints
  plugins:
    deschedule:
      enabled: [RemovePodsViolatingNodeTaints]
EOF
echo '[{"verb":"watch","path":"^/api/v1/pods$","watchDrop":true}]' >"$TMP/drop.json"
taint_loop "$TMP/small.json" "$TMP/drop.json"
kc delete pod p1 --wait=false >/dev/null || fail "kubectl delete p1"
kc get pod p1 -o name >/dev/null 2>&1 && { kc delete pod p1 --grace-period=0 --force >/dev/null 2>&1; }
cat >"$TMP/p1.json" <<'EOF'
{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1","namespace":"default","ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"aaaaaaaa-0000-4000-8000-000000000001","controller":true}]},"spec":{"nodeName":"n1","containers":[{"name":"c","image":"i"}]},"status":{"phase":"Running"}}
EOF
kc create -f "$TMP/p1.json" >/dev/null || fail "kubectl create p1"
# p3 is deleted for good; the cache, its events dropped, still holds it
kc delete pod p3 --grace-period=0 --force >/dev/null 2>&1 || fail "kubectl delete p3"
kc taint node n1 dedicated=other:NoSchedule >/dev/null || fail "kubectl taint"
for _ in $(seq 1 100); do grep -q '"Evicted pod" pod="default/p2"' "$TMP/err" && break; sleep 0.1; done
wait_cycles 1
stop_loop
expect_err '"Error evicting pod" err="Operation cannot be fulfilled on Pod \"p1\": the UID in the precondition (11111111-1111-4111-8111-111111111111) does not match the UID in record ('
expect_err '"Evicted pod" pod="default/p2"'
expect_err '"Error evicting pod" err="pod not found when evicting \"p3\": pods \"p3\" not found" pod="default/p3"'
# the cache, its events dropped, holds p2 after its eviction too: later cycles send it again
# and the API server answers 404; it was evicted once
checks=$((checks + 1))
[ "$(grep -c '"Evicted pod" pod="default/p2"' "$TMP/err")" -eq 1 ] || fail "p2 was not evicted once"
# the new p1 was refused, not evicted: it is still there, with a UID of its own
checks=$((checks + 1))
uid=$(kc get pod p1 -o jsonpath='{.metadata.uid}') || fail "the new p1 is gone"
[ -n "$uid" ] && [ "$uid" != 11111111-1111-4111-8111-111111111111 ] || fail "p1's uid: '$uid'"
# the timings line's wait= is the cycle's own requests as the client timed them: part of evict,
# and not nothing in the cycle that sent the three evictions
checks=$((checks + 1))
python3 - "$TMP/err" <<'EOF' || fail "the Cycle timings lines' wait= is missing or out of bounds"
import re, sys
lines = [l for l in open(sys.argv[1]) if '"Cycle timings"' in l]
f = [dict((k, float(v)) for k, v in re.findall(r' (wait|evict|total)=([0-9.e+-]+)', l)) for l in lines]
assert f and all(set(t) == {"wait", "evict", "total"} for t in f), lines
assert all(0 <= t["wait"] <= t["evict"] <= t["total"] for t in f), f
assert any(t["wait"] > 0 for t in f), f
print("wait= in %d cycles, at most %.6f s" % (len(f), max(t["wait"] for t in f)))
EOF

# ---------- 3b. pods deleted while the cycle runs: their events stop the requests ----------
# three_pods OUT A B C [hold]: small.json with its three pods named A, B and C; with "hold" the
# third has a finalizer that keeps it, being deleted, after its DELETE
three_pods() {
  python3 - "$TMP/small.json" "$@" <<'EOF'
import json, sys
src, out, names, hold = sys.argv[1], sys.argv[2], sys.argv[3:6], sys.argv[6:] == ["hold"]
d = json.load(open(src))
pods = [o for o in d["items"] if o["kind"] == "Pod"]
for o, name in zip(pods, names):
    o["metadata"]["name"] = name
if hold:
    pods[2]["metadata"]["finalizers"] = ["example.com/hold"]
json.dump(d, open(out, "w"))
EOF
}
stop_sims
# pc's finalizer keeps it, being deleted, after its DELETE
three_pods "$TMP/three.json" pa pb pc hold
# pa's eviction takes 3 s to answer: time enough to delete pb and pc meanwhile
echo '[{"method":"POST","path":"/pods/pa/eviction$","latency":3,"count":1}]' >"$TMP/slow.json"
taint_loop "$TMP/three.json" "$TMP/slow.json"
kc taint node n1 dedicated=other:NoSchedule >/dev/null || fail "kubectl taint"
for _ in $(seq 1 100); do
  sim_ctl GET /_sim/requests | grep -q '/pods/pa/eviction' && break
  sleep 0.1
done
kc delete pod pb --grace-period=0 --force >/dev/null 2>&1 || fail "kubectl delete pb"
kc delete pod pc --wait=false >/dev/null || fail "kubectl delete pc"
for _ in $(seq 1 100); do grep -q '"Evicted pod" pod="default/pa"' "$TMP/err" && break; sleep 0.1; done
wait_cycles 1
stop_loop
expect_err '"Evicted pod" pod="default/pa"'
expect_err '"Error evicting pod" err="pod not found when evicting \"pb\": not sent: the pod no longer exists (its watch said so after the cycle read it)" pod="default/pb"'
expect_err '"Error evicting pod" err="not sent: the pod is being deleted since the cycle read it" pod="default/pc"'
checks=$((checks + 1))
# the cycle after the slow one may start before pa's DELETED event arrives: its eviction is
# sent again and the API server answers 404 (the stale-cache case the precondition covers)
sim_ctl GET /_sim/journal | python3 -c '
import json, sys
posts = [(e["path"].split("/")[-2], e["status"]) for e in json.load(sys.stdin)["items"]
         if e["method"] == "POST" and e["path"].endswith("/eviction")]
assert posts and posts[0] == ("pa", 201) and all(p == ("pa", 404) for p in posts[1:]), posts
' || fail "an eviction other than pa's was sent, or pa's was not evicted once"

# ---------- 3c. a watch fails while the cycle runs: no eviction on a view it cannot vouch for ----------
# The pods' first watch is cut after its first event and the next three attempts to open it
# again are refused (503; the first rule that fits a request applies): the cache is not synced
# for 1 + 2 + 4 s, as when kube-apiserver restarts mid-cycle and answers again before the
# watches are back. qa's eviction takes 3 s:
# meanwhile qc is relabelled, its event cuts the watch, the watch fails; qb and qc, decided
# from the view taken before, are not sent. Once the watch is open again a cycle evicts them.
stop_sims
three_pods "$TMP/three-q.json" qa qb qc
cat >"$TMP/lost.json" <<'JSON'
[{"method": "POST", "path": "/pods/qa/eviction$", "latency": 3, "count": 1},
 {"verb": "watch", "path": "^/api/v1/pods$", "watchCut": 1, "count": 1},
 {"verb": "watch", "path": "^/api/v1/pods$", "status": 503, "count": 3}]
JSON
taint_loop "$TMP/three-q.json" "$TMP/lost.json"
kc taint node n1 dedicated=other:NoSchedule >/dev/null || fail "kubectl taint"
for _ in $(seq 1 100); do
  sim_ctl GET /_sim/requests | grep -q '/pods/qa/eviction' && break
  sleep 0.1
done
kc label pod qc touched=yes >/dev/null || fail "kubectl label qc"
for _ in $(seq 1 200); do grep -q '"Evicted pod" pod="default/qc"' "$TMP/err" && break; sleep 0.1; done
stop_loop
sleep 0.5 # the server journals a watch when it sees it end
expect_err '"Evicted pod" pod="default/qa"'
for q in qb qc; do
  expect_err '"Error evicting pod" err="not sent: the watch of pods has failed since the cycle read the cluster (HTTP 503: apisim injected fault: HTTP 503); what changed meanwhile is not known, the next cycle decides again" pod="default/'$q'"'
  expect_err '"Evicted pod" pod="default/'$q'"'
done
# the server saw qa's eviction, then qb's and qc's only once the pods' watch was open again
sim_ctl GET /_sim/journal | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
posts = sorted((e["t"], e["path"].split("/")[-2]) for e in items
               if e["method"] == "POST" and e["path"].endswith("/eviction") and e["status"] == 201)
# the watches of pods answered 200, by when they were asked (a watch is journalled when it ends)
opened = sorted(e["t"] for e in items if e["method"] == "GET" and e["path"] == "/api/v1/pods"
                and "watch=" in (e.get("query") or "") and e["status"] == 200)
refused = [e for e in items if e["method"] == "GET" and e["path"] == "/api/v1/pods" and e["status"] == 503]
names = [n for _, n in posts]
assert names[0] == "qa" and sorted(names[1:]) == ["qb", "qc"], names
assert len(refused) == 3 and len(opened) >= 2, (len(refused), opened)
assert all(t > opened[1] for t, _ in posts[1:]), (posts, opened)
' || fail "qb or qc was evicted before the pods' watch was open again"
checks=$((checks + 1))
echo "t0207: $checks checks"
