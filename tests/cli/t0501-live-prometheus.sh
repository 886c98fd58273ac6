#!/usr/bin/env bash
# Actual utilization from a real Prometheus, live against the API simulator. Three KubeVirt
# workers run three VMs each and request the same; by usage worker-1 is hot (node-exporter
# and kube-state-metrics series backfilled with promtool, the project's recording rules
# evaluated by Prometheus). The policy is what the OpenShift operator renders for
# KubeVirtRelieveAndMigrate: the k3 query, deviation thresholds 0/10, evictionLimits.node 2,
# at most 5 evictions per cycle and 2 per node.
# - the recorded k3 value is 1 for worker-1 and 0 for the others;
# - every way the query can fail gives upstream's message in one line and evicts nothing:
#   unreachable, a matrix, a value above 1, no instance label, 401; a node without sample
#   stops the plugin when it is more than usageSamples.maxMissingFraction of the nodes, else
#   it is left out and the rest is balanced;
# - bearer tokens: the in-cluster service-account token (re-read when it changes, TLS
#   verified against ca.crt) and a Secret's token, through an HTTPS proxy that wants one;
# - the real run requests two live migrations of VMs on worker-1, as the limits allow.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
. "$(dirname "$0")/promlib.sh"
K3=descheduler:node:linear_amplified_ideal_point_positive_distance:k3:avg1m

sim_start "$ROOT/tests/data/usage/cluster.json" --migration-seconds 600
cat >"$TMP/spec.json" <<'JSON'
{"nodes": {
  "worker-1": {"busy": 0.9, "psi_cpu": 0.3, "mem_used": 0.8, "psi_mem": 0.1},
  "worker-2": {"busy": 0.3, "psi_cpu": 0.05, "mem_used": 0.4},
  "worker-3": {"busy": 0.2, "psi_cpu": 0.0, "mem_used": 0.3},
  "cp-1": {"busy": 0.5, "psi_cpu": 0.0, "mem_used": 0.5, "role": "control-plane"}}}
JSON
prom_backfill "$TMP/spec.json" "$TMP/tsdb"
prom_start "$TMP/tsdb"
prom_wait_series "$K3" 4

# the recording rules over the backfilled series
prom_query "$K3" >"$TMP/k3.json"
k3() { json_eval "$TMP/k3.json" "[float(s['value'][1]) for s in d['data']['result'] if s['metric']['instance'] == '$1'][0]"; }
checks=$((checks + 1)); [ "$(k3 worker-1)" = 1.0 ] || fail "k3 of worker-1 is $(k3 worker-1), expected 1"
checks=$((checks + 1)); [ "$(k3 worker-2)" = 0.0 ] || fail "k3 of worker-2 is $(k3 worker-2), expected 0"
checks=$((checks + 1)); [ "$(k3 worker-3)" = 0.0 ] || fail "k3 of worker-3 is $(k3 worker-3), expected 0"
prom_query descheduler:combined_utilization_and_pressure:avg1m >"$TMP/combined.json"
checks=$((checks + 1))
[ "$(json_eval "$TMP/combined.json" "round([float(s['value'][1]) for s in d['data']['result'] if s['metric']['instance'] == 'worker-1'][0], 6)")" = 0.9 ] ||
  fail "combined utilization of worker-1 is not 0.9"

# the policy the operator renders for KubeVirtRelieveAndMigrate; AUTH: extra provider lines
kv_policy() { # URL QUERY [AUTH]
  cat >"$TMP/policy.yaml" <<YAML
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
nodeSelector: kubevirt.io/schedulable=true
maxNoOfPodsToEvictTotal: 5
maxNoOfPodsToEvictPerNode: 2
metricsProviders:
- source: Prometheus
  prometheus:
    url: $1
${3:-}
profiles:
- name: KubeVirtRelieveAndMigrate
  pluginConfig:
  - name: LowNodeUtilization
    args:
      evictableNamespaces:
        exclude: [kube-system, kubevirt]
      evictionLimits:
        node: 2
      metricsUtilization:
        prometheus:
          query: '$2'
        source: Prometheus
      targetThresholds:
        MetricResource: 10
      thresholds:
        MetricResource: 0
      useDeviationThresholds: true
  - name: DefaultEvictor
    args:
      evictLocalStoragePods: true
      ignorePvcPods: false
      noEvictionPolicy: Mandatory
      podProtections: {}
  plugins:
    balance:
      enabled: [LowNodeUtilization]
    filter:
      enabled: [DefaultEvictor]
YAML
}
run_kv() { run_live --policy-config-file "$TMP/policy.yaml" --feature-gates EvictionsInBackground=true --v 2 "$@"; }

