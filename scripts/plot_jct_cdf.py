#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Plots the CDF of job completion times from popalloc-simulate --per-job CSV files.

    python3 scripts/plot_jct_cdf.py --output docs/img/jct_cdf.png \
        "max-min (aware)=mmf.csv" "max-min (agnostic)=mmf_agnostic.csv" [--window 500:1500]

Each curve is LABEL=FILE (or just FILE, labelled by its name). Only finished jobs are plotted
(unfinished ones are counted in the legend); --window FIRST:LAST keeps job ids FIRST..LAST-1,
the jobs popalloc-simulate measured with the same --window. Needs matplotlib (Debian:
python3-matplotlib). Exit status 2 for unusable input.
"""
import argparse
import csv
import math
import os
import sys


def read_jcts(path, window):
    finished, unfinished = [], 0
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            for field in ("id", "status", "jct_hours"):
                if reader.fieldnames is None or field not in reader.fieldnames:
                    raise ValueError(f"{path}: no '{field}' column (not a --per-job CSV?)")
            for line, row in enumerate(reader, start=2):
                try:
                    job = int(row["id"])
                except ValueError:
                    raise ValueError(f"{path}:{line}: id '{row['id']}' is not an integer")
                if window and not (window[0] <= job < window[1]):
                    continue
                if row["status"] == "finished":
                    try:
                        jct = float(row["jct_hours"])
                    except ValueError:
                        raise ValueError(f"{path}:{line}: jct_hours '{row['jct_hours']}' is not a number")
                    if not math.isfinite(jct) or jct < 0:
                        raise ValueError(f"{path}:{line}: jct_hours must be finite and >= 0")
                    finished.append(jct)
                else:
                    unfinished += 1
    except OSError as e:
        raise ValueError(f"{path}: {e.strerror}")
    return sorted(finished), unfinished


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("curves", nargs="+", help="LABEL=FILE.csv or FILE.csv")
    parser.add_argument("--output", required=True, help="PNG file to write")
    parser.add_argument("--window", help="FIRST:LAST job ids to include")
    parser.add_argument("--title", default="Job completion time CDF")
    args = parser.parse_args()

    window = None
    if args.window:
        try:
            first, last = (int(v) for v in args.window.split(":"))
        except ValueError:
            print("plot_jct_cdf: --window expects FIRST:LAST", file=sys.stderr)
            return 2
        window = (first, last)
    curves = []
    try:
        for spec in args.curves:
            label, _, path = spec.rpartition("=")
            label = label or os.path.splitext(os.path.basename(path))[0]
            jcts, unfinished = read_jcts(path, window)
            if not jcts:
                raise ValueError(f"{path}: no finished job to plot")
            curves.append((label, jcts, unfinished))
    except ValueError as e:
        print(f"plot_jct_cdf: {e}", file=sys.stderr)
        return 2

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_jct_cdf: needs matplotlib (Debian: apt-get install python3-matplotlib, then "
              "run it with /usr/bin/python3)", file=sys.stderr)
        return 2

    fig, ax = plt.subplots(figsize=(7, 4.2))
    for label, jcts, unfinished in curves:
        n = len(jcts)
        mean = sum(jcts) / n
        extra = f", {unfinished} unfinished" if unfinished else ""
        ax.step(jcts, [(k + 1) / n for k in range(n)], where="post",
                label=f"{label} (avg {mean:.1f} h, n={n}{extra})")
    ax.set_xscale("log")
    ax.set_xlabel("job completion time (hours, log scale)")
    ax.set_ylabel("fraction of jobs")
    ax.set_ylim(0, 1.0)
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(args.title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    tmp = args.output + ".tmp"
    fig.savefig(tmp, dpi=110, format="png")
    os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
