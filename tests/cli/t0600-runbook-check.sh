#!/usr/bin/env bash
# `descheduler check` against the API simulator, set up with kubectl as the runbook installs the
# descheduler: namespace descheduler, ConfigMap descheduler (label
# app.kubernetes.io/name=descheduler, key policy.yaml = the example policy), the CronJob of
# tests/data/runbook/cronjob.yaml. The setup passes; then each runbook trap is made in turn and
# check names the item that fails: a missing feature gate, a policy that does not parse, a
# policy with evictableNamespaces.include, a VMI that recorded strategy None while the cluster
# default is LiveMigrate, the PodsWithPVC protection on a VM-only policy; a misspelt policy
# field is a warning that names it. The KubeVirt and HCO versions it records are read from
# their CRs' status.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
RB=$ROOT/tests/data/runbook

# expect_row ITEM STATUS TEXT...: a table row of that item and status containing every TEXT
expect_row() {
  checks=$((checks + 1))
  local item=$1 st=$2 rows
  shift 2
  rows=$(awk -v i="$item" -v s="$st" '$1 == i && $2 == s' "$TMP/out")
  for t in "$@"; do
    rows=$(printf '%s\n' "$rows" | grep -F -- "$t")
  done
  [ -n "$rows" ] || fail "no row: $item $st ... $*"
}
install_runbook() { # the runbook's objects, policy file $1
  kc create namespace descheduler >/dev/null 2>&1
  kc create configmap descheduler -n descheduler --from-file=policy.yaml="$1" \
    --dry-run=client -o yaml >"$TMP/cm.yaml" || fail "kubectl create configmap --dry-run"
  kc apply -f "$TMP/cm.yaml" >/dev/null || fail "kubectl apply configmap"
  kc label --overwrite configmap descheduler -n descheduler app.kubernetes.io/name=descheduler \
    >/dev/null || fail "kubectl label"
  kc apply -f "$RB/cronjob.yaml" >/dev/null || fail "kubectl apply cronjob"
}

sim_start "$EXAMPLE/cluster.json"
install_runbook "$EXAMPLE/policy.yaml"

# --- the runbook's setup passes (one warning: vm-gpu cannot live-migrate)
run check --kubeconfig "$SIM_KC"
expect_status 0
expect_out "descheduler v0."
expect_out "Kubernetes v1.30.0-apisim"
expect_row configmap PASS 'ConfigMap descheduler/descheduler'
expect_row policy PASS 'a DeschedulerPolicy with 1 profile: vm-rebalance'
expect_row workload PASS 'CronJob descheduler/descheduler'
expect_row policy-file PASS '--policy-config-file=/policy-dir/policy.yaml is key "policy.yaml" of ConfigMap descheduler (mounted at /policy-dir)'
expect_row feature-gate PASS '--feature-gates=EvictionsInBackground=true'
expect_row verbosity PASS '--v=3'
expect_row kubevirt-strategy PASS 'KubeVirt kubevirt/kubevirt'
expect_row kubevirt-limits PASS 'parallelMigrationsPerCluster 5, parallelOutboundMigrationsPerNode 2'
expect_row vmi-migratable WARN 'VMI vms/vm-gpu'
expect_row local-storage PASS 'profile vm-rebalance'
expect_row pvc-protection PASS 'profile vm-rebalance'
expect_row plan PASS 'would request 1 eviction: 1 live migration'
expect_out ", 1 warning, 0 failed: the installation can rebalance VMs by live migration"
# check writes nothing and logs nothing without --v
expect_err_lines 0
run check --kubeconfig "$SIM_KC" -o json
expect_status 0
checks=$((checks + 1))
[ "$(json_eval "$TMP/out" 'd["summary"]["fail"], d["versions"]["kubernetes"], [i["status"] for i in d["items"] if i["item"] == "feature-gate"]')" = \
  "0 v1.30.0-apisim ['pass']" ] || fail "json summary"
