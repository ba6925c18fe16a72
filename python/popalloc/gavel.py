# SPDX-License-Identifier: Apache-2.0
"""Drop-in replacements for the policies of the Gavel scheduler (Narayanan et al., OSDI 2020).

Each class is named and constructed like Gavel's and its ``get_allocation(...)`` takes Gavel's
arguments and returns Gavel's format ``{job_id: {worker_type: fraction}}``: the fraction of
wall-clock time each job should run on each GPU type. Job ids and worker types are ordered as
Gavel orders them (``sorted()``); job ids may be any sortable hashable (Gavel's ``JobIdPair``).
Throughputs are Gavel's: steps/s of the whole job (all its ``scale_factor`` GPUs) per type.

The allocations come from popalloc's C++ cluster policies (include/popalloc/cluster,
docs/cluster-scheduling.md) on the price-discovery core instead of CVXPY: the level policies
(max-min, makespan, finish-time fairness) by a certified bisection, the others by one solve.
``last_result`` keeps the certificate of the last call (objective, bound, status, ...).

Constructor arguments beyond Gavel's (keyword-only): ``tolerance`` (relative width of the
certified bracket or relative gap, default 1e-6), ``threads``, ``time_limit``, ``pop_parts``,
``pop_seed`` and ``pop_strategy`` (POP: solve ``pop_parts`` random parts of the jobs, each
with its share of every GPU type; Narayanan et al., SOSP 2021) and ``warm_start`` (start each
call from the previous call's prices on the same GPU types: faster when jobs change little,
but the allocation then depends on the call history). Gavel's ``solver`` argument is accepted
and ignored.

Helpers: :func:`read_throughputs` and :func:`read_trace` read Gavel's
``simulation_throughputs.json`` and trace files (data/gavel/), and :func:`throughputs_for`
builds ``get_allocation``'s dicts from them.
"""

from __future__ import annotations

import ast
import json
import math
from typing import Any, Dict, Hashable, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import _core

__all__ = [
    "MaxMinFairnessPolicyWithPerf",
    "MaxMinFairnessWaterFillingPolicyWithPerf",
    "MaxMinFairnessPolicy",
    "ProportionalFairnessPolicyWithPerf",
    "MaxSumThroughputPolicyWithPerf",
    "ThroughputSumWithPerf",
    "ThroughputNormalizedByCostSumWithPerf",
    "MinTotalDurationPolicyWithPerf",
    "FinishTimeFairnessPolicyWithPerf",
    "read_throughputs",
    "read_trace",
    "throughputs_for",
]

Allocation = Dict[Hashable, Dict[str, float]]


