// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief TE on popalloc's price-discovery core: commodities are jobs, paths are options that
/// consume every arc on them.
///
/// Max total flow is separable and maps exactly: commodity k is a job with linear utility,
/// option p (a path) has value d_k and consumes d_k of every arc on it, so x_p is the fraction of
/// d_k routed on p and the job's simplex constraint sum_p x_p <= 1 is the demand cap.
///
/// Max concurrent flow and min max-link-utilization are not separable; both reduce to the
/// routability of a scaled demand. Let a* = max{a : a d is routable within c} (no cap at 1).
/// Then MLU* = 1/a* and MCF* = min(1, a*). For a level a the core solves the target-priority
/// problem "route the whole demand d_k of every commodity (target 1, weight d_k) within
/// capacities c/a" and every solve yields two certificates:
///  - a lower bound: the returned allocation, normalised per commodity to route its whole
///    demand, loads the arcs with l; then a* >= min_e c_e / l_e (that routing scaled to fit);
///  - an upper bound: for any arc prices p >= 0, a* <= (sum_e c_e p_e) / (sum_k d_k pi_k(p)),
///    pi_k = the cheapest of k's paths (price the capacity both sides of any routing of a d).
///    At prices where the core's dual bound is negative this is < a (see docs).
/// Bisection on a between the bounds stops when (U - L) <= tolerance * U, so the answer is exact
/// to the tolerance with a certificate, whatever the accuracy of each core solve (a solve that
/// decides nothing is repeated with a tighter gap).
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "popalloc/bundle_problem.hpp"
#include "popalloc/dual_solver.hpp"
#include "popalloc/error.hpp"
#include "popalloc/options.hpp"
#include "popalloc/status.hpp"
#include "popalloc/te/flow.hpp"
#include "popalloc/te/instance.hpp"
#include "popalloc/utility/linear.hpp"
#include "popalloc/utility/target_priority.hpp"

