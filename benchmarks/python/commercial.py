# SPDX-License-Identifier: Apache-2.0
"""Gurobi (PyPI gurobipy) and MOSEK (PyPI mosek) as workers of compare_conic.py.

Both receive the LP of benchmarks/compare/lp_model.hpp, column for column
(compare_conic.lp_columns), the same matrix popalloc-compare's C adapters load; the log and
power utilities are not LPs and go to
  GUROBI  gurobipy's nonlinear general constraints y_i = f(t_i) (Gurobi >= 12), solved by its
          global spatial branch and bound to MIPGap (these problems are convex, so that is an
          ordinary optimum with a proved bound);
  MOSEK   CVXPY's MOSEK interface (exponential / power cones), when CVXPY is installed.

A solver that cannot run returns status "skipped" with a one-line reason instead of failing:
the package is not installed, there is no licence, or the model is over the restricted licence
that gurobipy installs (2,000 variables and 2,000 linear constraints; Gurobi says so with error
10010, the only size test used here, so a full licence is never refused). Times are loading the
model plus optimizing, as for every LP solver of the driver; every objective is recomputed from
the solver's own x (compare_conic.check_solution).
"""
import time

import numpy as np

import compare_conic as cc

SOLVERS = ("GUROBI", "MOSEK")
OVER_RESTRICTED = "over the restricted licence"
# gurobi_c.h: GRB_ERROR_NO_LICENSE, GRB_ERROR_SIZE_LIMIT_EXCEEDED
GRB_ERROR_NO_LICENSE = 10009
GRB_ERROR_SIZE_LIMIT_EXCEEDED = 10010


def skipped(reason, **extra):
    return {"status": "skipped", "message": reason, **extra}


def one_line(text):
    return " ".join(str(text).split())


def package_version(name):
    from importlib.metadata import version, PackageNotFoundError
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def finish(result, X, A, capacity, weight, target, demand, utility):
    raw, feasible, violation = cc.check_solution(X, A, capacity, weight, target, demand, utility)
    result.update(objective=raw, feasible_objective=feasible, max_violation=violation)
    return result


# ---- Gurobi ----------------------------------------------------------------------------------

def gurobi_model(gp, env, A, capacity, weight, target, demand, utility):
    """The model and the number of its x columns (the first columns of the model)."""
    GRB = gp.GRB
    c = cc.lp_columns(A, capacity, weight, target, demand, utility)
    if utility in ("target-priority", "linear"):
        model = gp.loadModel(
            env=env, numvars=c["num_col"], numconstrs=c["num_row"], modelsense=GRB.MAXIMIZE,
            obj=c["cost"], lb=np.where(np.isinf(c["lower"]), -GRB.INFINITY, c["lower"]),
            ub=np.where(np.isinf(c["upper"]), GRB.INFINITY, c["upper"]),
            constr_csc=(c["data"], c["index"], c["starts"]),
            sense=GRB.LESS_EQUAL * c["num_row"], rhs=c["row_upper"], name="popalloc")
        return model, c
    # Not an LP: the x columns of the linear utility's matrix (job and capacity rows), then t_i
    # with the rows t_i - sum_j A_ij x_ij = 0, then y_i = f(t_i), the objective sum_i w_i y_i.
    n, m, k = c["n"], c["m"], c["k"]
    x_index = c["index"].reshape(k, 2)
    index = np.column_stack([x_index, n + m + c["jobs"]]).ravel()
    data = np.column_stack([c["data"].reshape(k, 2)[:, 0], c["data"].reshape(k, 2)[:, 1],
                            -A[c["jobs"], c["resources"]]]).ravel()
    index = np.concatenate([index, n + m + np.arange(n, dtype=np.int32)])
    data = np.concatenate([data, np.ones(n)])
    starts = np.concatenate([np.arange(0, 3 * k + 1, 3, dtype=np.int64),
                             3 * k + 1 + np.arange(n, dtype=np.int64),
                             np.full(n, 3 * k + n, dtype=np.int64)])
    num_col = k + 2 * n
    lb = np.concatenate([np.zeros(k + n), np.full(n, -GRB.INFINITY)])
    obj = np.concatenate([np.zeros(k + n), weight])
    sense = GRB.LESS_EQUAL * (n + m) + GRB.EQUAL * n
    rhs = np.concatenate([np.ones(n), capacity, np.zeros(n)])
    model = gp.loadModel(env=env, numvars=num_col, numconstrs=2 * n + m,
                         modelsense=GRB.MAXIMIZE, obj=obj, lb=lb, constr_csc=(data, index, starts),
                         sense=sense, rhs=rhs, name="popalloc")
    v = model.getVars()
    t, y = v[k:k + n], v[k + n:]
    if utility == "log":
        for i in range(n):
            model.addGenConstrNL(y[i], gp.nlfunc.log(t[i]))
    else:
        alpha = float(utility.split(":", 1)[1])
        for i in range(n):
            model.addGenConstrNL(y[i], t[i] ** alpha)
    model.Params.MIPGap = 1e-9
    return model, c


