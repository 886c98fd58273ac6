#!/usr/bin/env bash
# Two replicas with --leader-elect: only the one holding the Lease runs cycles; when it is
# killed (no release), the other takes the lease once it expires and starts evicting; a
# leader stopped with SIGTERM releases the lease at once.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
sim_start "$EXAMPLE/cluster.json" --migration-seconds 600
le_flags=(--leader-elect --leader-elect-lease-duration 4s --leader-elect-renew-deadline 3s
  --leader-elect-retry-period 500ms --leader-elect-resource-namespace kube-system)
start_replica() { # NAME: starts a child of this shell, its pid in $replica
  "$DESCHEDULER" --kubeconfig "$SIM_KC" --policy-config-file "$EXAMPLE/policy.yaml" \
    --feature-gates EvictionsInBackground=true --descheduling-interval 1s --secure-port 0 --v 3 \
    "${le_flags[@]}" >"$TMP/$1.out" 2>"$TMP/$1.err" &
  replica=$!
}
wait_for() { # FILE TEXT SECONDS
  local i
  for i in $(seq 1 $(($3 * 10))); do grep -qF -- "$2" "$1" && return 0; sleep 0.1; done
  return 1
}
cycles() { grep -c '"Number of evictions/requests"' "$1"; }

start_replica a
a=$replica
wait_for "$TMP/a.err" '"Started leading"' 10 || fail "replica a did not lead"
start_replica b
b=$replica
wait_for "$TMP/b.err" 'Attempting to acquire leader lease' 10 || fail "replica b did not try"
sleep 3
checks=$((checks + 3))
[ "$(cycles "$TMP/a.err")" -ge 2 ] || fail "the leader ran fewer than 2 cycles"
[ "$(cycles "$TMP/b.err")" -eq 0 ] || fail "the follower ran a cycle"
! grep -q 'Successfully acquired lease' "$TMP/b.err" || fail "the follower acquired the lease"
kc get lease descheduler -n kube-system -o jsonpath='{.spec.holderIdentity}' >"$TMP/holder.txt"
checks=$((checks + 1)); grep -q "^$(hostname)_" "$TMP/holder.txt" || fail "lease holder is not a replica: $(cat "$TMP/holder.txt")"
holder_a=$(cat "$TMP/holder.txt")

# kill the leader without letting it release: the follower takes over after the lease expires
{ kill -KILL "$a" && wait "$a"; } 2>/dev/null
wait_for "$TMP/b.err" '"Successfully acquired lease" lock="kube-system/descheduler"' 15 || fail "replica b did not take over"
wait_for "$TMP/b.err" '"Number of evictions/requests"' 10 || fail "replica b ran no cycle after taking over"
expect_file() { checks=$((checks + 1)); grep -qF -- "$2" "$1" || fail "$1 lacks $2"; }
expect_file "$TMP/b.err" '"Started leading"'
kc get lease descheduler -n kube-system -o jsonpath='{.spec.holderIdentity}' >"$TMP/holder.txt"
checks=$((checks + 1)); [ "$(cat "$TMP/holder.txt")" != "$holder_a" ] || fail "the lease still names the dead leader"
# one migration requested in all, by whichever replica led
kc get vmim -n vms -o json >"$TMP/vmim.json"
checks=$((checks + 1)); [ "$(json_eval "$TMP/vmim.json" 'len(d["items"])')" = 1 ] || fail "expected one migration"

# SIGTERM: the leader stops between requests, releases the lease and exits 0
kill -TERM "$b"
wait "$b"
status=$?
expect_status 0
kc get lease descheduler -n kube-system -o jsonpath='{.spec.holderIdentity}' >"$TMP/holder.txt"
checks=$((checks + 1)); [ ! -s "$TMP/holder.txt" ] || fail "the lease was not released: $(cat "$TMP/holder.txt")"

# a leader that finds the lease taken by someone else cannot renew; after the renew
# deadline it logs "Leader lost" and exits 0, as upstream does
start_replica c
c=$replica
wait_for "$TMP/c.err" '"Started leading"' 10 || fail "replica c did not lead"
kc patch lease descheduler -n kube-system --type merge \
  -p "{\"spec\":{\"holderIdentity\":\"intruder\",\"renewTime\":\"$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)\"}}" >/dev/null ||
  fail "patch lease"
wait_for "$TMP/c.err" '"Leader lost"' 10 || fail "replica c did not notice the lost lease"
wait "$c"
status=$?
expect_status 0
expect_file "$TMP/c.err" 'New leader elected: intruder'

# --leader-elect needs an interval
run --kubeconfig "$SIM_KC" --policy-config-file "$EXAMPLE/policy.yaml" --leader-elect --secure-port 0
expect_status 2
expect_err "leaderElection must be used with deschedulingInterval"
echo "t0203: $checks checks"
