#!/usr/bin/env bash
# `make bench`: the benchmark of bench/bench.py (simulate, one live cycle, Deployment mode with
# churn, the curl floor) at 500/15k, 2k/60k and 5k/150k nodes/pods, then upstream's descheduler
# beside ours (bench/compare.sh: sigs.k8s.io/descheduler built from the Go module proxy by
# bench/upstream.sh into a cache outside the clone) at 500/15k and 5k/150k, with the ratio table
# (wall, CPU, peak RSS, reads). See docs/performance.md.
# Usage: bench/run.sh [bench.py flags: --sizes 500:15000:2000,... --repeat 3 --cycles 5 --only ...]
#                     [--compare-sizes N:P:V,...] [--compare-repeats N] [--compare-only] [--help]
#   --compare-sizes    the sizes of the comparison (default 500:15000:2000,5000:150000:20000)
#   --compare-repeats  runs of each binary per size (default 1: upstream's cycle at 5k/150k
#                      takes about five minutes; 3 gives medians)
#   --compare-only     only the comparison, not bench.py
# Exit status: non-zero when either part failed. When upstream's descheduler cannot be built
# here (no Go 1.26, no module proxy), the comparison says NOT RUN and the exit status is 3.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
compare_sizes=500:15000:2000,5000:150000:20000
compare_repeats=1
run_bench=1
bench_args=()
while [ $# -gt 0 ]; do
  case $1 in
    --compare-sizes) compare_sizes=$2; shift 2 ;;
    --compare-repeats) compare_repeats=$2; shift 2 ;;
    --compare-only) run_bench=0; shift ;;
    -h | --help)
      sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
      echo
      exec python3 "$here/bench.py" --help ;;
    *) bench_args+=("$1"); shift ;;
  esac
done

brc=0
if [ $run_bench = 1 ]; then
  nice python3 "$here/bench.py" "${bench_args[@]}"
  brc=$?
  [ $brc -eq 0 ] || echo "bench: bench/bench.py failed (exit $brc)" >&2
fi

echo
echo "=== upstream's descheduler beside ours (bench/compare.sh, $compare_repeats run(s) each)"
IFS=, read -r -a sizes <<<"$compare_sizes"
nice "$here/compare.sh" --repeats "$compare_repeats" "${sizes[@]}"
crc=$?
if [ $crc -ne 0 ]; then
  echo "bench: NOT RUN: the comparison with upstream's descheduler (bench/compare.sh exit $crc, see above)"
  # the comparison's own code (3: upstream cannot be built here) unless bench.py failed too
  [ $brc -ne 0 ] && exit $brc
  exit $crc
fi
exit $brc
