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
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "popalloc/bundle_problem.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/dual_solver.hpp"
#include "popalloc/error.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"
#include "popalloc/te/flow.hpp"
#include "popalloc/te/instance.hpp"
#include "popalloc/utility/linear.hpp"
#include "popalloc/utility/target_priority.hpp"

namespace popalloc::te {

/// \brief What price_options::callback receives: after every dual evaluation of total-flow's
/// core solve, and after every core solve (bisection step) of the other objectives. objective
/// and bound bracket the optimum as certified so far (total-flow: the core's primal objective
/// and dual bound; the bisection: its bounds on a* in the objective's terms), relative_gap is
/// their distance as a result measures it.
struct progress {
  int solves = 0;      ///< core solves finished
  int iterations = 0;  ///< dual evaluations so far, all core solves together
  double elapsed_seconds = 0.0;
  double objective = 0.0;
  double bound = 0.0;
  double relative_gap = 0.0;
};

/// \brief Progress callback of the TE solvers; returning callback_action::stop ends the solve
/// with solve_status::interrupted and the best flow found so far.
using progress_callback = std::function<callback_action(const progress&)>;

/// \brief The core's options as the TE solver starts them: a tighter gap and more iterations
/// than a single allocation needs, and the anchored gap measure (the bisection's level tests need
/// a gap of the interval's width relative to the demand served, target priority's idle range,
/// not to the shortfall).
inline solver_options default_core_options() {
  solver_options core;
  core.relative_gap = 1e-5;
  core.max_iterations = 5000;
  core.gap = gap_measure::anchored;
  return core;
}

/// \brief Options of the price-discovery TE solver.
struct price_options {
  /// The core's options. relative_gap: for total-flow the core's relative duality gap; for
  /// concurrent-flow and min-max-utilization the relative distance between the certified bounds
  /// on a* at which the bisection stops (every core solve gets its own gap). max_iterations: dual
  /// evaluations per core solve. time_limit_seconds: of the whole TE solve. warm_start_prices:
  /// total-flow only (the bisection warm-starts itself).
  solver_options solver = default_core_options();
  int max_solves = 80;  ///< core solves of the bisection
  /// Called as `progress` says. Called concurrently when POP solves parts in parallel, so it
  /// must then be thread-safe.
  progress_callback callback;
};

namespace detail {

/// The bundle problem of `inst`: value `value_is_demand ? d_k : 1`, consumption d_k per arc.
inline bundle_problem<double> bundle(const instance& inst, bool routing) {
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

/// Cost of every path at arc prices p.
inline std::vector<double> path_costs(const instance& inst, const Eigen::VectorXd& prices) {
  std::vector<double> cost(static_cast<std::size_t>(inst.path_count()), 0.0);
  for (std::size_t p = 0; p < cost.size(); ++p)
    for (auto a = inst.paths.path_offset[p]; a < inst.paths.path_offset[p + 1]; ++a)
      cost[p] += prices[inst.paths.arcs[static_cast<std::size_t>(a)]];
  return cost;
}

/// Upper bound on a*: sum_e c_e p_e / sum_k d_k min_p cost_p (inf when the denominator is 0).
inline double routability_upper_bound(const instance& inst, const Eigen::VectorXd& prices) {
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
inline double routability_lower_bound(const instance& inst, const std::vector<double>& split) {
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
inline std::int64_t cheapest_open_path(const instance& inst, std::size_t k,
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
inline std::vector<double> normalised_split(const instance& inst, const solve_result& r,
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

/// Total flow: one core solve of the linear bundle problem, the flow d_k x_p per path.
inline result solve_total_flow(const instance& inst, const price_options& options,
                               const popalloc::detail::stopwatch& clock) {
  result out;
  out.kind = te_objective::total_flow;
  out.path_flow.assign(static_cast<std::size_t>(inst.path_count()), 0.0);
  const auto problem = bundle(inst, false);
  popalloc::progress_callback forward;
  if (options.callback)
    forward = [&](const popalloc::progress& p) {
      progress step;
      step.iterations = p.iteration;
      step.elapsed_seconds = clock.seconds();
      step.objective = p.primal_objective;
      step.bound = p.dual_bound;
      step.relative_gap = p.relative_gap;
      return options.callback(step);
    };
  const solve_result r = popalloc::solve(problem, utility::linear{}, options.solver, forward);
  const auto& a = r.allocation;
  for (std::size_t k = 0; k < inst.commodities.size(); ++k)
    for (auto q = a.job_offset[k]; q < a.job_offset[k + 1]; ++q)
      out.path_flow[static_cast<std::size_t>(inst.paths.pair_offset[k] +
                                             a.option[static_cast<std::size_t>(q)])] +=
          a.fraction[static_cast<std::size_t>(q)] * inst.commodities[k].demand;
  out.objective = summarize(inst, out.path_flow).total_flow;
  out.bound = r.dual_bound;
  out.relative_gap = out.bound > 0.0 ? std::max(0.0, out.bound - out.objective) / out.bound : 0.0;
  out.status = from_core(r.status);
  out.iterations = r.iterations;
  out.solves = 1;
  out.prices.assign(r.prices.data(), r.prices.data() + r.prices.size());
  out.seconds = clock.seconds();
  return out;
}

/// Sets `split` to the first (shortest) open path of every commodity; false when a commodity has
/// none.
inline bool shortest_open_split(const instance& inst, std::vector<double>& split) {
  const std::vector<double> unit_cost(split.size(), 0.0);
  for (std::size_t k = 0; k < inst.commodities.size(); ++k) {
    // Zero costs: the first (shortest) open path of every commodity.
    const auto p = cheapest_open_path(inst, k, unit_cost);
    if (p < 0) return false;
    split[static_cast<std::size_t>(p)] = 1.0;
  }
  return true;
}

/// The routing split of a previous flow on the same paths: each commodity's flow normalised to
/// its whole demand; commodities the flow left empty keep their path in `fallback`.
inline std::vector<double> carried_split(const instance& inst, const std::vector<double>& flow,
                                         const std::vector<double>& fallback) {
  std::vector<double> split = fallback;
  for (std::size_t k = 0; k < inst.commodities.size(); ++k) {
    const auto first = static_cast<std::size_t>(inst.paths.pair_offset[k]);
    const auto last = static_cast<std::size_t>(inst.paths.pair_offset[k + 1]);
    double total = 0.0;
    for (std::size_t p = first; p < last; ++p) total += flow[p];
    if (!(total > 0.0)) continue;
    for (std::size_t p = first; p < last; ++p) split[p] = flow[p] / total;
  }
  return split;
}

/// The bisection on the routable level a of concurrent-flow and min-max-utilization, with
/// certified bounds lower <= a* <= upper and the routing split that certifies `lower`.
class routability_bisection {
 public:
  /// `previous`: a re-plan's last answer (null for a cold solve); its flow and prices give the
  /// first bounds when they are better than the cold ones, and its prices the first warm start.
  routability_bisection(const instance& inst, te_objective objective, const price_options& options,
                        const popalloc::detail::stopwatch& clock, std::vector<double> split,
                        const result* previous)
      : inst_(inst),
        objective_(objective),
        options_(options),
        clock_(clock),
        split_(std::move(split)),
        problem_(bundle(inst, true)),
        capacity_(problem_.capacity()),
        core_(options.solver) {
    // The probes just above a* are bundle problems barely over capacity, where the core's
    // Newton steps crawl without it (docs/traffic-engineering.md).
    core_.expand_steps = true;
    lower_ = routability_lower_bound(inst, split_);
    Eigen::VectorXd prices(inst.graph.arc_count());
    for (std::int32_t e = 0; e < inst.graph.arc_count(); ++e) {
      const double c = inst.graph.arcs[static_cast<std::size_t>(e)].capacity;
      prices[e] = c > 0.0 ? 1.0 / c : 0.0;
    }
    upper_ = routability_upper_bound(inst, prices);
    bound_prices_ = prices;
    if (previous != nullptr) start_from(*previous);
  }

  /// Runs the bisection to the tolerance or a limit; returns why it stopped: not_solved when a
  /// re-plan's core solve used up its evaluation budget (the caller then solves cold).
  solve_status run(result& out) {
    while (!done()) {
      if (out.solves >= options_.max_solves) return solve_status::iteration_limit;
      const double elapsed = clock_.seconds();
      if (elapsed >= options_.solver.time_limit_seconds) return solve_status::time_limit;
      const bool settled = step(out, elapsed);
      const bool stop =
          options_.callback && options_.callback(snapshot(out)) == callback_action::stop;
      const bool interrupted = stop && !done();
      if (over_budget_ && !interrupted) return solve_status::not_solved;
      if (!settled) return solve_status::stalled;
      if (interrupted) return solve_status::interrupted;
    }
    return solve_status::converged;
  }

  /// Takes the other bisection's bounds where they are better (both certify the same a*).
  void absorb(const routability_bisection& other) {
    if (other.lower_ > lower_) {
      lower_ = other.lower_;
      split_ = other.split_;
    }
    if (other.upper_ < upper_) {
      upper_ = other.upper_;
      bound_prices_ = other.bound_prices_;
    }
  }

  /// Whether the certified bounds meet the tolerance.
  bool closed() const { return done(); }

  /// The flow of the certified split (scaled to the demands for concurrent-flow), its bounds and
  /// the prices behind the upper one.
  void finish(result& out) const {
    out.prices.assign(bound_prices_.data(), bound_prices_.data() + bound_prices_.size());
    const double scale = objective_ == te_objective::concurrent_flow ? std::min(1.0, lower_) : 1.0;
    for (std::size_t k = 0; k < inst_.commodities.size(); ++k)
      for (auto p = inst_.paths.pair_offset[k]; p < inst_.paths.pair_offset[k + 1]; ++p)
        out.path_flow[static_cast<std::size_t>(p)] =
            scale * inst_.commodities[k].demand * split_[static_cast<std::size_t>(p)];
    if (objective_ == te_objective::concurrent_flow) {
      out.objective = std::min(1.0, lower_);
      out.bound = std::min(1.0, upper_);
      out.relative_gap = out.bound > 0.0 ? (out.bound - out.objective) / out.bound : 0.0;
    } else {
      out.objective = summarize(inst_, out.path_flow).max_link_utilization;
      out.bound = 1.0 / upper_;
      out.relative_gap = out.objective > 0.0 ? (out.objective - out.bound) / out.objective : 0.0;
    }
  }

 private:
  // A previous answer's routing, normalised to the new demands, is a routing: its level is
  // certified for the new instance as it stands; so is the bound of the previous prices.
  void start_from(const result& previous) {
    std::vector<double> carried = carried_split(inst_, previous.path_flow, split_);
    const double l = routability_lower_bound(inst_, carried);
    if (l > lower_) {
      lower_ = l;
      split_ = std::move(carried);
    }
    if (previous.prices.empty()) return;
    const Eigen::VectorXd prices =
        Eigen::Map<const Eigen::VectorXd>(previous.prices.data(), capacity_.size());
    const double u = routability_upper_bound(inst_, prices);
    if (u < upper_) {
      upper_ = u;
      bound_prices_ = prices;
    }
    warm_ = prices;
    probe_below_upper_ = true;
    // Near a* some core solves cost many times the others (Ion: a probe from the carried prices
    // used all 5000 evaluations where a cold solve's costliest took 2,259): a re-plan's solves
    // get the previous answer's mean evaluations per core solve, and a re-plan that needs more
    // gives way to a cold solve.
    replan_budget_ = std::max(100, previous.iterations / std::max(1, previous.solves));
  }

  // For concurrent flow a* >= 1 settles it: flows can be capped at the demands.
  bool done() const {
    if (objective_ == te_objective::concurrent_flow && lower_ >= 1.0) return true;
    return upper_ - lower_ <= options_.solver.relative_gap * upper_;
  }

  // One core solve at a level between the bounds; false when it settled nothing and the core
  // gap cannot be tightened further.
  bool step(result& out, double elapsed) {
    double level = std::isfinite(upper_) && upper_ < 4.0 * lower_
                       ? 0.5 * (lower_ + upper_)
                       : (std::isfinite(upper_) ? std::sqrt(lower_ * upper_) : 2.0 * lower_);
    double width = upper_ - lower_;
    if (probe_below_upper_ && std::isfinite(upper_)) {
      // A re-plan's upper bound comes from prices that were optimal for a nearby matrix and is
      // usually within the tolerance of a*, while the carried routing's lower bound is not: a
      // probe just below the upper bound closes the interval in one solve when it is feasible
      // and proves a lower upper bound when it is not.
      width = std::min(width, options_.solver.relative_gap * upper_);
      level = std::max(lower_, upper_ - 0.5 * width);
    }
    if (std::isfinite(undecided_) && std::isfinite(upper_)) {
      // The last probe, at undecided_, could not settle its side at any core gap: a* is close to
      // it. A probe halfway to the farther bound settles one side.
      level = upper_ - undecided_ >= undecided_ - lower_ ? 0.5 * (undecided_ + upper_)
                                                         : 0.5 * (lower_ + undecided_);
    }
    probe_below_upper_ = false;
    core_.max_iterations = replan_budget_ > 0
                               ? std::min(options_.solver.max_iterations, replan_budget_)
                               : options_.solver.max_iterations;
    problem_.capacity() = capacity_ / level;
    // Deciding a level close to a* needs a core gap of the order of the interval's width.
    core_.relative_gap =
        std::isfinite(upper_) ? std::min(solve_gap_, 0.1 * width / upper_) : solve_gap_;
    core_.time_limit_seconds = options_.solver.time_limit_seconds - elapsed;
    core_.warm_start_prices = warm_;
    const solve_result r = popalloc::solve(problem_, utility::target_priority{}, core_);
    ++out.solves;
    out.iterations += r.iterations;
    const double u = routability_upper_bound(inst_, r.prices);
    auto candidate = normalised_split(inst_, r, r.prices);
    const double l = routability_lower_bound(inst_, candidate);
    width = upper_ - lower_;
    if (u < upper_) {
      upper_ = u;
      bound_prices_ = r.prices;
    }
    if (l > lower_) {
      lower_ = l;
      split_ = std::move(candidate);
    }
    // Warm starts only from levels the solve proved infeasible: there the prices price the
    // bottleneck; below a* they are near 0, far from the prices near a*, and a poor start.
    if (u <= level && r.prices.allFinite()) warm_ = r.prices;
    if (replan_budget_ > 0 && r.status == popalloc::solve_status::iteration_limit && !done())
      over_budget_ = true;
    if (upper_ - lower_ <= 0.75 * width) {
      undecided_ = std::numeric_limits<double>::quiet_NaN();
      side_probes_ = 0;
      return true;
    }
    // The solve did not settle which side of a* the level is on. A core solve that reached its
    // gap asks for more accuracy; one that ended short of it (stalled, at its limit) would end
    // the same way at this level again, so the next probe moves away from it (at most twice
    // between two probes that settle something).
    if (r.status != popalloc::solve_status::converged && !std::isfinite(undecided_) &&
        side_probes_ < 2) {
      ++side_probes_;
      undecided_ = level;
      return true;
    }
    undecided_ = std::numeric_limits<double>::quiet_NaN();
    if (solve_gap_ <= 1e-10) return false;
    solve_gap_ *= 0.1;
    return true;
  }

  progress snapshot(const result& out) const {
    progress p;
    p.solves = out.solves;
    p.iterations = out.iterations;
    p.elapsed_seconds = clock_.seconds();
    if (objective_ == te_objective::concurrent_flow) {
      p.objective = std::min(1.0, lower_);
      p.bound = std::min(1.0, upper_);
      p.relative_gap = p.bound > 0.0 ? (p.bound - p.objective) / p.bound : 0.0;
    } else {
      p.objective = 1.0 / lower_;
      p.bound = 1.0 / upper_;
      p.relative_gap = p.objective > 0.0 ? (p.objective - p.bound) / p.objective : 0.0;
    }
    return p;
  }

  const instance& inst_;
  te_objective objective_;
  const price_options& options_;
  popalloc::detail::stopwatch clock_;
  std::vector<double> split_;
  bundle_problem<double> problem_;
  Eigen::VectorXd capacity_;
  solver_options core_;
  double lower_ = 0.0, upper_ = 0.0;
  double solve_gap_ = 1e-4;
  Eigen::VectorXd warm_;
  Eigen::VectorXd bound_prices_;    // the prices behind upper_
  bool probe_below_upper_ = false;  // the next probe is a re-plan's first
  int replan_budget_ = 0;           // a re-plan's dual evaluations per core solve (0: none)
  bool over_budget_ = false;        // a re-plan's core solve used up its budget
  double undecided_ = std::numeric_limits<double>::quiet_NaN();  // a level the core can't settle
  int side_probes_ = 0;  // probes away from undecided_ since the last settled one
};

/// Throws invalid_problem unless `previous` can start a re-plan of `inst`: a flow per path and,
/// when present, a price per arc, every value finite and >= 0.
inline void check_previous(const instance& inst, const result& previous) {
  if (static_cast<std::int64_t>(previous.path_flow.size()) != inst.path_count())
    throw invalid_problem("the previous result has flows for " +
                          std::to_string(previous.path_flow.size()) + " paths, the instance has " +
                          std::to_string(inst.path_count()) +
                          " (a re-plan needs the same topology and paths)");
  if (!previous.prices.empty() &&
      static_cast<std::int64_t>(previous.prices.size()) != inst.graph.arc_count())
    throw invalid_problem("the previous result has prices for " +
                          std::to_string(previous.prices.size()) + " arcs, the instance has " +
                          std::to_string(inst.graph.arc_count()));
  const auto bad = [](double v) { return !std::isfinite(v) || v < 0.0; };
  if (std::any_of(previous.path_flow.begin(), previous.path_flow.end(), bad))
    throw invalid_problem("the previous result's path flows must be finite and >= 0");
  if (std::any_of(previous.prices.begin(), previous.prices.end(), bad))
    throw invalid_problem("the previous result's prices must be finite and >= 0");
}

/// solve_price and replan_price: a cold solve when `previous` is null.
inline result solve_price_from(const instance& inst, te_objective objective,
                               const price_options& options, const result* previous) {
  inst.validate();
  if (!(options.solver.relative_gap > 0.0) || !std::isfinite(options.solver.relative_gap))
    throw invalid_options("relative gap must be a finite number > 0");
  if (options.max_solves < 1) throw invalid_options("max_solves must be >= 1");
  if (previous != nullptr) check_previous(inst, *previous);
  const popalloc::detail::stopwatch clock;
  // Total flow is solved cold even in a re-plan: started at the last prices, the core on this
  // degenerate LP took from a third of a cold solve's evaluations to its iteration limit
  // (docs/traffic-engineering.md, "Re-planning").
  if (objective == te_objective::total_flow) return solve_total_flow(inst, options, clock);

  // Non-separable objectives: bisection on the routable level a with certified bounds [L, U].
  result out;
  out.kind = objective;
  out.path_flow.assign(static_cast<std::size_t>(inst.path_count()), 0.0);
  std::vector<double> split(out.path_flow.size(), 0.0);
  if (!shortest_open_split(inst, split)) {
    if (objective == te_objective::min_max_utilization)
      throw invalid_problem(
          "a commodity has no path avoiding zero-capacity arcs: its demand cannot be routed, "
          "so the maximum link utilization is unbounded");
    out.objective = 0.0;
    out.bound = 0.0;
    out.relative_gap = 0.0;
    out.status = solve_status::converged;
    out.seconds = clock.seconds();
    return out;
  }
  routability_bisection bisection(inst, objective, options, clock, split, previous);
  out.status = bisection.run(out);
  if (out.status != solve_status::not_solved) {
    bisection.finish(out);
  } else {
    // The re-plan gave way: a cold solve, which keeps what the re-plan proved.
    routability_bisection cold(inst, objective, options, clock, std::move(split), nullptr);
    out.status = cold.run(out);
    cold.absorb(bisection);
    if (cold.closed()) out.status = solve_status::converged;
    cold.finish(out);
  }
  out.seconds = clock.seconds();
  return out;
}

}  // namespace detail

/// \brief Solves `inst` for `objective` with the price-discovery core. The returned flow is
/// always feasible (capacities and demands; for min-max-utilization every demand is routed and
/// loads are <= objective * c). \throws invalid_problem for an invalid instance, or for
/// min-max-utilization when a commodity has no path avoiding zero-capacity arcs.
inline result solve_price(const instance& inst, te_objective objective,
                          const price_options& options = {}) {
  return detail::solve_price_from(inst, objective, options, nullptr);
}

/// \brief Re-plans `inst` from `previous`, an answer of solve_price() or replan_price() on an
/// instance with the same topology and the same commodities and paths whose demands changed (a
/// drifted traffic matrix). Concurrent flow and min-max-utilization start the bisection from
/// the previous routing (each commodity's flow normalised to its new demand, a certified lower
/// bound) and the previous prices (a certified upper bound, and the first warm start), where
/// these beat the cold start's bounds, and probe just below that upper bound first; a re-plan
/// whose core solve needs more evaluations than the previous answer's mean per solve gives way
/// to a cold solve, which keeps the bounds the re-plan proved. Total flow is solved as
/// solve_price() solves it. The answer is certified as solve_price()'s is;
/// `previous` without prices (POP's answers) gives the routing only. \throws invalid_problem as
/// solve_price(), and when `previous` has a flow per path or a price per arc that does not match
/// `inst`, or a negative or non-finite value.
inline result replan_price(const instance& inst, te_objective objective, const result& previous,
                           const price_options& options = {}) {
  return detail::solve_price_from(inst, objective, options, &previous);
}

}  // namespace popalloc::te
