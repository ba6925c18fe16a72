# SPDX-License-Identifier: Apache-2.0
"""popalloc.gavel: Gavel's golden instance, exact LP references, Gavel's trace, and the same
allocation as popalloc-schedule."""

import json
import subprocess

import numpy as np
import pytest
import scipy.sparse
from scipy.optimize import linprog, minimize

from popalloc import gavel

from conftest import schedule_binary

# Gavel's test_max_min_fairness_with_perf instance (types in Gavel's sorted order).
CLUSTER = {"k80": 3, "p100": 2, "v100": 1}
THROUGHPUTS = {0: {"k80": 0.5, "p100": 1.0, "v100": 2.0}, 1: {"k80": 1.0, "p100": 2.0, "v100": 3.0}}
ONES = {0: 1, 1: 1}
TYPES = sorted(CLUSTER)


def matrix(allocation, job_ids=(0, 1)):
    return np.array([[allocation[j][w] for w in TYPES] for j in job_ids])


def check_feasible(x, t, scale, counts):
    assert (x >= 0).all() and (x.sum(axis=1) <= 1 + 1e-9).all()
    assert ((scale[:, None] * x).sum(axis=0) <= np.asarray(counts) * (1 + 1e-9)).all()
    assert (x[t == 0] == 0).all()


def effective(x, t=None):
    t = matrix(THROUGHPUTS) if t is None else t
    return (t * x).sum(axis=1)


@pytest.mark.parametrize(
    "policy",
    [gavel.MaxMinFairnessPolicyWithPerf("ECOS"), gavel.MaxMinFairnessWaterFillingPolicyWithPerf()],
)
def test_golden_max_min_fairness(policy):
    a = policy.get_allocation(THROUGHPUTS, ONES, ONES, CLUSTER)
    assert set(a) == {0, 1} and all(set(a[j]) == set(TYPES) for j in a)
    x = matrix(a)
    check_feasible(x, matrix(THROUGHPUTS), np.ones(2), [CLUSTER[w] for w in TYPES])
    et = effective(x)
    np.testing.assert_allclose(et, [44 / 31, 80 / 31], rtol=1e-6)
    p = np.array([11 / 12, 5 / 3])
    np.testing.assert_allclose(policy.last_result["proportional_throughput"], p, rtol=1e-15)
    assert abs((et / p).min() - 48 / 31) <= 1e-6 * 48 / 31
    assert abs(policy.last_result["objective"] - 48 / 31) <= 1e-6
    assert policy.last_result["bound"] >= 48 / 31 * (1 - 1e-12)


def test_golden_agnostic_and_weights():
    a = gavel.MaxMinFairnessPolicy("ECOS").get_allocation(THROUGHPUTS, ONES, ONES, CLUSTER)
    assert abs(matrix(a).sum(axis=1).min() - 1.0) <= 1e-6  # every job a full time share
    # Priority weight 2 on job 1 halves its normalised share: the LP optimum moves.
    w = {0: 1.0, 1: 2.0}
    pol = gavel.MaxMinFairnessPolicyWithPerf(None)
    x = matrix(pol.get_allocation(THROUGHPUTS, ONES, w, CLUSTER))
    p = np.array([11 / 12, 5 / 3])
    level = (effective(x) / (np.array([1.0, 2.0]) * p)).min()
    assert abs(level - max_min_lp(matrix(THROUGHPUTS), p * np.array([1.0, 2.0]))) <= 1e-6


def max_min_lp(t, norm, scale=None, counts=None):
    """max L s.t. sum_w t_iw x_iw >= L norm_i, base constraints (HiGHS)."""
    n, m = t.shape
    scale = np.ones(n) if scale is None else scale
    counts = np.array([CLUSTER[w] for w in TYPES]) if counts is None else counts
    nx = n * m
    c = np.zeros(nx + 1)
    c[-1] = -1
    rows = scipy.sparse.hstack(
        [scipy.sparse.kron(scipy.sparse.eye(n), np.ones((1, m))), np.zeros((n, 1))]
    )
    caps = scipy.sparse.hstack(
        [scipy.sparse.hstack([scipy.sparse.diags(np.full(m, s)) for s in scale]), np.zeros((m, 1))]
    )
    level = scipy.sparse.hstack(
        [-scipy.sparse.block_diag([t[i : i + 1] for i in range(n)]), norm[:, None]]
    )
    A = scipy.sparse.vstack([rows, caps, level]).tocsr()
    b = np.concatenate([np.ones(n), counts, np.zeros(n)])
    bounds = [(0, 0) if t.ravel()[k] == 0 else (0, None) for k in range(nx)] + [(0, None)]
    res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs")
    assert res.status == 0
    return -res.fun


