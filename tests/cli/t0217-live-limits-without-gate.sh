#!/usr/bin/env bash
# A policy's limits hold in effect without EvictionsInBackground, live against the simulator's
# KubeVirt (docs/behaviour.md, "Eviction limits"): the example's policy allows one eviction per
# cycle, and its cycle asks for two VMs on the hot worker. KubeVirt answers the first with 429
# "Eviction triggered evacuation" and starts a live migration; upstream counts that as a failed
# eviction and asks for the second, so two VMs move. Here the evacuation counts against the
# limit: the server receives one eviction and one migration is started. With VMSafety's
# countEvacuationsAgainstLimits: false (upstream's count) the server receives two and two VMs
# move; the decision record of each run (--decisions-file) says how many evacuations there were.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"

# eviction requests the server received since its counters were last cleared
evictions() { sim_ctl GET /_sim/requests | python3 -c 'import json,sys; print(sum(v for k, v in json.load(sys.stdin)["byPath"].items() if k.endswith("/eviction")))'; }
# the VMIs KubeVirt started a migration for, sorted (the list is in the order of the migrations'
# generated names)
migrations() { kc get vmim -n vms -o jsonpath='{range .items[*]}{.spec.vmiName}{"\n"}{end}' | sort | tr '\n' ' '; }
expect_eq() { checks=$((checks + 1)); [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"; }
totals() { json_eval "$1" 'd["totals"]'; }

# --- the example's policy (maxNoOfPodsToEvictTotal: 1), no feature gate: one VM moves
sim_start "$EXAMPLE/cluster.json" --migration-seconds 600
sim_ctl DELETE /_sim/requests >/dev/null
run_live --policy-config-file "$EXAMPLE/policy.yaml" --v 3 --decisions-file "$TMP/counted.jsonl"
expect_status 0
expect_err '"Error evicting pod" err="error when evicting pod (ignoring) \"virt-launcher-vm-alpha-4f551\": admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied the request: Eviction triggered evacuation of VMI \"vms/vm-alpha\""'
expect_err '"Evacuation counted against the eviction limits" pod="vms/virt-launcher-vm-alpha-4f551"'
expect_err '"Error evicting pod" err="maximum number of evicted pods per a descheduling cycle reached" limit=1'
expect_err_count 0 'Eviction in background'
expect_eq "$(evictions)" 1 "eviction requests the server received"
expect_eq "$(migrations)" "vm-alpha " "migrations KubeVirt started"
expect_eq "$(totals "$TMP/counted.jsonl")" "{'evicted': 0, 'requests': 0, 'migrations': 0, 'evacuations': 1}" \
  "the decision record's totals"

# --- upstream's count, on a fresh cluster: two VMs move
sed 's/^  - name: LowNodeUtilization$/  - name: VMSafety\n    args:\n      countEvacuationsAgainstLimits: false\n  - name: LowNodeUtilization/' \
  "$EXAMPLE/policy.yaml" >"$TMP/upstream.yaml"
grep -q 'countEvacuationsAgainstLimits: false' "$TMP/upstream.yaml" || fail "test setup: the switch was not written"
sim_start "$EXAMPLE/cluster.json" --migration-seconds 600
sim_ctl DELETE /_sim/requests >/dev/null
run_live --policy-config-file "$TMP/upstream.yaml" --v 3 --decisions-file "$TMP/upstream.jsonl"
expect_status 0
expect_err_count 2 'denied the request: Eviction triggered evacuation of VMI'
expect_err_count 0 'Evacuation counted'
expect_err_count 0 'maximum number of evicted pods'
expect_eq "$(evictions)" 2 "eviction requests the server received (upstream's count)"
expect_eq "$(migrations)" "vm-alpha vm-bravo " "migrations KubeVirt started (upstream's count)"
expect_eq "$(totals "$TMP/upstream.jsonl")" "{'evicted': 0, 'requests': 0, 'migrations': 0, 'evacuations': 2}" \
  "the decision record's totals (upstream's count)"
echo "t0217: $checks checks"
