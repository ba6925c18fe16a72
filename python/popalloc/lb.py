# SPDX-License-Identifier: Apache-2.0
"""Load balancing: place shards on servers so every server's load is within mean -+ epsilon,
moving as few shards as possible.

A thin layer over popalloc's C++ shard placement (include/popalloc/lb, docs/load-balancing.md),
POP's load-balancing experiment (Narayanan et al., SOSP 2021): "price" solves the LP relaxation
(exactly, by a greedy augmenting flow over the servers that hold the moving shards; or with the
price-discovery core) and repairs it to a placement, "greedy" is the baseline; with
``parts`` > 1 the shards and servers are split POP-style and the parts solved one by one.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import numpy as np

from . import _core

__all__ = ["place", "Placement"]


class Placement:
    """A placement and how good it is.

    Attributes:
        status: "balanced" (every constraint holds), "unbalanced", "no_solution" or
            "infeasible"; ``message`` says why when not balanced.
        fraction: shards x servers, the share of each shard's queries routed to each server.
        replica: shards x servers bool, where each shard has a copy (a copy may get 0 queries).
        new_replicas: copies that were not in ``current`` (POP's "shards moved").
        replicas, max_load_deviation, server_load, server_memory, seconds.
    """

    def __init__(self, raw: Dict[str, Any], shards: int, servers: int):
        self.status = raw["status"]
        self.message = raw["message"]
        self.seconds = raw["seconds"]
        self.fraction = raw["fraction"].reshape(shards, servers)
        self.replica = raw["replica"].reshape(shards, servers).astype(bool)
        self.feasible = raw.get("feasible", False)
        self.new_replicas = raw.get("new_replicas")
        self.replicas = raw.get("replicas")
        self.max_load_deviation = raw.get("max_load_deviation")
        self.server_load = raw.get("server_load")
        self.server_memory = raw.get("server_memory")

    def __repr__(self) -> str:
        return (
            f"Placement(status={self.status!r}, new_replicas={self.new_replicas}, "
            f"max_load_deviation={self.max_load_deviation})"
        )


def place(
    load,
    memory,
    servers: int,
    max_memory: float,
    current=None,
    held=None,
    replication: int = 1,
    epsilon: float = 0.05,
    method: str = "price",
    parts: int = 1,
    tolerance: float = 1e-4,
    threads: Optional[int] = None,
    relaxation: str = "flow",
) -> Placement:
    """Place shards with loads ``load`` and sizes ``memory`` on ``servers`` servers.

    Args:
        load, memory: one float per shard, >= 0.
        servers: N.
        max_memory: memory of every server.
        current: shards x servers routing fractions of the current placement (None: new).
        held: shards x servers bool, the current copies (default: current > 0).
        replication: minimum copies per shard.
        epsilon: relative half-width of the balance band around the mean load.
        method: "price" or "greedy".
        parts: POP parts (1: the whole problem).
        tolerance: relative gap the LP relaxation's certificate must meet.
        threads: OpenMP threads of the core's relaxation (None: OpenMP's default).
        relaxation: "flow" (the exact keep flow) or "core" (the price-discovery core), for
            method "price".
    """
    l = np.ascontiguousarray(np.asarray(load, dtype=np.float64))
    m = np.ascontiguousarray(np.asarray(memory, dtype=np.float64))
    cur = None if current is None else np.ascontiguousarray(np.asarray(current, dtype=np.float64))
    h = None if held is None else np.ascontiguousarray(np.asarray(held, dtype=bool))
    raw = _core.lb_place(
        l,
        m,
        int(servers),
        float(max_memory),
        int(replication),
        float(epsilon),
        cur,
        h,
        str(method),
        int(parts),
        float(tolerance),
        0 if threads is None else int(threads),
        str(relaxation),
    )
    return Placement(raw, l.shape[0], int(servers))