# expect_refused QUERY MESSAGE [URL]: one error line with MESSAGE, nothing evicted
expect_refused() {
  kv_policy "${3:-$PROM_URL}" "$1"
  run_kv
  expect_status 0
  expect_err "$2"
  expect_err_count 1 'plugin \"LowNodeUtilization\" finished with error'
  expect_err_count 0 'Eviction in background assumed'
  expect_err_count 0 '"Evicted pod'
}
closed=$(free_port)
expect_refused "$K3" "error getting node usage: unable to capture prometheus metrics: Post \\\"http://127.0.0.1:$closed/api/v1/query\\\": dial tcp 127.0.0.1:$closed: connect: connection refused" "http://127.0.0.1:$closed"
expect_refused 'node_cpu_seconds_total{mode="idle"}[1m]' 'error getting node usage: expected query results to be of type \"vector\", got \"matrix\" instead'
expect_refused 'label_replace(vector(1.5), "instance", "worker-2", "", "")' 'error getting node usage: the collected metrics sample for \"worker-2\" has value 1.5 outside of <0; 1> interval'
expect_refused "$K3"'{instance!="worker-3"}' "error getting node usage: 1 of 3 nodes have no usable usage sample, more than maxMissingFraction 0.1 allows (worker-3: no sample for the node in the query's answer); nothing is evicted"
expect_refused 'vector(0.5)' "error getting node usage: the collected metrics sample is missing 'instance' key"
expect_refused 'rate(node_cpu_seconds_total[' 'error getting node usage: unable to capture prometheus metrics: bad_data: invalid parameter \"query\"'

# bearer tokens through an HTTPS proxy that wants one
printf 'proxy-token-2\n' >"$TMP/proxy-token"
python3 "$ROOT/tests/tools/authproxy.py" --upstream "$PROM_URL" --tls-dir "$TMP/proxy-tls" \
  --token-file "$TMP/proxy-token" >"$TMP/proxy.out" 2>"$TMP/proxy.err" &
track_pid $!
for i in $(seq 1 100); do grep -q '^ready' "$TMP/proxy.out" 2>/dev/null && break; sleep 0.1; done
PROXY=https://127.0.0.1:$(sed -n 's/^ready //p' "$TMP/proxy.out")
mkdir -p "$TMP/sa" "$TMP/sa-noca"
cp "$TMP/proxy-tls/ca.crt" "$TMP/sa/ca.crt"
printf 'wrong\n' >"$TMP/sa/token"
printf 'proxy-token-2\n' >"$TMP/sa-noca/token"
incluster() { env KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=443 DS_SERVICEACCOUNT_DIR="$1" "${@:2}"; }

# in a pod: the service-account token; a wrong one is a 401
kv_policy "$PROXY" "$K3"
incluster "$TMP/sa" "$DESCHEDULER" --kubeconfig "$SIM_KC" --secure-port 0 --policy-config-file "$TMP/policy.yaml" --v 2 >"$TMP/out" 2>"$TMP/err"; status=$?
expect_status 0
expect_err 'error getting node usage: unable to capture prometheus metrics: client_error: client error: 401'
expect_err_count 1 'error getting node usage'
# TLS is verified: without the service-account CA bundle the proxy's certificate is refused
incluster "$TMP/sa-noca" "$DESCHEDULER" --kubeconfig "$SIM_KC" --secure-port 0 --policy-config-file "$TMP/policy.yaml" --v 2 >"$TMP/out" 2>"$TMP/err"; status=$?
expect_status 0
expect_err "unable to capture prometheus metrics: Post \\\"$PROXY/api/v1/query\\\": tls: failed to verify certificate: x509: certificate signed by unknown authority"
# the token file is read again when it changes (kubelet rotates it): a running descheduler
# goes from 401 to answers without a restart
# (env, not the incluster function: $! must be the descheduler itself, so that kill stops it)
env KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT=443 DS_SERVICEACCOUNT_DIR="$TMP/sa" \
  "$DESCHEDULER" --kubeconfig "$SIM_KC" --secure-port 0 --policy-config-file "$TMP/policy.yaml" \
  --descheduling-interval 1s --dry-run --v 2 >"$TMP/loop.out" 2>"$TMP/loop.err" &
loop=$!
track_pid $loop
for i in $(seq 1 100); do grep -qs 'client error: 401' "$TMP/loop.err" && break; sleep 0.1; done
checks=$((checks + 1)); grep -q 'client error: 401' "$TMP/loop.err" || fail "no 401 with the wrong token"
printf 'proxy-token-2\n' >"$TMP/sa/token.new" && mv "$TMP/sa/token.new" "$TMP/sa/token"
for i in $(seq 1 100); do grep -qs 'category="overutilized" node="worker-1"' "$TMP/loop.err" && break; sleep 0.1; done
kill $loop; wait $loop 2>/dev/null
checks=$((checks + 1)); grep -q 'category="overutilized" node="worker-1"' "$TMP/loop.err" ||
  { tail -n 5 "$TMP/loop.err" >&2; fail "the rotated token was not used"; }

