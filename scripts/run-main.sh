#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Build popalloc's command-line example in Release and run it:
#   bash scripts/run-main.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh main
cmake --preset release
cmake --build --preset release --target popalloc-solve -j "${POPALLOC_JOBS:-2}"
./build/release/examples/popalloc-solve
