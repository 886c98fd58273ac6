#!/usr/bin/env bash
# The kube client (src/kube) against the API simulator over HTTPS, through the kubeget
# driver: bearer token, client certificates, an exec plugin, in-cluster config, a rotating
# token file, a wrong CA, Retry-After retries and their bound, truncated bodies and resets,
# the rate limit, and that the token never reaches stderr at any --v.
. "$(dirname "$0")/lib.sh"

KUBEGET=${KUBEGET:-$(dirname "$DESCHEDULER")/tests/kubeget}
[ -x "$KUBEGET" ] || { echo "t0100: the kubeget driver is not built ($KUBEGET)" >&2; exit 1; }
TOKEN="t0100-bearer-$$-$RANDOM$RANDOM"

python3 "$ROOT/tests/apisim/apisim.py" --snapshot "$ROOT/tests/apisim/data/cluster.json" \
  --port 0 --tls-dir "$TMP/tls" --token "$TOKEN" --kubeconfig-out "$TMP/sim.kubeconfig" \
  >"$TMP/sim.out" 2>"$TMP/sim.err" &
SIM=$!
trap 'kill "$SIM" 2>/dev/null; wait "$SIM" 2>/dev/null; rm -rf "$TMP"' EXIT
for _ in $(seq 100); do
  grep -q '^ready' "$TMP/sim.out" 2>/dev/null && break
  kill -0 "$SIM" 2>/dev/null || break
  sleep 0.1
done
grep -q '^ready' "$TMP/sim.out" || { cat "$TMP/sim.err" >&2; echo "t0100: simulator did not start" >&2; exit 1; }
PORT=$(sed -n 's|.*server: "https://127.0.0.1:\([0-9]*\)".*|\1|p' "$TMP/sim.kubeconfig")
SERVER=https://127.0.0.1:$PORT
NODES="Get \"$SERVER/api/v1/nodes\""

# kget ARGS...: runs the driver like lib.sh's run
kget() {
  "$KUBEGET" "$@" >"$TMP/out" 2>"$TMP/err"
  status=$?
}
# sim METHOD PATH [BODY]: a control request to the simulator (must succeed)
sim() {
  "$KUBEGET" --kubeconfig "$TMP/sim.kubeconfig" -X "$1" ${3:+-d "$3"} "$2" >"$TMP/sim.last" 2>&1 ||
    { cat "$TMP/sim.last" >&2; echo "t0100: simulator control $1 $2 failed" >&2; exit 1; }
}
# kubeconfig FILE CLUSTER-LINES USER-LINES: one context, cluster c, user u
kubeconfig() {
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: %s\n%s\nusers:\n- name: u\n  user:\n%s\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n' \
    "$SERVER" "$2" "$3" >"$1"
}
now_ms() { echo $(($(date +%s%N) / 1000000)); }
no_token_in_err() { checks=$((checks + 1)); ! grep -qF -- "$TOKEN" "$TMP/err" || fail "stderr shows the token"; }

CA="    certificate-authority: tls/ca.crt"
kubeconfig "$TMP/token.yaml" "$CA" "    token: $TOKEN"
kubeconfig "$TMP/wrong.yaml" "$CA" "    token: not-the-token"
kubeconfig "$TMP/anon.yaml" "$CA" "    {}"

# --- bearer token: the simulator's own kubeconfig (certificate-authority-data) and ours (a
# relative certificate-authority file); several requests share one connection
kget --kubeconfig "$TMP/sim.kubeconfig" /api/v1/nodes
expect_status 0
expect_out '"kind":"NodeList"'
expect_err 'HTTP 200 GET /api/v1/nodes'
kget --kubeconfig "$TMP/token.yaml" --stats /api/v1/nodes /api/v1/namespaces /api/v1/pods?limit=2
expect_status 0
expect_err 'HTTP 200 GET /api/v1/pods?limit=2'
expect_err 'connections=1'