# the token of a Secret (authToken.secretReference), read through the API
kc create secret generic prometheus-token -n kube-system --from-literal=prometheusAuthToken=proxy-token-2 >/dev/null ||
  fail "kubectl create secret"
AUTH='    authToken:
      secretReference:
        namespace: kube-system
        name: prometheus-token'
kv_policy "$PROXY" "$K3" "$AUTH"
env DS_SERVICEACCOUNT_DIR="$TMP/sa" "$DESCHEDULER" --kubeconfig "$SIM_KC" --secure-port 0 --policy-config-file "$TMP/policy.yaml" --dry-run --v 2 >"$TMP/out" 2>"$TMP/err"; status=$?
expect_status 0
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="overutilized" node="worker-1" usage={"MetricResource":"100"}'
expect_err_count 0 'error getting node usage'
# a Secret that is not there: no client, as upstream
kv_policy "$PROXY" "$K3" "${AUTH/prometheus-token/no-such-secret}"
env DS_SERVICEACCOUNT_DIR="$TMP/sa" "$DESCHEDULER" --kubeconfig "$SIM_KC" --secure-port 0 --policy-config-file "$TMP/policy.yaml" --dry-run --v 2 >"$TMP/out" 2>"$TMP/err"; status=$?
expect_status 0
expect_err '"unable to get the Prometheus authentication secret" err="GET /api/v1/namespaces/kube-system/secrets/no-such-secret: HTTP 404'
expect_err 'error initializing usage client: prometheus client not initialized'
checks=$((checks + 1)); ! grep -q 'Authorization\|proxy-token' "$TMP/err" "$TMP/loop.err" || fail "a token reached the log"

kc get vmim -A -o json >"$TMP/vmim.json"
expect_vmims() { checks=$((checks + 1)); [ "$(json_eval "$TMP/vmim.json" 'len(d["items"])')" = "$1" ] || fail "expected $1 VMIMs"; }
expect_vmims 0

# the real run: worker-1 is overutilized by the query, the others underutilized; two of its
# VMs are asked to migrate (evictionLimits.node 2, maxNoOfPodsToEvictPerNode 2)
# a node without a sample is left out (usageSamples.maxMissingFraction 0.5 lets one of three
# go) and the rest is balanced: worker-1 still gives up VMs (a dry run here)
kv_policy "$PROM_URL" "$K3"'{instance!="worker-3"}'
sed -i 's/^kind: DeschedulerPolicy$/kind: DeschedulerPolicy\nusageSamples: {maxMissingFraction: 0.5}/' "$TMP/policy.yaml"
run_kv --dry-run --v 3
expect_status 0
expect_err '"Nodes left out of this cycle: their usage samples cannot be trusted" plugin="LowNodeUtilization" ExtensionPoint="Balance" leftOut=1 nodes=3 first="worker-3" reason="no sample for the node in the query'"'"'s answer"'
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="overutilized" node="worker-1"'
expect_err_count 0 'node="worker-3" usage='
expect_err_count 2 '"Evicted pod in dry run mode" pod="vms/virt-launcher-vm-1'
# the samples' times were asked for (maxSampleAge, by default 2m): fresh, nobody else left out
expect_err_count 0 'reason="the sample is'
# ... and they are what Prometheus says: every recorded sample is older than 1ms
kv_policy "$PROM_URL" "$K3"
sed -i 's/^kind: DeschedulerPolicy$/kind: DeschedulerPolicy\nusageSamples: {maxSampleAge: 1ms}/' "$TMP/policy.yaml"
run_kv --dry-run --v 3
expect_status 0
expect_err 'error getting node usage: 3 of 3 nodes have no usable usage sample, more than maxMissingFraction 0.1 allows (worker-1: the sample is'
expect_err 'old, older than maxSampleAge 1ms); nothing is evicted'

kv_policy "$PROM_URL" "$K3"
run_kv --v 3
expect_status 0
expect_err '"Assessed average usage" plugin="LowNodeUtilization" ExtensionPoint="Balance" MetricResource="33.33%"'
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="overutilized" node="worker-1" usage={"MetricResource":"100"} usagePercentage={"MetricResource":100}'
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="underutilized" node="worker-2"'
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="underutilized" node="worker-3"'
expect_err_count 2 '"Eviction in background assumed" pod="vms/virt-launcher-vm-1'
expect_err '"Max number of evictions per node per plugin reached" plugin="LowNodeUtilization" ExtensionPoint="Balance" limit=2'
expect_err '"Number of evictions/requests" totalEvicted=0 evictionRequests=2'
kc get vmim -A -o json >"$TMP/vmim.json"
expect_vmims 2
checks=$((checks + 1))
[ "$(json_eval "$TMP/vmim.json" 'sorted(i["spec"]["vmiName"] for i in d["items"])')" = "['vm-1a', 'vm-1b']" ] ||
  fail "the migrations are not of worker-1's VMs"
echo "t0501: $checks checks"
