#!/usr/bin/env python3
"""The config rules against configs timed on a GPU: for every shape timed with two or more
configs, whether the rules (`tilegemm explain M N K --dtype T --rules`, no GPU needed) take the
fastest of them, and how far their choice is from it.

A change to the rules (src/tune/heuristic.cpp) should keep or raise the count; a shape whose
choice moves to a config never timed there is listed, to be timed before the change lands.

  scripts/rules-against-timings.py [--tilegemm build/tilegemm] [--wave 132] [--at-least N] [CSV ...]

With --at-least N it exits with status 1 when the rules take the fastest timed config on fewer
than N shapes (the host test RulesAgainstTimings holds them to today's count).

CSV: `tilegemm bench --csv` files, one row per shape and config (their `config` column says which;
lines starting with # are skipped; only NN rows timed cold count, the problem explain weighs); the
default is the rules' runs in docs/history/results. Each
shape's time per config is the least over the files (the times of one run are compared with one
another only through which config is fastest, so runs on different days mix safely where each
shape's configs were timed in one run, as in these files). The dtype is the files' own."""

import argparse
import csv
import math
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "history" / "results"
DEFAULT_FILES = ["h200-rules-compute-bound-pairs.csv", "h200-rules-ftlk-configs.csv",
                 "h200-rules-changed-shapes.csv", "h200-split-k-configs.csv",
                 "h200-tail-wait2-configs.csv", "h200-128x192-configs.csv",
                 "h200-tf32-register-a-ftlk.csv"]


def tile_config(config):
    """A config without its GROUP_SIZE_M: the rules choose the tile, and the L2 model then the
    launch order (`heuristic()`), which `explain --rules`' choice line leaves at the rules' 8."""
    return re.sub(r"/g[0-9]+", "", config)


def timings(paths):
    """{(m, n, k, dtype): {config: least ms}} for shapes timed with two or more configs."""
    shapes = {}
    for path in paths:
        with open(path) as f:
            rows = csv.DictReader(line for line in f if not line.startswith("#"))
            for row in rows:
                if row.get("suite") in (None, "", "suite") or not row.get("tilegemm_ms"):
                    continue
                # explain --rules weighs a packed row-major problem, timed cold.
                if row.get("layouts", "NN") != "NN" or row.get("timing", "cold") != "cold":
                    continue
                key = (int(row["m"]), int(row["n"]), int(row["k"]), row["dtype"])
                ms = float(row["tilegemm_ms"])
                configs = shapes.setdefault(key, {})
                config = tile_config(row["config"])
                configs[config] = min(ms, configs.get(config, ms))
    return {key: configs for key, configs in shapes.items() if len(configs) >= 2}


def rules_choice(tilegemm, m, n, k, dtype, wave):
    out = subprocess.run([tilegemm, "explain", str(m), str(n), str(k), "--dtype", dtype,
                          "--rules", "--wave", str(wave)],
                         capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("  choice: "):
            return tile_config(line.split()[1])
    raise RuntimeError(f"no choice in `explain {m} {n} {k} --rules`:\n{out}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tilegemm", default=str(ROOT / "build" / "tilegemm"))
    parser.add_argument("--wave", type=int, default=132, help="SMs (the files' GPU: H200, 132)")
    parser.add_argument("--at-least", type=int, default=0,
                        help="fail when the rules take the fastest on fewer shapes")
    parser.add_argument("csv", nargs="*", help="bench CSV files (default: the rules' runs)")
    args = parser.parse_args()
    paths = args.csv or [RESULTS / name for name in DEFAULT_FILES]
    shapes = timings(paths)
    if not shapes:
        sys.exit("no shape was timed with two or more configs in " + ", ".join(map(str, paths)))

    fastest, ratios, untimed = 0, [], []
    for (m, n, k, dtype), configs in sorted(shapes.items()):
        choice = rules_choice(args.tilegemm, m, n, k, dtype, args.wave)
        best = min(configs, key=configs.get)
        if choice not in configs:
            untimed.append(f"{m} {n} {k} {dtype}: {choice} (fastest timed: {best})")
            continue
        ratios.append(configs[best] / configs[choice])
        if choice == best:
            fastest += 1
        else:
            print(f"{m:6d} {n:6d} {k:6d} {dtype}: takes {choice}, {ratios[-1]:.3f}x the speed "
                  f"of {best}")
    for line in untimed:
        print("not timed: " + line)
    mean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else float("nan")
    print(f"{len(shapes)} shapes timed with two or more configs: the rules take the fastest on "
          f"{fastest} of the {len(ratios)} where their choice was timed (geometric mean of its "
          f"speed over the fastest's {mean:.4f}); {len(untimed)} choices not timed")
    if fastest < args.at_least:
        sys.exit(f"fewer than {args.at_least}: a change to the rules lost timed choices (above); "
                 f"time the configs it takes instead, or keep the rules")


if __name__ == "__main__":
    main()