kc get vmim -A -o name >"$TMP/vmim" && [ ! -s "$TMP/vmim" ] || fail "check created a migration"
# the kubeconfig is found as kubectl finds it: $KUBECONFIG's files merged (one that does not
# exist is skipped; the first current-context wins, --context picks another), then
# ~/.kube/config
cat >"$TMP/elsewhere.kc" <<'EOF'
current-context: elsewhere
contexts: [{name: elsewhere, context: {cluster: elsewhere}}]
clusters: [{name: elsewhere, cluster: {server: 'https://127.0.0.1:1'}}]
EOF
KUBECONFIG="$TMP/no-such-file:$TMP/elsewhere.kc:$SIM_KC" run check --context apisim
expect_status 0
expect_out ", 1 warning, 0 failed"
KUBECONFIG="$TMP/elsewhere.kc:$SIM_KC" run check
expect_status 1
expect_err "dial tcp 127.0.0.1:1: connect: connection refused"
KUBECONFIG="$TMP/elsewhere.kc:$SIM_KC" run check --context nope
expect_status 2
expect_err "descheduler check: kubeconfig $TMP/elsewhere.kc:$SIM_KC: context \"nope\" (--context) not found in contexts"
mkdir -p "$TMP/home/.kube" && cp "$SIM_KC" "$TMP/home/.kube/config"
KUBECONFIG= HOME="$TMP/home" run pause --dry-run
expect_status 0
KUBECONFIG= HOME="$TMP/nohome" KUBERNETES_SERVICE_HOST= run verify --vmi vms/vm-a --from n
expect_status 2
expect_err "no --kubeconfig, \$KUBECONFIG is not set and $TMP/nohome/.kube/config does not exist; the in-cluster config: unable to load in-cluster configuration"
# --namespace scopes the search
run check --kubeconfig "$SIM_KC" --namespace vms
expect_status 1
expect_row configmap FAIL 'no ConfigMap labelled app.kubernetes.io/name=descheduler in namespace vms'

# --- the feature gate is missing
kc patch cronjob descheduler -n descheduler --type=json -p \
  '[{"op":"replace","path":"/spec/jobTemplate/spec/template/spec/containers/0/args","value":["--policy-config-file=/policy-dir/policy.yaml","--v=3"]}]' \
  >/dev/null || fail "kubectl patch cronjob"
run check --kubeconfig "$SIM_KC"
expect_status 1
expect_row feature-gate FAIL 'CronJob descheduler/descheduler' 'no --feature-gates=EvictionsInBackground=true'
expect_out "1 failed"
kc apply -f "$RB/cronjob.yaml" >/dev/null

# --- the policy does not parse
printf 'apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: [\n' >"$TMP/bad.yaml"
install_runbook "$TMP/bad.yaml"
run check --kubeconfig "$SIM_KC"
expect_status 1
expect_row policy FAIL 'does not load as a DeschedulerPolicy, so every run would fail: failed decoding'
expect_row policy FAIL 'invalid YAML at line 4'
expect_row plan WARN 'not run: no policy loads'

# --- evictableNamespaces.include: upstream refuses it, so every CronJob run would fail
sed 's/^      evictionLimits:/      evictableNamespaces:\n        include: [vms]\n      evictionLimits:/' \
  "$EXAMPLE/policy.yaml" >"$TMP/include.yaml"
grep -q 'include: \[vms\]' "$TMP/include.yaml" || fail "test setup: include not written"
install_runbook "$TMP/include.yaml"
run check --kubeconfig "$SIM_KC"
expect_status 1
expect_row policy FAIL 'only Exclude namespaces can be set, inclusion is not supported'

# --- a misspelt field: upstream ignores it and so does the descheduler, so nothing fails;
# check warns, naming the file (the ConfigMap's key) and the field
sed 's/^maxNoOfPodsToEvictTotal:/maxNoOfPodToEvictTotal:/' "$EXAMPLE/policy.yaml" >"$TMP/typo.yaml"
grep -q '^maxNoOfPodToEvictTotal: 1' "$TMP/typo.yaml" || fail "test setup: the typo was not written"
install_runbook "$TMP/typo.yaml"
run check --kubeconfig "$SIM_KC"
expect_status 0
expect_row policy WARN 'ConfigMap descheduler/descheduler' \
  'ConfigMap descheduler/descheduler key policy.yaml: field maxNoOfPodToEvictTotal is ignored (unknown field), as upstream ignores it: it has no effect'
