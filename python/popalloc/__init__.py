# SPDX-License-Identifier: Apache-2.0
"""popalloc: allocate resources to very many jobs with the price-discovery dual method.

Solves::

    maximize  sum_i f_i(t_i),   t_i = sum_j A_ij x_ij
    subject to x_i >= 0,  sum_j x_ij <= 1              (each job's time)
               sum_i d_ij x_ij <= R_j                    (each resource's capacity)

with the price-discovery dual method (Agrawal, Boyd, Narayanan, Kazhamiaka, Zaharia, MPC 2022):
resource prices are the dual variables, and every solve returns a feasible allocation together
with a dual bound, so the gap is a certificate.

Entry points: :func:`solve` (a dense throughput matrix), :func:`solve_bundle` (options that
consume several resources, given as a sparse matrix), :func:`pop_solve` (POP: partition, solve,
coalesce), :class:`IncrementalSolver` (re-planning while jobs arrive, leave and change),
:mod:`popalloc.gavel` (drop-in replacements for Gavel's policies),
:mod:`popalloc.te` (traffic engineering) and :mod:`popalloc.lb` (load balancing).
"""

from __future__ import annotations

import math
from typing import Any, Callable, Optional, Tuple

import numpy as np

from . import _core
from ._core import (
    BackendError,
    Error,
    InvalidOptions,
    InvalidProblem,
    Progress,
    SolveStatus,
)

__all__ = [
    "solve",
    "solve_bundle",
    "pop_solve",
    "IncrementalSolver",
    "SolveResult",
    "PopResult",
    "SolveStatus",
    "Progress",
    "Error",
    "InvalidProblem",
    "InvalidOptions",
    "BackendError",
    "UTILITIES",
]

__version__ = "0.1.0"

#: Utility names accepted by :func:`solve` ("power:0.5" is short for utility="power", alpha=0.5).
UTILITIES = ("log", "linear", "target-priority", "power", "linear-with-floor")

_FLOATS = (np.dtype(np.float64), np.dtype(np.float32))


# ---- argument normalisation ------------------------------------------------------------------


def _float_array(name: str, value: Any, ndim: Tuple[int, ...], dtype=None) -> np.ndarray:
    """An ndarray of float64/float32, C-contiguous (a copy only when the layout needs one)."""
    if isinstance(value, np.ndarray):
        if value.dtype not in _FLOATS:
            raise TypeError(
                f"{name} must be a float64 or float32 array, got dtype {value.dtype} "
                "(convert it with .astype(np.float64))"
            )
        a = value
    else:
        try:
            a = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name} must be a numeric array: {e}") from None
    if a.ndim not in ndim:
        want = " or ".join(f"{d}-D" for d in ndim)
        raise ValueError(f"{name} must be a {want} array, got shape {a.shape}")
    if dtype is not None and a.dtype != dtype:
        a = a.astype(dtype)
    # Fortran order or strided views cannot be read in place by the row-major solver.
    return np.ascontiguousarray(a)


def _optional(name: str, value: Any, ndim: Tuple[int, ...], dtype) -> Optional[np.ndarray]:
    return None if value is None else _float_array(name, value, ndim, dtype)


def _utility(utility: str, alpha: Optional[float], penalty: Optional[float]):
    if not isinstance(utility, str):
        raise TypeError(f"utility must be a string, one of {UTILITIES}")
    name = utility.replace("_", "-").lower()
    if name.startswith("power:"):
        if alpha is not None:
            raise ValueError("give the exponent either as 'power:ALPHA' or as alpha=, not both")
        try:
            alpha = float(name.split(":", 1)[1])
        except ValueError:
            raise ValueError(f"cannot read the exponent of {utility!r}") from None
        name = "power"
    if name not in UTILITIES:
        raise ValueError(f"unknown utility {utility!r}; expected one of {UTILITIES}")
    if name == "power" and alpha is None:
        alpha = 0.5
    return (
        name,
        float(alpha if alpha is not None else 0.5),
        float(penalty if penalty is not None else 1.0),
    )


