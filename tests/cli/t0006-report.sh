#!/usr/bin/env bash
# The HTML report, looked at in a real browser (Debian's chromium, headless): for the built-in
# example, t0005's small cluster with eviction limits and a 500-node cluster, a bar per node and
# resource whose "before" and "after" lengths are the plan's figures (a node pods leave has a
# shorter "after" bar), a row per planned move with its source and likely destination (exact
# where the cluster leaves one choice), and the decision table's filters by node, namespace and
# outcome, alone and together (driven through the page's URL fragment, which the page's own
# script reads on load). Screenshots are kept in build/test-artifacts/.
. "$(dirname "$0")/lib.sh"

CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[ -n "$CHROMIUM" ] || skip_script "chromium is not installed (scripts/deps.sh test installs it)"
ART=$ROOT/build/test-artifacts
mkdir -p "$ART"

browse() { # URL ARGS...: chromium headless with the flags a closed network needs
  local url=$1; shift
  "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$TMP/chromium" --virtual-time-budget=5000 "$@" "$url" 2>/dev/null
}

# check_dom DOM-FILE PLAN-JSON FILTER SNAPSHOT-OR-"" DESTINATIONS-JSON-OR-"": python asserts on
# the rendered DOM. FILTER is the URL fragment (key=value&...), SNAPSHOT (when given) is read
# to count the pods of a namespace independently of the page, DESTINATIONS (when given) is the
# list of nodes the planned moves must name as "likely to".
check_dom() {
  python3 - "$@" <<'PY'
import json, re, sys, urllib.parse
dom, plan = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
flt = dict(urllib.parse.parse_qsl(sys.argv[3]))
snap = json.load(open(sys.argv[4])) if sys.argv[4] else None
want_to = json.loads(sys.argv[5]) if sys.argv[5] else None
nodes = {n["name"]: n for n in plan["nodes"]}

# --- nodes: a row per node and resource; the before and after bars are the plan's figures
rows = re.findall(r'<tr class="node-row" data-node="([^"]+)">(.*?)</tr>', dom)
assert {r[0] for r in rows} == set(nodes) and len(rows) == 3 * len(nodes), (len(rows), len(nodes))
width = {}  # (node, resource) -> (before, after) as drawn
for name, body in rows:
    res = re.search(r'<td class="res">(cpu|memory|pods)</td>', body).group(1)
    n = nodes[name]
    if res not in n["usagePercentage"]:
        assert "no capacity given" in body, body
        continue
    bars = re.findall(r'<div class="bar (before|after)"><div class="fill" style="width: ?([0-9.]+)%;?"></div>', body)
    assert [b[0] for b in bars] == ["before", "after"], (name, res, body)
    b, a = float(bars[0][1]), float(bars[1][1])
    assert abs(b - min(100.0, n["usagePercentage"][res])) < 0.006, (name, res, b, n)
    assert abs(a - min(100.0, n["usagePercentageAfter"][res])) < 0.006, (name, res, a, n)
    pct = re.search(r'<td class="pct">([0-9.]+)% (?:→|&rarr;) ([0-9.]+)%</td>', body)
    assert pct and abs(float(pct.group(2)) - n["usagePercentageAfter"][res]) < 0.006, (name, res, body)
    width[(name, res)] = (b, a)
over = [n for n in nodes if nodes[n]["category"] == "overutilized"]
assert not over or re.search(r'class="mark high"', dom), "the thresholds are drawn"
# every node a pod leaves has a shorter "after" pods bar than its "before" one
for name in {e["node"] for e in plan["evictions"]}:
    b, a = width[(name, "pods")]
    assert a < b, (name, b, a)
# nodes nothing leaves keep their length
for name in set(nodes) - {e["node"] for e in plan["evictions"]}:
    b, a = width.get((name, "pods"), (0, 0))
    assert a == b, (name, b, a)

# --- planned moves: a row per eviction, in plan order, with source and likely destination
moves = re.findall(r'<tr class="move"><td>(\d+)</td><td>([^<]*)</td><td>([^<]*)</td><td>(.*?)</td>'
                   r'<td>([^<]*)</td><td>([^<]*)</td></tr>', dom)
assert len(moves) == len(plan["evictions"]), (len(moves), len(plan["evictions"]))
tos = []
for i, (mv, e) in enumerate(zip(moves, plan["evictions"])):
    num, pod, frm, to, how, by = mv
    assert int(num) == i + 1 and pod == e["pod"] and frm == e["node"], (mv, e)
    assert by == e["profile"] + "/" + e["plugin"], (mv, e)
    assert how == ("live migration to the chosen node" if e.get("to") else
                   "eviction request: KubeVirt live-migrates the VM" if e["background"] else "eviction"), (mv, e)
    if to.startswith('<span class="note">'):
        assert "no other node fits it" in to, to
        tos.append(None)
    else:
        likely = ' <span class="note">(likely: the scheduler places it)</span>'
        # a targeted move names the node the cycle chose; an eviction the likely one
        assert to.endswith(likely) != bool(e.get("to")), (to, e)
        to = to[:-len(likely)] if to.endswith(likely) else to
        assert to in nodes and to != frm, (to, frm)  # a node of the cluster, never the source
        assert to == e.get("to", to), (to, e)
        tos.append(to)
if want_to is not None:
    assert tos == want_to, (tos, want_to)
elif plan["evictions"]:
    assert any(tos), "no planned move has a destination"

# --- the decision table's filters
trs = re.findall(r'<tr data-node="([^"]*)" data-namespace="([^"]*)" data-outcome="([^"]*)"( hidden="")?>', dom)
assert trs, "no decision rows"
idx = {"node": 0, "namespace": 1, "outcome": 2}
match = lambda t: all(t[idx[k]] == v for k, v in flt.items())
shown = [t for t in trs if not t[3]]
assert shown and all(match(t) for t in shown), (flt, shown[:3])
assert all(t[3] for t in trs if not match(t)), "rows that do not match are hidden"
m = re.search(r'<span id="shown">(\d+)</span>', dom)
assert m and int(m.group(1)) == len(shown), (m and m.group(1), len(shown))
if list(flt) == ["outcome"]:
    total = plan["decisions"]["outcomes"][flt["outcome"]]
    assert len(shown) == total, (len(shown), total)
if snap is not None:
    pods = [i["metadata"] for i in snap["items"] if i["kind"] == "Pod"]
    # the namespace select offers exactly the pods' namespaces
    sel = re.search(r'<select id="f-namespace">(.*?)</select>', dom).group(1)
    opts = re.findall(r'<option value="([^"]*)"', sel)
    assert opts == [""] + sorted({p["namespace"] for p in pods}), opts
    if list(flt) == ["namespace"]:
        want = sum(1 for p in pods if p["namespace"] == flt["namespace"])
        assert len(shown) == want, (len(shown), want)
PY
}