expect_row policy PASS 'a DeschedulerPolicy with 1 profile: vm-rebalance'
expect_out ", 2 warnings, 0 failed"
run check --kubeconfig "$SIM_KC" -o json
expect_status 0
checks=$((checks + 1))
[ "$(json_eval "$TMP/out" '[(i["status"], i["detail"].split(": ")[1]) for i in d["items"] if i["item"] == "policy" and i["status"] == "warn"], d["summary"]["fail"]')" = \
  "[('warn', 'field maxNoOfPodToEvictTotal is ignored (unknown field), as upstream ignores it')] 0" ] ||
  fail "json: the ignored field's row"
install_runbook "$EXAMPLE/policy.yaml"

# --- a VM started while the cluster default was None keeps strategy None
kc apply -f "$RB/vm-legacy.yaml" >/dev/null || fail "kubectl apply vm-legacy"
run check --kubeconfig "$SIM_KC"
expect_status 1
expect_row vmi-strategy FAIL 'VMI vms/vm-legacy' \
  'recorded evictionStrategy None, the cluster default is LiveMigrate' 'evicting its launcher stops the VM'
kc delete -f "$RB/vm-legacy.yaml" >/dev/null || fail "kubectl delete vm-legacy"
run check --kubeconfig "$SIM_KC"
expect_status 0

# --- a KubeDescheduler CR: rendered as the operator would, its policy checked
kc apply -f "$RB/kubedescheduler.yaml" >/dev/null || fail "kubectl apply CRD"
kc create namespace openshift-kube-descheduler-operator >/dev/null
kc apply -f "$RB/kubedescheduler-cr.yaml" >/dev/null || fail "kubectl apply KubeDescheduler"
# the KubeVirt profile needs the Prometheus Route, which this cluster lacks: the operator refuses
run check --kubeconfig "$SIM_KC"
expect_status 1
expect_row kubedescheduler FAIL 'KubeDescheduler openshift-kube-descheduler-operator/cluster' \
  'the operator refuses this CR and runs no descheduler: unable to get openshift-monitoring/prometheus-k8s route'
# with the Route and the Scheduler (OpenShift's CRDs): rendered; the CRD's default mode
# Predictive is a dry run, which is a warning
LIVE=$ROOT/tests/data/profile/live
kc apply -f "$LIVE/openshift-crds.yaml" >/dev/null || fail "create the OpenShift CRDs"
for _ in $(seq 1 50); do kc get routes -A >/dev/null 2>&1 && break; sleep 0.1; done
kc apply -f "$LIVE/openshift-objects.yaml" >/dev/null 2>&1 || fail "create the OpenShift objects"
run check --kubeconfig "$SIM_KC"
expect_status 0
expect_row kubedescheduler WARN 'KubeDescheduler openshift-kube-descheduler-operator/cluster' \
  'renders a DeschedulerPolicy with 1 profile (KubeVirtRelieveAndMigrate), a cycle every 3600s' \
  'mode Predictive runs it with --dry-run, so nothing moves'
kc patch kubedescheduler cluster -n openshift-kube-descheduler-operator --type merge \
  -p '{"spec":{"mode":"Automatic"}}' >/dev/null || fail "kubectl patch mode"
run check --kubeconfig "$SIM_KC" -o json
expect_status 0
json_eval "$TMP/out" '[i["status"] for i in d["items"] if i["item"] == "kubedescheduler" and "renders a DeschedulerPolicy" in i["detail"]]' >"$TMP/st"
[ "$(cat "$TMP/st")" = "['pass']" ] || fail "Automatic CR: kubedescheduler row $(cat "$TMP/st")"
checks=$((checks + 1))
run check --kubeconfig "$SIM_KC"
expect_row kubedescheduler WARN 'the operator runs a descheduler from it and the runbook'"'"'s ConfigMap descheduler/descheduler is there too'
# without the runbook's ConfigMap and CronJob, the CR's policy is the one checked and planned
kc delete cronjob descheduler -n descheduler >/dev/null || fail "kubectl delete cronjob"
kc delete configmap descheduler -n descheduler >/dev/null || fail "kubectl delete configmap"
run check --kubeconfig "$SIM_KC"
expect_row configmap PASS 'the policy is the one KubeDescheduler openshift-kube-descheduler-operator/cluster renders'
expect_row workload PASS 'the operator runs the descheduler of KubeDescheduler openshift-kube-descheduler-operator/cluster'
expect_row plan PASS 'KubeDescheduler openshift-kube-descheduler-operator/cluster' 'one cycle now'
kc delete -f "$RB/kubedescheduler-cr.yaml" >/dev/null || fail "kubectl delete KubeDescheduler"
install_runbook "$EXAMPLE/policy.yaml"

