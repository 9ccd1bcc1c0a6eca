#!/usr/bin/env python3
"""Markdown table of `tilegemm bench` CSVs, optionally beside anchor figures.

usage: report.py BENCH.csv [BENCH2.csv ...] [--anchors ANCHORS.json ...]

Anchor files are JSON objects with a "rows" list of {dtype, M, N, K, cublas_tflops,
triton_tflops} (the format of the project's shared anchor measurements). For each benchmarked
shape the table shows the timing (cold or warm), tilegemm and cuBLAS as measured in the same run,
their ratio, the anchor cuBLAS figure and how far this run's cuBLAS is from it, and the anchor
Triton-tutorial figure.
"""
import csv
import json
import sys


def main(argv):
    anchors = {}
    args = argv[1:]
    files, anchor_files = [], []
    target = files
    for a in args:
        if a == "--anchors":
            target = anchor_files
            continue
        target.append(a)
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    for path in anchor_files:
        for r in json.load(open(path))["rows"]:
            anchors[(r["dtype"], int(r["M"]), int(r["N"]), int(r["K"]))] = r
    print("| suite | M | N | K | dtype | timing | tilegemm | cuBLAS | ratio | cuBLAS anchor"
          " | run vs anchor | Triton anchor | tilegemm / Triton |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path in files:
        for r in csv.DictReader(open(path)):
            key = (r["dtype"], int(r["m"]), int(r["n"]), int(r["k"]))
            ours, theirs = float(r["tilegemm_tflops"]), float(r["cublas_tflops"])
            a = anchors.get(key, {})
            cub = a.get("cublas_tflops")
            tri = a.get("triton_tflops")
            cub_s = f"{cub:.1f}" if isinstance(cub, (int, float)) else "-"
            delta = f"{100 * (theirs / cub - 1):+.0f} %" if isinstance(cub, (int, float)) else "-"
            tri_s = f"{tri:.1f}" if isinstance(tri, (int, float)) else "-"
            vs_tri = f"{ours / tri:.2f}x" if isinstance(tri, (int, float)) and tri else "-"
            print(f"| {r['suite']} | {r['m']} | {r['n']} | {r['k']} | {r['dtype']} |"
                  f" {r.get('timing', 'cold')} | {ours:.1f} |"
                  f" {theirs:.1f} | {ours / theirs:.2f}x | {cub_s} | {delta} | {tri_s} | {vs_tri} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
