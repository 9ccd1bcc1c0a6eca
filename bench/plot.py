#!/usr/bin/env python3
"""TFLOP/s against problem size, tilegemm beside cuBLAS: the figure of seed 003.

usage: plot.py BENCH.csv OUT.png|OUT.svg [--suite square]

Reads the CSV that `tilegemm bench --csv` writes (one or several dtypes) and draws one line per
implementation and dtype over the shapes of one suite, x = M (the square suite's size).
"""
import csv
import sys


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    src, out = argv[1], argv[2]
    suite = argv[argv.index("--suite") + 1] if "--suite" in argv else "square"
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot.py needs matplotlib: apt-get install python3-matplotlib "
              "(or pip install matplotlib)", file=sys.stderr)
        return 1
    # Cold figures (L2 flushed) only, where the CSV holds warm ones too.
    rows = [r for r in csv.DictReader(open(src))
            if r["suite"] == suite and r.get("timing", "cold") == "cold"]
    if not rows:
        print(f"plot.py: no rows of suite '{suite}' in {src}", file=sys.stderr)
        return 1
    dtypes = sorted({r["dtype"] for r in rows})
    # One panel per dtype: fp32 on CUDA cores and bf16 on tensor cores differ 15x in scale.
    fig, axes = plt.subplots(1, len(dtypes), figsize=(5.5 * len(dtypes), 4.2), squeeze=False)
    for ax, dtype in zip(axes[0], dtypes):
        sel = sorted((r for r in rows if r["dtype"] == dtype), key=lambda r: int(r["m"]))
        sizes = [int(r["m"]) for r in sel]
        ax.plot(sizes, [float(r["cublas_tflops"]) for r in sel], "o--", label="cuBLAS")
        ax.plot(sizes, [float(r["tilegemm_tflops"]) for r in sel], "s-",
                label=f"tilegemm ({sel[-1]['kernel']})")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("M = N = K" if suite == "square" else "M")
        ax.set_ylabel("TFLOP/s")
        ax.set_title(f"{dtype}, suite '{suite}'")
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
