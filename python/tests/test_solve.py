# SPDX-License-Identifier: Apache-2.0
"""popalloc.solve / solve_bundle / pop_solve: exactness against HiGHS, errors, zero copy,
determinism, callbacks, Ctrl-C and the GIL."""

import os
import signal
import threading
import time

import numpy as np
import pytest
import scipy.sparse
from scipy.optimize import linprog

import popalloc
from popalloc import SolveStatus


def random_instance(rng, n, m, zeros=0.15):
    a = rng.uniform(0.1, 10.0, size=(n, m))
    a[rng.uniform(size=(n, m)) < zeros] = 0.0
    a[np.arange(n), rng.integers(0, m, size=n)] = rng.uniform(0.5, 5.0, size=n)
    cap = rng.uniform(0.5, 0.3 * n, size=m)
    return a, cap


def check_feasible(r, a, cap, demand=None):
    x = r.dense_allocation()
    assert x.shape == a.shape
    assert (x >= 0).all()
    assert (x.sum(axis=1) <= 1 + 1e-9).all()
    d = (
        np.ones_like(a)
        if demand is None
        else (demand if demand.ndim == 2 else demand[:, None] * np.ones_like(a))
    )
    assert ((d * x).sum(axis=0) <= cap * (1 + 1e-9) + 1e-12).all()
    np.testing.assert_allclose(r.throughput, (a * x).sum(axis=1), rtol=1e-12, atol=1e-12)
    return x


def lp_linear(a, cap, w, d):
    """max sum_ij w_i a_ij x_ij, rows <= 1, sum_i d_ij x_ij <= R_j (HiGHS)."""
    n, m = a.shape
    c = -(w[:, None] * a).ravel()
    rows = scipy.sparse.kron(scipy.sparse.eye(n), np.ones((1, m)))
    caps = scipy.sparse.hstack([scipy.sparse.diags(d[i]) for i in range(n)])
    A = scipy.sparse.vstack([rows, caps]).tocsr()
    b = np.concatenate([np.ones(n), cap])
    res = linprog(c, A_ub=A, b_ub=b, bounds=(0, None), method="highs")
    assert res.status == 0
    return -res.fun


def lp_target_priority(a, cap, w, target):
    """max sum_i w_i s_i, s_i <= 0, s_i <= t_i - T_i (HiGHS)."""
    n, m = a.shape
    nx = n * m
    c = np.concatenate([np.zeros(nx), -w])
    rows = scipy.sparse.hstack(
        [scipy.sparse.kron(scipy.sparse.eye(n), np.ones((1, m))), scipy.sparse.csr_matrix((n, n))]
    )
    caps = scipy.sparse.hstack(
        [scipy.sparse.hstack([scipy.sparse.eye(m)] * n), scipy.sparse.csr_matrix((m, n))]
    )
    # s_i - sum_j a_ij x_ij <= -T_i
    gap = scipy.sparse.hstack(
        [-scipy.sparse.block_diag([a[i : i + 1] for i in range(n)]), scipy.sparse.eye(n)]
    )
    A = scipy.sparse.vstack([rows, caps, gap]).tocsr()
    b = np.concatenate([np.ones(n), cap, -target])
    bounds = [(0, None)] * nx + [(None, 0)] * n
    res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs")
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("seed", range(4))
def test_linear_matches_highs(seed):
    rng = np.random.default_rng(seed)
    n, m = 30, 4
    a, cap = random_instance(rng, n, m)
    w = rng.choice([1.0, 5.0], size=n)
    demand = rng.choice([1.0, 2.0, 4.0], size=n)
    opt = lp_linear(a, cap, w, demand[:, None] * np.ones((n, m)))
    r = popalloc.solve(a, cap, "linear", weight=w, demand=demand, tolerance=1e-7)
    assert r.status == SolveStatus.CONVERGED
    check_feasible(r, a, cap, demand)
    assert abs(r.objective - opt) <= 1e-6 * abs(opt)
    assert r.dual_bound >= opt * (1 - 1e-9)
    assert r.gap_scale_name == "objective"


