#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Install the Debian 12 packages popalloc needs, only those that are missing (idempotent).
#
#   bash scripts/install-deps.sh [main|test|ci] [extra-package ...]
#
#   main  compiler, CMake, Ninja, Eigen                       (build and run the examples)
#   test  main + doctest, COIN-OR CLP/CBC, GLPK, OpenMPI, matplotlib, Google Benchmark,
#         clang-format, python3-venv and python3-dev (the Python package), python3-jsonschema
#         (the programs' JSON outputs checked against schemas/)  (default)
#   ci    test + clang with its sanitizer/libFuzzer runtimes (serial and fuzz presets), valgrind
#         and, without a CUDA toolkit, Debian's libthrust-dev
# Extra arguments are further package names. Runs apt-get as root (or through sudo); runs
# `apt-get update` once, and only when something is missing.
set -euo pipefail

mode="test"
case "${1:-}" in
  main | test | ci) mode="$1"; shift ;;
esac

pkgs=(g++ cmake ninja-build pkg-config libeigen3-dev)
if [[ "$mode" == test || "$mode" == ci ]]; then
  pkgs+=(doctest-dev coinor-libclp-dev coinor-clp coinor-libcbc-dev libglpk-dev libopenmpi-dev openmpi-bin
         python3 python3-matplotlib python3-venv python3-dev python3-jsonschema zlib1g-dev libbenchmark-dev
         clang-format)
fi
if [[ "$mode" == ci ]]; then
  pkgs+=(clang libclang-rt-14-dev valgrind)
  cuda_root="${CUDAToolkit_ROOT:-${CUDA_PATH:-/usr/local/cuda}}"
  if [[ ! -d "$cuda_root/lib64/cmake/cccl" ]]; then
    pkgs+=(libthrust-dev)
  fi
fi
pkgs+=("$@")

is_installed() {
  [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

missing=()
for p in "${pkgs[@]}"; do
  is_installed "$p" || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  echo "install-deps ($mode): all ${#pkgs[@]} packages present"
  exit 0
fi

echo "install-deps ($mode): installing ${missing[*]}"
if [[ "$(id -u)" -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "install-deps: missing packages (${missing[*]}) and not root; run as root" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" apt-get update -qq
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
