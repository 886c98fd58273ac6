# promlib.sh - a real Prometheus for the actual-utilization scripts. Source after lib.sh.
#
# prom_backfill SPEC.json DIR   node-exporter / kube-state-metrics series described by SPEC
#                               (tests/tools/promdata.py) from 15 min ago to 30 min ahead,
#                               turned into TSDB blocks in DIR by promtool
# prom_start DIR [TARGET]       starts Prometheus on DIR, on loopback and a free port, with the
#                               project's recording rules (deploy/monitoring) evaluated every
#                               second; TARGET (host:port) is scraped every second for
#                               /metrics.txt with honor_labels (a file the script rewrites to
#                               change a value). Sets PROM_URL, PROM_PID; stopped at exit.
# prom_query EXPR               prints the instant query's JSON answer
# prom_wait_series EXPR N       waits (up to 20 s) until EXPR has N samples
# track_pid PID                 another background process to stop at exit
# Source it after livelib.sh when both are used.
#
# The backfilled blocks reach past the present, so Prometheus runs with an out-of-order time
# window: rule results at "now" may then be written although stored blocks extend beyond it.
# (promtool tsdb create-blocks-from rules could backfill the rules instead, but it evaluates
# every rule against the server in one pass, so rules built on other recorded rules - most of
# ours - would need one pass and one block reload per level.)
PROMETHEUS=${PROMETHEUS:-prometheus}
PROMTOOL=${PROMTOOL:-promtool}
command -v "$PROMETHEUS" >/dev/null && command -v "$PROMTOOL" >/dev/null ||
  { echo "prometheus/promtool not found (scripts/deps.sh test installs the Debian package)" >&2; exit 1; }
PROM_PIDS=()
# track_pid PID: another background process of the script, stopped at exit
track_pid() { PROM_PIDS+=("$1"); }
cleanup_proms() {
  stop_jobs
  for p in "${PROM_PIDS[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${PROM_PIDS[@]}"; do wait "$p" 2>/dev/null; done
  if declare -F cleanup_sims >/dev/null; then cleanup_sims; else rm -rf "$TMP"; fi
}
trap cleanup_proms EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

prom_backfill() { # SPEC DIR
  local now; now=$(date +%s)
  python3 "$ROOT/tests/tools/promdata.py" --start $((now - 900)) --end $((now + 1800)) "$1" "$TMP/promdata.om" ||
    fail "promdata.py failed"
  "$PROMTOOL" tsdb create-blocks-from openmetrics "$TMP/promdata.om" "$2" >"$TMP/promtool.log" 2>&1 ||
    { cat "$TMP/promtool.log" >&2; fail "promtool could not create the blocks"; }
}

prom_start() { # DIR [TARGET]
  local dir=$1 target=${2:-}
  PROM_DIR=$(mktemp -d "$TMP/prom.XXXX")
  sed 's/^    interval: 30s$/    interval: 1s/' "$ROOT/deploy/monitoring/descheduler-rules.yaml" >"$PROM_DIR/rules.yaml"
  {
    echo "global: {scrape_interval: 1s, evaluation_interval: 1s}"
    echo "rule_files: [rules.yaml]"
    echo "storage: {tsdb: {out_of_order_time_window: 2h}}"
    if [ -n "$target" ]; then
      echo "scrape_configs:"
      echo "  - {job_name: load, honor_labels: true, metrics_path: /metrics.txt, static_configs: [{targets: ['$target']}]}"
    fi
  } >"$PROM_DIR/prometheus.yml"
  local port; port=$(free_port)
  "$PROMETHEUS" --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$dir" \
    --web.listen-address="127.0.0.1:$port" --log.level=warn >"$PROM_DIR/log" 2>&1 &
  PROM_PID=$!
  PROM_PIDS+=("$PROM_PID")
  PROM_URL=http://127.0.0.1:$port
  local i
  for i in $(seq 1 100); do
    curl -sf "$PROM_URL/-/ready" >/dev/null 2>&1 && return 0
    kill -0 "$PROM_PID" 2>/dev/null || { cat "$PROM_DIR/log" >&2; fail "prometheus exited"; }
    sleep 0.1
  done
  fail "prometheus did not become ready"
}

prom_query() { curl -sf "$PROM_URL/api/v1/query" --data-urlencode "query=$1"; }

prom_wait_series() { # EXPR N
  local i n
  for i in $(seq 1 200); do
    n=$(prom_query "$1" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]))' 2>/dev/null)
    [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.1
  done
  fail "prometheus has no $2 samples of $1 (last: ${n:-none}); log: $(tail -3 "$PROM_DIR/log")"
}
