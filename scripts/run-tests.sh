#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Main test command: RelWithDebInfo build with -Werror and the CLP LP reference required
# (preset `test`), then the whole CTest suite (doctest cases, header checks, odr_check, examples):
#   bash scripts/run-tests.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs="${POPALLOC_JOBS:-2}"
bash scripts/install-deps.sh test
cmake --preset test
cmake --build --preset test -j "$jobs"
# ctest prints the "100% tests passed, 0 tests failed out of N" summary line itself.
ctest --preset test -j "$jobs"
bash python/run-pytest.sh  # the Python package: pip install . into build/python-venv, pytest
bash benchmarks/python/run-commercial-test.sh  # Gurobi and MOSEK: "commercial agreement: ..."
