#!/usr/bin/env bash
# The built-in example without EvictionsInBackground (docs/behaviour.md, "Eviction limits"):
# KubeVirt answers each launcher's eviction with 429 "Eviction triggered evacuation" and
# live-migrates the VM; upstream counts that as a failed eviction and asks for the next VM, so
# its policy's maxNoOfPodsToEvictTotal: 1 moves two. Here the evacuation counts against the
# limits: one VM moves, and the plan says so (headline, the entry, totals, -o json, the report,
# the decision record). VMSafety's countEvacuationsAgainstLimits: false is upstream's count, and
# the plan shows the two VMs that move then. A misspelt policy field is ignored, as upstream
# does, with a warning that names the file and the field.
. "$(dirname "$0")/lib.sh"
SIM=(--snapshot "$EXAMPLE/cluster.json")
ALPHA=vms/virt-launcher-vm-alpha-4f551
BRAVO=vms/virt-launcher-vm-bravo-09d27

# --- the example's policy (maxNoOfPodsToEvictTotal: 1), no gate: one VM moves
run simulate --policy-config-file "$EXAMPLE/policy.yaml" "${SIM[@]}" --v 3
expect_status 0
expect_out "Plan (1):"
expect_out "1. $ALPHA         from worker-a             by vm-rebalance/LowNodeUtilization  (evacuation: KubeVirt live-migrates the VM; a failed eviction to upstream, counted against the limits here)"
expect_out "(evacuations: without --feature-gates EvictionsInBackground=true KubeVirt's answer counts as a failed eviction and is not followed across cycles)"
expect_out "Totals: evicted=0 requests=0 migrations=0 evacuations=1"
expect_out "requested=1 limit=3"
# upstream's log lines, then the count, then the limit for the next VM
expect_err "\"Error evicting pod\" err=\"error when evicting pod (ignoring) \\\"virt-launcher-vm-alpha-4f551\\\": admission webhook"
expect_err "\"Evacuation counted against the eviction limits\" pod=\"$ALPHA\""
expect_err '"Error evicting pod" err="maximum number of evicted pods per a descheduling cycle reached" limit=1'
expect_err_count 1 'Eviction triggered evacuation'
expect_err '"Number of evictions/requests" totalEvicted=0 evictionRequests=0'
# the VM's requests leave worker-a in the plan's figures
expect_out "worker-a                 overutilized           cpu   8.45% ->   7.16%  memory  61.60% ->  48.14%"

run simulate --policy-config-file "$EXAMPLE/policy.yaml" "${SIM[@]}" -o json
expect_status 0
python3 - "$TMP/out" <<'PY' || fail "JSON plan without the gate"
import json, sys
plan = json.load(open(sys.argv[1]))
# evictions keeps its meaning (upstream's count: evicted or requested): none
assert plan["evictions"] == [], plan["evictions"]
assert plan["evacuations"] == [{"pod": "vms/virt-launcher-vm-alpha-4f551", "node": "worker-a",
                                "profile": "vm-rebalance", "plugin": "LowNodeUtilization",
                                "counted": True,
                                "vm": {"vmi": "vms/vm-alpha", "strategy": "LiveMigrate",
                                       "effect": "live-migration", "assumed": False}}], plan["evacuations"]
assert plan["totals"] == {"evicted": 0, "requests": 0, "migrations": 0, "evacuations": 1}, plan["totals"]
out = plan["decisions"]["outcomes"]
assert out["requested"] == 1 and out["failed"] == 0 and out["limit"] == 3, out
PY

# explain: the failure upstream logs, then the move; the next VM met the limit
run explain "$ALPHA" --policy-config-file "$EXAMPLE/policy.yaml" "${SIM[@]}"
expect_status 0
expect_out "Pod $ALPHA on node worker-a: requested (KubeVirt live-migrates the VM)."
expect_out "failed by API server: error when evicting pod (ignoring)"
expect_out "requested by KubeVirt: live migration started by the eviction (admission webhook"
expect_out "upstream counts the answer as a failed eviction, this descheduler counts it against the eviction limits"
run explain "$BRAVO" --policy-config-file "$EXAMPLE/policy.yaml" "${SIM[@]}"
expect_status 0
expect_out "stopped by an eviction limit"
expect_out "maximum number of evicted pods per a descheduling cycle reached (1)"

# the report: totals and the move
run simulate --policy-config-file "$EXAMPLE/policy.yaml" "${SIM[@]}" --report "$TMP/plan.html"
expect_status 0
checks=$((checks + 1))
grep -qF '<p id="totals">evicted: 0, requested in background: 0, evacuations: 1, moves: 1</p>' "$TMP/plan.html" ||
  fail "report totals"
checks=$((checks + 1))
grep -qF 'evacuation: KubeVirt live-migrates the VM (a failed eviction to upstream, counted against the limits)' "$TMP/plan.html" ||
  fail "report move"

# --- upstream's count: VMSafety's countEvacuationsAgainstLimits: false moves two VMs
sed 's/^  - name: LowNodeUtilization$/  - name: VMSafety\n    args:\n      countEvacuationsAgainstLimits: false\n  - name: LowNodeUtilization/' \
  "$EXAMPLE/policy.yaml" >"$TMP/upstream.yaml"
grep -q 'countEvacuationsAgainstLimits: false' "$TMP/upstream.yaml" || fail "test setup: the switch was not written"
run simulate --policy-config-file "$TMP/upstream.yaml" "${SIM[@]}" --v 3
expect_status 0
expect_out "Plan (2):"
expect_out "2. $BRAVO         from worker-a             by vm-rebalance/LowNodeUtilization  (evacuation: KubeVirt live-migrates the VM; a failed eviction, not counted against the limits)"
expect_out "Totals: evicted=0 requests=0 migrations=0 evacuations=2"
expect_err_count 0 'Evacuation counted'
expect_err_count 0 'maximum number of evicted pods'
# KubeVirt's own limit (two per node, VMSafety's migrationLimits) is what stops the third
expect_err 'rule="migrationLimits"'
run simulate --policy-config-file "$TMP/upstream.yaml" "${SIM[@]}" -o json
expect_status 0
checks=$((checks + 1))
[ "$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print([(e["pod"], e["counted"]) for e in p["evacuations"]], p["evictions"], p["totals"]["evacuations"])' "$TMP/out")" = \
  "[('vms/virt-launcher-vm-alpha-4f551', False), ('vms/virt-launcher-vm-bravo-09d27', False)] [] 2" ] ||
  fail "JSON plan with upstream's count"

# --- with the gate the move is a request in background, as before: no evacuation
run simulate --policy-config-file "$EXAMPLE/policy.yaml" "${SIM[@]}" --feature-gates EvictionsInBackground=true
expect_status 0
expect_out "Plan (1):"
expect_out "Totals: evicted=0 requests=1 migrations=0 evacuations=0"

# --- a misspelt field: ignored as upstream ignores it, and said on stderr; the run goes on
sed 's/^maxNoOfPodsToEvictTotal:/maxNoOfPodToEvictTotal:/' "$EXAMPLE/policy.yaml" >"$TMP/typo.yaml"
grep -q '^maxNoOfPodToEvictTotal: 1' "$TMP/typo.yaml" || fail "test setup: the typo was not written"
run simulate --policy-config-file "$TMP/typo.yaml" "${SIM[@]}"
expect_status 0
expect_err "\"Ignoring a policy field, as upstream does\" file=\"$TMP/typo.yaml\" field=\"maxNoOfPodToEvictTotal\" reason=\"unknown field\""
expect_err_count 1 'Ignoring a policy field'
expect_out "Plan (1):"
echo "t0012: $checks checks"
