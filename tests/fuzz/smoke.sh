#!/usr/bin/env bash
# Bounded fuzz smoke run: builds every libFuzzer target (tests/fuzz/fuzz_*.c) with clang into
# build-fuzz, then runs each for a fixed number of inputs starting from its seed corpus
# (tests/fuzz/corpus/<target>/) and dictionary. Any crash, sanitizer report, leak, timeout
# or out-of-memory fails the run. New inputs and artifacts go under build-fuzz/smoke/, never
# into the seed corpora.
#
# Usage: tests/fuzz/smoke.sh [target...]     (default: every target)
# Environment: FUZZ_RUNS (inputs per target, default 3000), FUZZ_SEED (default 1, so a
# run is repeatable; 0 lets libFuzzer pick), CC_FUZZ (default clang).
# A longer campaign is the same binaries with -max_total_time; see tests/fuzz/README.md.
set -uo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
cd "$here"
runs=${FUZZ_RUNS:-3000}
seed=${FUZZ_SEED:-1}
cc=${CC_FUZZ:-clang}
out=build-fuzz/smoke

command -v "$cc" >/dev/null || { echo "fuzz smoke: $cc not found (scripts/deps.sh test installs clang)" >&2; exit 1; }
start=$SECONDS
mkdir -p build-fuzz
if ! { cmake -S . -B build-fuzz -DCMAKE_C_COMPILER="$cc" -DDS_FUZZ=ON \
         -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$out.configure.log" 2>&1 &&
       cmake --build build-fuzz --target fuzz -j2 >"$out.build.log" 2>&1; }; then
  echo "fuzz smoke: build failed" >&2
  tail -n 30 "$out.configure.log" "$out.build.log" >&2
  exit 1
fi
echo "built in $((SECONDS - start))s"

if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=()
  for src in tests/fuzz/fuzz_*.c; do targets+=("$(basename "$src" .c)"); done
fi

rm -rf "$out"
mkdir -p "$out"
failed=0
for t in "${targets[@]}"; do
  t0=$SECONDS
  mkdir -p "$out/$t"
  args=(-runs="$runs" -seed="$seed" -timeout=10 -rss_limit_mb=2048 -print_final_stats=0
        -artifact_prefix="$out/$t-")
  [ -f "tests/fuzz/$t.dict" ] && args+=(-dict="tests/fuzz/$t.dict")
  # the first directory receives new inputs: a scratch one, so the seeds stay as committed
  if timeout 120 "build-fuzz/tests/fuzz/$t" "${args[@]}" "$out/$t" "tests/fuzz/corpus/$t" \
       </dev/null >"$out/$t.log" 2>&1; then
    echo "ok   $t ($((SECONDS - t0))s, $runs runs)"
  else
    echo "FAIL $t ($((SECONDS - t0))s): see $out/$t.log"
    grep -E "ERROR|runtime error|SUMMARY|failed without|reads back|printed back" "$out/$t.log" |
      head -n 5
    ls "$out/$t"-* 2>/dev/null | head -n 3
    failed=1
  fi
done
echo "fuzz smoke: $((SECONDS - start))s in all"
exit $failed
