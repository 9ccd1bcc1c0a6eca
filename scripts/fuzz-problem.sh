#!/usr/bin/env bash
# Builds tests/fuzz/problem_fuzz.cpp with libFuzzer, AddressSanitizer and UndefinedBehavior-
# Sanitizer (clang++) and runs it: every input of the committed corpus (tests/fuzz/corpus), then
# RUNS new inputs from SEED (a fixed seed: the same inputs each time), or for SECONDS_LIMIT
# seconds when given. Host code only (validation, the grouped walk, the config parser): no GPU,
# no CUDA toolkit. Any crash, sanitizer report or broken invariant exits non-zero with the input.
#
#   scripts/fuzz-problem.sh BUILD_DIR                 # the corpus, then 200000 inputs, seed 1
#   RUNS=-1 SECONDS_LIMIT=600 scripts/fuzz-problem.sh build  # ten minutes, for a longer search
#   MERGE=1 RUNS=-1 SECONDS_LIMIT=600 scripts/fuzz-problem.sh build
#       # the same, then the inputs found that reach new code merged into tests/fuzz/corpus
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-build}/fuzz
mkdir -p "$out"
CXX=${FUZZ_CXX:-clang++}
"$CXX" -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -Iinclude -Isrc tests/fuzz/problem_fuzz.cpp src/problem/validate.cpp src/problem/names.cpp \
  src/problem/config.cpp \
  -o "$out/problem_fuzz"
args=(-seed="${SEED:-1}" -runs="${RUNS:-200000}" -max_len=512 -print_final_stats=1)
[ -n "${SECONDS_LIMIT:-}" ] && args+=(-max_total_time="$SECONDS_LIMIT")
# New inputs go to the first corpus folder, a scratch one; the committed corpus is only read.
# -artifact_prefix: a failing input is written beside the binary, not into the source tree.
rm -rf "$out/corpus" && mkdir -p "$out/corpus"
UBSAN_OPTIONS=print_stacktrace=1 "$out/problem_fuzz" "${args[@]}" -artifact_prefix="$out/" \
  "$out/corpus" tests/fuzz/corpus
if [ -n "${MERGE:-}" ]; then
  "$out/problem_fuzz" -merge=1 -max_len=512 tests/fuzz/corpus "$out/corpus"
fi
