#!/usr/bin/env bash
# The one command for a GPU machine: build for Hopper (sm_90a) on every core, run the gpu-labelled
# tests, check a large GEMM, benchmark against cuBLAS, and summarise the SASS. Logs, CSVs and
# the summary go to $OUT (default: ./out).
#
#   scripts/gpu-check.sh                        # everything
#   BENCH_SUITES="square llm" BENCH_DTYPES="bf16" scripts/gpu-check.sh
#   SKIP_TESTS=1 scripts/gpu-check.sh           # build + bench only
#   GPU_TEST_JOBS=4 scripts/gpu-check.sh        # gpu tests 4 at a time (default 1; GpuWorkspace
#                                               # runs alone: it reads free device memory)
#   GPU_TESTS=Grouped scripts/gpu-check.sh      # only the gpu tests whose names match
#   SKIP_BENCH=1 scripts/gpu-check.sh           # build + tests + checks, no benchmark
#   BENCH_ARGS="--kernel sm80" scripts/gpu-check.sh   # extra options for every bench run
#   BENCH_TIMINGS=cold scripts/gpu-check.sh     # dense suites cold only (default: cold and warm)
#   FP8_BENCH="tensor block" scripts/gpu-check.sh      # fp8 scale modes benched (default: all;
#                                               # tensor/fast: fast accumulation, tensor/fp8out: fp8 D)
#   MOE_BENCH="NT" scripts/gpu-check.sh         # moe suite layouts (default NN NT), with torch
#   PYTHON_BENCH= scripts/gpu-check.sh          # without the Python layer's bench (needs torch)
#   PACK_OUT=1 scripts/gpu-check.sh             # on exit (a time limit's too), every file but the
#                                               # summary into $OUT/logs.tar.gz: two files to copy
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
mkdir -p "$OUT"
pack_out() {
  local files
  files=$(cd "$OUT" && find . -type f ! -name summary.txt ! -name logs.tar.gz)
  [ -n "$files" ] || return 0
  # shellcheck disable=SC2086
  (cd "$OUT" && tar czf logs.tar.gz $files && rm -f $files)
}
if [ -n "${PACK_OUT:-}" ]; then
  trap pack_out EXIT
  trap 'exit 143' TERM INT
fi
BUILD=${BUILD:-build-gpu}
BENCH_SUITES=${BENCH_SUITES:-all}
[ -n "${SKIP_BENCH:-}" ] && BENCH_SUITES=""
BENCH_DTYPES=${BENCH_DTYPES:-fp32 bf16 fp16 tf32}
BENCH_REPS=${BENCH_REPS:-20}
BENCH_ARGS=${BENCH_ARGS:-}
BENCH_TIMINGS=${BENCH_TIMINGS:-cold warm}
FP8_BENCH=${FP8_BENCH-tensor tensor/fast tensor/fp8out channel block}
[ -n "${SKIP_BENCH:-}" ] && FP8_BENCH=""
MOE_BENCH=${MOE_BENCH-NN NT}
[ -n "${SKIP_BENCH:-}" ] && MOE_BENCH=""
# Time limits, so that a hung kernel costs minutes, not the machine: per CLI run, per test.
RUN_TIMEOUT=${RUN_TIMEOUT:-120}
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
tg() { timeout "$RUN_TIMEOUT" "$BUILD/tilegemm" "$@"; }
summary="$OUT/summary.txt"
: > "$summary"
say() { echo "$@" | tee -a "$summary"; }
# merge_csvs PREFIX OUT: the CSVs PREFIX*.csv into OUT under one header, the parts removed.
merge_csvs() {
  local first=1 part
  for part in "$1"*.csv; do
    [ -e "$part" ] || continue
    if [ $first = 1 ]; then cat "$part"; first=0; else tail -n +2 "$part"; fi
    rm "$part"
  done > "$2"
}

say "== $(date -u +%FT%TZ) commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2>/dev/null | tee -a "$summary"

t0=$(date +%s)
if ! cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
      -DTILEGEMM_PTXAS_VERBOSE=ON > "$OUT/build.log" 2>&1 ||
   ! cmake --build "$BUILD" -j "$(nproc)" >> "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"
  say "BUILD FAILED"
  exit 1
