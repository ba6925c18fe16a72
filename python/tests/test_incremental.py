# SPDX-License-Identifier: Apache-2.0
"""popalloc.IncrementalSolver: rounds of random changes against popalloc.solve of the same
problem (each answer's objective under the other's bound), row bookkeeping, errors."""

import numpy as np
import pytest

import popalloc
from popalloc import SolveStatus


def check_agree(a, b):
    slack = 1e-9 * (abs(a.dual_bound) + abs(b.dual_bound) + 1.0)
    assert a.objective <= b.dual_bound + slack
    assert b.objective <= a.dual_bound + slack


@pytest.mark.parametrize("utility", ["log", "linear", "target-priority"])
def test_rounds_agree_with_solve(utility):
    rng = np.random.default_rng(4)
    m = 4
    cap = rng.uniform(20.0, 40.0, size=m)
    s = popalloc.IncrementalSolver(cap, utility, tolerance=1e-5, threads=1)
    rows = {}

    def new_job():
        a = rng.uniform(0.1, 1.0, size=m) * np.arange(1, m + 1)
        t = float(rng.uniform(0.2, 1.5)) if utility == "target-priority" else 0.0
        w = float(rng.choice([1.0, 2.0]))
        rows[s.add_job(a, weight=w, target=t)] = (a, w, t)

    for _ in range(150):
        new_job()
    s.solve()
    warm_evaluations = cold_evaluations = 0
    for _ in range(6):
        for _ in range(3):
            new_job()
        for job in rng.choice(list(rows), size=3, replace=False):
            s.remove_job(job)
            del rows[job]
        job = int(rng.choice(list(rows)))
        a, w, t = rows[job]
        a = a * rng.uniform(0.5, 1.5)
        s.update_job(job, throughput=a)
        rows[job] = (a, w, t)

        ids = s.job_ids()
        assert len(s) == len(rows) == len(ids)
        a_now = np.array([rows[int(i)][0] for i in ids])
        w_now = np.array([rows[int(i)][1] for i in ids])
        t_now = np.array([rows[int(i)][2] for i in ids]) if utility == "target-priority" else None
        plan = s.solve()
        reference = popalloc.solve(
            a_now, cap, utility, weight=w_now, target=t_now, tolerance=1e-5, threads=1
        )
        assert plan.status == SolveStatus.CONVERGED
        assert reference.status == SolveStatus.CONVERGED
        check_agree(plan, reference)
        x = plan.dense_allocation()
        assert (x.sum(axis=1) <= 1 + 1e-9).all()
        assert (x.sum(axis=0) <= cap * (1 + 1e-9)).all()
        np.testing.assert_allclose(plan.throughput, (a_now * x).sum(axis=1), rtol=1e-12)
        for job in list(rows)[:5]:
            assert ids[s.row_of(job)] == job
        warm_evaluations += plan.iterations
        cold_evaluations += reference.iterations + reference.sample_iterations
    assert warm_evaluations < cold_evaluations


def test_add_jobs_empty_and_capacity_changes():
    rng = np.random.default_rng(7)
    a = rng.uniform(0.5, 2.0, size=(40, 3))
    s = popalloc.IncrementalSolver([5.0, 5.0, 5.0], "linear", tolerance=1e-6)
    ids = s.add_jobs(a, weight=np.full(40, 2.0))
    assert ids.dtype == np.int64 and list(ids) == list(range(40))
    first = s.solve()
    s.set_capacity(0, 0.0)
    closed = s.solve()
    assert closed.status == SolveStatus.CONVERGED
    assert closed.usage[0] == 0.0
    s.set_capacities(np.array([5.0, 5.0, 5.0]))
    check_agree(s.solve(), first)
    for job in ids:
        s.remove_job(job)
    empty = s.solve()
    assert empty.status == SolveStatus.CONVERGED
    assert empty.objective == 0.0 and empty.dual_bound == 0.0
    assert len(s) == 0 and 3 not in s


def test_bad_changes_raise_and_change_nothing():
    s = popalloc.IncrementalSolver([1.0, 1.0], "log")
    job = s.add_job([1.0, 2.0])
    with pytest.raises(popalloc.InvalidProblem, match="resources"):
        s.add_job([1.0, 2.0, 3.0])
    with pytest.raises(popalloc.InvalidProblem):
        s.add_job([np.nan, 1.0])
    with pytest.raises(popalloc.InvalidProblem, match="weight"):
        s.add_job([1.0, 1.0], weight=-1.0)
    with pytest.raises(popalloc.InvalidProblem, match="no job has id"):
        s.remove_job(job + 1)
    with pytest.raises(popalloc.InvalidProblem, match="capacity"):
        s.set_capacity(0, -2.0)
    with pytest.raises(popalloc.InvalidProblem, match="does not exist"):
        s.set_capacity(5, 1.0)
    with pytest.raises(ValueError, match="unknown utility"):
        popalloc.IncrementalSolver([1.0], "nope")
    assert len(s) == 1 and job in s
    assert s.solve().status == SolveStatus.CONVERGED