def _options(
    tolerance: float,
    absolute_gap: float,
    gap: str,
    max_iterations: int,
    time_limit: Optional[float],
    threads: Optional[int],
    warm_start: Any,
    sample_start: bool,
    callback_every: int,
) -> "_core.SolverOptions":
    o = _core.SolverOptions()
    o.relative_gap = float(tolerance)
    o.absolute_gap = float(absolute_gap)
    o.gap = str(gap)
    o.max_iterations = int(max_iterations)
    o.time_limit = math.inf if time_limit is None else float(time_limit)
    o.threads = 0 if threads is None else int(threads)
    if warm_start is not None:
        o.warm_start = _float_array("warm_start", warm_start, (1,), np.float64)
    o.sample_start = bool(sample_start)
    o.callback_every = int(callback_every)
    return o


# ---- results ---------------------------------------------------------------------------------


class SolveResult:
    """What a solve returns: a feasible allocation and its certificate.

    Attributes:
        status: a :class:`SolveStatus`; ``CONVERGED`` when the relative gap met the tolerance.
        objective: sum_i f_i(t_i) of the returned (always feasible) allocation.
        dual_bound: an upper bound on the optimum (the lowest dual value seen).
        duality_gap: ``dual_bound - objective``.
        relative_gap: ``duality_gap / gap_scale``.
        gap_scale, gap_scale_name: the denominator of the relative gap and what it is
            ("objective", "idle range", "elasticity", or a 1e-6 floor of those).
        gap_measure: "objective" or "anchored".
        trivial_bound: the objective with unlimited capacities (no bound is reported above it).
        prices: one price per resource (the dual variables attaining ``dual_bound``).
        final_prices: the prices of the last evaluation, at smoothing level ``smoothing``
            (the smoothed dual's minimiser; empty for POP's merged result).
        usage: resource usage of the allocation.
        throughput: t_i of every job under the allocation.
        iterations, sample_iterations, smoothing_stages, smoothing: solver statistics.
        interior_point_steps: Newton steps of the interior-point finish that completes a small
            problem the price iterations left short of the tolerance (0 where it did not run).
        timings: seconds spent in "setup", "solve", "evaluate" (part of solve) and "sample".
        interrupted_by_signal: True when Ctrl-C stopped the solve (status ``INTERRUPTED``).
        max_capacity_violation: largest overuse of a capacity (0 up to rounding).
    """

    def __init__(self, raw: dict, shape: Tuple[int, int]):
        self._raw = raw
        self._shape = shape
        for key in (
            "status",
            "iterations",
            "sample_iterations",
            "smoothing_stages",
            "interior_point_steps",
            "smoothing",
            "objective",
            "dual_bound",
            "trivial_bound",
            "duality_gap",
            "relative_gap",
            "gap_scale",
            "gap_scale_name",
            "gap_measure",
            "max_capacity_violation",
            "prices",
            "final_prices",
            "usage",
            "throughput",
            "timings",
            "interrupted_by_signal",
        ):
            setattr(self, key, raw[key])

    @property
    def converged(self) -> bool:
        return self.status == SolveStatus.CONVERGED

    @property
    def allocation(self):
        """The allocation as a ``scipy.sparse.csr_matrix`` (jobs x options), built on first use."""
        cached = self.__dict__.get("_csr")
        if cached is None:
            import scipy.sparse

            cached = scipy.sparse.csr_matrix(
                (self._raw["data"], self._raw["indices"], self._raw["indptr"]), shape=self._shape
            )
            self.__dict__["_csr"] = cached
        return cached

    def allocation_csr_arrays(self) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(indptr int64, indices int32, data float64) of the allocation, without scipy."""
        return self._raw["indptr"], self._raw["indices"], self._raw["data"]

    def dense_allocation(self) -> np.ndarray:
        """The allocation as a dense float64 array (jobs x options)."""
        x = np.zeros(self._shape)
        indptr, indices, data = self.allocation_csr_arrays()
        rows = np.repeat(np.arange(self._shape[0]), np.diff(indptr))
        x[rows, indices] = data
        return x

    def __repr__(self) -> str:
        return (
            f"SolveResult(status={self.status.name}, objective={self.objective!r}, "
            f"dual_bound={self.dual_bound!r}, relative_gap={self.relative_gap:.3g} "
            f"({self.gap_scale_name}), iterations={self.iterations})"
        )


class PopResult(SolveResult):
    """A POP solve: the coalesced allocation, certified against the FULL problem's dual.

    Extra attributes: ``part_of`` (the part of every job), ``parts`` (per-part statistics:
    jobs, status, iterations, objective, dual_bound, relative_gap, seconds) and
    ``bound_candidate`` (which part's prices gave the bound; -1: their average).
    """

    def __init__(self, raw: dict, shape: Tuple[int, int]):
        super().__init__(raw, shape)
        self.part_of = raw["part_of"]
        self.parts = raw["parts"]
        self.bound_candidate = raw["bound_candidate"]


# ---- solves ----------------------------------------------------------------------------------


def _dense_args(throughput, capacity, weight, target, demand):
    a = _float_array("throughput", throughput, (2,))
    cap = _float_array("capacity", capacity, (1,), np.float64)
    dt = a.dtype
    w = _optional("weight", weight, (1,), dt)
    t = _optional("target", target, (1,), dt)
    job_demand = matrix_demand = None
    if demand is not None:
        d = _float_array("demand", demand, (1, 2), dt)
        if d.ndim == 1:
            job_demand = d
        else:
            matrix_demand = d
    return a, cap, w, t, job_demand, matrix_demand


def solve(
    throughput,
    capacity,
    utility: str = "log",
    weight=None,
    target=None,
    demand=None,
    tolerance: float = 1e-4,
    threads: Optional[int] = None,
    warm_start=None,
    time_limit: Optional[float] = None,
    callback: Optional[Callable[[Progress], Any]] = None,
    *,
    alpha: Optional[float] = None,
    penalty: Optional[float] = None,
    absolute_gap: float = 0.0,
    gap: str = "automatic",
    max_iterations: int = 500,
    sample_start: bool = True,
    callback_every: int = 1,
) -> SolveResult:
    """Allocate resources to jobs: maximise sum_i f_i(t_i), t_i = sum_j A_ij x_ij.

    Args:
        throughput: A, n jobs x m resources, A_ij >= 0 (0: job i cannot use resource j).
            float64 or float32; a C-contiguous array is read in place (no copy), Fortran order
            or a strided view is copied once. Other dtypes raise TypeError.
        capacity: R, m capacities >= 0 (0 closes a resource).
        utility: "log" (w log t), "linear" (w t), "target-priority" (w min(t - T, 0)),
            "power" (w t^alpha, 0 < alpha < 1; also "power:0.3") or "linear-with-floor"
            (w t - penalty max(T - t, 0)).
        weight: w_i per job (default 1).
        target: T_i per job (target-priority and linear-with-floor need it).
        demand: units each job holds while running: a vector (one per job) or an n x m matrix
            d_ij (default 1).
        tolerance: stop at this relative duality gap (measured against ``gap_scale``).
        threads: OpenMP threads (None: the OpenMP default).
        warm_start: prices to start from, e.g. ``previous_result.prices``.
        time_limit: seconds (None: no limit).
        callback: called as ``callback(progress)`` after every ``callback_every`` dual
            evaluations with a :class:`Progress`; a true return value stops the solve
            (status INTERRUPTED, the best allocation so far is returned). An exception in the
            callback stops the solve and propagates.
        alpha, penalty: parameters of "power" and "linear-with-floor".
        absolute_gap: also stop when dual_bound - objective <= this (0: off).
        gap: "automatic", "objective" or "anchored": what the relative gap is measured against.
        max_iterations: dual evaluations at most.
        sample_start: for large cold solves, start from the prices of a solve of a sample.

    Returns:
        A :class:`SolveResult`. The GIL is released during the solve; Ctrl-C stops it and the
        result (status INTERRUPTED, ``interrupted_by_signal`` True) holds the best feasible
        allocation found.

    Raises:
        TypeError: for an unsupported dtype. InvalidProblem / InvalidOptions (both ValueError):
        for NaN, infinite or negative entries, mismatched shapes or bad options, with the
        library's message naming the offending entry.

    Example::

        >>> import numpy as np, popalloc
        >>> r = popalloc.solve(np.array([[2.0, 1.0], [1.0, 3.0]]), [1.0, 1.0], "log")
        >>> r.status, r.allocation.toarray()
    """
    a, cap, w, t, job_demand, matrix_demand = _dense_args(
        throughput, capacity, weight, target, demand
    )
    name, alpha_v, penalty_v = _utility(utility, alpha, penalty)
    opts = _options(
        tolerance,
        absolute_gap,
        gap,
        max_iterations,
        time_limit,
        threads,
        warm_start,
        sample_start,
        callback_every,
    )
    raw = _core.solve_dense(
        a, cap, name, alpha_v, penalty_v, w, t, job_demand, matrix_demand, opts, callback, False
    )
    return SolveResult(raw, a.shape)


def _solve_copied(throughput, capacity, utility="log", **kwargs) -> SolveResult:
    """solve() through an owned copy of the data (popalloc::solve itself); for tests."""
    weight, target, demand = (kwargs.pop(k, None) for k in ("weight", "target", "demand"))
    a, cap, w, t, job_demand, matrix_demand = _dense_args(
        throughput, capacity, weight, target, demand
    )
    name, alpha_v, penalty_v = _utility(
        utility, kwargs.pop("alpha", None), kwargs.pop("penalty", None)
    )
    opts = _options(
        kwargs.pop("tolerance", 1e-4),
        kwargs.pop("absolute_gap", 0.0),
        kwargs.pop("gap", "automatic"),
        kwargs.pop("max_iterations", 500),
        kwargs.pop("time_limit", None),
        kwargs.pop("threads", None),
        kwargs.pop("warm_start", None),
        kwargs.pop("sample_start", True),
        1,
    )
    if kwargs:
        raise TypeError(f"unexpected arguments {sorted(kwargs)}")
    raw = _core.solve_dense(
        a, cap, name, alpha_v, penalty_v, w, t, job_demand, matrix_demand, opts, None, True
    )
    return SolveResult(raw, a.shape)


def solve_bundle(
    value,
    consumption,
    job_offset,
    capacity,
    utility: str = "log",
    weight=None,
    target=None,
    tolerance: float = 1e-4,
    threads: Optional[int] = None,
    warm_start=None,
    time_limit: Optional[float] = None,
    callback: Optional[Callable[[Progress], Any]] = None,
    *,
    alpha: Optional[float] = None,
    penalty: Optional[float] = None,
    absolute_gap: float = 0.0,
    gap: str = "automatic",
    max_iterations: int = 500,
    callback_every: int = 1,
) -> SolveResult:
    """Jobs choose among options that each consume a bundle of resources.

    maximise sum_i f_i(t_i), t_i = sum_o value_o x_o over job i's options, with
    sum_o x_o <= 1 per job and sum_o consumption[o, j] x_o <= capacity[j].

    Args:
        value: one value rate per option (float64).
        consumption: options x resources, any scipy.sparse matrix or a dense array:
            consumption[o, j] units of resource j per unit of time on option o.
        job_offset: n + 1 nondecreasing integers; job i owns options
            job_offset[i] .. job_offset[i+1]-1 (like a CSR indptr).
        capacity, utility, weight, target, tolerance, ...: as in :func:`solve`.

    Returns:
        A :class:`SolveResult` whose ``allocation`` is jobs x options (global option indices).
    """
    import scipy.sparse

    v = _float_array("value", value, (1,), np.float64)
    if scipy.sparse.issparse(consumption):
        c = scipy.sparse.csr_matrix(consumption, dtype=np.float64)
    else:
        c = scipy.sparse.csr_matrix(_float_array("consumption", consumption, (2,), np.float64))
    c.sum_duplicates()
    if c.shape[0] != v.shape[0]:
        raise ValueError(
            f"consumption has {c.shape[0]} rows but there are {v.shape[0]} option values"
        )
    cap = _float_array("capacity", capacity, (1,), np.float64)
    if c.shape[1] != cap.shape[0]:
        raise ValueError(
            f"consumption has {c.shape[1]} columns but capacity has {cap.shape[0]} entries"
        )
    offsets = np.asarray(job_offset)
    if offsets.ndim != 1 or not np.issubdtype(offsets.dtype, np.integer):
        raise TypeError("job_offset must be a 1-D integer array (n + 1 offsets into the options)")
    n_jobs = offsets.shape[0] - 1
    w = _optional("weight", weight, (1,), np.float64)
    t = _optional("target", target, (1,), np.float64)
    name, alpha_v, penalty_v = _utility(utility, alpha, penalty)
    opts = _options(
        tolerance,
        absolute_gap,
        gap,
        max_iterations,
        time_limit,
        threads,
        warm_start,
        False,
        callback_every,
    )
    raw = _core.solve_bundle(
        np.ascontiguousarray(offsets, dtype=np.int64),
        v,
        np.ascontiguousarray(c.indptr, dtype=np.int64),
        np.ascontiguousarray(c.indices, dtype=np.int32),
        np.ascontiguousarray(c.data, dtype=np.float64),
        cap,
        name,
        alpha_v,
        penalty_v,
        w,
        t,
        opts,
        callback,
    )
    return SolveResult(raw, (max(n_jobs, 0), v.shape[0]))


def pop_solve(
    throughput,
    capacity,
    utility: str = "log",
    weight=None,
    target=None,
    demand=None,
    parts: int = 2,
    seed: int = 0,
    strategy: str = "shuffled",
    tolerance: float = 1e-4,
    threads: Optional[int] = None,
    time_limit: Optional[float] = None,
    *,
    alpha: Optional[float] = None,
    penalty: Optional[float] = None,
    absolute_gap: float = 0.0,
    gap: str = "automatic",
    max_iterations: int = 500,
) -> PopResult:
    """POP (Narayanan et al., SOSP 2021): split the jobs into ``parts`` random parts, give each
    an equal share of every capacity, solve the parts in parallel and coalesce.

    The returned allocation is feasible for the whole problem and ``dual_bound`` is a bound
    on the FULL problem's optimum, so ``relative_gap`` says how far POP is from it at most.

    Args:
        parts: k (1 solves the whole problem, exactly :func:`solve`).
        seed: seed of the random partition.
        strategy: "shuffled" (balanced random), "uniform-random", "round-robin" or
            "two-choices".
        threads: parts solved at once (None: the OpenMP default); each part runs one thread.
        Other arguments as in :func:`solve`. The data is copied into each part.
    """
    a, cap, w, t, job_demand, matrix_demand = _dense_args(
        throughput, capacity, weight, target, demand
    )
    name, alpha_v, penalty_v = _utility(utility, alpha, penalty)
    if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)):
        raise TypeError("parts must be an integer")
    if not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError("seed must be an integer >= 0")
    opts = _options(tolerance, absolute_gap, gap, max_iterations, time_limit, None, None, True, 1)
    raw = _core.pop_solve(
        a,
        cap,
        name,
        alpha_v,
        penalty_v,
        w,
        t,
        job_demand,
        matrix_demand,
        opts,
        int(parts),
        int(seed),
        str(strategy),
        0 if threads is None else int(threads),
    )
    return PopResult(raw, a.shape)


# ---- re-planning -----------------------------------------------------------------------------


class IncrementalSolver:
    """A dense problem kept across solves while jobs arrive, leave and change (a scheduler's
    rounds); every :meth:`solve` starts from where the last one ended (its prices, smoothing
    level and each job's search start) and returns the same certificate as :func:`solve` of
    the problem as it stands.

    Jobs are named by the integer id :meth:`add_job` returns (ids are never reused). Row i of a
    result (``throughput``, ``allocation``) is job ``job_ids()[i]`` until the next change:
    removing a job moves the last row into its place. Every change is checked when made
    (InvalidProblem names the job; nothing changes).

    Example::

        >>> import numpy as np, popalloc
        >>> s = popalloc.IncrementalSolver([4.0, 4.0], "log")
        >>> a = s.add_job([1.0, 2.0]); b = s.add_job([2.0, 1.0], weight=2.0)
        >>> r = s.solve()
        >>> s.remove_job(a); s.add_job([3.0, 0.5]); s.set_capacity(1, 3.0)
        >>> r = s.solve()          # starts where the last plan ended
        >>> r.throughput[s.row_of(b)]
    """

    def __init__(
        self,
        capacity,
        utility: str = "log",
        tolerance: float = 1e-4,
        threads: Optional[int] = None,
        time_limit: Optional[float] = None,
        *,
        alpha: Optional[float] = None,
        penalty: Optional[float] = None,
        absolute_gap: float = 0.0,
        gap: str = "automatic",
        max_iterations: int = 500,
        callback_every: int = 1,
    ):
        cap = _float_array("capacity", capacity, (1,), np.float64)
        name, alpha_v, penalty_v = _utility(utility, alpha, penalty)
        opts = _options(
            tolerance,
            absolute_gap,
            gap,
            max_iterations,
            time_limit,
            threads,
            None,
            True,
            callback_every,
        )
        self._solver = _core.IncrementalSolver(cap, name, alpha_v, penalty_v, opts)

    def add_job(
        self, throughput, weight: float = 1.0, target: float = 0.0, demand: float = 1.0
    ) -> int:
        """Adds a job (its throughput on every resource); returns its id. ``target`` is for
        target-priority and linear-with-floor; ``demand``: units of any resource it holds."""
        row = _float_array("throughput", throughput, (1,), np.float64)
        return self._solver.add_job(row, float(weight), float(target), float(demand))

    def add_jobs(self, throughput, weight=None, target=None, demand=None) -> np.ndarray:
        """Adds every row of ``throughput`` (n x m); returns their ids (int64)."""
        a = _float_array("throughput", throughput, (2,), np.float64)
        w = _optional("weight", weight, (1,), np.float64)
        t = _optional("target", target, (1,), np.float64)
        d = _optional("demand", demand, (1,), np.float64)
        return self._solver.add_jobs(a, w, t, d)

    def remove_job(self, job_id: int) -> None:
        self._solver.remove_job(int(job_id))

    def update_job(
        self, job_id: int, throughput=None, weight=None, target=None, demand=None
    ) -> None:
        """Changes what is given of job ``job_id``."""
        job_id = int(job_id)
        if throughput is not None:
            row = _float_array("throughput", throughput, (1,), np.float64)
            self._solver.update_throughput(job_id, row)
        if weight is not None:
            self._solver.update_weight(job_id, float(weight))
        if target is not None:
            self._solver.update_target(job_id, float(target))
        if demand is not None:
            self._solver.update_demand(job_id, float(demand))

    def set_capacity(self, resource: int, capacity: float) -> None:
        self._solver.set_capacity(int(resource), float(capacity))

    def set_capacities(self, capacity) -> None:
        self._solver.set_capacities(_float_array("capacity", capacity, (1,), np.float64))

    def forget_prices(self) -> None:
        """The next :meth:`solve` starts cold."""
        self._solver.forget_prices()

    def solve(self, callback: Optional[Callable[[Progress], Any]] = None) -> SolveResult:
        """The plan for the problem as it stands, starting where the last solve ended. The GIL
        is released; ``callback`` and Ctrl-C behave as in :func:`solve`."""
        raw = self._solver.solve(callback, False)
        return SolveResult(raw, (self._solver.jobs(), self._solver.resources()))

    def solve_cold(self, callback: Optional[Callable[[Progress], Any]] = None) -> SolveResult:
        """:func:`solve` of the problem as it stands, from no previous prices (a reference);
        where the next :meth:`solve` starts is unchanged."""
        raw = self._solver.solve(callback, True)
        return SolveResult(raw, (self._solver.jobs(), self._solver.resources()))

    def job_ids(self) -> np.ndarray:
        """Job ids in row order (int64, a copy)."""
        return self._solver.job_ids()

    def row_of(self, job_id: int) -> int:
        return self._solver.row_of(int(job_id))

    def __len__(self) -> int:
        return self._solver.jobs()

    def __contains__(self, job_id) -> bool:
        return self._solver.contains(int(job_id))

    @property
    def resources(self) -> int:
        return self._solver.resources()
