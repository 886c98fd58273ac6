# livelib.sh - starts the API server of live-mode scripts: the API simulator (tests/apisim),
# or with LIVE_BACKEND=realapi a real kube-apiserver with etcd and the KubeVirt stand-in
# (tests/realapi/realapi.py, built by tests/realapi/build.sh; tests/realapi/run.sh runs the
# scripts that way). Source after lib.sh. sim_start SNAPSHOT [apisim args...] sets SIM_DIR,
# SIM_KC (its kubeconfig), SIM_URL, SIM_CTL (the control endpoint, /_sim/...) and SIM_PID and
# stops the server when the script exits. On the real server only --migration-seconds has a
# counterpart; a script part that needs the simulator alone (faults) asks live_backend_is.
SIM_PY=$ROOT/tests/apisim/apisim.py
LIVE_BACKEND=${LIVE_BACKEND:-apisim}
case $LIVE_BACKEND in apisim | realapi) ;; *) echo "LIVE_BACKEND must be apisim or realapi, not $LIVE_BACKEND" >&2; exit 1 ;; esac
KUBECTL=${KUBECTL:-$ROOT/.deps/bin/kubectl}
[ -x "$KUBECTL" ] || { echo "kubectl not found at $KUBECTL (run scripts/deps.sh test)" >&2; exit 1; }
SIM_PIDS=()
cleanup_sims() {
  stop_jobs
  for p in "${SIM_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${SIM_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup_sims EXIT

sim_start() { # SNAPSHOT [args...]
  local snap=$1; shift
  SIM_DIR=$(mktemp -d "$TMP/sim.XXXX")
  SIM_KC=$SIM_DIR/kubeconfig
  local what="the simulator" tries=100
  if [ "$LIVE_BACKEND" = realapi ]; then
    local extra=()
    while [ $# -gt 0 ]; do
      case $1 in
        --migration-seconds) extra+=("$1" "$2"); shift 2 ;;
        *) fail "API simulator option $1 has no counterpart on the real API server" ;;
      esac
    done
    what="the real API server" tries=1200
    python3 "$ROOT/tests/realapi/realapi.py" --snapshot "$snap" --kubeconfig-out "$SIM_KC" \
      --dir "$SIM_DIR/cluster" "${extra[@]}" >"$SIM_DIR/stdout" 2>"$SIM_DIR/stderr" &
  else
    python3 "$SIM_PY" --snapshot "$snap" --port 0 --kubeconfig-out "$SIM_KC" "$@" \
      >"$SIM_DIR/stdout" 2>"$SIM_DIR/stderr" &
  fi
  SIM_PID=$!
  SIM_PIDS+=("$SIM_PID")
  local i
  for i in $(seq 1 $tries); do
    grep -q '^ready' "$SIM_DIR/stdout" 2>/dev/null && break
    kill -0 "$SIM_PID" 2>/dev/null || { cat "$SIM_DIR/stderr" >&2; fail "$what exited"; }
    sleep 0.1
  done
  grep -q '^ready' "$SIM_DIR/stdout" || { tail -n 20 "$SIM_DIR/stderr" >&2; fail "$what did not become ready"; }
  SIM_URL=$(sed -n 's/.*server: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$SIM_KC" | head -n1)
  SIM_CTL=$SIM_URL
  [ "$LIVE_BACKEND" = realapi ] && SIM_CTL=$(cat "$SIM_KC.control")
  return 0
}

# live_backend_is NAME: true when the scripts run against that backend (apisim or realapi)
live_backend_is() { [ "$LIVE_BACKEND" = "$1" ]; }

# sim_ctl METHOD PATH [JSON]: the control endpoint (/_sim/...) of the simulator or the
# real-server harness (plain HTTP simulators only)
sim_ctl() {
  if [ $# -ge 3 ]; then
    curl -sf -X "$1" -H 'Content-Type: application/json' -d "$3" "$SIM_CTL$2"
  else
    curl -sf -X "$1" "$SIM_CTL$2"
  fi
}

kc() { "$KUBECTL" --kubeconfig "$SIM_KC" "$@"; }

# jq-less JSON field reads: json_get FILE PYTHON-EXPRESSION-ON-d
json_eval() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# runs the descheduler against the simulator; output in $TMP/out, $TMP/err, status in $status
run_live() { run --kubeconfig "$SIM_KC" --secure-port 0 "$@"; }

# wait_lines N TEXT: until $TMP/err (a descheduler started in the background, its pid in $pid)
# has at least N lines with TEXT; fails when it exits first or after 20 s
wait_lines() {
  for _ in $(seq 1 200); do
    [ "$(grep -cF -- "$2" "$TMP/err")" -ge "$1" ] && return 0
    kill -0 "$pid" 2>/dev/null || fail "the descheduler exited"
    sleep 0.1
  done
  fail "waited for $1 lines with: $2"
}
# cycles: the cycles that background descheduler has finished
cycles() { grep -c '"Number of evictions/requests"' "$TMP/err"; }
# more_cycles N WHAT: waits (10 s at most) until the background descheduler has finished N more
# cycles than now; a check that fails saying WHAT otherwise
more_cycles() {
  local want=$(($(cycles) + $1))
  for _ in $(seq 1 100); do [ "$(cycles)" -ge "$want" ] && break; sleep 0.1; done
  checks=$((checks + 1)); [ "$(cycles)" -ge "$want" ] || fail "$2"
}
