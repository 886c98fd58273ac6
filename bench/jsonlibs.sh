#!/usr/bin/env bash
# Compares the JSON parsers Debian bookworm packages (yajl, json-c, jansson, cJSON) on the pod
# LIST pages a live cycle reads at the 500/15k size: 500 pods a page, as tests/apisim serves
# them. Prints MB/s per library (bench/jsonlibs.c); scripts/deps.sh bench installs the libraries.
# Usage: bench/jsonlibs.sh [NODES:PODS:VMS]   (default 500:15000:2000)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
size=${1:-500:15000:2000}
IFS=: read -r n p v <<<"$size"
"$here/../scripts/deps.sh" bench
mkdir -p "$here/out"
snap="$here/out/cluster-$n-$p-$v.json"
[ -f "$snap" ] || python3 "$here/gen_cluster.py" --nodes "$n" --pods "$p" --vms "$v" --out "$snap"
pages="$here/out/pages-$n-$p-$v"
[ -d "$pages" ] && [ "$snap" -nt "$pages" ] && rm -rf "$pages" # the cluster was made again
if [ ! -d "$pages" ]; then
  mkdir -p "$pages.tmp"
  python3 - "$snap" "$pages.tmp" <<'PY'
import json, sys

text = open(sys.argv[1]).read()
dec = json.JSONDecoder()
i = text.index("[") + 1
pods, n = [], 0
def flush():
    global pods, n
    if pods:
        with open("%s/page-%04d.json" % (sys.argv[2], n), "w") as f:
            f.write('{"kind":"PodList","apiVersion":"v1","metadata":{"resourceVersion":"%d","continue":"token"},"items":[' % n
                    + ",".join(pods) + "]}")
        n += 1
        pods = []
while True:
    while text[i] in " \n\r\t,":
        i += 1
    if text[i] == "]":
        break
    obj, i = dec.raw_decode(text, i)
    if obj.get("kind") == "Pod":
        obj["metadata"]["resourceVersion"] = str(len(pods) + 1000)
        pods.append(json.dumps(obj, separators=(",", ":")))
        if len(pods) == 500:
            flush()
flush()
PY
  mv "$pages.tmp" "$pages"
fi
src="$here/../src"
gcc -O2 -Wall -Wextra -I"$src" -o "$here/out/jsonlibs" "$here/jsonlibs.c" "$here/jsonlibs_jsonc.c" \
  "$src"/util/{doc,doc_fast,arena,xalloc,err,strbuf}.c -lyaml -lyajl -ljson-c -ljansson -lcjson
"$here/out/jsonlibs" --repeat 3 "$pages"/page-*.json
