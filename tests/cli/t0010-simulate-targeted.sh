#!/usr/bin/env bash
# Targeted moves offline (docs/vm-safety.md, "Targeted moves" and "Hysteresis"): simulate on the
# built-in example with the runbook's targeted policy. The VM on the overutilized worker-a goes
# to worker-b, the one KubeVirt node with room, as a live migration the cycle chose: "to" in
# -o json, the text plan, totals.migrations, the decision record (explain) with why that node.
# The shipped policy's overutilizedFor holds the move back while the node has just become
# overutilized, and lets it go once the node's annotation says it has been so for long enough.
# A bad value of an option is refused with the field's name.
. "$(dirname "$0")/lib.sh"
POD=vms/virt-launcher-vm-alpha-4f551
SIM=(--snapshot "$EXAMPLE/cluster.json" --feature-gates EvictionsInBackground=true)

run simulate --policy-config-file "$DATA/targeted-policy.yaml" "${SIM[@]}" -o json
expect_status 0
checks=$((checks + 1))
python3 - "$TMP/out" <<'PY' || fail "the plan of the targeted move"
import json, sys
plan = json.load(open(sys.argv[1]))
(e,) = plan["evictions"]
assert (e["pod"], e["node"], e["to"], e["background"]) == ("vms/virt-launcher-vm-alpha-4f551", "worker-a", "worker-b", True), e
assert plan["totals"] == {"evicted": 0, "requests": 0, "migrations": 1, "evacuations": 0}, plan["totals"]
PY
run simulate --policy-config-file "$DATA/targeted-policy.yaml" "${SIM[@]}"
expect_status 0
expect_out "vms/virt-launcher-vm-alpha-4f551         from worker-a             by vm-rebalance/LowNodeUtilization  (live migration to worker-b)"
expect_out "Totals: evicted=0 requests=0 migrations=1"

run explain "$POD" --policy-config-file "$DATA/targeted-policy.yaml" "${SIM[@]}"
expect_status 0
expect_out "live migration to worker-b requested (simulated migration of vm-alpha to worker-b); chosen: worker-b: the lowest usage after the move"

# the same policy without targetedMigration: an eviction, no destination
sed 's/targetedMigration: true/targetedMigration: false/' "$DATA/targeted-policy.yaml" >"$TMP/off.yaml"
run simulate --policy-config-file "$TMP/off.yaml" "${SIM[@]}" -o json
expect_status 0
checks=$((checks + 1))
python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); assert [("to" in e) for e in p["evictions"]] == [False] and p["totals"]["migrations"] == 0, p' \
  "$TMP/out" || fail "targetedMigration false plans an eviction"

# hysteresis: the shipped policy waits for worker-a to have been overutilized for 90s
run simulate --policy-config-file "$ROOT/deploy/policies/vm-rebalance-targeted.yaml" "${SIM[@]}" --v 2
expect_status 0
expect_out "Plan (0):"
expect_err '"Node is overutilized, but not for long enough to give up pods" plugin="LowNodeUtilization" ExtensionPoint="Balance" node="worker-a" overutilizedFor="0s" required="1m30s"'
# ... and moves the VM once the node's annotation says it has been so since long ago
python3 - "$EXAMPLE/cluster.json" "$TMP/annotated.json" <<'PY'
import json, sys
snap = json.load(open(sys.argv[1]))
for o in snap["items"]:
    if o["kind"] == "Node" and o["metadata"]["name"] == "worker-a":
        o["metadata"].setdefault("annotations", {})["descheduler.alpha.kubernetes.io/overutilized-since"] = "2020-01-01T00:00:00Z"
json.dump(snap, open(sys.argv[2], "w"))
PY
run simulate --policy-config-file "$ROOT/deploy/policies/vm-rebalance-targeted.yaml" --snapshot "$TMP/annotated.json" \
  --feature-gates EvictionsInBackground=true
expect_status 0
expect_out "(live migration to worker-b)"

# bad values are refused, naming the field
sed 's/maxInboundPerNode: 2/maxInboundPerNode: 0/' "$DATA/targeted-policy.yaml" >"$TMP/bad.yaml"
run simulate --policy-config-file "$TMP/bad.yaml" "${SIM[@]}"
expect_status 2
expect_err "maxInboundPerNode must be at least 1"
sed 's/minImprovement: 0.5/minImprovement: lots/' "$DATA/targeted-policy.yaml" >"$TMP/bad.yaml"
run simulate --policy-config-file "$TMP/bad.yaml" "${SIM[@]}"
expect_status 2
expect_err "minImprovement"
echo "t0010: $checks checks"
