#!/usr/bin/env bash
# One bad object never stops a cycle for the rest: a pod and a PDB the decoder cannot read
# are skipped with an error line naming them, counted in descheduler_objects_skipped_total
# (once per version read: the loop runs on the watch cache, which reads each object once),
# and the cycle still evicts what the rest of the cluster calls for. simulate, given the same
# objects in a file, refuses the file (exit 2: the user's input is wrong).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
sim_start "$DATA/../live/pdb-cluster.json"
kc delete pdb web -n shop >/dev/null || fail "delete pdb"
bad='{"apiVersion":"v1","kind":"List","items":[
 {"apiVersion":"v1","kind":"Pod","metadata":{"name":"odd","namespace":"shop"},
  "spec":{"nodeName":"n2","containers":[{"name":"c","image":"i","resources":{"requests":{"cpu":"lots"}}}]},
  "status":{"phase":"Running"}},
 {"apiVersion":"policy/v1","kind":"PodDisruptionBudget","metadata":{"name":"odd","namespace":"shop"},
  "spec":{"selector":{"matchLabels":{"app":5}}}}]}'
sim_ctl POST /_sim/load "$bad" >/dev/null || fail "load the bad objects"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

"$DESCHEDULER" --kubeconfig "$SIM_KC" --policy-config-file "$DATA/../live/pdb-policy.yaml" \
  --descheduling-interval 1s --client-connection-qps 50 --v 1 --bind-address 127.0.0.1 --secure-port "$port" \
  >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 1 100); do
  [ "$(grep -c '"Number of evictions/requests"' "$TMP/err")" -ge 2 ] && break
  sleep 0.1
done
curl -sk "https://127.0.0.1:$port/metrics" >"$TMP/metrics.txt" || fail "scrape /metrics"
kill -TERM "$pid"
wait "$pid"
status=$?
expect_status 0
expect_err '"Skipping an object that cannot be decoded; the cycle goes on without it" err="spec.containers[0].resources.requests.cpu: invalid quantity \"lots\": expected a number such as 100m, 1.5, 512Mi or 2G" kind="Pod" object="shop/odd"'
expect_err '"Skipping an object that cannot be decoded; the cycle goes on without it" err="spec.selector.matchLabels.app: expected a string, got an integer" kind="PodDisruptionBudget" object="shop/odd"'
expect_err_count 0 'Failed to read the cluster state'
# the rest of the cluster was read and acted on
expect_err '"Evicted pod" pod="shop/web-6d4b9-0"'
m=$TMP/metrics.txt
checks=$((checks + 1))
grep -Eq '^descheduler_objects_skipped_total\{kind="Pod"\} 1$' "$m" || fail "the skipped pod is not counted once in /metrics"
checks=$((checks + 1))
grep -Eq '^descheduler_objects_skipped_total\{kind="PodDisruptionBudget"\} 1$' "$m" || fail "the skipped PDB is not counted once in /metrics"
checks=$((checks + 1))
promtool check metrics <"$m" 2>&1 | grep -q descheduler_objects_skipped && fail "promtool finds fault with descheduler_objects_skipped_total"

# simulate: the same objects in a snapshot file are the user's error
sim_ctl GET /_sim/state >"$TMP/state.json" || fail "read the state"
run simulate --policy-config-file "$DATA/../live/pdb-policy.yaml" --snapshot "$TMP/state.json"
expect_status 2
expect_err '(Pod shop/odd): spec.containers[0].resources.requests.cpu: invalid quantity "lots"'
echo "t0205: $checks checks"
