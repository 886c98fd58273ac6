#!/usr/bin/env bash
# Live failures are failures: KubeVirt's 429 without the feature gate, a PDB's 429 with it,
# a cluster that cannot be listed (nothing evicted), and --dry-run (no eviction request).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
# eviction requests the simulator received since its counters were last cleared
evictions() { sim_ctl GET /_sim/requests | python3 -c 'import json,sys; print(sum(v for k, v in json.load(sys.stdin)["byPath"].items() if k.endswith("/eviction")))'; }

# 1. without EvictionsInBackground KubeVirt's 429 counts as an eviction failure
sim_start "$EXAMPLE/cluster.json" --migration-seconds 600
run_live --policy-config-file "$EXAMPLE/policy.yaml" --v 1
expect_status 0
expect_err '"Error evicting pod" err="error when evicting pod (ignoring) \"virt-launcher-vm-alpha-4f551\": admission webhook \"virt-launcher-eviction-interceptor.kubevirt.io\" denied the request: Eviction triggered evacuation of VMI \"vms/vm-alpha\"" pod="vms/virt-launcher-vm-alpha-4f551"'
expect_err '"Number of evictions/requests" totalEvicted=0 evictionRequests=0'
expect_err_count 0 'Eviction in background'

# 2. a PDB's 429 is a failure even with the gate on (the pods carry no request-evict-only)
sim_start "$DATA/../live/pdb-cluster.json"
run_live --policy-config-file "$DATA/../live/pdb-policy.yaml" --feature-gates EvictionsInBackground=true --v 1
expect_status 0
expect_err '"Node has been classified" plugin="LowNodeUtilization" ExtensionPoint="Balance" category="overutilized" node="n1"'
expect_err '"Error evicting pod" err="error when evicting pod (ignoring) \"web-6d4b9-0\": Cannot evict pod as it would violate the pod'"'"'s disruption budget."'
expect_err '"Number of evictions/requests" totalEvicted=0 evictionRequests=0'
kc get pods -n shop --no-headers >"$TMP/pods.txt"
checks=$((checks + 1)); [ "$(wc -l <"$TMP/pods.txt")" -eq 4 ] || fail "a PDB-protected pod was deleted"

# 3. --dry-run decides the same but sends no eviction
kc delete pdb web -n shop >/dev/null || fail "delete pdb"
sim_ctl DELETE /_sim/requests >/dev/null
run_live --policy-config-file "$DATA/../live/pdb-policy.yaml" --dry-run --v 1
expect_status 0
expect_err '"Evicted pod in dry run mode" pod="shop/web-6d4b9-0" reason="" strategy="LowNodeUtilization" node="n1" profile="balance"'
checks=$((checks + 1)); [ "$(evictions)" = 0 ] || fail "dry run sent an eviction"
kc get pods -n shop --no-headers >"$TMP/pods.txt"
checks=$((checks + 1)); [ "$(wc -l <"$TMP/pods.txt")" -eq 4 ] || fail "dry run deleted a pod"

# 4. a real run evicts (201) and the pod is gone
run_live --policy-config-file "$DATA/../live/pdb-policy.yaml" --v 1
expect_status 0
checks=$((checks + 1)); [ "$(evictions)" -ge 1 ] || fail "the simulator saw no eviction request"
expect_err '"Evicted pod" pod="shop/web-6d4b9-0" reason="" strategy="LowNodeUtilization" node="n1" profile="balance"'
kc get events -n shop -o json >"$TMP/events.json"
checks=$((checks + 1))
[ "$(json_eval "$TMP/events.json" 'sum(1 for e in d["items"] if e.get("reason") == "LowNodeUtilization")')" -ge 1 ] || fail "no eviction event"

# 5. a cluster that cannot be listed: nothing is evicted, the run says why, retries with
#    backoff and gives up with exit 1 (attempts at 0, 1, 3 and 7 seconds). The failures are
#    the simulator's fault rules: a real API server cannot be told to fail.
if ! live_backend_is apisim; then
  skip_part "part 5 (a cluster that cannot be listed): it needs the API simulator's fault rules"
  echo "t0201: $checks checks"
  exit 0
fi
sim_ctl POST /_sim/faults '{"path": "/api/v1/pods", "status": 500, "message": "etcd is sad"}' >/dev/null
sim_ctl DELETE /_sim/requests >/dev/null
run_live --policy-config-file "$DATA/../live/pdb-policy.yaml" --v 1 --descheduling-interval 0
expect_status 1
expect_err_count 4 'Failed to read the cluster state; nothing is evicted this cycle'
expect_err 'etcd is sad'
expect_err '"Giving up: the cycle could not read the cluster" err="cycle failed" attempts=4'
checks=$((checks + 1)); [ "$(evictions)" = 0 ] || fail "evicted while the cluster could not be listed"
# a passing outage: the next attempt succeeds and the run ends well
sim_ctl DELETE /_sim/faults >/dev/null
sim_ctl POST /_sim/faults '{"path": "/api/v1/nodes", "status": 503, "count": 1}' >/dev/null
run_live --policy-config-file "$DATA/../live/pdb-policy.yaml" --v 1
expect_status 0
expect_err_count 1 'Failed to read the cluster state'
expect_err '"Number of evictions/requests"' 
echo "t0201: $checks checks"
