// SPDX-License-Identifier: Apache-2.0
// COIN-OR CLP and GLPK adapters and the child-process runner of popalloc-compare.
#include "lp_solvers.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <poll.h>
#include <signal.h>
#include <stdexcept>
#include <time.h>
#include <unistd.h>

#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>

#if POPALLOC_COMPARE_HAVE_CLP
#include <ClpSimplex.hpp>
#include <ClpSolve.hpp>
#include <CoinPackedMatrix.hpp>
#endif
#if POPALLOC_COMPARE_HAVE_GLPK
#include <glpk.h>
#endif

namespace popalloc_compare {

const char* to_string(run_status status) {
  switch (status) {
    case run_status::optimal:
      return "optimal";
    case run_status::time_limit:
      return "time_limit";
    case run_status::killed:
      return "killed_at_limit";
    case run_status::failed:
      return "failed";
    case run_status::not_built:
      return "not_built";
    case run_status::not_an_lp:
      return "not_an_lp";
    case run_status::converged:
      return "converged";
    case run_status::stopped:
      return "stopped";
    case run_status::skipped:
      return "skipped";
  }
  return "unknown";
}

namespace {

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

/// Wall and CPU time from one starting point.
struct timer {
  clock_type::time_point wall = clock_type::now();
  double cpu = process_cpu_seconds();
  void stop(solver_outcome& out) const {
    out.seconds = seconds_since(wall);
    out.cpu_seconds = process_cpu_seconds() - cpu;
  }
};

void set_message(solver_outcome& out, const std::string& text) {
  std::snprintf(out.message, sizeof out.message, "%s", text.c_str());
}

#if POPALLOC_COMPARE_HAVE_CLP
solver_outcome solve_clp(const lp_model& lp, const popalloc::dense_problem<double>& problem,
                         double limit, ClpSolve::SolveType type) {
  solver_outcome out;
  const timer start;
  auto finite_or = [](double v) {
    return std::isinf(v) ? (v > 0 ? COIN_DBL_MAX : -COIN_DBL_MAX) : v;
  };
  std::vector<double> col_lo(lp.column_lower), col_up(lp.column_upper), row_lo(lp.row_lower),
      row_up(lp.row_upper);
  for (auto* v : {&col_lo, &col_up, &row_lo, &row_up})
    std::transform(v->begin(), v->end(), v->begin(), finite_or);
  std::vector<CoinBigIndex> starts(lp.start.begin(), lp.start.end());
  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(lp.columns, lp.rows, starts.data(), lp.index.data(), lp.value.data(),
                    col_lo.data(), col_up.data(), lp.objective.data(), row_lo.data(),
                    row_up.data());
  model.setOptimizationDirection(-1.0);  // maximize
  model.setMaximumSeconds(limit);        // CPU seconds (CoinCpuTime), like the runner's RLIMIT_CPU
  ClpSolve options;                      // presolve on (CLP's default)
  options.setSolveType(type);
  model.initialSolve(options);
  start.stop(out);
  out.iterations = model.numberIterations();
  out.reported_objective = model.objectiveValue();
  if (model.isProvenOptimal()) {
    out.status = run_status::optimal;
  } else if (model.status() == 3) {
    out.status = run_status::time_limit;
  } else {
    out.status = run_status::failed;
    set_message(out, "CLP status " + std::to_string(model.status()) + ", secondary " +
                         std::to_string(model.secondaryStatus()));
  }
  const auto check = check_primal(problem, lp.kind, lp, model.primalColumnSolution());
  out.objective = check.objective;
  out.max_violation = check.max_violation;
  return out;
}

solver_outcome clp_primal(const lp_model& lp, const popalloc::dense_problem<double>& p, double l) {
  return solve_clp(lp, p, l, ClpSolve::usePrimal);
}
solver_outcome clp_dual(const lp_model& lp, const popalloc::dense_problem<double>& p, double l) {
  return solve_clp(lp, p, l, ClpSolve::useDual);
}
solver_outcome clp_barrier(const lp_model& lp, const popalloc::dense_problem<double>& p, double l) {
  return solve_clp(lp, p, l, ClpSolve::useBarrier);
}
#endif

#if POPALLOC_COMPARE_HAVE_GLPK
/// Loads the model into a new GLPK problem (GLPK indices are 1-based).
glp_prob* load_glpk(const lp_model& lp) {
  glp_prob* P = glp_create_prob();
  glp_set_obj_dir(P, GLP_MAX);
  glp_add_rows(P, lp.rows);
  glp_add_cols(P, lp.columns);
  for (int r = 0; r < lp.rows; ++r) {
    const double lo = lp.row_lower[static_cast<std::size_t>(r)];
    const double up = lp.row_upper[static_cast<std::size_t>(r)];
    const int type = std::isinf(lo) ? (std::isinf(up) ? GLP_FR : GLP_UP)
                                    : (std::isinf(up) ? GLP_LO : (lo == up ? GLP_FX : GLP_DB));
    glp_set_row_bnds(P, r + 1, type, std::isinf(lo) ? 0.0 : lo, std::isinf(up) ? 0.0 : up);
  }
  std::vector<int> index(1);
  std::vector<double> value(1);
  for (int c = 0; c < lp.columns; ++c) {
    const auto k = static_cast<std::size_t>(c);
    const double lo = lp.column_lower[k], up = lp.column_upper[k];
    const int type = std::isinf(lo) ? (std::isinf(up) ? GLP_FR : GLP_UP)
                                    : (std::isinf(up) ? GLP_LO : (lo == up ? GLP_FX : GLP_DB));
    glp_set_col_bnds(P, c + 1, type, std::isinf(lo) ? 0.0 : lo, std::isinf(up) ? 0.0 : up);
    glp_set_obj_coef(P, c + 1, lp.objective[k]);
    const auto begin = static_cast<std::size_t>(lp.start[k]);
    const auto end = static_cast<std::size_t>(lp.start[k + 1]);
    index.resize(1);
    value.resize(1);
    for (std::size_t e = begin; e < end; ++e) {
      index.push_back(lp.index[e] + 1);
      value.push_back(lp.value[e]);
    }
    glp_set_mat_col(P, c + 1, static_cast<int>(end - begin), index.data(), value.data());
  }
  return P;
}

solver_outcome solve_glpk_simplex(const lp_model& lp,
                                  const popalloc::dense_problem<double>& problem,
                                  double /*limit: enforced by the runner's RLIMIT_CPU*/,
                                  int method) {
  solver_outcome out;
  glp_term_out(GLP_OFF);
  const timer start;
  glp_prob* P = load_glpk(lp);
  glp_scale_prob(P, GLP_SF_AUTO);  // what glpsol does by default
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.meth = method;
  parm.presolve = GLP_ON;
  // No tm_lim: GLPK measures wall-clock time, which on a loaded machine would stop it after
  // less work than the other solvers get; the CPU-time limit of the runner stops it instead.
  const int code = glp_simplex(P, &parm);
  start.stop(out);
  out.iterations = glp_get_it_cnt(P);
  const int status = glp_get_status(P);
  if (code == 0 && status == GLP_OPT) {
    out.status = run_status::optimal;
  } else if (code == GLP_ETMLIM) {
    out.status = run_status::time_limit;
  } else {
    out.status = run_status::failed;
    set_message(
        out, "glp_simplex returned " + std::to_string(code) + ", status " + std::to_string(status));
  }
  out.reported_objective = glp_get_obj_val(P);
  std::vector<double> x(static_cast<std::size_t>(lp.columns));
  for (int c = 0; c < lp.columns; ++c) x[static_cast<std::size_t>(c)] = glp_get_col_prim(P, c + 1);
  const auto check = check_primal(problem, lp.kind, lp, x.data());
  out.objective = check.objective;
  out.max_violation = check.max_violation;
  glp_delete_prob(P);
  return out;
}

solver_outcome glpk_primal(const lp_model& lp, const popalloc::dense_problem<double>& p, double l) {
  return solve_glpk_simplex(lp, p, l, GLP_PRIMAL);
}
solver_outcome glpk_dual(const lp_model& lp, const popalloc::dense_problem<double>& p, double l) {
  return solve_glpk_simplex(lp, p, l, GLP_DUALP);
}

solver_outcome glpk_interior(const lp_model& lp, const popalloc::dense_problem<double>& problem,
                             double /*limit: GLPK's interior point has none; the runner kills*/) {
  solver_outcome out;
  glp_term_out(GLP_OFF);
  const timer start;
  glp_prob* P = load_glpk(lp);
  glp_iptcp parm;
  glp_init_iptcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  const int code = glp_interior(P, &parm);
  start.stop(out);
  const int status = glp_ipt_status(P);
  if (code == 0 && status == GLP_OPT) {
    out.status = run_status::optimal;
  } else {
    out.status = run_status::failed;
    set_message(out, "glp_interior returned " + std::to_string(code) + ", status " +
                         std::to_string(status));
  }
  out.reported_objective = glp_ipt_obj_val(P);
  std::vector<double> x(static_cast<std::size_t>(lp.columns));
  for (int c = 0; c < lp.columns; ++c) x[static_cast<std::size_t>(c)] = glp_ipt_col_prim(P, c + 1);
  const auto check = check_primal(problem, lp.kind, lp, x.data());
  out.objective = check.objective;
  out.max_violation = check.max_violation;
  glp_delete_prob(P);
  return out;
}
#endif

/// Reads exactly `size` bytes unless the writer closes the pipe first.
bool read_all(int fd, void* data, std::size_t size) {
  auto* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t got = ::read(fd, p, size);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    size -= static_cast<std::size_t>(got);
  }
  return true;
}

}  // namespace

