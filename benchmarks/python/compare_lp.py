#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""popalloc against every exact LP solver at hand, per instance family: CLP and GLPK (through
popalloc-compare), HiGHS (through highspy: dual simplex, IPX without and with crossover) and,
where they can run, Gurobi (gurobipy) and MOSEK (mosek), see commercial.py.

    benchmarks/python/setup.sh                          # venv with highspy (and the conic solvers)
    build/bench-venv/bin/python benchmarks/python/compare_lp.py \\
        --compare build/bench/benchmarks/compare/popalloc-compare \\
        --families generations,classes:tight --utility target-priority --sizes 2000 \\
        --json lp_families.json

For each family and n, popalloc-compare generates the instance (--generate N,M --family SPEC),
solves it with popalloc (all threads, and one thread) and its LP solvers, and writes the
instance files, which the HiGHS methods then solve in child processes (compare_conic.py's
workers, same CPU-time limit), and so do Gurobi and MOSEK (--commercial), each skipped with a
one-line reason when it cannot run (not installed, no licence, over the restricted licence).
Per run it reports:

  OPT        the LP optimum: the largest objective among the exact solvers that finished with a
             feasible x (violation <= --feasibility x max(1, max_j R_j)); every objective is
             recomputed from the solver's own x
  rel. err   |objective - OPT| / max(|OPT|, 1e-12)   (popalloc's feasible allocation)
  abs. err   |objective - OPT|   (read this one when OPT is 0, e.g. reachable targets)
  speed      fastest exact solver's CPU s / popalloc-1thread's CPU s ("cpu ratio", the robust
             figure on a shared machine) and its wall s / popalloc's wall s (all threads);
             "fastest" = fewest CPU seconds among the exact solvers that finished
Times of LP solvers are loading the model into the solver plus optimizing, as in
popalloc-compare. A solver stopped at its limit is listed with ">" and never counts as fastest.
"""
import argparse
import csv
import json
import os
import sys

import compare_conic as cc

EXACT_LP = ["clp-primal", "clp-dual", "clp-barrier", "glpk-primal", "glpk-dual", "glpk-interior"]
HIGHS = ["HIGHS-DUAL", "HIGHS-IPX", "HIGHS-IPX-CROSSOVER"]
COMMERCIAL = ["GUROBI", "MOSEK"]
TINY = 1e-12  # floor of |OPT| in the relative error


def compare_row(r):
    """A popalloc-compare JSON row in the driver's common form."""
    return {"name": r["name"], "source": "popalloc-compare", "status": r["status"],
            "finished": bool(r["finished"]), "wall_seconds": r.get("seconds"),
            "cpu_seconds": r.get("cpu_seconds"), "objective": r.get("objective"),
            "max_violation": r.get("max_violation"), "iterations": r.get("iterations"),
            "dual_bound": r.get("dual_bound"), "relative_gap": r.get("relative_gap"),
            "message": r.get("message", "")}


def highs_row(name, result, source="highspy"):
    """A HiGHS, Gurobi or MOSEK worker's result (compare_conic.solve_highspy, commercial.solve)
    in the driver's common form."""
    row = {"name": name.lower(), "source": source, "status": result["status"],
           "finished": result["status"] == "optimal",
           "wall_seconds": result.get("solve_seconds", result.get("total_seconds")),
           "cpu_seconds": result.get("solver_cpu_seconds"),
           "objective": result.get("objective"), "max_violation": result.get("max_violation"),
           "iterations": result.get("iterations"), "message": result.get("message", "")}
    for key in ("ipm_iterations", "crossover_iterations", "basis_valid", "highs_options",
                "load_seconds", "version"):
        if key in result:
            row[key] = result[key]
    return row


def is_exact(row, feasibility):
    return (row["finished"] and row["objective"] is not None and row["max_violation"] is not None
            and row["max_violation"] <= feasibility)


def evaluate(rows, popalloc_rows, feasibility):
    """OPT, the fastest exact solver, and popalloc's errors and speed ratios (see the header)."""
    exact = [r for r in rows if is_exact(r, feasibility)]
    out = {"exact_solvers": [r["name"] for r in exact]}
    if not exact:
        return out
    best = max(exact, key=lambda r: r["objective"])
    fastest = min(exact, key=lambda r: r["cpu_seconds"])
    opt = best["objective"]
    out.update(opt=opt, opt_solver=best["name"], fastest=fastest["name"],
               fastest_cpu_seconds=fastest["cpu_seconds"],
               fastest_wall_seconds=fastest["wall_seconds"])
    by_name = {r["name"]: r for r in popalloc_rows}
    for r in popalloc_rows:
        if r["objective"] is None:
            continue
        r["absolute_error"] = abs(r["objective"] - opt)
        r["relative_error"] = r["absolute_error"] / max(abs(opt), TINY)
        r["bound_above_opt"] = r["dual_bound"] is None or r["dual_bound"] >= opt - 1e-9 * max(
            abs(opt), 1.0)
    one = by_name.get("popalloc-1thread", popalloc_rows[0] if popalloc_rows else None)
    allt = by_name.get("popalloc", one)
    if one is not None and one["cpu_seconds"]:
        out["cpu_ratio"] = fastest["cpu_seconds"] / one["cpu_seconds"]
    if allt is not None and allt["wall_seconds"]:
        out["wall_ratio"] = fastest["wall_seconds"] / allt["wall_seconds"]
    for r in rows:  # every LP solver against popalloc-1thread, ">" when it was stopped
        if one is not None and one["cpu_seconds"] and r["cpu_seconds"]:
            r["cpu_ratio"] = r["cpu_seconds"] / one["cpu_seconds"]
            r["ratio_is_lower_bound"] = not r["finished"]
    return out


def max_capacity(prefix):
    with open(prefix + ".resources.csv", newline="") as f:
        return max(float(r["capacity"]) for r in csv.DictReader(f))


def fmt(value, spec, prefix=""):
    return "-" if value is None else prefix + format(value, spec)


def print_run(run):
    e = run["evaluation"]
    print(f"\n{run['family']}  n = {run['n']}, m = {run['m']}, utility {run['utility']}: "
          f"OPT = {fmt(e.get('opt'), '.12g')} ({e.get('opt_solver', 'no exact solver finished')})")
    print(f"{'solver':<20} {'status':<16} {'wall s':>10} {'cpu s':>10} {'objective':>20} "
          f"{'rel. err':>9} {'abs. err':>9} {'cpu ratio':>10}  note")
    for r in run["popalloc"] + run["lp"]:
        mark = ">" if r.get("ratio_is_lower_bound") else ""
        popalloc = r["name"].startswith("popalloc")
        stopped = "" if r["finished"] or popalloc else ">"
        objective = r["objective"] if (r["finished"] or popalloc) else None
        note = r.get("message", "")
        if "highs_options" in r:
            o = r["highs_options"]
            note = (f"solver={o.get('solver', 'choose')}, crossover={o.get('run_crossover', '-')}; "
                    f"{r.get('ipm_iterations', 0)} IPM / {r.get('crossover_iterations', 0)} "
                    f"crossover / {r.get('iterations', 0)} simplex iterations")
        if popalloc:
            note = (f"gap {fmt(r.get('relative_gap'), '.1e')}, "
                    f"bound {fmt(r.get('dual_bound'), '.12g')}")
        print(f"{r['name']:<20} {r['status']:<16} {fmt(r['wall_seconds'], '.4g', stopped):>10} "
              f"{fmt(r['cpu_seconds'], '.4g', stopped):>10} {fmt(objective, '.12g'):>20} "
              f"{fmt(r.get('relative_error'), '.1e'):>9} {fmt(r.get('absolute_error'), '.1e'):>9} "
              f"{fmt(r.get('cpu_ratio'), '.3g', mark) + ('x' if 'cpu_ratio' in r else ''):>10}  "
              f"{note}")
    if "fastest" in e:
        print(f"fastest exact solver: {e['fastest']} ({e['fastest_cpu_seconds']:.4g} CPU s, "
              f"{e['fastest_wall_seconds']:.4g} wall s); speed ratio fastest / popalloc: "
              f"CPU {fmt(e.get('cpu_ratio'), '.3g')}x (popalloc 1 thread), "
              f"wall {fmt(e.get('wall_ratio'), '.3g')}x (popalloc all threads); "
              f"> 1: popalloc is faster")
    sys.stdout.flush()


def one_run(args, family, n):
    m = cc.family_resources(family, args.resources)
    prefix = cc.instance_prefix(args.work, args.utility, family, n, m)
    solvers = ["popalloc", "popalloc-1thread"] + args.lp_solvers
    extra = ["--tolerance", str(args.tolerance)]
    if args.stop_early:
        extra += ["--stop-early", args.stop_early]
    report, command, status = cc.run_popalloc_compare(
        args.compare, n, m, args.seed, args.utility, solvers, args.time_limit, prefix,
        family=family, target_scale=args.target_scale, extra=extra)
    rows = [compare_row(r) for r in report["solvers"] if r["status"] != "not_built"]
    popalloc_rows = [r for r in rows if r["name"].startswith("popalloc")]
    lp = [r for r in rows if not r["name"].startswith("popalloc")]
    for name in args.highs:
        lp.append(highs_row(name, cc.run_solver(name, prefix, args.utility, args.time_limit)))
    for name in args.commercial:
        lp.append(highs_row(name, cc.run_solver(name, prefix, args.utility, args.time_limit),
                            source="gurobipy" if name == "GUROBI" else "mosek"))
    feasibility = args.feasibility * max(1.0, max_capacity(prefix))
    run = {"family": family, "n": n, "m": m, "utility": args.utility, "command": command,
           "popalloc_compare_exit_status": status, "popalloc_compare_problems": report["problems"],
           "popalloc": popalloc_rows, "lp": lp,
           "evaluation": evaluate(lp, popalloc_rows, feasibility)}
    print_run(run)
    return run


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compare", required=True, help="the popalloc-compare executable")
    parser.add_argument("--families", default="generations",
                        help="comma-separated family specs (popalloc-compare --family)")
    parser.add_argument("--utility", default="target-priority", choices=["target-priority",
                                                                        "linear"])
    parser.add_argument("--sizes", default="2000", help="comma-separated job counts")
    parser.add_argument("--resources", type=int, default=8, help="m (gavel: always 3)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--target-scale", type=float, default=None,
                        help="popalloc-compare --target-scale (default: none, the family's own)")
    parser.add_argument("--tolerance", type=float, default=1e-7,
                        help="popalloc's relative duality gap (default 1e-7)")
    parser.add_argument("--lp-solvers", default=",".join(EXACT_LP),
                        help="popalloc-compare's LP solvers (default: CLP and GLPK, all methods)")
    parser.add_argument("--highs", default=",".join(HIGHS),
                        help="HiGHS methods (default HIGHS-DUAL,HIGHS-IPX,HIGHS-IPX-CROSSOVER; "
                             "HIGHSPY = HiGHS's own choice); '' for none")
    parser.add_argument("--commercial", default=",".join(COMMERCIAL),
                        help="GUROBI (gurobipy), MOSEK (mosek), each skipped with its reason "
                             "when it cannot run; '' for none (default GUROBI,MOSEK)")
    parser.add_argument("--time-limit", type=float, default=600.0,
                        help="CPU seconds per LP solver (default 600)")
    parser.add_argument("--stop-early", help="popalloc-compare --stop-early NAME=S,...")
    parser.add_argument("--feasibility", type=float, default=1e-6,
                        help="largest violation (x max(1, max R)) of an exact solution")
    parser.add_argument("--work", default="build/bench-lp", help="instance files go here")
    parser.add_argument("--json", help="write all results here (atomically)")
    args = parser.parse_args()
    if not os.access(args.compare, os.X_OK):
        parser.error(f"--compare: '{args.compare}' is not an executable")
    args.lp_solvers = [s for s in args.lp_solvers.split(",") if s]
    args.highs = [s for s in args.highs.split(",") if s]
    args.commercial = [s for s in args.commercial.split(",") if s]
    for s in args.commercial:
        if s not in COMMERCIAL:
            parser.error(f"--commercial: unknown solver {s} ({', '.join(COMMERCIAL)})")
    for s in args.highs:
        if s not in cc.HIGHS_METHODS:
            parser.error(f"--highs: unknown method {s} ({', '.join(cc.HIGHS_METHODS)})")
    args.families = [f for f in args.families.split(",")]
    if any(not f for f in args.families):
        parser.error("--families: empty item")
    try:
        args.sizes = [int(float(s)) for s in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: not a list of job counts: {args.sizes}")
    if any(n < 1 for n in args.sizes):
        parser.error("--sizes: every n must be >= 1")
    return args


def write_json(path, report):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(report, f, indent=1)
    os.replace(tmp, path)


def main():
    args = parse_args()
    os.makedirs(args.work, exist_ok=True)
    report = {"program": "compare_lp.py", "utility": args.utility, "resources": args.resources,
              "seed": args.seed, "tolerance": args.tolerance, "time_limit": args.time_limit,
              "relative_error": f"|objective - OPT| / max(|OPT|, {TINY:g})",
              "versions": cc.versions(), "load_start": os.getloadavg(), "runs": []}
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cores")
    for family in args.families:
        for n in args.sizes:
            report["runs"].append(one_run(args, family, n))
            if args.json:
                write_json(args.json, report)
    report["load_end"] = os.getloadavg()
    print(f"load average {os.getloadavg()}")
    if args.json:
        write_json(args.json, report)
    missing = [f"{r['family']} n={r['n']}" for r in report["runs"] if "opt" not in r["evaluation"]]
    if missing:
        print("no exact LP solver finished for: " + ", ".join(missing), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
