#!/usr/bin/env bash
# The HTML report, looked at in a real browser (Debian's chromium, headless): for the built-in
# example and for a 500-node cluster, a bar per node and resource, a row per planned move, and
# the decision table's filters work (driven through the page's URL fragment, which the page's
# own script reads on load). Screenshots are kept in build/test-artifacts/.
. "$(dirname "$0")/lib.sh"

CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[ -n "$CHROMIUM" ] || { echo "t0006: SKIP (chromium is not installed; scripts/deps.sh test installs it)"; exit 0; }
ART=$ROOT/build/test-artifacts
mkdir -p "$ART"

browse() { # URL ARGS...: chromium headless with the flags a closed network needs
  local url=$1; shift
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$TMP/chromium" --virtual-time-budget=5000 "$@" "$url" 2>/dev/null
}

# check_dom DOM-FILE PLAN-JSON FILTER: python asserts on the rendered DOM
check_dom() {
  python3 - "$@" <<'PY'
import json, re, sys
dom, plan, flt = open(sys.argv[1]).read(), json.load(open(sys.argv[2])), sys.argv[3]
nodes = {n["name"] for n in plan["nodes"]}
rows = re.findall(r'<tr class="node-row" data-node="([^"]+)"', dom)
assert set(rows) == nodes and len(rows) == 3 * len(nodes), (len(rows), len(nodes))
assert len(re.findall(r'<div class="bar before">', dom)) >= len(nodes), "a bar per node"
over = [n["name"] for n in plan["nodes"] if n["category"] == "overutilized"]
assert not over or re.search(r'class="mark high"', dom), "the thresholds are drawn"
moves = re.findall(r'<tr class="move">', dom)
assert len(moves) == len(plan["evictions"]), (len(moves), len(plan["evictions"]))
trs = re.findall(r'<tr data-node="([^"]*)" data-namespace="([^"]*)" data-outcome="([^"]*)"( hidden="")?>', dom)
assert trs, "no decision rows"
key, _, want = flt.partition("=")
idx = {"node": 0, "namespace": 1, "outcome": 2}[key]
shown = [t for t in trs if not t[3]]
assert shown and all(t[idx] == want for t in shown), (flt, shown[:3])
assert all(t[3] for t in trs if t[idx] != want), "rows that do not match are hidden"
m = re.search(r'<span id="shown">(\d+)</span>', dom)
assert m and int(m.group(1)) == len(shown), (m and m.group(1), len(shown))
if key == "outcome":
    total = plan["decisions"]["outcomes"][want]
    assert len(shown) == total, (len(shown), total)
PY
}

report_case() { # NAME POLICY SNAPSHOT FILTER
  local name=$1 policy=$2 snap=$3 filter=$4
  run simulate --policy-config-file "$policy" --snapshot "$snap" --feature-gates EvictionsInBackground=true \
    -o json --report "$TMP/$name.html"
  expect_status 0
  cp "$TMP/out" "$TMP/$name.plan.json"
  checks=$((checks + 1))
  ! grep -qE '(src|href)="(https?:)?//' "$TMP/$name.html" || fail "$name: the report loads something from elsewhere"
  browse "file://$TMP/$name.html#$filter" --dump-dom >"$TMP/$name.dom" || fail "$name: chromium --dump-dom"
  checks=$((checks + 1))
  check_dom "$TMP/$name.dom" "$TMP/$name.plan.json" "$filter" || fail "$name: the rendered page (filter $filter)"
  browse "file://$TMP/$name.html" --screenshot="$ART/report-$name.png" --window-size=1280,1800 >/dev/null
  checks=$((checks + 1))
  [ "$(head -c 8 "$ART/report-$name.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$name: no PNG screenshot"
}

report_case example "$EXAMPLE/policy.yaml" "$EXAMPLE/cluster.json" "outcome=requested"
report_case example-node "$EXAMPLE/policy.yaml" "$EXAMPLE/cluster.json" "node=worker-b"

python3 "$ROOT/bench/gen_cluster.py" --nodes 500 --pods 15000 --vms 2000 --out "$TMP/c500.json" || fail "gen_cluster"
report_case c500 "$ROOT/bench/policy-lnu.yaml" "$TMP/c500.json" "outcome=evicted"

# a report that cannot be written: exit 2, a clear message
run simulate --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json" --report /nonexistent/dir/r.html
expect_status 2
expect_err 'descheduler simulate: --report: cannot write "/nonexistent/dir/r.html"'
echo "t0006: $checks checks"
