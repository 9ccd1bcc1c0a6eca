#!/usr/bin/env bash
# Two builds of the library in one process (bench/compare/compare_builds.cu): the base, an earlier
# commit, and this tree. For every shape of the bench suites in bf16, fp16 and tf32, and for
# extra layouts, epilogues and output types, both run on the same inputs: D compared bit for bit,
# and each call timed alternately with the other's. Prints a line per case and the median and
# lowest head/base ratio per type.
#
#   scripts/compare-builds.sh BASE_REV [--reps N] [--quick] [--csv FILE]
#   BUILD_ONLY=1 scripts/compare-builds.sh BASE_REV   # build, then stop (the binary is
#                                                     # $BUILD/compare/compare_builds)
#
# ARCH (default 90a) sets the CUDA architectures, BUILD (default build-compare) the folder. The
# base library is compiled with -Dtilegemm=tilegemm_base, so that its symbols and this tree's
# do not collide. Fatbins are compressed, which changes their size, not their code.
set -euo pipefail
if [ $# -lt 1 ]; then
  echo "usage: scripts/compare-builds.sh BASE_REV [compare_builds options]" >&2
  exit 2
fi
base_rev=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$root/build-compare}
arch=${ARCH:-90a}
mkdir -p "$build"
rm -rf "$build/base-src"
mkdir -p "$build/base-src"
git -C "$root" archive "$base_rev" | tar -x -C "$build/base-src"
common=(-G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=$arch"
        -DTILEGEMM_BUILD_TESTS=OFF -DTILEGEMM_BUILD_CLI=OFF)
cmake -S "$build/base-src" -B "$build/base" "${common[@]}" "-DCMAKE_CXX_FLAGS=-Dtilegemm=tilegemm_base" \
  "-DCMAKE_CUDA_FLAGS=-Dtilegemm=tilegemm_base -Xfatbin=-compress-all" > /dev/null
cmake --build "$build/base" --target tilegemm
cmake -S "$root" -B "$build/head" "${common[@]}" "-DCMAKE_CUDA_FLAGS=-Xfatbin=-compress-all" > /dev/null
cmake --build "$build/head" --target tilegemm
cmake -S "$root/bench/compare" -B "$build/compare" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CUDA_ARCHITECTURES=$arch" "-DBASE_SOURCE=$build/base-src" "-DBASE_BUILD=$build/base" \
  "-DHEAD_SOURCE=$root" "-DHEAD_BUILD=$build/head" > /dev/null
cmake --build "$build/compare"
[ -n "${BUILD_ONLY:-}" ] && exit 0
"$build/compare/compare_builds" "$@"
