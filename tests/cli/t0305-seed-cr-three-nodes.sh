#!/usr/bin/env bash
# The seed KubeDescheduler (examples/openshift-kubevirt/kubedescheduler.yaml:
# SoftTopologyAndDuplicates + DevKubeVirtRelieveAndMigrate, AsymmetricLow, PrometheusCPUCombined)
# run live as `descheduler --kubedescheduler ... --prometheus-url ...` against the API simulator
# and a real Prometheus (node-exporter series backfilled, the project's recording rules
# evaluated), issue 8's acceptance. Four KubeVirt workers run four VMs each, all alike, so every
# worker requests the same; the cluster's own OpenShift objects (namespaces, Route, Scheduler)
# are the example's. vm-a1 on worker-a finished a live migration five minutes ago and once
# three hours ago (two Succeeded VirtualMachineInstanceMigrations): KubevirtMigrationAware's
# cooldown is 15m doubled once, 30m. KubeVirt's own migration limits are raised (20 per
# cluster, 5 per node) so that the profile's limits are the ones that stop.
# - one hot worker by usage only (worker-a 0.8, the others 0.2-0.3, requests equal): worker-a is
#   classified overutilized from the query, vm-a1 is skipped with KubevirtMigrationAware's
#   reason, two requests in background (evictionLimits.node 2) go to worker-a's next VMs;
#   server side: exactly two VMIMs, both of worker-a's VMs; /metrics (scraped while the
#   descheduler runs at the CR's 30 s interval) counts the cooldown block and its 1800 s;
# - three hot workers: the total limit 5 stops the cycle (logged), exactly five VMIMs, at
#   most two per source node, vm-a1 again skipped.
. "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
  { echo "t0305: SKIP (prometheus/promtool are not installed: scripts/deps.sh test)"; exit 0; }
. "$(dirname "$0")/livelib.sh"
. "$(dirname "$0")/promlib.sh"
CR=$ROOT/examples/openshift-kubevirt/kubedescheduler.yaml
QUERY=descheduler:combined_utilization_and_pressure:avg1m

# the cluster: the example's OpenShift objects, four workers with four VMs each
python3 - "$ROOT" "$TMP/cluster.json" "$(date +%s)" <<'PY'
import json, sys, time
root, out, now = sys.argv[1], sys.argv[2], int(sys.argv[3])
sys.path.insert(0, root + "/tests/apisim")
import simfixtures as f
ex = json.load(open(root + "/examples/openshift-kubevirt/cluster.json"))["items"]
items = [o for o in ex if o["kind"] in ("Namespace", "PriorityClass", "Route", "Scheduler")]
kv = [o for o in ex if o["kind"] == "KubeVirt"][0]
kv["spec"]["configuration"]["migrations"] = {"parallelMigrationsPerCluster": 20,
                                             "parallelOutboundMigrationsPerNode": 5}
items.append(kv)
items.append(f.node("control-plane-0", worker=False,
                    taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]))
ts = lambda t: time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
for w in "abcd":
    items.append(f.node("worker-" + w))
    for i in range(1, 5):
        items += f.vm_with_launcher("vm-%s%d" % (w, i), "vms", "worker-" + w, guest="4Gi", cpus=2)
vmi = [o for o in items if o["kind"] == "VirtualMachineInstance" and o["metadata"]["name"] == "vm-a1"][0]
vmi["status"]["migrationState"] = {
    "migrationUid": f.uid_for("vmim", "vm-a1-recent"), "sourceNode": "worker-d", "targetNode": "worker-a",
    "startTimestamp": ts(now - 360), "endTimestamp": ts(now - 300), "completed": True}
for name, end in (("kubevirt-evacuation-old", now - 3 * 3600), ("kubevirt-evacuation-recent", now - 300)):
    items.append({"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachineInstanceMigration",
                  "metadata": {"name": name, "namespace": "vms", "uid": f.uid_for("vmim", name),
                               "creationTimestamp": ts(end - 70)},
                  "spec": {"vmiName": "vm-a1"},
                  "status": {"phase": "Succeeded",
                             "phaseTransitionTimestamps": [{"phase": "Succeeded",
                                                            "phaseTransitionTimestamp": ts(end)}],
                             "migrationState": {"sourceNode": "worker-d", "targetNode": "worker-a",
                                                "startTimestamp": ts(end - 60), "endTimestamp": ts(end),
                                                "completed": True}}})
json.dump(f.cluster_list(items), open(out, "w"), indent=1)
PY
[ -s "$TMP/cluster.json" ] || fail "could not write the cluster"

