#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Agreement test of popalloc against Gurobi (PyPI gurobipy and its restricted licence, which
# needs no licence file and works offline for models up to 2,000 variables and 2,000 linear
# constraints) and MOSEK (PyPI mosek; skipped with its reason without a licence):
#
#   benchmarks/python/run-commercial-test.sh
#
# Creates or reuses a small venv (build/commercial-venv; POPALLOC_COMMERCIAL_VENV overrides;
# python3-venv is installed through scripts/install-deps.sh when missing),
# pip-installs requirements-commercial.txt into it when a package is missing (PyPI must be
# reachable then: this fails loudly rather than skipping), brings popalloc-solve of the test
# build up to date (build/test, `cmake --preset test`; POPALLOC_SOLVE names another executable
# and skips the build) and runs check_commercial.py, which must run Gurobi on every case inside
# the restricted licence. Last line: `commercial agreement: N passed, M skipped (...)`; exit
# status non-zero when a check failed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
venv="${POPALLOC_COMMERCIAL_VENV:-${root}/build/commercial-venv}"
jobs="${POPALLOC_JOBS:-2}"

if [[ ! -x "${venv}/bin/python" ]]; then
  if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
    # Debian 12 keeps them in python3-venv (and forbids pip installs outside a venv).
    bash "${root}/scripts/install-deps.sh" main python3-venv
  fi
  python3 -m venv "${venv}"
fi
if ! "${venv}/bin/python" -c 'import gurobipy, mosek, numpy' 2>/dev/null; then
  if ! "${venv}/bin/python" -m pip install --quiet --disable-pip-version-check \
      -r "${here}/requirements-commercial.txt"; then
    echo "run-commercial-test.sh: pip could not install ${here}/requirements-commercial.txt into ${venv} (is PyPI reachable?)" >&2
    exit 1
  fi
fi

if [[ -n "${POPALLOC_SOLVE:-}" ]]; then
  solve="${POPALLOC_SOLVE}"
else
  cd "${root}"
  if [[ ! -f build/test/build.ninja ]]; then
    cmake --preset test
  fi
  cmake --build build/test --target popalloc-solve -j "${jobs}"
  solve="${root}/build/test/examples/popalloc-solve"
fi

exec "${venv}/bin/python" "${here}/check_commercial.py" --solve "${solve}" \
  --work "${root}/build/commercial-check" --require GUROBI --stubs "${root}/benchmarks/compare/stub"
