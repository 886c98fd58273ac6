#!/usr/bin/env bash
# The descheduler run from an OpenShift KubeDescheduler against the API simulator, which serves
# the operator's Route, Scheduler and KubeDescheduler resources as CRDs:
#  - `profile render` reads the facts (and, with a reference, the CR) from the API server;
#  - --kubedescheduler FILE: the CR's Predictive mode is a dry run even with --dry-run=false;
#    an explicit --descheduling-interval 0 wins (one cycle);
#  - --kubedescheduler-ref (with an explicit --v 3, which wins over logLevel): the CR is read
#    again every cycle; switching it to Automatic makes the
#    next cycle request live migrations; an invalid CR is refused once (the operator's message,
#    an Event on the CR, descheduler_policy_reloads_total) while the last good policy keeps
#    running; a deleted CR stops all evictions; SIGTERM exits 0.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
LIVE=$ROOT/tests/data/profile/live
REF=openshift-kube-descheduler-operator/cluster
sim_start "$EXAMPLE/cluster.json" --migration-seconds 600
kc apply -f "$LIVE/openshift-crds.yaml" >/dev/null || fail "create the OpenShift CRDs"
for _ in $(seq 1 50); do kc get kubedeschedulers -A >/dev/null 2>&1 && break; sleep 0.1; done
kc apply -f "$LIVE/openshift-objects.yaml" >/dev/null || fail "create the OpenShift objects"

cat >"$TMP/kd.yaml" <<'YAML'
apiVersion: operator.openshift.io/v1
kind: KubeDescheduler
metadata:
  name: cluster
  namespace: openshift-kube-descheduler-operator
spec:
  managementState: Managed
  mode: Predictive
  deschedulingIntervalSeconds: 1
  profiles: [LongLifecycle, EvictPodsWithLocalStorage]
  profileCustomizations:
    devLowNodeUtilizationThresholds: Low
    devEnableEvictionsInBackground: true
YAML
vmims() { kc get vmim -n vms -o json >"$TMP/vmim.json" && json_eval "$TMP/vmim.json" 'len(d["items"])'; }

# --- a file, one cycle: Predictive is a dry run whatever --dry-run says
run_live --kubedescheduler "$TMP/kd.yaml" --descheduling-interval 0 --dry-run=false --client-connection-qps 100
expect_status 0
expect_err "\"Using the policy rendered from the KubeDescheduler\" kubedescheduler=\"$TMP/kd.yaml\" dryRun=true deschedulingIntervalSeconds=0"
expect_err '"Evicted pod in dry run mode" pod="vms/virt-launcher-vm-alpha-4f551"'
expect_err '"Processing node"' # logLevel Normal: -v=2
checks=$((checks + 1)); [ "$(vmims)" = 0 ] || fail "a dry run requested migrations"

# --- refused at start
run_live --kubedescheduler "$TMP/kd.yaml" --policy-config-file "$EXAMPLE/policy.yaml"
expect_status 2
expect_err 'descheduler: --policy-config-file and --kubedescheduler cannot be used together'
sed 's/\[LongLifecycle, EvictPodsWithLocalStorage\]/[LongLifecycle, LifecycleAndUtilization]/' "$TMP/kd.yaml" >"$TMP/bad.yaml"
run_live --kubedescheduler "$TMP/bad.yaml"
expect_status 2
expect_err "descheduler: $TMP/bad.yaml: cannot declare LongLifecycle and LifecycleAndUtilization profiles simultaneously"
run_live --kubedescheduler-ref "$REF"
expect_status 2
expect_err "descheduler: kubedescheduler $REF: kubedeschedulers.operator.openshift.io \"cluster\" not found"

# --- profile render reads the same facts from the API server (file, then the CR itself)
cat >"$TMP/kv.yaml" <<'YAML'
apiVersion: operator.openshift.io/v1
kind: KubeDescheduler
metadata: {name: cluster, namespace: openshift-kube-descheduler-operator}
spec: {managementState: Managed, deschedulingIntervalSeconds: 60, profiles: [KubeVirtRelieveAndMigrate]}
YAML
run profile render --kubedescheduler "$TMP/kv.yaml" --kubeconfig "$SIM_KC" --psi present -o json
expect_status 0
expect_out '"exclude":["kube-system","hypershift","openshift","openshift-kube-descheduler-operator","openshift-monitoring"]'
expect_out '"metricsProviders":[{"prometheus":{"url":"https://prometheus-k8s-openshift-monitoring.apps.example.com"},"source":"Prometheus"}]'
expect_out '"nodeSelector":"kubevirt.io/schedulable=true"'
kc apply -f "$TMP/kd.yaml" >/dev/null || fail "create the KubeDescheduler"
run profile render --kubedescheduler-ref "$REF" --kubeconfig "$SIM_KC"
expect_status 0
expect_out "# DeschedulerPolicy rendered from kubedescheduler $REF"
expect_out '--descheduling-interval=1s --feature-gates=EvictionsInBackground=true --dry-run=true -v=2'
expect_out '- name: LongLifecycle'

