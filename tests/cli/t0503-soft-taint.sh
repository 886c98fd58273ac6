#!/usr/bin/env bash
# descheduler soft-taint against the API simulator and a real Prometheus. The policy's
# KubeVirtRelieveAndMigrate profile queries a per-node load that Prometheus scrapes from a
# file this script rewrites (deviation thresholds 0/10). worker-1 is hot (1.0), worker-2 in
# between (0.6), worker-3 cold (0): average 53.3%, so worker-1 is overutilized, worker-2
# appropriate, worker-3 underutilized.
# - Predictive (the default) changes nothing and says what it would do;
# - Automatic: worker-1 gets both taints, worker-2 only `appropriate`, worker-3 none; the
#   taint of someone else on worker-1 and the control plane's taint stay as they were;
# - running every second, the taints follow when the load moves; a node changed by someone
#   else between read and patch (409) is read again, not overwritten;
# - a policy without the KubeVirt profile cleans both taints up;
# - from a KubeDescheduler (file, then a reference read again every pass): the policy rendered
#   from it, its spec.mode (Predictive logs, Automatic patches; --mode Predictive forces
#   log-only, --mode Automatic is refused) and its deschedulingIntervalSeconds (the loop
#   follows a load change within seconds, the flag's default being a minute).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
. "$(dirname "$0")/promlib.sh"
OVER=nodeutilization.descheduler.openshift.io/overutilized
APPR=nodeutilization.descheduler.openshift.io/appropriate

sim_start "$ROOT/tests/data/usage/cluster.json"
mkdir -p "$TMP/www" "$TMP/tsdb"
# the query a KubeDescheduler's KubeVirt profile renders (PrometheusCPUCombined), scraped as is
KVQ='descheduler:combined_utilization_and_pressure:avg1m'
load() { # w1 w2 w3: the scraped gauges (the test's and the profile's), replaced atomically
  local m
  for m in test_node_load "$KVQ"; do
    printf '%s{instance="worker-1"} %s\n%s{instance="worker-2"} %s\n%s{instance="worker-3"} %s\n%s{instance="cp-1"} 0\n' \
      "$m" "$1" "$m" "$2" "$m" "$3" "$m"
  done >"$TMP/www/metrics.new" && mv "$TMP/www/metrics.new" "$TMP/www/metrics.txt"
}
load 1 0.6 0
port=$(free_port)
python3 -m http.server --bind 127.0.0.1 --directory "$TMP/www" "$port" >/dev/null 2>&1 &
track_pid $!
prom_start "$TMP/tsdb" "127.0.0.1:$port"
prom_wait_series test_node_load 4
prom_wait_series "$KVQ" 4

cat >"$TMP/policy.yaml" <<YAML
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
nodeSelector: kubevirt.io/schedulable=true
metricsProviders:
- source: Prometheus
  prometheus:
    url: $PROM_URL
profiles:
- name: KubeVirtRelieveAndMigrate
  pluginConfig:
  - name: LowNodeUtilization
    args:
      evictionLimits: {node: 2}
      metricsUtilization:
        prometheus: {query: test_node_load}
        source: Prometheus
      targetThresholds: {MetricResource: 10}
      thresholds: {MetricResource: 0}
      useDeviationThresholds: true
  - name: DefaultEvictor
    args: {evictLocalStoragePods: true, ignorePvcPods: false}
  plugins:
    balance:
      enabled: [LowNodeUtilization]
