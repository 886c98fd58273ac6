#!/usr/bin/env bash
# The HTTPS /metrics and /healthz server (upstream's cmd/descheduler/app/server.go), through the tests/tools/metricsd driver:
# the serving flags, the exact health texts, the metrics exposition (promtool), DELETE
# /metrics, --disable-metrics, the self-signed and the given certificate, start errors.
. "$(dirname "$0")/lib.sh"
METRICSD=${METRICSD:-$(dirname "$DESCHEDULER")/tests/metricsd}
[ -x "$METRICSD" ] || { echo "t0110: driver not built: $METRICSD" >&2; exit 1; }
for tool in curl openssl promtool; do
  command -v "$tool" >/dev/null || { echo "t0110: $tool not installed" >&2; exit 1; }
done

pids=()
cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT

# serve NAME ARGS...: starts the driver in the background and waits for `ready <port>`;
# sets $pid and $port.
serve() {
  local name=$1 word i
  shift
  "$METRICSD" "$@" >"$TMP/$name.out" 2>"$TMP/$name.err" &
  pid=$!
  pids+=("$pid")
  for i in $(seq 100); do
    if [ -f "$TMP/$name.out" ] && read -r word port <"$TMP/$name.out" && [ "$word" = ready ]; then return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      cp "$TMP/$name.out" "$TMP/out"; cp "$TMP/$name.err" "$TMP/err"
      fail "metricsd $* exited before it was ready"
    fi
    sleep 0.05
  done
  fail "metricsd $* not ready after 5s"
}

# run_driver ARGS...: runs the driver in the foreground (start failures); like lib.sh's run
run_driver() {
  timeout 10 "$METRICSD" "$@" >"$TMP/out" 2>"$TMP/err"
  status=$?
}

# fetch CURL-ARGS... URL: $code = HTTP status (000 when no answer), body in $TMP/out,
# response headers in $TMP/headers, curl's complaints in $TMP/err
fetch() {
  code=$(curl -sS --max-time 5 -D "$TMP/headers" -o "$TMP/out" -w '%{http_code}' "$@" 2>"$TMP/err")
}

expect_code() { checks=$((checks + 1)); [ "$code" = "$1" ] || fail "HTTP status $code, expected $1"; }
# expect_body TEXT: the body is exactly TEXT (printf escapes allowed, e.g. \n)
expect_body() {
  checks=$((checks + 1))
  printf "$1" | cmp -s - "$TMP/out" || fail "body differs from: $1"
}
expect_header() {
  checks=$((checks + 1))
  tr -d '\r' <"$TMP/headers" | grep -qiF -- "$1" || fail "headers lack: $1 ($(cat "$TMP/headers"))"
}
expect_out_lacks() { checks=$((checks + 1)); ! grep -qF -- "$1" "$TMP/out" || fail "stdout has: $1"; }

# promtool_ok: promtool accepts $TMP/out. Exit 3 is lint only; the two lints allowed are
# upstream's own names (metrics/metrics.go), which dashboards depend on: the deprecated twin counter
# without _total and build_info's CamelCase const labels. Parse errors (exit 1) always fail.
promtool_ok() {
  checks=$((checks + 1))
  local rc=0
  promtool check metrics <"$TMP/out" >"$TMP/lint" 2>&1 || rc=$?
  [ "$rc" -eq 0 ] || [ "$rc" -eq 3 ] || { cp "$TMP/lint" "$TMP/err"; fail "promtool exit $rc"; }
  if grep -v -e "^descheduler_build_info label names should be written in 'snake_case' not 'camelCase'\$" \
      -e '^descheduler_pods_evicted counter metrics should have "_total" suffix$' "$TMP/lint" |
      grep -q .; then
    cp "$TMP/lint" "$TMP/err"
    fail "promtool complains"
  fi
}

# served_cert PORT: the certificate the server presents, PEM in $TMP/served.pem
served_cert() {
  openssl s_client -connect "127.0.0.1:$1" </dev/null 2>/dev/null |
    openssl x509 -out "$TMP/served.pem" 2>"$TMP/err" || fail "no certificate served on port $1"
}

# --- self-signed certificate, metrics on, 127.0.0.1 ---------------------------------------
serve a --bind-address 127.0.0.1
url=https://127.0.0.1:$port

fetch -k "$url/healthz"
expect_code 200; expect_body 'ok'
expect_header 'Content-Type: text/plain; charset=utf-8'
expect_header 'X-Content-Type-Options: nosniff'
fetch -k "$url/healthz?verbose"
expect_code 200; expect_body '[+]Descheduler ok\nhealthz check passed\n'
fetch -k "$url/healthz?verbose&exclude=Descheduler&exclude=zeta&exclude=alpha&exclude=zeta"
expect_code 200
expect_body '[+]Descheduler excluded: ok\nwarn: some health checks cannot be excluded: no matches for "alpha","zeta"\nhealthz check passed\n'
fetch -k "$url/healthz?exclude=Descheduler"
expect_code 200; expect_body 'ok'
fetch -k "$url/healthz/Descheduler"
expect_code 200; expect_body 'ok'