# --- every VM has a PVC disk and the VM-only policy keeps pods with PVCs: a no-op
python3 - "$EXAMPLE/cluster.json" "$TMP/pvc-cluster.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
extra = []
for it in d["items"]:
    md = it["metadata"]
    if it["kind"] == "Pod" and md["name"].startswith("virt-launcher-"):
        claim = md["name"].rsplit("-", 1)[0][len("virt-launcher-"):] + "-disk"
        it["spec"]["volumes"].append({"name": "rootdisk-pvc", "persistentVolumeClaim": {"claimName": claim}})
        extra.append({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                      "metadata": {"name": claim, "namespace": md["namespace"]},
                      "spec": {"storageClassName": "rbd", "accessModes": ["ReadWriteMany"]}})
d["items"] += extra
json.dump(d, open(sys.argv[2], "w"))
EOF
sed 's/^      evictLocalStoragePods: true/      evictLocalStoragePods: true\n      ignorePvcPods: true/' \
  "$EXAMPLE/policy.yaml" >"$TMP/pvc-policy.yaml"
grep -q 'ignorePvcPods: true' "$TMP/pvc-policy.yaml" || fail "test setup: ignorePvcPods not written"
sim_start "$TMP/pvc-cluster.json"
install_runbook "$TMP/pvc-policy.yaml"
run check --kubeconfig "$SIM_KC"
expect_status 1
expect_row pvc-protection FAIL 'profile vm-rebalance (ConfigMap descheduler/descheduler)' \
  'PodsWithPVC is on and all 6 VMs the policy may move have PVC disks: VM rebalancing is a no-op; set ignorePvcPods: false'
expect_row plan PASS 'would request 0 evictions'
# with --v the simulated cycle's log says why
run check --kubeconfig "$SIM_KC" --v 4
expect_err 'pod with PVC is protected against eviction'

# --- the versions: KubeVirt's from the KubeVirt CR's status.observedKubeVirtVersion, HCO's
# from the HyperConverged's status.versions entry "operator" (OpenShift Virtualization)
python3 - "$EXAMPLE/cluster.json" "$TMP/versions-cluster.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
kv = [it for it in d["items"] if it["kind"] == "KubeVirt"][0]
kv["status"]["observedKubeVirtVersion"] = "v1.6.1"
d["items"].append({"apiVersion": "hco.kubevirt.io/v1beta1", "kind": "HyperConverged",
                   "metadata": {"name": "kubevirt-hyperconverged", "namespace": "kubevirt"},
                   "spec": {"evictionStrategy": "LiveMigrate"},
                   "status": {"versions": [{"name": "operator", "version": "1.15.2"}]}})
json.dump(d, open(sys.argv[2], "w"))
EOF
sim_start "$TMP/versions-cluster.json"
install_runbook "$EXAMPLE/policy.yaml"
run check --kubeconfig "$SIM_KC"
expect_status 0
checks=$((checks + 1))
head -n1 "$TMP/out" | grep -qx 'descheduler v0\..*; Kubernetes v1\..*; KubeVirt v1\.6\.1; HCO 1\.15\.2' ||
  fail "version line: $(head -n1 "$TMP/out")"
run check --kubeconfig "$SIM_KC" -o json
expect_status 0
checks=$((checks + 1))
[ "$(json_eval "$TMP/out" 'd["versions"]["kubevirt"], d["versions"]["hco"]')" = "v1.6.1 1.15.2" ] ||
  fail "json versions: $(json_eval "$TMP/out" 'd["versions"]')"

# --- bad flags and kubeconfig
run check --kubeconfig "$SIM_KC" -o xml
expect_status 2
expect_err 'descheduler check: --output: expected text, json or yaml, got "xml"'
run check --kubeconfig "$TMP/nope"
expect_status 2
expect_err "descheduler check: kubeconfig $TMP/nope"
run check --kubeconfig "$SIM_KC" --bogus
expect_status 2
run check --help
expect_status 0
expect_out 'Usage: descheduler check'
echo "t0600: $checks checks"
