#!/usr/bin/env bash
# VM safety live, against the API simulator, as the runbook's administrator would meet it.
#  1. The trap: a VMI that recorded evictionStrategy None (and one that cannot live-migrate)
#     sits first in line on the hot node; the descheduler asks for another VM instead, and the
#     trapped VM keeps running where it was.
#  2. KubeVirt's limits: with one migration already running from the hot node and
#     parallelOutboundMigrationsPerNode 2, a policy that would move six VMs asks for one more.
#  3. No back and forth: each run is a fresh process (a CronJob run, a restarted Deployment
#     pod); the moves it asked for are recorded on the VMIs, so the next run leaves the moved
#     VMs alone for their cooldown even though its policy asks for every VM.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"

python3 "$ROOT/tests/data/live/vmsafety_cluster.py" >"$TMP/cluster.json" || fail "cluster generator"
sim_start "$TMP/cluster.json" --migration-seconds 600

# LowNodeUtilization on memory, launchers only, EvictionsInBackground
lnu_policy() { # TOTAL
  cat <<YAML
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
maxNoOfPodsToEvictTotal: $1
profiles:
- name: vm-rebalance
  pluginConfig:
  - name: DefaultEvictor
    args:
      evictLocalStoragePods: true
      labelSelector: {matchLabels: {kubevirt.io: virt-launcher}}
  - name: LowNodeUtilization
    args:
      thresholds: {memory: 20}
      targetThresholds: {memory: 30}
  plugins:
    balance: {enabled: [LowNodeUtilization]}
YAML
}
lnu_policy 1 >"$TMP/one.yaml"
lnu_policy 10 >"$TMP/ten.yaml"
evictions() { sim_ctl GET /_sim/requests | python3 -c 'import json,sys; d=json.load(sys.stdin)["byVerbAndPath"]; print(sum(v for k,v in d.items() if k.startswith("create ") and k.endswith("/eviction")))'; }
expect_eq() { checks=$((checks + 1)); [ "$1" = "$2" ] || fail "$3: got '$1', expected '$2'"; }

# --- 1. the trap ---
sim_ctl DELETE /_sim/requests >/dev/null
run_live --policy-config-file "$TMP/one.yaml" --feature-gates EvictionsInBackground=true --v 3 \
  --decisions-file "$TMP/decisions.jsonl"
expect_status 0
# the decision record of the cycle, one JSON line: the request and the trap's reason
python3 - "$TMP/decisions.jsonl" <<'PY' || fail "decision record of the live cycle"
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
rec = json.loads(lines[0])
assert rec["cycle"] == 1 and rec["totals"] == {"evicted": 0, "requests": 1, "migrations": 0, "evacuations": 0}, rec
reasons = rec["decisions"]["reasons"]
req = [r for r in reasons if r["outcome"] == "requested"]
assert req[0]["examples"][0].startswith("vms/virt-launcher-vm-b-"), req
trap = [r for r in reasons if r["by"] == "VMSafety" and "vm-a-legacy" in r["examples"][0]]
assert trap and trap[0]["reason"].startswith("requireLiveMigration: the eviction would stop the VM"), reasons
PY
expect_err '"VM safety: not requesting the eviction of this launcher" plugin="VMSafety" ExtensionPoint="Filter" pod="vms/virt-launcher-vm-a-legacy-'
expect_err 'vmi="vms/vm-a-legacy" rule="requireLiveMigration" reason="the eviction would stop the VM: eviction strategy None (recorded on the VMI): KubeVirt lets the eviction delete the launcher"'
expect_err 'vmi="vms/vm-a-rwo" rule="requireLiveMigration" reason="KubeVirt would refuse the eviction: VMI vm-a-rwo is configured with an eviction strategy but is not live-migratable"'
expect_err '"Eviction in background assumed" pod="vms/virt-launcher-vm-b-'
expect_err_count 0 '"Evicted pod"'
expect_eq "$(evictions)" 1 "eviction requests the server received"
kc get vmi vm-a-legacy -n vms -o jsonpath='{.status.phase} {.status.nodeName}' >"$TMP/legacy" 2>&1
expect_eq "$(cat "$TMP/legacy")" "Running w-hot" "the trapped VM"
kc get vmim -n vms -o jsonpath='{range .items[*]}{.spec.vmiName} {.status.phase}{"\n"}{end}' >"$TMP/vmims"
expect_eq "$(cut -d' ' -f1 "$TMP/vmims" | tr '\n' ' ')" "vm-b " "migrations after run 1"
# the move is recorded on the VMI
kc get vmi vm-b -n vms -o json >"$TMP/vmb.json"
expect_eq "$(json_eval "$TMP/vmb.json" 'len(d["metadata"]["annotations"]["vm-rebalance.descheduler.io/requests"].split(","))')" 1 "moves recorded on vm-b"

