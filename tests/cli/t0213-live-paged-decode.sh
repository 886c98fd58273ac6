#!/usr/bin/env bash
# A list read in pages (limit/continue, kube/pager.h: the next page is fetched while the
# current one is decoded) gives the cycle what one page gives: the same dry-run cycle with the
# pods in one page and in pages of 1, 2, 3 and 7 logs the same lines. The list starts with
# five pods of namespace "aaa", the fourth and fifth of which cannot be decoded: each is
# skipped with its error line, in list order, wherever the page boundaries fall (alone on a
# page, first on a page, after a good pod of the same page).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/livelib.sh"
CLUSTER=$TMP/cluster.json
python3 "$ROOT/bench/gen_cluster.py" --nodes 12 --pods 240 --vms 24 --out "$CLUSTER" || fail "gen_cluster"
sim_start "$CLUSTER"
pod() { # NAME REQUESTS
  printf '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"%s","namespace":"aaa"},"spec":{"nodeName":"node-00002","containers":[{"name":"c","image":"i","resources":{"requests":%s}}]},"status":{"phase":"Running"}}' "$1" "$2"
}
bad="{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[$(pod p0 '{"cpu":"10m"}'),$(pod p1 '{"cpu":"10m"}'),$(pod p2 '{"cpu":"10m"}'),$(pod p3 '{"cpu":"lots"}'),$(pod p4 '{"memory":"plenty"}')]}"
sim_ctl POST /_sim/load "$bad" >/dev/null || fail "load the bad pods"

# the log without each line's time, thread and source line; the lines that count time or
# pages are left out (they differ by design)
normal() {
  sed -E 's/^([IWEF])[0-9]{4} [0-9:.]+ +[0-9]+ [^]]+\] /\1 /' "$1" |
    grep -vE '"Cycle timings"|"Listed objects"'
}
one_cycle() { # PAGE
  run --kubeconfig "$SIM_KC" --secure-port 0 --policy-config-file "$ROOT/bench/policy-lnu.yaml" \
    --descheduling-interval 0 --dry-run --v 4 --list-page-size "$1"
  expect_status 0
  cp "$TMP/err" "$TMP/err.$1"
}
one_cycle 1000
expect_err_count 2 '"Skipping an object that cannot be decoded; the cycle goes on without it"'
expect_err 'object="aaa/p3"'
expect_err 'object="aaa/p4"'
expect_err '"Listed objects" kind="Pod" count=245 pages=1'
normal "$TMP/err.1000" >"$TMP/want"
for page in 1 2 3 7; do
  one_cycle "$page"
  normal "$TMP/err.$page" >"$TMP/got"
  checks=$((checks + 1))
  diff "$TMP/want" "$TMP/got" >"$TMP/diff" || {
    head -20 "$TMP/diff" >&2
    fail "pages of $page: the log differs from the one-page read"
  }
done
# every page was read: the pods' list took ceil(245 / PAGE) pages
pages() { # PAGE PAGES
  checks=$((checks + 1))
  grep -qF "\"Listed objects\" kind=\"Pod\" count=245 pages=$2" "$TMP/err.$1" ||
    fail "pages of $1: $(grep -F '"Listed objects" kind="Pod"' "$TMP/err.$1")"
}
pages 1 245
pages 2 123
pages 3 82
pages 7 35
echo "t0213: $checks checks"
