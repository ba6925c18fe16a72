#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Markdown tables from the JSON files of run_te_table.sh: python3 make_table.py OUT_DIR."""
import json
import os
import sys

out = sys.argv[1]


def load(name):
    path = os.path.join(out, name + ".json")
    return json.load(open(path)) if os.path.exists(path) else None


def gap(r, ref, minimize=False):
    if r is None or ref is None:
        return "-"
    g = (r["objective"] - ref["objective"]) / abs(ref["objective"])
    return "%.1e" % (g if minimize else -g)


def sec(r):
    return "-" if r is None else "%.2f" % r["seconds"]


topologies = sorted({f.split("-1-lp")[0] for f in os.listdir(out) if f.endswith("-1-lp.json")})
print("| topology | nodes / arcs | scale | commodities / paths | LP optimum | LP s | price s | price gap |"
      " POP-4 price s / gap | POP-16 price s / gap | POP-4 LP s / gap | POP-16 LP s / gap |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
for t in topologies:
    for scale in (1, 8, 64):
        lp = load("%s-%d-lp" % (t, scale))
        if lp is None:
            continue
        row = [t, "%d / %d" % (lp["nodes"], lp["arcs"]), str(scale),
               "%d / %d" % (lp["commodities"], lp["paths"]), "%.6g" % lp["objective"], sec(lp)]
        pr = load("%s-%d-price" % (t, scale))
        row += [sec(pr), gap(pr, lp)]
        for solver in ("price", "lp"):
            for k in (4, 16):
                r = load("%s-%d-pop%d-%s" % (t, scale, k, solver))
                row.append("%s / %s" % (sec(r), gap(r, lp)))
        print("| " + " | ".join(row) + " |")
print()
print("| topology | scale | objective | LP optimum | LP s | price objective | price s | price gap | price certified gap | core solves / evaluations |")
print("|---|---|---|---|---|---|---|---|---|---|")
for t in ("b4-teavar", "Uninett2010"):
    for scale in (1, 8, 64):
        for objective in ("concurrent-flow", "min-max-utilization"):
            lp = load("%s-%d-%s-lp" % (t, scale, objective))
            pr = load("%s-%d-%s-price" % (t, scale, objective))
            if lp is None or pr is None:
                continue
            mini = objective == "min-max-utilization"
            print("| %s | %d | %s | %.6g | %s | %.6g | %s | %s | %.1e | %d / %d |" % (
                t, scale, objective, lp["objective"], sec(lp), pr["objective"], sec(pr),
                gap(pr, lp, mini), pr["relative_gap"], pr["solves"], pr["iterations"]))