# prom_up SPEC: a Prometheus with SPEC's node series, waiting for the profile's recorded query
prom_up() {
  rm -rf "$TMP/tsdb"
  prom_backfill "$1" "$TMP/tsdb"
  prom_start "$TMP/tsdb"
  prom_wait_series "$QUERY" 5
  prom_query "$QUERY" >"$TMP/query.json"
}
# the recorded value of a node, rounded to two places
value() { json_eval "$TMP/query.json" "round([float(s['value'][1]) for s in d['data']['result'] if s['metric']['instance'] == '$1'][0], 2)"; }
expect_value() { checks=$((checks + 1)); [ "$(value "$1")" = "$2" ] || fail "$QUERY of $1 is $(value "$1"), expected $2"; }
# the simulator's migrations created by this run (not the two old ones), one "VMI NODE" line
# each, NODE the node KubeVirt evacuates (its kubevirt.io/evacuationMigration annotation)
new_vmims() {
  kc get vmim -n vms -o json >"$TMP/vmim.json" || fail "kubectl get vmim"
  json_eval "$TMP/vmim.json" "'\n'.join(sorted('%s %s' % (m['spec']['vmiName'], m['metadata']['annotations'].get('kubevirt.io/evacuationMigration', '?')) for m in d['items'] if m['metadata']['name'] not in ('kubevirt-evacuation-old', 'kubevirt-evacuation-recent')))"
}
COOLDOWN_RE='"VMI in migration cooldown, deferring eviction" plugin="KubevirtMigrationAware" pod="vms/virt-launcher-vm-a1-[a-z0-9]*" vmi="vm-a1" node="worker-a" migrationCount=2 elapsed="[56]m[0-9]*s" effectiveCooldown="30m0s" remaining="2[45]m[0-9]*s"'

# ---- 1. one worker hot by usage, not by requests
sim_start "$TMP/cluster.json" --migration-seconds 600
# every worker requests the same (server side)
kc get pods -A -o json >"$TMP/pods.json" || fail "kubectl get pods"
checks=$((checks + 1))
[ "$(json_eval "$TMP/pods.json" "sorted(set(sum(int(c['resources'].get('requests', {}).get('cpu', '0m')[:-1]) for p in d['items'] if p['spec'].get('nodeName') == n for c in p['spec']['containers']) for n in ('worker-a', 'worker-b', 'worker-c', 'worker-d')))")" = "[800]" ] ||
  fail "the workers' CPU requests differ"
cat >"$TMP/spec1.json" <<'JSON'
{"nodes": {
  "worker-a": {"busy": 0.8, "psi_cpu": 0.2, "mem_used": 0.6},
  "worker-b": {"busy": 0.3, "psi_cpu": 0.0, "mem_used": 0.3},
  "worker-c": {"busy": 0.25, "psi_cpu": 0.0, "mem_used": 0.3},
  "worker-d": {"busy": 0.2, "psi_cpu": 0.0, "mem_used": 0.3},
  "control-plane-0": {"busy": 0.3, "psi_cpu": 0.0, "mem_used": 0.4, "role": "control-plane"}}}
JSON
prom_up "$TMP/spec1.json"
expect_value worker-a 0.8
expect_value worker-b 0.3
expect_value worker-d 0.2

# as the operator's Deployment runs it: the CR's 30 s interval, /metrics served; one cycle
port=$(free_port)
"$DESCHEDULER" --kubeconfig "$SIM_KC" --kubedescheduler "$CR" --prometheus-url "$PROM_URL" --v 3 \
  --bind-address 127.0.0.1 --secure-port "$port" >"$TMP/out" 2>"$TMP/err" &
pid=$!
track_pid $pid
for _ in $(seq 1 300); do grep -q '"Number of evictions/requests"' "$TMP/err" && break; sleep 0.1; done
curl -sk "https://127.0.0.1:$port/metrics" >"$TMP/metrics.txt" || fail "scrape /metrics"
kill -TERM $pid
wait $pid
status=$?
expect_status 0
expect_err '"Using the policy rendered from the KubeDescheduler"'
expect_err_count 1 '"Number of evictions/requests"'
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="overutilized" node="worker-a" usage={"MetricResource":"80"}'
for n in worker-b worker-c worker-d; do
  expect_err "\"Node has been classified\" plugin=\"LowNodeUtilization\" ExtensionPoint=\"Balance\" category=\"underutilized\" node=\"$n\""
