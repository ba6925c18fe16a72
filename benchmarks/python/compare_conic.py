#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""popalloc against conic and LP solvers driven from Python, on identical instance files.

For the utilities that are not LPs (log, power) popalloc-compare can only run popalloc; this
driver does what the paper did against MOSEK: the same instance, written to CSV files by
popalloc-compare (popalloc-solve's generator and format), is modelled in CVXPY and solved by
Clarabel, SCS and ECOS. For the LP utilities (target-priority, linear) it also runs HiGHS through
its own Python package highspy. GUROBI and MOSEK (commercial.py) run for any utility where they
can, and are skipped with the reason where they cannot (not installed, no licence, over
gurobipy's restricted licence). Every solver runs in a child process with a hard time limit.

    benchmarks/python/setup.sh                          # venv with cvxpy, clarabel, scs, ecos, highspy
    build/bench-venv/bin/python benchmarks/python/compare_conic.py \
        --compare build/bench/benchmarks/compare/popalloc-compare \
        --utility log --sizes 1000,10000 --resources 8 --json benchmarks/results/conic_log.json

Objectives are recomputed with numpy from each solver's X: `objective` at X as returned, and
`feasible_objective` after making X feasible the way the paper treated MOSEK's answer (negative
entries clipped to 0, rows over 1 and resources over capacity scaled down). popalloc's dual bound
is a certified upper bound on the optimum, so `gap_to_bound` = (bound - feasible objective) /
max(|bound|, 1) >= 0 measures how far each feasible answer is from optimal.
Times: `solve_seconds` is the solver's own wall-clock solve time (CVXPY's compile time excluded,
as in the paper); `solver_cpu_seconds` is the CPU time of the solve call minus CVXPY's compile
time. speedup = solve_seconds / popalloc's wall time; cpu_speedup = solver_cpu_seconds /
popalloc-1thread's CPU time (the robust figure on a loaded machine). Each solver runs in a child
process under a CPU-time limit (RLIMIT_CPU, like popalloc-compare's LP solvers) with a
wall-clock backstop of 3x the limit + 60 s.
"""
import argparse
import csv
import json
import math
import os
import platform
import resource
import subprocess
import sys
import time

import numpy as np


def read_instance(prefix):
    with open(prefix + ".resources.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    names = [r["name"] for r in rows]
    capacity = np.array([float(r["capacity"]) for r in rows])
    with open(prefix + ".jobs.csv", newline="") as f:
        reader = csv.DictReader(f)
        jobs = list(reader)
    n = len(jobs)
    A = np.zeros((n, len(names)))
    for j, name in enumerate(names):
        A[:, j] = [float(r.get(name) or 0.0) for r in jobs]
    weight = np.array([float(r.get("weight") or 1.0) for r in jobs])
    target = np.array([float(r["target"]) if r.get("target") not in (None, "") else 0.0
                       for r in jobs])
    # Units of every resource a job occupies while it runs (JOBS.csv's optional demand column,
    # e.g. gavel's scale factors): they weigh the job's fractions in the capacity rows.
    demand = np.array([float(r.get("demand") or 1.0) for r in jobs])
    return A, capacity, weight, target, demand


def utility_value(utility, t, weight, target):
    if utility == "log":
        with np.errstate(divide="ignore"):
            return float(np.sum(weight * np.log(t)))
    if utility.startswith("power:"):
        alpha = float(utility.split(":", 1)[1])
        return float(np.sum(weight * np.power(np.maximum(t, 0.0), alpha)))
    if utility == "linear":
        return float(np.sum(weight * t))
    return float(np.sum(weight * np.minimum(t - target, 0.0)))  # target-priority


def check_solution(X, A, capacity, weight, target, demand, utility):
    X = np.asarray(X, dtype=float)
    violation = max(0.0, float(-X.min()), float((X.sum(axis=1) - 1.0).max()),
                    float((demand @ X - capacity).max()))
    raw = utility_value(utility, (A * X).sum(axis=1), weight, target)
    Y = np.maximum(X, 0.0)
    rows = Y.sum(axis=1)
    Y[rows > 1.0] /= rows[rows > 1.0, None]
    usage = demand @ Y
    over = usage > capacity
    Y[:, over] *= capacity[over] / usage[over]
    feasible = utility_value(utility, (A * Y).sum(axis=1), weight, target)
    return raw, feasible, violation


# ---- worker: one solver on one instance, in its own process --------------------------------

def solve_cvxpy(solver, prefix, utility, limit):
    import cvxpy as cp
    A, capacity, weight, target, demand = read_instance(prefix)
    n, m = A.shape
    start = time.perf_counter()
    X = cp.Variable((n, m), nonneg=True)
    t = cp.sum(cp.multiply(A, X), axis=1)
    if utility == "log":
        objective = weight @ cp.log(t)
    elif utility.startswith("power:"):
        objective = weight @ cp.power(t, float(utility.split(":", 1)[1]))
    elif utility == "linear":
        objective = weight @ t
    else:
        objective = cp.sum(cp.minimum(cp.multiply(weight, t - target), 0.0))
    problem = cp.Problem(cp.Maximize(objective),
                         [cp.sum(X, axis=1) <= 1.0, demand @ X <= capacity])
    options = {}
    if solver == "CLARABEL":
        options["time_limit"] = limit
    elif solver == "SCS":
        options["time_limit_secs"] = limit
    try:
        # Compile and solve separately (what problem.solve does in one call) so that the solver's
        # CPU time can be told apart from CVXPY's.
        cpu_start = time.process_time()
        data, chain, inverse = problem.get_problem_data(solver, solver_opts=options)
        compile_cpu = time.process_time() - cpu_start
        compile_wall = time.perf_counter() - start
        cpu_start, wall_start = time.process_time(), time.perf_counter()
        raw = chain.solve_via_data(problem, data, False, False, options)
        solver_cpu = time.process_time() - cpu_start
        solver_wall = time.perf_counter() - wall_start
        problem.unpack_results(raw, chain, inverse)
    except cp.error.SolverError as e:
        return {"status": "failed", "message": str(e), "total_seconds": time.perf_counter() - start}
    total = time.perf_counter() - start
    stats = problem.solver_stats
    result = {"status": problem.status, "total_seconds": total,
              "solve_seconds": (stats.solve_time if stats is not None and stats.solve_time
                                else solver_wall),
              "solver_wall_seconds": solver_wall, "compile_seconds": compile_wall,
              "compile_cpu_seconds": compile_cpu, "solver_cpu_seconds": solver_cpu,
              "iterations": stats.num_iters if stats is not None else None,
              "reported_objective": problem.value}
    if X.value is not None:
        raw, feasible, violation = check_solution(X.value, A, capacity, weight, target, demand,
                                                  utility)
        result.update(objective=raw, feasible_objective=feasible, max_violation=violation)
    return result


# HiGHS's LP methods, each a separate solver name. "HIGHSPY" leaves the choice to HiGHS (dual
# simplex on these LPs). The interior point is IPX, named explicitly: "ipm" means IPX in the
# PyPI wheel, and its other IPM (HiPO) is not built there (setting solver=hipo fails, so it is
# refused here rather than silently replaced). Crossover (run_crossover) turns IPX's interior
# solution into a basic one; without it the answer is optimal only to IPX's tolerances.
HIGHS_METHODS = {
    "HIGHSPY": {},
    "HIGHS-DUAL": {"solver": "simplex", "simplex_strategy": 1},
    "HIGHS-IPX": {"solver": "ipx", "run_crossover": "off"},
    "HIGHS-IPX-CROSSOVER": {"solver": "ipx", "run_crossover": "on"},
}


def set_highs_option(h, name, value):
    import highspy
    if h.setOptionValue(name, value) != highspy.HighsStatus.kOk:
        raise RuntimeError(f"HiGHS rejected option {name} = {value!r}")


def lp_columns(A, capacity, weight, target, demand, utility):
    """The LP of benchmarks/compare/lp_model.hpp in column (CSC) form, column for column as
    popalloc-compare builds it, so every Python LP solver receives the same matrix.

    Columns: x_ij for A_ij > 0 (row-major order), then for target-priority the epigraph z_i <= 0.
    Rows, all "<= row_upper": n job rows, m capacity rows, n epigraph rows (target-priority).
    Bounds use +-inf; each adapter translates them."""
    n, m = A.shape
    epigraph = utility == "target-priority"
    jobs, resources = np.nonzero(A > 0)           # row-major order, as in lp_model.cpp
    k = len(jobs)
    values = A[jobs, resources]
    per = 3 if epigraph else 2
    index = np.empty(per * k, dtype=np.int32)
    data = np.empty(per * k)
    index[0::per], data[0::per] = jobs, 1.0
    index[1::per], data[1::per] = n + resources, demand[jobs]
    if epigraph:
        index[2::per], data[2::per] = n + m + jobs, -weight[jobs] * values
    starts = np.arange(0, per * k + 1, per, dtype=np.int64)
    num_row = n + m + (n if epigraph else 0)
    num_col = k + (n if epigraph else 0)
    cost = np.zeros(num_col)
    lower = np.zeros(num_col)
    upper = np.full(num_col, np.inf)
    if epigraph:
        cost[k:] = 1.0
        lower[k:] = -np.inf
        upper[k:] = 0.0
        index = np.concatenate([index, n + m + np.arange(n, dtype=np.int32)])
        data = np.concatenate([data, np.ones(n)])
        starts = np.concatenate([starts, starts[-1] + 1 + np.arange(n, dtype=np.int64)])
    else:
        cost[:] = weight[jobs] * values
    row_upper = np.concatenate([np.ones(n), capacity, -weight * target if epigraph else []])
    return {"n": n, "m": m, "k": k, "jobs": jobs, "resources": resources, "num_row": num_row,
            "num_col": num_col, "starts": starts, "index": index, "data": data, "cost": cost,
            "lower": lower, "upper": upper, "row_upper": row_upper}


def x_matrix(lp, column_values):
    """The n x m allocation X from an LP solution (its first k columns are the x_ij)."""
    X = np.zeros((lp["n"], lp["m"]))
    X[lp["jobs"], lp["resources"]] = np.asarray(column_values)[:lp["k"]]
    return X


def solve_highspy(prefix, utility, limit, method="HIGHSPY"):
    """The LP of benchmarks/compare/lp_model.hpp (lp_columns) passed to HiGHS.

    Times, as popalloc-compare's for its LP solvers: loading the model (passModel) plus
    optimizing (presolve, crossover included); building the arrays is not counted."""
    import highspy
    A, capacity, weight, target, demand = read_instance(prefix)
    start = time.perf_counter()
    c = lp_columns(A, capacity, weight, target, demand, utility)
    inf = highspy.kHighsInf
    lp = highspy.HighsLp()
    lp.num_row_ = c["num_row"]
    lp.num_col_ = c["num_col"]
    lp.col_cost_ = c["cost"]
    lp.col_lower_ = np.where(np.isinf(c["lower"]), -inf, c["lower"])
    lp.col_upper_ = np.where(np.isinf(c["upper"]), inf, c["upper"])
    lp.row_lower_, lp.row_upper_ = np.full(lp.num_row_, -inf), c["row_upper"]
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_ = c["starts"].astype(np.int32)
    lp.a_matrix_.index_, lp.a_matrix_.value_ = c["index"], c["data"]
    lp.sense_ = highspy.ObjSense.kMaximize
    h = highspy.Highs()
    options = dict(output_flag=False, time_limit=float(limit), threads=1,
                   **HIGHS_METHODS[method])
    for name, value in options.items():
        set_highs_option(h, name, value)
    solve_start = time.perf_counter()
    cpu_start = time.process_time()
    h.passModel(lp)
    load = time.perf_counter() - solve_start
    h.run()
    cpu = time.process_time() - cpu_start
    end = time.perf_counter()
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    result = {"status": "optimal" if status == "Optimal" else status,
              "solve_seconds": end - solve_start, "load_seconds": load,
              "total_seconds": end - start, "cpu_seconds": cpu, "solver_cpu_seconds": cpu,
              "iterations": int(info.simplex_iteration_count),
              "ipm_iterations": int(info.ipm_iteration_count),
              "crossover_iterations": int(info.crossover_iteration_count),
              "basis_valid": bool(info.basis_validity),
              "highs_options": {k: v for k, v in options.items() if k != "output_flag"},
              "reported_objective": info.objective_function_value}
    X = x_matrix(c, h.getSolution().col_value)
    raw, feasible, violation = check_solution(X, A, capacity, weight, target, demand, utility)
    result.update(objective=raw, feasible_objective=feasible, max_violation=violation)
    return result


def worker(args):
    import commercial
    if args.worker in commercial.SOLVERS:
        result = commercial.solve(args.worker, args.instance, args.utility, args.time_limit)
    elif args.worker in HIGHS_METHODS:
        result = solve_highspy(args.instance, args.utility, args.time_limit, args.worker)
    else:
        result = solve_cvxpy(args.worker, args.instance, args.utility, args.time_limit)
    with open(args.result, "w") as f:  # not stdout: solvers may print there
        json.dump(result, f)


# ---- driver ----------------------------------------------------------------------------------

def versions():
    from importlib.metadata import version, PackageNotFoundError
    out = {"python": platform.python_version(), "machine": platform.machine(),
           "cpus": os.cpu_count()}
    for name in ("cvxpy", "clarabel", "scs", "ecos", "highspy", "numpy", "gurobipy", "mosek"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = None
    return out


def run_solver(name, prefix, utility, limit):
    grace = max(5.0, 0.05 * limit)
    soft = int(math.ceil(limit + grace))

    def cpu_limit():
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 5))

    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result_path = prefix + "." + name + ".result.json"
    if os.path.exists(result_path):
        os.remove(result_path)
    try:
        proc = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", name,
                               "--instance", prefix, "--utility", utility,
                               "--time-limit", str(limit), "--result", result_path],
                              capture_output=True, text=True, timeout=3 * limit + 60,
                              preexec_fn=cpu_limit)
    except subprocess.TimeoutExpired:
        return {"status": "killed_at_limit", "total_seconds": time.perf_counter() - start,
                "message": f"still running {3 * limit + 60:.0f} wall s after start: killed"}
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if proc.returncode in (-9, -24):  # SIGKILL / SIGXCPU: the CPU-time limit
        return {"status": "killed_at_limit", "total_seconds": time.perf_counter() - start,
                "cpu_seconds": used, "solver_cpu_seconds": used,
                "message": f"killed by the CPU-time limit after {used:.0f} CPU s"}
    if proc.returncode != 0:
        return {"status": "failed", "total_seconds": time.perf_counter() - start,
                "message": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else
                f"exit {proc.returncode}"}
    with open(result_path) as f:
        return json.load(f)


def instance_prefix(work, utility, family, n, m):
    """WORK/UTILITY[_FAMILY]_nN_mM, the family spec made a file-name part (":" -> "-")."""
    parts = [utility.replace(":", "_")] + ([family.replace(":", "-")] if family else [])
    return os.path.join(work, "_".join(parts + [f"n{n}", f"m{m}"]))


def family_resources(family, resources):
    """The gavel family has Gavel's three GPU types: it always runs at m = 3."""
    return 3 if family and family.split(":")[0] == "gavel" else resources


def run_popalloc_compare(compare, n, m, seed, utility, solvers, time_limit, prefix,
                         family=None, target_scale=None, extra=()):
    """Runs popalloc-compare on one generated instance, writing PREFIX.jobs.csv /
    PREFIX.resources.csv for the Python solvers and PREFIX.compare.json; returns (report,
    command, exit status). Exit status 3 (the solvers disagree) still wrote the report."""
    json_path = prefix + ".compare.json"
    if os.path.exists(json_path):
        os.remove(json_path)
    command = [compare, "--generate", f"{n},{m}", "--seed", str(seed), "--utility", utility,
               "--solvers", ",".join(solvers), "--time-limit", str(time_limit),
               "--write-instance", prefix, "--json", json_path, "--quiet", *extra]
    if family:
        command += ["--family", family]
    if target_scale is not None and utility == "target-priority":
        command += ["--target-scale", str(target_scale)]
    proc = subprocess.run(command)
    if proc.returncode not in (0, 3) or not os.path.exists(json_path):
        raise RuntimeError(f"popalloc-compare failed with exit status {proc.returncode}: "
                           + " ".join(command))
    with open(json_path) as f:
        return json.load(f), command, proc.returncode


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", help="path of the popalloc-compare executable")
    parser.add_argument("--utility", default="log",
                        help="log (default), power:ALPHA, target-priority or linear")
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated job counts")
    parser.add_argument("--resources", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--family", default=None,
                        help="instance family spec passed to popalloc-compare (e.g. classes:tight;"
                             " default: its generator, popalloc-solve's original instances)")
    parser.add_argument("--target-scale", default="3",
                        help="passed to popalloc-compare (target-priority only; default 3)")
    parser.add_argument("--solvers", default=None,
                        help="comma-separated: CLARABEL,SCS,ECOS (conic); HIGHSPY, HIGHS-DUAL, "
                             "HIGHS-IPX, HIGHS-IPX-CROSSOVER (LP utilities); GUROBI, MOSEK (any "
                             "utility, skipped with the reason when unlicensed or not installed)")
    parser.add_argument("--time-limit", type=float, default=600.0, help="seconds per solver")
    parser.add_argument("--work", default="build/bench-conic", help="instance files go here")
    parser.add_argument("--json", help="write all results here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--instance", help=argparse.SUPPRESS)
    parser.add_argument("--result", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return worker(args)
    if not args.compare or not os.access(args.compare, os.X_OK):
        parser.error("--compare must name the popalloc-compare executable")
    lp = args.utility in ("target-priority", "linear")
    solvers = (args.solvers.split(",") if args.solvers else
               (["HIGHSPY", "CLARABEL"] if lp else ["CLARABEL", "SCS", "ECOS"]))
    for s in solvers:
        if s not in ("CLARABEL", "SCS", "ECOS", "GUROBI", "MOSEK") and s not in HIGHS_METHODS:
            parser.error(f"unknown solver {s}")
        if s in HIGHS_METHODS and not lp:
            parser.error(f"{s} solves LPs only (target-priority, linear)")
    os.makedirs(args.work, exist_ok=True)
    report = {"program": "compare_conic.py", "utility": args.utility, "family": args.family,
              "resources": args.resources,
              "seed": args.seed, "time_limit": args.time_limit, "versions": versions(), "runs": []}
    print(f"{'n':>8} {'solver':<17} {'status':<16} {'seconds':>9} {'cpu s':>9} "
          f"{'objective':>20} {'gap to bound':>12} {'speed-up':>9} {'cpu':>9}")
    m = family_resources(args.family, args.resources)
    for n in [int(float(s)) for s in args.sizes.split(",")]:
        prefix = instance_prefix(args.work, args.utility, args.family, n, m)
        pop, command, _ = run_popalloc_compare(
            args.compare, n, m, args.seed, args.utility, ["popalloc", "popalloc-1thread"],
            args.time_limit, prefix, family=args.family,
            target_scale=args.target_scale if args.utility == "target-priority" else None)
        rows = [s for s in pop["solvers"] if s["status"] != "not_built"]
        reference = rows[0]
        bound = reference["dual_bound"]
        scale = max(abs(bound), 1.0)
        run = {"n": n, "m": m, "family": args.family, "popalloc": rows, "solvers": [],
               "command": " ".join(command)}
        for r in rows:
            print(f"{n:>8} {r['name']:<17} {r['status']:<16} {r['seconds']:>9.4g} "
                  f"{r['cpu_seconds']:>9.4g} {r['objective']:>20.12g} "
                  f"{(bound - r['objective']) / scale:>12.2e} {'-':>9} {'-':>9}")
        for name in solvers:
            result = run_solver(name, prefix, args.utility, args.time_limit)
            result["name"] = name
            solve = result.get("solve_seconds", result.get("total_seconds"))
            finished = result["status"] in ("optimal", "optimal_inaccurate")
            if "feasible_objective" in result and result["feasible_objective"] is not None:
                result["gap_to_bound"] = (bound - result["feasible_objective"]) / scale
            result["speedup"] = solve / reference["seconds"] if solve else None
            cpu_reference = next((r for r in rows if r["name"] == "popalloc-1thread"), reference)
            solver_cpu = result.get("solver_cpu_seconds")
            result["cpu_speedup"] = (solver_cpu / cpu_reference["cpu_seconds"]
                                     if solver_cpu else None)
            result["speedup_is_lower_bound"] = not finished
            run["solvers"].append(result)
            objective = result.get("feasible_objective")
            gap = result.get("gap_to_bound")
            mark = "" if finished else ">"

            def fmt(value, spec, suffix=""):
                return "-" if value is None else mark + format(value, spec) + suffix

            if result["status"] == "skipped":
                print(f"{n:>8} {name:<17} skipped: {result['message']}", flush=True)
                continue
            print(f"{n:>8} {name:<17} {result['status']:<16} {fmt(solve, '.4g'):>9} "
                  f"{fmt(solver_cpu, '.4g'):>9} "
                  f"{objective if objective is not None else float('nan'):>20.12g} "
                  f"{gap if gap is not None else float('nan'):>12.2e} "
                  f"{fmt(result['speedup'], '.3g', 'x'):>9} "
                  f"{fmt(result['cpu_speedup'], '.3g', 'x'):>9}", flush=True)
        report["runs"].append(run)
        if args.json:
            tmp = args.json + ".tmp"
            with open(tmp, "w") as f:
                json.dump(report, f, indent=1)
            os.replace(tmp, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
