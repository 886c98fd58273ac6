#!/usr/bin/env bash
# simulate on a small snapshot with three virt-launcher pods (issue 9, items 5 and 6):
# - ghost: its VMI is not in the snapshot. The strategy is the KubeVirt CR's default (here
#   LiveMigrateIfPossible), the VM taken as live-migratable, and the plan says so: "assumed":true
#   in -o json, an "assumed:" line under the plan entry in text; without a KubeVirt CR the
#   strategy is LiveMigrate; with a CR whose default is None the VM would stop, so VMSafety
#   does not request it and the decision record says why;
# - hosted: its VMI recorded evictionStrategy External, so the plan says the VM's external
#   controller drains it;
# - known: a VMI with LiveMigrate, nothing assumed.
# The rules are src/kubevirt/vm.c's kubevirt_view and kubevirt_vmi_strategy (KubeVirt's webhook
# pkg/virt-api/webhooks/validating-webhook/admitters/pod-eviction-admitter.go).
. "$(dirname "$0")/lib.sh"

# snapshot CR_STRATEGY: writes $TMP/cluster.json; CR_STRATEGY "-" leaves the KubeVirt CR out
snapshot() {
  python3 - "$1" "$TMP/cluster.json" <<'PY'
import json, sys
cr_strategy, out = sys.argv[1], sys.argv[2]
T = "2026-01-01T00:00:00Z"
def node(name):
    res = {"cpu": "8", "memory": "32Gi", "pods": "110", "devices.kubevirt.io/kvm": "1k"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "uid": "uid-" + name, "creationTimestamp": T,
                         "labels": {"kubernetes.io/hostname": name, "kubevirt.io/schedulable": "true"}},
            "spec": {}, "status": {"capacity": res, "allocatable": res,
                                   "conditions": [{"type": "Ready", "status": "True"}]}}
def vmi(name, node, strategy):
    return {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
            "metadata": {"name": name, "namespace": "vms", "uid": "uid-vmi-" + name, "creationTimestamp": T},
            "spec": {"evictionStrategy": strategy, "domain": {"devices": {}}},
            "status": {"phase": "Running", "nodeName": node,
                       "conditions": [{"type": "Ready", "status": "True"},
                                      {"type": "LiveMigratable", "status": "True"}]}}
def launcher(vm, node):
    name = "virt-launcher-%s-x1y2z" % vm
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "vms", "uid": "uid-" + name, "creationTimestamp": T,
                         "labels": {"kubevirt.io": "virt-launcher", "kubevirt.io/created-by": "uid-vmi-" + vm},
                         "annotations": {"kubevirt.io/domain": vm,
                                         "descheduler.alpha.kubernetes.io/request-evict-only": ""},
                         "ownerReferences": [{"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstance",
                                              "name": vm, "uid": "uid-vmi-" + vm, "controller": True}]},
            "spec": {"nodeName": node, "containers": [{"name": "compute", "resources": {
                "requests": {"cpu": "100m", "memory": "1Gi", "devices.kubevirt.io/kvm": "1"}}}]},
            "status": {"phase": "Running", "startTime": T,
                       "conditions": [{"type": "Ready", "status": "True"}]}}
items = [node("n1"), node("n2"),
         {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "vms", "uid": "uid-ns-vms"}},
         launcher("ghost", "n1"),
         vmi("hosted", "n1", "External"), launcher("hosted", "n1"),
         vmi("known", "n2", "LiveMigrate"), launcher("known", "n2")]
if cr_strategy != "-":
    items.append({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt",
                  "metadata": {"name": "kubevirt", "namespace": "kubevirt", "uid": "uid-kv"},
                  "spec": {"configuration": {"evictionStrategy": cr_strategy}},
                  "status": {"phase": "Deployed"}})
json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(out, "w"), indent=1)
PY
}
cat >"$TMP/policy.yaml" <<'YAML'
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: vms
  pluginConfig:
  - name: PodLifeTime
    args: {maxPodLifeTimeSeconds: 60, namespaces: {include: [vms]}}
  - name: DefaultEvictor
    args: {evictLocalStoragePods: true}
  plugins:
    deschedule: {enabled: [PodLifeTime]}
YAML
sim() { run simulate --policy-config-file "$TMP/policy.yaml" --snapshot "$TMP/cluster.json" \
  --feature-gates EvictionsInBackground=true --now 2026-01-02T00:00:00Z "$@"; }
