#!/usr/bin/env bash
# The autotuner's figures (docs/performance.md): builds the heuristic's table on this GPU and
# compiles it in, then per bench suite the heuristic's time over the tuned best
# (`tilegemm tune`), the host cost of a cached lookup, and tuned vs cuBLAS
# (`tilegemm bench --autotune on-miss`). Needs a build in $BUILD (scripts/gpu-check.sh).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
BUILD=${BUILD:-build-gpu}
SUITE_DTYPES=${SUITE_DTYPES:-bf16 fp16 tf32}
BENCH_TUNED_DTYPES=${BENCH_TUNED_DTYPES:-bf16}
summary="$OUT/autotune-summary.txt"
: > "$summary"
say() { echo "$@" | tee -a "$summary"; }

t0=$(date +%s)
scripts/tune-table.sh | tee -a "$summary" || exit 1
cp "$OUT/h100_table.json" src/tune/h100_table.json
if ! cmake --build "$BUILD" -j "$(nproc)" > "$OUT/rebuild.log" 2>&1; then
  tail -20 "$OUT/rebuild.log"
  exit 1
fi
say "table tuned and compiled in: $(( $(date +%s) - t0 )) s"

cache="$OUT/suite-cache"
rm -rf "$cache"
for dtype in $SUITE_DTYPES; do
  for suite in square unaligned skinny llm longk; do
    echo "== $dtype $suite"
    TILEGEMM_CACHE_DIR="$cache" "$BUILD/tilegemm" tune --suite "$suite" --dtype "$dtype"
  done
done > "$OUT/tune-suites.log" 2>&1
grep -E "^== |geometric mean|^tuning key|heuristic/tuned" "$OUT/tune-suites.log" >> "$summary"
TILEGEMM_CACHE_DIR="$cache" "$BUILD/tilegemm" tune 4096 4096 4096 --dtype bf16 --overhead 2>&1 |
  grep -E "host time|tuning key" | tee -a "$summary"

for dtype in $BENCH_TUNED_DTYPES; do
  TILEGEMM_CACHE_DIR="$cache" "$BUILD/tilegemm" bench --suite all --dtype "$dtype" \
    --autotune on-miss --reps 5 --csv "$OUT/bench-tuned-$dtype.csv"
done > "$OUT/bench-tuned.log" 2>&1
grep -E "^(square|unaligned|skinny|llm|longk) |geometric|^  [a-z]+ " "$OUT/bench-tuned.log" >> "$summary"
say "autotune-check: $(( $(date +%s) - t0 )) s"
