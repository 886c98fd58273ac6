#!/usr/bin/env bash
# `descheduler verify` after a real descheduler run against the API simulator: the run asks
# KubeVirt to move vm-alpha off worker-a. While the migration runs, verify fails naming the
# conditions (the VMI still on the source, the migration unfinished, the old launcher
# running); once the simulator completes it, verify passes and pairs the migration with the
# run's "Eviction in background assumed" line. Then each condition is broken in turn: the old
# launcher back to Running, the VMI recreated with a new UID (a restart, not a migration), and
# in a second cluster a migration that fails.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"

# expect_cond NAME STATUS TEXT: the condition's row
expect_cond() {
  checks=$((checks + 1))
  awk -v n="$1" -v s="$2" '$1 == n && ($2 == s || $2 " " $3 == s)' "$TMP/out" | grep -qF -- "$3" ||
    fail "no condition row: $1 $2 ... $3"
}
deschedule() { # one descheduler cycle, its klog lines in $TMP/descheduler.log
  TZ=UTC run_live --policy-config-file "$EXAMPLE/policy.yaml" \
    --feature-gates=EvictionsInBackground=true --v=3
  expect_status 0
  cp "$TMP/err" "$TMP/descheduler.log"
}

sim_start "$EXAMPLE/cluster.json" --migration-seconds 600
uid=$(kc get vmi vm-alpha -n vms -o jsonpath='{.metadata.uid}')
deschedule
checks=$((checks + 1))
grep -q '"Eviction in background assumed" pod="vms/virt-launcher-vm-alpha-4f551"' "$TMP/descheduler.log" ||
  fail "the run did not ask for vm-alpha"

# --- the migration is still running
run verify --kubeconfig "$SIM_KC" --vmi vms/vm-alpha --from worker-a --uid "$uid" --timeout 2s
expect_status 1
expect_out 'Verifying that VMI vms/vm-alpha moved off worker-a (every 1s, timeout 2s)'
expect_cond node FAIL 'the VMI still runs on worker-a'
expect_cond migration FAIL 'is in phase Running, not finished'
expect_cond uid PASS "$uid, as --uid"
expect_cond ready PASS 'VMI phase Running, Ready=True'
expect_cond old-launcher FAIL 'virt-launcher-vm-alpha-4f551 on worker-a is still Running'
expect_out 'not verified: 3 conditions failed, 0 not checked'
expect_err 'waiting: node: the VMI still runs on worker-a'

# --- completed: every condition passes, and the log pairs the request with the migration
sim_ctl POST /_sim/migrations/advance '{"seconds": 700}' >/dev/null || fail "advance migrations"
vmim=$(kc get vmim -n vms -o jsonpath='{.items[0].metadata.name}')
run verify --kubeconfig "$SIM_KC" --vmi vms/vm-alpha --from worker-a --uid "$uid" \
  --log "$TMP/descheduler.log"
expect_status 0
expect_cond node PASS 'the VMI runs on worker-b, not on worker-a'
expect_cond migration PASS "$vmim Succeeded: worker-a -> worker-b"
expect_cond uid PASS "$uid, as --uid: the same VMI moved"
expect_cond ready PASS 'VMI phase Running, Ready=True; VirtualMachine vm-alpha not found'
expect_cond old-launcher PASS 'terminated on worker-a: virt-launcher-vm-alpha-4f551 (Succeeded)'
expect_out "log: $TMP/descheduler.log line "
expect_out '"Eviction in background assumed" pod="vms/virt-launcher-vm-alpha-4f551" at 20'
expect_out "Z; migration $vmim created 20"
# the migration is created before KubeVirt answers and the line is logged after: the pairing
# reads either way round within the second the creation time keeps
expect_out '(creation times have whole seconds)'
expect_out 'verified: vms/vm-alpha moved from worker-a to worker-b by live migration'
# without --uid the source launcher's kubevirt.io/created-by is the evidence
run verify --kubeconfig "$SIM_KC" --vmi vms/vm-alpha --from worker-a --timeout 0
expect_status 0
expect_cond uid PASS "$uid: the migration's source launcher virt-launcher-vm-alpha-4f551 was made for this same VMI"