def test_golden_makespan_and_max_throughput():
    pol = gavel.MinTotalDurationPolicyWithPerf("ECOS")
    r = {0: 300.0, 1: 500.0}
    x = matrix(pol.get_allocation(THROUGHPUTS, ONES, r, CLUSTER))
    makespan = (np.array([300.0, 500.0]) / effective(x)).max()
    assert abs(makespan - 200.0) <= 1e-6 * 200.0
    x = matrix(
        gavel.MaxSumThroughputPolicyWithPerf(None).get_allocation(THROUGHPUTS, ONES, CLUSTER)
    )
    assert abs(effective(x).sum() - 4.0) <= 1e-6
    assert gavel.ThroughputSumWithPerf is gavel.MaxSumThroughputPolicyWithPerf
    # Cost-normalised: a V100 that costs 10 is worth less than the other types.
    costs = {"k80": 1.0, "p100": 1.0, "v100": 10.0}
    x = matrix(
        gavel.ThroughputNormalizedByCostSumWithPerf(None).get_allocation(
            THROUGHPUTS, ONES, CLUSTER, costs
        )
    )
    t = matrix(THROUGHPUTS) / np.array([costs[w] for w in TYPES])
    opt = -linprog(
        -t.ravel(),
        A_ub=np.vstack([np.kron(np.eye(2), np.ones((1, 3))), np.hstack([np.eye(3)] * 2)]),
        b_ub=np.concatenate([np.ones(2), [3, 2, 1]]),
        method="highs",
    ).fun
    assert abs((t * x).sum() - opt) <= 1e-6 * opt


def test_proportional_fairness_against_scipy():
    pol = gavel.ProportionalFairnessPolicyWithPerf(None)
    x = matrix(pol.get_allocation(THROUGHPUTS, ONES, ONES, CLUSTER))
    t = matrix(THROUGHPUTS)
    p = np.array([11 / 12, 5 / 3])
    value = np.log(effective(x) / p).sum()

    def neg(z):
        return -np.log((t * z.reshape(2, 3)).sum(axis=1) / p).sum()

    cons = [
        {"type": "ineq", "fun": lambda z: 1 - z.reshape(2, 3).sum(axis=1)},
        {"type": "ineq", "fun": lambda z: np.array([3, 2, 1]) - z.reshape(2, 3).sum(axis=0)},
    ]
    best = minimize(
        neg,
        np.full(6, 0.3),
        bounds=[(0, 1)] * 6,
        constraints=cons,
        method="SLSQP",
        options={"ftol": 1e-12, "maxiter": 500},
    )
    assert abs(value - (-best.fun)) <= 1e-6
    assert abs(pol.last_result["objective"] - value) <= 1e-9


def test_finish_time_fairness_state_and_optimum():
    pol = gavel.FinishTimeFairnessPolicyWithPerf("ECOS")
    r = {0: 300.0, 1: 500.0}
    zero = {0: 0.0, 1: 0.0}
    x = matrix(pol.get_allocation(THROUGHPUTS, ONES, ONES, zero, r, CLUSTER))
    iso = np.array([pol._isolated_throughputs_prev_iteration[j] for j in (0, 1)])
    # With no history rho_i = ET_iso_i / ET_i, so the optimum is 1 / (max-min level over ET_iso).
    rho = (iso / effective(x)).max()
    assert abs(rho - 1.0 / max_min_lp(matrix(THROUGHPUTS), iso)) <= 1e-6 * rho
    assert abs(pol.last_result["objective"] - rho) <= 1e-6 * rho
    # Second call: 100 steps of job 0 ran, so C_0 grows by 100 / ET_iso_0.
    pol.get_allocation(THROUGHPUTS, ONES, ONES, {0: 50.0, 1: 50.0}, {0: 200.0, 1: 500.0}, CLUSTER)
    assert pol._cumulative_isolated_time[0] == pytest.approx(100.0 / iso[0], rel=1e-12)
    assert pol._cumulative_isolated_time[1] == 0.0


def test_gavel_formats_ids_and_errors():
    pairs = {(3, None): THROUGHPUTS[0], (1, None): THROUGHPUTS[1]}
    a = gavel.MaxMinFairnessPolicyWithPerf(None).get_allocation(
        pairs, {k: 1 for k in pairs}, {k: 1 for k in pairs}, CLUSTER
    )
    assert list(a) == [(1, None), (3, None)]  # Gavel's sorted job order
    assert all(isinstance(v, float) for d in a.values() for v in d.values())
    assert gavel.MaxMinFairnessPolicyWithPerf(None).get_allocation({}, {}, {}, CLUSTER) is None
    with pytest.raises(ValueError, match="no count for worker type"):
        gavel.MaxMinFairnessPolicyWithPerf(None).get_allocation(THROUGHPUTS, ONES, ONES, {"k80": 3})
    bad = {0: dict(THROUGHPUTS[0], k80=float("nan")), 1: THROUGHPUTS[1]}
    with pytest.raises(ValueError, match="throughput on k80 must be finite"):
        gavel.MaxMinFairnessPolicyWithPerf(None).get_allocation(bad, ONES, ONES, CLUSTER)
    with pytest.raises(ValueError, match="priority weight must be finite and > 0"):
        gavel.MaxMinFairnessPolicyWithPerf(None).get_allocation(
            THROUGHPUTS, ONES, {0: 0.0, 1: 1.0}, CLUSTER
        )
    assert gavel.MaxMinFairnessPolicyWithPerf(None).name == "MaxMinFairness_Perf"


