#!/usr/bin/env bash
# The Helm chart's tests (`make test` runs them as one suite): builds Helm once per machine
# (tests/helm/build.sh), then tests/helm/test_chart.py (lint, template against the kustomize
# bases, the values schema, install on a real kube-apiserver when tests/realapi can build one).
# Exit status: 0 pass, 1 fail, 3 (after saying why) when Helm cannot be built on this machine.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cd "$root"
"$here/build.sh"
rc=$?
if [ $rc -eq 3 ]; then echo "SKIP Helm chart: Helm cannot be built on this machine (above)"; exit 3; fi
[ $rc -eq 0 ] || exit 1
# the install test needs kube-apiserver: tests/realapi/build.sh has built it (or says why not)
tests/realapi/build.sh --check >/dev/null 2>&1 || echo "helm: kube-apiserver is not built here: the install test will say it skipped"
exec python3 -m unittest -v tests/helm/test_chart.py
