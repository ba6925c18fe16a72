#!/usr/bin/env bash
# Creates the Python environment of the conic/LP comparison driver (compare_conic.py):
# CVXPY with Clarabel, SCS and ECOS, HiGHS's own package highspy, and Gurobi's and MOSEK's
# Python packages (gurobipy, mosek), from PyPI.
#
#   benchmarks/python/setup.sh [VENV_DIR]      (default: build/bench-venv)
#
# Needs python3 with the venv module (Debian: python3-venv) and access to PyPI. Idempotent: an
# existing environment is reused and only brought up to date with requirements.txt.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${here}/../.." && pwd)"
venv="${1:-${root}/build/bench-venv}"
if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
  echo "setup.sh: python3's venv/ensurepip modules are missing (Debian: apt-get install python3-venv)" >&2
  exit 2
fi
if [[ ! -x "${venv}/bin/python" ]]; then
  python3 -m venv "${venv}"
fi
"${venv}/bin/python" -m pip install --quiet --upgrade pip
"${venv}/bin/python" -m pip install --quiet -r "${here}/requirements.txt"
"${venv}/bin/python" - <<'PY'
import cvxpy, highspy, numpy
print("cvxpy", cvxpy.__version__, "solvers:", ", ".join(sorted(cvxpy.installed_solvers())))
print("numpy", numpy.__version__)
from importlib.metadata import version
for name in ("clarabel", "scs", "ecos", "highspy", "gurobipy", "mosek"):
    print(name, version(name))
PY
echo "environment ready: ${venv}/bin/python"
