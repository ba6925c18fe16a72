#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The exact commands behind the figures of docs/benchmarks.md: writes benchmarks/results/*.json
# and docs/img/bench_*.png. Run from the repository root, one step at a time or all in order:
#
#   cmake -S . -B build/bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DPOPALLOC_BUILD_BENCHMARKS=ON
#   cmake --build build/bench --target popalloc-compare bench_kernels
#   benchmarks/python/setup.sh                      # only for the 'conic' step
#   benchmarks/run_benchmarks.sh build/bench [lp1e3 lp1e4 lp1e5 lp1e5glpk lp1e5primal lp1e5merge lp1e6 conic kernels plots]
#
# Everything runs under nice, one solver at a time (the machine is shared). LP solvers are limited
# in CPU seconds (see popalloc-compare --help), popalloc in wall-clock seconds.
set -euo pipefail
if [[ $# -lt 1 ]]; then
  sed -n '2,14p' "$0" >&2
  exit 2
fi
build=$1
shift
compare="${build}/benchmarks/compare/popalloc-compare"
kernels="${build}/benchmarks/bench_kernels"
python="${PYTHON:-build/bench-venv/bin/python}"
results=benchmarks/results
mkdir -p "${results}"
# Target-priority utilities, m = 8, popalloc-solve's generator with seed 1; targets x3 so that
# resources are contended (at x1 every target is reachable and the optimum is 0).
common=(--seed 1 --target-scale 3 --time-limit 600)

run() {
  echo "+ $*" >&2
  nice -n 19 "$@"
}

step_lp1e3() { run "${compare}" --generate 1000,8 "${common[@]}" --json "${results}/lp_n1000.json"; }
# Every LP solver runs until it finishes or passes the 10-minute CPU limit (--time-limit 600):
# a solver that passes it is reported as "> limit". Solvers that passed the limit at one size
# are not run at the next (their CPU time grows like n^2 or faster, docs/benchmarks.md).
step_lp1e4() { run "${compare}" --generate 10000,8 "${common[@]}" --json "${results}/lp_n10000.json"; }
# n = 1e5 in two halves that can run side by side (COIN-OR and GLPK), each writing its own file.
step_lp1e5() {
  run "${compare}" --generate 100000,8 "${common[@]}" \
    --solvers popalloc,popalloc-1thread,clp-primal,clp-dual,clp-barrier \
    --json "${results}/lp_n100000.json"
}
step_lp1e5glpk() {
  run "${compare}" --generate 100000,8 "${common[@]}" \
    --solvers popalloc,popalloc-1thread,glpk-primal,glpk-dual,glpk-interior \
    --json "${results}/lp_n100000_glpk.json"
}
# The simplex codes again at n = 1e5, each alone in its own file: on the loaded machine of
# 2026-11-29 their first run was stopped by popalloc-compare's wall-clock backstop (3 x the limit
# + 60 s) after only about 310 CPU s.
step_lp1e5primal() {
  run "${compare}" --generate 100000,8 "${common[@]}" \
    --solvers popalloc,popalloc-1thread,clp-primal,glpk-primal \
    --json "${results}/lp_n100000_primal.json"
}
# One n = 1e5 report from the three runs: the simplex rows of lp1e5primal replace those the
# backstop cut short; popalloc's rows are those of lp1e5.
step_lp1e5merge() {
  /usr/bin/python3 - "${results}" <<'PY'
import json, os, sys
d = sys.argv[1]
main = json.load(open(os.path.join(d, "lp_n100000.json")))
extra = [os.path.join(d, f) for f in ("lp_n100000_glpk.json", "lp_n100000_primal.json")]
rows = {s["name"]: s for s in main["solvers"]}
for path in extra:
    for s in json.load(open(path))["solvers"]:
        if not s["name"].startswith("popalloc"):
            rows[s["name"]] = s
order = ["popalloc", "popalloc-1thread", "popalloc-thrust", "clp-primal", "clp-dual",
         "clp-barrier", "glpk-primal", "glpk-dual", "glpk-interior"]
main["solvers"] = [rows[n] for n in order if n in rows]
main["merged_from"] = ["lp_n100000.json"] + [os.path.basename(p) for p in extra]
tmp = os.path.join(d, "lp_n100000.json.tmp")
json.dump(main, open(tmp, "w"), indent=1)
os.replace(tmp, os.path.join(d, "lp_n100000.json"))
for path in extra:
    os.replace(path, path.replace(".json", ".part"))
PY
}
step_lp1e6() {
  run "${compare}" --generate 1000000,8 "${common[@]}" --repeat 2 \
    --solvers popalloc,popalloc-1thread,clp-barrier --json "${results}/lp_n1000000.json"
}
# Log utility (not an LP) against the conic solvers, at small sizes.
step_conic() {
  run "${python}" benchmarks/python/compare_conic.py --compare "${compare}" --utility log \
    --sizes 1000,10000 --resources 8 --seed 1 --time-limit 600 --work build/bench-conic \
    --json "${results}/conic_log.json"
}
step_kernels() {
  run "${kernels}" --benchmark_min_time=0.1 \
    --benchmark_filter='/m:8/|(best_response|dual_evaluation)/target_priority/n:100000/' \
    --benchmark_counters_tabular=true \
    --benchmark_out="${results}/kernels.json" --benchmark_out_format=json
}
# Debian's python3-matplotlib (the venv has no matplotlib).
step_plots() { /usr/bin/python3 scripts/plot_benchmarks.py --results "${results}" --out docs/img; }

steps=("$@")
[[ ${#steps[@]} -gt 0 ]] || steps=(lp1e3 lp1e4 lp1e5 lp1e5glpk lp1e5primal lp1e5merge lp1e6 conic kernels plots)
for s in "${steps[@]}"; do
  declare -F "step_${s}" >/dev/null || { echo "unknown step '${s}'" >&2; exit 2; }
  "step_${s}"
done
