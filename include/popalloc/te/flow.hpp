// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief TE objectives, the result every TE solver returns (flow per path plus certificate),
/// and the feasibility and objective evaluation of a flow.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "popalloc/error.hpp"
#include "popalloc/status.hpp"
#include "popalloc/te/instance.hpp"

namespace popalloc::te {

/// \brief The three path-formulation objectives of POP's traffic engineering.
enum class te_objective : std::uint8_t {
  total_flow = 0,           ///< max sum of flows, flow_k <= d_k, loads <= c_e
  concurrent_flow = 1,      ///< max alpha <= 1 with flow_k >= alpha d_k for every k
  min_max_utilization = 2,  ///< min z, all demand routed, load_e <= z c_e (z not capped at 1)
};

/// \brief "total-flow", "concurrent-flow", "min-max-utilization".
inline const char* to_string(te_objective o) {
  switch (o) {
    case te_objective::total_flow:
      return "total-flow";
    case te_objective::concurrent_flow:
      return "concurrent-flow";
    case te_objective::min_max_utilization:
      return "min-max-utilization";
  }
  return "unknown";
}

/// \brief Accepts the names of to_string() and the short forms "total", "mcf", "mlu".
inline te_objective parse_te_objective(const std::string& name) {
  if (name == "total-flow" || name == "total" || name == "total_flow")
    return te_objective::total_flow;
  if (name == "concurrent-flow" || name == "mcf" || name == "concurrent_flow")
    return te_objective::concurrent_flow;
  if (name == "min-max-utilization" || name == "mlu" || name == "min-max-link-utilization")
    return te_objective::min_max_utilization;
  throw invalid_options("unknown objective '" + name +
                        "' (total-flow, concurrent-flow (mcf), min-max-utilization (mlu))");
}

/// \brief Why a TE solve stopped: the core's statuses with their values and names (a price solve
/// reports its core's or its bisection's), and optimal for an exact LP. Append-only with explicit
/// values: never reorder.
enum class solve_status : std::uint8_t {
  not_solved = 0,       ///< no solve was run
  converged = 1,        ///< certified gap within the tolerance
  iteration_limit = 2,  ///< the core's max_iterations (total-flow) or max_solves (bisection)
  time_limit = 3,       ///< time_limit_seconds reached
  interrupted = 4,      ///< the progress callback asked to stop
  stalled = 5,          ///< the bisection cannot decide its level at any core gap
  numerical_error = 6,  ///< the core lost precision (total-flow)
  parts_converged = 7,  ///< the core's POP status (not returned by a TE solve)
  optimal = 8,          ///< exact LP solved to optimality
};

/// \brief The TE status with the meaning of a core status.
inline solve_status from_core(popalloc::solve_status s) noexcept {
  switch (s) {
    case popalloc::solve_status::not_solved:
      return solve_status::not_solved;
    case popalloc::solve_status::converged:
      return solve_status::converged;
    case popalloc::solve_status::iteration_limit:
      return solve_status::iteration_limit;
    case popalloc::solve_status::time_limit:
      return solve_status::time_limit;
    case popalloc::solve_status::interrupted:
      return solve_status::interrupted;
    case popalloc::solve_status::stalled:
      return solve_status::stalled;
    case popalloc::solve_status::numerical_error:
      return solve_status::numerical_error;
    case popalloc::solve_status::parts_converged:
      return solve_status::parts_converged;
  }
  return solve_status::numerical_error;
}

/// \brief Stable lower-case name: the core's name of the same status, or "optimal".
inline const char* to_string(solve_status s) noexcept {
  switch (s) {
    case solve_status::not_solved:
      return "not_solved";
    case solve_status::converged:
      return "converged";
    case solve_status::iteration_limit:
      return "iteration_limit";
    case solve_status::time_limit:
      return "time_limit";
    case solve_status::interrupted:
      return "interrupted";
    case solve_status::stalled:
      return "stalled";
    case solve_status::numerical_error:
      return "numerical_error";
    case solve_status::parts_converged:
      return "parts_converged";
    case solve_status::optimal:
      return "optimal";
  }
  return "unknown";
}

/// \brief The status that says more about what went wrong, for merging the statuses of POP's
/// parts: the core's order (popalloc::worse), with optimal ranked like converged; ties keep `a`.
inline solve_status worse(solve_status a, solve_status b) noexcept {
  // Values 0..7 are the core's (see the enum), so the cast names the same status.
  auto core = [](solve_status s) {
    return s == solve_status::optimal ? popalloc::solve_status::converged
                                      : static_cast<popalloc::solve_status>(s);
  };
  return popalloc::worse(core(a), core(b)) == core(a) ? a : b;
}

/// \brief What a TE solve returns. `objective` is the value of the returned flow; `bound` a
/// certified bound on the optimum on the other side (upper for total-flow and concurrent-flow,
/// lower for min-max-utilization), NaN when the solver has none; `relative_gap` their distance
/// relative to the bound.
struct result {
  te_objective kind = te_objective::total_flow;
  std::vector<double> path_flow;  ///< flow on every path of the instance
  double objective = std::numeric_limits<double>::quiet_NaN();
  double bound = std::numeric_limits<double>::quiet_NaN();
  double relative_gap = std::numeric_limits<double>::quiet_NaN();
  solve_status status = solve_status::not_solved;
  int iterations = 0;    ///< dual evaluations (price), simplex iterations (LP)
  int solves = 0;        ///< core solves (bisection steps for the non-separable objectives)
  double seconds = 0.0;  ///< wall time of the solve (excludes paths and traffic matrix)
  int pop_parts = 1;
  std::vector<double> part_seconds;  ///< POP: wall time of every part
  /// Arc prices behind `bound` (price solver without POP; empty otherwise): a re-plan of a
  /// drifted traffic matrix (replan_price) starts from them.
  std::vector<double> prices;
};

/// \brief Loads, objective values and violations of a flow.
struct flow_summary {
  double total_flow = 0.0;
  double concurrent_flow = 0.0;        ///< min_k flow_k / d_k
  double max_link_utilization = 0.0;   ///< max_e load_e / c_e (inf if a closed arc carries flow)
  double max_capacity_excess = 0.0;    ///< max_e max(0, load_e - c_e)
  double max_demand_excess = 0.0;      ///< max_k max(0, flow_k - d_k)
  double max_demand_shortfall = 0.0;   ///< max_k max(0, d_k - flow_k)
  double min_path_flow = 0.0;          ///< most negative path flow (0 if none)
  std::vector<double> load;            ///< per arc
  std::vector<double> commodity_flow;  ///< per commodity
};

/// \brief Evaluates `path_flow` on `inst`. \throws invalid_problem for a wrong size.
inline flow_summary summarize(const instance& inst, const std::vector<double>& path_flow) {
  if (static_cast<std::int64_t>(path_flow.size()) != inst.path_count())
    throw invalid_problem("flow vector has " + std::to_string(path_flow.size()) +
                          " entries, the instance has " + std::to_string(inst.path_count()) +
                          " paths");
  flow_summary s;
  s.load.assign(inst.graph.arcs.size(), 0.0);
  s.commodity_flow.assign(inst.commodities.size(), 0.0);
  s.concurrent_flow = std::numeric_limits<double>::infinity();
  for (std::size_t q = 0; q < inst.commodities.size(); ++q) {
    double f = 0.0;
    for (auto p = inst.paths.pair_offset[q]; p < inst.paths.pair_offset[q + 1]; ++p) {
      const double x = path_flow[static_cast<std::size_t>(p)];
      s.min_path_flow = std::min(s.min_path_flow, x);
      f += x;
      for (auto a = inst.paths.path_offset[static_cast<std::size_t>(p)];
           a < inst.paths.path_offset[static_cast<std::size_t>(p) + 1]; ++a)
        s.load[static_cast<std::size_t>(inst.paths.arcs[static_cast<std::size_t>(a)])] += x;
    }
    s.commodity_flow[q] = f;
    s.total_flow += f;
    const double d = inst.commodities[q].demand;
    s.concurrent_flow = std::min(s.concurrent_flow, f / d);
    s.max_demand_excess = std::max(s.max_demand_excess, f - d);
    s.max_demand_shortfall = std::max(s.max_demand_shortfall, d - f);
  }
  if (inst.commodities.empty()) s.concurrent_flow = 0.0;
  for (std::size_t e = 0; e < s.load.size(); ++e) {
    const double c = inst.graph.arcs[e].capacity;
    s.max_capacity_excess = std::max(s.max_capacity_excess, s.load[e] - c);
    if (c > 0.0)
      s.max_link_utilization = std::max(s.max_link_utilization, s.load[e] / c);
    else if (s.load[e] > 0.0)
      s.max_link_utilization = std::numeric_limits<double>::infinity();
  }
  return s;
}

/// \brief The value of `objective` for a flow: total flow, min(1, min_k flow_k/d_k), or the
/// maximum link utilization.
inline double objective_value(const flow_summary& s, te_objective objective) {
  switch (objective) {
    case te_objective::total_flow:
      return s.total_flow;
    case te_objective::concurrent_flow:
      return std::min(1.0, s.concurrent_flow);
    case te_objective::min_max_utilization:
      return s.max_link_utilization;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace popalloc::te
