#!/usr/bin/env bash
# Installs the Debian packages tilegemm builds with, when they are missing (needs root or sudo).
# The CUDA toolkit (nvcc, cuBLAS) does not come from Debian here: without it, the build has the
# CPU backend alone (CMakeLists.txt: TILEGEMM_CUDA).
set -euo pipefail
# clang: the libFuzzer test (scripts/fuzz-problem.sh); its runtime libraries are installed below.
packages=(cmake ninja-build g++ python3 libgtest-dev libcli11-dev nlohmann-json3-dev clang)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" > /dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi
# libFuzzer and the sanitizers' runtimes, for the clang installed (Debian splits them out).
clang_major=$(clang++ -dumpversion | cut -d. -f1)
if ! dpkg -s "libclang-rt-$clang_major-dev" > /dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "libclang-rt-$clang_major-dev"
fi
command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
  echo "install-deps: nvcc not found: the build will have the CPU backend alone (install the" \
    "CUDA toolkit, 12.4 or newer, for the GPU backend)" >&2