# report_case NAME POLICY SNAPSHOT SCREENSHOT(yes|no) DESTINATIONS-JSON-OR-"" FILTER...: renders
# the report once, checks the DOM under each filter, keeps a screenshot when asked
report_case() {
  local name=$1 policy=$2 snap=$3 shot=$4 dests=$5; shift 5
  run simulate --policy-config-file "$policy" --snapshot "$snap" --feature-gates EvictionsInBackground=true \
    -o json --report "$TMP/$name.html"
  expect_status 0
  cp "$TMP/out" "$TMP/$name.plan.json"
  checks=$((checks + 1))
  ! grep -qE '(src|href)="(https?:)?//' "$TMP/$name.html" || fail "$name: the report loads something from elsewhere"
  # the snapshot is read for namespace counts when it is small (the examples), not at 500 nodes
  local small=""
  [ "$(stat -c %s "$snap")" -lt 1000000 ] && small=$snap
  local filter
  for filter in "$@"; do
    browse "file://$TMP/$name.html#$filter" --dump-dom >"$TMP/$name.dom" || fail "$name: chromium --dump-dom"
    checks=$((checks + 1))
    check_dom "$TMP/$name.dom" "$TMP/$name.plan.json" "$filter" "$small" "$dests" ||
      fail "$name: the rendered page (filter $filter)"
  done
  [ "$shot" = yes ] || return 0
  browse "file://$TMP/$name.html" --screenshot="$ART/report-$name.png" --window-size=1280,1800 >/dev/null
  checks=$((checks + 1))
  [ "$(head -c 8 "$ART/report-$name.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$name: no PNG screenshot"
}

# the built-in example: its one VM goes from worker-a to worker-b (the only other KubeVirt
# worker); filters by outcome, node, namespace, and namespace and outcome together
report_case example "$EXAMPLE/policy.yaml" "$EXAMPLE/cluster.json" yes '["worker-b"]' \
  "outcome=requested" "node=worker-b" "namespace=vms" "namespace=kube-system&outcome=rejected"
# the targeted policy: the VM goes to worker-b, the node the cycle chose ("to", not "likely")
report_case targeted "$DATA/targeted-policy.yaml" "$EXAMPLE/cluster.json" no '["worker-b"]' "outcome=requested"
# t0005's cluster with eviction limits: both moves go to under-c, the node with room
report_case limits "$DATA/limits-policy.yaml" "$DATA/limits-cluster.json" no '["under-c", "under-c"]' \
  "outcome=limit" "namespace=shop&node=over-a"

python3 "$ROOT/bench/gen_cluster.py" --nodes 500 --pods 15000 --vms 2000 --out "$TMP/c500.json" || fail "gen_cluster"
report_case c500 "$ROOT/bench/policy-lnu.yaml" "$TMP/c500.json" yes "" "outcome=evicted"

# a report that cannot be written: exit 2, a clear message
run simulate --policy-config-file "$EXAMPLE/policy.yaml" --snapshot "$EXAMPLE/cluster.json" --report /nonexistent/dir/r.html
expect_status 2
expect_err 'descheduler simulate: --report: cannot write "/nonexistent/dir/r.html"'
echo "t0006: $checks checks"
