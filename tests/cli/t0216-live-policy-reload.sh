#!/usr/bin/env bash
# Deployment mode follows a policy file that changes under it, the way the kubelet updates a
# ConfigMap volume: policy.yaml is a link to ..data/policy.yaml, and ..data, a link to a
# timestamped directory, is swapped for a new one in one rename.
#  - a policy that evicts nothing; swapped for the example's VM rebalance: the next cycle logs
#    the change and requests the VM's migration (a PolicyLoaded Event on the descheduler's
#    pod, named by POD_NAMESPACE and POD_NAME; descheduler_policy_reloads_total{result="loaded"});
#  - the same content in a new directory: no reload;
#  - an invalid policy: refused once with the message the same file gets at start, a
#    PolicyRejected Event, {result="rejected"}; cycles go on with the last good policy;
#  - the file fixed again: loaded.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
sim_start "$EXAMPLE/cluster.json" --migration-seconds 600

cm=$TMP/configmap
mkdir -p "$cm"
generation=0
# put FILE: the kubelet's update of the volume: a new directory, ..data swapped, the old removed
put() {
  generation=$((generation + 1))
  local dir="..2026_12_05_00_00_0$generation.000000001" old
  old=$(readlink "$cm/..data" 2>/dev/null)
  mkdir "$cm/$dir"
  cp "$1" "$cm/$dir/policy.yaml"
  ln -s "$dir" "$cm/..data_tmp"
  mv -T "$cm/..data_tmp" "$cm/..data"
  [ -e "$cm/policy.yaml" ] || ln -s ..data/policy.yaml "$cm/policy.yaml"
  [ -z "$old" ] || rm -rf "${cm:?}/$old"
}
cat >"$TMP/quiet.yaml" <<'YAML'
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
profiles:
- name: quiet
  pluginConfig:
  - name: RemovePodsViolatingNodeTaints
    args: {}
  plugins:
    deschedule: {enabled: [RemovePodsViolatingNodeTaints]}
YAML
cat >"$TMP/bad.yaml" <<'YAML'
apiVersion: descheduler/v1alpha2
kind: DeschedulerPolicy
maxNoOfPodsToEvictTotal: many
profiles: []
YAML
# the message the invalid policy gets at start, from the same path
put "$TMP/bad.yaml"
run_live --policy-config-file "$cm/policy.yaml"
expect_status 2
start_msg=$(sed -n 's/^descheduler: //p' "$TMP/err" | head -n1)
checks=$((checks + 1)); [ -n "$start_msg" ] || fail "no start message for the invalid policy"
put "$TMP/quiet.yaml"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
POD_NAMESPACE=vms POD_NAME=descheduler-7f9c-x2p4q "$DESCHEDULER" --kubeconfig "$SIM_KC" --secure-port "$port" \
  --policy-config-file "$cm/policy.yaml" --descheduling-interval 1s --feature-gates EvictionsInBackground=true \
  --v 3 >"$TMP/out" 2>"$TMP/err" &
pid=$!
metric() { curl -sk "https://127.0.0.1:$port/metrics" | grep -F "descheduler_policy_reloads_total{result=\"$1\"}" | awk '{print $2}'; }
events() { # REASON: the Events of that reason about the descheduler's pod, as "type note" lines
  kc get events.events.k8s.io -n vms -o json >"$TMP/events.json" || fail "list the Events"
  json_eval "$TMP/events.json" "'\n'.join(e['type'] + ' ' + e['note'] for e in d['items'] if e['reason'] == '$1' and e['regarding']['kind'] == 'Pod' and e['regarding']['name'] == 'descheduler-7f9c-x2p4q')"
}
changed='"The policy file changed; the new policy is used from this cycle"'

wait_lines 2 '"Number of evictions/requests" totalEvicted=0 evictionRequests=0'
expect_err_count 0 "$changed"

# --- the VM rebalance: used from the next cycle
put "$EXAMPLE/policy.yaml"
wait_lines 1 "$changed file=\"$cm/policy.yaml\""
wait_lines 1 '"Eviction in background assumed" pod="vms/virt-launcher-vm-alpha-4f551"'
checks=$((checks + 1)); [ "$(metric loaded)" = 1 ] || fail "descheduler_policy_reloads_total{result=\"loaded\"} is not 1"
for _ in $(seq 1 50); do [ -n "$(events PolicyLoaded)" ] && break; sleep 0.1; done
checks=$((checks + 1)); [ "$(events PolicyLoaded)" = "Normal the policy file $cm/policy.yaml changed; its new policy is used from this cycle" ] ||
  fail "no PolicyLoaded Event on the descheduler's pod: $(events PolicyLoaded)"

# --- the same content again: nothing to reload
put "$EXAMPLE/policy.yaml"
n=$(cycles)
for _ in $(seq 1 50); do [ "$(cycles)" -ge "$((n + 2))" ] && break; sleep 0.1; done
expect_err_count 1 "$changed"

# --- invalid: refused once, the last good policy keeps running
put "$TMP/bad.yaml"
refused='"The changed policy is refused; the last good policy keeps running"'
wait_lines 1 "$refused"
more_cycles 3 "cycles stopped after the refused policy"
expect_err_count 1 "$refused"
# the same message as at start (klog quotes it: its " become \")
expect_err "$refused err=\"${start_msg//\"/\\\"}\" file=\"$cm/policy.yaml\""
checks=$((checks + 1)); [ "$(metric rejected)" = 1 ] || fail "descheduler_policy_reloads_total{result=\"rejected\"} is not 1"
checks=$((checks + 1)); [ "$(events PolicyRejected)" = "Warning $start_msg" ] ||
  fail "no PolicyRejected Event with the start message: $(events PolicyRejected)"
# the last good policy still decides: its LowNodeUtilization runs every cycle
n=$(grep -c '"Number of overutilized nodes"' "$TMP/err")
for _ in $(seq 1 50); do [ "$(grep -c '"Number of overutilized nodes"' "$TMP/err")" -gt "$n" ] && break; sleep 0.1; done
checks=$((checks + 1)); [ "$(grep -c '"Number of overutilized nodes"' "$TMP/err")" -gt "$n" ] || fail "the last good policy does not run"

# --- fixed: loaded again
put "$TMP/quiet.yaml"
wait_lines 2 "$changed"
checks=$((checks + 1)); [ "$(metric loaded)" = 2 ] || fail "descheduler_policy_reloads_total{result=\"loaded\"} is not 2"

kill -TERM "$pid"
wait "$pid"
status=$?
expect_status 0
echo "t0216: $checks checks"
