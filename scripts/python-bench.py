#!/usr/bin/env python3
"""The Python layer's cost, measured against torch and against the C++ call.

  1. Per-call wall time of a small product (64 x 64 x 64 bf16 by default): tilegemm.matmul
     against torch.matmul, each called N times in a row with no synchronisation in between (as a
     model's eager loop pays it; where the device takes longer per call than the host, its pace),
     and in bursts of 100 calls after a synchronisation (the host's cost alone); the four cases
     take turns round by round, and each difference is the median of the rounds' differences.
  2. A large product (4096^3 bf16): TFLOP/s of tilegemm.matmul from Python against torch.matmul
     in the same run, the two taking turns over rounds, timed with CUDA events (the device kept
     busy while the host enqueues): cold, each call after an L2 flush, and warm, 10 calls back to
     back. The C++ call's figures for the same shape come from `tilegemm bench` (gpu-check.sh
     prints both).

  PYTHONPATH=build-gpu/python python3 scripts/python-bench.py [--small 64] [--large 4096]

With --breakdown, also the parts of a small call, each timed alone the same way: the result's
allocation, a DLPack capsule, the current stream, the adapter's checks, and the native call (three
capsules, the mapping, gemm()), then the layers above it, each timed with those below it: the
general path's, and the plain product's (every argument but out at its default).
`tilegemm run 64 64 64 --dtype bf16 --host-time` gives gemm()'s
own host cost in C++.
"""

import argparse
import statistics
import time

import torch

import tilegemm


BURST = 100  # calls in a burst: far fewer than CUDA's launch queue holds
LARGE_ROUNDS = 5


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


def event_times_ms(fn, reps, flush, warm_calls=0):
    """Cold (warm_calls 0): the call alone after an L2 flush. Warm: warm_calls calls back to back,
    no flush (as `tilegemm bench --warm`), the time per call."""
    times = []
    for _ in range(3):
        fn()
    for _ in range(reps):
        # The device sleeps first (~0.5 ms), so that the flush, the events and the call are all
        # enqueued before it reaches them: the events time the device's work, not the host's.
        torch.cuda._sleep(1_000_000)
        if not warm_calls:
            flush.zero_()
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(max(warm_calls, 1)):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / max(warm_calls, 1))
    return times