@pytest.mark.parametrize("seed", range(3))
def test_linear_matrix_demand_matches_highs(seed):
    rng = np.random.default_rng(100 + seed)
    a, cap = random_instance(rng, 25, 3)
    d = rng.uniform(0.5, 3.0, size=a.shape)
    opt = lp_linear(a, cap, np.ones(25), d)
    r = popalloc.solve(a, cap, "linear", demand=d, tolerance=1e-7)
    check_feasible(r, a, cap, d)
    assert abs(r.objective - opt) <= 1e-6 * abs(opt)


@pytest.mark.parametrize("seed", range(3))
def test_target_priority_matches_highs(seed):
    rng = np.random.default_rng(200 + seed)
    n, m = 30, 4
    a, cap = random_instance(rng, n, m)
    target = rng.uniform(0.5, 6.0, size=n)
    w = rng.uniform(0.5, 2.0, size=n)
    opt = lp_target_priority(a, cap, w, target)
    r = popalloc.solve(
        a, cap, "target-priority", weight=w, target=target, tolerance=1e-7, absolute_gap=1e-9
    )
    check_feasible(r, a, cap)
    assert abs(r.objective - opt) <= 1e-6 * max(1.0, abs(opt))
    assert r.dual_bound >= opt - 1e-6 * max(1.0, abs(opt))


def test_bundle_matches_highs(rng):
    # 12 jobs, 3 options each, every option a bundle of 1-3 of 5 resources.
    n, per, m = 12, 3, 5
    values = rng.uniform(1.0, 5.0, size=n * per)
    dense = np.zeros((n * per, m))
    for o in range(n * per):
        used = rng.choice(m, size=rng.integers(1, 4), replace=False)
        dense[o, used] = rng.uniform(0.5, 2.0, size=used.size)
    cap = rng.uniform(1.0, 4.0, size=m)
    offsets = np.arange(0, n * per + 1, per)
    r = popalloc.solve_bundle(
        values, scipy.sparse.csr_matrix(dense), offsets, cap, "linear", tolerance=1e-7
    )
    rows = scipy.sparse.kron(scipy.sparse.eye(n), np.ones((1, per)))
    A = scipy.sparse.vstack([rows, dense.T]).tocsr()
    res = linprog(
        -values, A_ub=A, b_ub=np.concatenate([np.ones(n), cap]), bounds=(0, None), method="highs"
    )
    opt = -res.fun
    x = r.allocation.toarray()
    assert x.shape == (n, n * per)
    flat = x.sum(axis=0)  # each option belongs to one job: column o is option o
    assert (dense.T @ flat <= cap * (1 + 1e-9)).all()
    assert abs(r.objective - opt) <= 1e-6 * opt
    assert abs(values @ flat - r.objective) <= 1e-9 * opt


def test_log_certificate_and_kkt(rng):
    a, cap = random_instance(rng, 200, 6)
    r = popalloc.solve(a, cap, "log", tolerance=1e-8)
    assert r.converged
    x = check_feasible(r, a, cap)
    assert abs(r.objective - np.log(r.throughput).sum()) <= 1e-9 * max(1, abs(r.objective))
    assert r.gap_scale_name in ("elasticity", "objective")
    # KKT: a job's marginal utility per unit of resource never beats the price where it is not
    # running, and matches it where it runs.
    ratio = a / r.throughput[:, None]
    used = x > 1e-6
    slack = ratio - r.prices[None, :]
    busy_rows = x.sum(axis=1) > 1 - 1e-6
    mu = np.where(busy_rows, np.max(np.where(used, slack, -np.inf), axis=1), 0.0)
    assert np.all(slack[used] >= mu[:, None].repeat(a.shape[1], 1)[used] - 1e-3)