std::vector<lp_solver_entry> lp_solvers() {
  std::vector<lp_solver_entry> solvers;
#if POPALLOC_COMPARE_HAVE_CLP
  const std::string clp = std::string("COIN-OR CLP ") + CLP_VERSION;
  solvers.push_back({"clp-primal", clp + ", primal simplex (presolve on)", clp_primal});
  solvers.push_back({"clp-dual", clp + ", dual simplex (presolve on)", clp_dual});
  solvers.push_back({"clp-barrier", clp + ", barrier + crossover (presolve on)", clp_barrier});
#else
  for (const char* name : {"clp-primal", "clp-dual", "clp-barrier"})
    solvers.push_back({name, "COIN-OR CLP (not found at configure time)", nullptr});
#endif
#if POPALLOC_COMPARE_HAVE_GLPK
  const std::string glpk = std::string("GLPK ") + glp_version();
  solvers.push_back({"glpk-primal", glpk + ", primal simplex (presolve, scaling)", glpk_primal});
  solvers.push_back({"glpk-dual", glpk + ", dual simplex (presolve, scaling)", glpk_dual});
  solvers.push_back({"glpk-interior", glpk + ", interior point (no crossover)", glpk_interior});
#else
  for (const char* name : {"glpk-primal", "glpk-dual", "glpk-interior"})
    solvers.push_back({name, "GLPK (not found at configure time)", nullptr});
#endif
  add_commercial_solvers(solvers);
  return solvers;
}

