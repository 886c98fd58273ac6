#!/usr/bin/env bash
# `descheduler pause` / `descheduler resume` against the API simulator. With the runbook's
# CronJob: a descheduler run starts a live migration; pause suspends the CronJob and lists the
# migration still running; resume refuses while it runs and succeeds once the simulator has
# completed it. Then the same with a Deployment (scaled to 0 and back, the replica count kept
# in an annotation), and the errors: no labelled object, two of them.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
RB=$ROOT/tests/data/runbook

sim_start "$EXAMPLE/cluster.json" --migration-seconds 600
kc create namespace descheduler >/dev/null
kc apply -f "$RB/cronjob.yaml" >/dev/null || fail "kubectl apply cronjob"
run_live --policy-config-file "$EXAMPLE/policy.yaml" --feature-gates=EvictionsInBackground=true --v=3
expect_status 0
vmim=$(kc get vmim -n vms -o jsonpath='{.items[0].metadata.name}')
checks=$((checks + 1))
[ -n "$vmim" ] || fail "the run started no migration"

# --- pause: the CronJob is suspended, the running migration listed
run pause --kubeconfig "$SIM_KC"
expect_status 0
expect_out 'Paused CronJob descheduler/descheduler: spec.suspend true'
expect_out '1 migration is not finished: `descheduler resume` waits until it is Succeeded or Failed:'
expect_out "vms                  $vmim"
expect_out 'vm-alpha                 Running'
checks=$((checks + 1))
[ "$(kc get cronjob descheduler -n descheduler -o jsonpath='{.spec.suspend}')" = true ] ||
  fail "the CronJob is not suspended"
run pause --kubeconfig "$SIM_KC"
expect_status 0
expect_out 'CronJob descheduler/descheduler is already suspended: nothing to do'

# --- resume refuses while the migration runs
run resume --kubeconfig "$SIM_KC"
expect_status 1
expect_out 'Refusing to resume: 1 VirtualMachineInstanceMigration is not finished (neither Succeeded nor Failed):'
expect_out "$vmim"
checks=$((checks + 1))
[ "$(kc get cronjob descheduler -n descheduler -o jsonpath='{.spec.suspend}')" = true ] ||
  fail "resume changed the CronJob while refusing"
run resume --help
expect_status 0
expect_out 'There is deliberately no --force'
run resume --kubeconfig "$SIM_KC" --force
expect_status 2

# --- the migration completes: resume
sim_ctl POST /_sim/migrations/advance '{"seconds": 700}' >/dev/null || fail "advance migrations"
run resume --kubeconfig "$SIM_KC"
expect_status 0
expect_out 'Resumed CronJob descheduler/descheduler: spec.suspend false'
checks=$((checks + 1))
[ "$(kc get cronjob descheduler -n descheduler -o jsonpath='{.spec.suspend}')" = false ] ||
  fail "the CronJob is still suspended"
run resume --kubeconfig "$SIM_KC"
expect_status 0
expect_out 'is already running'
run pause --kubeconfig "$SIM_KC" --namespace descheduler
expect_status 0
expect_out 'No migration is running: `descheduler resume` may run at any time.'

# --- two labelled objects: an error naming both; --namespace picks one
kc apply -f "$RB/deployment.yaml" >/dev/null || fail "kubectl apply deployment"
run pause --kubeconfig "$SIM_KC"
expect_status 1
expect_err 'descheduler pause: 2 objects are labelled app.kubernetes.io/name=descheduler: CronJob descheduler/descheduler, Deployment kube-system/descheduler'

# --- a Deployment: scaled to 0, the count remembered, restored by resume
run pause --kubeconfig "$SIM_KC" -n kube-system
expect_status 0
expect_out 'Paused Deployment kube-system/descheduler: scaled from 1 to 0 (the count is kept in annotation vm-rebalance.descheduler.io/paused-replicas)'
kc get deployment descheduler -n kube-system -o json >"$TMP/d.json"
checks=$((checks + 1))
[ "$(json_eval "$TMP/d.json" 'd["spec"]["replicas"], d["metadata"]["annotations"]["vm-rebalance.descheduler.io/paused-replicas"]')" = "0 1" ] ||
  fail "deployment not scaled to 0 with the annotation"
run resume --kubeconfig "$SIM_KC" -n kube-system
expect_status 0
expect_out 'Resumed Deployment kube-system/descheduler: scaled from 0 back to 1'
kc get deployment descheduler -n kube-system -o json >"$TMP/d.json"
checks=$((checks + 1))
[ "$(json_eval "$TMP/d.json" 'd["spec"]["replicas"], "vm-rebalance.descheduler.io/paused-replicas" in d["metadata"].get("annotations", {})')" = "1 False" ] ||
  fail "deployment not restored"
# scaled to 0 by hand: resume does not guess the count
kc patch deployment descheduler -n kube-system -p '{"spec":{"replicas":0}}' >/dev/null || fail "kubectl patch replicas"
run resume --kubeconfig "$SIM_KC" -n kube-system
expect_status 1
expect_err 'has no annotation vm-rebalance.descheduler.io/paused-replicas: it was not paused by `descheduler pause`; scale it yourself'

# --- nothing labelled
run pause --kubeconfig "$SIM_KC" -n vms
expect_status 1
expect_err 'descheduler pause: no CronJob or Deployment labelled app.kubernetes.io/name=descheduler in namespace vms'
run pause --kubeconfig "$TMP/nope"
expect_status 2
echo "t0602: $checks checks"