def test_interior_point_finish_of_a_solve_cut_short():
    # Two log jobs, weights a million apart, on one resource of capacity 1e-6: x_i = w_i R / sum w.
    a = np.array([[2.0], [0.5]])
    cap = np.array([1e-6])
    w = np.array([1e3, 1e-3])
    r = popalloc.solve(a, cap, "log", weight=w, tolerance=1e-9, max_iterations=1)
    assert r.converged
    assert r.iterations == 1 and r.interior_point_steps > 0
    x = w * cap[0] / w.sum()
    optimum = float(np.sum(w * np.log(a[:, 0] * x)))
    assert abs(r.objective - optimum) <= 1e-9 * abs(optimum)
    assert r.dual_bound >= optimum - 1e-9
    check_feasible(r, a, cap)


def test_float32_and_fortran_order(rng):
    a, cap = random_instance(rng, 500, 5)
    r64 = popalloc.solve(a, cap, "linear", tolerance=1e-7)
    r32 = popalloc.solve(a.astype(np.float32), cap, "linear", tolerance=1e-7)
    assert abs(r32.objective - r64.objective) <= 1e-6 * r64.objective
    rf = popalloc.solve(np.asfortranarray(a), cap, "linear", tolerance=1e-7)
    assert rf.objective == r64.objective
    assert np.array_equal(rf.allocation.toarray(), r64.allocation.toarray())


def test_zero_copy_of_c_contiguous_float64(rng):
    a, cap = random_instance(rng, 1000, 4)
    r = popalloc.solve(a, cap, "log")
    assert r._raw["throughput_address"] == a.ctypes.data
    r32 = popalloc.solve(a32 := a.astype(np.float32), cap, "log")
    assert r32._raw["throughput_address"] == a32.ctypes.data
    f = np.asfortranarray(a)
    rf = popalloc.solve(f, cap, "log")
    assert rf._raw["throughput_address"] != f.ctypes.data  # one C-order copy
    # Invalid data takes the library's own validation path (an owned copy) to name the entry.
    b = a.copy()
    b[7, 2] = -1.0
    with pytest.raises(popalloc.InvalidProblem, match=r"throughput\(7, 2\)"):
        popalloc.solve(b, cap, "log")


@pytest.mark.parametrize(
    "utility,kwargs",
    [
        ("log", {}),
        ("target-priority", {"target": "t"}),
        ("linear", {"demand": "d"}),
        ("power", {"alpha": 0.3}),
    ],
)
def test_in_place_path_equals_popalloc_solve(utility, kwargs):
    # 20,000 jobs: past the sample-start threshold, so both the sample and the full solve run.
    rng = np.random.default_rng(7)
    a, cap = random_instance(rng, 20000, 8)
    args = dict(kwargs)
    if args.get("target") == "t":
        args["target"] = rng.uniform(1.0, 8.0, size=a.shape[0])
    if args.get("demand") == "d":
        args["demand"] = rng.choice([1.0, 2.0], size=a.shape[0])
    w = rng.uniform(0.5, 2.0, size=a.shape[0])
    r1 = popalloc.solve(a, cap, utility, weight=w, **args)
    r2 = popalloc._solve_copied(a, cap, utility, weight=w, **args)
    assert r1._raw["throughput_address"] == a.ctypes.data
    assert r1.sample_iterations > 0
    for key in (
        "status",
        "iterations",
        "sample_iterations",
        "objective",
        "dual_bound",
        "gap_scale_name",
    ):
        assert getattr(r1, key) == getattr(r2, key), key
    assert np.array_equal(r1.prices, r2.prices)
    for k1, k2 in zip(r1.allocation_csr_arrays(), r2.allocation_csr_arrays()):
        assert np.array_equal(k1, k2)


def test_determinism_across_runs_and_threads(rng):
    a, cap = random_instance(rng, 30000, 8)
    r1 = popalloc.solve(a, cap, "log", threads=1)
    r2 = popalloc.solve(a, cap, "log", threads=2)
    r3 = popalloc.solve(a, cap, "log", threads=2)
    for r in (r2, r3):
        assert r.objective == r1.objective and r.dual_bound == r1.dual_bound
        assert np.array_equal(r.prices, r1.prices)
        assert np.array_equal(r.allocation_csr_arrays()[2], r1.allocation_csr_arrays()[2])


