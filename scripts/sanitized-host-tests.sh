#!/usr/bin/env bash
# The host tests once more, built with AddressSanitizer and UndefinedBehaviorSanitizer: the
# library, the command and the tests without CUDA (TILEGEMM_CUDA=OFF, g++ alone), so that every
# host path they take -- validation, the CPU backend and its threads, the reference, the CLI
# under the 10,000 random command lines -- runs checked. Any report fails the test it came from.
#
#   scripts/sanitized-host-tests.sh [BUILD_DIR]      # default build-sanitized
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-sanitized}
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
# The Python module is left out: an instrumented module cannot load into an uninstrumented Python.
cmake -S . -B "$build" -G Ninja -DTILEGEMM_CUDA=OFF -DTILEGEMM_BUILD_PYTHON=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
cmake --build "$build"
# The libFuzzer test builds its own sanitized binary with clang: not twice.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1
ctest --test-dir "$build" -L host -E ProblemFuzz --output-on-failure