# --- 2. KubeVirt's limits: one running, limit 2 per node ---
sim_ctl DELETE /_sim/requests >/dev/null
run_live --policy-config-file "$TMP/ten.yaml" --feature-gates EvictionsInBackground=true --v 3
expect_status 0
expect_err 'rule="skipMigrating" reason="the VMI has a migration in flight: '
expect_err 'rule="migrationLimits" reason="KubeVirt'"'"'s migration limit: 2 migrations in flight or requested from node w-hot (parallelOutboundMigrationsPerNode 2)"'
expect_err_count 1 'Eviction in background assumed'
expect_eq "$(evictions)" 1 "eviction requests in run 2 (at most one more)"
kc get vmim -n vms -o json >"$TMP/vmims.json"
expect_eq "$(json_eval "$TMP/vmims.json" 'len(d["items"])')" 2 "migrations after run 2"

# the migrations finish; the moved VMs run elsewhere with their UIDs
sim_ctl POST /_sim/migrations/advance '{"seconds": 700}' >/dev/null || fail "advance migrations"
kc get vmim -n vms -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' >"$TMP/phases"
expect_eq "$(sort -u "$TMP/phases" | tr '\n' ' ')" "Succeeded " "migration phases"
moved=$(json_eval "$TMP/vmims.json" '" ".join(sorted(i["spec"]["vmiName"] for i in d["items"]))')

# --- 3. no back and forth, across restarts: a policy that asks for every VM ---
cat >"$TMP/all.yaml" <<'YAML'
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: everything
  pluginConfig:
  - name: DefaultEvictor
    args:
      evictLocalStoragePods: true
      labelSelector: {matchLabels: {kubevirt.io: virt-launcher}}
  - name: PodLifeTime
    args: {maxPodLifeTimeSeconds: 1}
  plugins:
    deschedule: {enabled: [PodLifeTime]}
YAML
sim_ctl DELETE /_sim/requests >/dev/null
run_live --policy-config-file "$TMP/all.yaml" --feature-gates EvictionsInBackground=true --v 3
expect_status 0
for vm in $moved; do
  expect_err "vmi=\"vms/$vm\" rule=\"cooldown\" reason=\"moved by this descheduler "
  checks=$((checks + 1))
  ! grep -q "\"Eviction in background assumed\" pod=\"vms/virt-launcher-$vm-" "$TMP/err" || fail "$vm was asked to move again"
done
# the trap holds here too, and the rest is within KubeVirt's limits (2 per node, 5 in all)
expect_err 'vmi="vms/vm-a-legacy" rule="requireLiveMigration"'
checks=$((checks + 1))
n=$(grep -c '"Eviction in background assumed"' "$TMP/err")
[ "$n" -ge 1 ] && [ "$n" -le 5 ] || fail "run 3 made $n requests in background (expected 1..5)"
# the only pods really evicted are the finished source launchers of the two migrations
expect_err_count 2 '"Evicted pod"'
expect_eq "$(evictions)" $((n + 2)) "eviction requests in run 3"
echo "t0210: $checks checks"