def solve_gurobi(prefix, utility, limit):
    try:
        import gurobipy as gp
    except ImportError:
        return skipped("gurobipy is not installed (pip install gurobipy)")
    GRB = gp.GRB
    A, capacity, weight, target, demand = cc.read_instance(prefix)
    start = time.perf_counter()
    try:
        env = gp.Env(params={"OutputFlag": 0})
    except gp.GurobiError as e:
        return skipped(f"no Gurobi licence (error {e.errno}: {one_line(e)})")
    version = ".".join(str(v) for v in gp.gurobi.version())
    result = {"version": version}
    try:
        solve_start, cpu_start = time.perf_counter(), time.process_time()
        model, c = gurobi_model(gp, env, A, capacity, weight, target, demand, utility)
        model.Params.Threads = 1
        model.Params.TimeLimit = float(limit)
        load = time.perf_counter() - solve_start
        model.optimize()
        cpu = time.process_time() - cpu_start
        end = time.perf_counter()
    except gp.GurobiError as e:
        size = (f"{model.NumVars} variables, {model.NumConstrs} linear constraints; "
                if "model" in locals() else "")
        if e.errno == GRB_ERROR_SIZE_LIMIT_EXCEEDED:
            return skipped(f"{OVER_RESTRICTED} ({size}Gurobi {version}: {one_line(e)})",
                           version=version)
        if e.errno == GRB_ERROR_NO_LICENSE:
            return skipped(f"no Gurobi licence (error {e.errno}: {one_line(e)})", version=version)
        raise
    names = {GRB.OPTIMAL: "optimal", GRB.TIME_LIMIT: "time_limit"}
    result.update(status=names.get(model.Status, f"gurobi_status_{model.Status}"),
                  solve_seconds=end - solve_start, load_seconds=load,
                  total_seconds=end - start, cpu_seconds=cpu, solver_cpu_seconds=cpu,
                  iterations=int(model.IterCount + model.BarIterCount),
                  variables=model.NumVars, constraints=model.NumConstrs)
    if model.IsMIP:
        # The nonlinear models: Gurobi's proved bound, comparable with popalloc's dual bound.
        result["bound"] = model.ObjBound
    if model.SolCount == 0:
        if result["status"] == "optimal":
            result["status"] = "failed"
        return result
    result["reported_objective"] = model.ObjVal
    return finish(result, cc.x_matrix(c, model.getAttr("X", model.getVars())), A, capacity,
                  weight, target, demand, utility)


# ---- MOSEK -----------------------------------------------------------------------------------

def mosek_licence_error(text):
    return "licen" in str(text).lower()


