#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Turns the benchmark JSON files into the PNGs of docs/benchmarks.md.

    python3 scripts/plot_benchmarks.py [--results benchmarks/results] [--out docs/img]

Reads every popalloc-compare JSON (lp_*.json) and compare_conic.py JSON (conic_*.json) in the
results directory and writes:
  bench_time_vs_n.png     CPU time vs n, log-log, one line per solver (open markers, arrow:
                          the solver hit its time limit, the true time is larger)
  bench_speedup_vs_n.png  popalloc's speed-up in CPU time (vs 1 thread) over each LP solver vs n
  bench_gap_vs_time.png   popalloc's relative duality gap vs time, one line per n
  bench_conic.png         log utility: popalloc vs Clarabel / SCS / ECOS, time vs n
With --markdown it also prints the tables of docs/benchmarks.md (from the same files).
Needs only Debian's python3-matplotlib (Agg backend, no display).
"""
import argparse
import glob
import json
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {
    "popalloc": ("C0", "o", "-"), "popalloc-1thread": ("C0", "s", "--"),
    "popalloc-thrust": ("C9", "^", "-"),
    "clp-primal": ("C1", "v", "-"), "clp-dual": ("C2", "^", "-"), "clp-barrier": ("C3", "D", "-"),
    "glpk-primal": ("C4", "v", ":"), "glpk-dual": ("C5", "^", ":"),
    "glpk-interior": ("C6", "D", ":"), "gurobi": ("C7", "P", "-"), "mosek": ("C8", "X", "-"),
    "CLARABEL": ("C1", "D", "-"), "SCS": ("C2", "v", "-"), "ECOS": ("C3", "^", "-"),
    "HIGHSPY": ("C4", "P", "-"),
}
FINISHED = ("optimal", "converged")


def load(pattern):
    out = []
    for path in sorted(glob.glob(pattern)):
        with open(path) as f:
            out.append(json.load(f))
    return out


def series_lp(runs):
    """solver -> list of (n, seconds, finished)"""
    by_solver = {}
    for run in runs:
        for s in run["solvers"]:
            if s["status"] in ("not_built", "not_an_lp", "skipped"):
                continue
            by_solver.setdefault(s["name"], []).append(
                (run["jobs"], s["cpu_seconds"], s["status"] in FINISHED, s))
    for v in by_solver.values():
        v.sort(key=lambda p: p[0])
    return by_solver


def plot_times(ax, by_solver, title):
    for name, points in by_solver.items():
        color, marker, line = STYLE.get(name, ("k", "o", "-"))
        done = [(n, t) for n, t, f, _ in points if f]
        if done:
            ax.plot(*zip(*done), marker=marker, linestyle=line, color=color, label=name)
        for n, t, f, _ in points:
            if not f:  # a lower bound: the solver was stopped here
                ax.plot([n], [t], marker=marker, markerfacecolor="none", color=color,
                        linestyle="none", label=None if done else name + " (stopped)")
                ax.annotate("", xy=(n, t * 2.2), xytext=(n, t),
                            arrowprops=dict(arrowstyle="->", color=color))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("jobs n")
    ax.set_ylabel("CPU seconds (all threads)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--results", default="benchmarks/results")
    parser.add_argument("--out", default="docs/img")
    parser.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    args = parser.parse_args()
    if args.markdown:
        return print_markdown(args.results)
    os.makedirs(args.out, exist_ok=True)
    written = []

    lp_runs = sorted(load(os.path.join(args.results, "lp_*.json")), key=lambda r: r["jobs"])
    if lp_runs:
        m = lp_runs[0]["resources"]
        by_solver = series_lp(lp_runs)
        fig, ax = plt.subplots(figsize=(7, 5))
        limit = max(r["time_limit"] for r in lp_runs)
        plot_times(ax, by_solver, f"target-priority LP, m = {m}: CPU time to solve "
                                  f"(limit {limit:g} CPU s)")
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "bench_time_vs_n.png"), dpi=110)
        plt.close(fig)
        written.append("bench_time_vs_n.png")

        fig, ax = plt.subplots(figsize=(7, 5))
        for name, points in by_solver.items():
            if name.startswith("popalloc"):
                continue
            color, marker, line = STYLE.get(name, ("k", "o", "-"))
            done = [(n, s["cpu_speedup"]) for n, _, f, s in points if f and s["cpu_speedup"]]
            low = [(n, s["cpu_speedup"]) for n, _, f, s in points
                   if not f and s["cpu_speedup"]]
            if done:
                ax.plot(*zip(*done), marker=marker, linestyle=line, color=color, label=name)
            for n, v in low:
                ax.plot([n], [v], marker=marker, markerfacecolor="none", color=color,
                        linestyle="none")
                ax.annotate("", xy=(n, v * 2.2), xytext=(n, v),
                            arrowprops=dict(arrowstyle="->", color=color))
        ax.axhline(1.0, color="k", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("jobs n")
        ax.set_ylabel("LP solver CPU time / popalloc CPU time (1 thread)")
        ax.set_title(f"popalloc's speed-up in CPU time, m = {m}; open: lower bound")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "bench_speedup_vs_n.png"), dpi=110)
        plt.close(fig)
        written.append("bench_speedup_vs_n.png")

        fig, ax = plt.subplots(figsize=(7, 5))
        for k, run in enumerate(lp_runs):
            pop = next((s for s in run["solvers"] if s["name"] == "popalloc"), None)
            if not pop or not pop.get("trace"):
                continue
            t = [p[0] for p in pop["trace"] if p[3] is not None and p[3] > 0]
            g = [p[3] for p in pop["trace"] if p[3] is not None and p[3] > 0]
            ax.plot(t, g, color=f"C{k}", label=f"n = {fmt_n(run['jobs'])}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("wall-clock seconds since the start of the solve (2 threads, loaded machine)")
        ax.set_ylabel("certified relative duality gap")
        ax.set_title("popalloc, target-priority, m = %d: gap vs time" % m)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(args.out, "bench_gap_vs_time.png"), dpi=110)
        plt.close(fig)
        written.append("bench_gap_vs_time.png")

    for report in load(os.path.join(args.results, "conic_*.json")):
        by_solver = {}
        for run in report["runs"]:
            for s in run["popalloc"]:
                by_solver.setdefault(s["name"], []).append(
                    (run["n"], s["cpu_seconds"], s["status"] in FINISHED, s))
            for s in run["solvers"]:
                seconds = s.get("solver_cpu_seconds", s.get("cpu_seconds"))
                by_solver.setdefault(s["name"], []).append(
                    (run["n"], seconds, s["status"] in ("optimal", "optimal_inaccurate"), s))
        fig, ax = plt.subplots(figsize=(7, 5))
        plot_times(ax, by_solver, f"{report['utility']} utility, m = {report['resources']}: "
                                  "popalloc vs conic solvers (solver CPU time)")
        fig.tight_layout()
        name = "bench_conic_%s.png" % report["utility"].replace(":", "_").replace(".", "")
        fig.savefig(os.path.join(args.out, name), dpi=110)
        plt.close(fig)
        written.append(name)

    for w in written:
        print(os.path.join(args.out, w))


def fmt_n(n):
    exponent = int(round(__import__("math").log10(n)))
    return f"1e{exponent}" if 10 ** exponent == n else str(n)


def fmt_time(seconds, finished):
    if seconds is None:
        return "-"
    text = f"{seconds:.3g}" if seconds < 100 else f"{seconds:.0f}"
    return text if finished else "> " + text


def fmt_ratio(value, lower_bound):
    if value is None:
        return "-"
    text = f"{value:.3g}x" if value < 1000 else f"{value:.0f}x"
    return ("> " if lower_bound else "") + text


def print_markdown(results):
    lp_runs = sorted(load(os.path.join(results, "lp_*.json")), key=lambda r: r["jobs"])
    if lp_runs:
        print("| n | solver | status | CPU s | wall s | objective | rel. diff | "
              "speed-up, CPU (vs popalloc 1 thread) | speed-up, wall (vs popalloc 2 threads) |")
        print("|---|---|---|---|---|---|---|---|---|")
        for run in lp_runs:
            for s in run["solvers"]:
                if s["status"] in ("not_built", "skipped"):
                    continue
                done = s["status"] in FINISHED
                status = s["status"]
                if not done and s.get("time_limit") is not None and s["time_limit"] < run["time_limit"]:
                    status += f" (stopped at {s['time_limit']:g} CPU s)"
                obj = f"{s['objective']:.10g}" if done else "-"
                diff = (f"{s['relative_difference']:.1e}" if done and
                        s["relative_difference"] is not None else "-")
                print(f"| {fmt_n(run['jobs'])} | {s['name']} | {status} | "
                      f"{fmt_time(s['cpu_seconds'], done)} | {fmt_time(s['seconds'], done)} | "
                      f"{obj} | {diff} | {fmt_ratio(s.get('cpu_speedup'), not done)} | "
                      f"{fmt_ratio(s.get('speedup'), not done)} |")
        print()
        # Headline: largest n at which popalloc and an LP solver both finished.
        best = None
        for run in lp_runs:
            for s in run["solvers"]:
                if s["name"].startswith("popalloc") or s["status"] not in FINISHED:
                    continue
                if best is None or run["jobs"] > best[0] or (
                        run["jobs"] == best[0] and s["cpu_seconds"] < best[1]["cpu_seconds"]):
                    best = (run["jobs"], s)
        if best:
            print(f"Headline: largest n both finish = {fmt_n(best[0])}; fastest LP solver there "
                  f"{best[1]['name']}: CPU speed-up {best[1]['cpu_speedup']:.3g}x, "
                  f"wall speed-up {best[1]['speedup']:.3g}x")
            print()
    for report in load(os.path.join(results, "conic_*.json")):
        print(f"Conic comparison, utility {report['utility']}, m = {report['resources']}")
        print()
        print("| n | solver | status | CPU s (solver) | wall s (solver) | feasible objective | "
              "gap to popalloc's bound | speed-up, CPU | speed-up, wall |")
        print("|---|---|---|---|---|---|---|---|---|")
        for run in report["runs"]:
            for s in run["popalloc"]:
                bound = run["popalloc"][0]["dual_bound"]
                gap = (bound - s["objective"]) / max(abs(bound), 1.0)
                print(f"| {fmt_n(run['n'])} | {s['name']} | {s['status']} | "
                      f"{fmt_time(s['cpu_seconds'], True)} | {fmt_time(s['seconds'], True)} | "
                      f"{s['objective']:.10g} | {gap:.1e} | - | - |")
            for s in run["solvers"]:
                done = s["status"] in ("optimal", "optimal_inaccurate")
                obj = s.get("feasible_objective")
                gap = s.get("gap_to_bound")
                print(f"| {fmt_n(run['n'])} | {s['name']} | {s['status']} | "
                      f"{fmt_time(s.get('solver_cpu_seconds'), done)} | "
                      f"{fmt_time(s.get('solve_seconds', s.get('total_seconds')), done)} | "
                      f"{'-' if obj is None else format(obj, '.10g')} | "
                      f"{'-' if gap is None else format(gap, '.1e')} | "
                      f"{fmt_ratio(s.get('cpu_speedup'), not done)} | "
                      f"{fmt_ratio(s.get('speedup'), not done)} |")
        print()
    kernels = os.path.join(results, "kernels.json")
    if os.path.exists(kernels):
        with open(kernels) as f:
            data = json.load(f)
        print("| benchmark | wall ms | CPU ms (all threads) | jobs per CPU s | evaluations | gap |")
        print("|---|---|---|---|---|---|")
        for b in data["benchmarks"]:
            if b.get("run_type") == "aggregate":
                continue
            ev = b.get("evaluations")
            gap = b.get("gap")
            print(f"| {b['name'].replace('/process_time', '')} | {b['real_time']:.3g} | {b['cpu_time']:.3g} | "
                  f"{b.get('jobs_per_s', 0):.3g} | {'-' if ev is None else int(ev)} | "
                  f"{'-' if gap is None else format(gap, '.1e')} |")
        print()


if __name__ == "__main__":
    main()