class _Policy:
    """Shared machinery: flatten Gavel's dicts, call the C++ policy, unflatten."""

    _policy = "max-min-fairness"
    _gavel_name = ""
    _options: Dict[str, Any] = {}

    def __init__(
        self,
        solver: Any = None,
        *,
        tolerance: float = 1e-6,
        threads: Optional[int] = None,
        time_limit: Optional[float] = None,
        pop_parts: int = 1,
        pop_seed: int = 0,
        pop_strategy: str = "uniform-random",
        warm_start: bool = False,
    ):
        del solver  # Gavel passes a CVXPY solver name; popalloc has its own solver.
        self._name = self._gavel_name
        self._common = {
            "tolerance": float(tolerance),
            "threads": 0 if threads is None else int(threads),
            "time_limit": math.inf if time_limit is None else float(time_limit),
            "pop_parts": int(pop_parts),
            "pop_seed": int(pop_seed),
            "pop_strategy": str(pop_strategy),
        }
        #: The C++ result of the last call: objective, bound, status, prices, ... (a dict).
        self.last_result: Optional[Dict[str, Any]] = None
        self._warm_start = bool(warm_start)
        self._prices: Dict[Tuple[str, ...], np.ndarray] = {}

    @property
    def name(self) -> str:
        return self._name

    @staticmethod
    def _flatten(throughputs: Mapping, cluster_spec: Mapping[str, int]):
        job_ids = sorted(throughputs.keys())
        if not job_ids:
            return None
        worker_types = sorted(throughputs[job_ids[0]].keys())
        if not worker_types:
            return None
        try:
            t = np.array(
                [[float(throughputs[j][w]) for w in worker_types] for j in job_ids],
                dtype=np.float64,
            )
        except KeyError as e:
            raise ValueError(f"every job needs a throughput for every worker type: {e}") from None
        missing = [w for w in worker_types if w not in cluster_spec]
        if missing:
            raise ValueError(f"cluster_spec has no count for worker type(s) {missing}")
        counts = []
        for w in worker_types:
            c = cluster_spec[w]
            if int(c) != c:
                raise ValueError(f"cluster_spec[{w!r}] must be a whole number of GPUs, got {c}")
            counts.append(int(c))
        return job_ids, worker_types, t, counts

    @staticmethod
    def _column(values: Optional[Mapping], job_ids: Sequence, what: str, default=None):
        if values is None:
            return None
        try:
            return np.array([float(values[j]) for j in job_ids], dtype=np.float64)
        except KeyError as e:
            raise ValueError(f"{what} has no entry for job {e}") from None

    def _allocate(
        self,
        throughputs: Mapping,
        cluster_spec: Mapping[str, int],
        columns: Mapping[str, Optional[Mapping]],
        **options: Any,
    ) -> Optional[Allocation]:
        flat = self._flatten(throughputs, cluster_spec)
        if flat is None:
            self.last_result = None
            return None
        job_ids, worker_types, t, counts = flat
        jobs: Dict[str, np.ndarray] = {"throughput": t}
        for key, values in columns.items():
            column = self._column(values, job_ids, key)
            if column is not None:
                jobs[key] = column
        opts = dict(self._common)
        opts["policy"] = self._policy
        opts.update(self._options)
        opts.update(options)
        # Warm start from the previous call's prices on the same GPU types (Gavel calls the
        # policy every time jobs arrive or finish; the prices move little between calls).
        key = tuple(worker_types)
        if self._warm_start and key in self._prices:
            opts["warm_start"] = self._prices[key]
        result = _core.cluster_allocate(jobs, list(worker_types), counts, opts)
        if result["prices"].shape == (len(worker_types),):
            self._prices[key] = result["prices"]
        result["job_ids"] = job_ids
        result["worker_types"] = worker_types
        self.last_result = result
        x = np.clip(result["fraction"], 0.0, 1.0)
        return {
            job_id: {w: float(x[i, k]) for k, w in enumerate(worker_types)}
            for i, job_id in enumerate(job_ids)
        }


class MaxMinFairnessPolicyWithPerf(_Policy):
    """Gavel's heterogeneity-aware max-min fairness (LAS): maximise min_i s_i ET_i / (w_i P_i),
    without water filling (Gavel's ``max_min_fairness_perf``)."""

    _gavel_name = "MaxMinFairness_Perf"
    _options = {"water_filling": False}

    def get_allocation(
        self, unflattened_throughputs, scale_factors, unflattened_priority_weights, cluster_spec
    ) -> Optional[Allocation]:
        return self._allocate(
            unflattened_throughputs,
            cluster_spec,
            {"scale_factor": scale_factors, "priority_weight": unflattened_priority_weights},
        )


class MaxMinFairnessWaterFillingPolicyWithPerf(_Policy):
    """Max-min fairness with water filling (Gavel's ``max_min_fairness_water_filling_perf``):
    after the minimum is fixed, the other jobs keep rising level by level."""

    _gavel_name = "MaxMinFairnessWaterFilling_Perf"
    _options = {"water_filling": True}

    def __init__(self, priority_reweighting_policies=None, **kwargs):
        if priority_reweighting_policies is not None:
            raise NotImplementedError(
                "priority_reweighting_policies (entity-level water "
                "filling) is not supported by popalloc"
            )
        super().__init__(None, **kwargs)

    def get_allocation(
        self,
        unflattened_throughputs,
        scale_factors,
        unflattened_priority_weights,
        cluster_spec,
        entity_weights=None,
        entity_to_job_mapping=None,
        verbose=False,
        return_effective_throughputs=False,
    ):
        if entity_weights is not None or entity_to_job_mapping is not None:
            raise NotImplementedError(
                "entity weights (hierarchical water filling) are not " "supported by popalloc"
            )
        allocation = self._allocate(
            unflattened_throughputs,
            cluster_spec,
            {"scale_factor": scale_factors, "priority_weight": unflattened_priority_weights},
        )
        if allocation is None or not return_effective_throughputs:
            return allocation
        r = self.last_result
        # Gavel returns ET_i / P_i and the job ids in this case.
        return r["effective_throughput"] / r["proportional_throughput"], r["job_ids"]


