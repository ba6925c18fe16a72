# SPDX-License-Identifier: Apache-2.0
"""popalloc.te and popalloc.lb: flows against HiGHS on the same paths, node-link dicts and
networkx graphs, and balanced placements."""

import json

import networkx as nx
import numpy as np
import pytest
from scipy.optimize import linprog

from popalloc import lb, te


def path_lp(result, objective):
    """The path LP over the paths the solver used (HiGHS): total flow or max concurrent flow."""
    pairs = list(result.flows)
    arcs = list(result.link_load)
    P = len(result.paths)
    demand = {p: d for p, d in zip(pairs, result._demand)}
    A_dem = np.zeros((len(pairs), P))
    A_arc = np.zeros((len(arcs), P))
    for k, (s, t, nodes, _) in enumerate(result.paths):
        A_dem[pairs.index((s, t)), k] = 1
        for u, v in zip(nodes, nodes[1:]):
            A_arc[arcs.index((u, v)), k] = 1
    cap = np.array([result.link_load[a][1] for a in arcs])
    d = np.array([demand[p] for p in pairs])
    if objective == "total-flow":
        res = linprog(
            -np.ones(P),
            A_ub=np.vstack([A_dem, A_arc]),
            b_ub=np.concatenate([d, cap]),
            method="highs",
        )
        return -res.fun
    # max alpha: flow_q >= alpha d_q, alpha <= 1
    c = np.zeros(P + 1)
    c[-1] = -1
    A = np.vstack([np.hstack([-A_dem, d[:, None]]), np.hstack([A_arc, np.zeros((len(arcs), 1))])])
    res = linprog(
        c,
        A_ub=A,
        b_ub=np.concatenate([np.zeros(len(pairs)), cap]),
        bounds=[(0, None)] * P + [(0, 1)],
        method="highs",
    )
    return -res.fun


def node_link(root, name):
    """A data/topologies node-link file as a dict, and its node ids in file order."""
    doc = json.loads((root / "data/topologies" / name).read_text())
    return doc, [n["id"] for n in doc["nodes"]]


@pytest.mark.parametrize("objective", ["total-flow", "concurrent-flow"])
def test_toy_network_node_link_dict_against_highs(root, objective):
    doc, ids = node_link(root, "toy-network.json")
    rng = np.random.default_rng(5)
    traffic = {(s, t): float(rng.uniform(100, 900)) for s in ids for t in ids if s != t}
    r = te.solve(doc, traffic, objective, k=3, tolerance=1e-7)
    r._demand = [traffic[p] for p in r.flows]
    opt = path_lp(r, objective)
    assert abs(r.objective - opt) <= 1e-6 * opt
    for (u, v), (load, cap) in r.link_load.items():
        assert load <= cap * (1 + 1e-9)
    for s, t, nodes, flow in r.paths:
        assert nodes[0] == s and nodes[-1] == t and flow >= 0
    assert all(r.flows[p] <= traffic[p] * (1 + 1e-9) for p in traffic)
    # The bisection of concurrent-flow may stall at 1e-7, with a certified flow all the same.
    if objective == "total-flow":
        assert r.status == "converged"
    else:
        assert r.status in ("converged", "stalled")


def test_status_names_of_the_limits(root):
    doc, ids = node_link(root, "toy-network.json")
    traffic = {(s, t): 500.0 for s in ids for t in ids if s != t}
    timed = te.solve(doc, traffic, "concurrent-flow", time_limit=1e-9)
    assert timed.status == "time_limit"
    capped = te.solve(doc, traffic, "total-flow", tolerance=1e-9, max_iterations=1)
    assert capped.status == "iteration_limit"


def test_networkx_graph_and_matrix_traffic():
    g = nx.Graph()
    g.add_edge("a", "b", capacity=1.0)
    g.add_edge("b", "c", capacity=1.0)
    g.add_edge("a", "c", capacity=0.5)
    tm = np.zeros((3, 3))
    tm[0, 2] = 2.0  # a -> c: 0.5 direct + 1 via b
    r = te.solve(g, tm, "total-flow", k=2, tolerance=1e-8)
    assert abs(r.objective - 1.5) <= 1e-6
    assert r.flows == pytest.approx({("a", "c"): 1.5}, rel=1e-6)
    assert r.link_load[("a", "b")][0] == pytest.approx(1.0, rel=1e-6)
    mlu = te.solve(g, {("a", "c"): 1.0}, "min-max-utilization", k=2, tolerance=1e-8)
    # Route all demand, minimise max load/capacity: split so both paths are equally loaded.
    assert abs(mlu.objective - 2.0 / 3.0) <= 1e-5
    assert mlu.bound <= mlu.objective * (1 + 1e-9)
    with pytest.raises(ValueError, match="not in the graph"):
        te.solve(g, {("a", "z"): 1.0})
    with pytest.raises(ValueError, match="3 x 3"):
        te.solve(g, np.zeros((2, 2)))
    with pytest.raises(ValueError, match="unknown objective"):
        te.solve(g, tm, "fastest")


