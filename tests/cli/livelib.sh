# livelib.sh - starts the API simulator (tests/apisim) for live-mode scripts.
# Source after lib.sh. sim_start SNAPSHOT [apisim args...] sets SIM_DIR, SIM_KC (its
# kubeconfig), SIM_URL and SIM_PID and stops the simulator when the script exits.
SIM_PY=$ROOT/tests/apisim/apisim.py
KUBECTL=${KUBECTL:-$ROOT/.deps/bin/kubectl}
[ -x "$KUBECTL" ] || { echo "kubectl not found at $KUBECTL (run scripts/deps.sh test)" >&2; exit 1; }
SIM_PIDS=()
cleanup_sims() {
  for p in "${SIM_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${SIM_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  rm -rf "$TMP"
}
trap cleanup_sims EXIT

sim_start() { # SNAPSHOT [args...]
  local snap=$1; shift
  SIM_DIR=$(mktemp -d "$TMP/sim.XXXX")
  SIM_KC=$SIM_DIR/kubeconfig
  python3 "$SIM_PY" --snapshot "$snap" --port 0 --kubeconfig-out "$SIM_KC" "$@" \
    >"$SIM_DIR/stdout" 2>"$SIM_DIR/stderr" &
  SIM_PID=$!
  SIM_PIDS+=("$SIM_PID")
  local i
  for i in $(seq 1 100); do
    grep -q '^ready' "$SIM_DIR/stdout" 2>/dev/null && break
    kill -0 "$SIM_PID" 2>/dev/null || { cat "$SIM_DIR/stderr" >&2; fail "the simulator exited"; }
    sleep 0.1
  done
  grep -q '^ready' "$SIM_DIR/stdout" || fail "the simulator did not become ready"
  SIM_URL=$(sed -n 's/.*server: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$SIM_KC" | head -n1)
}

# sim_ctl METHOD PATH [JSON]: the simulator's control endpoint (plain HTTP simulators only)
sim_ctl() {
  if [ $# -ge 3 ]; then
    curl -sf -X "$1" -H 'Content-Type: application/json' -d "$3" "$SIM_URL$2"
  else
    curl -sf -X "$1" "$SIM_URL$2"
  fi
}

kc() { "$KUBECTL" --kubeconfig "$SIM_KC" "$@"; }

# jq-less JSON field reads: json_get FILE PYTHON-EXPRESSION-ON-d
json_eval() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }

# runs the descheduler against the simulator; output in $TMP/out, $TMP/err, status in $status
run_live() { run --kubeconfig "$SIM_KC" --secure-port 0 "$@"; }