YAML
st() { run soft-taint --kubeconfig "$SIM_KC" --policy-config-file "$TMP/policy.yaml" "$@"; }
# read_taints: one line per node, "node: key=value:effect ..." in the node's order
read_taints() {
  kc get nodes -o json | python3 -c 'import json,sys
for n in json.load(sys.stdin)["items"]:
    print("%s: %s" % (n["metadata"]["name"], " ".join("%s=%s:%s" % (t["key"], t.get("value", ""), t["effect"]) for t in n["spec"].get("taints", []))))' >"$TMP/taints"
}
expect_taints() { # NODE EXPECTED (from the last read_taints)
  checks=$((checks + 1))
  local got; got=$(sed -n "s/^$1: //p" "$TMP/taints")
  [ "$got" = "$2" ] || fail "taints of $1: '$got', expected '$2'"
}
await_taints() { # W1 W2 W3: reads the taints until worker-1..3 have these (up to 18 s), checks them
  for _ in $(seq 1 60); do
    read_taints
    [ "$(sed -n 's/^worker-1: //p' "$TMP/taints")" = "$1" ] &&
      [ "$(sed -n 's/^worker-2: //p' "$TMP/taints")" = "$2" ] &&
      [ "$(sed -n 's/^worker-3: //p' "$TMP/taints")" = "$3" ] && break
    sleep 0.3
  done
  expect_taints worker-1 "$1"
  expect_taints worker-2 "$2"
  expect_taints worker-3 "$3"
}
MAINT='example.com/maintenance-window=sunday:PreferNoSchedule'
CP='node-role.kubernetes.io/control-plane=:NoSchedule'

# bad flags
st --mode Sometimes
expect_status 2
expect_err '--mode: expected Automatic or Predictive, got "Sometimes"'
printf 'apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: [{name: p, pluginConfig: [{name: LowNodeUtilization, args: {thresholds: {cpu: 120}, targetThresholds: {cpu: 130}}}]}]\n' >"$TMP/bad.yaml"
run soft-taint --kubeconfig "$SIM_KC" --policy-config-file "$TMP/bad.yaml" --once
expect_status 2
expect_err 'cpu threshold not in [0, 100] range'

# Predictive: classification and intentions, no change; the kubeconfig found as kubectl
# finds it ($KUBECONFIG here)
KUBECONFIG="$SIM_KC" run soft-taint --policy-config-file "$TMP/policy.yaml" --once
expect_status 0
expect_err '"Node has been classified" category="overutilized" node="worker-1" usage={"MetricResource":"100"} usagePercentage={"MetricResource":100}'
expect_err '"Node has been classified" category="appropriatelyutilized" node="worker-2"'
expect_err '"Node has been classified" category="underutilized" node="worker-3"'
expect_err '"Predictive mode: the soft taint would be added to the node" node="worker-1" taint="nodeutilization.descheduler.openshift.io/overutilized"'
expect_err_count 3 'Predictive mode: the soft taint would be added'
read_taints
expect_taints worker-1 "$MAINT"
expect_taints worker-2 ""

# Automatic: the taints as classified, every other taint untouched
st --once --mode Automatic
expect_status 0
expect_err_count 3 '"The soft taint got added to the node"'
read_taints
expect_taints worker-1 "$MAINT $APPR=true:PreferNoSchedule $OVER=true:PreferNoSchedule"
expect_taints worker-2 "$APPR=true:PreferNoSchedule"
expect_taints worker-3 ""
expect_taints cp-1 "$CP"
# a second pass has nothing to do
st --once --mode Automatic
expect_status 0
expect_err_count 0 'The soft taint got'

# every second, following the load: worker-2 becomes hot, worker-1 cold, worker-3 in between.
# The first patch of worker-2 meets a conflict (someone else wrote the node): read again.
sim_ctl POST /_sim/faults '{"verb": "patch", "path": "^/api/v1/nodes/worker-2$", "status": 409, "reason": "Conflict", "message": "the object has been modified", "count": 1}' >/dev/null
"$DESCHEDULER" soft-taint --kubeconfig "$SIM_KC" --policy-config-file "$TMP/policy.yaml" --mode Automatic \
  --interval 1s --v 2 >"$TMP/loop.out" 2>"$TMP/loop.err" &
loop=$!
track_pid $loop
load 0 1 0.6
await_taints "$MAINT" "$APPR=true:PreferNoSchedule $OVER=true:PreferNoSchedule" "$APPR=true:PreferNoSchedule"
kill $loop; wait $loop 2>/dev/null
checks=$((checks + 1))
grep -q '"The node changed while its soft taints were updated; reading it again" node="worker-2" attempt=1' "$TMP/loop.err" ||
  fail "the conflict was not retried: $(grep -i worker-2 "$TMP/loop.err" | tail -n 3)"

