#!/usr/bin/env bash
# The seed scenario live, against the API simulator: two workers, VMs crowded on worker-a,
# the bounded vm-rebalance policy, EvictionsInBackground on. One run requests one live
# migration; a second run while it is pending requests nothing new; once the simulator
# completes the migration the VM runs on worker-b with the same UID and the old launcher
# has ended in phase Succeeded.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"

sim_start "$EXAMPLE/cluster.json" --migration-seconds 600
uid_before=$(kc get vmi vm-alpha -n vms -o jsonpath='{.metadata.uid}')

run_live --policy-config-file "$EXAMPLE/policy.yaml" --feature-gates EvictionsInBackground=true --v 3
expect_status 0
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="overutilized" node="worker-a"'
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="underutilized" node="worker-b"'
expect_err '"Pods on node" node="worker-a" allPods=7 nonRemovablePods=3 removablePods=4'
expect_err '"Eviction in background assumed" pod="vms/virt-launcher-vm-alpha-4f551"'
expect_err '"Number of evictions/requests" totalEvicted=0 evictionRequests=1'

# KubeVirt's side: one evacuation migration, the launcher marked, the VMI marked
kc get vmim -n vms -o json >"$TMP/vmim.json" || fail "kubectl get vmim"
checks=$((checks + 1))
[ "$(json_eval "$TMP/vmim.json" 'len(d["items"])')" = 1 ] || fail "expected one VMIM"
expect_file_eval() { checks=$((checks + 1)); [ "$(json_eval "$1" "$2")" = "$3" ] || fail "$2 != $3"; }
expect_file_eval "$TMP/vmim.json" 'd["items"][0]["metadata"]["name"].startswith("kubevirt-evacuation-")' True
expect_file_eval "$TMP/vmim.json" 'd["items"][0]["spec"]["vmiName"]' vm-alpha
# KubeVirt's VMI controller marks the launcher after its webhook answered: at once in the
# simulator, a moment later on a real API server (LIVE_BACKEND=realapi)
for i in $(seq 1 50); do
  kc get pod virt-launcher-vm-alpha-4f551 -n vms -o json >"$TMP/pod.json"
  [ "$(json_eval "$TMP/pod.json" '(d["metadata"].get("annotations") or {}).get("descheduler.alpha.kubernetes.io/eviction-in-progress")')" = true ] && break
  sleep 0.2
done
expect_file_eval "$TMP/pod.json" 'd["metadata"]["annotations"]["descheduler.alpha.kubernetes.io/eviction-in-progress"]' true

# second run while the migration is pending: the cache is rebuilt from the annotations
run_live --policy-config-file "$EXAMPLE/policy.yaml" --feature-gates EvictionsInBackground=true --v 3
expect_status 0
expect_err '"Eviction in background detected. Adding pod to the cache." pod="vms/virt-launcher-vm-alpha-4f551"'
# VMSafety sees the VMI marked for evacuation and does not ask again
expect_err '"VM safety: not requesting the eviction of this launcher" plugin="VMSafety" ExtensionPoint="Filter" pod="vms/virt-launcher-vm-alpha-4f551" vmi="vms/vm-alpha" rule="skipMigrating" reason="the VMI has a migration in flight: '
expect_err_count 0 'Eviction in background assumed'
expect_err '"Number of evictions/requests" totalEvicted=0 evictionRequests=1'
kc get vmim -n vms -o json >"$TMP/vmim.json"
expect_file_eval "$TMP/vmim.json" 'len(d["items"])' 1

# complete the migration and verify it as an operator would
sim_ctl POST /_sim/migrations/advance '{"seconds": 700}' >/dev/null || fail "advance migrations"
kc get vmi vm-alpha -n vms -o json >"$TMP/vmi.json"
expect_file_eval "$TMP/vmi.json" 'd["status"]["nodeName"]' worker-b
expect_file_eval "$TMP/vmi.json" 'd["metadata"]["uid"]' "$uid_before"
expect_file_eval "$TMP/vmi.json" 'd["status"].get("evacuationNodeName", "")' ""
kc get vmim -n vms -o json >"$TMP/vmim.json"
expect_file_eval "$TMP/vmim.json" 'd["items"][0]["status"]["phase"]' Succeeded
kc get pod virt-launcher-vm-alpha-4f551 -n vms -o json >"$TMP/pod.json"
expect_file_eval "$TMP/pod.json" 'd["status"]["phase"]' Succeeded

# a third run sees the finished request leave the cache and a balanced enough cluster
run_live --policy-config-file "$EXAMPLE/policy.yaml" --feature-gates EvictionsInBackground=true --v 3
expect_status 0
expect_err_count 0 'Eviction in background already requested'
echo "t0200: $checks checks"
