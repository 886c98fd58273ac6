#!/usr/bin/env bash
# The built-in KubeVirt example: one bounded rebalance request, as `make demo` runs it.
. "$(dirname "$0")/lib.sh"

run simulate --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json" \
  --feature-gates EvictionsInBackground=true --v 3
expect_status 0
# the seed's grep: classified|removablePods|Eviction in background|Number of evictions
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="overutilized" node="worker-a"'
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="underutilized" node="worker-b"'
expect_err '"Pods on node" node="worker-a" allPods=7 nonRemovablePods=3 removablePods=4'
expect_err '"Eviction in background assumed" pod="vms/virt-launcher-vm-alpha-4f551"'
expect_err '"Number of evictions/requests" totalEvicted=0 evictionRequests=1'
expect_err_count 1 'Eviction in background assumed'
expect_out 'vms/virt-launcher-vm-alpha-4f551'
expect_out 'Totals: evicted=0 requests=1'

# JSON plan: one background request from worker-a; node categories and percentages
run simulate --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json" \
  --feature-gates EvictionsInBackground=true -o json
expect_status 0
python3 - "$TMP/out" <<'PY' || fail "JSON plan differs"
import json, sys
plan = json.load(open(sys.argv[1]))
assert plan["evictions"] == [{"pod": "vms/virt-launcher-vm-alpha-4f551", "node": "worker-a",
                              "profile": "vm-rebalance", "plugin": "LowNodeUtilization",
                              "background": True,
                              "vm": {"vmi": "vms/vm-alpha", "strategy": "LiveMigrate",
                                     "effect": "live-migration", "assumed": False}}], plan["evictions"]
assert plan["totals"] == {"evicted": 0, "requests": 1, "migrations": 0, "evacuations": 0}, plan["totals"]
nodes = {n["name"]: n for n in plan["nodes"]}
assert nodes["worker-a"]["category"] == "overutilized"
assert nodes["worker-b"]["category"] == "underutilized"
assert nodes["control-plane-0"]["category"] == ""  # not selected by the policy's nodeSelector
assert nodes["worker-a"]["usagePercentage"]["memory"] == 61.6
assert nodes["worker-a"]["usagePercentageAfter"]["memory"] < 50
PY

# Without the gate KubeVirt's 429 is an eviction failure, and nothing is requested; the VM
# moves all the same, an evacuation (t0012 follows it through the limits).
run simulate --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json" --v 1
expect_status 0
expect_err '"Error evicting pod" err="error when evicting pod (ignoring) \"virt-launcher-vm-alpha-4f551\": admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied the request: Eviction triggered evacuation of VMI \"vms/vm-alpha\""'
expect_err '"Number of evictions/requests" totalEvicted=0 evictionRequests=0'
expect_out 'Totals: evicted=0 requests=0 migrations=0 evacuations=1'
# --logging-format json: one JSON object per line with ts, caller, msg, v and the keys
run simulate --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json" \
  --feature-gates EvictionsInBackground=true --v 3 --logging-format json -o json
expect_status 0
python3 - "$TMP/err" <<'PY' || fail "JSON log lines"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert all({"ts", "caller", "msg"} <= set(l) for l in lines)
c = [l for l in lines if l["msg"] == "Node has been classified" and l["node"] == "worker-a"][0]
assert c["category"] == "overutilized" and c["plugin"] == "LowNodeUtilization" and c["v"] == 0
assert c["usage"]["memory"] == "38917Mi" and c["usagePercentage"]["memory"] == 61.6
assert any(l["msg"] == "Eviction in background assumed" and l["pod"] == "vms/virt-launcher-vm-alpha-4f551" for l in lines)
PY

# The same snapshot as YAML (`kubectl get ... -o yaml`) gives the same plan.
python3 "$ROOT/tests/cli/json2yaml.py" "$EXAMPLE/cluster.json" >"$TMP/cluster.yaml"
run simulate --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$TMP/cluster.yaml" \
  --feature-gates EvictionsInBackground=true -o json
expect_status 0
expect_out '"evictions":[{"pod":"vms/virt-launcher-vm-alpha-4f551","node":"worker-a","profile":"vm-rebalance","plugin":"LowNodeUtilization","background":true,"vm":{"vmi":"vms/vm-alpha","strategy":"LiveMigrate","effect":"live-migration","assumed":false}}]'
expect_out '"totals":{"evicted":0,"requests":1,"migrations":0,"evacuations":0}'
# The policy is read twice (once before the snapshot, to know whether pod conditions are
# needed): a policy that can be read only once (a pipe) still works, and keeps them.
run simulate --policy-config-file <(cat "$EXAMPLE/policy.yaml") --snapshot "$EXAMPLE/cluster.json" \
  --feature-gates EvictionsInBackground=true -o json --v 3
expect_status 0
expect_out '"totals":{"evicted":0,"requests":1,"migrations":0,"evacuations":0}'
expect_err_count 0 'Ignoring a policy field'
piped=$(sed -n 's/.*"Cycle timings".* model=\([0-9]*\).*/\1/p' "$TMP/err")
# From a file: no plugin of this policy reads pod conditions, so the model holds none; the
# first, quiet read leaves the policy's warnings to the second (one each).
sed 's/^      - LowNodeUtilization$/      - LowNodeUtilization\n      disabled: [RemoveDuplicates]/' \
  "$EXAMPLE/policy.yaml" >"$TMP/policy-disabled.yaml"
run simulate --policy-config-file "$TMP/policy-disabled.yaml" --snapshot "$EXAMPLE/cluster.json" \
  --feature-gates EvictionsInBackground=true -o json --v 3
expect_status 0
expect_err_count 1 'Ignoring a policy field'
expect_out '"totals":{"evicted":0,"requests":1,"migrations":0,"evacuations":0}'
plain=$(sed -n 's/.*"Cycle timings".* model=\([0-9]*\).*/\1/p' "$TMP/err")
checks=$((checks + 1))
[ -n "$plain" ] && [ -n "$piped" ] && [ "$plain" -lt "$piped" ] ||
  fail "model bytes: $plain from the file, $piped from a pipe (expected fewer from the file)"
# ...also when DefaultEvictor names a priority class, which only the snapshot holds
sed 's/^      nodeFit: true$/      nodeFit: true\n      priorityThreshold:\n        name: kubevirt-cluster-critical/' \
  "$EXAMPLE/policy.yaml" >"$TMP/policy-named.yaml"
grep -q 'name: kubevirt-cluster-critical' "$TMP/policy-named.yaml" || fail "the named-threshold policy was not written"
run simulate --policy-config-file "$TMP/policy-named.yaml" --snapshot "$EXAMPLE/cluster.json" \
  --feature-gates EvictionsInBackground=true -o json --v 3
expect_status 0
named=$(sed -n 's/.*"Cycle timings".* model=\([0-9]*\).*/\1/p' "$TMP/err")
checks=$((checks + 1))
[ -n "$named" ] && [ "$named" -eq "$plain" ] ||
  fail "model bytes: $named with a named priority threshold, $plain without (expected the same)"
echo "t0001: $checks checks"
