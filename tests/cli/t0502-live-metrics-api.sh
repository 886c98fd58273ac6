#!/usr/bin/env bash
# Actual utilization from metrics.k8s.io, live against the API simulator (which serves
# NodeMetrics and PodMetrics: the snapshot's PodMetrics say the three VMs on worker-1 use
# 2.5 cores each, while every VM requests 100m). By requests all three workers are nearly
# idle; by usage worker-1 is at 96% CPU. LowNodeUtilization with source KubernetesMetrics
# moves one VM off it: the pod's own PodMetrics usage (2500m) brings worker-1 below 70%.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"

sim_start "$ROOT/tests/data/usage/cluster.json" --migration-seconds 600
policy() { # METRICS-UTILIZATION TOP-LEVEL-LINES
  cat >"$TMP/policy.yaml" <<YAML
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
nodeSelector: kubevirt.io/schedulable=true
$2
profiles:
- name: actual
  pluginConfig:
  - name: DefaultEvictor
    args: {evictLocalStoragePods: true}
  - name: LowNodeUtilization
    args:
      thresholds: {cpu: 20, memory: 60, pods: 20}
      targetThresholds: {cpu: 70, memory: 80, pods: 50}
      evictableNamespaces: {exclude: [kube-system, kubevirt]}
      $1
  plugins:
    balance:
      enabled: [LowNodeUtilization]
YAML
}
run_p() { run_live --policy-config-file "$TMP/policy.yaml" --feature-gates EvictionsInBackground=true --v 3; }

# by requests: every worker is underutilized, nothing to do
policy "" ""
run_p
expect_status 0
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="underutilized" node="worker-1" usage={"cpu":"310m","memory":"13557Mi","pods":"4"}'
expect_err '"All nodes are underutilized, nothing to do here"'

# no metrics collector configured: upstream's message, nothing evicted
policy "metricsUtilization: {source: KubernetesMetrics}" ""
run_p
expect_status 0
expect_err 'error initializing usage client: metrics client not initialized'
expect_err_count 0 'Eviction in background assumed'

# by usage (NodeMetrics): worker-1 is overutilized; PodMetrics say what one VM frees
policy "metricsUtilization: {source: KubernetesMetrics}" "metricsProviders: [{source: KubernetesMetrics}]"
run_p
expect_status 0
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="overutilized" node="worker-1" usage={"cpu":"7510m","memory":"12645Mi","pods":"4"}'
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="underutilized" node="worker-2" usage={"cpu":"910m"'
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="underutilized" node="worker-3" usage={"cpu":"610m"'
expect_err '"Updated node usage" node="worker-1" CPU="5010m" Mem="8549Mi" Pods="3"'
expect_err_count 1 '"Eviction in background assumed" pod="vms/virt-launcher-vm-1'
expect_err '"Number of evictions/requests" totalEvicted=0 evictionRequests=1'
kc get vmim -A -o json >"$TMP/vmim.json"
checks=$((checks + 1)); [ "$(json_eval "$TMP/vmim.json" 'len(d["items"])')" = 1 ] || fail "expected one VMIM"

# the deprecated switch with the deprecated collector: the same source (the pending migration
# is requested again: its launcher is already in the background cache, nothing new)
policy "metricsUtilization: {metricsServer: true}" "metricsCollector: {enabled: true}"
run_p
expect_status 0
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="overutilized" node="worker-1"'
echo "t0502: $checks checks"