fi
say "build: $(( $(date +%s) - t0 )) s"
# Resource usage of the production kernels: registers, spills, stack.
for kernel in warptile_gemm sm80_gemm sm90_gemm sm90_grouped_gemm decode_gemm; do
  echo "$kernel:" >> "$summary"
  grep -A2 "Function properties for .*$kernel" "$OUT/build.log" | grep -E "registers|spill" |
    sed -E 's/, [0-9]+ bytes cmem.*//' | sort | uniq -c | head -12 >> "$summary"
done

if [ -z "${SKIP_TESTS:-}" ]; then
  t0=$(date +%s)
  # shellcheck disable=SC2086
  ctest --test-dir "$BUILD" -L gpu ${GPU_TESTS:+-R "$GPU_TESTS"} --timeout "$TEST_TIMEOUT" \
    -j "${GPU_TEST_JOBS:-1}" \
    --output-on-failure > "$OUT/tests.log" 2>&1
  rc=$?
  say "gpu tests (ctest -L gpu): $(grep -E 'tests passed|tests failed' "$OUT/tests.log" | tail -1) rc=$rc, $(( $(date +%s) - t0 )) s"
  # The 10k-command-line fuzz test takes minutes and needs no GPU: CI runs it.
  ctest --test-dir "$BUILD" -L host -E CliFuzz -j 8 --output-on-failure > "$OUT/host-tests.log" 2>&1
  say "host tests (ctest -L host): $(grep -E 'tests passed|tests failed' "$OUT/host-tests.log" | tail -1)"
  cat "$OUT/host-tests.log" >> "$OUT/tests.log" && rm "$OUT/host-tests.log"
fi

