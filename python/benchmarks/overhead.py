# SPDX-License-Identifier: Apache-2.0
"""Overhead of the Python binding over the C++ call on the same data.

Solves an n x m problem (default 1e6 x 8, log utility) through popalloc.solve(), timed from
the Python call to the returned result (argument checks, the solve with the GIL released,
the result's numpy arrays), and through popalloc::solve on a dense_problem that already holds
the same data (the copy into it is made before that clock starts). Runs alternate between the
two so that a machine shared with other work slows both alike; the medians are compared.

    python python/benchmarks/overhead.py [--jobs 1000000] [--resources 8] [--repeat 5]
"""

import argparse
import statistics
import time

import numpy as np

import popalloc
from popalloc import _core


def instance(n: int, m: int, seed: int):
    rng = np.random.default_rng(seed)
    # Heterogeneous speeds: a per-job scale times a per-resource generation factor, with noise.
    scale = rng.uniform(0.5, 2.0, size=(n, 1))
    generation = np.linspace(1.0, 4.0, m)[None, :]
    throughput = scale * generation * rng.uniform(0.8, 1.25, size=(n, m))
    capacity = np.full(m, n / (2.0 * m))
    return np.ascontiguousarray(throughput), capacity


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1_000_000)
    ap.add_argument("--resources", type=int, default=8)
    ap.add_argument("--utility", default="log")
    ap.add_argument("--tolerance", type=float, default=1e-3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    a, cap = instance(args.jobs, args.resources, args.seed)
    opts = _core.SolverOptions()
    opts.relative_gap = args.tolerance
    opts.threads = args.threads

    py_times, cpp_times = [], []
    result = None
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = popalloc.solve(
            a, cap, args.utility, tolerance=args.tolerance, threads=args.threads
        )
        py_times.append(time.perf_counter() - start)
        cpp_times.append(_core.time_cpp_solve(a, cap, args.utility, 0.5, 1.0, opts))

    py, cpp = statistics.median(py_times), statistics.median(cpp_times)
    print(
        f"instance: {args.jobs} x {args.resources}, utility {args.utility}, "
        f"tolerance {args.tolerance:g}, {args.threads} threads, {args.repeat} runs each"
    )
    print(f"result: {result}")
    print(
        "python popalloc.solve  s: " + " ".join(f"{t:.4f}" for t in py_times) + f"  median {py:.4f}"
    )
    print(
        "C++ popalloc::solve    s: "
        + " ".join(f"{t:.4f}" for t in cpp_times)
        + f"  median {cpp:.4f}"
    )
    print(f"overhead: {100.0 * (py - cpp) / cpp:+.1f} % (median python / median C++ - 1)")


if __name__ == "__main__":
    main()
