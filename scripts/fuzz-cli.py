#!/usr/bin/env python3
"""Random command lines against the tilegemm CLI: none may crash, abort or hang.

Draws COUNT invocations of run, explain, bench, tune and info from a seeded generator: sizes,
leading dimensions, batches, configs and scalars from small values, edge values (0, -1, 2^31,
2^63 - 1, 10^11, ...) and garbage; types, layouts, activations and scale modes from the valid
names and a few invalid ones. Each runs with a time limit. A failure is a signal (SIGABRT,
SIGSEGV, SIGFPE, ...), an exit status other than 0, 1 (a --check that failed) or 2 (an error
the CLI reported), a message of an uncaught exception or a sanitizer, or the time limit.
Problems whose work would take the CPU backend more than a moment are drawn small, so that a
time-out is a hang and not a long GEMM.

    scripts/fuzz-cli.py build/tilegemm --count 10000 --seed 1 --jobs 2

Exit status 0 when every invocation behaved; else the failures are printed, one per line, with
the command line to reproduce each.
"""

import argparse
import concurrent.futures
import random
import shlex
import subprocess
import sys

EDGE_INTS = ["0", "1", "-1", "-2", "7", "64", "65", "4096", "2147483647", "2147483648",
             "4294967296", "100000000000", "9223372036854775807", "-9223372036854775808",
             "99999999999999999999", "1e3", "abc", ""]
EDGE_FLOATS = ["0", "1", "-1", "0.5", "1e30", "-1e-30", "nan", "inf", "-inf", "abc", "1e400"]
DTYPES = ["fp32", "fp16", "bf16", "tf32", "fp8", "fp8_e4m3", "fp8_e5m2", "fp64", "int8", ""]
LAYOUTS = ["row", "col", "row_major", "col_major", "diag", ""]
ACTIVATIONS = ["none", "relu", "gelu", "silu", "leaky_relu", "leaky_relu:0.2", "leaky_relu:x",
               "tanh", "relu:1"]
SCALE_MODES = ["none", "tensor", "channel", "block", "rows"]
KERNELS = ["auto", "cpu", "naive", "warptile", "sm80", "sm90", "bogus"]
CONFIGS = ["64x64x64/g8/s1/w4", "128x128x16/g8/s2/w8", "2147483647x2147483647x2147483647",
           "65536x65536x1", "0x0x0", "-1x8x8", "8x8", "1x1x1", "1024x1024x1024/g0",
           "64x64x64/g-1", "16x16x16/g1/s1/w1/wt8x8/c2x2/pingpong", "garbage"]


def small_or_edge(rng, small_max=48):
    return str(rng.randint(0, small_max)) if rng.random() < 0.75 else rng.choice(EDGE_INTS)


def as_int(text):
    try:
        return int(text)
    except ValueError:
        return None


def draw_run(rng):
    m, n, k = (small_or_edge(rng) for _ in range(3))
    args = ["run", m, n, k]
    opts = {
        "--dtype": lambda: rng.choice(DTYPES),
        "--dtype-b": lambda: rng.choice(DTYPES),
        "--out-dtype": lambda: rng.choice(DTYPES),
        "--layout-a": lambda: rng.choice(LAYOUTS),
        "--layout-b": lambda: rng.choice(LAYOUTS),
        "--layout-c": lambda: rng.choice(LAYOUTS),
        "--lda": lambda: small_or_edge(rng, 80),
        "--ldb": lambda: small_or_edge(rng, 80),
        "--ldc": lambda: small_or_edge(rng, 80),
        "--alpha": lambda: rng.choice(EDGE_FLOATS),
        "--beta": lambda: rng.choice(EDGE_FLOATS),
        "--activation": lambda: rng.choice(ACTIVATIONS),
        "--batch": lambda: small_or_edge(rng, 4),
        "--kernel": lambda: rng.choice(KERNELS),
        "--config": lambda: rng.choice(CONFIGS),
        "--autotune": lambda: rng.choice(["off", "on-miss", "always", "sometimes"]),
        "--scale-mode": lambda: rng.choice(SCALE_MODES),
        "--reps": lambda: rng.choice(["1", "2", "0", "-1", "x"]),
        "--seed": lambda: rng.choice(["1", "2", "-1", "18446744073709551615", "x"]),
    }
    flags = ["--bias", "--in-place", "--check", "--json", "--fast-accum", "--no-aligned-copies"]
    for name in rng.sample(sorted(opts), rng.randint(0, 6)):
        args += [name, opts[name]()]
    args += [f for f in flags if rng.random() < 0.25]
    args += ["--backend", rng.choice(["cpu", "cpu", "cpu", "auto", "gpu", "tpu"])]
    if "--reps" not in args:
        args += ["--reps", "1"]
    # Valid problems are kept to a moment's work and a few megabytes on the CPU backend: a
    # time-out must mean a hang. (Larger ones are refused by the memory check, or take their
    # time legitimately.)
    batch = as_int(args[args.index("--batch") + 1]) if "--batch" in args else 1
    for _ in range(3):
        dims = [as_int(x) for x in args[1:4]]
        if not all(d is not None and d >= 0 for d in dims) or batch is None or batch < 1:
            break
        mm, nn, kk = dims
        if mm * nn * max(kk, 1) * batch <= 2e7 and (mm * kk + kk * nn + mm * nn) * batch <= 2e7:
            break
        args[1 + dims.index(max(dims))] = str(rng.randint(0, 48))
    return args


