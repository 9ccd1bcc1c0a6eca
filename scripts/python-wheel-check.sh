#!/usr/bin/env bash
# `pip install .` from a clean clone of this commit (FROM_TREE=1: a fresh copy of the tree), then the Python tests against the installed
# package (not the build tree): proves the wheel's build and install steps. Build requirements
# come from the environment (--no-build-isolation: a machine without network access); any CMake
# setting passes through, e.g.
#   scripts/python-wheel-check.sh -C cmake.define.CMAKE_CUDA_ARCHITECTURES=90a
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
site=${SITE:-$work/site}  # where the package is installed (SITE=DIR keeps it)
if [ -n "${FROM_TREE:-}" ]; then
  # The working tree as it is (tracked and untracked files, no build folders) in a fresh folder:
  # for a machine whose copy of the tree has no current git history.
  mkdir "$work/src"
  tar --exclude='./build*' --exclude=./out --exclude=./.git --exclude='./.whl' -cf - . |
    tar -xf - -C "$work/src"
  echo "fresh copy of the working tree"
else
  git clone -q . "$work/src"
  git -C "$work/src" log -1 --format='clean clone at %h %s'
fi
t0=$(date +%s)
python3 -m pip install -q --no-build-isolation --no-deps --target "$site" "$@" "$work/src"
echo "pip install: $(( $(date +%s) - t0 )) s; installed: $(ls "$site/tilegemm")"
cd "$work/src/python/tests"
PYTHONPATH="$site" python3 -c 'import tilegemm, os; print("imported", tilegemm.__version__, "from", os.path.dirname(tilegemm.__file__))'
PYTHONPATH="$site" python3 -m pytest -q -p no:cacheprovider .
