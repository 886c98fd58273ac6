#!/usr/bin/env bash
# --tls-min-version, --tls-cipher-suites and --tls-curve-preferences on the HTTPS /healthz
# listener of the real command (upstream's SecureServingOptions, docs/security.md), checked
# with real clients: a version, a cipher suite or a group the flags leave out fails the
# handshake, one they allow is served. A value upstream refuses exits 2 with upstream's text
# and contacts nothing; with --secure-port 0 the flags are not read, as upstream's ApplyTo.
# The API server is a loopback port that accepts connections and never answers, so the
# command serves /healthz while its first request waits.
. "$(dirname "$0")/lib.sh"
for tool in curl openssl python3; do
  command -v "$tool" >/dev/null || { echo "t0111: $tool not installed" >&2; exit 1; }
done
pol=$EXAMPLE/policy.yaml

# the silent API server: one line in $TMP/api.log per connection it accepts
python3 -c '
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
held = []
while True:
    c, _ = s.accept()
    held.append(c)
    with open(sys.argv[1], "a") as log:
        log.write("connection\n")
' "$TMP/api.log" >"$TMP/api.port" &
for _ in $(seq 50); do [ -s "$TMP/api.port" ] && break; sleep 0.1; done
api_port=$(cat "$TMP/api.port")
[ -n "$api_port" ] || { echo "t0111: the silent API server did not start" >&2; exit 1; }
cat >"$TMP/kc" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:$api_port", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
EOF

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# serve ARGS...: the command with ARGS, its listener on 127.0.0.1:$port once it accepts
serve() {
  port=$(free_port)
  "$DESCHEDULER" --kubeconfig "$TMP/kc" --policy-config-file "$pol" --client-connection-timeout 30s \
    --bind-address 127.0.0.1 --secure-port "$port" "$@" >"$TMP/out" 2>"$TMP/err" &
  pid=$!
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || fail "the command exited before serving ($*)"
    sleep 0.05
  done
  fail "nothing listens on $port after 5s ($*)"
}
stop() { kill -KILL "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }

# handshake ARGS...: openssl s_client against the listener; $cipher is the suite negotiated,
# "" when the handshake failed; $temp_key the key exchange group
handshake() {
  openssl s_client -connect "127.0.0.1:$port" "$@" </dev/null >"$TMP/hs" 2>&1
  local rc=$?
  cipher=$(sed -n 's/^New, [^,]*, Cipher is //p' "$TMP/hs" | head -n1)
  temp_key=$(sed -n 's/^Server Temp Key: //p' "$TMP/hs" | head -n1)
  if [ "$rc" -ne 0 ] || [ "$cipher" = "(NONE)" ]; then cipher=""; fi
}
# expect_served CIPHER ARGS...: the handshake succeeds with CIPHER
expect_served() {
  local want=$1
  shift
  handshake "$@"
  checks=$((checks + 1))
  [ "$cipher" = "$want" ] || { cp "$TMP/hs" "$TMP/out"; fail "s_client $*: negotiated '$cipher', expected $want"; }
}
# expect_refused ARGS...: the handshake fails
expect_refused() {
  handshake "$@"
  checks=$((checks + 1))
  [ -z "$cipher" ] || { cp "$TMP/hs" "$TMP/out"; fail "s_client $*: negotiated $cipher, expected no handshake"; }
}
# fetch CURL-ARGS...: GET /healthz; $code is the HTTP status, 000 when there was no answer
fetch() {
  code=$(curl -sS --max-time 5 -o "$TMP/body" -w '%{http_code}' "$@" "https://127.0.0.1:$port/healthz" 2>"$TMP/curl.err")
}
expect_fetch() { # CODE CURL-ARGS...
  local want=$1
  shift
  fetch "$@"
  checks=$((checks + 1))
  [ "$code" = "$want" ] || fail "curl $*: HTTP $code, expected $want ($(cat "$TMP/curl.err"))"
}

# --- upstream's default: TLS 1.2 and 1.3 ---------------------------------------------------
serve
expect_served TLS_AES_128_GCM_SHA256 -tls1_3 -ciphersuites TLS_AES_128_GCM_SHA256
expect_served ECDHE-ECDSA-AES128-GCM-SHA256 -tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256
expect_refused -tls1_1 -cipher 'DEFAULT@SECLEVEL=0'
stop

# --- --tls-min-version=VersionTLS13: a TLS 1.2 client is refused ---------------------------
serve --tls-min-version=VersionTLS13
expect_refused -tls1_2
expect_served TLS_AES_256_GCM_SHA384 -tls1_3
expect_fetch 000 -k --tlsv1.2 --tls-max 1.2
expect_fetch 200 -k --tlsv1.3
checks=$((checks + 1)); [ "$(cat "$TMP/body")" = ok ] || fail "/healthz over TLS 1.3: $(cat "$TMP/body")"
# the flag is no longer said to have no effect; one that has none still is
checks=$((checks + 1))
! grep -q 'Flag accepted for compatibility but has no effect' "$TMP/err" || fail "a warning says --tls-min-version has no effect"
stop
serve --tls-min-version VersionTLS12 --tls-sni-cert-key a.crt,a.key
expect_err '"Flag accepted for compatibility but has no effect in this build" flag="tls-sni-cert-key"'
expect_served ECDHE-ECDSA-AES256-GCM-SHA384 -tls1_2
stop

# --- --tls-min-version=VersionTLS10: the old versions too ----------------------------------
serve --tls-min-version=VersionTLS10
expect_served ECDHE-ECDSA-AES256-SHA -tls1 -cipher 'ECDHE-ECDSA-AES256-SHA@SECLEVEL=0'
expect_served ECDHE-ECDSA-AES256-SHA -tls1_1 -cipher 'ECDHE-ECDSA-AES256-SHA@SECLEVEL=0'
stop

# --- --tls-cipher-suites: the listed suite only (the self-signed certificate is ECDSA) ------
serve --tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256
expect_served ECDHE-ECDSA-AES128-GCM-SHA256 -tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256
expect_refused -tls1_2 -cipher ECDHE-ECDSA-AES256-GCM-SHA384
expect_refused -tls1_2 -cipher ECDHE-ECDSA-CHACHA20-POLY1305
expect_served ECDHE-ECDSA-AES128-GCM-SHA256 -tls1_2 # what a client offering many gets
# TLS 1.3: the suite of the listed cipher, not the other two
expect_served TLS_AES_128_GCM_SHA256 -tls1_3
expect_refused -tls1_3 -ciphersuites TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256
stop

# an RSA certificate, two ECDHE-RSA suites, a client that verifies it
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=tls-flags-test \
  -addext 'subjectAltName=DNS:localhost,IP:127.0.0.1' \
  -keyout "$TMP/tls.key" -out "$TMP/tls.crt" 2>"$TMP/err" || fail "openssl req"
serve --tls-cert-file "$TMP/tls.crt" --tls-private-key-file "$TMP/tls.key" \
  --tls-cipher-suites TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 \
  --tls-cipher-suites TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384
expect_served ECDHE-RSA-AES256-GCM-SHA384 -tls1_2 -cipher ECDHE-RSA-AES256-GCM-SHA384
expect_served ECDHE-RSA-AES128-GCM-SHA256 -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256
expect_refused -tls1_2 -cipher ECDHE-RSA-CHACHA20-POLY1305
expect_refused -tls1_2 -cipher AES128-GCM-SHA256
expect_refused -tls1_3 -ciphersuites TLS_CHACHA20_POLY1305_SHA256
expect_fetch 200 --cacert "$TMP/tls.crt" --tlsv1.2 --tls-max 1.2 --ciphers ECDHE-RSA-AES128-GCM-SHA256
expect_fetch 000 --cacert "$TMP/tls.crt" --tlsv1.2 --tls-max 1.2 --ciphers ECDHE-RSA-CHACHA20-POLY1305
stop

# --- --tls-curve-preferences: the listed groups only ---------------------------------------
serve --tls-curve-preferences=24
expect_served TLS_AES_256_GCM_SHA384 -tls1_3 -groups P-384
checks=$((checks + 1)); [ "$temp_key" = "ECDH, secp384r1, 384 bits" ] || fail "P-384 gave temp key '$temp_key'"
expect_refused -tls1_3 -groups X25519
expect_refused -tls1_3 -groups P-256:P-521
expect_served TLS_AES_256_GCM_SHA384 -tls1_3 -groups X25519:P-256:P-384
checks=$((checks + 1)); [ "$temp_key" = "ECDH, secp384r1, 384 bits" ] || fail "the listed group was not chosen: '$temp_key'"
stop
serve --tls-curve-preferences 29,23
expect_served TLS_AES_256_GCM_SHA384 -tls1_3 -groups X25519
checks=$((checks + 1)); [ "$temp_key" = "X25519, 253 bits" ] || fail "X25519 gave temp key '$temp_key'"
expect_refused -tls1_3 -groups P-384
stop

# --- values upstream refuses: exit 2, its text, nothing contacted ---------------------------
: >"$TMP/api.log"
refused() { # MESSAGE ARGS...: the command with ARGS exits 2 with MESSAGE
  local msg=$1
  shift
  run --kubeconfig "$TMP/kc" --policy-config-file "$pol" "$@"
  expect_status 2
  expect_err "$msg"
  expect_out_empty
}
refused 'descheduler: --tls-min-version: unknown tls version "VersionTLS14"' --tls-min-version VersionTLS14
expect_err 'possible values: VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13'
refused "descheduler: --tls-cipher-suites: Cipher suite TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA384 not supported or doesn't exist" \
  --tls-cipher-suites TLS_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA384
expect_err 'did you mean TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256?'
refused 'descheduler: invalid argument "X25519" for "--tls-curve-preferences" flag: strconv.ParseInt: parsing "X25519": invalid syntax' \
  --tls-curve-preferences X25519
refused 'descheduler: --tls-curve-preferences: duplicate curve preference 23' --tls-curve-preferences 23,24,23
refused 'descheduler: --tls-curve-preferences: curve preference 30 is not supported by the current Go version' \
  --tls-curve-preferences 30
# what upstream serves but GnuTLS cannot serve exactly
refused 'so this list would also enable TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384, which it does not name' \
  --tls-cipher-suites TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384
checks=$((checks + 1))
[ ! -s "$TMP/api.log" ] || fail "a refused flag still contacted the API server ($(wc -l <"$TMP/api.log") connections)"

# --- --secure-port 0: no listener, and the flags are not read (upstream's ApplyTo) ---------
run --kubeconfig "$TMP/kc" --policy-config-file "$pol" --secure-port 0 --client-connection-timeout 1s \
  --tls-min-version VersionTLS14
expect_status 1
checks=$((checks + 1))
! grep -q 'unknown tls version' "$TMP/err" || fail "--tls-min-version was read without a listener"

echo "t0111: $checks checks"
