// SPDX-License-Identifier: Apache-2.0
// Optional adapters for commercial LP solvers. Each is compiled into popalloc-compare only when
// CMake found its C library (benchmarks/compare/CMakeLists.txt: GUROBI_HOME / MOSEK_HOME hints);
// without them this file adds nothing and popalloc-compare neither needs nor mentions them. Every
// test build also compiles both adapters against the stub headers of stub/
// (commercial_stub_check.cmake), so they keep compiling where neither library is installed.
// Both receive the same lp_model as CLP and GLPK; their solution is judged by check_primal like
// every other solver's.
// The solvers run with their default algorithm on one thread, like CLP and GLPK, so that the
// runner's CPU-time limit means the same for every LP solver; the limit is also passed as their
// own time-limit parameter.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <time.h>
#include <vector>

#include "lp_solvers.hpp"

#if POPALLOC_COMPARE_HAVE_GUROBI
#include <gurobi_c.h>
#endif
#if POPALLOC_COMPARE_HAVE_MOSEK
#include <mosek.h>
#endif

namespace popalloc_compare {
namespace {

[[maybe_unused]] double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// Wall and CPU time from one starting point.
struct [[maybe_unused]] timer {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  double cpu = process_cpu_seconds();
  void stop(solver_outcome& out) const {
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
    out.cpu_seconds = process_cpu_seconds() - cpu;
  }
};

#if POPALLOC_COMPARE_HAVE_GUROBI
solver_outcome solve_gurobi(const lp_model& lp, const popalloc::dense_problem<double>& problem,
                            double limit) {
  solver_outcome out;
  const timer start;
  GRBenv* env = nullptr;
  GRBmodel* model = nullptr;
  auto fail = [&](const char* where, int code) {
    std::snprintf(out.message, sizeof out.message, "Gurobi %s failed (%d): %s", where, code,
                  env != nullptr ? GRBgeterrormsg(env) : "no environment");
    out.status = run_status::failed;
    start.stop(out);
    if (model != nullptr) GRBfreemodel(model);
    if (env != nullptr) GRBfreeenv(env);
    return out;
  };
  int code = GRBemptyenv(&env);
  if (code != 0) return fail("GRBemptyenv", code);
  GRBsetintparam(env, "OutputFlag", 0);
  if ((code = GRBstartenv(env)) != 0) return fail("GRBstartenv (licence?)", code);
  std::vector<size_t> begin(lp.start.begin(), lp.start.end() - 1);
  std::vector<int> length(static_cast<std::size_t>(lp.columns));
  for (std::size_t c = 0; c < length.size(); ++c)
    length[c] = static_cast<int>(lp.start[c + 1] - lp.start[c]);
  std::vector<char> sense(static_cast<std::size_t>(lp.rows), GRB_LESS_EQUAL);
  std::vector<double> lower(lp.column_lower), upper(lp.column_upper);
  for (double& v : lower)
    if (std::isinf(v)) v = -GRB_INFINITY;
  for (double& v : upper)
    if (std::isinf(v)) v = GRB_INFINITY;
  // Every row is "<= row_upper" (row_lower is -inf), see lp_model.hpp.
  code = GRBXloadmodel(env, &model, "popalloc", lp.columns, lp.rows, GRB_MAXIMIZE, 0.0,
                       const_cast<double*>(lp.objective.data()), sense.data(),
                       const_cast<double*>(lp.row_upper.data()), begin.data(), length.data(),
                       const_cast<int*>(lp.index.data()), const_cast<double*>(lp.value.data()),
                       lower.data(), upper.data(), nullptr, nullptr, nullptr);
  if (code != 0) return fail("GRBXloadmodel", code);
  GRBsetdblparam(GRBgetenv(model), "TimeLimit", limit);
  GRBsetintparam(GRBgetenv(model), "Threads", 1);
  if ((code = GRBoptimize(model)) != 0) return fail("GRBoptimize", code);
  start.stop(out);
  int status = 0;
  GRBgetintattr(model, "Status", &status);
  double iterations = 0.0, barrier = 0.0;
  GRBgetdblattr(model, "IterCount", &iterations);
  GRBgetdblattr(model, "BarIterCount", &barrier);
  out.iterations = static_cast<long long>(iterations + barrier);
  out.status = status == GRB_OPTIMAL      ? run_status::optimal
               : status == GRB_TIME_LIMIT ? run_status::time_limit
                                          : run_status::failed;
  if (out.status == run_status::failed)
    std::snprintf(out.message, sizeof out.message, "Gurobi status %d", status);
  int solutions = 0;
  GRBgetintattr(model, "SolCount", &solutions);
  if (solutions > 0) {
    GRBgetdblattr(model, "ObjVal", &out.reported_objective);
    std::vector<double> x(static_cast<std::size_t>(lp.columns));
    GRBgetdblattrarray(model, "X", 0, lp.columns, x.data());
    const auto check = check_primal(problem, lp.kind, lp, x.data());
    out.objective = check.objective;
    out.max_violation = check.max_violation;
  } else if (out.status == run_status::optimal) {
    out.status = run_status::failed;
  }
  GRBfreemodel(model);
  GRBfreeenv(env);
  return out;
}
#endif

#if POPALLOC_COMPARE_HAVE_MOSEK
solver_outcome solve_mosek(const lp_model& lp, const popalloc::dense_problem<double>& problem,
                           double limit) {
  solver_outcome out;
  const timer start;
  MSKenv_t env = nullptr;
  MSKtask_t task = nullptr;
  MSKrescodee r = MSK_makeenv(&env, nullptr);
  if (r == MSK_RES_OK) r = MSK_maketask(env, lp.rows, lp.columns, &task);
  if (r == MSK_RES_OK) r = MSK_appendcons(task, lp.rows);
  if (r == MSK_RES_OK) r = MSK_appendvars(task, lp.columns);
  std::vector<MSKboundkeye> column_key(static_cast<std::size_t>(lp.columns));
  std::vector<double> column_lo(column_key.size()), column_up(column_key.size());
  for (std::size_t c = 0; c < column_key.size(); ++c) {
    const double lo = lp.column_lower[c], up = lp.column_upper[c];
    column_key[c] = std::isinf(lo) ? (std::isinf(up) ? MSK_BK_FR : MSK_BK_UP)
                                   : (std::isinf(up) ? MSK_BK_LO : MSK_BK_RA);
    column_lo[c] = std::isinf(lo) ? -MSK_INFINITY : lo;
    column_up[c] = std::isinf(up) ? MSK_INFINITY : up;
  }
  std::vector<MSKboundkeye> row_key(static_cast<std::size_t>(lp.rows), MSK_BK_UP);
  std::vector<double> row_lo(row_key.size(), -MSK_INFINITY);
  std::vector<MSKint64t> ptrb(lp.start.begin(), lp.start.end() - 1),
      ptre(lp.start.begin() + 1, lp.start.end());
  if (r == MSK_RES_OK) r = MSK_putcslice(task, 0, lp.columns, lp.objective.data());
  if (r == MSK_RES_OK)
    r = MSK_putvarboundslice(task, 0, lp.columns, column_key.data(), column_lo.data(),
                             column_up.data());
  if (r == MSK_RES_OK)
    r = MSK_putconboundslice(task, 0, lp.rows, row_key.data(), row_lo.data(), lp.row_upper.data());
  if (r == MSK_RES_OK)
    r = MSK_putacolslice64(task, 0, lp.columns, ptrb.data(), ptre.data(), lp.index.data(),
                           lp.value.data());
  if (r == MSK_RES_OK) r = MSK_putobjsense(task, MSK_OBJECTIVE_SENSE_MAXIMIZE);
  if (r == MSK_RES_OK) r = MSK_putdouparam(task, MSK_DPAR_OPTIMIZER_MAX_TIME, limit);
  if (r == MSK_RES_OK) r = MSK_putintparam(task, MSK_IPAR_NUM_THREADS, 1);
  MSKrescodee termination = MSK_RES_OK;
  if (r == MSK_RES_OK) r = MSK_optimizetrm(task, &termination);
  start.stop(out);
  if (r != MSK_RES_OK) {
    std::snprintf(out.message, sizeof out.message, "MOSEK call failed with response code %d",
                  static_cast<int>(r));
    out.status = run_status::failed;
  } else {
    MSKbooleant basic = 0;
    MSK_solutiondef(task, MSK_SOL_BAS, &basic);
    const MSKsoltypee which = basic != 0 ? MSK_SOL_BAS : MSK_SOL_ITR;
    MSKsolstae state = MSK_SOL_STA_UNKNOWN;
    MSK_getsolsta(task, which, &state);
    out.status = state == MSK_SOL_STA_OPTIMAL          ? run_status::optimal
                 : termination == MSK_RES_TRM_MAX_TIME ? run_status::time_limit
                                                       : run_status::failed;
    if (out.status == run_status::failed)
      std::snprintf(out.message, sizeof out.message, "MOSEK solution status %d, termination %d",
                    static_cast<int>(state), static_cast<int>(termination));
    MSK_getprimalobj(task, which, &out.reported_objective);
    std::vector<double> x(static_cast<std::size_t>(lp.columns));
    MSK_getxx(task, which, x.data());
    const auto check = check_primal(problem, lp.kind, lp, x.data());
    out.objective = check.objective;
    out.max_violation = check.max_violation;
  }
  if (task != nullptr) MSK_deletetask(&task);
  if (env != nullptr) MSK_deleteenv(&env);
  return out;
}
#endif

}  // namespace

void add_commercial_solvers([[maybe_unused]] std::vector<lp_solver_entry>& solvers) {
#if POPALLOC_COMPARE_HAVE_GUROBI
  {
    int major = 0, minor = 0, technical = 0;
    GRBversion(&major, &minor, &technical);
    solvers.push_back({"gurobi",
                       "Gurobi " + std::to_string(major) + "." + std::to_string(minor) + "." +
                           std::to_string(technical) + ", default method, 1 thread",
                       solve_gurobi});
  }
#endif
#if POPALLOC_COMPARE_HAVE_MOSEK
  {
    MSKint32t major = 0, minor = 0, revision = 0;
    MSK_getversion(&major, &minor, &revision);
    solvers.push_back({"mosek",
                       "MOSEK " + std::to_string(major) + "." + std::to_string(minor) + "." +
                           std::to_string(revision) + ", default optimizer, 1 thread",
                       solve_mosek});
  }
#endif
}

}  // namespace popalloc_compare
