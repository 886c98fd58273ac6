#!/usr/bin/env bash
# A longer fuzz campaign: every libFuzzer target (or the ones named) for SECONDS each, one at a
# time, at low priority, growing a corpus that is kept between campaigns.
#
# Usage: tests/fuzz/campaign.sh SECONDS [target...]
#   e.g. nice -n 19 tests/fuzz/campaign.sh 300          (about an hour for all 11 targets)
#
# Builds the targets like smoke.sh (clang, ASan+UBSan, build-fuzz/). For each target the
# corpus is build-fuzz/campaign/<target>/ (created from the committed seeds the first time,
# kept afterwards, never committed), crashes and other artifacts go to
# build-fuzz/campaign/artifacts/<target>-*. Every target runs with its dictionary, a 10 s
# per-input timeout and a 2 GB memory limit; the process runs under `nice -n ${FUZZ_NICE:-19}`.
# At the end one line per target gives the executions, the coverage reached, the corpus size
# and the artifacts found; the exit status is 1 when any target found something.
# Reproduce an artifact with `build-fuzz/tests/fuzz/<target> <artifact>`; when you fix it,
# add the input to tests/fuzz/corpus/<target>/ and a unit test next to the module.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
secs=${1:-}
case $secs in
  '' | *[!0-9]*) echo "usage: tests/fuzz/campaign.sh SECONDS [target...]" >&2; exit 2 ;;
esac
shift
cc=${CC_FUZZ:-clang}
nice_level=${FUZZ_NICE:-19}
out=build-fuzz/campaign
command -v "$cc" >/dev/null || { echo "fuzz campaign: $cc not found (scripts/deps.sh test installs clang)" >&2; exit 1; }

mkdir -p "$out/artifacts"
if ! { nice -n "$nice_level" cmake -S . -B build-fuzz -DCMAKE_C_COMPILER="$cc" -DDS_FUZZ=ON \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out/configure.log" 2>&1 &&
       nice -n "$nice_level" cmake --build build-fuzz --target fuzz -j2 >"$out/build.log" 2>&1; }; then
  echo "fuzz campaign: build failed" >&2
  tail -n 30 "$out/configure.log" "$out/build.log" >&2
  exit 1
fi

if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for src in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$src" .c)"); done
fi

start=$SECONDS
failed=0
summary=()
for t in "${targets[@]}"; do
  [ -x "build-fuzz/tests/fuzz/$t" ] || { echo "fuzz campaign: no target $t" >&2; exit 2; }
  mkdir -p "$out/$t"
  if [ -z "$(ls -A "$out/$t")" ]; then cp tests/fuzz/corpus/"$t"/* "$out/$t/" 2>/dev/null; fi
  args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$out/artifacts/$t-")
  [ -f "tests/fuzz/$t.dict" ] && args+=(-dict="tests/fuzz/$t.dict")
  before=$(ls "$out/artifacts" | grep -c "^$t-")
  : >"$out/$t.log"
  t0=$SECONDS
  # libFuzzer stops at the first crash: start again (from the grown corpus) until the time is
  # spent, so one finding does not end the target's share
  while [ $((SECONDS - t0)) -lt "$secs" ]; do
    left=$((secs - (SECONDS - t0)))
    args[0]=-max_total_time=$left
    nice -n "$nice_level" "build-fuzz/tests/fuzz/$t" "${args[@]}" "$out/$t" \
      </dev/null >>"$out/$t.log" 2>&1 || true
    [ $((SECONDS - t0)) -lt $((secs - 5)) ] || break
  done
  found=$(( $(ls "$out/artifacts" | grep -c "^$t-") - before ))
  execs=$(grep -h '^stat::number_of_executed_units' "$out/$t.log" | awk '{s += $2} END {print s + 0}')
  cov=$(grep -ho 'cov: [0-9]*' "$out/$t.log" | tail -n 1 | awk '{print $2}')
  corpus=$(ls "$out/$t" | wc -l)
  line=$(printf '%-18s %6ss %12s execs  cov %6s  corpus %6s  artifacts %s' "$t" "$((SECONDS - t0))" \
    "$execs" "${cov:-?}" "$corpus" "$found")
  echo "$line"
  summary+=("$line")
  [ "$found" -eq 0 ] || failed=1
done
echo
echo "fuzz campaign: ${#targets[@]} targets, $((SECONDS - start))s in all"
printf '%s\n' "${summary[@]}"
[ $failed -eq 0 ] || ls "$out/artifacts"
exit $failed
