#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end checks of popalloc-compare (ctest: bench:popalloc-compare).

    check_compare.py PATH/TO/popalloc-compare WORK_DIR

1. target-priority (with contention) and linear instances: exit 0, every LP solver of this build
   finished, all finished solvers agree with the best objective to 1e-6 relative, popalloc's dual
   bound is not below any LP optimum, and every LP objective the solver reports matches the one
   recomputed from its x.
2. the exit status follows the agreement: with popalloc stopped at a 5e-2 gap the exit status is 3
   exactly when some relative difference exceeds --agreement.
3. a time limit is honoured: GLPK's interior point (which has no limit of its own) on an instance
   it needs longer for is killed shortly after the limit (CPU time), and CLP stops itself.
4. bad input exits 2 with a message, and writes no JSON.
5. log utility: the LP solvers say not_an_lp, popalloc converges.
Uses only the standard library (runs with any python3).
"""
import json
import os
import subprocess
import sys

PROGRAM = sys.argv[1]
WORK = sys.argv[2]
os.makedirs(WORK, exist_ok=True)
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what)


def run(args, name):
    path = os.path.join(WORK, name + ".json")
    if os.path.exists(path):
        os.remove(path)
    proc = subprocess.run([PROGRAM, *args, "--json", path, "--quiet"], capture_output=True,
                          text=True, timeout=240)
    data = json.load(open(path)) if os.path.exists(path) else None
    return proc, data


def rows(data):
    return {s["name"]: s for s in data["solvers"]}


def check_agreement(args, name):
    proc, data = run(args, name)
    check(proc.returncode == 0, f"{name}: exit {proc.returncode}: {proc.stderr.strip()}")
    if data is None:
        check(False, f"{name}: no JSON written")
        return
    check(data["agreement"] is True, f"{name}: agreement false: {data['problems']}")
    best = data["best_objective"]
    scale = max(abs(best), 1.0)
    lp_rows = 0
    for s in data["solvers"]:
        if s["status"] in ("not_built", "skipped"):
            continue
        check(s["finished"], f"{name}: {s['name']} did not finish ({s['status']}, {s['message']})")
        if not s["finished"]:
            continue
        check(s["relative_difference"] <= 1e-6,
              f"{name}: {s['name']} objective {s['objective']} vs best {best}")
        check(abs((best - s["objective"]) / scale - s["relative_difference"]) <= 1e-12,
              f"{name}: {s['name']} relative difference inconsistent")
        if s["name"].startswith("popalloc"):
            check(s["dual_bound"] >= best - 1e-9 * scale,
                  f"{name}: {s['name']} dual bound {s['dual_bound']} below best {best}")
            check(s["objective"] <= s["dual_bound"] + 1e-9 * scale,
                  f"{name}: {s['name']} primal above its own bound")
            check(len(s["trace"]) == s["iterations"] or len(s["trace"]) > 0,
                  f"{name}: {s['name']} has no gap trace")
        else:
            lp_rows += 1
            # The LP the solver saw has the same objective as popalloc's utility at its x.
            check(abs(s["reported_objective"] - s["objective"]) <= 1e-6 * scale,
                  f"{name}: {s['name']} reports {s['reported_objective']} but its x gives "
                  f"{s['objective']}")
            check(s["max_violation"] <= 1e-6, f"{name}: {s['name']} violation {s['max_violation']}")
            check(s["speedup"] is not None and s["speedup"] > 0, f"{name}: {s['name']} no speed-up")
    print(f"{name}: {lp_rows} LP solvers agree with popalloc, best objective {best}")


check_agreement(["--generate", "400,8", "--seed", "7", "--target-scale", "3",
                 "--time-limit", "60"], "target_priority")
check_agreement(["--generate", "300,4", "--seed", "2", "--utility", "linear",
                 "--time-limit", "60"], "linear")

# 2. Exit status follows the agreement check.
proc, data = run(["--generate", "400,8", "--seed", "7", "--target-scale", "3", "--tolerance",
                  "5e-2", "--time-limit", "60", "--solvers", "popalloc,clp-dual,glpk-dual",
                  "--agreement", "1e-6"], "loose")
if data is None:
    check(False, "loose: no JSON written")
else:
    finished = [s for s in data["solvers"] if s["finished"]]
    worst = max(s["relative_difference"] for s in finished)
    expected = 3 if worst > 1e-6 else 0
    check(proc.returncode == expected,
          f"loose: worst difference {worst:.3e}, exit {proc.returncode}, expected {expected}")
    check((proc.returncode == 3) == (data["agreement"] is False), "loose: JSON agreement flag")
    print(f"loose: popalloc at gap 5e-2 differs by {worst:.2e}, exit {proc.returncode}")

# 3. Time limits.
proc, data = run(["--generate", "10000,8", "--seed", "1", "--target-scale", "3", "--time-limit",
                  "0.5", "--solvers", "popalloc,clp-primal,glpk-interior"], "limits")
if data is not None:
    r = rows(data)
    for name, allowed in (("clp-primal", ("time_limit", "killed_at_limit")),
                          ("glpk-interior", ("killed_at_limit", "time_limit"))):
        s = r.get(name)
        if s is None or s["status"] == "not_built":
            continue
        check(s["status"] in allowed, f"limits: {name} status {s['status']}")
        # The limit is CPU time: 0.5 s + 5 s grace (RLIMIT_CPU) + loading; the wall-clock
        # backstop is 3 x 0.5 + 60 s.
        check(s["cpu_seconds"] < 0.5 + 5 + 3, f"limits: {name} used {s['cpu_seconds']} CPU s")
        check(s["seconds"] < 3 * 0.5 + 60 + 5, f"limits: {name} ran {s['seconds']} wall s")
        check(not s["finished"], f"limits: {name} counted as finished past its limit")
        if s["speedup"] is not None:
            check(s["speedup_is_lower_bound"], f"limits: {name} speed-up must be a lower bound")
        print(f"limits: {name} {s['status']} after {s['cpu_seconds']:.2f} CPU s, "
              f"{s['seconds']:.2f} wall s")
else:
    check(False, f"limits: no JSON ({proc.stderr.strip()})")

# 4. Bad input.
for args, text in ((["--generate", "0,8"], "--generate N must be >= 1"),
                   (["--solvers", "popalloc,cplex"], "unknown solver 'cplex'"),
                   (["--utility", "power:2"], "0 < ALPHA < 1"),
                   (["--target-scale", "nan"], "--target-scale"),
                   (["--jobs", os.path.join(WORK, "missing.csv"), "--resources",
                     os.path.join(WORK, "missing.csv")], "missing.csv")):
    proc, data = run(args, "bad")
    check(proc.returncode == 2 and text in proc.stderr and data is None,
          f"bad input {args}: exit {proc.returncode}, stderr {proc.stderr.strip()!r}")

# 5. Non-LP utility.
proc, data = run(["--generate", "300,4", "--utility", "log"], "log")
check(proc.returncode == 0, f"log: exit {proc.returncode}")
if data is not None:
    r = rows(data)
    check(r["popalloc"]["status"] == "converged", "log: popalloc did not converge")
    check(all(s["status"] in ("not_an_lp", "not_built") for s in data["solvers"]
              if not s["name"].startswith("popalloc")), "log: an LP solver ran on a non-LP")

if failures:
    print(f"{len(failures)} check(s) failed")
    sys.exit(1)
print("all popalloc-compare checks passed")