# vm_of POD: the "vm" member of POD's plan entry in $TMP/out (-o json), keys sorted; "absent"
# when POD is not in the plan
vm_of() { python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
e = [e for e in d["evictions"] if e["pod"] == sys.argv[2]]
print(json.dumps(e[0].get("vm"), sort_keys=True) if e else "absent")' "$TMP/out" "$1"; }
expect_vm() { # POD JSON
  checks=$((checks + 1))
  local got; got=$(vm_of "$1")
  [ "$got" = "$2" ] || fail "vm of $1: $got, expected $2"
}

# 1. the KubeVirt CR's default is LiveMigrateIfPossible
snapshot LiveMigrateIfPossible
sim -o json
expect_status 0
expect_vm vms/virt-launcher-ghost-x1y2z '{"assumed": true, "effect": "live-migration", "strategy": "LiveMigrateIfPossible", "vmi": "vms/ghost"}'
expect_vm vms/virt-launcher-hosted-x1y2z '{"assumed": false, "effect": "external-drain", "strategy": "External", "vmi": "vms/hosted"}'
expect_vm vms/virt-launcher-known-x1y2z '{"assumed": false, "effect": "live-migration", "strategy": "LiveMigrate", "vmi": "vms/known"}'
expect_out '"totals":{"evicted":0,"requests":3,"migrations":0,"evacuations":0}'
sim
expect_status 0
expect_out '  1. vms/virt-launcher-ghost-x1y2z            from n1                   by vms/PodLifeTime  (eviction request; KubeVirt live-migrates the VM)'
expect_out '     assumed: the snapshot has no VMI vms/ghost (or no KubeVirt CR); strategy LiveMigrateIfPossible, live-migratable taken as given'
expect_out '  2. vms/virt-launcher-hosted-x1y2z           from n1                   by vms/PodLifeTime  (eviction request; the VM'"'"'s external controller drains it, strategy External)'
expect_out '  3. vms/virt-launcher-known-x1y2z            from n2                   by vms/PodLifeTime  (eviction request; KubeVirt live-migrates the VM)'
# one "assumed:" line in all, the ghost's: the known and hosted VMIs are in the snapshot
checks=$((checks + 1)); [ "$(grep -c '^     assumed:' "$TMP/out")" = 1 ] || fail "expected one assumed line"
expect_out 'Totals: evicted=0 requests=3'

# 2. no KubeVirt CR in the snapshot: nothing says the default, LiveMigrate is assumed
snapshot -
sim -o json
expect_status 0
expect_vm vms/virt-launcher-ghost-x1y2z '{"assumed": true, "effect": "live-migration", "strategy": "LiveMigrate", "vmi": "vms/ghost"}'
expect_vm vms/virt-launcher-known-x1y2z '{"assumed": false, "effect": "live-migration", "strategy": "LiveMigrate", "vmi": "vms/known"}'
sim
expect_out '     assumed: the snapshot has no VMI vms/ghost (or no KubeVirt CR); strategy LiveMigrate, live-migratable taken as given'

# 3. the CR's default is None: evicting the ghost's launcher would stop its VM; VMSafety does
#    not ask, and says why; the other two are requested as before
snapshot None
sim -o json
expect_status 0
expect_vm vms/virt-launcher-ghost-x1y2z absent
expect_vm vms/virt-launcher-known-x1y2z '{"assumed": false, "effect": "live-migration", "strategy": "LiveMigrate", "vmi": "vms/known"}'
expect_out '"totals":{"evicted":0,"requests":2,"migrations":0,"evacuations":0}'
sim --v 2
expect_status 0
expect_err '"VM safety: not requesting the eviction of this launcher" plugin="VMSafety" ExtensionPoint="Filter" pod="vms/virt-launcher-ghost-x1y2z" vmi="vms/ghost" rule="requireLiveMigration" reason="the eviction would stop the VM: eviction strategy None (assumed: the snapshot lacks the VMI): KubeVirt lets the eviction delete the launcher"'
expect_out '  rejected            1  VMSafety: requireLiveMigration: the eviction would stop the VM: eviction strategy None (assumed: the snapshot lacks the VMI)'
checks=$((checks + 1)); ! grep -q '^     assumed:' "$TMP/out" || fail "an assumed line for a launcher not in the plan"
echo "t0008: $checks checks"
