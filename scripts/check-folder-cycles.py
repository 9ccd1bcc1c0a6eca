#!/usr/bin/env python3
"""Fails when the folders of src/ include each other in a circle.

Every `#include "folder/..."` in a file under src/<a>/ is an edge a -> folder (when folder is
another folder of src/). The folders must form a graph without cycles, so that each one can be
read, built and tested on top of the ones it includes (docs/design.md lists the layers).
Prints the edges with one file that makes each, and any cycle found; exit status 1 on a cycle.

    scripts/check-folder-cycles.py [SRC_DIR]
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"/]+)/[^"]+"', re.MULTILINE)
SOURCES = {".h", ".hpp", ".cuh", ".cpp", ".cu", ".in"}


def folder_edges(src):
    edges = {}  # (from, to) -> a file that includes
    folders = {p.name for p in src.iterdir() if p.is_dir()}
    for path in sorted(src.rglob("*")):
        if path.suffix not in SOURCES or not path.is_file():
            continue
        relative = path.relative_to(src)
        if len(relative.parts) < 2:
            continue  # a file at src/ itself belongs to no folder
        here = relative.parts[0]
        for target in INCLUDE.findall(path.read_text(errors="replace")):
            if target in folders and target != here:
                edges.setdefault((here, target), str(relative))
    return folders, edges


def find_cycle(folders, edges):
    graph = {f: sorted(t for (s, t) in edges if s == f) for f in folders}
    state = {}  # folder -> "open" while on the path, "done" after
    path = []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt)
                if cycle:
                    return cycle
        path.pop()
        state[node] = "done"
        return None

    for folder in sorted(folders):
        if folder not in state:
            cycle = visit(folder)
            if cycle:
                return cycle
    return None


def main():
    src = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "src")
    folders, edges = folder_edges(src)
    for (a, b), where in sorted(edges.items()):
        print(f"{a} -> {b}   ({where})")
    cycle = find_cycle(folders, edges)
    if cycle:
        print("folder cycle: " + " -> ".join(cycle), file=sys.stderr)
        for a, b in zip(cycle, cycle[1:]):
            print(f"  {a} -> {b}: {edges[(a, b)]}", file=sys.stderr)
        return 1
    print(f"no folder cycle among {len(folders)} folders")
    return 0


if __name__ == "__main__":
    sys.exit(main())
