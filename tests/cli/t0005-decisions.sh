#!/usr/bin/env bash
# The decision record: for the built-in example, why the one VM was requested, why every other
# pod stayed (each protected pod's evictor texts, VMSafety's reason for the VM that cannot
# migrate, the node that reached its target), bounded by --decision-examples; in text and JSON.
# Each node's figures (the usage the plugin compared, thresholds, requested before and after)
# match the plan's. On a small cluster with eviction limits: which limit stopped which pod
# (the policy's per-node and total limits, the plugin's own), in JSON, words and explain.
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
expect_out 'requested (KubeVirt live-migrates the VM)'
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

# the node figures: simulate's plan and its decision record give the same requested
# percentages, and the record adds the usage the plugin compared and the thresholds as numbers
run simulate --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json" \
  --feature-gates EvictionsInBackground=true -o json
expect_status 0
checks=$((checks + 1))
python3 - "$TMP/out" <<'PY' || fail "node figures of the decision record"
import json, sys
plan = json.load(open(sys.argv[1]))
rec = {n["name"]: n for n in plan["decisions"]["nodes"]}
assert len(rec) == len(plan["nodes"]) == 3, rec
for n in plan["nodes"]:
    r = rec[n["name"]]
    assert r["usagePercentage"] == n["usagePercentage"], (r, n)
    assert r["usagePercentageAfter"] == n["usagePercentageAfter"], (r, n)
a = rec["worker-a"]
assert a["usage"] == {"cpu": 8.45, "memory": 61.6, "pods": 6.36}, a
assert a["thresholdPercentages"]["memory"] == {"low": 30.0, "high": 50.0}, a
# the one VM requested in background leaves worker-a: its requests no longer count there
assert a["usagePercentageAfter"]["memory"] < a["usagePercentage"]["memory"], a
assert a["usagePercentageAfter"]["pods"] < a["usagePercentage"]["pods"], a
assert rec["worker-b"]["usage"]["memory"] == 7.73, rec["worker-b"]
# a node outside the cycle has the requested figures only
cp = rec["control-plane-0"]
assert "usage" not in cp and "thresholdPercentages" not in cp and cp["usagePercentage"]["cpu"] == 0.65, cp
PY

