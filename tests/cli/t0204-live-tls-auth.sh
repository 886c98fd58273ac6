#!/usr/bin/env bash
# Live mode over HTTPS: the server certificate is verified (a wrong CA is refused and nothing
# is evicted), bearer-token and client-certificate auth both work, a missing credential is
# refused, and the token never appears in the logs at any verbosity.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
token=s3cr3t-t0ken-$RANDOM$RANDOM
tls=$TMP/tls
mkdir -p "$tls"
sim_start "$EXAMPLE/cluster.json" --migration-seconds 600 --tls-dir "$tls" --token "$token"
pol=(--policy-config-file "$EXAMPLE/policy.yaml" --feature-gates EvictionsInBackground=true)
kubeconfig() { # FILE CA-FILE [USER-LINES...]
  local f=$1 ca=$2; shift 2
  {
    echo "apiVersion: v1"
    echo "kind: Config"
    echo "clusters: [{name: c, cluster: {server: \"$SIM_URL\", certificate-authority: \"$ca\"}}]"
    echo "contexts: [{name: x, context: {cluster: c, user: u}}]"
    echo "current-context: x"
    echo "users:"
    echo "- name: u"
    echo "  user:"
    for l in "$@"; do echo "    $l"; done
    [ $# -gt 0 ] || echo "    {}"
  } >"$f"
}
evictions() {
  curl -s --cacert "$tls/ca.crt" -H "Authorization: Bearer $token" "$SIM_URL/_sim/requests" |
    python3 -c 'import json,sys; print(sum(v for k, v in json.load(sys.stdin)["byPath"].items() if k.endswith("/eviction")))'
}

# 1. a CA that did not sign the server's certificate: refused, nothing evicted
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout "$TMP/other.key" \
  -out "$TMP/other-ca.crt" -subj /CN=other-ca -days 1 2>/dev/null || fail "openssl"
kubeconfig "$TMP/wrong-ca.yaml" "$TMP/other-ca.crt" "token: \"$token\""
run --kubeconfig "$TMP/wrong-ca.yaml" --secure-port 0 "${pol[@]}"
expect_status 1
expect_err 'x509: certificate signed by unknown authority'
checks=$((checks + 1)); [ "$(evictions)" = 0 ] || fail "evicted through an unverified connection"

# 2. no credential: 401 from the server, nothing evicted
kubeconfig "$TMP/anonymous.yaml" "$tls/ca.crt"
run --kubeconfig "$TMP/anonymous.yaml" --secure-port 0 "${pol[@]}"
checks=$((checks + 1)); [ "$status" -ne 0 ] || fail "ran without credentials"
expect_err 'HTTP 401'
checks=$((checks + 1)); [ "$(evictions)" = 0 ] || fail "evicted without credentials"

# 3. client certificate
kubeconfig "$TMP/cert.yaml" "$tls/ca.crt" "client-certificate: \"$tls/client.crt\"" "client-key: \"$tls/client.key\""
run --kubeconfig "$TMP/cert.yaml" --secure-port 0 "${pol[@]}" --dry-run --v 1
expect_status 0
expect_err '"Number of evictions/requests"'

# 4. bearer token, the real run; at --v 10 the token shows nowhere
kubeconfig "$TMP/token.yaml" "$tls/ca.crt" "token: \"$token\""
run --kubeconfig "$TMP/token.yaml" --secure-port 0 "${pol[@]}" --v 10
expect_status 0
expect_err '"Eviction in background assumed" pod="vms/virt-launcher-vm-alpha-4f551"'
checks=$((checks + 1)); ! grep -qF -- "$token" "$TMP/err" "$TMP/out" || fail "the token appears in the output"
checks=$((checks + 1)); [ "$(evictions)" = 1 ] || fail "expected exactly one eviction request"
for v in 0 4 7 9; do
  run --kubeconfig "$TMP/token.yaml" --secure-port 0 "${pol[@]}" --dry-run --v "$v"
  checks=$((checks + 1)); ! grep -qF -- "$token" "$TMP/err" "$TMP/out" || fail "the token appears at --v $v"
done
echo "t0204: $checks checks"