fetch -k "$url/metrics"
expect_code 200
expect_header 'Content-Type: text/plain; version=0.0.4; charset=utf-8'
expect_out 'descheduler_pods_evicted_total{namespace="vms",node="worker-a",profile="vm-rebalance",result="background",strategy="LowNodeUtilization"} 1'
expect_out 'descheduler_pods_evicted{namespace="vms",node="worker-a",profile="vm-rebalance",result="background",strategy="LowNodeUtilization"} 1'
expect_out 'descheduler_pods_evicted_total{namespace="team-a",node="node-1",profile="default",result="success",strategy="RemoveDuplicates"} 2'
expect_out 'result="maximum number of evicted pods per node reached"'
expect_out '# TYPE descheduler_loop_duration_seconds histogram'
expect_out 'descheduler_loop_duration_seconds_bucket{le="0.25"} 1'
expect_out 'descheduler_loop_duration_seconds_bucket{le="0.5"} 2'
expect_out 'descheduler_loop_duration_seconds_bucket{le="+Inf"} 2'
expect_out 'descheduler_loop_duration_seconds_count 2'
expect_out 'descheduler_descheduler_loop_duration_seconds_count 2'
expect_out 'descheduler_strategy_duration_seconds_bucket{profile="vm-rebalance",strategy="LowNodeUtilization",le="0.5"} 1'
checks=$((checks + 1))
buckets=$(sed -n 's/^descheduler_loop_duration_seconds_bucket{le="\([^"]*\)"}.*/\1/p' "$TMP/out" | tr '\n' ' ')
[ "$buckets" = "0.01 0.025 0.05 0.1 0.25 0.5 1 2.5 5 10 25 50 100 250 500 +Inf " ] ||
  fail "loop buckets: $buckets"
promtool_ok

fetch -k -X DELETE "$url/metrics"
expect_code 200; expect_body 'metrics reset'
fetch -k "$url/metrics"
expect_code 200
expect_out_lacks 'descheduler_pods_evicted_total{'
expect_out_lacks 'descheduler_strategy_duration_seconds_count{'
expect_out 'descheduler_loop_duration_seconds_count 0'
expect_out '# TYPE descheduler_pods_evicted_total counter'
promtool_ok

for path in / /healthz/ /healthz/Other /metrics/ /debug/pprof/; do
  fetch -k "$url$path"
  expect_code 404; expect_body '404 page not found\n'
done

# HTTPS only: plain HTTP gets what Go's net/http TLS server answers, and nothing is served
for m in GET HEAD POST PUT OPTIONS; do
  fetch -X "$m" "http://127.0.0.1:$port/metrics"
  expect_code 400
  [ "$m" = HEAD ] || expect_body 'Client sent an HTTP request to an HTTPS server.\n'
done
fetch -k "$url/healthz" # TLS clients are served as before
expect_code 200; expect_body 'ok'
# neither TLS nor HTTP: closed without an answer
checks=$((checks + 1))
reply=$(python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"\x00\x01garbage\r\n")
s.settimeout(5)
try:
    print(len(s.recv(100)))
except ConnectionResetError:
    print(0)' "$port")
[ "$reply" = 0 ] || fail "garbage got $reply bytes of answer"

# the in-memory certificate: apiserver-loopback-client for localhost/127.0.0.1, one year
served_cert "$port"
checks=$((checks + 1))
openssl x509 -in "$TMP/served.pem" -noout -subject | grep -q 'CN *= *apiserver-loopback-client$' ||
  fail "self-signed subject: $(openssl x509 -in "$TMP/served.pem" -noout -subject)"
checks=$((checks + 1))
openssl x509 -in "$TMP/served.pem" -noout -ext subjectAltName | grep -q 'DNS:localhost, IP Address:127.0.0.1' ||
  fail "self-signed SAN"
checks=$((checks + 1))
openssl x509 -in "$TMP/served.pem" -noout -checkend $((364 * 86400)) >/dev/null &&
  ! openssl x509 -in "$TMP/served.pem" -noout -checkend $((366 * 86400)) >/dev/null ||
  fail "self-signed certificate is not valid for a year"
fetch --cacert "$TMP/served.pem" "https://localhost:$port/healthz" # verified, name checked
expect_code 200; expect_body 'ok'

# --- start errors (exit 255, as the descheduler) --------------------------------------------
run_driver --bind-address 127.0.0.1 --secure-port "$port"
expect_status 255
expect_err "failed to start secure server: listen tcp 127.0.0.1:$port: bind: address already in use"
run_driver --secure-port "$port" # the 0.0.0.0 wildcard overlaps 127.0.0.1
expect_status 255
expect_err "failed to start secure server: listen tcp 0.0.0.0:$port: bind: address already in use"
run_driver --bind-address 10.0.0.300
expect_status 255
expect_err 'failed to start secure server: invalid bind address "10.0.0.300": not an IP address'
run_driver --tls-cert-file "$TMP/missing.crt" --tls-private-key-file "$TMP/missing.key"
expect_status 255
expect_err "failed to start secure server: open $TMP/missing.crt: no such file or directory"
run_driver --tls-cert-file "$0" --tls-private-key-file "$0"
expect_status 255
expect_err "failed to start secure server: $0: tls: failed to find any PEM data in certificate input"

