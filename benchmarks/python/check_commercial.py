#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Agreement test: popalloc against Gurobi and MOSEK (compare_conic.py's GUROBI / MOSEK workers)
on instances inside gurobipy's restricted licence, plus one over it.

    benchmarks/python/run-commercial-test.sh           # venv, packages, popalloc-solve, this
    PYTHON benchmarks/python/check_commercial.py --solve build/test/examples/popalloc-solve \\
        [--require GUROBI] [--stubs benchmarks/compare/stub]

popalloc is a maximisation with a certificate: objective <= OPT <= dual bound. For each case
popalloc-solve generates the instance (--write-instance), solves it to a 1e-9 relative gap (it
stops where its gap stalls, about 1e-8 here) and writes objective and dual bound; each solver then
solves the same instance file in a child process. A case passes for a solver when the solver
finished optimal with an x that violates no constraint by more than 1e-6 x max(1, max_j R_j), its
OPT (recomputed from that x) equals popalloc's objective to --agreement (1e-6) relative to
max(|OPT|, 1), popalloc's objective <= OPT and OPT <= popalloc's dual bound (both to 1e-9
relative slack, the solvers' own rounding). In the nonlinear case the solver's point is optimal
only to its tolerances, so objective <= OPT gives way to: popalloc's objective lies under the
solver's proved bound. A solver that cannot run is skipped with its one-line
reason; one named by --require must run on every case inside the restricted licence, and on the
case over it it must either solve it (a full licence) or say "over the restricted licence".
--stubs also checks that every entry point declared in the compile-check stub headers of
benchmarks/compare/stub/ is exported by the solver library the Python package ships.

Prints one line per check and the summary `commercial agreement: N passed, M skipped (...)`;
exit status 1 when a check failed, 2 on a usage error.
"""
import argparse
import ctypes
import glob
import json
import os
import re
import subprocess
import sys

import commercial
import compare_conic as cc

SLACK = 1e-9  # relative slack of the ordering checks: the solvers' rounding, not their tolerance


class Case:
    def __init__(self, utility, family, n, m, over_limit=False):
        self.utility, self.family, self.n, self.m = utility, family, n, m
        self.over_limit = over_limit  # more than 2,000 variables: over the restricted licence

    def name(self):
        return f"{self.utility} {self.family} {self.n}x{self.m}"


CASES = [
    Case("target-priority", "classes:tight", 200, 8),
    Case("target-priority", "paper:tight", 200, 8),
    Case("linear", "uniform", 200, 8),
    # Nonlinear models have a much smaller restricted limit (a 40 x 4 log model is refused).
    Case("log", "classes:tight", 10, 4),
    Case("target-priority", "classes:tight", 2000, 8, over_limit=True),
]


def popalloc(args, case):
    prefix = cc.instance_prefix(args.work, case.utility, case.family, case.n, case.m)
    out = prefix + ".popalloc.json"
    if os.path.exists(out):
        os.remove(out)
    command = [args.solve, "--generate", f"{case.n},{case.m}", "--family", case.family,
               "--seed", "1", "--utility", case.utility, "--tolerance", "1e-9",
               "--max-iterations", "5000", "--threads", "1", "--write-instance", prefix,
               "--output", out, "--quiet"]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"popalloc-solve exited with {proc.returncode}: {' '.join(command)}\n"
                           + proc.stderr)
    with open(out) as f:
        return prefix, json.load(f)


def max_capacity(prefix):
    with open(prefix + ".resources.csv") as f:
        next(f)
        return max(float(line.rsplit(",", 1)[1]) for line in f if line.strip())


def judge(case, prefix, pop, r, agreement):
    """The failed checks of one finished solver run (empty: it agrees)."""
    problems = []
    if r["status"] != "optimal":
        return [f"status {r['status']} {r.get('message', '')}".strip()]
    opt = r.get("feasible_objective") if case.utility not in ("linear", "target-priority") \
        else r.get("objective")
    violation = r.get("max_violation")
    if opt is None or violation is None:
        return ["no solution returned"]
    feasibility = 1e-6 * max(1.0, max_capacity(prefix))
    if violation > feasibility:
        problems.append(f"x violates a constraint by {violation:.2e} (> {feasibility:.1e})")
    scale = max(abs(opt), 1.0)
    difference = abs(opt - pop["objective"]) / scale
    if difference > agreement:
        problems.append(f"OPT {opt:.12g} and popalloc's objective {pop['objective']:.12g} "
                        f"differ by {difference:.2e} relative (> {agreement:g})")
    # An LP optimum is exact to rounding, so popalloc's feasible point cannot beat it; a
    # nonlinear solver's point is optimal only to its tolerances (checked by its bound below).
    if case.utility in ("linear", "target-priority") and pop["objective"] > opt + SLACK * scale:
        problems.append(f"popalloc's objective {pop['objective']:.12g} above OPT {opt:.12g}")
    if opt > pop["dual_bound"] + SLACK * scale:
        problems.append(f"OPT {opt:.12g} above popalloc's dual bound {pop['dual_bound']:.12g}")
    if "bound" in r and pop["objective"] > r["bound"] + SLACK * scale:
        problems.append(f"popalloc's objective {pop['objective']:.12g} above the solver's "
                        f"proved bound {r['bound']:.12g}")
    reported = r.get("reported_objective")
    if case.utility in ("linear", "target-priority") and reported is not None and \
            abs(reported - r["objective"]) > agreement * scale:
        problems.append(f"reported objective {reported:.12g} is not the objective of its x "
                        f"({r['objective']:.12g})")
    return problems


def stub_functions(path):
    with open(path) as f:
        text = f.read()
    return sorted(set(re.findall(r"\b((?:GRB|MSK_)\w+)\s*\(", text)))


def solver_library(package, pattern):
    """The shared library a Python package ships (gurobipy/.libs, mosek/), or None."""
    import importlib.util
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        found = sorted(glob.glob(os.path.join(location, pattern)))
        if found:
            return found[-1]
    return None


def check_stubs(stubs):
    """(name, problems or None when skipped, reason) per stub header."""
    out = []
    for header, package, pattern in (("gurobi_c.h", "gurobipy", ".libs/libgurobi*.so*"),
                                     ("mosek.h", "mosek", "libmosek64.so*")):
        path = os.path.join(stubs, header)
        names = stub_functions(path)
        library = solver_library(package, pattern)
        label = f"stub {header}: {len(names)} entry points"
        if library is None:
            out.append((label, None, f"{package} is not installed"))
            continue
        lib = ctypes.CDLL(library)
        missing = [n for n in names if not hasattr(lib, n)]
        label += f" exported by {os.path.basename(library)}"
        out.append((label, [f"not exported: {', '.join(missing)}"] if missing else [], ""))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--solve", required=True, help="the popalloc-solve executable")
    parser.add_argument("--work", default="build/commercial-check", help="instance files")
    parser.add_argument("--solvers", default="GUROBI,MOSEK")
    parser.add_argument("--require", default="",
                        help="solvers that must run (comma-separated): skipping one inside the "
                             "restricted licence fails the test")
    parser.add_argument("--agreement", type=float, default=1e-6)
    parser.add_argument("--time-limit", type=float, default=120.0, help="CPU s per solver run")
    parser.add_argument("--stubs", help="benchmarks/compare/stub: check its declared names")
    parser.add_argument("--json", help="write every run here")
    args = parser.parse_args()
    if not os.access(args.solve, os.X_OK):
        parser.error(f"--solve: '{args.solve}' is not an executable")
    solvers = [s for s in args.solvers.split(",") if s]
    required = {s for s in args.require.split(",") if s}
    for s in solvers + sorted(required):
        if s not in commercial.SOLVERS:
            parser.error(f"unknown solver {s} ({', '.join(commercial.SOLVERS)})")
    if not required <= set(solvers):
        parser.error("--require names a solver that --solvers leaves out")
    os.makedirs(args.work, exist_ok=True)
    print(f"load average {os.getloadavg()}, {os.cpu_count()} cores; versions "
          + ", ".join(f"{k} {v}" for k, v in cc.versions().items() if k in (
              "gurobipy", "mosek", "numpy", "python")))
    passed, failed, skips, report = 0, 0, {}, []
    for case in CASES:
        prefix, pop = popalloc(args, case)
        print(f"{case.name()}: popalloc {pop['status']}, objective {pop['objective']:.12g}, "
              f"dual bound {pop['dual_bound']:.12g}, gap {pop['relative_gap']:.1e}, "
              f"{pop['seconds']:.3g} s", flush=True)
        for solver in solvers:
            r = cc.run_solver(solver, prefix, case.utility, args.time_limit)
            report.append({"case": case.name(), "solver": solver, "popalloc": pop, "result": r})
            label = f"  {solver:<7} {case.name()}"
            if r["status"] == "skipped":
                reason = r["message"]
                over = reason.startswith(commercial.OVER_RESTRICTED)
                if solver in required and not (over and case.over_limit):
                    failed += 1
                    print(f"FAIL {label}: required solver skipped: {reason}")
                else:
                    key = (solver, reason.split(" (")[0])
                    skips[key] = skips.get(key, 0) + 1
                    print(f"skip {label}: {reason}")
                continue
            problems = judge(case, prefix, pop, r, args.agreement)
            opt = r.get("feasible_objective") if case.utility == "log" else r.get("objective")
            if problems:
                failed += 1
                print(f"FAIL {label}: " + "; ".join(problems))
            else:
                passed += 1
                what = "OPT" if case.utility in ("linear", "target-priority") else "objective"
                print(f"ok   {label}: {what} {opt:.12g} in {r['solve_seconds']:.3g} s "
                      f"({r['solver_cpu_seconds']:.3g} CPU s); relative to it popalloc's "
                      f"objective {(pop['objective'] - opt) / max(abs(opt), 1.0):+.1e}, "
                      f"bound {(pop['dual_bound'] - opt) / max(abs(opt), 1.0):+.1e}")
            sys.stdout.flush()
    if args.stubs:
        for label, problems, reason in check_stubs(args.stubs):
            if problems is None:
                skips[(label.strip(), reason)] = 1
                print(f"skip   {label}: {reason}")
            elif problems:
                failed += 1
                print(f"FAIL   {label}: " + "; ".join(problems))
            else:
                passed += 1
                print(f"ok     {label}")
    if args.json:
        with open(args.json + ".tmp", "w") as f:
            json.dump({"cases": report, "load_end": os.getloadavg()}, f, indent=1)
        os.replace(args.json + ".tmp", args.json)
    summary = f"commercial agreement: {passed} passed, {sum(skips.values())} skipped"
    if skips:
        summary += " (" + "; ".join(f"{who}: {why}" + (f" x{count}" if count > 1 else "")
                                    for (who, why), count in skips.items()) + ")"
    if failed:
        summary += f", {failed} FAILED"
    print(summary)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
