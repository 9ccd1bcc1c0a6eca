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
#   BASE_SOURCE=DIR HEAD_BUILD=build-gpu scripts/compare-builds.sh BASE_REV
#
# ARCH (default 90a) sets the CUDA architectures, BUILD (default build-compare) the folder.
# BASE_SOURCE names a folder that already holds the base's tree (else `git archive BASE_REV`
# writes one), HEAD_BUILD a build of this tree's library to reuse (else one is made), and
# COMPRESS=1 compresses the fatbins (their size, not their code: for carrying the binary). The
# base library is compiled with -Dtilegemm=tilegemm_base, so that its symbols and this tree's do
# not collide.
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
base_src=${BASE_SOURCE:-}
if [ -z "$base_src" ]; then
  base_src=$build/base-src
  rm -rf "$base_src"
  mkdir -p "$base_src"
  git -C "$root" archive "$base_rev" | tar -x -C "$base_src"
fi
base_src=$(cd "$base_src" && pwd)
compress=""
[ -n "${COMPRESS:-}" ] && compress="-Xfatbin=-compress-all"
common=(-G Ninja -DCMAKE_BUILD_TYPE=Release "-DCMAKE_CUDA_ARCHITECTURES=$arch"
        -DTILEGEMM_BUILD_TESTS=OFF -DTILEGEMM_BUILD_CLI=OFF)
cmake -S "$base_src" -B "$build/base" "${common[@]}" "-DCMAKE_CXX_FLAGS=-Dtilegemm=tilegemm_base" \
  "-DCMAKE_CUDA_FLAGS=-Dtilegemm=tilegemm_base $compress" > /dev/null
cmake --build "$build/base" --target tilegemm
head_build=${HEAD_BUILD:-}
if [ -z "$head_build" ]; then
  head_build=$build/head
  cmake -S "$root" -B "$head_build" "${common[@]}" "-DCMAKE_CUDA_FLAGS=$compress" > /dev/null
  cmake --build "$head_build" --target tilegemm
fi
head_build=$(cd "$head_build" && pwd)
cmake -S "$root/bench/compare" -B "$build/compare" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CUDA_ARCHITECTURES=$arch" "-DBASE_SOURCE=$base_src" "-DBASE_BUILD=$build/base" \
  "-DHEAD_SOURCE=$root" "-DHEAD_BUILD=$head_build" > /dev/null
cmake --build "$build/compare"
[ -n "${BUILD_ONLY:-}" ] && exit 0
"$build/compare/compare_builds" "$@"
