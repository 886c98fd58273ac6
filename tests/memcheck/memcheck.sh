#!/usr/bin/env bash
# Memory checks of the real binary under valgrind: no invalid read or write, no use of
# uninitialised memory, no leak (definite or possible), in
#   - `simulate` over every example (examples/*/policy.yaml, or kubedescheduler.yaml, + cluster.json),
#     text and JSON
#     output, with and without EvictionsInBackground;
#   - a live one-shot run against the API simulator (discovery, paged lists, evictions, events,
#     a skipped object, a failed list retried), and
#   - a live loop with leader election and the HTTPS /metrics server: two cycles, a scrape over
#     TLS, a plain HTTP request (Go's 400), then SIGTERM (lease released, server stopped);
#   - a live loop on the watch cache while the pods change and their watch misbehaves (a cut
#     stream, a 410 that makes it list again, repeated and reordered events, an object that
#     does not decode, compactions that free the table objects shared), then SIGTERM (watch
#     threads stopped, every object freed).
# Each run is `valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,possible`;
# exit 99 or a report of errors fails the suite. Memory still reachable at exit (libcurl's
# and OpenSSL's global state, the metrics registry, the logger) is not a leak and is not
# counted. Suppressions, if ever needed, live in tests/memcheck/suppressions.supp with the
# reason for each.
#
# Usage: tests/memcheck/memcheck.sh [BINARY]     (default build/descheduler; RelWithDebInfo)
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
bin=${1:-build/descheduler}
command -v valgrind >/dev/null || { echo "memcheck: valgrind not installed (scripts/deps.sh test installs it)" >&2; exit 1; }
[ -x "$bin" ] || { echo "memcheck: no binary at $bin" >&2; exit 1; }
tmp=$(mktemp -d)
sim_pid=
cleanup() { [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null && wait "$sim_pid" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
supp=()
[ -f tests/memcheck/suppressions.supp ] && supp=(--suppressions=tests/memcheck/suppressions.supp)
vg=(valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,possible
    --show-leak-kinds=definite,possible --track-origins=yes --num-callers=30 "${supp[@]}")
failed=0
runs=0
start=$SECONDS

# check NAME EXPECTED-STATUS STATUS LOG: valgrind's verdict on one run
check() {
  runs=$((runs + 1))
  if [ "$3" -eq 99 ] || grep -qE '^==[0-9]+== .' "$4"; then
    echo "FAIL $1: valgrind reports errors (exit $3)"
    grep '^==' "$4" | head -n 60
    failed=1
  elif [ "$3" -ne "$2" ]; then
    echo "FAIL $1: exit $3, expected $2"
    tail -n 20 "$4"
    failed=1
  else
    echo "ok   $1"
  fi
}

# --- simulate over every example -------------------------------------------------------------
for dir in examples/*/; do
  name=$(basename "$dir")
  # a policy file, or a KubeDescheduler CR with the saved Prometheus answer beside it
  if [ -f "$dir/policy.yaml" ]; then
    source=(--policy-config-file "$dir/policy.yaml")
  else
    source=(--kubedescheduler "$dir/kubedescheduler.yaml")
    [ -f "$dir/prometheus.json" ] && source+=(--metrics "$dir/prometheus.json")
  fi
  for args in "-o text" "-o json --feature-gates EvictionsInBackground=true --v 4"; do
    "${vg[@]}" "$bin" simulate "${source[@]}" --snapshot "$dir/cluster.json" $args \
      >"$tmp/out" 2>"$tmp/log"
    check "simulate $name $args" 0 $? "$tmp/log"
  done
done
# bad input takes the error paths (the policy, the snapshot)
"${vg[@]}" "$bin" simulate --policy-config-file tests/data/cli/bad-type.yaml \
  --snapshot examples/kubevirt-rebalance/cluster.json >"$tmp/out" 2>"$tmp/log"
check "simulate, a bad policy" 2 $? "$tmp/log"
"${vg[@]}" "$bin" simulate --policy-config-file examples/kubevirt-rebalance/policy.yaml \
  --snapshot tests/data/cli/bad-quantity.json >"$tmp/out" 2>"$tmp/log"
check "simulate, a bad snapshot" 2 $? "$tmp/log"

# --- live, against the simulator -------------------------------------------------------------
python3 tests/apisim/apisim.py --snapshot examples/kubevirt-rebalance/cluster.json --port 0 \
  --kubeconfig-out "$tmp/kc" --migration-seconds 600 >"$tmp/sim.out" 2>"$tmp/sim.err" &
sim_pid=$!
for _ in $(seq 100); do grep -q '^ready' "$tmp/sim.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^ready' "$tmp/sim.out" || { cat "$tmp/sim.err"; echo "memcheck: the simulator did not start"; exit 1; }
url=$(sed -n 's/.*server: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$tmp/kc" | head -n1)
ctl() { curl -sf -X "$1" -H 'Content-Type: application/json' ${3:+-d "$3"} "$url$2" >/dev/null; }
ctl POST /_sim/load '{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"odd","namespace":"vms"},"spec":{"nodeName":"worker-b","priority":"high","containers":[{"name":"c","image":"i"}]}}]}'
ctl POST /_sim/faults '{"verb":"list","path":"^/api/v1/namespaces$","status":500,"count":1}'
live=(--kubeconfig "$tmp/kc" --policy-config-file examples/kubevirt-rebalance/policy.yaml
      --feature-gates EvictionsInBackground=true --client-connection-qps 200 --client-connection-burst 200)
"${vg[@]}" "$bin" "${live[@]}" --secure-port 0 --v 4 >"$tmp/out" 2>"$tmp/log"
status=$?
check "live one-shot run" 0 $status "$tmp/log"
grep -q '"Skipping an object that cannot be decoded' "$tmp/log" || { echo "FAIL live one-shot run: the bad object was not met"; failed=1; }

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${vg[@]}" "$bin" "${live[@]}" --descheduling-interval 1s --leader-elect --leader-elect-lease-duration 15s \
  --leader-elect-renew-deadline 10s --leader-elect-retry-period 2s --bind-address 127.0.0.1 \
  --secure-port "$port" --v 3 >"$tmp/out" 2>"$tmp/log" &
pid=$!
for _ in $(seq 600); do
  [ "$(grep -c '"Number of evictions/requests"' "$tmp/log")" -ge 2 ] && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
curl -sk --max-time 20 "https://127.0.0.1:$port/metrics" >"$tmp/metrics" || echo "memcheck: the scrape failed"
curl -s --max-time 20 "http://127.0.0.1:$port/healthz" >"$tmp/plain" || true
kill -TERM "$pid" 2>/dev/null
wait "$pid"
status=$?
check "live loop with leader election and /metrics" 0 $status "$tmp/log"
grep -q 'descheduler_loop_duration_seconds_count' "$tmp/metrics" || { echo "FAIL live loop: /metrics was not served"; failed=1; }
grep -q 'Client sent an HTTP request to an HTTPS server.' "$tmp/plain" || { echo "FAIL live loop: plain HTTP was not answered"; failed=1; }

ctl POST /_sim/faults '[{"verb":"watch","path":"^/api/v1/pods$","watchCut":2,"count":1},{"verb":"watch","path":"^/api/v1/pods$","watchExpire":3,"count":1},{"verb":"watch","path":"^/api/v1/pods$","watchDuplicate":true,"watchReorder":true,"count":1}]'
"${vg[@]}" "$bin" "${live[@]}" --descheduling-interval 1s --secure-port 0 --v 4 \
  --watch-cache-compact-bytes 1 >"$tmp/out" 2>"$tmp/log" &
pid=$!
cycles() { grep -c '"Cycle timings"' "$tmp/log"; }
for round in 1 2 3 4; do
  want=$(($(cycles) + 2))
  for _ in $(seq 600); do [ "$(cycles)" -ge "$want" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  ctl POST /_sim/churn "{\"count\": 6, \"seed\": $round}"
  [ "$round" = 2 ] && ctl POST /_sim/load '{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"Pod","metadata":{"name":"odd2","namespace":"vms"},"spec":{"nodeName":"worker-b","priority":"high","containers":[{"name":"c","image":"i"}]}}]}'
done
want=$(($(cycles) + 2))
for _ in $(seq 600); do [ "$(cycles)" -ge "$want" ] && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
kill -TERM "$pid" 2>/dev/null
wait "$pid"
status=$?
check "live loop on the watch cache, its pods changing and their watch misbehaving" 0 $status "$tmp/log"
for line in '"Watch stream broke; opening it again"' '"Listed for the watch cache" kind="Pod" reason="expired"' \
  '"Ignoring a watch event"' '"Skipping an object that cannot be decoded; the cycle goes on without it"' \
  '"Compacted the watch cache"'; do
  grep -q "$line" "$tmp/log" || { echo "FAIL live loop on the watch cache: never logged $line"; failed=1; }
done

echo "memcheck: $runs runs under valgrind in $((SECONDS - start))s"
exit $failed
