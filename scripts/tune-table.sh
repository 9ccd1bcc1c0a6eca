#!/usr/bin/env bash
# Tunes the grid of bench/tune-grid.txt on this GPU and writes the heuristic's table (the cache
# file the tuning produced) to $OUT/h100_table.json; copy it to src/tune/h100_table.json to
# commit it. Needs a build in $BUILD. TABLE_KERNELS: the kernel requests to tune for ("auto", or a
# kernel's name for the rows used when that kernel is asked for by name).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
BUILD=${BUILD:-build-gpu}
TABLE_DTYPES=${TABLE_DTYPES:-bf16 tf32 fp32}
TABLE_KERNELS=${TABLE_KERNELS:-auto}
cache="$OUT/table-cache"
rm -rf "$cache"
mkdir -p "$cache"
for kernel in $TABLE_KERNELS; do
  for dtype in $TABLE_DTYPES; do
    TILEGEMM_CACHE_DIR="$cache" "$BUILD/tilegemm" tune --shapes bench/tune-grid.txt \
      --dtype "$dtype" --kernel "$kernel"
  done
done > "$OUT/tune-table.log" 2>&1
file=$(ls "$cache"/*.json)
cp "$file" "$OUT/h100_table.json"
echo "table: $(grep -c '"kernel"' "$OUT/h100_table.json") entries from $file"