solver_outcome run_isolated(const lp_solver_entry& entry, const lp_model& model,
                            const popalloc::dense_problem<double>& problem,
                            double time_limit_seconds) {
  solver_outcome out;
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe() failed: " + std::string(strerror(errno)));
  std::fflush(stdout);
  std::fflush(stderr);
  const auto start = clock_type::now();
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error("fork() failed: " + std::string(strerror(errno)));
  }
  // The solver's own limit should stop it; RLIMIT_CPU (SIGXCPU, then SIGKILL) is the backstop for
  // solvers that check the clock rarely or not at all.
  const double grace = std::max(5.0, 0.05 * time_limit_seconds);
  if (child == 0) {
    ::close(fds[0]);
    const auto soft = static_cast<rlim_t>(std::ceil(time_limit_seconds + grace));
    const rlimit cpu_limit{soft, soft + 5};
    ::setrlimit(RLIMIT_CPU, &cpu_limit);
    solver_outcome result;
    try {
      result = entry.solve(model, problem, time_limit_seconds);
    } catch (const std::bad_alloc&) {
      result.status = run_status::failed;
      set_message(result, "out of memory");
    } catch (const std::exception& e) {
      result.status = run_status::failed;
      set_message(result, e.what());
    }
    const bool ok = ::write(fds[1], &result, sizeof result) == static_cast<ssize_t>(sizeof result);
    ::_exit(ok ? 0 : 1);  // no atexit handlers or stdio flushes of the parent's state
  }
  ::close(fds[1]);
  bool have_result = false, killed = false;
  for (;;) {
    const double left = 3.0 * time_limit_seconds + 60.0 - seconds_since(start);
    if (left <= 0) {
      ::kill(child, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min(left * 1000.0, 1000.0)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready > 0) {
      have_result = read_all(fds[0], &out, sizeof out);
      break;
    }
  }
  ::close(fds[0]);
  int wstatus = 0;
  rusage usage{};
  while (::wait4(child, &wstatus, 0, &usage) < 0 && errno == EINTR) {
  }
  const double elapsed = seconds_since(start);
  const double child_cpu =
      static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
      1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  const bool cpu_limit_hit =
      WIFSIGNALED(wstatus) && (WTERMSIG(wstatus) == SIGXCPU || WTERMSIG(wstatus) == SIGKILL);
  if (killed || (!have_result && cpu_limit_hit)) {
    out = solver_outcome{};
    out.status = run_status::killed;
    out.seconds = elapsed;
    out.cpu_seconds = child_cpu;
    set_message(out, std::string("killed after ") + std::to_string(static_cast<long>(child_cpu)) +
                         " CPU s / " + std::to_string(static_cast<long>(elapsed)) +
                         " wall s (limit " + std::to_string(static_cast<long>(time_limit_seconds)) +
                         " CPU s)");
  } else if (!have_result) {
    out = solver_outcome{};
    out.status = run_status::failed;
    out.seconds = elapsed;
    out.cpu_seconds = child_cpu;
    if (WIFSIGNALED(wstatus))
      set_message(out, std::string("solver process died: ") + strsignal(WTERMSIG(wstatus)));
    else
      set_message(out, "solver process ended without a result");
  }
  return out;
}

}  // namespace popalloc_compare