def test_warm_start_and_time_limit(rng):
    a, cap = random_instance(rng, 5000, 6)
    cold = popalloc.solve(a, cap, "linear", tolerance=1e-6)
    warm = popalloc.solve(a, cap, "linear", tolerance=1e-6, warm_start=cold.prices)
    assert warm.converged and warm.iterations <= cold.iterations
    assert abs(warm.objective - cold.objective) <= 2e-6 * cold.objective
    # The last iterate's prices are a warm start too, and the same data as C++ returns.
    assert cold.final_prices.shape == (6,) and np.all(cold.final_prices >= 0)
    again = popalloc.solve(a, cap, "linear", tolerance=1e-6, warm_start=cold.final_prices)
    assert again.converged and again.iterations <= cold.iterations
    with pytest.raises(popalloc.InvalidOptions, match="warm_start_prices has 2 entries"):
        popalloc.solve(a, cap, "linear", warm_start=[1.0, 2.0])
    with pytest.raises(popalloc.InvalidOptions, match="time_limit"):
        popalloc.solve(a, cap, "linear", time_limit=0.0)


def test_errors_are_clear():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    cap = np.array([1.0, 1.0])
    with pytest.raises(TypeError, match="float64 or float32.*int64"):
        popalloc.solve(a.astype(np.int64), cap)
    with pytest.raises(TypeError, match="complex128"):
        popalloc.solve(a.astype(np.complex128), cap)
    with pytest.raises(TypeError):
        popalloc.solve([["x", "y"]], cap)
    with pytest.raises(ValueError, match="2-D"):
        popalloc.solve(np.ones((2, 2, 2)), cap)
    nan = a.copy()
    nan[1, 0] = np.nan
    with pytest.raises(ValueError, match=r"throughput\(1, 0\) must be >= 0"):
        popalloc.solve(nan, cap)
    with pytest.raises(
        ValueError, match="capacity has 3 entries but the throughput matrix has 2 columns"
    ):
        popalloc.solve(a, [1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"capacity\[1\] must be >= 0"):
        popalloc.solve(a, [1.0, np.inf])
    with pytest.raises(ValueError, match="weight has 3 entries, expected 2"):
        popalloc.solve(a, cap, weight=[1.0, 1.0, 1.0])
    with pytest.raises(ValueError, match=r"weight\[0\] must be > 0"):
        popalloc.solve(a, cap, "log", weight=[0.0, 1.0])
    with pytest.raises(ValueError, match="needs a target for every job"):
        popalloc.solve(a, cap, "target-priority")
    with pytest.raises(ValueError, match="demand must be 2 x 2"):
        popalloc.solve(a, cap, demand=np.ones((3, 2)))
    with pytest.raises(ValueError, match="no positive throughput on an open resource"):
        popalloc.solve(np.array([[0.0, 1.0], [1.0, 1.0]]), [0.0, 1.0] and [1.0, 0.0], "log")
    with pytest.raises(ValueError, match="unknown utility"):
        popalloc.solve(a, cap, "quadratic")
    with pytest.raises(ValueError, match="0 < alpha < 1"):
        popalloc.solve(a, cap, "power:1.5")
    with pytest.raises(ValueError, match="relative_gap"):
        popalloc.solve(a, cap, tolerance=float("nan"))
    with pytest.raises(ValueError, match="problem has no jobs"):
        popalloc.solve(np.zeros((0, 2)), cap)
    assert issubclass(popalloc.InvalidProblem, ValueError)


def test_callback_stops_and_sees_progress(rng):
    a, cap = random_instance(rng, 3000, 6)
    seen = []

    def stop_at_two(p):
        seen.append((p.iteration, p.objective, p.dual_bound, p.prices.copy()))
        return p.iteration >= 2

    r = popalloc.solve(
        a,
        cap,
        "target-priority",
        target=np.full(3000, 50.0),
        tolerance=1e-12,
        callback=stop_at_two,
        sample_start=False,
    )
    assert r.status == SolveStatus.INTERRUPTED and not r.interrupted_by_signal
    assert r.iterations == 2 and [s[0] for s in seen] == [1, 2]
    assert seen[-1][2] >= seen[-1][1]
    assert seen[-1][3].shape == (6,)
    check_feasible(r, a, cap)

    class Boom(Exception):
        pass

    def fail(p):
        raise Boom("from the callback")

    with pytest.raises(Boom, match="from the callback"):
        popalloc.solve(a, cap, "linear", callback=fail)


def test_ctrl_c_returns_best_allocation(rng):
    a, cap = random_instance(rng, 3000, 6)

    def press_ctrl_c(p):
        if p.iteration == 2:
            os.kill(os.getpid(), signal.SIGINT)

    # A process started in the background by a non-interactive shell (a CI runner) inherits
    # SIGINT as ignored, and Python then installs no handler: give it the interactive one.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        r = popalloc.solve(
            a,
            cap,
            "target-priority",
            target=np.full(3000, 50.0),
            tolerance=1e-12,
            callback=press_ctrl_c,
            sample_start=False,
            max_iterations=50,
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    assert r.status == SolveStatus.INTERRUPTED and r.interrupted_by_signal
    assert 2 <= r.iterations <= 3
    check_feasible(r, a, cap)


def test_gil_is_released(rng):
    a, cap = random_instance(rng, 20000, 8)
    # The callback bridge records whether the solving thread held the GIL when the solver
    # called it (it must not: the GIL is released for the whole solve and taken back only to
    # run Python code).
    r = popalloc.solve(a, cap, "log", callback=lambda p: None)
    assert r.converged and r._raw["solved_holding_gil"] is False
    r = popalloc.solve_bundle(
        [1.0, 2.0], np.eye(2), [0, 1, 2], [1.0, 1.0], "log", callback=lambda p: None
    )
    assert r._raw["solved_holding_gil"] is False
    # And another Python thread runs while a solve without callbacks is in C++.
    b, cap_b = random_instance(rng, 400000, 8)
    ticks = []
    stop = threading.Event()
    inside = threading.Event()

    def tick():
        inside.wait()
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.002)

    t = threading.Thread(target=tick)
    t.start()
    try:
        inside.set()
        start = time.perf_counter()
        popalloc.solve(b, cap_b, "log", threads=1, callback_every=10**6, tolerance=1e-6)
        end = time.perf_counter()
    finally:
        stop.set()
        t.join()
    inner = [x for x in ticks if start + 0.02 < x < end - 0.02]
    # A solve holding the GIL would leave no tick strictly inside it.
    assert end - start < 0.1 or len(inner) >= 3


def test_pop_solve(rng):
    a, cap = random_instance(rng, 4000, 4)
    full = popalloc.solve(a, cap, "linear", tolerance=1e-7)
    one = popalloc.pop_solve(a, cap, "linear", parts=1, tolerance=1e-7)
    assert one.objective == full.objective
    k4 = popalloc.pop_solve(a, cap, "linear", parts=4, seed=3, tolerance=1e-7)
    again = popalloc.pop_solve(a, cap, "linear", parts=4, seed=3, tolerance=1e-7)
    assert np.array_equal(k4.part_of, again.part_of) and k4.objective == again.objective
    assert set(np.unique(k4.part_of)) == {0, 1, 2, 3} and len(k4.parts) == 4
    check_feasible(k4, a, cap)
    # POP solves a restriction: its objective is below the full optimum, its bound above it.
    assert k4.objective <= full.dual_bound * (1 + 1e-12)
    assert k4.dual_bound >= full.objective * (1 - 1e-12)
    assert k4.objective >= 0.95 * full.objective
    with pytest.raises(ValueError, match="unknown partition strategy"):
        popalloc.pop_solve(a, cap, parts=2, strategy="best")