@pytest.mark.parametrize("objective", ["concurrent-flow", "min-max-utilization"])
def test_replan_of_a_drifted_matrix(root, objective):
    doc, ids = node_link(root, "b4-teavar.json")
    rng = np.random.default_rng(3)
    traffic = {(s, t): float(rng.uniform(500, 5000)) for s in ids for t in ids if s != t}
    last = te.solve(doc, traffic, objective, tolerance=1e-6)
    cold_solves = replan_solves = 0
    for _ in range(3):
        traffic = {p: d * rng.uniform(0.95, 1.05) for p, d in traffic.items()}
        cold = te.solve(doc, traffic, objective, tolerance=1e-6)
        replan = te.solve(doc, traffic, objective, tolerance=1e-6, previous=last)
        assert cold.status == replan.status == "converged"
        # Each answer lies within the other's certified bound.
        if objective == "min-max-utilization":
            assert replan.objective >= cold.bound * (1 - 1e-9)
            assert cold.objective >= replan.bound * (1 - 1e-9)
        else:
            assert replan.objective <= cold.bound * (1 + 1e-9)
            assert cold.objective <= replan.bound * (1 + 1e-9)
        cold_solves += cold.solves
        replan_solves += replan.solves
        last = replan
    assert replan_solves < cold_solves
    # Another graph's answer cannot start a re-plan.
    toy, tids = node_link(root, "toy-network.json")
    other = te.solve(toy, {(tids[0], tids[1]): 1.0}, objective)
    with pytest.raises(ValueError, match="same topology and paths|arcs"):
        te.solve(doc, traffic, objective, previous=other)


def check_placement(p, load, memory, servers, max_memory, epsilon, balanced=True):
    np.testing.assert_allclose(p.fraction.sum(axis=1), 1.0, atol=1e-6)
    server_load = (p.fraction * load[:, None]).sum(axis=0)
    np.testing.assert_allclose(p.server_load, server_load, rtol=1e-9)
    assert ((p.replica * memory[:, None]).sum(axis=0) <= max_memory + 1e-9).all()
    assert (p.replica | (p.fraction == 0)).all()
    mean = load.sum() / servers
    within = (np.abs(server_load - mean) <= epsilon * mean * (1 + 1e-6) + 1e-9).all()
    assert p.feasible == within
    if balanced:
        assert p.status == "balanced" and within
    else:
        assert p.status == "unbalanced" and p.message


def skewed(shards=64, servers=8):
    rng = np.random.default_rng(11)
    load = rng.lognormal(0.0, 1.0, size=shards)
    # Current placement: round robin, so the skewed loads leave servers unbalanced.
    current = np.zeros((shards, servers))
    current[np.arange(shards), np.arange(shards) % servers] = 1.0
    return load, np.ones(shards), current


@pytest.mark.parametrize("parts", [1, 2])
@pytest.mark.parametrize("relaxation", ["flow", "core"])
def test_load_balancing_price(parts, relaxation):
    load, memory, current = skewed()
    p = lb.place(
        load, memory, 8, max_memory=16, current=current, method="price", parts=parts,
        relaxation=relaxation,
    )
    check_placement(p, load, memory, 8, 16, 0.05)
    moved = int((p.replica & (current == 0)).sum())
    assert p.new_replicas == moved > 0


def test_load_balancing_greedy_baseline():
    load, memory, current = skewed()
    g = lb.place(load, memory, 8, max_memory=16, current=current, method="greedy")
    p = lb.place(load, memory, 8, max_memory=16, current=current, method="price")
    check_placement(g, load, memory, 8, 16, 0.05, balanced=g.status == "balanced")
    assert p.max_load_deviation <= g.max_load_deviation + 1e-12


def test_load_balancing_errors():
    with pytest.raises(ValueError, match=r"load\[1\] must be finite"):
        lb.place([1.0, np.nan], [1.0, 1.0], 2, 4.0)
    with pytest.raises(ValueError, match="method must be"):
        lb.place([1.0, 1.0], [1.0, 1.0], 2, 4.0, method="milp")
    with pytest.raises(ValueError, match="relaxation must be"):
        lb.place([1.0, 1.0], [1.0, 1.0], 2, 4.0, relaxation="simplex")
    with pytest.raises(ValueError, match="memory has 1 entries"):
        lb.place([1.0, 1.0], [1.0], 2, 4.0)
