#!/usr/bin/env bash
# `make bench`: the benchmark of bench/bench.py (simulate, one live cycle, Deployment mode with
# churn, the curl floor) at 500/15k, 2k/60k and 5k/150k nodes/pods; see docs/performance.md.
# Usage: bench/run.sh [--sizes 500:15000:2000,...] [--repeat 3] [--cycles 5] [--only ...] [--help]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
exec nice python3 "$here/bench.py" "$@"