class MaxMinFairnessPolicy(MaxMinFairnessPolicyWithPerf):
    """Gavel's heterogeneity-agnostic max-min fairness: every usable throughput counts as 1."""

    _gavel_name = "MaxMinFairness"
    _options = {"water_filling": False, "heterogeneity_agnostic": True}


class ProportionalFairnessPolicyWithPerf(_Policy):
    """Proportional fairness: maximise sum_i w_i log(ET_i / P_i)."""

    _policy = "proportional-fairness"
    _gavel_name = "ProportionalFairness_Perf"

    def get_allocation(
        self, unflattened_throughputs, scale_factors, unflattened_priority_weights, cluster_spec
    ) -> Optional[Allocation]:
        return self._allocate(
            unflattened_throughputs,
            cluster_spec,
            {"scale_factor": scale_factors, "priority_weight": unflattened_priority_weights},
        )


class ThroughputNormalizedByCostSumWithPerf(_Policy):
    """Gavel's cost-normalised max-sum throughput: maximise sum_i sum_w T_iw X_iw / cost_w."""

    _policy = "max-throughput"
    _gavel_name = "ThroughputNormalizedByCostSum_Perf"

    def get_allocation(
        self,
        unflattened_throughputs,
        scale_factors,
        cluster_spec,
        instance_costs=None,
        SLOs=None,
        num_steps_remaining=None,
    ):
        if SLOs:
            raise NotImplementedError(
                "Gavel's SLOs argument (seconds left per job) is not supported by the drop-in; "
                "popalloc's SLO floors take the trace's SLO column (docs/cluster-scheduling.md)"
            )
        options = {"slo_floors": False}
        flat = self._flatten(unflattened_throughputs, cluster_spec) if instance_costs else None
        if flat is not None:
            try:
                options["gpu_cost"] = [float(instance_costs[w]) for w in flat[1]]
            except KeyError as e:
                raise ValueError(f"instance_costs has no cost for worker type {e}") from None
        return self._allocate(
            unflattened_throughputs, cluster_spec, {"scale_factor": scale_factors}, **options
        )


class MaxSumThroughputPolicyWithPerf(ThroughputNormalizedByCostSumWithPerf):
    """Max-sum throughput: maximise sum_i ET_i (Gavel's ``ThroughputSumWithPerf``)."""

    _gavel_name = "ThroughputSumWithPerf"

    def get_allocation(self, unflattened_throughputs, scale_factors, cluster_spec):
        return super().get_allocation(unflattened_throughputs, scale_factors, cluster_spec)


#: Gavel's own name of the max-sum-throughput policy.
ThroughputSumWithPerf = MaxSumThroughputPolicyWithPerf


class MinTotalDurationPolicyWithPerf(_Policy):
    """Gavel's minimum makespan: minimise max_i r_i / ET_i (r_i: steps remaining)."""

    _policy = "min-makespan"
    _gavel_name = "MinTotalDuration_Perf"

    def get_allocation(
        self, unflattened_throughputs, scale_factors, num_steps_remaining, cluster_spec
    ) -> Optional[Allocation]:
        return self._allocate(
            unflattened_throughputs,
            cluster_spec,
            {
                "scale_factor": scale_factors,
                "total_steps": num_steps_remaining,
                "remaining_steps": num_steps_remaining,
            },
        )


