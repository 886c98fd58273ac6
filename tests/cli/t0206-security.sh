#!/usr/bin/env bash
# Security basics of the API client: plain http:// to a host that is not loopback is refused
# unless the kubeconfig says insecure-skip-tls-verify AND --allow-insecure-http is given; an
# exec credential plugin that hangs is killed after --client-connection-exec-timeout with a
# message saying so; a response slower than --client-connection-timeout fails the request.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
pol=$EXAMPLE/policy.yaml

# kubeconfig FILE SERVER CLUSTER-LINES [USER-LINES]
kubeconfig() {
  printf 'apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: %s\n%s\nusers:\n- name: u\n  user:\n%s\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n' \
    "$2" "$3" "${4:-    token: t}" >"$1"
}

# --- plain HTTP -----------------------------------------------------------------------------
far=http://192.0.2.10:8080 # TEST-NET-1: never routed; refusals must not even try to connect
kubeconfig "$TMP/http.yaml" "$far" ""
kubeconfig "$TMP/http-insecure.yaml" "$far" "    insecure-skip-tls-verify: true"
msg="kubeconfig $TMP/http.yaml: server \"$far\" is plain HTTP to a host that is not loopback: the credentials and every object would cross the network unencrypted. Use https://, or (for a test cluster) set insecure-skip-tls-verify: true on the cluster and pass --allow-insecure-http"
for args in "" "--allow-insecure-http"; do
  run --kubeconfig "$TMP/http.yaml" --policy-config-file "$pol" --secure-port 0 $args
  expect_status 2
  expect_err "$msg"
  expect_err_lines 1
done
run --kubeconfig "$TMP/http-insecure.yaml" --policy-config-file "$pol" --secure-port 0
expect_status 2
expect_err "set insecure-skip-tls-verify: true on the cluster (it is set) and pass --allow-insecure-http"
# the workstation commands have no --allow-insecure-http: https:// is the way out they name
for cmd in check "verify --vmi vms/vm-a --from n" pause; do
  run $cmd --kubeconfig "$TMP/http-insecure.yaml"
  expect_status 2
  expect_err "descheduler ${cmd%% *}: kubeconfig $TMP/http-insecure.yaml: server \"$far\" is plain HTTP to a host that is not loopback: the credentials and every object would cross the network unencrypted. Use https:// (this command takes plain HTTP to a loopback address only)"
done
run simulate --from-cluster --kubeconfig "$TMP/http.yaml" --policy-config-file "$pol"
expect_status 2
expect_err "Use https:// (this command takes plain HTTP to a loopback address only)"

# both given: the client goes ahead. A closed port on this host's own non-loopback address
# answers at once, which shows the request was made.
addr=$(hostname -I 2>/dev/null | tr ' ' '\n' | grep -E '^[0-9]+\.' | grep -v '^127\.' | head -n1)
if [ -n "$addr" ]; then
  closed=$(python3 -c 'import socket; s=socket.socket(); s.bind(("0.0.0.0", 0)); print(s.getsockname()[1])')
  kubeconfig "$TMP/http-ok.yaml" "http://$addr:$closed" "    insecure-skip-tls-verify: true"
  run --kubeconfig "$TMP/http-ok.yaml" --policy-config-file "$pol" --secure-port 0 --allow-insecure-http
  expect_status 1
  expect_err "Get \\\"http://$addr:$closed/version\\\": dial tcp $addr:$closed: connect: connection refused"
else
  skip_part "the allowed-http case: this host has no non-loopback IPv4 address"
fi
# loopback needs neither (the simulator's own kubeconfig is plain http://127.0.0.1)
sim_start "$EXAMPLE/cluster.json"
run_live --policy-config-file "$pol" --dry-run --v 1
expect_status 0
expect_err '"Number of evictions/requests"'

# --- exec credential plugin that never answers ----------------------------------------------
cat >"$TMP/hang.sh" <<EOF
#!/bin/sh
echo \$\$ >"$TMP/hang.pid"
exec sleep 30
EOF
chmod +x "$TMP/hang.sh"
kubeconfig "$TMP/exec.yaml" "$SIM_URL" "" "    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ./hang.sh
      interactiveMode: Never"
start=$(date +%s%N)
run --kubeconfig "$TMP/exec.yaml" --policy-config-file "$pol" --secure-port 0 --client-connection-exec-timeout 1s
took=$((($(date +%s%N) - start) / 1000000))
expect_status 2
expect_err "descheduler: getting credentials: exec: executable $TMP/hang.sh did not exit within 1s (killed; a credential plugin must print its ExecCredential and exit, see --client-connection-exec-timeout)"
checks=$((checks + 1)); [ "$took" -lt 5000 ] || fail "the hung plugin held the run for ${took} ms"
checks=$((checks + 1)); ! kill -0 "$(cat "$TMP/hang.pid")" 2>/dev/null || fail "the plugin still runs"
# a plugin that prints its credential but does not exit is killed as well
cat >"$TMP/linger.sh" <<'EOF'
#!/bin/sh
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}\n'
exec sleep 30 >/dev/null
EOF
chmod +x "$TMP/linger.sh"
sed 's|./hang.sh|./linger.sh|' "$TMP/exec.yaml" >"$TMP/linger.yaml"
run --kubeconfig "$TMP/linger.yaml" --policy-config-file "$pol" --secure-port 0 --client-connection-exec-timeout 1s
expect_status 2
expect_err "exec: executable $TMP/linger.sh did not exit within 1s (killed;"
run --kubeconfig "$TMP/exec.yaml" --policy-config-file "$pol" --client-connection-exec-timeout 0s
expect_status 2
expect_err "descheduler: --client-connection-exec-timeout must be positive"

# --- a response slower than the request timeout ----------------------------------------------
sim_ctl POST /_sim/faults '{"path": "^/version$", "latency": 5, "count": 1}' >/dev/null
start=$(date +%s%N)
run_live --policy-config-file "$pol" --client-connection-timeout 1s
took=$((($(date +%s%N) - start) / 1000000))
expect_status 1
expect_err "Get \\\"$SIM_URL/version\\\": net/http: request canceled (Client.Timeout exceeded while awaiting headers)"
checks=$((checks + 1)); [ "$took" -lt 4000 ] || fail "the request was not cut at 1s (${took} ms)"
echo "t0206: $checks checks"