# the shipped Deployment (deploy/soft-taint) runs this binary with arguments it accepts
"$KUBECTL" kustomize "$ROOT/deploy/soft-taint" >"$TMP/rendered.yaml" || fail "kubectl kustomize deploy/soft-taint"
python3 - "$TMP/rendered.yaml" >"$TMP/args" <<'PY' || fail "no soft-taint container in the rendered manifests"
import sys, yaml
for doc in yaml.safe_load_all(open(sys.argv[1])):
    if doc and doc["kind"] == "Deployment":
        c = doc["spec"]["template"]["spec"]["containers"][0]
        assert c["command"] == ["/bin/descheduler"], c["command"]
        print("\n".join(c["args"]))
PY
mapfile -t args <"$TMP/args"
run "${args[@]/\/policy-dir\/policy.yaml/$TMP/policy.yaml}" --kubeconfig "$SIM_KC" --once
expect_status 0
expect_err '"Starting the soft-tainter" mode="Predictive"'

# Prometheus unreachable: the pass fails and nothing changes
sed "s|url: $PROM_URL|url: http://127.0.0.1:$(free_port)|" "$TMP/policy.yaml" >"$TMP/down.yaml"
run soft-taint --kubeconfig "$SIM_KC" --policy-config-file "$TMP/down.yaml" --mode Automatic --once
expect_status 1
expect_err 'unable to capture prometheus metrics: Post'
read_taints
expect_taints worker-2 "$APPR=true:PreferNoSchedule $OVER=true:PreferNoSchedule"

# without the KubeVirt profile: clean-up of both taints, nothing else
sed 's/name: KubeVirtRelieveAndMigrate/name: other/' "$TMP/policy.yaml" >"$TMP/other.yaml"
run soft-taint --kubeconfig "$SIM_KC" --policy-config-file "$TMP/other.yaml" --mode Automatic --once
expect_status 0
expect_err '"SoftTainter is disabled, cleaning up eventual leftover taints"'
read_taints
expect_taints worker-1 "$MAINT"
expect_taints worker-2 ""
expect_taints worker-3 ""
expect_taints cp-1 "$CP"

# --- from a KubeDescheduler: the load is 0 / 1 / 0.6, so worker-2 is over, worker-3 appropriate
kd_cr() { # MODE: the CR (AsymmetricLow: thresholds 0/10, as the policy above)
  cat <<YAML
apiVersion: operator.openshift.io/v1
kind: KubeDescheduler
metadata:
  name: cluster
  namespace: openshift-kube-descheduler-operator
spec:
  managementState: Managed
  mode: $1
  deschedulingIntervalSeconds: 1
  profiles: [KubeVirtRelieveAndMigrate]
  profileCustomizations:
    devDeviationThresholds: AsymmetricLow
    devActualUtilizationProfile: PrometheusCPUCombined
YAML
}
kd_cr Predictive >"$TMP/kd.yaml"
kst() { run soft-taint --kubeconfig "$SIM_KC" --prometheus-url "$PROM_URL" --psi present "$@"; }
# flags
run soft-taint --kubeconfig "$SIM_KC" --once
expect_status 2
expect_err 'descheduler soft-taint: --policy-config-file, --kubedescheduler or --kubedescheduler-ref is required'
kst --kubedescheduler "$TMP/kd.yaml" --policy-config-file "$TMP/policy.yaml" --once
expect_status 2
expect_err 'descheduler soft-taint: --policy-config-file and --kubedescheduler cannot be used together'
kst --kubedescheduler "$TMP/kd.yaml" --mode Automatic --once
expect_status 2
expect_err 'descheduler soft-taint: --mode Automatic cannot be used with a KubeDescheduler: its spec.mode decides'
run soft-taint --kubeconfig "$SIM_KC" --policy-config-file "$TMP/policy.yaml" --prometheus-url "$PROM_URL" --once
expect_status 2
expect_err 'descheduler soft-taint: --prometheus-url is only used with --kubedescheduler or --kubedescheduler-ref'
sed 's/deschedulingIntervalSeconds: 1/deschedulingIntervalSeconds: 0/' "$TMP/kd.yaml" >"$TMP/kd-bad.yaml"
kst --kubedescheduler "$TMP/kd-bad.yaml" --once
expect_status 2
expect_err 'spec.deschedulingIntervalSeconds in body should be greater than or equal to 1'
# Predictive CR: the rendered policy's query and thresholds, intentions only
kst --kubedescheduler "$TMP/kd.yaml" --once
expect_status 0
expect_err '"Using the policy rendered from the KubeDescheduler" kubedescheduler="'"$TMP"'/kd.yaml" mode="Predictive" intervalSeconds=1'
expect_err '"Node has been classified" category="overutilized" node="worker-2"'
expect_err_count 3 'Predictive mode: the soft taint would be added'
# the rendering's warnings, but not the one telling to run the soft-tainter
expect_err 'the Scheduler config.openshift.io/v1 "cluster" could not be read'
expect_err_count 0 'the descheduler command does not taint nodes'
read_taints
expect_taints worker-2 ""
expect_taints worker-3 ""
# Automatic CR, but --mode Predictive forces log-only
kd_cr Automatic >"$TMP/kd.yaml"
kst --kubedescheduler "$TMP/kd.yaml" --mode Predictive --once
expect_status 0
expect_err 'mode="Predictive" intervalSeconds=1'
expect_err_count 3 'Predictive mode: the soft taint would be added'
read_taints
expect_taints worker-2 ""
# Automatic CR: patched
kst --kubedescheduler "$TMP/kd.yaml" --once
expect_status 0
expect_err 'mode="Automatic" intervalSeconds=1'
expect_err_count 3 '"The soft taint got added to the node"'
read_taints
expect_taints worker-1 "$MAINT"
expect_taints worker-2 "$APPR=true:PreferNoSchedule $OVER=true:PreferNoSchedule"
expect_taints worker-3 "$APPR=true:PreferNoSchedule"
expect_taints cp-1 "$CP"

