#!/usr/bin/env bash
# `simulate --from-cluster`: the cluster state read from the API server as a live cycle lists
# it, the policy's metrics queried live, the plan made offline. On the example cluster it plans
# what `simulate --snapshot` plans on the same objects; with metrics.k8s.io it plans by usage
# (tests/data/usage: worker-1's VMs use 2.5 cores each); and it writes nothing to the cluster:
# no eviction, no migration, no patch.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"

writes() { # the requests that are not reads
  sim_ctl GET /_sim/requests | python3 -c 'import json,sys
print(sorted(k for k, v in json.load(sys.stdin)["byVerbAndPath"].items() if k.split()[0] not in ("get", "list", "watch")))'
}
plan() { json_eval "$1" '[(e["pod"], e.get("to")) for e in d["evictions"]], d["totals"]'; }

sim_start "$EXAMPLE/cluster.json"
run simulate --snapshot "$EXAMPLE/cluster.json" --policy-config-file "$EXAMPLE/policy.yaml" --feature-gates EvictionsInBackground=true -o json
expect_status 0
cp "$TMP/out" "$TMP/offline.json"
sim_ctl DELETE /_sim/requests >/dev/null
run simulate --from-cluster --kubeconfig "$SIM_KC" --policy-config-file "$EXAMPLE/policy.yaml" --feature-gates EvictionsInBackground=true -o json
expect_status 0
checks=$((checks + 1))
[ "$(plan "$TMP/out")" = "$(plan "$TMP/offline.json")" ] || fail "plans differ: live $(plan "$TMP/out"), snapshot $(plan "$TMP/offline.json")"
checks=$((checks + 1))
[ "$(json_eval "$TMP/out" 'd["totals"]["requests"]')" -ge 1 ] || fail "the example's plan has no request"
checks=$((checks + 1))
[ "$(writes)" = "[]" ] || fail "simulate --from-cluster wrote to the cluster: $(writes)"
# the text plan names the cluster it read; found through $KUBECONFIG as kubectl would
KUBECONFIG="$SIM_KC" run simulate --from-cluster --policy-config-file "$EXAMPLE/policy.yaml"
expect_status 0
expect_out "Simulated one descheduling cycle: the cluster at $(awk '/server:/ {print $2; exit}' "$SIM_KC" | tr -d "'\"")"
expect_out "Nothing was evicted: the plan is what one cycle would do now."
# explain reads the same way
KUBECONFIG="$SIM_KC" run explain --from-cluster --policy-config-file "$EXAMPLE/policy.yaml" "$(json_eval "$TMP/offline.json" 'd["evictions"][0]["pod"]')"
expect_status 0
checks=$((checks + 1))
[ "$(writes)" = "[]" ] || fail "explain --from-cluster wrote to the cluster: $(writes)"

# flags that do not go together, and a cluster that cannot be read
run simulate --from-cluster --snapshot "$EXAMPLE/cluster.json" --policy-config-file "$EXAMPLE/policy.yaml"
expect_status 2
expect_err "descheduler simulate: --snapshot and --from-cluster cannot be used together"
run simulate --from-cluster --metrics "$EXAMPLE/cluster.json" --kubeconfig "$SIM_KC" --policy-config-file "$EXAMPLE/policy.yaml"
expect_status 2
expect_err "descheduler simulate: --metrics and --from-cluster cannot be used together"
run simulate --snapshot "$EXAMPLE/cluster.json" --context x --policy-config-file "$EXAMPLE/policy.yaml"
expect_status 2
expect_err "descheduler simulate: --context is only used with --from-cluster"
cat >"$TMP/down.kc" <<'KC'
current-context: down
contexts: [{name: down, context: {cluster: down}}]
clusters: [{name: down, cluster: {server: 'https://127.0.0.1:1'}}]
KC
run simulate --from-cluster --kubeconfig "$TMP/down.kc" --policy-config-file "$EXAMPLE/policy.yaml"
expect_status 1
expect_err "descheduler simulate: cannot read the cluster: "
expect_out_empty

# by usage: metrics.k8s.io queried live, as a live cycle queries it
sim_start "$ROOT/tests/data/usage/cluster.json"
cat >"$TMP/usage.yaml" <<'YAML'
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
nodeSelector: kubevirt.io/schedulable=true
metricsProviders: [{source: KubernetesMetrics}]
profiles:
- name: actual
  pluginConfig:
  - name: DefaultEvictor
    args: {evictLocalStoragePods: true}
  - name: LowNodeUtilization
    args:
      thresholds: {cpu: 20, memory: 60, pods: 20}
      targetThresholds: {cpu: 70, memory: 80, pods: 50}
      evictableNamespaces: {exclude: [kube-system, kubevirt]}
      metricsUtilization: {source: KubernetesMetrics}
  plugins:
    balance:
      enabled: [LowNodeUtilization]
YAML
sim_ctl DELETE /_sim/requests >/dev/null
run simulate --from-cluster --kubeconfig "$SIM_KC" --policy-config-file "$TMP/usage.yaml" --feature-gates EvictionsInBackground=true -o json --v 3
expect_status 0
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="overutilized" node="worker-1" usage={"cpu":"7510m"'
checks=$((checks + 1))
[ "$(json_eval "$TMP/out" '[e["pod"].split("/")[1][:len("virt-launcher-vm-1")] for e in d["evictions"]]')" = "['virt-launcher-vm-1']" ] || fail "expected one VM of worker-1 in the plan"
checks=$((checks + 1))
[ "$(writes)" = "[]" ] || fail "simulate --from-cluster wrote to the cluster: $(writes)"
echo "t0215: $checks checks"