# --- given certificate files, --disable-metrics, default bind address -----------------------
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=metricsd-test \
  -addext 'subjectAltName=DNS:localhost,IP:127.0.0.1' \
  -keyout "$TMP/tls.key" -out "$TMP/tls.crt" 2>"$TMP/err" || fail "openssl req"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=other \
  -keyout "$TMP/other.key" -out "$TMP/other.crt" 2>"$TMP/err" || fail "openssl req"
run_driver --tls-cert-file "$TMP/tls.crt" --tls-private-key-file "$TMP/other.key"
expect_status 255
expect_err "failed to start secure server: $TMP/tls.crt, $TMP/other.key: tls: private key does not match public key"

serve b --tls-cert-file "$TMP/tls.crt" --tls-private-key-file "$TMP/tls.key" --disable-metrics
served_cert "$port"
checks=$((checks + 1))
openssl x509 -in "$TMP/served.pem" -noout -subject | grep -q 'CN *= *metricsd-test$' ||
  fail "served subject: $(openssl x509 -in "$TMP/served.pem" -noout -subject)"
fetch --cacert "$TMP/tls.crt" "https://localhost:$port/healthz?verbose"
expect_code 200; expect_body '[+]Descheduler ok\nhealthz check passed\n'
fetch --cacert "$TMP/tls.crt" "https://localhost:$port/metrics"
expect_code 404; expect_body '404 page not found\n'
fetch --cacert "$TMP/tls.crt" -X DELETE "https://localhost:$port/metrics"
expect_code 404
fetch --cacert "$TMP/tls.crt" "https://localhost:$port/healthz/Descheduler"
expect_code 200; expect_body 'ok'
# 0.0.0.0 listens dual-stack, as Go's listener, when the host has IPv6 loopback
if grep -q '^0\{31\}1 ' /proc/net/if_inet6 2>/dev/null; then
  fetch -k "https://[::1]:$port/healthz"
  expect_code 200; expect_body 'ok'
fi

# the files are re-read when they change, as upstream's dynamic serving certificate: new
# connections get the new pair within a couple of seconds; a pair that does not load (here a
# certificate whose key is not there yet) keeps the previous one and says so once
kill -TERM "$pid"
wait "$pid"
cp "$TMP/tls.crt" "$TMP/live.crt"; cp "$TMP/tls.key" "$TMP/live.key"
serve r --bind-address 127.0.0.1 --tls-cert-file "$TMP/live.crt" --tls-private-key-file "$TMP/live.key" --v 2
served_cert "$port"
checks=$((checks + 1))
grep -q metricsd-test <(openssl x509 -in "$TMP/served.pem" -noout -subject) || fail "not the first pair"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=rotated \
  -addext 'subjectAltName=DNS:localhost,IP:127.0.0.1' \
  -keyout "$TMP/rot.key" -out "$TMP/rot.crt" 2>"$TMP/err" || fail "openssl req"
cp "$TMP/rot.crt" "$TMP/live.crt.new" && mv "$TMP/live.crt.new" "$TMP/live.crt" # key not yet
sleep 2.5
served_cert "$port"
checks=$((checks + 1))
grep -q metricsd-test <(openssl x509 -in "$TMP/served.pem" -noout -subject) || fail "a half-rotated pair was served"
checks=$((checks + 1))
[ "$(grep -c 'Failed to load the changed serving certificate; the previous one is still served' "$TMP/r.err")" = 1 ] ||
  fail "the failed reload was not said exactly once: $(cat "$TMP/r.err")"
checks=$((checks + 1))
grep -q 'tls: private key does not match public key" name="serving-cert::' "$TMP/r.err" || fail "the reason is missing"
cp "$TMP/rot.key" "$TMP/live.key.new" && mv "$TMP/live.key.new" "$TMP/live.key"
for _ in $(seq 30); do
  served_cert "$port"
  openssl x509 -in "$TMP/served.pem" -noout -subject | grep -q rotated && break
  sleep 0.2
done
checks=$((checks + 1))
grep -q rotated <(openssl x509 -in "$TMP/served.pem" -noout -subject) || fail "the rotated pair is not served"
fetch --cacert "$TMP/rot.crt" "https://localhost:$port/healthz"
expect_code 200; expect_body 'ok'
checks=$((checks + 1))
grep -q "\"Loaded a new cert/key pair\" name=\"serving-cert::$TMP/live.crt::$TMP/live.key\"" "$TMP/r.err" ||
  fail "no reload line: $(cat "$TMP/r.err")"

# SIGTERM: a clean stop
kill -TERM "$pid"
checks=$((checks + 1))
wait "$pid" || fail "metricsd exited $? on SIGTERM"

# --secure-port 0: no server at all
serve c --secure-port 0
checks=$((checks + 1))
[ "$port" = 0 ] || fail "port 0 served on $port"

echo "t0110: $checks checks"
