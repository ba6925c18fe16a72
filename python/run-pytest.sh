#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the Python package (pip install . through scikit-build-core, warnings as errors) into
# the virtual environment build/python-venv, installing what it lacks from PyPI, then runs the
# pytest suite (python/tests). Called by scripts/run-tests.sh; docs/python.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv="${POPALLOC_PYTHON_VENV:-build/python-venv}"
# Debian's interpreter (python3-venv, python3-dev) rather than whatever python3 PATH finds first.
python="$(command -v /usr/bin/python3 || command -v python3)"
if [[ ! -x "$venv/bin/python" ]]; then
  "$python" -m venv "$venv"
fi
py="$venv/bin/python"
"$py" -m pip install -q --disable-pip-version-check nanobind scikit-build-core numpy scipy pytest networkx
# Without build isolation and with a kept build directory, a rebuild only recompiles what changed.
CMAKE_BUILD_PARALLEL_LEVEL="${POPALLOC_JOBS:-2}" "$py" -m pip install -q --disable-pip-version-check \
  --no-build-isolation --no-deps --config-settings=build-dir=build/python-{wheel_tag} \
  --config-settings=cmake.define.POPALLOC_WARNINGS_AS_ERRORS=ON .
# pytest prints the "N passed in S s" summary line itself.
"$py" -m pytest -q -p no:cacheprovider python/tests
