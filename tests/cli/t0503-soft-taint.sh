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
# - a policy without the KubeVirt profile cleans both taints up.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
. "$(dirname "$0")/promlib.sh"
OVER=nodeutilization.descheduler.openshift.io/overutilized
APPR=nodeutilization.descheduler.openshift.io/appropriate

sim_start "$ROOT/tests/data/usage/cluster.json"
mkdir -p "$TMP/www" "$TMP/tsdb"
load() { # w1 w2 w3: the scraped gauge, replaced atomically
  printf 'test_node_load{instance="worker-1"} %s\ntest_node_load{instance="worker-2"} %s\ntest_node_load{instance="worker-3"} %s\ntest_node_load{instance="cp-1"} 0\n' \
    "$1" "$2" "$3" >"$TMP/www/metrics.new" && mv "$TMP/www/metrics.new" "$TMP/www/metrics.txt"
}
load 1 0.6 0
port=$(free_port)
python3 -m http.server --bind 127.0.0.1 --directory "$TMP/www" "$port" >/dev/null 2>&1 &
track_pid $!
prom_start "$TMP/tsdb" "127.0.0.1:$port"
prom_wait_series test_node_load 4

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

# Predictive: classification and intentions, no change
st --once
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
for i in $(seq 1 60); do
  read_taints
  grep -qx "worker-1: $MAINT" "$TMP/taints" && grep -qx "worker-2: $APPR=true:PreferNoSchedule $OVER=true:PreferNoSchedule" "$TMP/taints" &&
    grep -qx "worker-3: $APPR=true:PreferNoSchedule" "$TMP/taints" && break
  sleep 0.3
done
kill $loop; wait $loop 2>/dev/null
expect_taints worker-1 "$MAINT"
expect_taints worker-2 "$APPR=true:PreferNoSchedule $OVER=true:PreferNoSchedule"
expect_taints worker-3 "$APPR=true:PreferNoSchedule"
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
echo "t0503: $checks checks"