def solve_mosek(prefix, utility, limit):
    try:
        import mosek
    except ImportError:
        return skipped("mosek is not installed (pip install mosek)")
    version = ".".join(str(v) for v in mosek.Env.getversion())
    if utility not in ("target-priority", "linear"):
        import importlib.util
        if importlib.util.find_spec("cvxpy") is None:
            return skipped(f"the {utility} utility needs CVXPY (not installed)", version=version)
        try:
            result = cc.solve_cvxpy("MOSEK", prefix, utility, limit)
        except mosek.Error as e:  # CVXPY passes MOSEK's own errors through
            if mosek_licence_error(e.errno) or mosek_licence_error(e):
                return skipped(f"no MOSEK licence ({one_line(e)})", version=version)
            raise
        if result["status"] == "failed" and mosek_licence_error(result.get("message")):
            return skipped(f"no MOSEK licence ({one_line(result['message'])})", version=version)
        result["version"] = version
        return result
    A, capacity, weight, target, demand = cc.read_instance(prefix)
    start = time.perf_counter()
    c = cc.lp_columns(A, capacity, weight, target, demand, utility)
    inf = mosek.infinity if hasattr(mosek, "infinity") else 1.0e30
    lo_inf, up_inf = np.isinf(c["lower"]), np.isinf(c["upper"])
    bk = mosek.boundkey
    keys = [bk.fr if a and b else bk.up if a else bk.lo if b else bk.ra
            for a, b in zip(lo_inf, up_inf)]
    with mosek.Env() as env, env.Task(0, 0) as task:
        try:
            solve_start, cpu_start = time.perf_counter(), time.process_time()
            task.appendcons(c["num_row"])
            task.appendvars(c["num_col"])
            task.putcslice(0, c["num_col"], c["cost"])
            task.putvarboundslice(0, c["num_col"], keys, np.where(lo_inf, -inf, c["lower"]),
                                  np.where(up_inf, inf, c["upper"]))
            task.putconboundslice(0, c["num_row"], [bk.up] * c["num_row"],
                                  np.full(c["num_row"], -inf), c["row_upper"])
            task.putacolslice(0, c["num_col"], c["starts"][:-1], c["starts"][1:], c["index"],
                              c["data"])
            task.putobjsense(mosek.objsense.maximize)
            task.putintparam(mosek.iparam.num_threads, 1)
            task.putdouparam(mosek.dparam.optimizer_max_time, float(limit))
            load = time.perf_counter() - solve_start
            termination = task.optimize()
            cpu = time.process_time() - cpu_start
            end = time.perf_counter()
        except mosek.Error as e:
            if mosek_licence_error(e.errno) or mosek_licence_error(e):
                return skipped(f"no MOSEK licence ({one_line(e)})", version=version)
            raise
        which = (mosek.soltype.bas if task.solutiondef(mosek.soltype.bas)
                 else mosek.soltype.itr)
        state = task.getsolsta(which)
        status = ("optimal" if state == mosek.solsta.optimal
                  else "time_limit" if termination == mosek.rescode.trm_max_time
                  else f"mosek_{state}")
        result = {"status": status, "version": version, "solve_seconds": end - solve_start,
                  "load_seconds": load, "total_seconds": end - start, "cpu_seconds": cpu,
                  "solver_cpu_seconds": cpu, "solution": str(which),
                  "iterations": sum(task.getintinf(item) for item in (
                      mosek.iinfitem.intpnt_iter, mosek.iinfitem.sim_primal_iter,
                      mosek.iinfitem.sim_dual_iter)),
                  "reported_objective": task.getprimalobj(which)}
        x = np.asarray(task.getxx(which))
    return finish(result, cc.x_matrix(c, x), A, capacity, weight, target, demand, utility)


def solve(name, prefix, utility, limit):
    if name == "GUROBI":
        return solve_gurobi(prefix, utility, limit)
    if name == "MOSEK":
        return solve_mosek(prefix, utility, limit)
    raise ValueError(f"unknown commercial solver {name}")