{
  tg info --ceilings
  tg run 4096 4096 4096 --dtype fp32 --check
  tg run 4096 4096 4096 --dtype bf16 --check
  tg run 4096 4096 4096 --dtype bf16 --beta 1 --bias --activation gelu --check  # full epilogue
  tg run 16 4096 4096 --dtype bf16 --check                   # few rows: the decode kernel
  tg run 4096 4096 4096 --dtype tf32 --check
  tg run 4096 4096 4096 --dtype tf32x3 --check               # promoted sums: fp32's accuracy
  tg run 4096 4096 4096 --dtype tf32x3 --fast-accum --check
  tg run 4095 4097 4093 --dtype fp16 --check
  tg run 1000 1000 1000 --dtype fp16 --layout-a col --bias --activation gelu --beta 1 --check
  tg run 4096 4096 4096 --dtype fp8 --layout-b col --check
  tg run 4096 4096 4096 --dtype fp8 --layout-b col --scale-mode tensor --fast-accum --check
  tg run 4096 7168 16384 --dtype fp8 --layout-b col --scale-mode block --check
  tg run 4095 4097 4093 --dtype fp8 --dtype-b fp8_e5m2 --scale-mode channel --out-dtype fp32 --check
  # grouped (MoE): prefill with random group sizes, and masked decode
  tg run 16384 4096 7168 --dtype bf16 --grouped offsets --groups 32 --check
  tg run 16384 4096 7168 --dtype bf16 --grouped offsets --groups 32 --bias --activation silu --check
  tg run 128 4096 7168 --dtype bf16 --grouped counts --groups 32 --layout-b col --check
  tg run 4096 7168 16384 --dtype bf16 --grouped k_offsets --groups 32 --layout-a col --check  # wgrad
  # Memory and shared-memory race checks on small problems, every kernel.
  if [ -z "${SKIP_SANITIZER:-}" ] && command -v compute-sanitizer > /dev/null; then
    # "kernel:dtype:extra run options", cases separated by '|' (SANITIZER_CASES overrides).
    # memcheck's 130x70x45 has unaligned rows (the staged copy path) unless the leading dims
    # say otherwise; racecheck's 200x136x64 takes cp.async. Extra options must suit both shapes.
    # The last four cases give every persistent sm90 program several tiles: 128x256 (400 in all),
    # so the chunks of D held into the next tile (store_tma) are checked too, the ping-pong
    # config (1200), whose consumers take turns, with the general epilogue, an fp32 D with
    # the general epilogue on 128x256 (its chunks in rounds, C by TMA), 64x128 in clusters
    # of 2 (B multicast into both programs' stages), and in clusters of 2 x 2 (A multicast too;
    # at 130 x 70 the cluster has programs below and right of the matrix). The grouped cases
    # take every form, an empty and a one-row group, the general route with a bias per group, and
    # the plain one (each group's D through its own tensor map, chunks held into the next tile).
    # The fp8 D cases take TMA stores (144-byte rows) and the general epilogue from registers.
    # The staged cases write 139-value rows of D (no tensor map) from the store buffers: plain in
    # 128x256 with chunks held into the next tile, and the whole epilogue.
    cases=${SANITIZER_CASES:-"naive:bf16:|smem:bf16:|tile2d:bf16:|warptile:fp32:|sm80:bf16:|sm80:tf32:|sm90:tf32x3:--batch 20|sm80:fp16:--layout-a col --lda 208 --layout-b col --ldb 72|sm80:bf16:--lda 64 --ldb 136 --config 256x128x32/g8/s4/w8/wt64x64|sm90:bf16:--lda 64 --ldb 136 --ldc 136|sm90:fp16:--layout-a col --lda 200 --layout-b col --ldb 64|sm90:bf16:--lda 64 --ldb 136 --ldc 136 --batch 200 --config 128x256x64/g8/s4/w12/wt64x256|sm90:bf16:--lda 64 --ldb 136 --ldc 136 --batch 300 --beta 1 --bias --activation gelu --config 128x128x64/g8/s5/w12/wt128x128/pingpong|sm90:bf16:--out-dtype fp32 --lda 64 --ldb 136 --ldc 136 --batch 200 --beta 1 --bias --activation gelu --config 128x256x64/g8/s4/w12/wt64x256|sm90:bf16:--lda 64 --ldb 136 --ldc 136 --batch 100 --beta 1 --bias --activation gelu --config 64x128x64/g8/s8/w8/wt64x128/c2|sm90:bf16:--lda 64 --ldb 136 --ldc 136 --batch 30 --beta 1 --bias --activation gelu --config 64x128x64/g8/s8/w8/wt64x128/c2x2|sm90:fp8_e4m3:--layout-b col --scale-mode block --batch 40 --beta 1 --bias|sm90:fp8_e4m3:--layout-b col --scale-mode channel --fast-accum --batch 40|sm90:fp8_e5m2:--dtype-b fp8_e4m3 --scale-mode tensor --batch 20 --config 128x128x128/g8/s6/w12/wt64x128/c2|sm90:fp8_e4m3:--layout-b col --scale-mode tensor --out-dtype fp8_e4m3 --ldc 144 --batch 40|sm90:fp8_e4m3:--layout-b col --scale-mode block --out-dtype fp8_e5m2 --bias --activation gelu --batch 40|sm90:bf16:--lda 64 --ldb 136 --ldc 139 --batch 200 --config 128x256x64/g8/s4/w12/wt64x256|sm90:bf16:--lda 64 --ldb 136 --ldc 139 --batch 100 --beta 1 --bias --activation gelu --config 128x256x64/g8/s4/w12/wt64x256|sm90:bf16:--lda 64 --ldb 136 --grouped offsets --groups 5 --beta 1 --bias --activation gelu|sm90:bf16:--lda 64 --grouped counts --groups 4 --layout-b col --ldb 136|sm90:fp16:--lda 64 --ldb 136 --grouped offsets --group-rows 0,1,60,0,69 --config 64x128x64/g8/s8/w8/wt64x128|sm90:bf16:--layout-a col --lda 200 --grouped k_offsets --group-rows 9,0,17,1,13 --beta 1 --bias --activation gelu|sm90:bf16:--layout-a col --lda 200 --grouped k_offsets --group-rows 9,0,17,1,13"}
    IFS='|' read -r -a case_list <<< "$cases"
    for case in "${case_list[@]}"; do
      IFS=: read -r kernel dtype extra <<< "$case"
      # shellcheck disable=SC2086
      timeout "$RUN_TIMEOUT" compute-sanitizer --tool memcheck --error-exitcode 9 "$BUILD/tilegemm" run 130 70 45 \
        --dtype "$dtype" --kernel "$kernel" --reps 1 --check $extra > "$OUT/sanitizer.tmp" 2>&1
      echo "memcheck $case rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.tmp")"
      # shellcheck disable=SC2086
      timeout "$RUN_TIMEOUT" compute-sanitizer --tool racecheck --error-exitcode 9 "$BUILD/tilegemm" run 200 136 64 \
        --dtype "$dtype" --kernel "$kernel" --reps 1 $extra > "$OUT/sanitizer.tmp" 2>&1
      echo "racecheck $case rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/sanitizer.tmp")"
      if [ "$kernel" = sm90 ]; then  # mbarrier and warpgroup synchronisation
        # shellcheck disable=SC2086
        timeout "$RUN_TIMEOUT" compute-sanitizer --tool synccheck --error-exitcode 9 "$BUILD/tilegemm" run 200 136 64 \
          --dtype "$dtype" --kernel "$kernel" --reps 1 $extra > "$OUT/sanitizer.tmp" 2>&1
        echo "synccheck $case rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/sanitizer.tmp")"
      fi
    done
    # gemm_grouped()'s problems in one launch (the ptr_array form), from the GPU tests.
    for tool in memcheck racecheck synccheck; do
      timeout "$RUN_TIMEOUT" compute-sanitizer --tool $tool --error-exitcode 9 \
        "$BUILD/tests/tilegemm_gpu_tests" --gtest_filter=GpuGrouped.SmallProblemsEveryRoute \
        > "$OUT/sanitizer.tmp" 2>&1
      echo "$tool sm90:bf16:gemm_grouped rc=$? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' "$OUT/sanitizer.tmp")"
    done
  fi
} > "$OUT/run.log" 2>&1
rm -f "$OUT/sanitizer.tmp"
grep -E "^(memcheck|racecheck|synccheck)" "$OUT/run.log" | tr '\n' ' ' >> "$summary"; echo >> "$summary"
say "run: $(grep -c PASS "$OUT/run.log") PASS, $(grep -c FAIL "$OUT/run.log") FAIL"
grep -E "TFLOP/s|check:|copy:" "$OUT/run.log" | tee -a "$summary"