# --- the old launcher still runs
status_patch() { # POD PHASE
  curl -sf -X PATCH -H 'Content-Type: application/merge-patch+json' \
    -d "{\"status\":{\"phase\":\"$2\"}}" "$SIM_URL/api/v1/namespaces/vms/pods/$1/status" >/dev/null ||
    fail "patch $1 status"
}
status_patch virt-launcher-vm-alpha-4f551 Running
run verify --kubeconfig "$SIM_KC" --vmi vms/vm-alpha --from worker-a --uid "$uid" --timeout 0
expect_status 1
expect_cond old-launcher FAIL 'virt-launcher-vm-alpha-4f551 on worker-a is still Running'
expect_out 'not verified: 1 condition failed'
status_patch virt-launcher-vm-alpha-4f551 Succeeded

# --- the VM restarted: the VMI was deleted and created again, with a new UID
kc get vmi vm-alpha -n vms -o json >"$TMP/vmi.json" || fail "kubectl get vmi"
python3 - "$TMP/vmi.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ("uid", "resourceVersion", "creationTimestamp", "generation"):
    d["metadata"].pop(k, None)
json.dump(d, open(sys.argv[1], "w"))
EOF
kc delete vmi vm-alpha -n vms >/dev/null || fail "kubectl delete vmi"
kc create -f "$TMP/vmi.json" >/dev/null || fail "kubectl create vmi"
new_uid=$(kc get vmi vm-alpha -n vms -o jsonpath='{.metadata.uid}')
checks=$((checks + 1))
[ -n "$new_uid" ] && [ "$new_uid" != "$uid" ] || fail "the VMI kept its UID"
run verify --kubeconfig "$SIM_KC" --vmi vms/vm-alpha --from worker-a --uid "$uid" --timeout 0
expect_status 1
expect_cond uid FAIL "the VMI's UID is $new_uid, --uid was $uid: the VMI was recreated (the VM restarted), not live-migrated"
expect_cond node PASS 'worker-b'
# without --uid the old launchers went with the old VMI: not checked, and not a pass
run verify --kubeconfig "$SIM_KC" --vmi vms/vm-alpha --from worker-a --timeout 30s
expect_status 1
expect_cond uid 'NOT CHECKED' 'pass --uid'
expect_out 'not verified: 0 conditions failed, 1 not checked'

# --- a migration that fails: KubeVirt retries, verify says so
sim_start "$EXAMPLE/cluster.json" --migration-seconds 600
sim_ctl POST /_sim/migrations/fail '{"vmi": "vms/vm-alpha", "count": -1}' >/dev/null || fail "fail switch"
deschedule
sim_ctl POST /_sim/migrations/advance '{"seconds": 700}' >/dev/null || fail "advance migrations"
kc get vmim -n vms -o json >"$TMP/vmim.json"
checks=$((checks + 1))
[ "$(json_eval "$TMP/vmim.json" '" ".join(sorted(i["status"]["phase"] for i in d["items"]))')" = "Failed Pending" ] ||
  fail "expected a failed migration and its pending retry"
run verify --kubeconfig "$SIM_KC" --vmi vms/vm-alpha --from worker-a --timeout 1s
expect_status 1
expect_cond migration FAIL 'is in phase Pending, not finished; 1 earlier evacuation from worker-a Failed'
expect_cond migration FAIL 'apisim: injected migration failure): migrations that repeat must be stopped'
expect_cond node FAIL 'the VMI still runs on worker-a'
# -n NAMESPACE --vmi NAME, as kubectl names objects: the same VMI
run verify --kubeconfig "$SIM_KC" -n vms --vmi vm-alpha --from worker-a --timeout 1s
expect_status 1
expect_cond node FAIL 'the VMI still runs on worker-a'
run verify --kubeconfig "$SIM_KC" -n other --vmi vms/vm-alpha --from worker-a
expect_status 2
expect_err 'descheduler verify: --vmi vms/vm-alpha is not in --namespace other'

# --- bad flags
run verify --kubeconfig "$SIM_KC" --vmi vm-alpha --from worker-a
expect_status 2
expect_err 'descheduler verify: --vmi: expected NAMESPACE/NAME (or NAME with -n NAMESPACE), got "vm-alpha"'
run verify --kubeconfig "$SIM_KC" --vmi vms/vm-alpha
expect_status 2
expect_err 'descheduler verify: --from NODE is required'
run verify --kubeconfig "$SIM_KC" --vmi vms/vm-alpha --from worker-a --log "$TMP/nope.log"
expect_status 2
expect_err "descheduler verify: --log: cannot read $TMP/nope.log"
run verify --kubeconfig "$SIM_KC" --vmi vms/vm-alpha --from worker-a --timeout 1x
expect_status 2
run verify --kubeconfig "$TMP/nope" --vmi vms/vm-alpha --from worker-a
expect_status 2
echo "t0601: $checks checks"
