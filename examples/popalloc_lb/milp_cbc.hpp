// SPDX-License-Identifier: Apache-2.0
// The exact shard placement MILP (docs/load-balancing.md) through COIN-OR CBC. Kept out of the
// header-only library so that popalloc never depends on CBC: only code that links CBC compiles
// milp_cbc.cpp with POPALLOC_LB_HAVE_CBC=1 (examples/popalloc_lb/example.cmake, tests/lb).
//
// CBC 2.10.8 crashes (SIGSEGV) inside the library on some of the benchmark's sub-problems, and
// its time limit is not checked during root processing. So by default every solve runs in a
// child process (fork): the child streams each new incumbent and the final answer through a pipe,
// the parent kills it at the wall-clock limit and turns a crash into a status instead of dying.
#pragma once

#include <cstdint>
#include <string>

#include <popalloc/lb/problem.hpp>

namespace popalloc_lb {

/// A deliberate failure of the CBC child, so that tests can prove the isolation (never set in
/// production; popalloc-lb takes it from POPALLOC_LB_MILP_FAULT).
enum class milp_fault {
  none,
  abort_child,           ///< the child calls abort() before solving
  segv_after_incumbent,  ///< the child raises SIGSEGV right after streaming its first incumbent
  hang_child,            ///< the child sleeps forever before solving (the parent must kill it)
};

/// Options of the MILP solve.
struct milp_options {
  double mip_gap = 0.05;     ///< relative MIP gap (POP: CPLEX MIPGap 0.05)
  double time_limit = 60.0;  ///< wall-clock seconds per solve (CBC's limit and the kill deadline)
  /// Optional MIP start (e.g. the price solver's placement); ignored when empty.
  const popalloc::lb::placement* start = nullptr;
  /// Run CBC in a child process (the default); false runs it in this process.
  bool isolate = true;
  /// Seconds past time_limit before the parent kills the child (CBC checks its own limit only
  /// between nodes, and not at all in root processing). Negative: max(1, 0.05 * time_limit).
  double kill_grace = -1.0;
  milp_fault fault = milp_fault::none;  ///< isolate only: test hook, see milp_fault
};

/// What CBC did, from the best to the worst (the order of worse()).
enum class milp_outcome : std::uint8_t {
  optimal = 0,         ///< within the MIP gap
  infeasible = 1,      ///< proven
  time_limit = 2,      ///< CBC stopped at its limit or was killed at the deadline
  not_run = 3,         ///< the child could not be started
  solver_crashed = 4,  ///< the child died on a signal or without an answer
};

/// Stable name: "optimal", "infeasible", "time_limit", "not_run" or "solver_crashed".
const char* to_string(milp_outcome outcome);

/// The outcome that says more about what went wrong, for merging POP's parts; ties keep `a`.
inline milp_outcome worse(milp_outcome a, milp_outcome b) { return b > a ? b : a; }

/// Where a placement comes from, from the best to the worst (the order of worse()).
enum class placement_source : std::uint8_t {
  cbc = 0,            ///< CBC's final answer
  cbc_incumbent = 1,  ///< the last incumbent the child streamed before it was killed or crashed
  mip_start = 2,      ///< the MIP start CBC was given (popalloc-lb: the price solver's)
  previous_placement = 3,  ///< the current placement, kept (popalloc-lb)
  none = 4,                ///< no placement
};

/// Stable name: "cbc", "cbc_incumbent", "mip_start", "previous_placement" or "none".
const char* to_string(placement_source source);

/// The source that says more about what went wrong, for merging POP's parts; ties keep `a`.
inline placement_source worse(placement_source a, placement_source b) { return b > a ? b : a; }

/// What happened to the MILP solve besides the placement.
struct milp_report {
  milp_outcome outcome = milp_outcome::not_run;
  /// Where the returned placement comes from: cbc, cbc_incumbent or none.
  placement_source source = placement_source::none;
  bool proven_optimal = false;  ///< within mip_gap of the best bound
  double objective = 0.0;       ///< new replicas of the returned solution (CBC's value)
  double best_bound = 0.0;      ///< CBC's lower bound on the optimum (final answers only)
  int nodes = 0;
  int incumbents = 0;              ///< incumbents received from the child
  double child_cpu_seconds = 0.0;  ///< CPU time of the child (isolate only)
};

/// Stable name of a fault ("none", "abort", "segv_after_incumbent", "hang"); parse_milp_fault
/// reads them back and returns false on an unknown name.
const char* to_string(milp_fault f);
bool parse_milp_fault(const std::string& name, milp_fault& out);

/// True when this build links CBC.
bool milp_available();

/// The placement of the MILP solve and what CBC did.
struct milp_result : popalloc::lb::lb_result {
  milp_report report;
};

/// Solves the MILP exactly (to mip_gap). Returns balanced with the placement (r cleaned of values
/// below 1e-9 and renormalised), unbalanced when an incumbent fails the checker, infeasible when
/// CBC proves it, no_solution when there is no incumbent (time limit, crash: report.outcome and
/// the message say which). Never lets a CBC crash end the calling process when isolate is set.
/// \throws popalloc::invalid_problem when CBC is not available.
milp_result solve_milp(const popalloc::lb::problem& prob, const milp_options& options);

}  // namespace popalloc_lb
