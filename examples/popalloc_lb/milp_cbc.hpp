// SPDX-License-Identifier: Apache-2.0
// The exact shard placement MILP (domains.md §4.1) through COIN-OR CBC. Kept out of the
// header-only library so that popalloc never depends on CBC: only code that links CBC compiles
// milp_cbc.cpp with POPALLOC_LB_HAVE_CBC=1 (examples/popalloc_lb/example.cmake, tests/lb).
#pragma once

#include <popalloc/lb/problem.hpp>

namespace popalloc_lb {

/// Options of the MILP solve.
struct milp_options {
  double mip_gap = 0.05;     ///< relative MIP gap (POP: CPLEX MIPGap 0.05)
  double time_limit = 60.0;  ///< seconds per solve
  /// Optional MIP start (e.g. the price solver's placement); ignored when empty.
  const popalloc::lb::placement* start = nullptr;
};

/// What CBC reported besides the placement.
struct milp_report {
  bool proven_optimal = false;  ///< within mip_gap of the best bound
  double objective = 0.0;       ///< new replicas of the returned solution (CBC's value)
  double best_bound = 0.0;      ///< CBC's lower bound on the optimum
  int nodes = 0;
};

/// True when this build links CBC.
bool milp_available();

/// Solves the MILP exactly (to mip_gap). Returns balanced with the placement (r cleaned of values
/// below 1e-9 and renormalised), infeasible when CBC proves it, no_solution when the time limit
/// ends without an incumbent. \throws popalloc::invalid_problem when CBC is not available.
popalloc::lb::lb_result solve_milp(const popalloc::lb::problem& prob, const milp_options& options,
                                   milp_report* report = nullptr);

}  // namespace popalloc_lb
