#!/usr/bin/env bash
# SIGTERM in the middle of a Deployment cycle (on the watch cache): the cycle requests no
# more evictions and the process exits 0 within a couple of seconds. Each pod left would
# otherwise be read again and refused one by one ("not sent: the descheduler is shutting
# down"), long past a pod's termination grace period at cluster scale.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
live_backend_is apisim || skip_script "needs the simulator's slow-request fault"
CLUSTER=$TMP/cluster.json
python3 "$ROOT/bench/gen_cluster.py" --nodes 30 --pods 600 --vms 0 --out "$CLUSTER" || fail "gen_cluster"
sim_start "$CLUSTER"
# every eviction request takes 0.2 s: 600 of them would take two minutes
sim_ctl POST /_sim/faults '{"method": "POST", "path": "/eviction$", "latency": 0.2}' >/dev/null || fail "set the fault"
evictions() { sim_ctl GET /_sim/requests | python3 -c 'import json,sys; print(sum(v for k, v in json.load(sys.stdin)["byPath"].items() if k.endswith("/eviction")))'; }

"$DESCHEDULER" --kubeconfig "$SIM_KC" --secure-port 0 \
  --policy-config-file "$ROOT/tests/data/live/stop-policy.yaml" \
  --descheduling-interval 1m --v 3 >"$TMP/out" 2>"$TMP/err" &
pid=$!
trap 'kill "$pid" 2>/dev/null; cleanup_sims' EXIT
for _ in $(seq 1 300); do
  [ "$(grep -c '"Evicted pod"' "$TMP/err")" -ge 3 ] && break
  sleep 0.1
done
[ "$(grep -c '"Evicted pod"' "$TMP/err")" -ge 3 ] || fail "no evictions under way"
start=$(date +%s.%N)
kill -TERM "$pid"
wait "$pid"
status=$?
took=$(python3 -c "import sys; print('%.1f' % (float(sys.argv[2]) - float(sys.argv[1])))" "$start" "$(date +%s.%N)")
expect_status 0
checks=$((checks + 1))
python3 -c "import sys; sys.exit(float(sys.argv[1]) > 3)" "$took" || fail "took ${took}s to stop"
expect_err_count 1 '"Stopping: this cycle requests no more evictions"'
# a request on its way when the signal came may still be refused by the sink: at most one
checks=$((checks + 1))
[ "$(grep -c 'not sent: the descheduler is shutting down' "$TMP/err")" -le 1 ] || fail "pods were still tried after the signal"
# what was sent is what was logged (the request in flight finished before the exit)
sent=$(evictions)
evicted=$(grep -c '"Evicted pod"' "$TMP/err")
checks=$((checks + 1))
[ "$sent" -eq "$evicted" ] || fail "$sent eviction requests reached the simulator, $evicted logged"
checks=$((checks + 1))
[ "$evicted" -lt 100 ] || fail "$evicted evictions: the cycle went on"
echo "t0212: $checks checks (stopped in ${took}s after $evicted evictions)"