# a reference, read again every pass, and the CR's 1 s interval (no --interval given)
kc apply -f "$ROOT/tests/data/profile/live/openshift-crds.yaml" >/dev/null || fail "create the OpenShift CRDs"
for _ in $(seq 1 50); do kc get kubedeschedulers -A >/dev/null 2>&1 && break; sleep 0.1; done
kc apply -f "$ROOT/tests/data/profile/live/openshift-objects.yaml" >/dev/null || fail "create the OpenShift objects"
kd_cr Predictive >"$TMP/kd.yaml"
kc apply -f "$TMP/kd.yaml" >/dev/null || fail "create the KubeDescheduler"
REF=openshift-kube-descheduler-operator/cluster
"$DESCHEDULER" soft-taint --kubeconfig "$SIM_KC" --prometheus-url "$PROM_URL" --psi present \
  --kubedescheduler-ref "$REF" >"$TMP/ref.out" 2>"$TMP/ref.err" &
loop=$!
track_pid $loop
# Predictive: the taints stay while the load moves (worker-1 hot, worker-2 cold)
load 1 0 0.6
for i in $(seq 1 40); do
  grep -q 'would be removed from the node" node="worker-2"' "$TMP/ref.err" && break
  sleep 0.3
done
checks=$((checks + 1))
grep -q '"Predictive mode: the soft taint would be removed from the node" node="worker-2"' "$TMP/ref.err" ||
  fail "the Predictive CR's passes did not follow the load: $(tail -n 5 "$TMP/ref.err")"
read_taints
expect_taints worker-2 "$APPR=true:PreferNoSchedule $OVER=true:PreferNoSchedule"
# the CR switched to Automatic: the next pass (within about a second) patches
kc patch kubedescheduler cluster -n openshift-kube-descheduler-operator --type merge \
  -p '{"spec":{"mode":"Automatic"}}' >/dev/null || fail "patch the KubeDescheduler"
await_taints "$MAINT $APPR=true:PreferNoSchedule $OVER=true:PreferNoSchedule" "" "$APPR=true:PreferNoSchedule"
kill $loop; wait $loop 2>/dev/null
checks=$((checks + 1))
[ "$(grep -c '"Using the policy rendered from the KubeDescheduler"' "$TMP/ref.err")" = 2 ] ||
  fail "expected the rendering logged at start and when the mode changed: $(grep 'Using the policy' "$TMP/ref.err")"
echo "t0503: $checks checks"
