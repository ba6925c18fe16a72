#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Markdown tables from the output folder of run_te_table.sh: python3 make_table.py OUT_DIR.

A run stopped by run_te_table.sh's TIME_LIMIT left NAME.timeout ("LIMIT WALL"): its cell reads
"time limit after LIMIT s". A price solve, or any POP part, that stopped before reaching its
certified gap shows its status after the time ("iteration limit", "stalled"). When the LP of a row did not finish, gaps are measured against the
price solver's certified upper bound instead (marked "<="): the true loss is at most that.
"""
import json
import os
import re
import sys

out = sys.argv[1]
SCALES = (1, 8, 64)


def load(name):
    path = os.path.join(out, name + ".json")
    if os.path.exists(path):
        with open(path) as f:
            return json.load(f)
    path = os.path.join(out, name + ".timeout")
    if os.path.exists(path):
        with open(path) as f:
            return {"timeout": float(f.read().split()[0])}
    return None


def done(r):
    return r is not None and "timeout" not in r


def gap(r, ref, minimize=False, bound=False):
    if not done(r) or ref is None:
        return "-" if r is None else "n/a"
    g = (r["objective"] - ref) / abs(ref)
    g = g if minimize else -g
    return ("<= %.1e" if bound else "%.1e") % g


def sec(r):
    if r is None:
        return "-"
    if "timeout" in r:
        return "time limit after %g s" % r["timeout"]
    text = "%.2f" % r["seconds"]
    # A price solve (or a POP part) that stopped before its certified gap: say why.
    if r["status"] not in ("converged", "optimal"):
        text += " (%s)" % r["status"].replace("_", " ")
    return text


names = set()
for f in os.listdir(out):
    m = re.match(r"^(.*)-(\d+)-(lp|price|pop\d+-lp|pop\d+-price)\.(json|timeout)$", f)
    if m:
        names.add(m.group(1))
print("| topology | nodes / arcs | scale | commodities / paths | LP optimum | LP s | price s | price gap |"
      " POP-4 price s / gap | POP-16 price s / gap | POP-4 LP s / gap | POP-16 LP s / gap |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for t in sorted(names):
    for scale in SCALES:
        runs = {"lp": load("%s-%d-lp" % (t, scale)), "price": load("%s-%d-price" % (t, scale))}
        for solver in ("price", "lp"):
            for k in (4, 16):
                runs["pop%d-%s" % (k, solver)] = load("%s-%d-pop%d-%s" % (t, scale, k, solver))
        finished = [r for r in runs.values() if done(r)]
        if not finished and all(r is None for r in runs.values()):
            continue
        info = finished[0] if finished else None
        lp, pr = runs["lp"], runs["price"]
        if done(lp):
            ref, by_bound, optimum = lp["objective"], False, "%.6g" % lp["objective"]
        elif done(pr):
            # total flow: the price solver's dual bound is >= the LP optimum.
            ref, by_bound, optimum = pr["dual_bound"], True, "<= %.6g" % pr["dual_bound"]
        else:
            ref, by_bound, optimum = None, False, "-"
        row = [t, "%d / %d" % (info["nodes"], info["arcs"]) if info else "-", str(scale),
               "%d / %d" % (info["commodities"], info["paths"]) if info else "-", optimum, sec(lp),
               sec(pr), gap(pr, ref, bound=by_bound)]
        for solver in ("price", "lp"):
            for k in (4, 16):
                r = runs["pop%d-%s" % (k, solver)]
                row.append("%s / %s" % (sec(r), gap(r, ref, bound=by_bound)))
        print("| " + " | ".join(row) + " |")
print()
print("| topology | scale | objective | LP optimum | LP s | price objective | price s | price gap |"
      " price certified gap | core solves / evaluations |")
print("|---|---|---|---|---|---|---|---|---|---|")
for t in ("b4-teavar", "Uninett2010"):
    for scale in SCALES:
        for objective in ("concurrent-flow", "min-max-utilization"):
            lp = load("%s-%d-%s-lp" % (t, scale, objective))
            pr = load("%s-%d-%s-price" % (t, scale, objective))
            if lp is None and pr is None:
                continue
            mini = objective == "min-max-utilization"
            ref = lp["objective"] if done(lp) else None
            print("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                t, scale, objective, "%.6g" % ref if ref is not None else "-", sec(lp),
                "%.6g" % pr["objective"] if done(pr) else "-", sec(pr), gap(pr, ref, mini),
                "%.1e" % pr["relative_gap"] if done(pr) else "-",
                "%d / %d" % (pr["solves"], pr["iterations"]) if done(pr) else "-"))