def trace_inputs(root, trace, cluster):
    table = gavel.read_throughputs(str(root / "data/gavel/simulation_throughputs.json"))
    jobs = gavel.read_trace(str(root / "data/gavel/traces" / trace))
    t = gavel.throughputs_for(jobs, table, list(cluster))
    scale = {i: j["scale_factor"] for i, j in enumerate(jobs)}
    weight = {i: j["priority_weight"] for i, j in enumerate(jobs)}
    steps = {i: j["total_steps"] for i, j in enumerate(jobs)}
    return jobs, t, scale, weight, steps


def test_every_policy_on_gavels_trace_is_feasible(root):
    cluster = {"k80": 8, "p100": 8, "v100": 8}
    jobs, t, scale, weight, steps = trace_inputs(root, "max_min_fairness.trace", cluster)
    assert len(jobs) == 96
    zero = {i: 0.0 for i in t}
    calls = [
        (gavel.MaxMinFairnessWaterFillingPolicyWithPerf(), (t, scale, weight, cluster)),
        (
            gavel.MaxMinFairnessPolicyWithPerf(None, pop_parts=4, pop_seed=1),
            (t, scale, weight, cluster),
        ),
        (gavel.ProportionalFairnessPolicyWithPerf(None), (t, scale, weight, cluster)),
        (gavel.MaxSumThroughputPolicyWithPerf(None), (t, scale, cluster)),
        (gavel.MinTotalDurationPolicyWithPerf(None), (t, scale, steps, cluster)),
        (gavel.FinishTimeFairnessPolicyWithPerf(None), (t, scale, weight, zero, steps, cluster)),
    ]
    tm = np.array([[t[i][w] for w in sorted(cluster)] for i in sorted(t)])
    s = np.array([scale[i] for i in sorted(t)], dtype=float)
    counts = np.array([cluster[w] for w in sorted(cluster)])
    for policy, args in calls:
        a = policy.get_allocation(*args)
        x = np.array([[a[i][w] for w in sorted(cluster)] for i in sorted(t)])
        check_feasible(x, tm, s, counts)
        assert policy.last_result["status"].name in (
            "CONVERGED",
            "STALLED",
            "ITERATION_LIMIT",
            "PARTS_CONVERGED",
        )
    # Max-min over the whole trace against HiGHS: the certified level is the LP optimum.
    pol = gavel.MaxMinFairnessPolicyWithPerf(None)
    pol.get_allocation(t, scale, weight, cluster)
    norm = np.array([weight[i] for i in sorted(t)]) * pol.last_result["proportional_throughput"] / s
    usable = (tm > 0) & (s[:, None] <= counts[None, :])
    opt = max_min_lp(np.where(usable, tm, 0.0), norm, s, counts)
    assert abs(pol.last_result["objective"] - opt) <= 1e-6 * opt


def test_same_allocation_as_popalloc_schedule(root, tmp_path):
    binary = schedule_binary()
    if binary is None:
        pytest.skip(
            "no popalloc-schedule built from the current headers (scripts/run-tests.sh builds it)"
        )
    cluster = {"k80": 4, "p100": 4, "v100": 4}
    out = tmp_path / "schedule.json"
    subprocess.run(
        [
            binary,
            "--throughputs",
            str(root / "data/gavel/simulation_throughputs.json"),
            "--cluster",
            "k80:4,p100:4,v100:4",
            "--trace",
            str(root / "data/gavel/traces/small_test.trace"),
            "--policy",
            "max-min-fairness",
            "--quiet",
            "--output",
            str(out),
        ],
        check=True,
        capture_output=True,
    )
    expected = json.loads(out.read_text())
    jobs, t, scale, weight, _ = trace_inputs(root, "small_test.trace", cluster)
    pol = gavel.MaxMinFairnessWaterFillingPolicyWithPerf()
    a = pol.get_allocation(t, scale, weight, cluster)
    assert pol.last_result["objective"] == expected["objective"]
    for job in expected["jobs"]:
        assert a[job["id"]] == {w: float(v) for w, v in job["allocation"].items()}
