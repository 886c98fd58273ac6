#!/usr/bin/env bash
# `descheduler simulate --kubedescheduler CR --snapshot S`: the cycle runs the policy the
# OpenShift operator would render from the CR, the snapshot standing for the cluster it reads;
# the CR's feature gate and log level apply unless given on the command line.
. "$(dirname "$0")/lib.sh"
CASES=$ROOT/tests/data/profile/cases
OS_EXAMPLE=$ROOT/examples/openshift-kubevirt

cat >"$TMP/kd.yaml" <<'YAML'
apiVersion: operator.openshift.io/v1
kind: KubeDescheduler
metadata: {name: cluster, namespace: openshift-kube-descheduler-operator}
spec:
  managementState: Managed
  mode: Automatic
  deschedulingIntervalSeconds: 60
  profiles: [LongLifecycle, EvictPodsWithLocalStorage]
  profileCustomizations:
    devLowNodeUtilizationThresholds: Low
    devEnableEvictionsInBackground: true
YAML

# the same plan as the rendered policy given as a file, with the rendered gate
run profile render --kubedescheduler "$TMP/kd.yaml" --snapshot "$OS_EXAMPLE/cluster.json"
expect_status 0
cp "$TMP/out" "$TMP/rendered.yaml"
run simulate --policy-config-file "$TMP/rendered.yaml" --snapshot "$OS_EXAMPLE/cluster.json" \
  --feature-gates EvictionsInBackground=true -o json
expect_status 0
cp "$TMP/out" "$TMP/plan-file.json"
run simulate --kubedescheduler "$TMP/kd.yaml" --snapshot "$OS_EXAMPLE/cluster.json" -o json
expect_status 0
checks=$((checks + 1)); cmp -s "$TMP/out" "$TMP/plan-file.json" || fail "the plan differs from the rendered policy's"
python3 - "$TMP/out" <<'PY' || fail "unexpected plan"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["evictions"]
assert ev and all(e["background"] and e["profile"] == "LongLifecycle" and e["plugin"] == "LowNodeUtilization" for e in ev), ev
assert all(e["pod"].startswith("vms/virt-launcher-") and e["node"] == "worker-a" for e in ev), ev
PY
checks=$((checks + 1))
expect_err '"Processing node"' # -v=2 from logLevel Normal
expect_err_count 0 '"Pod fails the following checks"' # a -v=4 line
expect_err '"Number of evictions/requests" totalEvicted=0 evictionRequests=2' # VMSafety: KubeVirt runs 2 outbound migrations per node

# an explicit --feature-gates wins over the CR's gate: without it KubeVirt's 429 is a failed
# eviction, as upstream counts it
run simulate --kubedescheduler "$TMP/kd.yaml" --snapshot "$OS_EXAMPLE/cluster.json" -o json \
  --feature-gates EvictionsInBackground=false
expect_status 0
expect_out '"evictions":[]'
expect_err 'denied the request: Eviction triggered evacuation of VMI \"vms/vm-alpha\"'
# an explicit --v wins over logLevel
run simulate --kubedescheduler "$TMP/kd.yaml" --snapshot "$OS_EXAMPLE/cluster.json" --v 0
expect_status 0
expect_err_count 0 '"Processing node"'
expect_out "policy rendered from KubeDescheduler $TMP/kd.yaml"
# logLevel Debug is -v=4
sed 's/  mode: Automatic/  mode: Automatic\n  logLevel: Debug/' "$TMP/kd.yaml" >"$TMP/debug.yaml"
run simulate --kubedescheduler "$TMP/debug.yaml" --snapshot "$OS_EXAMPLE/cluster.json"
expect_status 0
expect_err '"Pod fails the following checks"'

# the CR and a policy file together, an invalid CR, a CR whose cluster facts refuse it
run simulate --kubedescheduler "$TMP/kd.yaml" --policy-config-file "$TMP/rendered.yaml" --snapshot "$OS_EXAMPLE/cluster.json"
expect_status 2
expect_err 'descheduler simulate: --policy-config-file and --kubedescheduler cannot be used together'
run simulate --kubedescheduler "$CASES/cel-03-LongLifecycle-LifecycleAndUtilization/kubedescheduler.yaml" --snapshot "$OS_EXAMPLE/cluster.json"
expect_status 2
expect_err "descheduler simulate: $CASES/cel-03-LongLifecycle-LifecycleAndUtilization/kubedescheduler.yaml: cannot declare LongLifecycle and LifecycleAndUtilization profiles simultaneously"
expect_out_empty
run simulate --kubedescheduler "$CASES/kv-no-kubevirt-node/kubedescheduler.yaml" --snapshot "$ROOT/tests/data/profile/cluster-no-kubevirt.json" --psi present
expect_status 2
expect_err 'profile KubeVirtRelieveAndMigrate can only be used when KubeVirt is properly deployed'

# the README's example: the seed CR on the OpenShift Virtualization snapshot
run simulate --kubedescheduler "$OS_EXAMPLE/kubedescheduler.yaml" --snapshot "$OS_EXAMPLE/cluster.json"
if [ "$status" -eq 2 ] && grep -q 'plugin KubevirtMigrationAware in pluginConfig not registered' "$TMP/err"; then
  skip_part "the openshift-kubevirt example: KubevirtMigrationAware is not registered in this build"
else
  expect_status 0
  expect_out "Simulated one descheduling cycle: snapshot $OS_EXAMPLE/cluster.json, policy rendered from KubeDescheduler"
  expect_err 'whether PSI (/proc/pressure) is enabled on the worker nodes was not checked'
fi
# the README's offline example with the saved Prometheus answer: the hot node by usage
run simulate --kubedescheduler "$ROOT/examples/openshift-kubevirt/kubedescheduler.yaml" \
  --snapshot "$ROOT/examples/openshift-kubevirt/cluster.json" \
  --metrics "$ROOT/examples/openshift-kubevirt/prometheus.json" --v 3
expect_status 0
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="overutilized" node="worker-a" usage={"MetricResource":"62"}'
expect_err_count 2 '"Eviction in background assumed"'
expect_err 'vmi="vms/vm-gpu" rule="requireLiveMigration"'
expect_out 'Totals: evicted=0 requests=2'
echo "t0302: $checks checks"