namespace popalloc::te {

/// \brief Options of the price-discovery TE solver.
struct price_options {
  /// total-flow: the core's relative duality gap; concurrent-flow and min-max-utilization: the
  /// relative distance between the certified bounds on a* at which the bisection stops.
  double relative_gap = 1e-5;
  int max_iterations = 5000;  ///< dual evaluations per core solve
  int max_solves = 80;        ///< core solves of the bisection
  double time_limit_seconds = std::numeric_limits<double>::infinity();
  int threads = 0;  ///< OpenMP threads of the core (0: the OpenMP default)
};

namespace detail {

/// The bundle problem of `inst`: value `value_is_demand ? d_k : 1`, consumption d_k per arc.
inline bundle_problem<double> te_bundle(const te_instance& inst, bool routing) {
  Eigen::VectorXd capacity(inst.graph.arc_count());
  for (std::int32_t e = 0; e < inst.graph.arc_count(); ++e)
    capacity[e] = inst.graph.arcs[static_cast<std::size_t>(e)].capacity;
  bundle_problem<double> problem(capacity);
  std::vector<consumption> uses;
  for (std::size_t k = 0; k < inst.commodities.size(); ++k) {
    const double d = inst.commodities[k].demand;
    if (routing)
      problem.add_job(job_parameters{d, 1.0});
    else
      problem.add_job(job_parameters{1.0, 0.0});
    for (auto p = inst.paths.pair_offset[k]; p < inst.paths.pair_offset[k + 1]; ++p) {
      uses.clear();
      for (auto a = inst.paths.path_offset[static_cast<std::size_t>(p)];
           a < inst.paths.path_offset[static_cast<std::size_t>(p) + 1]; ++a)
        uses.push_back(consumption{inst.paths.arcs[static_cast<std::size_t>(a)], d});
      problem.add_option(routing ? 1.0 : d, uses);
    }
  }
  return problem;
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Cost of every path at arc prices p.
inline std::vector<double> path_costs(const te_instance& inst, const Eigen::VectorXd& prices) {
  std::vector<double> cost(static_cast<std::size_t>(inst.path_count()), 0.0);
  for (std::size_t p = 0; p < cost.size(); ++p)
    for (auto a = inst.paths.path_offset[p]; a < inst.paths.path_offset[p + 1]; ++a)
      cost[p] += prices[inst.paths.arcs[static_cast<std::size_t>(a)]];
  return cost;
}

/// Upper bound on a*: sum_e c_e p_e / sum_k d_k min_p cost_p (inf when the denominator is 0).
inline double routability_upper_bound(const te_instance& inst, const Eigen::VectorXd& prices) {
  double supply = 0.0;
  for (std::int32_t e = 0; e < inst.graph.arc_count(); ++e)
    supply += inst.graph.arcs[static_cast<std::size_t>(e)].capacity * std::max(prices[e], 0.0);
  const auto cost = path_costs(inst, prices.cwiseMax(0.0));
  double need = 0.0;
  for (std::size_t k = 0; k < inst.commodities.size(); ++k) {
    double cheapest = std::numeric_limits<double>::infinity();
    for (auto p = inst.paths.pair_offset[k]; p < inst.paths.pair_offset[k + 1]; ++p)
      cheapest = std::min(cheapest, cost[static_cast<std::size_t>(p)]);
    need += inst.commodities[k].demand * cheapest;
  }
  return need > 0.0 ? supply / need : std::numeric_limits<double>::infinity();
}

/// Routing split y (per path, summing to 1 per commodity) and its lower bound min_e c_e / l_e
/// on a*, l the loads of routing every whole demand with y.
inline double routability_lower_bound(const te_instance& inst, const std::vector<double>& split) {
  std::vector<double> load(inst.graph.arcs.size(), 0.0);
  for (std::size_t k = 0; k < inst.commodities.size(); ++k)
    for (auto p = inst.paths.pair_offset[k]; p < inst.paths.pair_offset[k + 1]; ++p) {
      const double f = inst.commodities[k].demand * split[static_cast<std::size_t>(p)];
      if (f == 0.0) continue;
      for (auto a = inst.paths.path_offset[static_cast<std::size_t>(p)];
           a < inst.paths.path_offset[static_cast<std::size_t>(p) + 1]; ++a)
        load[static_cast<std::size_t>(inst.paths.arcs[static_cast<std::size_t>(a)])] += f;
    }
  double bound = std::numeric_limits<double>::infinity();
  for (std::size_t e = 0; e < load.size(); ++e)
    if (load[e] > 0.0) bound = std::min(bound, inst.graph.arcs[e].capacity / load[e]);
  return bound;
}

/// Index of k's cheapest path at `cost` among those avoiding closed arcs (-1: none).
inline std::int64_t cheapest_open_path(const te_instance& inst, std::size_t k,
                                       const std::vector<double>& cost) {
  std::int64_t best = -1;
  for (auto p = inst.paths.pair_offset[k]; p < inst.paths.pair_offset[k + 1]; ++p) {
    bool open = true;
    for (auto a = inst.paths.path_offset[static_cast<std::size_t>(p)];
         a < inst.paths.path_offset[static_cast<std::size_t>(p) + 1] && open; ++a)
      open = inst.graph.arcs[static_cast<std::size_t>(inst.paths.arcs[static_cast<std::size_t>(a)])]
                 .capacity > 0.0;
    if (open &&
        (best < 0 || cost[static_cast<std::size_t>(p)] < cost[static_cast<std::size_t>(best)]))
      best = p;
  }
  return best;
}

/// The allocation of a routing solve normalised to whole demands; commodities that got nothing
/// take their cheapest open path at `prices`.
inline std::vector<double> normalised_split(const te_instance& inst, const solve_result& r,
                                            const Eigen::VectorXd& prices) {
  std::vector<double> split(static_cast<std::size_t>(inst.path_count()), 0.0);
  const auto cost = path_costs(inst, prices);
  const auto& a = r.allocation;
  for (std::size_t k = 0; k < inst.commodities.size(); ++k) {
    double total = 0.0;
    for (auto q = a.job_offset[k]; q < a.job_offset[k + 1]; ++q)
      total += a.fraction[static_cast<std::size_t>(q)];
    if (total > 1e-12) {
      for (auto q = a.job_offset[k]; q < a.job_offset[k + 1]; ++q)
        split[static_cast<std::size_t>(inst.paths.pair_offset[k] +
                                       a.option[static_cast<std::size_t>(q)])] +=
            a.fraction[static_cast<std::size_t>(q)] / total;
    } else {
      split[static_cast<std::size_t>(cheapest_open_path(inst, k, cost))] = 1.0;
    }
  }
  return split;
}

}  // namespace detail

/// \brief Solves `inst` for `objective` with the price-discovery core. The returned flow is
/// always feasible (capacities and demands; for min-max-utilization every demand is routed and
/// loads are <= objective * c). \throws invalid_problem for an invalid instance, or for
/// min-max-utilization when a commodity has no path avoiding zero-capacity arcs.
inline te_result solve_price(const te_instance& inst, te_objective objective,
                             const price_options& options = {}) {
  inst.validate();
  if (!(options.relative_gap > 0.0) || !std::isfinite(options.relative_gap))
    throw invalid_options("relative gap must be a finite number > 0");
  if (options.max_solves < 1) throw invalid_options("max_solves must be >= 1");
  const auto start = std::chrono::steady_clock::now();
  te_result out;
  out.kind = objective;
  out.path_flow.assign(static_cast<std::size_t>(inst.path_count()), 0.0);
  solver_options core;
  core.max_iterations = options.max_iterations;
  core.threads = options.threads;
  core.time_limit_seconds = options.time_limit_seconds;
  // The bisection's level tests need a gap of the interval's width relative to the demand
  // served (target priority's idle range), not to the shortfall.
  core.gap = gap_measure::anchored;

  if (objective == te_objective::total_flow) {
    const auto problem = detail::te_bundle(inst, false);
    core.relative_gap = options.relative_gap;
    const solve_result r = popalloc::solve(problem, utility::linear{}, core);
    const auto& a = r.allocation;
    for (std::size_t k = 0; k < inst.commodities.size(); ++k)
      for (auto q = a.job_offset[k]; q < a.job_offset[k + 1]; ++q)
        out.path_flow[static_cast<std::size_t>(inst.paths.pair_offset[k] +
                                               a.option[static_cast<std::size_t>(q)])] +=
            a.fraction[static_cast<std::size_t>(q)] * inst.commodities[k].demand;
    out.objective = summarize(inst, out.path_flow).total_flow;
    out.bound = r.dual_bound;
    out.relative_gap = out.bound > 0.0 ? std::max(0.0, out.bound - out.objective) / out.bound : 0.0;
    out.status = to_string(r.status);
    out.iterations = r.iterations;
    out.solves = 1;
    out.seconds = detail::seconds_since(start);
    return out;
  }

  // Non-separable objectives: bisection on the routable level a with certified bounds [L, U].
  std::vector<double> split(out.path_flow.size(), 0.0);
  {
    const std::vector<double> unit_cost(out.path_flow.size(), 0.0);
    bool routable = true;
    for (std::size_t k = 0; k < inst.commodities.size(); ++k) {
      // Zero costs: the first (shortest) open path of every commodity.
      const auto p = detail::cheapest_open_path(inst, k, unit_cost);
      if (p < 0) {
        routable = false;
        break;
      }
      split[static_cast<std::size_t>(p)] = 1.0;
    }
    if (!routable) {
      if (objective == te_objective::min_max_utilization)
        throw invalid_problem(
            "a commodity has no path avoiding zero-capacity arcs: its demand cannot be routed, "
            "so the maximum link utilization is unbounded");
      out.objective = 0.0;
      out.bound = 0.0;
      out.relative_gap = 0.0;
      out.status = "converged";
      out.seconds = detail::seconds_since(start);
      return out;
    }
  }
  double lower = detail::routability_lower_bound(inst, split);
  Eigen::VectorXd prices(inst.graph.arc_count());
  for (std::int32_t e = 0; e < inst.graph.arc_count(); ++e) {
    const double c = inst.graph.arcs[static_cast<std::size_t>(e)].capacity;
    prices[e] = c > 0.0 ? 1.0 / c : 0.0;
  }
  double upper = detail::routability_upper_bound(inst, prices);
  auto problem = detail::te_bundle(inst, true);
  Eigen::VectorXd capacity = problem.capacity();
  double solve_gap = 1e-4;
  Eigen::VectorXd warm;
  std::string status = "converged";
  // For concurrent flow a* >= 1 settles it: flows can be capped at the demands.
  auto done = [&]() {
    if (objective == te_objective::concurrent_flow && lower >= 1.0) return true;
    return upper - lower <= options.relative_gap * upper;
  };
  while (!done()) {
    if (out.solves >= options.max_solves) {
      status = "iteration_limit";
      break;
    }
    const double elapsed = detail::seconds_since(start);
    if (elapsed >= options.time_limit_seconds) {
      status = "time_limit";
      break;
    }
    const double level = std::isfinite(upper) && upper < 4.0 * lower
                             ? 0.5 * (lower + upper)
                             : (std::isfinite(upper) ? std::sqrt(lower * upper) : 2.0 * lower);
    problem.capacity() = capacity / level;
    // Deciding a level close to a* needs a core gap of the order of the interval's width.
    core.relative_gap =
        std::isfinite(upper) ? std::min(solve_gap, 0.1 * (upper - lower) / upper) : solve_gap;
    core.time_limit_seconds = options.time_limit_seconds - elapsed;
    core.warm_start_prices = warm;
    const solve_result r = popalloc::solve(problem, utility::target_priority{}, core);
    ++out.solves;
    out.iterations += r.iterations;
    const double u = detail::routability_upper_bound(inst, r.prices);
    const auto candidate = detail::normalised_split(inst, r, r.prices);
    const double l = detail::routability_lower_bound(inst, candidate);
    const double width = upper - lower;
    if (u < upper) upper = u;
    if (l > lower) {
      lower = l;
      split = candidate;
    }
    // Warm starts only from levels the solve proved infeasible: there the prices price the
    // bottleneck; below a* they are near 0 and a poor start (measured: 10x more iterations).
    if (u <= level && r.prices.allFinite()) warm = r.prices;
    if (upper - lower > 0.75 * width) {
      // The solve did not settle which side of a* the level is on: ask for more accuracy.
      if (solve_gap <= 1e-10) {
        status = "stalled";
        break;
      }
      solve_gap *= 0.1;
    }
  }
  const double scale = objective == te_objective::concurrent_flow ? std::min(1.0, lower) : 1.0;
  for (std::size_t k = 0; k < inst.commodities.size(); ++k)
    for (auto p = inst.paths.pair_offset[k]; p < inst.paths.pair_offset[k + 1]; ++p)
      out.path_flow[static_cast<std::size_t>(p)] =
          scale * inst.commodities[k].demand * split[static_cast<std::size_t>(p)];
  if (objective == te_objective::concurrent_flow) {
    out.objective = std::min(1.0, lower);
    out.bound = std::min(1.0, upper);
    out.relative_gap = out.bound > 0.0 ? (out.bound - out.objective) / out.bound : 0.0;
  } else {
    out.objective = summarize(inst, out.path_flow).max_link_utilization;
    out.bound = 1.0 / upper;
    out.relative_gap = out.objective > 0.0 ? (out.objective - out.bound) / out.objective : 0.0;
  }
  out.status = status;
  out.seconds = detail::seconds_since(start);
  return out;
}

}  // namespace popalloc::te
