#!/usr/bin/env bash
# Deployment mode: a cycle every second. The in-flight live migration counts against the
# limits in every later cycle, so one request is made in all; /metrics, scraped during the
# run, shows the background request and the loop histogram and passes promtool; SIGTERM
# ends the process with 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
sim_start "$EXAMPLE/cluster.json" --migration-seconds 600
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

"$DESCHEDULER" --kubeconfig "$SIM_KC" --policy-config-file "$EXAMPLE/policy.yaml" \
  --feature-gates EvictionsInBackground=true --descheduling-interval 1s --v 3 \
  --bind-address 127.0.0.1 --secure-port "$port" >"$TMP/out" 2>"$TMP/err" &
pid=$!
# wait for four cycles
for _ in $(seq 1 100); do
  [ "$(grep -c '"Number of evictions/requests"' "$TMP/err")" -ge 4 ] && break
  sleep 0.1
done
curl -sk "https://127.0.0.1:$port/metrics" >"$TMP/metrics.txt" || fail "scrape /metrics"
curl -sk "https://127.0.0.1:$port/healthz" >"$TMP/healthz.txt" || fail "GET /healthz"
kill -TERM "$pid"
wait "$pid"
status=$?
expect_status 0
expect_err_count 1 'Eviction in background assumed'
checks=$((checks + 1))
[ "$(grep -c '"Number of evictions/requests" totalEvicted=0 evictionRequests=1' "$TMP/err")" -ge 4 ] || fail "fewer than 4 cycles with one request"
checks=$((checks + 1))
# later cycles see the VMI marked for evacuation and leave it alone (VMSafety's skipMigrating)
[ "$(grep -c '"VM safety: not requesting the eviction of this launcher" plugin="VMSafety" ExtensionPoint="Filter" pod="vms/virt-launcher-vm-alpha-4f551" vmi="vms/vm-alpha" rule="skipMigrating"' "$TMP/err")" -ge 3 ] || fail "later cycles did not skip the pending request"
kc get vmim -n vms -o json >"$TMP/vmim.json"
checks=$((checks + 1)); [ "$(json_eval "$TMP/vmim.json" 'len(d["items"])')" = 1 ] || fail "more than one migration requested"

checks=$((checks + 1)); grep -q '^ok$' "$TMP/healthz.txt" || fail "/healthz is not ok"
m=$TMP/metrics.txt
checks=$((checks + 1))
grep -q '^descheduler_pods_evicted_total{namespace="vms",node="worker-a",profile="vm-rebalance",result="background",strategy="LowNodeUtilization"} 1$' "$m" || fail "no background eviction metric"
checks=$((checks + 1))
grep -q '^descheduler_loop_duration_seconds_count [4-9]' "$m" || grep -q '^descheduler_loop_duration_seconds_count [1-9][0-9]' "$m" || fail "loop histogram count below 4"
checks=$((checks + 1))
grep -q '^descheduler_loop_duration_seconds_bucket{le="0.01"}' "$m" || fail "no loop histogram bucket"
# promtool: no parse error; the only lint findings allowed are upstream's own metric names
# (the deprecated counter without _total, CamelCase build_info labels)
promtool check metrics <"$m" >"$TMP/promtool.txt" 2>&1
prc=$?
checks=$((checks + 1))
[ "$prc" -eq 0 ] || { [ "$prc" -eq 3 ] && ! grep -v -e 'descheduler_pods_evicted counter metrics should have "_total" suffix' \
  -e 'descheduler_build_info label names should be written in .snake_case. not .camelCase.' "$TMP/promtool.txt" | grep -q .; } ||
  { cat "$TMP/promtool.txt" >&2; fail "promtool check metrics failed ($prc)"; }
echo "t0202: $checks checks"
