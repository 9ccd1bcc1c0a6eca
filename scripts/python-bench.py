#!/usr/bin/env python3
"""The Python layer's cost, measured against torch and against the C++ call.

  1. Per-call wall time of a small product (64 x 64 x 64 bf16 by default): tilegemm.matmul
     against torch.matmul, each called N times in a row with no synchronisation in between (the
     host's cost per call, as a model's eager loop pays it), median of R rounds.
  2. A large product (4096^3 bf16): TFLOP/s of tilegemm.matmul from Python, timed with CUDA
     events around each call after an L2 flush, median of the reps, against torch.matmul in the
     same run. The C++ call's figure for the same shape comes from `tilegemm run` (gpu-check.sh
     prints both).

  PYTHONPATH=build-gpu/python python3 scripts/python-bench.py [--small 64] [--large 4096]
"""

import argparse
import statistics
import time

import torch

import tilegemm


def per_call_us(fn, calls, rounds):
    samples = []
    for _ in range(rounds):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        samples.append((t1 - t0) / calls * 1e6)
    return statistics.median(samples)


def event_ms(fn, reps, flush):
    times = []
    for _ in range(3):
        fn()
    for _ in range(reps):
        flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", type=int, default=64)
    parser.add_argument("--large", type=int, default=4096)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--reps", type=int, default=30)
    args = parser.parse_args()
    print(f"tilegemm {tilegemm.__version__}, torch {torch.__version__}, "
          f"{torch.cuda.get_device_name()}")

    s = args.small
    a = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(s, s, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(s, s, device="cuda", dtype=torch.bfloat16)
    cases = [
        ("torch.matmul(a, b)", lambda: torch.matmul(a, b)),
        ("tilegemm.matmul(a, b)", lambda: tilegemm.matmul(a, b)),
        ("torch.matmul(a, b, out=out)", lambda: torch.matmul(a, b, out=out)),
        ("tilegemm.matmul(a, b, out=out)", lambda: tilegemm.matmul(a, b, out=out)),
    ]
    print(f"\nper-call wall time, {s}x{s}x{s} bf16, {args.calls} calls in a row, median of "
          f"{args.rounds} rounds:")
    results = {}
    for name, fn in cases:
        per_call_us(fn, 100, 2)  # warm-up
        results[name] = per_call_us(fn, args.calls, args.rounds)
        print(f"  {name:34s} {results[name]:7.2f} us")
    print(f"  tilegemm - torch: {results['tilegemm.matmul(a, b)'] - results['torch.matmul(a, b)']:+.2f} us "
          f"(out given: {results['tilegemm.matmul(a, b, out=out)'] - results['torch.matmul(a, b, out=out)']:+.2f} us)")

    n = args.large
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    flush = torch.empty(2 * 60 * 1024 * 1024, device="cuda", dtype=torch.uint8)
    flops = 2.0 * n * n * n
    print(f"\n{n}^3 bf16, CUDA events around each call after an L2 flush, median of {args.reps}:")
    for name, fn in [("tilegemm.matmul(a, b, out=out)", lambda: tilegemm.matmul(a, b, out=out)),
                     ("torch.matmul(a, b, out=out)", lambda: torch.matmul(a, b, out=out))]:
        ms = event_ms(fn, args.reps, flush)
        print(f"  {name:34s} {ms:8.4f} ms {flops / ms / 1e9:7.1f} TFLOP/s")
    print("  (" + str(tilegemm.plan(a, b)["kernel"]) + " " + tilegemm.plan(a, b)["config"] + ")")


if __name__ == "__main__":
    main()