# Optional config sweep: SWEEP="sm80:bf16:4096:4096:4096 ..." times every compiled config of the
# kernel on that shape (the autotuner's question, asked by hand).
for item in ${SWEEP:-}; do
  IFS=: read -r kernel dtype m n k <<< "$item"
  configs=$("$BUILD/tilegemm" info | awk -v k="$kernel" '$1 == k { on = 1; next }
    $1 == "config" && on { print $2; next } { on = 0 }')
  for config in $configs; do
    tflops=$(tg run "$m" "$n" "$k" --dtype "$dtype" --kernel "$kernel" \
      --config "$config" --reps 10 2>&1 | sed -nE 's/.* ([0-9.]+) TFLOP\/s/\1/p')
    say "sweep $kernel $dtype ${m}x${n}x${k} $config ${tflops:-failed} TFLOP/s"
  done
done

# One CSV for every dtype and suite: the per-run files are merged (one header) into bench.csv.
# (BENCH_SUITES=none runs no dense suite: an empty value means the default, all.)
[ "$BENCH_SUITES" = none ] && BENCH_SUITES=""
: > "$OUT/bench.log"
for timing in $BENCH_TIMINGS; do
  warm=""; [ "$timing" = warm ] && warm="--warm"
  for dtype in $BENCH_DTYPES; do
    for suite in $BENCH_SUITES; do
      # shellcheck disable=SC2086
      timeout 300 "$BUILD/tilegemm" bench --suite "$suite" --dtype "$dtype" --reps "$BENCH_REPS" \
        $warm $BENCH_ARGS --csv "$OUT/part-$timing-$dtype-$suite.csv" 2>&1 | tee -a "$OUT/bench.log"
    done
  done
done
merge_csvs "$OUT"/part- "$OUT/bench.csv"
# The issue's decode grid (bf16; M <= 16 runs the decode kernel), cold and warm.
if [ -n "$BENCH_SUITES" ]; then
  for timing in $BENCH_TIMINGS; do
    warm=""; [ "$timing" = warm ] && warm="--warm"
    # shellcheck disable=SC2086
    timeout 300 "$BUILD/tilegemm" bench --shapes bench/decode-grid.txt --dtype bf16 \
      --reps "$BENCH_REPS" $warm --csv "$OUT/decode-grid-$timing.csv" 2>&1 | tee -a "$OUT/bench.log"
  done
fi
# fp8 against cuBLASLt: the fp8 suite in each scale mode ("tensor/fast": fast accumulation,
# "tensor/fp8out": an fp8 D with its scale and amax), and the unaligned shapes (which cuBLASLt
# refuses) with per-tensor scales.
for mode in $FP8_BENCH; do
  extra=""
  [ "${mode#*/}" = fast ] && extra="--fast-accum"
  [ "${mode#*/}" = fp8out ] && extra="--out-dtype fp8_e4m3"
  # shellcheck disable=SC2086
  timeout 300 "$BUILD/tilegemm" bench --suite fp8 --dtype fp8_e4m3 --scale-mode "${mode%/*}" $extra \
    --reps "$BENCH_REPS" --csv "$OUT/fp8-${mode//\//-}.csv" 2>&1 | tee -a "$OUT/bench.log"
done
merge_csvs "$OUT"/fp8- "$OUT/fp8.csv"  # one file: a lent machine returns few
if [ -n "$FP8_BENCH" ]; then
  timeout 300 "$BUILD/tilegemm" bench --suite unaligned --dtype fp8_e4m3 --scale-mode tensor \
    --reps "$BENCH_REPS" 2>&1 | tee -a "$OUT/bench.log"
fi
# Grouped GEMMs (MoE) against a loop of cuBLAS calls, and torch._grouped_mm on the same shapes.
for layouts in $MOE_BENCH; do
  timeout 300 "$BUILD/tilegemm" bench --suite moe --dtype bf16 --layouts "$layouts" \
    --reps "$BENCH_REPS" --json "$OUT/moe-$layouts.json" 2>&1 | tee -a "$OUT/bench.log"
  timeout 300 python3 bench/moe_torch.py "$OUT/moe-$layouts.json" 2>&1 | tee -a "$OUT/moe.log"
  rm -f "$OUT/moe-$layouts.json"
done
grep -E "^(square|unaligned|skinny|llm|longk|fp8|moe|file) |geometric|^  [a-z0-9]+ |note: cuBLASLt" "$OUT/bench.log" >> "$summary"
[ -f "$OUT/moe.log" ] && cat "$OUT/moe.log" >> "$summary"

# The Python layer's cost (scripts/python-bench.py): per call against torch.matmul, and the large
# product's TFLOP/s from Python next to the C++ call's.
if [ -n "${PYTHON_BENCH-1}" ] && [ -z "${SKIP_BENCH:-}" ] && [ -d "$BUILD/python/tilegemm" ] &&
   python3 -c 'import torch' 2> /dev/null; then
  printf '4096 4096 4096\n' > "$OUT/python-bench-shape.txt"
  { PYTHONPATH="$BUILD/python" timeout 600 python3 scripts/python-bench.py
    echo "C++ call (tilegemm bench, cold then warm):"
    tg bench --shapes "$OUT/python-bench-shape.txt" --dtype bf16 --reps 20
    tg bench --shapes "$OUT/python-bench-shape.txt" --dtype bf16 --reps 20 --warm; } \
    > "$OUT/python-bench.txt" 2>&1
  grep -E " us host$|TFLOP/s|tilegemm - torch|^file |cold|warm" "$OUT/python-bench.txt" |
    tee -a "$summary"
fi

python3 bench/plot.py "$OUT/bench.csv" "$OUT/square.png" > /dev/null 2>&1 ||
  echo "plot skipped (needs python3 with matplotlib)" >> "$summary"

# SASS: which instructions the production kernels use, and any local-memory traffic (minutes:
# left out with the benchmark).
: > "$OUT/sass.txt"
for unit in ${SKIP_BENCH:+none} warptile sm80_bf16_async sm80_tf32_async sm90_bf16 sm90_fp8_e4m3; do
  [ "$unit" = none ] && break
  obj=$(find "$BUILD" -name "$unit.cu.o" | head -1)
  [ -n "$obj" ] || continue
  cuobjdump --dump-sass "$obj" > "$OUT/sass-$unit.txt" 2>&1
  count() { grep -cE "$1" "$OUT/sass-$unit.txt"; }
  say "sass $unit: FFMA $(count FFMA), HMMA $(count HMMA), LDSM $(count LDSM), LDGSTS $(count LDGSTS), LDS.128 $(count 'LDS.128'), LDG.E.128 $(count 'LDG.E.128'), HGMMA $(count HGMMA), QGMMA $(count QGMMA), UTMALDG $(count UTMALDG), LDL/STL $(count 'LDL|STL')"
  cat "$OUT/sass-$unit.txt" >> "$OUT/sass.txt" && rm "$OUT/sass-$unit.txt"
done
gzip -f "$OUT/sass.txt"
