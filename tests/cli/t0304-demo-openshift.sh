#!/usr/bin/env bash
# `make demo-openshift` as a newcomer runs it (tests/apisim/demo-openshift.sh): the OpenShift
# example CR, live against the API simulator and a real Prometheus. The hot node by usage is
# classified overutilized from the recorded query, two of its VMs are asked to move (the
# profile's evictionLimits.node 2), the VM that cannot live-migrate is left alone, and the
# simulator's KubeVirt starts exactly those two migrations.
. "$(dirname "$0")/lib.sh"
command -v prometheus >/dev/null || skip_script "prometheus is not installed (scripts/deps.sh test installs it)"

"$ROOT/tests/apisim/demo-openshift.sh" "$DESCHEDULER" >"$TMP/out" 2>"$TMP/err"
status=$?
expect_status 0
expect_out 'worker-a         0.75'
expect_out '"Using the policy rendered from the KubeDescheduler"'
expect_out 'category="overutilized" node="worker-a"'
expect_out 'category="underutilized" node="worker-b"'
expect_out 'rule="requireLiveMigration" reason="KubeVirt would refuse the eviction: VMI vm-gpu'
expect_out '"Eviction in background assumed" pod="vms/virt-launcher-vm-alpha-'
expect_out '"Eviction in background assumed" pod="vms/virt-launcher-vm-bravo-'
expect_out '"Number of evictions/requests" totalEvicted=0 evictionRequests=2'
checks=$((checks + 1))
[ "$(grep -c 'vms/kubevirt-evacuation-.* phase=' "$TMP/out")" = 2 ] || fail "expected two migrations: $(cat "$TMP/out")"
expect_out 'vmi=vm-alpha  phase=Running'
expect_out 'vmi=vm-bravo  phase=Running'
echo "t0304: $checks checks"