# --- a reference, followed cycle after cycle
# --v 3 on the command line wins over the CR's logLevel (Normal, -v=2)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$DESCHEDULER" --kubeconfig "$SIM_KC" --secure-port "$port" --kubedescheduler-ref "$REF" --v 3 \
  --client-connection-qps 100 --client-connection-burst 100 >"$TMP/out" 2>"$TMP/err" &
pid=$!
wait_lines 2 '"Evicted pod in dry run mode" pod="vms/virt-launcher-vm-alpha-4f551"'
checks=$((checks + 1)); [ "$(vmims)" = 0 ] || fail "Predictive requested migrations"

kc patch kubedescheduler cluster -n openshift-kube-descheduler-operator --type merge \
  -p '{"spec":{"mode":"Automatic"}}' >/dev/null || fail "patch mode"
wait_lines 1 "\"The KubeDescheduler's rendering changed; the new policy is used from this cycle\" kubedescheduler=\"kubedescheduler $REF\" dryRun=false"
wait_lines 1 '"Eviction in background assumed" pod="vms/virt-launcher-vm-alpha-4f551"'
checks=$((checks + 1)); [ "$(vmims)" -ge 1 ] || fail "Automatic requested no migration"

# invalid: refused once with the operator's message, an Event on the CR and a metric; the last
# good policy (Automatic) keeps running, cycle after cycle
kc patch kubedescheduler cluster -n openshift-kube-descheduler-operator --type merge \
  -p '{"spec":{"profiles":["LongLifecycle","EvictPodsWithLocalStorage","LifecycleAndUtilization"]}}' >/dev/null || fail "patch profiles"
refused='"The KubeDescheduler'"'"'s new rendering is refused; the last good policy keeps running" err="kubedescheduler openshift-kube-descheduler-operator/cluster: cannot declare LongLifecycle and LifecycleAndUtilization profiles simultaneously"'
wait_lines 1 "$refused"
more_cycles 3 "cycles stopped while the KubeDescheduler was invalid"
expect_err_count 1 "$refused"
checks=$((checks + 1)); grep -q 'descheduler_policy_reloads_total{result="rejected"} 1$' <(curl -sk "https://127.0.0.1:$port/metrics") ||
  fail "no rejected reload in /metrics"
kc get events.events.k8s.io -n openshift-kube-descheduler-operator -o json >"$TMP/events.json" || fail "list the Events"
checks=$((checks + 1))
[ "$(json_eval "$TMP/events.json" '[e["type"] + " " + e["regarding"]["kind"] + "/" + e["regarding"]["name"] + " " + e["note"] for e in d["items"] if e["reason"] == "PolicyRejected"]')" = \
  "['Warning KubeDescheduler/cluster kubedescheduler openshift-kube-descheduler-operator/cluster: cannot declare LongLifecycle and LifecycleAndUtilization profiles simultaneously']" ] ||
  fail "no PolicyRejected Event on the KubeDescheduler: $(cat "$TMP/events.json")"

# fixed: the same rendering as the last good one comes back
kc patch kubedescheduler cluster -n openshift-kube-descheduler-operator --type merge \
  -p '{"spec":{"profiles":["LongLifecycle","EvictPodsWithLocalStorage"]}}' >/dev/null || fail "patch profiles back"
wait_lines 1 '"The KubeDescheduler can be rendered again; its policy is used from this cycle"'
more_cycles 1 "cycles did not go on"

# a rendering whose policy does not load (a priority class that is not there): refused once,
# cycle after cycle, the last good policy running; then fixed
kc patch kubedescheduler cluster -n openshift-kube-descheduler-operator --type merge \
  -p '{"spec":{"profileCustomizations":{"thresholdPriorityClassName":"no-such-class"}}}' >/dev/null || fail "patch the priority class"
noclass='"The KubeDescheduler'"'"'s new rendering is refused; the last good policy keeps running"'
wait_lines 2 "$noclass"
more_cycles 3 "cycles stopped while the policy did not load"
expect_err_count 2 "$noclass"
expect_err 'no-such-class'
kc patch kubedescheduler cluster -n openshift-kube-descheduler-operator --type json \
  -p '[{"op":"remove","path":"/spec/profileCustomizations/thresholdPriorityClassName"}]' >/dev/null || fail "remove the priority class"
wait_lines 2 "\"The KubeDescheduler's rendering changed; the new policy is used from this cycle\""

# gone: nothing is evicted until it is back
kc delete kubedescheduler cluster -n openshift-kube-descheduler-operator >/dev/null || fail "delete the KubeDescheduler"
wait_lines 1 '"The KubeDescheduler is not there; nothing is evicted until it is"'
gone=$(cycles)
sleep 2.5
checks=$((checks + 1)); [ "$(cycles)" -le "$((gone + 1))" ] || fail "cycles ran while the KubeDescheduler was gone"

kill -TERM "$pid"
wait "$pid"
status=$?
expect_status 0
echo "t0303: $checks checks"