# --- without the token, or with another one: 401 from the server, not a transport error
kget --kubeconfig "$TMP/wrong.yaml" /api/v1/nodes
expect_status 3
expect_err 'HTTP 401 GET /api/v1/nodes: Unauthorized: Unauthorized'
kget --kubeconfig "$TMP/anon.yaml" /api/v1/nodes
expect_status 3
expect_err 'HTTP 401 GET /api/v1/nodes: Unauthorized: Unauthorized'

# --- TLS: a CA that did not sign the server's certificate is refused, so are the system
# roots; a wrong tls-server-name is refused; insecure-skip-tls-verify skips the check
mkdir -p "$TMP/other"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -keyout "$TMP/other/ca.key" -out "$TMP/other/ca.crt" -subj /CN=not-the-apisim-ca 2>/dev/null
kubeconfig "$TMP/wrongca.yaml" "    certificate-authority: other/ca.crt" "    token: $TOKEN"
kget --kubeconfig "$TMP/wrongca.yaml" /api/v1/nodes
expect_status 1
expect_err "error: $NODES: tls: failed to verify certificate: x509: certificate signed by unknown authority"
expect_out_empty
no_token_in_err
kubeconfig "$TMP/noca.yaml" "" "    token: $TOKEN"
kget --kubeconfig "$TMP/noca.yaml" /api/v1/nodes
expect_status 1
expect_err "error: $NODES: tls: failed to verify certificate: x509: certificate signed by unknown authority"
kubeconfig "$TMP/sni-bad.yaml" "$CA
    tls-server-name: wrong.example" "    token: $TOKEN"
kget --kubeconfig "$TMP/sni-bad.yaml" /api/v1/nodes
expect_status 1
expect_err "error: $NODES: tls: failed to verify certificate: x509: certificate is not valid for the server name"
kubeconfig "$TMP/sni.yaml" "$CA
    tls-server-name: localhost" "    token: $TOKEN"
kget --kubeconfig "$TMP/sni.yaml" /api/v1/nodes
expect_status 0
kubeconfig "$TMP/insecure.yaml" "    insecure-skip-tls-verify: true" "    token: $TOKEN"
kget --kubeconfig "$TMP/insecure.yaml" /api/v1/nodes
expect_status 0

# --- client certificates: files (relative to the kubeconfig) and inline data
kubeconfig "$TMP/cert.yaml" "$CA" "    client-certificate: tls/client.crt
    client-key: tls/client.key"
kget --kubeconfig "$TMP/cert.yaml" /api/v1/nodes
expect_status 0
expect_out '"kind":"NodeList"'
kubeconfig "$TMP/certdata.yaml" "    certificate-authority-data: $(base64 -w0 "$TMP/tls/ca.crt")" \
  "    client-certificate-data: $(base64 -w0 "$TMP/tls/client.crt")
    client-key-data: $(base64 -w0 "$TMP/tls/client.key")"
kget --kubeconfig "$TMP/certdata.yaml" --stats /api/v1/nodes /api/v1/namespaces
expect_status 0
expect_err 'connections=1'
# a certificate the server's CA did not sign: the server ends the handshake
openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=intruder \
  -keyout "$TMP/other/client.key" -out "$TMP/other/client.csr" 2>/dev/null
openssl x509 -req -in "$TMP/other/client.csr" -CA "$TMP/other/ca.crt" -CAkey "$TMP/other/ca.key" \
  -CAcreateserial -days 1 -out "$TMP/other/client.crt" 2>/dev/null
kubeconfig "$TMP/badcert.yaml" "$CA" "    client-certificate: other/client.crt
    client-key: other/client.key"
kget --kubeconfig "$TMP/badcert.yaml" /api/v1/nodes
expect_status 1
expect_err "error: $NODES: "