def breakdown(a, b, out, args):
    from tilegemm import _torch
    from tilegemm._arrays import Adapter, adapter_of
    native, capsule, stream = _torch._native, _torch._capsule, _torch._stream
    adapter = adapter_of(a)
    s = a.shape[0]
    parts = [
        ("torch.empty (the result)",
         lambda: torch.empty((s, s), dtype=a.dtype, device=a.device)),
        ("a.new_empty (the result)", lambda: a.new_empty((s, s))),
        ("one DLPack capsule", lambda: capsule(a)),
        ("the current stream", lambda: stream(a)),
        ("torch.compiler.is_compiling()", torch.compiler.is_compiling),
        ("the adapter's checks", lambda: adapter.arguments(a, b, None, 1.0, None, None, None,
                                                           0.01, None, None, out)),
        ("native run (3 capsules)", lambda: native.run(
            capsule(a), capsule(b), capsule(out), None, None, 1.0, 0.0, "none", 0.01, "ieee", "",
            "auto", "auto", "", stream(a), None, False)),
        # The general path's layers above the native call, each with those below it (out given;
        # beta given keeps tilegemm.matmul off the plain product's path).
        ("Adapter.matmul (general, the base)", lambda: Adapter.matmul(
            adapter, a, b, None, 1.0, None, None, None, 0.01, None, out, None, "auto", "auto",
            None, None)),
        ("TorchAdapter.matmul (general)", lambda: adapter.matmul(
            a, b, None, 1.0, None, None, None, 0.01, None, out, None, "auto", "auto", None,
            None)),
        ("tilegemm.matmul(beta=0.0) (general)", lambda: tilegemm.matmul(a, b, out=out, beta=0.0)),
        # The plain product's path (every argument but out at its default).
        ("TorchAdapter.product, out given", lambda: adapter.product(a, b, out)),
        ("tilegemm.matmul, out given", lambda: tilegemm.matmul(a, b, out=out)),
        ("TorchAdapter.product, allocating", lambda: adapter.product(a, b, None)),
        ("tilegemm.matmul, allocating", lambda: tilegemm.matmul(a, b)),
    ]
    print("\nparts of a call, each alone:")
    for name, fn in parts:
        per_call_us(fn, 100, 2)
        print(f"  {name:34s} {per_call_us(fn, args.calls, args.rounds):7.2f} us")

    # Calls in a row, round by round, with Python's cyclic garbage collector on and off: where
    # the sustained figure departs from the host's, whether rounds or collections make it.
    import gc
    for name, fn in [("tilegemm.matmul(a, b)", lambda: tilegemm.matmul(a, b)),
                     ("torch.matmul(a, b)", lambda: torch.matmul(a, b))]:
        for collector in ("on", "off"):
            if collector == "off":
                gc.disable()
            rounds = [per_call_us(fn, args.calls, 1) for _ in range(args.rounds)]
            gc.enable()
            print(f"  {name} {args.calls} in a row, gc {collector}: "
                  + " ".join(f"{r:.1f}" for r in rounds) + " us")

    # The CUDA runtime calls inside each call (CUPTI through torch's profiler: the times include
    # the tracing's own cost, so they are for comparing, not absolute).
    from torch.profiler import ProfilerActivity, profile
    for name, fn in [("tilegemm.matmul(a, b, out=out)", lambda: tilegemm.matmul(a, b, out=out)),
                     ("torch.matmul(a, b, out=out)", lambda: torch.matmul(a, b, out=out))]:
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            for _ in range(200):
                fn()
            torch.cuda.synchronize()
        print(f"\nprofile of 200 calls of {name}:")
        print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=14))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", type=int, default=64)
    parser.add_argument("--large", type=int, default=4096)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--breakdown", action="store_true")
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
    print(f"\nper-call wall time, {s}x{s}x{s} bf16: {args.calls} calls in a row (sustained: the "
          f"device's pace bounds it where it is the slower) and bursts of {BURST} after a "
          f"synchronisation (the host's cost alone); the cases take turns, round by round, so "
          f"that a change in the machine's pace falls on all of them; medians of "
          f"{args.rounds} rounds:")
    for _, fn in cases:
        per_call_us(fn, 100, 2)  # warm-up
    rounds = {name: ([], []) for name, _ in cases}
    for _ in range(args.rounds):
        for name, fn in cases:
            rounds[name][0].append(per_call_us(fn, args.calls, 1))
            rounds[name][1].append(per_call_us(fn, BURST, 5))
    for name, (sustained, host) in rounds.items():
        print(f"  {name:34s} {statistics.median(sustained):7.2f} us sustained "
              f"{statistics.median(host):7.2f} us host")
    for ours, theirs in [("tilegemm.matmul(a, b)", "torch.matmul(a, b)"),
                         ("tilegemm.matmul(a, b, out=out)", "torch.matmul(a, b, out=out)")]:
        for i, what in enumerate(["sustained", "host"]):
            diffs = [x - y for x, y in zip(rounds[ours][i], rounds[theirs][i])]
            print(f"  {ours} - torch, {what}: {statistics.median(diffs):+.2f} us "
                  f"(rounds {min(diffs):+.2f} to {max(diffs):+.2f})")

    if args.breakdown:
        breakdown(a, b, out, args)

    n = args.large
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
    flush = torch.empty(2 * 60 * 1024 * 1024, device="cuda", dtype=torch.uint8)
    flops = 2.0 * n * n * n
    large = [("tilegemm.matmul(a, b, out=out)", lambda: tilegemm.matmul(a, b, out=out)),
             ("torch.matmul(a, b, out=out)", lambda: torch.matmul(a, b, out=out))]
    print(f"\n{n}^3 bf16, CUDA events; the cases take turns over {LARGE_ROUNDS} rounds of "
          f"{args.reps}, median of all:")
    for warm_calls in (0, 10):
        print(f"  warm ({warm_calls} calls back to back, no flush):" if warm_calls else "  cold:")
        times = {name: [] for name, _ in large}
        for _ in range(LARGE_ROUNDS):
            for name, fn in large:
                times[name] += event_times_ms(fn, args.reps, flush, warm_calls)
        for name, t in times.items():
            ms = statistics.median(t)
            per_round = [statistics.median(t[i:i + args.reps]) for i in range(0, len(t), args.reps)]
            print(f"  {name:34s} {ms:8.4f} ms {flops / ms / 1e9:7.1f} TFLOP/s (rounds' medians "
                  f"{min(per_round):.4f} to {max(per_round):.4f} ms)")
    print("  (" + str(tilegemm.plan(a, b)["kernel"]) + " " + tilegemm.plan(a, b)["config"] + ")")


if __name__ == "__main__":
    main()