class FinishTimeFairnessPolicyWithPerf(_Policy):
    """Finish-time fairness (Themis, Mahajan et al., NSDI 2020) as in Gavel: minimise
    max_i rho_i, rho_i = (t_i + r_i / ET_i) / (C_i + r_i / ET_iso_i).

    Stateful like Gavel's: C_i, the time job i would have needed in isolation for the steps it
    already ran, accumulates (r_prev - r_now) / ET_iso_prev between calls.
    """

    _policy = "finish-time-fairness"
    _gavel_name = "FinishTimeFairness_Perf"

    def __init__(self, solver=None, **kwargs):
        super().__init__(solver, **kwargs)
        self._cumulative_isolated_time: Dict[Hashable, float] = {}
        self._isolated_throughputs_prev_iteration: Dict[Hashable, float] = {}
        self._num_steps_remaining_prev_iteration: Dict[Hashable, float] = {}

    def get_allocation(
        self,
        unflattened_throughputs,
        scale_factors,
        unflattened_priority_weights,
        times_since_start,
        num_steps_remaining,
        cluster_spec,
    ) -> Optional[Allocation]:
        flat = self._flatten(unflattened_throughputs, cluster_spec)
        if flat is None:
            self._isolated_throughputs_prev_iteration = {}
            self._num_steps_remaining_prev_iteration = {}
            self.last_result = None
            return None
        job_ids = flat[0]
        for j in job_ids:
            self._cumulative_isolated_time.setdefault(j, 0.0)
            if j in self._num_steps_remaining_prev_iteration:
                self._cumulative_isolated_time[j] += (
                    self._num_steps_remaining_prev_iteration[j] - num_steps_remaining[j]
                ) / self._isolated_throughputs_prev_iteration[j]
        allocation = self._allocate(
            unflattened_throughputs,
            cluster_spec,
            {
                "scale_factor": scale_factors,
                "priority_weight": unflattened_priority_weights,
                "total_steps": num_steps_remaining,
                "remaining_steps": num_steps_remaining,
                "elapsed_time": times_since_start,
                "isolated_time": self._cumulative_isolated_time,
            },
        )
        # ET_iso: the effective throughput of Gavel's isolated allocation, for the next call.
        isolated = _core.cluster_allocate(
            {
                "throughput": flat[2],
                "scale_factor": self._column(scale_factors, job_ids, "scale_factor"),
            },
            list(flat[1]),
            flat[3],
            {"policy": "isolated"},
        )
        self._num_steps_remaining_prev_iteration = {
            j: float(num_steps_remaining[j]) for j in job_ids
        }
        self._isolated_throughputs_prev_iteration = {
            j: float(isolated["effective_throughput"][i]) for i, j in enumerate(job_ids)
        }
        return allocation


# ---- Gavel's data files ------------------------------------------------------------------------


def read_throughputs(path: str) -> Dict[Tuple[str, int], Dict[str, float]]:
    """Gavel's ``simulation_throughputs.json``: {(job_type, scale_factor): {worker_type: steps/s}}
    with the isolated ("null") throughputs (0: cannot run on that type); co-location entries
    are skipped."""
    with open(path) as f:
        raw = json.load(f)
    table: Dict[Tuple[str, int], Dict[str, float]] = {}
    for worker_type, entries in raw.items():
        for key, value in entries.items():
            job_type, scale_factor = ast.literal_eval(key)
            isolated = value.get("null") if isinstance(value, dict) else None
            if isolated is None:
                continue
            table.setdefault((job_type, int(scale_factor)), {})[worker_type] = float(isolated)
    return table


def read_trace(path: str) -> List[Dict[str, Any]]:
    """Gavel's 10-column trace: one dict per line (job i = line i) with job_type, command,
    working_directory, num_steps_arg, needs_data_dir, total_steps, scale_factor,
    priority_weight, SLO and arrival_time."""
    jobs = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            if not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 10:
                raise ValueError(
                    f"{path}:{number}: expected 10 tab-separated columns, got {len(fields)}"
                )
            jobs.append(
                {
                    "job_type": fields[0],
                    "command": fields[1],
                    "working_directory": fields[2],
                    "num_steps_arg": fields[3],
                    "needs_data_dir": bool(int(fields[4])),
                    "total_steps": float(fields[5]),
                    "scale_factor": int(fields[6]),
                    "priority_weight": float(fields[7]),
                    "SLO": float(fields[8]),
                    "arrival_time": float(fields[9]),
                }
            )
    return jobs


def throughputs_for(
    jobs: Sequence[Mapping[str, Any]],
    table: Mapping[Tuple[str, int], Mapping[str, float]],
    worker_types: Sequence[str],
) -> Dict[int, Dict[str, float]]:
    """``unflattened_throughputs`` for ``jobs`` (as read_trace gives them, job id = position):
    {job_id: {worker_type: throughput of the job's (job_type, scale_factor) on that type}}."""
    out: Dict[int, Dict[str, float]] = {}
    for i, job in enumerate(jobs):
        key = (job["job_type"], int(job["scale_factor"]))
        if key not in table:
            raise ValueError(f"job {i}: no throughputs for {key}")
        out[i] = {w: float(table[key].get(w, 0.0)) for w in worker_types}
    return out
