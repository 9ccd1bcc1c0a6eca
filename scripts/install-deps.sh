#!/usr/bin/env bash
# Installs the Debian packages tilegemm builds with, when they are missing (needs root or sudo),
# and what the Python package's build and tests need (python/requirements-test.txt, pinned) for
# the python3 on PATH.
# The CUDA toolkit (nvcc, cuBLAS) does not come from Debian here: without it, the build has the
# CPU backend alone (CMakeLists.txt: TILEGEMM_CUDA).
set -euo pipefail
# clang: the libFuzzer test (scripts/fuzz-problem.sh); its runtime libraries are installed below.
packages=(cmake ninja-build g++ python3 python3-dev libgtest-dev libcli11-dev nlohmann-json3-dev clang)
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
# The Python package (python/): nanobind, NumPy and pytest for the python3 that CMake finds. A
# Debian python3 has no pip and refuses to install into itself (PEP 668) unless told to.
if ! python3 -m pip --version > /dev/null 2>&1; then
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq python3-pip python3-dev
fi
pip_flags=(-q --disable-pip-version-check)
if python3 -c 'import sys, sysconfig, os; sys.exit(0 if os.path.exists(os.path.join(sysconfig.get_paths()["stdlib"], "EXTERNALLY-MANAGED")) and sys.prefix == sys.base_prefix else 1)'; then
  pip_flags+=(--break-system-packages)
fi
[ "$(id -u)" -ne 0 ] && [ -z "${VIRTUAL_ENV:-}" ] && pip_flags+=(--user)
python3 -m pip install "${pip_flags[@]}" -r "$(dirname "$0")/../python/requirements-test.txt"

command -v nvcc > /dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
  echo "install-deps: nvcc not found: the build will have the CPU backend alone (install the" \
    "CUDA toolkit, 12.4 or newer, for the GPU backend)" >&2
