#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Device check of the Thrust CUDA backend: builds popalloc_gpu_check with nvcc for the
# local GPU (sm_90 unless CUDA_ARCH says otherwise), checks results against the CPU backend on
# fresh random instances and prints a timing table for n in {1e5 .. MAX_N} x m = 8.
#   bash benchmarks/gpu/run.sh [MAX_N]        (default 1e8; about 10 minutes on an H200)
# Needs nvcc, cmake, a C++17 host compiler and Eigen 3.4 headers (libeigen3-dev).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
MAX_N="${1:-100000000}"
NVCC="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
[[ -x "$NVCC" ]] || { echo "run.sh: nvcc not found" >&2; exit 2; }
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true
build="build/gpu-check"
cmake -S . -B "$build" -G "$(command -v ninja >/dev/null && echo Ninja || echo 'Unix Makefiles')" \
  -DCMAKE_BUILD_TYPE=Release -DPOPALLOC_ENABLE_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC" \
  -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}" -DPOPALLOC_BUILD_EXAMPLES=OFF \
  -DPOPALLOC_WARNINGS_AS_ERRORS=OFF -DPOPALLOC_BUILD_TESTS=OFF
SECONDS=0
cmake --build "$build" --target popalloc_gpu_check -j "$(nproc)"
echo "build: ${SECONDS}s"
"$build/benchmarks/gpu/popalloc_gpu_check" "$MAX_N"