# --- eviction limits: which limit stopped which pod ---
# over-a (5 pods, cpu 87.5%) and over-b (5 pods, 75%) are overutilized, under-c takes pods.
# Per node 1, total 2: over-a gives web-a-0, then web-a-1 meets the node limit and the walk
# over over-a ends (web-a-2..4 get no turn); over-b gives web-b-0, then web-b-1 meets the
# total limit and the plugin stops.
LIM=$DATA/limits-cluster.json
limits_policy() { # POLICY-LEVEL-YAML PLUGIN-ARGS-YAML
  cat <<YAML
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
$1
profiles:
- name: balance
  pluginConfig:
  - name: LowNodeUtilization
    args:
      thresholds: {cpu: 20, memory: 20, pods: 20}
      targetThresholds: {cpu: 50, memory: 50, pods: 50}
$2
  plugins:
    balance:
      enabled: [LowNodeUtilization]
YAML
}
limits_policy "maxNoOfPodsToEvictPerNode: 1
maxNoOfPodsToEvictTotal: 2" "" >"$TMP/limits.yaml"
run simulate --policy-config-file "$TMP/limits.yaml" --snapshot "$LIM" -o json --v 1
expect_status 0
expect_err '"Error evicting pod" err="maximum number of evicted pods per node reached" limit=1 node="over-a"'
expect_err '"Error evicting pod" err="maximum number of evicted pods per a descheduling cycle reached" limit=2'
checks=$((checks + 1))
python3 - "$TMP/out" <<'PY' || fail "limit outcomes in the decision record"
import json, sys
plan = json.load(open(sys.argv[1]))
assert [e["pod"] for e in plan["evictions"]] == ["shop/web-a-0", "shop/web-b-0"], plan["evictions"]
d = plan["decisions"]
assert d["outcomes"]["evicted"] == 2 and d["outcomes"]["limit"] == 8, d["outcomes"]
assert d["outcomes"]["not-considered"] == 1 and sum(d["outcomes"].values()) == 11, d["outcomes"]
lim = {r["reason"]: r for r in d["reasons"] if r["outcome"] == "limit"}
node = lim.pop("maximum number of evicted pods per node reached (1)")
assert node["by"] == "limits" and node["count"] == 4, node
assert node["examples"] == ["shop/web-a-1", "shop/web-a-2", "shop/web-a-3"], node
total = lim.pop("maximum number of evicted pods per a descheduling cycle reached (2)")
assert total["by"] == "limits" and total["count"] == 4, total
assert total["examples"] == ["shop/web-b-1", "shop/web-b-2", "shop/web-b-3"], total
assert not lim, lim  # no other limit text
nodes = {n["name"]: n for n in d["nodes"]}
assert nodes["over-a"]["category"] == "overutilized" and nodes["over-a"]["why"] == "cpu 87.50% > 50.00%", nodes
assert nodes["over-a"]["usage"]["cpu"] == 87.5 and nodes["over-a"]["usagePercentageAfter"]["cpu"] == 70.0, nodes
PY
# the same in words
run simulate --policy-config-file "$TMP/limits.yaml" --snapshot "$LIM"
expect_status 0
expect_out 'Decisions (pods by outcome): evicted=2 limit=8 not-considered=1'
expect_out 'limits: maximum number of evicted pods per node reached (1)'
expect_out 'limits: maximum number of evicted pods per a descheduling cycle reached (2)'
# explain: the pod that met the node limit, and one the total limit left without a turn
run explain shop/web-a-1 --policy-config-file "$TMP/limits.yaml" --snapshot "$LIM"
expect_status 0
expect_out 'Pod shop/web-a-1 on node over-a: stopped by an eviction limit.'
expect_out 'Node over-a: overutilized (cpu 87.50% > 50.00%).'
expect_out 'Usage the plugin compared: cpu 87.50% memory 31.25% pods 4.55%.'
expect_out '  1. [balance/LowNodeUtilization] limit by limits: maximum number of evicted pods per node reached (1)'
expect_out_lines 5
run explain shop/web-b-3 --policy-config-file "$TMP/limits.yaml" --snapshot "$LIM"
expect_status 0
expect_out 'Pod shop/web-b-3 on node over-b: stopped by an eviction limit.'
expect_out '  1. [balance/LowNodeUtilization] limit by limits: maximum number of evicted pods per a descheduling cycle reached (2)'
# the plugin's own limit (evictionLimits.node), with no policy limit: one pod per node
limits_policy "" "      evictionLimits: {node: 1}" >"$TMP/plugin-limit.yaml"
run simulate --policy-config-file "$TMP/plugin-limit.yaml" --snapshot "$LIM" -o json
expect_status 0
checks=$((checks + 1))
python3 - "$TMP/out" <<'PY' || fail "the plugin's limit in the decision record"
import json, sys
plan = json.load(open(sys.argv[1]))
assert [e["pod"] for e in plan["evictions"]] == ["shop/web-a-0", "shop/web-b-0"], plan["evictions"]
lim = [r for r in plan["decisions"]["reasons"] if r["outcome"] == "limit"]
assert len(lim) == 1, lim
assert lim[0]["by"] == "LowNodeUtilization" and lim[0]["reason"] == "evictionLimits.node of the plugin reached (1)", lim
assert lim[0]["count"] == 8, lim
PY
run explain shop/web-b-4 --policy-config-file "$TMP/plugin-limit.yaml" --snapshot "$LIM"
expect_status 0
expect_out '  1. [balance/LowNodeUtilization] limit by LowNodeUtilization: evictionLimits.node of the plugin reached (1)'
echo "t0005: $checks checks"