# --- exec credential plugin: its ExecCredential token is used; it runs once while the
# credential is valid, before every request once it has expired, and again after a 401
cat >"$TMP/plugin.sh" <<'EOF'
#!/bin/sh
echo run >>"$PLUGIN_LOG"
tok=$(cat "$PLUGIN_TOKEN")
if [ -n "${FIRST_TOKEN:-}" ] && [ "$(wc -l <"$PLUGIN_LOG")" -eq 1 ]; then tok=$FIRST_TOKEN; fi
exp=${EXPIRY:+,\"expirationTimestamp\":\"$EXPIRY\"}
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"%s}}\n' "$tok" "$exp"
EOF
chmod +x "$TMP/plugin.sh"
printf '%s\n' "$TOKEN" >"$TMP/plugin.token"
kubeconfig "$TMP/exec.yaml" "$CA" "    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./plugin.sh
      interactiveMode: Never
      env:
      - {name: PLUGIN_LOG, value: $TMP/plugin.log}
      - {name: PLUGIN_TOKEN, value: $TMP/plugin.token}"
runs() { checks=$((checks + 1)); local n; n=$(wc -l <"$TMP/plugin.log"); [ "$n" -eq "$1" ] || fail "plugin ran $n times, expected $1"; }
rm -f "$TMP/plugin.log"
kget --kubeconfig "$TMP/exec.yaml" /api/v1/nodes /api/v1/namespaces /api
expect_status 0
expect_err 'HTTP 200 GET /api'
runs 1
rm -f "$TMP/plugin.log"
EXPIRY=2020-01-01T00:00:00Z kget --kubeconfig "$TMP/exec.yaml" /api/v1/nodes /api/v1/namespaces
expect_status 0
runs 3
rm -f "$TMP/plugin.log"
FIRST_TOKEN=stale kget --kubeconfig "$TMP/exec.yaml" /api/v1/nodes
expect_status 0
expect_err 'HTTP 200 GET /api/v1/nodes'
runs 2
printf '#!/bin/sh\nexit 1\n' >"$TMP/fail.sh" && chmod +x "$TMP/fail.sh"
sed 's|./plugin.sh|./fail.sh|' "$TMP/exec.yaml" >"$TMP/exec-fail.yaml"
kget --kubeconfig "$TMP/exec-fail.yaml" /api/v1/nodes
expect_status 2
expect_err "error: getting credentials: exec: executable $TMP/fail.sh failed with exit code 1"

# --- tokenFile is re-read when it changes (a rotated token); a vanished file keeps the last
printf '%s\n' "$TOKEN" >"$TMP/token.file"
kubeconfig "$TMP/tokenfile.yaml" "$CA" "    tokenFile: token.file"
kget --kubeconfig "$TMP/tokenfile.yaml" --stats /api \
  --sh "echo rotated-away >'$TMP/token.file'" /api \
  --sh "echo '$TOKEN' >'$TMP/token.file'" /api \
  --sh "rm '$TMP/token.file'" /api
expect_status 3
expect_err_count 3 'HTTP 200 GET /api'
expect_err_count 1 'HTTP 401 GET /api'
expect_err "Unable to rotate token: open $TMP/token.file: no such file or directory"
expect_err 'connections=1'

# --- in-cluster config: environment plus the service-account directory
mkdir -p "$TMP/sa" && cp "$TMP/tls/ca.crt" "$TMP/sa/ca.crt" && printf '%s\n' "$TOKEN" >"$TMP/sa/token"
KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$PORT DS_SERVICEACCOUNT_DIR=$TMP/sa \
  kget /api/v1/nodes
expect_status 0
expect_out '"kind":"NodeList"'
env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT "$KUBEGET" /api/v1/nodes >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 2
expect_err 'error: unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined'

# --- Retry-After: 429 and 5xx carrying it are retried after the given seconds ...
sim POST /_sim/faults '{"path":"^/api/v1/nodes$","status":429,"retryAfter":1,"count":2}'
t0=$(now_ms)
kget --kubeconfig "$TMP/token.yaml" --v 4 /api/v1/nodes
elapsed=$(($(now_ms) - t0))
expect_status 0
expect_err_count 1 "Got a Retry-After 1s response for attempt 1 to $SERVER/api/v1/nodes"
expect_err_count 1 "Got a Retry-After 1s response for attempt 2 to $SERVER/api/v1/nodes"
checks=$((checks + 1)); [ "$elapsed" -ge 1900 ] || fail "two Retry-After: 1 answers took only ${elapsed}ms"
# ... at most 10 times (11 requests), then the last answer is returned
sim POST /_sim/faults '{"path":"^/api/v1/nodes$","status":503,"retryAfter":0,"count":100}'
sim DELETE /_sim/requests
kget --kubeconfig "$TMP/token.yaml" --v 4 /api/v1/nodes
expect_status 3
expect_err 'HTTP 503 GET /api/v1/nodes: ServiceUnavailable: apisim injected fault: HTTP 503'
expect_err_count 10 'Got a Retry-After 0s response'
sim GET /_sim/requests
checks=$((checks + 1))
grep -q '"/api/v1/nodes":11[,}]' "$TMP/sim.last" || fail "expected 11 requests: $(cat "$TMP/sim.last")"
sim DELETE /_sim/faults
# ... and without the header nothing is retried
sim POST /_sim/faults '{"path":"^/api/v1/nodes$","status":500,"count":1}'
sim DELETE /_sim/requests
kget --kubeconfig "$TMP/token.yaml" /api/v1/nodes
expect_status 3
expect_err 'HTTP 500 GET /api/v1/nodes: InternalError: apisim injected fault: HTTP 500'
sim GET /_sim/requests
checks=$((checks + 1))
grep -q '"/api/v1/nodes":1[,}]' "$TMP/sim.last" || fail "expected 1 request: $(cat "$TMP/sim.last")"

# --- a truncated body and a reset connection are transport errors
sim POST /_sim/faults '{"path":"^/api/v1/nodes$","truncate":100,"count":1}'
kget --kubeconfig "$TMP/token.yaml" /api/v1/nodes
expect_status 1
expect_err "error: $NODES: unexpected EOF"
sim POST /_sim/faults '{"path":"^/api/v1/nodes$","reset":true,"count":1}'
kget --kubeconfig "$TMP/token.yaml" /api/v1/nodes
expect_status 1
expect_err "error: $NODES: read tcp 127.0.0.1:"
expect_err "->127.0.0.1:$PORT: read: connection reset by peer"
sim DELETE /_sim/faults

# --- the rate limit: burst 1 at 10 qps spaces 6 requests over at least 0.5 s
t0=$(now_ms)
kget --kubeconfig "$TMP/token.yaml" --qps 10 --burst 1 /version /version /version /version /version /version
elapsed=$(($(now_ms) - t0))
expect_status 0
checks=$((checks + 1)); [ "$elapsed" -ge 480 ] || fail "6 requests at qps 10, burst 1 took only ${elapsed}ms"

# --- the token never reaches stderr, at any verbosity, whatever happens
sim POST /_sim/faults '{"path":"^/api/v1/namespaces$","status":429,"retryAfter":0,"count":1}'
for v in 0 1 2 3 4 5 6 7 8 9 10; do
  kget --kubeconfig "$TMP/token.yaml" --v "$v" /api/v1/nodes /api/v1/namespaces /nope
  expect_status 3
  no_token_in_err
  kget --kubeconfig "$TMP/exec.yaml" --v "$v" /api/v1/nodes
  no_token_in_err
  KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=$PORT DS_SERVICEACCOUNT_DIR=$TMP/sa \
    kget --v "$v" /api/v1/nodes
  no_token_in_err
done
kget --kubeconfig "$TMP/token.yaml" --v 7 /api/v1/nodes
expect_err '    Authorization: Bearer <masked>'
kget --kubeconfig "$TMP/token.yaml" --v 9 /api/v1/nodes
expect_err '-H "Authorization: Bearer <masked>"'
expect_err "GET $SERVER/api/v1/nodes 200 OK in "
no_token_in_err

echo "t0100: $checks checks"
