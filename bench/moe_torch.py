#!/usr/bin/env python3
"""torch._grouped_mm on the moe suite's cases, beside tilegemm's figures from the same machine.

usage: moe_torch.py BENCH.json [--layouts NN|NT]

BENCH.json is what `tilegemm bench --suite moe --json BENCH.json` wrote. For each offsets-form
row (the prefill cases; torch._grouped_mm has no masked form) this times
torch._grouped_mm(a, b, offs) on bf16 inputs of the same shapes -- a: [tokens x K] row-major,
b: [G x K x N] with the row's B layout, offs: the groups' cumulative rows (int32, on the GPU) --
and for each k_offsets row (a weight gradient) torch._grouped_mm(x.t(), dy, offs) with x:
[tokens x M] and dy: [tokens x N] row-major, offs the groups' cumulative tokens, as the bench
times: CUDA events, L2 flushed before each call (a memset of twice the L2), median
of the repetitions after a warm-up. It prints tilegemm's TFLOP/s (from the file), torch's, and
their ratio.
"""
import json
import statistics
import sys

import torch


def time_ms(fn, reps=20, warmup=3):
    props = torch.cuda.get_device_properties(0)
    flush = torch.empty(max(2 * props.L2_cache_size, 64 << 20), dtype=torch.uint8, device="cuda")
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    rows = [r for r in json.load(open(argv[1])) if r.get("suite") == "moe"]
    torch.manual_seed(0)
    print(f"device: {torch.cuda.get_device_name(0)}; torch {torch.__version__}")
    print(f"{'case':<14} {'G':>3} {'tokens':>6} {'N':>6} {'K':>6} {'ly':>2} "
          f"{'tilegemm':>9} {'cuBLAS loop':>11} {'torch':>8} {'vs torch':>8}")
    for r in rows:
        form, sizes = r["groups"].split(" ")
        rows_per_group = [int(x) for x in sizes.split(",")]
        name = r["note"].split(":")[0]
        tokens, n, k = sum(rows_per_group), r["n"], r["k"]
        if form == "k_offsets":  # M x N per group over each group's tokens (K)
            m, g = r["m"], len(rows_per_group)
            x = torch.randn(k, m, device="cuda", dtype=torch.bfloat16)
            dy = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
            offs = torch.cumsum(torch.tensor(rows_per_group, device="cuda"), 0).to(torch.int32)
            ms = time_ms(lambda: torch._grouped_mm(x.t(), dy, offs=offs))
            tflops = 2.0 * m * n * tokens / (ms * 1e-3) / 1e12
            ours = r["tilegemm_tflops"]
            print(f"{name:<14} {g:>3} {tokens:>6} {n:>6} {m:>6} {r['layouts']:>2} {ours:>9.1f} "
                  f"{r['cublas_tflops']:>11.1f} {tflops:>8.1f} {ours / tflops:>7.2f}x")
            continue
        if form != "offsets":
            print(f"{name:<14} {len(rows_per_group):>3} {tokens:>6} {n:>6} {k:>6} {r['layouts']:>2} "
                  f"{r['tilegemm_tflops']:>9.1f} {r['cublas_tflops']:>11.1f} {'-':>8} {'-':>8}")
            continue
        g = len(rows_per_group)
        a = torch.randn(tokens, k, device="cuda", dtype=torch.bfloat16)
        if r["layouts"][1] == "T":  # B column-major: each group's K x N stored N x K
            b = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16).transpose(-2, -1)
        else:
            b = torch.randn(g, k, n, device="cuda", dtype=torch.bfloat16)
        offs = torch.cumsum(torch.tensor(rows_per_group, device="cuda"), 0).to(torch.int32)
        try:
            ms = time_ms(lambda: torch._grouped_mm(a, b, offs=offs))
            tflops = 2.0 * tokens * n * k / (ms * 1e-3) / 1e12
            ours = r["tilegemm_tflops"]
            print(f"{name:<14} {g:>3} {tokens:>6} {n:>6} {k:>6} {r['layouts']:>2} {ours:>9.1f} "
                  f"{r['cublas_tflops']:>11.1f} {tflops:>8.1f} {ours / tflops:>7.2f}x")
        except RuntimeError as e:  # a layout torch does not take
            print(f"{name:<14} {g:>3} {tokens:>6} {n:>6} {k:>6} {r['layouts']:>2} "
                  f"{r['tilegemm_tflops']:>9.1f} {r['cublas_tflops']:>11.1f} refused: "
                  f"{str(e).splitlines()[0][:60]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