def draw_explain(rng):
    args = ["explain", small_or_edge(rng, 5000), small_or_edge(rng, 5000), small_or_edge(rng, 64)]
    if rng.random() < 0.6:
        args += ["--block", rng.choice(["128x64x32", "1x1x1", "2x2x2", "0x1x1", "64x64", "16x16x1",
                                        "2147483647x1x1", "x"])]
    for name, values in [("--group", EDGE_INTS), ("--pid", EDGE_INTS), ("--wave", EDGE_INTS),
                         ("--order", ["grouped", "row", "zigzag"]), ("--dtype", DTYPES),
                         ("--scale-mode", SCALE_MODES)]:
        if rng.random() < 0.3:
            args += [name, rng.choice(values)]
    if rng.random() < 0.2:
        args.append("--choice")
    return args


def draw_other(rng):
    kind = rng.choice(["bench", "tune", "info", "garbage"])
    if kind == "bench":
        return ["bench", "--suite", rng.choice(["square", "fp8", "tiny", "all"]), "--dtype",
                rng.choice(DTYPES), "--reps", rng.choice(["1", "0", "-3"]), "--scale-mode",
                rng.choice(SCALE_MODES)]
    if kind == "tune":
        return ["tune", small_or_edge(rng), small_or_edge(rng), small_or_edge(rng), "--dtype",
                rng.choice(DTYPES)]
    if kind == "info":
        return ["info"]
    return [rng.choice(["run", "explain", "frobnicate", "--version", "--help", ""]),
            rng.choice(EDGE_INTS), rng.choice(["--", "-x", "--dtype", "--config="])]


def draw(rng):
    r = rng.random()
    return draw_run(rng) if r < 0.7 else draw_explain(rng) if r < 0.9 else draw_other(rng)


BAD_OUTPUT = ["terminate called", "Aborted", "core dumped", "runtime error:", "AddressSanitizer",
              "LeakSanitizer", "UndefinedBehaviorSanitizer", "Segmentation fault"]


def check(binary, args, timeout):
    """Runs one invocation; returns (exit status, None) when it behaved, else what went wrong."""
    try:
        p = subprocess.run([binary] + args, capture_output=True, text=True, errors="replace",
                           timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"no answer within {timeout} s"
    if p.returncode < 0:
        return None, f"killed by signal {-p.returncode}"
    if p.returncode not in (0, 1, 2):
        return p.returncode, f"exit status {p.returncode}"
    for bad in BAD_OUTPUT:
        if bad in p.stdout or bad in p.stderr:
            return p.returncode, f"output has '{bad}'"
    return p.returncode, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binary", help="the tilegemm executable")
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per invocation")
    o = parser.parse_args()
    rng = random.Random(o.seed)
    cases = [draw(rng) for _ in range(o.count)]
    failures = []
    statuses = {}  # exit status -> invocations that behaved with it
    with concurrent.futures.ThreadPoolExecutor(max_workers=o.jobs) as pool:
        for args, (status, why) in zip(cases, pool.map(lambda a: check(o.binary, a, o.timeout),
                                                       cases)):
            if why is not None:
                failures.append(f"{why}: {o.binary} {shlex.join(args)}")
            else:
                statuses[status] = statuses.get(status, 0) + 1
    for line in failures:
        print(line)
    print("exit status 0 (ran; with --check, passed): %d, 1 (a --check failed): %d, "
          "2 (an error, reported): %d" % (statuses.get(0, 0), statuses.get(1, 0),
                                          statuses.get(2, 0)))
    print(f"{o.count - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
