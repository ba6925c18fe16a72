# SPDX-License-Identifier: Apache-2.0
"""Traffic engineering: route a traffic matrix over k paths per commodity.

A thin layer over popalloc's C++ traffic-engineering solver (include/popalloc/te,
docs/traffic-engineering.md): the path formulation of POP's traffic engineering (Narayanan
et al., SOSP 2021) with three objectives, solved by the price-discovery core; every returned
flow is feasible and carries a certified bound.

The topology is a networkx graph (``Graph`` gives two arcs per edge, ``DiGraph`` one) or a
node-link dict as ``networkx.node_link_data`` writes it (and as data/topologies/*.json hold).
Edge attribute ``capacity`` (or the name given) sets each link's capacity; links without it
get ``default_capacity``. As in ``popalloc-te``, parallel links collapse and only the largest
strongly connected component is kept.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Hashable, List, Mapping, Optional, Tuple

import numpy as np

from . import _core

__all__ = ["solve", "TEResult", "OBJECTIVES"]

#: "total-flow" (max sum of flows), "concurrent-flow" (max alpha with every flow >= alpha d),
#: "min-max-utilization" (route all demand, minimise the largest load / capacity).
OBJECTIVES = ("total-flow", "concurrent-flow", "min-max-utilization")


class TEResult:
    """Flows and their certificate.

    Attributes:
        objective: the value of the returned flow (total flow, alpha or max utilisation).
        bound: a certified bound on the optimum (upper for the flow objectives, lower for
            min-max-utilization).
        relative_gap, status, iterations, solves, seconds: the solve's statistics.
        flows: {(source, target): flow routed for that demand}.
        paths: [(source, target, [node, ...], flow)] for every candidate path.
        link_load: {(u, v): (load, capacity)} for every arc.
        total_flow, max_link_utilization: of the returned flow.

    Pass it back as ``solve(..., previous=result)`` to re-plan a drifted traffic matrix.
    """

    def __init__(self, raw: Dict[str, Any], pairs: List[Tuple[Hashable, Hashable]], names):
        self.objective = raw["objective"]
        self.bound = raw["bound"]
        self.relative_gap = raw["relative_gap"]
        self.status = raw["status"]
        self.iterations = raw["iterations"]
        self.solves = raw["solves"]
        self.seconds = raw["seconds"]
        self.total_flow = raw["total_flow"]
        self.max_link_utilization = raw["max_link_utilization"]
        flow = raw["commodity_flow"]
        self.flows = {pair: float(flow[q]) for q, pair in enumerate(pairs)}
        self.paths = [
            (pairs[q][0], pairs[q][1], [names[v] for v in nodes], float(f))
            for q, nodes, f in raw["paths"]
        ]
        self.link_load = {(names[u], names[v]): (float(l), float(c)) for u, v, l, c in raw["arcs"]}
        # What a re-plan starts from (solve(previous=...)): flows in path order, arc prices.
        self._path_flow = np.asarray(raw["path_flow"], dtype=np.float64)
        self._prices = np.asarray(raw["prices"], dtype=np.float64)

    def __repr__(self) -> str:
        return (
            f"TEResult(status={self.status!r}, objective={self.objective!r}, "
            f"bound={self.bound!r}, relative_gap={self.relative_gap:.3g})"
        )


def _node_link(graph: Any, capacity: str):
    """(node-link JSON text, name -> node) for a networkx graph or a node-link dict."""
    if isinstance(graph, Mapping):
        links = graph.get("links", graph.get("edges"))
        if not isinstance(graph.get("nodes"), list) or not isinstance(links, list):
            raise ValueError("a node-link dict needs 'nodes' and 'links' (or 'edges') lists")
        doc = {"directed": bool(graph.get("directed", True)), "nodes": [], "links": []}
        nodes = [n["id"] for n in graph["nodes"]]
        for n in graph["nodes"]:
            doc["nodes"].append({"id": n["id"]})
        for e in links:
            link = {"source": e["source"], "target": e["target"]}
            if capacity in e:
                link["capacity"] = e[capacity]
            doc["links"].append(link)
        return json.dumps(doc), {_name(n): n for n in nodes}
    try:
        nodes = list(graph.nodes)
        directed = bool(graph.is_directed())
        edges = graph.edges(data=True)
    except AttributeError:
        raise TypeError("graph must be a networkx graph or a node-link dict") from None
    # Nodes become their positions 0..n-1 (any hashable networkx node maps back).
    index = {n: i for i, n in enumerate(nodes)}
    doc = {"directed": directed, "nodes": [{"id": i} for i in range(len(nodes))], "links": []}
    for u, v, data in edges:
        link = {"source": index[u], "target": index[v]}
        if capacity in data:
            link["capacity"] = float(data[capacity])
        doc["links"].append(link)
    return json.dumps(doc), {str(i): n for i, n in enumerate(nodes)}, index


def _name(node_id: Any) -> str:
    # The C++ reader names a node by its id as written: integers without a fraction.
    if isinstance(node_id, bool) or not isinstance(node_id, (int, float, str)):
        raise TypeError(f"node ids of a node-link dict must be numbers or strings, got {node_id!r}")
    if isinstance(node_id, float) and node_id.is_integer():
        return str(int(node_id))
    return str(node_id)


def solve(
    graph: Any,
    traffic: Any,
    objective: str = "total-flow",
    k: int = 4,
    capacity: str = "capacity",
    default_capacity: float = 1000.0,
    tolerance: float = 1e-5,
    max_iterations: int = 5000,
    threads: Optional[int] = None,
    time_limit: Optional[float] = None,
    previous: Optional[TEResult] = None,
) -> TEResult:
    """Route ``traffic`` over ``graph`` with k edge-disjoint shortest paths per demand.

    Args:
        graph: a networkx Graph/DiGraph or a node-link dict.
        traffic: {(source, target): demand} with node ids, or an n x n array indexed like
            ``list(graph.nodes)`` (networkx) or like the dict's "nodes" list.
        objective: one of :data:`OBJECTIVES`.
        k: paths per demand.
        capacity: the edge attribute holding link capacities.
        tolerance: relative gap of the core solves.
        previous: the result of an earlier call on the same graph whose traffic had the same
            pairs with positive demand (only the demands changed: a drifted matrix). The
            concurrent-flow and min-max-utilization solves then start from its routing and
            prices (docs/traffic-engineering.md, "Re-planning"); total flow is solved afresh.
            A previous result whose paths or links do not match raises ValueError.

    Returns:
        A :class:`TEResult`. Raises ValueError for a bad topology or traffic matrix.
    """
    built = _node_link(graph, capacity)
    text, names = built[0], built[1]
    if isinstance(graph, Mapping):
        order = [n["id"] for n in graph["nodes"]]
        key = _name
    else:
        order = list(graph.nodes)
        index = built[2]
        key = lambda n: str(index[n])  # noqa: E731
    if isinstance(traffic, Mapping):
        pairs = list(traffic.keys())
        demand = np.array([float(traffic[p]) for p in pairs], dtype=np.float64)
    else:
        tm = np.asarray(traffic, dtype=np.float64)
        if tm.shape != (len(order), len(order)):
            raise ValueError(
                f"the traffic matrix must be {len(order)} x {len(order)}, got {tm.shape}"
            )
        s, t = np.nonzero(tm)
        pairs = [(order[a], order[b]) for a, b in zip(s, t)]
        demand = np.ascontiguousarray(tm[s, t])
    try:
        sources = [key(p[0]) for p in pairs]
        targets = [key(p[1]) for p in pairs]
    except KeyError as e:
        raise ValueError(f"traffic names node {e}, which is not in the graph") from None
    raw = _core.te_solve(
        text,
        sources,
        targets,
        demand,
        str(objective),
        int(k),
        float(default_capacity),
        float(tolerance),
        int(max_iterations),
        0 if threads is None else int(threads),
        math.inf if time_limit is None else float(time_limit),
        None if previous is None else previous._path_flow,
        None if previous is None else previous._prices,
    )
    return TEResult(raw, pairs, names)
