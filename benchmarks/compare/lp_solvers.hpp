// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Adapters that hand the shared lp_model to an external LP solver, and a runner that
/// executes each in a child process so that its time limit holds even when the library ignores
/// its own limit (GLPK's interior point method has none) or crashes.
#pragma once

#include <string>
#include <vector>

#include <popalloc/dense_problem.hpp>

#include "lp_model.hpp"

namespace popalloc_compare {

enum class run_status : int {
  optimal = 0,     ///< the solver proved optimality
  time_limit = 1,  ///< the solver stopped itself at the time limit
  killed = 2,      ///< it ran past the limit (plus grace) and was killed
  failed = 3,      ///< error, crash, infeasible/unbounded report or any other non-optimal end
  not_built = 4,   ///< its library was not found at configure time
  not_an_lp = 5,   ///< the utility is not piecewise linear
  converged = 6,   ///< popalloc: relative gap reached
  stopped = 7,     ///< popalloc: iteration limit or stall (feasible point and bound still valid)
  skipped = 8,     ///< not requested
};
const char* to_string(run_status status);

struct solver_outcome {
  run_status status = run_status::failed;
  double seconds = 0.0;             ///< load + optimize, wall clock
  double cpu_seconds = 0.0;         ///< load + optimize, CPU time of the process
  double objective = 0.0;           ///< sum_i f_i(t_i) recomputed at the solver's x
  double reported_objective = 0.0;  ///< what the solver says its objective is
  double max_violation = 0.0;       ///< largest constraint violation of its x
  long long iterations = 0;         ///< simplex / barrier iterations
  char message[240] = {};           ///< why it failed, or a remark
};

using lp_solve_function = solver_outcome (*)(const lp_model& model,
                                             const popalloc::dense_problem<double>& problem,
                                             double time_limit_seconds);

struct lp_solver_entry {
  std::string name;         ///< e.g. "clp-dual"
  std::string description;  ///< e.g. "COIN-OR CLP 1.17.6, dual simplex (presolve on)"
  lp_solve_function solve;  ///< null when not built
};

/// \brief Every LP solver popalloc-compare knows, built or not, in display order.
std::vector<lp_solver_entry> lp_solvers();

/// \brief Runs `entry.solve` in a child process under a CPU-time limit (RLIMIT_CPU: the kernel
/// stops it `grace` CPU seconds after `time_limit_seconds`), so a limit means the same amount of
/// work however loaded the machine is; a wall-clock backstop of 3x the limit (+60 s) also applies.
solver_outcome run_isolated(const lp_solver_entry& entry, const lp_model& model,
                            const popalloc::dense_problem<double>& problem,
                            double time_limit_seconds);

/// Commercial adapters (commercial.cpp), compiled only when their libraries are found.
void add_commercial_solvers(std::vector<lp_solver_entry>& solvers);

}  // namespace popalloc_compare