done
expect_err_count 1 'category="overutilized"'
checks=$((checks + 1))
[ "$(grep -c "$COOLDOWN_RE" "$TMP/err")" = 1 ] || fail "vm-a1 was not skipped once with KubevirtMigrationAware's reason"
expect_err_count 2 '"Eviction in background assumed"'
expect_err '"Eviction in background assumed" pod="vms/virt-launcher-vm-a2-'
expect_err '"Eviction in background assumed" pod="vms/virt-launcher-vm-a3-'
expect_err '"Max number of evictions per node per plugin reached" plugin="LowNodeUtilization" ExtensionPoint="Balance" limit=2'
expect_err '"Number of evictions/requests" totalEvicted=0 evictionRequests=2'
checks=$((checks + 1))
[ "$(new_vmims)" = "$(printf 'vm-a2 worker-a\nvm-a3 worker-a')" ] || fail "migrations: $(new_vmims)"
# KubevirtMigrationAware's metrics, as Prometheus would scrape them
m=$TMP/metrics.txt
checks=$((checks + 1))
grep -qx 'descheduler_kubevirt_eviction_blocks_total{namespace="vms",node="worker-a",reason="cooldown"} 1' "$m" ||
  fail "no cooldown block in /metrics: $(grep kubevirt "$m")"
checks=$((checks + 1))
[ "$(grep -c '^descheduler_kubevirt_eviction_blocks_total{' "$m")" = 1 ] || fail "other blocks in /metrics: $(grep kubevirt "$m")"
for l in '_bucket{le="900"} 0' '_bucket{le="1800"} 1' '_bucket{le="+Inf"} 1' '_sum 1800' '_count 1'; do
  checks=$((checks + 1))
  grep -qx "descheduler_kubevirt_effective_cooldown_seconds$l" "$m" || fail "/metrics lacks descheduler_kubevirt_effective_cooldown_seconds$l"
done
checks=$((checks + 1))
grep -qx 'descheduler_pods_evicted_total{namespace="vms",node="worker-a",profile="KubeVirtRelieveAndMigrate",result="background",strategy="LowNodeUtilization"} 2' "$m" ||
  fail "no two background requests in /metrics"
kill "$SIM_PID" "$PROM_PID"

# ---- 2. three hot workers: the total limit (5) stops, at most 2 per node
sim_start "$TMP/cluster.json" --migration-seconds 600
cat >"$TMP/spec2.json" <<'JSON'
{"nodes": {
  "worker-a": {"busy": 0.9, "psi_cpu": 0.2, "mem_used": 0.6},
  "worker-b": {"busy": 0.85, "psi_cpu": 0.2, "mem_used": 0.6},
  "worker-c": {"busy": 0.8, "psi_cpu": 0.2, "mem_used": 0.6},
  "worker-d": {"busy": 0.1, "psi_cpu": 0.0, "mem_used": 0.3},
  "control-plane-0": {"busy": 0.3, "psi_cpu": 0.0, "mem_used": 0.4, "role": "control-plane"}}}
JSON
prom_up "$TMP/spec2.json"
expect_value worker-a 0.9
expect_value worker-c 0.8
expect_value worker-d 0.1
run_live --kubedescheduler "$CR" --prometheus-url "$PROM_URL" --descheduling-interval 0 --v 3
expect_status 0
for n in worker-a worker-b worker-c; do
  expect_err "\"Node has been classified\" plugin=\"LowNodeUtilization\" ExtensionPoint=\"Balance\" category=\"overutilized\" node=\"$n\""
done
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="underutilized" node="worker-d"'
checks=$((checks + 1))
[ "$(grep -c "$COOLDOWN_RE" "$TMP/err")" = 1 ] || fail "vm-a1 was not skipped with KubevirtMigrationAware's reason"
expect_err_count 5 '"Eviction in background assumed"'
expect_err_count 2 '"Max number of evictions per node per plugin reached" plugin="LowNodeUtilization" ExtensionPoint="Balance" limit=2'
expect_err '"Error evicting pod" err="maximum number of evicted pods per a descheduling cycle reached" limit=5'
expect_err '"Number of evictions/requests" totalEvicted=0 evictionRequests=5'
# server side: exactly five new migrations, two per hot worker at most, none of worker-d
new_vmims >"$TMP/new"
checks=$((checks + 1))
[ "$(wc -l <"$TMP/new")" = 5 ] || fail "expected 5 new VMIMs: $(cat "$TMP/new")"
checks=$((checks + 1))
[ "$(cat "$TMP/new")" = "$(printf 'vm-a2 worker-a\nvm-a3 worker-a\nvm-b1 worker-b\nvm-b2 worker-b\nvm-c1 worker-c')" ] ||
  fail "migrations: $(cat "$TMP/new")"
checks=$((checks + 1))
[ "$(awk '{print $2}' "$TMP/new" | sort | uniq -c | awk '$1 > 2' | wc -l)" = 0 ] || fail "more than 2 from one node"
echo "t0305: $checks checks"
