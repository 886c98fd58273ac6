#!/usr/bin/env bash
# The decision record: for the built-in example, why the one VM was requested, why every other
# pod stayed (each protected pod's evictor texts, VMSafety's reason for the VM that cannot
# migrate, the node that reached its target), bounded by --decision-examples; in text and JSON.
. "$(dirname "$0")/lib.sh"

run simulate --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json" \
  --feature-gates EvictionsInBackground=true -o json
expect_status 0
python3 - "$TMP/out" <<'PY' || fail "decision record differs"
import json, sys
d = json.load(open(sys.argv[1]))["decisions"]
outcomes = d["outcomes"]
assert outcomes["requested"] == 1 and outcomes["evicted"] == 0, outcomes
assert sum(outcomes.values()) == 11, outcomes  # every pod of the snapshot has one outcome
by = {(r["outcome"], r["by"]): r for r in d["reasons"]}
req = by[("requested", "KubeVirt")]
assert req["examples"] == ["vms/virt-launcher-vm-alpha-4f551"], req
assert "Eviction triggered evacuation of VMI \"vms/vm-alpha\"" in req["reason"], req
gpu = by[("rejected", "VMSafety")]
assert gpu["examples"] == ["vms/virt-launcher-vm-gpu-7c362"], gpu
assert gpu["reason"].startswith("requireLiveMigration: KubeVirt would refuse the eviction"), gpu
de = [r for r in d["reasons"] if r["by"] == "DefaultEvictor"]
assert de and all(r["outcome"] == "rejected" for r in de), de
assert any("daemonset pods are protected against eviction" in r["reason"] for r in de), de
tgt = by[("node-at-target", "LowNodeUtilization")]
assert tgt["count"] == 3, tgt
nodes = {n["name"]: n for n in d["nodes"]}
assert nodes["worker-a"]["category"] == "overutilized" and nodes["worker-a"]["inCycle"], nodes
assert not nodes["control-plane-0"]["inCycle"], nodes
assert nodes["worker-a"]["why"] == "memory 61.60% > 50.00%", nodes["worker-a"]
assert nodes["worker-a"]["thresholds"].startswith("low cpu 20.00% memory 30.00% pods 20.00%; high cpu 50.00%"), nodes
assert nodes["worker-b"]["why"].startswith("cpu 2.00% <= 20.00%"), nodes["worker-b"]
PY

# bounded: counts stay, examples go
run simulate --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json" \
  --feature-gates EvictionsInBackground=true -o json --decision-examples 0
expect_status 0
python3 - "$TMP/out" <<'PY' || fail "examples not bounded"
import json, sys
d = json.load(open(sys.argv[1]))["decisions"]
assert all(r["examples"] == [] for r in d["reasons"]), d["reasons"]
assert sum(r["count"] for r in d["reasons"]) == 11
PY

# text: the summary in words
run simulate --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json" \
  --feature-gates EvictionsInBackground=true
expect_status 0
expect_out 'Decisions (pods by outcome): requested=1 rejected=3 node-at-target=3 not-considered=4'
expect_out 'VMSafety: requireLiveMigration: KubeVirt would refuse the eviction: VMI vm-gpu is configured with an eviction strategy but is not live-migratable'
expect_out 'LowNodeUtilization: its node reached the plugin'"'"'s target before this pod'"'"'s turn'

run simulate --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json" --decision-examples -1
expect_status 2
expect_err '--decision-examples must be 0 or more'
# explain: one pod's record in words
run explain vms/virt-launcher-vm-gpu-7c362 --policy-config-file "$EXAMPLE/policy.yaml" \
  --snapshot "$EXAMPLE/cluster.json" --feature-gates EvictionsInBackground=true
expect_status 0
expect_out 'Pod vms/virt-launcher-vm-gpu-7c362 on node worker-a: not evictable.'
expect_out 'Node worker-a: overutilized (memory 61.60% > 50.00%).'
expect_out '[vm-rebalance/LowNodeUtilization] rejected by VMSafety: requireLiveMigration: KubeVirt would refuse the eviction'
run explain vms/virt-launcher-vm-alpha-4f551 --policy-config-file "$EXAMPLE/policy.yaml" \
  --snapshot "$EXAMPLE/cluster.json" --feature-gates EvictionsInBackground=true
expect_status 0
expect_out 'requested in background (KubeVirt live-migrates the VM)'
run explain vms/virt-launcher-vm-bravo-09d27 --policy-config-file "$EXAMPLE/policy.yaml" \
  --snapshot "$EXAMPLE/cluster.json" --feature-gates EvictionsInBackground=true
expect_out 'node-at-target by LowNodeUtilization: its node reached the plugin'
run explain vms/nope --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json"
expect_status 1
expect_err 'descheduler explain: pod vms/nope is not in the snapshot'
run explain nope --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json"
expect_status 2
expect_err 'descheduler explain: "nope": expected a pod as NAMESPACE/NAME'
run explain --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json"
expect_status 2
expect_err 'descheduler explain: name the pod to explain, as NAMESPACE/NAME'
echo "t0005: $checks checks"
