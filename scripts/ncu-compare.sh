#!/usr/bin/env bash
# Nsight Compute profiles of tilegemm's kernel and of cuBLAS's (called through torch) on one
# shape, for reading side by side: the details page, the raw metrics, and, for tilegemm's kernel,
# the SASS with the warp-stall samples of every instruction.
#
#   BIN=build-gpu/tilegemm scripts/ncu-compare.sh 4096 4096 4096 fp32 [extra `tilegemm run` options]
#
# Writes $OUT/ncu-{tilegemm,cublas}-{details,raw}.txt and $OUT/ncu-tilegemm-source.csv.gz.
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-build-gpu/tilegemm}
OUT=${OUT:-out}
mkdir -p "$OUT"
m=$1 n=$2 k=$3 dtype=$4
shift 4
# The second launch of each: the first may pay for module loading.
ncu --set full --import-source no --launch-skip 1 --launch-count 1 \
  -k "regex:${KERNEL_REGEX:-gemm}" -f -o "$OUT/tilegemm" \
  "$BIN" run "$m" "$n" "$k" --dtype "$dtype" --reps 3 "$@" > "$OUT/ncu-tilegemm.log" 2>&1
case "$dtype" in
  fp32) torch_dtype=float32 ;;
  fp16) torch_dtype=float16 ;;
  *) torch_dtype=bfloat16 ;;
esac
# torch's matmul with TF32 off is cuBLAS's SGEMM for fp32 (row-major operands, as `run` makes).
ncu --set full --import-source no --launch-skip 1 --launch-count 1 -k "regex:gemm|Kernel|nvjet|xmma|cutlass" \
  -f -o "$OUT/cublas" python3 -c "
import torch
torch.backends.cuda.matmul.allow_tf32 = False
a = torch.randn($m, $k, device='cuda', dtype=torch.$torch_dtype)
b = torch.randn($k, $n, device='cuda', dtype=torch.$torch_dtype)
for _ in range(3):
    c = a @ b
torch.cuda.synchronize()
" > "$OUT/ncu-cublas.log" 2>&1
for who in tilegemm cublas; do
  [ -f "$OUT/$who.ncu-rep" ] || { echo "$who: no report (see ncu-$who.log)"; continue; }
  ncu -i "$OUT/$who.ncu-rep" --page details > "$OUT/ncu-$who-details.txt" 2>&1
  ncu -i "$OUT/$who.ncu-rep" --page raw > "$OUT/ncu-$who-raw.txt" 2>&1
  grep -E "^  [a-zA-Z_]|Duration|Registers Per|Block Size|Grid Size|Issued Ipc|Eligible Warps|No Eligible" \
    "$OUT/ncu-$who-details.txt" | head -20
done
if [ -f "$OUT/tilegemm.ncu-rep" ]; then
  ncu -i "$OUT/tilegemm.ncu-rep" --page source --csv --print-source sass 2>&1 |
    gzip > "$OUT/ncu-tilegemm-source.csv.gz"
fi
rm -f "$OUT"/*.ncu-rep
