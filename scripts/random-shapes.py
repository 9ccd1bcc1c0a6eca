#!/usr/bin/env python3
"""Random GEMM shapes across the whole space, for `tilegemm bench --shapes FILE`.

The suites name a few shapes; a library that is "never slower than cuBLAS" has to hold on the
shapes nobody named. This draws M, N and K log-uniformly (decode rows to large squares), half of
them rounded to multiples of 64 and half left as drawn (odd sizes, rows off 16-byte lines), and
drops shapes over a FLOP budget so that one bench run stays short. The seed makes a file
reproducible:

    python3 scripts/random-shapes.py --seed 1 --count 48 > shapes.txt
    tilegemm bench --shapes shapes.txt --dtype bf16 --reps 10 --csv random.csv
"""
import argparse
import math
import random


def draw(rng: random.Random, low: int, high: int) -> int:
    return int(round(math.exp(rng.uniform(math.log(low), math.log(high)))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=48)
    parser.add_argument("--max-tflop", type=float, default=1.0,
                        help="largest 2*M*N*K, in TFLOP (default 1.0)")
    parser.add_argument("--min-m", type=int, default=1)
    parser.add_argument("--max-dim", type=int, default=16384)
    args = parser.parse_args()
    if args.count < 1 or args.min_m < 1 or args.max_dim < max(64, args.min_m):
        parser.error("--count and --min-m must be >= 1 and --max-dim >= max(64, --min-m)")
    rng = random.Random(args.seed)
    print(f"# scripts/random-shapes.py --seed {args.seed} --count {args.count} "
          f"--max-tflop {args.max_tflop:g} --min-m {args.min_m} --max-dim {args.max_dim}")
    print("# M N K")
    shapes = []
    while len(shapes) < args.count:
        m = draw(rng, args.min_m, args.max_dim)
        n = draw(rng, 64, args.max_dim)
        k = draw(rng, 64, args.max_dim)
        if rng.random() < 0.5:  # aligned: multiples of 64 (M of decode size stays as drawn)
            m = m if m < 64 else 64 * round(m / 64)
            n, k = 64 * round(n / 64), 64 * round(k / 64)
        if 2.0 * m * n * k > args.max_tflop * 1e12 or (m, n, k) in shapes:
            continue
        shapes.append((m, n, k))
    for m, n, k in shapes:
        print(m, n, k)


if __name__ == "__main__":
    main()
