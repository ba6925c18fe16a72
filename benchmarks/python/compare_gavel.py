#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Side-by-side: popalloc-schedule against Gavel's own policy classes on the same jobs.

Gavel's code is not part of this repository: pass the directory that holds Gavel's
`scheduler/policies` package with --gavel. The jobs come from popalloc-schedule itself
(`--jobs N --seed S`, Gavel's generator, Gavel's throughputs from data/gavel/), written with
`--write-state`, so both sides see the same throughputs, scale factors, weights and remaining
steps. For every policy and repetition the script runs popalloc-schedule (time: its `seconds`,
allocate()'s wall time) and Gavel's policy (time: the get_allocation call, model building and
solve), recomputes both objectives from the allocations with the same formula, checks that they
agree to --rtol, and prints one JSON line per run plus a median summary with load averages.

  python compare_gavel.py --gavel /path/to/gavel --schedule build/rel/examples/popalloc-schedule \
      --jobs 10000 --cluster 1000:1000:1000 --policy max-min --repeat 3

Policies: max-min (Gavel's MaxMinFairnessPolicyWithPerf), water-filling
(MaxMinFairnessWaterFillingPolicyWithPerf: ECOS + GLPK_MI MILPs), min-makespan
(MinTotalDurationPolicyWithPerf: bisection to a 5 % band, so its objective is also compared with
the exact LP max u s.t. ET_i >= u r_i solved by cvxpy), proportional-fairness (Gavel has no
such policy: the script's own cvxpy model, max sum_i w_i log(ET_i / P_i) on Gavel's
constraints). --perturb F multiplies every job's throughputs by independent factors in
[1 - F, 1 + F] (every job distinct: popalloc's worst case) before both sides run.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

TYPES = ["v100", "p100", "k80"]  # Gavel's 36:36:36 order in popalloc's cluster spec


def load_state(path):
    with open(path) as f:
        return json.load(f)


def perturb_state(state, fraction, seed):
    rng = random.Random(seed)
    for j in state["jobs"]:
        for t in list(j["throughputs"]):
            if j["throughputs"][t] > 0:
                j["throughputs"][t] *= 1.0 + fraction * (2.0 * rng.random() - 1.0)
    return state


def arrays(state):
    types = sorted(state["cluster"])  # Gavel flattens worker types in sorted order
    jobs = sorted(state["jobs"], key=lambda j: j["id"])
    ids = [j["id"] for j in jobs]
    T = np.array([[j["throughputs"].get(t, 0.0) for t in types] for j in jobs])
    s = np.array([float(j.get("scale_factor", 1)) for j in jobs])
    w = np.array([float(j.get("priority_weight", 1)) for j in jobs])
    r = np.array([float(j.get("remaining_steps", j.get("total_steps", 0))) for j in jobs])
    n = np.array([float(state["cluster"][t]) for t in types])
    return ids, types, T, s, w, r, n


def objectives(x, T, s, w, r, n):
    """Every policy's objective of allocation x (jobs x types) with popalloc's definitions."""
    usable = (T > 0) & (s[:, None] <= n[None, :])
    P = (T * usable) @ n / n.sum()
    et = np.sum(T * usable * x, axis=1)
    ok = P > 0
    out = {
        "max-min": float(np.min(s[ok] * et[ok] / (w[ok] * P[ok]))),
        "proportional-fairness": float(np.sum(w[ok] * np.log(et[ok] / P[ok]))),
    }
    work = ok & (r > 0)
    out["min-makespan"] = float(np.max(r[work] / et[work]))
    out["water-filling"] = out["max-min"]
    # Feasibility of x: rows <= 1, capacity.
    out["max_row"] = float(np.max(x.sum(axis=1)))
    out["max_capacity_ratio"] = float(np.max((s[:, None] * x).sum(axis=0) / n))
    return out


def run_popalloc(args, state_path, policy, out_path):
    cmd = [args.schedule, "--state", state_path, "--quiet", "--output", out_path,
           "--tolerance", str(args.tolerance), "--threads", str(args.threads)]
    cmd += {"max-min": ["--policy", "max-min-fairness", "--no-water-filling"],
            "water-filling": ["--policy", "max-min-fairness", "--water-filling"],
            "proportional-fairness": ["--policy", "proportional-fairness"],
            "min-makespan": ["--policy", "min-makespan"]}[policy]
    if args.class_lp_max_classes is not None:
        cmd += ["--class-lp-max-classes", str(args.class_lp_max_classes)]
    subprocess.run(cmd, check=True)
    with open(out_path) as f:
        out = json.load(f)
    return out, cmd


def popalloc_matrix(out, ids, types):
    row = {j["id"]: j for j in out["jobs"]}
    return np.array([[row[i]["allocation"].get(t, 0.0) for t in types] for i in ids])


def run_gavel(policy, ids, types, T, s, w, r, n, solver):
    import cvxpy as cp
    tput = {i: {t: float(T[k, c]) for c, t in enumerate(types)} for k, i in enumerate(ids)}
    scale = {i: int(s[k]) for k, i in enumerate(ids)}
    prio = {i: float(w[k]) for k, i in enumerate(ids)}
    spec = {t: int(n[c]) for c, t in enumerate(types)}
    start = time.perf_counter()
    extra = {}
    if policy == "max-min":
        from max_min_fairness import MaxMinFairnessPolicyWithPerf
        alloc = MaxMinFairnessPolicyWithPerf(solver=solver).get_allocation(tput, scale, prio, spec)
    elif policy == "water-filling":
        from max_min_fairness_water_filling import MaxMinFairnessWaterFillingPolicyWithPerf
        alloc = MaxMinFairnessWaterFillingPolicyWithPerf().get_allocation(tput, scale, prio, spec)
    elif policy == "min-makespan":
        from min_total_duration import MinTotalDurationPolicyWithPerf
        steps = {i: float(r[k]) for k, i in enumerate(ids)}
        alloc = MinTotalDurationPolicyWithPerf(solver=solver).get_allocation(tput, scale, steps,
                                                                             spec)
    else:
        alloc = None
    seconds = time.perf_counter() - start
    if alloc is not None:
        x = np.array([[alloc[i][t] for t in types] for i in ids])
    if policy in ("proportional-fairness", "min-makespan"):
        # The exact model on Gavel's constraints (x >= 0, sum_i s_i x_iw <= n_w,
        # sum_w x_iw <= 1); time on an unusable type earns nothing.
        usable = (T > 0) & (s[:, None] <= n[None, :])
        P = (T * usable) @ n / n.sum()
        xv = cp.Variable(T.shape, nonneg=True)
        et = cp.sum(cp.multiply(T * usable, xv), axis=1)
        cons = [cp.sum(cp.multiply(s[:, None] * np.ones_like(T), xv), axis=0) <= n,
                cp.sum(xv, axis=1) <= 1]
        t0 = time.perf_counter()
        if policy == "proportional-fairness":
            prob = cp.Problem(cp.Maximize(cp.sum(cp.multiply(w, cp.log(cp.multiply(
                et, 1.0 / P))))), cons)
        else:
            # u = 1 / makespan is ~1e-6 in steps/s units: scale the requirements to O(1) so
            # the solver's absolute tolerances do not dominate.
            u = cp.Variable()
            prob = cp.Problem(cp.Maximize(u), cons + [et >= u * (r / np.mean(r))])
        prob.solve(solver=solver)
        lp_seconds = time.perf_counter() - t0
        lp_x = np.clip(xv.value, 0.0, 1.0)
        if policy == "proportional-fairness":
            x, seconds = lp_x, lp_seconds
        else:
            extra = {"exact_lp_x": lp_x, "exact_lp_seconds": lp_seconds}
    return x, seconds, extra


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gavel", required=True, help="Gavel checkout (holds scheduler/policies)")
    ap.add_argument("--schedule", required=True, help="popalloc-schedule binary")
    ap.add_argument("--jobs", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cluster", default="1000:1000:1000", help="V100:P100:K80 counts")
    ap.add_argument("--policy", action="append",
                    choices=["max-min", "water-filling", "proportional-fairness",
                             "min-makespan"])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--solver", default="CLARABEL")
    ap.add_argument("--tolerance", type=float, default=1e-7)
    ap.add_argument("--rtol", type=float, default=1e-6)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--perturb", type=float, default=0.0)
    ap.add_argument("--class-lp-max-classes", type=int, default=None)
    ap.add_argument("--skip-gavel", action="store_true", help="popalloc only")
    ap.add_argument("--out-dir", default=None, help="keep the state and outputs here")
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(os.path.abspath(args.gavel), "scheduler", "policies"))
    sys.path.insert(0, os.path.join(os.path.abspath(args.gavel), "scheduler"))
    work = args.out_dir or tempfile.mkdtemp(prefix="compare_gavel_")
    os.makedirs(work, exist_ok=True)
    counts = args.cluster.split(":")
    cluster = ",".join(f"{t}:{c}" for t, c in zip(TYPES, counts))
    state_path = os.path.join(work, f"state_{args.jobs}_{args.seed}.json")
    subprocess.run([args.schedule, "--jobs", str(args.jobs), "--seed", str(args.seed),
                    "--cluster", cluster, "--policy", "isolated", "--quiet",
                    "--write-state", state_path], check=True)
    if args.perturb > 0:
        state = perturb_state(load_state(state_path), args.perturb, args.seed)
        state_path = state_path.replace(".json", f"_perturbed{args.perturb}.json")
        with open(state_path, "w") as f:
            json.dump(state, f)
    state = load_state(state_path)
    ids, types, T, s, w, r, n = arrays(state)
    summary = []
    for policy in args.policy or ["max-min"]:
        runs = []
        for rep in range(args.repeat):
            load_before = os.getloadavg()
            out, cmd = run_popalloc(args, state_path, policy,
                                    os.path.join(work, f"popalloc_{policy}_{rep}.json"))
            xp = popalloc_matrix(out, ids, types)
            ours = objectives(xp, T, s, w, r, n)
            rec = {"policy": policy, "jobs": args.jobs, "cluster": args.cluster,
                   "perturb": args.perturb, "rep": rep,
                   "popalloc_seconds": out["seconds"], "popalloc_objective": ours[policy],
                   "popalloc_reported_objective": out["objective"],
                   "popalloc_bound": out["dual_bound"], "popalloc_status": out["status"],
                   "core_solves": out["core_solves"], "popalloc_max_row": ours["max_row"],
                   "popalloc_max_capacity_ratio": ours["max_capacity_ratio"],
                   "command": " ".join(cmd)}
            if not args.skip_gavel:
                xg, gsec, extra = run_gavel(policy, ids, types, T, s, w, r, n, args.solver)
                theirs = objectives(xg, T, s, w, r, n)
                rec.update({"gavel_seconds": gsec, "gavel_objective": theirs[policy],
                            "gavel_max_row": theirs["max_row"],
                            "gavel_max_capacity_ratio": theirs["max_capacity_ratio"],
                            "speedup": gsec / out["seconds"]})
                ref = theirs[policy]
                if "exact_lp_x" in extra:
                    exact = objectives(extra["exact_lp_x"], T, s, w, r, n)[policy]
                    rec.update({"exact_lp_objective": exact,
                                "exact_lp_seconds": extra["exact_lp_seconds"]})
                    ref = exact
                rec["relative_difference"] = abs(ours[policy] - ref) / max(abs(ref), 1e-300)
                rec["agree"] = rec["relative_difference"] <= args.rtol
            rec["loadavg_before"] = load_before
            rec["loadavg_after"] = os.getloadavg()
            print(json.dumps(rec), flush=True)
            runs.append(rec)
        med = {"policy": policy, "jobs": args.jobs, "cluster": args.cluster,
               "perturb": args.perturb, "repeats": len(runs),
               "popalloc_seconds_median": statistics.median(x["popalloc_seconds"] for x in runs),
               "popalloc_seconds_range": [min(x["popalloc_seconds"] for x in runs),
                                          max(x["popalloc_seconds"] for x in runs)],
               "core_solves": runs[0]["core_solves"]}
        if not args.skip_gavel:
            med.update({
                "gavel_seconds_median": statistics.median(x["gavel_seconds"] for x in runs),
                "gavel_seconds_range": [min(x["gavel_seconds"] for x in runs),
                                        max(x["gavel_seconds"] for x in runs)],
                "max_relative_difference": max(x["relative_difference"] for x in runs),
                "all_agree": all(x["agree"] for x in runs)})
            med["speedup_of_medians"] = med["gavel_seconds_median"] / med[
                "popalloc_seconds_median"]
        med["loadavg"] = [runs[0]["loadavg_before"], runs[-1]["loadavg_after"]]
        print("SUMMARY " + json.dumps(med), flush=True)
        summary.append(med)
    return 0 if all(m.get("all_agree", True) for m in summary) else 1


if __name__ == "__main__":
    sys.exit(main())
