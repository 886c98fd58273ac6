#!/usr/bin/env bash
# simulate --metrics: real-usage plans without a cluster. The inputs are what an operator
# saves: `curl .../api/v1/query?query=...` (a Prometheus answer) and `kubectl get --raw
# /apis/metrics.k8s.io/v1beta1/nodes` and `.../pods` (metrics-server lists, items without a
# kind). Bad files exit 2 naming the file and the field.
. "$(dirname "$0")/lib.sh"
U=$ROOT/tests/data/usage
sim() { run simulate --snapshot "$U/cluster.json" --feature-gates EvictionsInBackground=true "$@"; }

# Prometheus: the KubeVirt profile's query answered by a file
sim --policy-config-file "$U/kubevirt-policy.yaml" --metrics "$U/prometheus-k3.json" -o json --v 1
expect_status 0
expect_out '{"name":"worker-1","category":"overutilized"'
expect_out '{"name":"worker-2","category":"underutilized"'
expect_out '"totals":{"evicted":0,"requests":2,"migrations":0,"evacuations":0}'
expect_out '{"pod":"vms/virt-launcher-vm-1a-'
expect_out '{"pod":"vms/virt-launcher-vm-1b-'

# metrics.k8s.io: NodeMetrics classify, PodMetrics account (one VM is enough)
sim --policy-config-file "$U/metrics-api-policy.yaml" --metrics "$U/nodemetrics.json" --metrics "$U/podmetrics.json" --v 3
expect_status 0
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="overutilized" node="worker-1" usage={"cpu":"7510m","memory":"12645Mi","pods":"4"}'
expect_err '"Updated node usage" node="worker-1" CPU="5010m"'
expect_out 'Totals: evicted=0 requests=1'
# the same policy without NodeMetrics: upstream's message, no plan
sim --policy-config-file "$U/metrics-api-policy.yaml"
expect_status 0
expect_err 'error initializing usage client: metrics client not initialized'
expect_out 'nothing to evict'

# an answer upstream refuses is the plugin's error at run time, not a bad file
printf '%s' '{"status":"success","data":{"resultType":"matrix","result":[]}}' >"$TMP/matrix.json"
sim --policy-config-file "$U/kubevirt-policy.yaml" --metrics "$TMP/matrix.json"
expect_status 0
expect_err 'error getting node usage: expected query results to be of type \"vector\", got \"matrix\" instead'
expect_out 'nothing to evict'
# no Prometheus provider in the policy: the answer is not used, as live
grep -v -e '^metricsProviders:' -e '^- source: Prometheus' -e '^  prometheus:' -e '^    url:' "$U/kubevirt-policy.yaml" >"$TMP/noprovider.yaml"
sim --policy-config-file "$TMP/noprovider.yaml" --metrics "$U/prometheus-k3.json"
expect_status 0
expect_err 'Ignoring a Prometheus response: the policy has no Prometheus metrics provider'
expect_err 'error initializing usage client: prometheus client not initialized'

# bad files: exit 2, the file and the field
printf '%s' '{"status":"success","data":{"resultType":"vector","result":[{"metric":{"instance":"worker-1"},"value":[1,"high"]}]}}' >"$TMP/bad.json"
sim --policy-config-file "$U/kubevirt-policy.yaml" --metrics "$TMP/bad.json"
expect_status 2
expect_err "descheduler simulate: --metrics: $TMP/bad.json: data.result[0].value[1]: \"high\" is not a number"
sim --policy-config-file "$U/kubevirt-policy.yaml" --metrics "$U/kubevirt-policy.yaml"
expect_status 2
expect_err "$U/kubevirt-policy.yaml: items[0]: expected NodeMetrics or PodMetrics"
sim --policy-config-file "$U/kubevirt-policy.yaml" --metrics "$TMP/missing.json"
expect_status 2
expect_err "--metrics: $TMP/missing.json"
sim --policy-config-file "$U/kubevirt-policy.yaml" --metrics "$U/prometheus-k3.json" --metrics "$U/prometheus-k3.json"
expect_status 2
expect_err 'a second Prometheus response'
printf '{"kind":"NodeMetricsList","items":[{"metadata":{"name":"worker-1"},"usage":{"cpu":"lots"}}]}' >"$TMP/badnode.json"
sim --policy-config-file "$U/metrics-api-policy.yaml" --metrics "$TMP/badnode.json"
expect_status 2
expect_err "$TMP/badnode.json: items[0] (NodeMetrics worker-1): usage.cpu"
echo "t0504: $checks checks"
