// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Max-level problems (max-min fairness, minimum makespan, finish-time fairness) on the
/// separable core solver: a bisection on the level whose every step is one target-priority
/// solve, with both ends of the bracket certified.
///
/// A level problem is: maximise L such that every job i reaches its required throughput
/// tau_i(min(L, cap_i)), where tau_i is nondecreasing in the level and cap_i freezes a job at a
/// level already settled (water filling); cap_i = +inf for free jobs. For a fixed L this is the
/// feasibility problem "sum_w A_iw x_iw >= tau_i for all i" over the base constraints, which is
/// exactly the question whether
///     phi(L) = max sum_i min(sum_w (A_iw / tau_i) x_iw - 1, 0)
/// (a target-priority utility with target 1 on the rescaled throughputs) equals 0. The core
/// solver returns a feasible allocation X and a dual bound g >= phi(L):
///   * X is feasible for the base constraints, so its own level min_i level_i(X) is a certified
///     lower end of the bracket (whatever L was);
///   * g < 0 proves phi(L) < 0, i.e. L is infeasible: a certified upper end;
///   * the solve's prices also prove levels below L infeasible (cluster/level_price_bound.hpp):
///     one pass over the jobs per level tried. Where the solves near the optimum stall, these
///     bounds close the bracket that the probes could not.
/// Feasibility is monotone in L, so bisection between these ends converges to the optimum; the
/// result is the best X found and the smallest certified infeasible level.
///
/// Where every requirement is linear in the level (plain max-min fairness, minimum makespan),
/// each probe's prices also feed the crossover (cluster/level_crossover.hpp): the exact optimum
/// of a small restricted LP, a feasible allocation that is usually the optimum itself once a
/// probe has been infeasible near it, with prices that prove it (linear_level_bound). There the
/// search needs 2-5 probes where the bisection alone needed 20.
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/cluster/level_crossover.hpp"
#include "popalloc/cluster/level_price_bound.hpp"
#include "popalloc/cluster/level_problem.hpp"
#include "popalloc/dense_problem.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/dual_solver.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"
#include "popalloc/utility/target_priority.hpp"

namespace popalloc::cluster {

/// \brief One target-priority solve at a fixed level.
struct level_probe {
  Eigen::MatrixXd x;              ///< feasible allocation, n x m
  Eigen::VectorXd levels;         ///< level_i(ET_i(x))
  double achieved = 0.0;          ///< the level x certifies (see achieved_level)
  bool infeasible = false;        ///< the dual bound proved the level infeasible
  double dual_bound = 0.0;        ///< phi's upper bound (<= 0 feasible side)
  double primal_objective = 0.0;  ///< phi's value at x (sum of relative deficits, <= 0)
  solve_status status = solve_status::not_solved;
  Eigen::VectorXd prices;
};

/// \brief Result of maximize_level.
struct level_solution {
  Eigen::MatrixXd x;   ///< best allocation found
  double level = 0.0;  ///< level it certifies (lower end)
  /// Smallest level proved infeasible (upper end), or the caller's initial upper bound.
  double upper = std::numeric_limits<double>::infinity();
  /// converged when upper - level <= 4 tolerance upper (certified); otherwise the worst core
  /// status seen (stalled if every solve converged but undecided levels kept the bracket open).
  solve_status status = solve_status::converged;
  int solves = 0;
  Eigen::VectorXd prices;
};

namespace detail {

/// Dense n x m matrix of a dense problem's allocation, rows of `rows` (others stay 0).
inline void scatter_allocation(const solve_result& r, const std::vector<Eigen::Index>& rows,
                               Eigen::MatrixXd& x) {
  const auto& a = r.allocation;
  for (std::size_t q = 0; q < a.jobs(); ++q)
    for (auto k = a.job_offset[q]; k < a.job_offset[q + 1]; ++k)
      x(rows[q], a.option[static_cast<std::size_t>(k)]) += a.fraction[static_cast<std::size_t>(k)];
}

/// The allocation of a dense problem with `jobs` x `types` as a dense matrix (job q -> row q).
inline Eigen::MatrixXd allocation_matrix(const solve_result& r, Eigen::Index jobs,
                                         Eigen::Index types) {
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(jobs, types);
  const auto& a = r.allocation;
  for (std::size_t q = 0; q < a.jobs(); ++q)
    for (auto k = a.job_offset[q]; k < a.job_offset[q + 1]; ++k)
      x(static_cast<Eigen::Index>(q), a.option[static_cast<std::size_t>(k)]) +=
          a.fraction[static_cast<std::size_t>(k)];
  return x;
}

}  // namespace detail

/// \brief The level x certifies: min over jobs of level_i(ET_i), where a frozen job that reaches
/// its cap imposes nothing (+inf if no job constrains).
inline double achieved_level(const level_problem& p, const Eigen::VectorXd& levels) {
  double out = std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < levels.size(); ++i) {
    const double cap = p.cap.empty() ? std::numeric_limits<double>::infinity()
                                     : p.cap[static_cast<std::size_t>(i)];
    if (levels[i] >= cap) continue;
    out = std::min(out, levels[i]);
  }
  return out;
}

/// \brief Per-job levels of an allocation.
inline Eigen::VectorXd levels_of(const level_problem& p, const Eigen::MatrixXd& x) {
  Eigen::VectorXd out(x.rows());
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    out[i] = p.level_of(i, p.throughput.row(i).dot(x.row(i)));
  return out;
}

/// \brief Solves the target-priority problem at `level` to an absolute gap `absolute_gap` (in
/// units of relative deficit), stopping early once the question is decided: the allocation's
/// total relative deficit is at most `decided_deficit` (every job within that fraction of its
/// requirement: feasible to the tolerance), or the dual bound is negative (infeasible). Near a
/// feasible level the dual bound approaches 0 only slowly, so waiting for the gap would cost
/// hundreds of iterations for an answer already known.
inline level_probe probe_level(const level_problem& p, double level, double absolute_gap,
                               const solver_options& base, const Eigen::VectorXd& warm_prices = {},
                               double decided_deficit = 0.0) {
  const Eigen::Index n = p.throughput.rows(), m = p.throughput.cols();
  level_probe out;
  out.x = Eigen::MatrixXd::Zero(n, m);
  std::vector<Eigen::Index> rows;
  std::vector<double> tau;
  rows.reserve(static_cast<std::size_t>(n));
  for (Eigen::Index i = 0; i < n; ++i) {
    const double cap = p.cap.empty() ? std::numeric_limits<double>::infinity()
                                     : p.cap[static_cast<std::size_t>(i)];
    const double t = p.target(i, std::min(level, cap));
    if (!(t > 0.0)) continue;  // needs nothing
    if (!std::isfinite(t) || p.throughput.row(i).maxCoeff() <= 0.0) {
      // No allocation reaches this level: infeasible without solving.
      out.infeasible = true;
      out.dual_bound = -std::numeric_limits<double>::infinity();
      out.levels = levels_of(p, out.x);
      out.achieved = achieved_level(p, out.levels);
      out.status = solve_status::converged;
      return out;
    }
    rows.push_back(i);
    tau.push_back(t);
  }
  if (!rows.empty()) {
    dense_problem<double> d;
    const auto k = static_cast<Eigen::Index>(rows.size());
    d.throughput.resize(k, m);
    d.target = Eigen::VectorXd::Ones(k);
    d.job_demand.resize(k);
    d.capacity = p.capacity;
    for (Eigen::Index r = 0; r < k; ++r) {
      const Eigen::Index i = rows[static_cast<std::size_t>(r)];
      d.throughput.row(r) = p.throughput.row(i) / tau[static_cast<std::size_t>(r)];
      d.job_demand[r] = p.scale[i];
    }
    solver_options o = base;
    o.relative_gap = 0.0;
    o.absolute_gap = absolute_gap;
    o.topups = false;  // the probe is judged by its worst job's level (achieved_level)
    // An undecided probe is retried at a tighter gap (maximize_level); the interior-point
    // finish's allocation, optimal in total shortfall, spreads it over every job instead, and
    // the water-filling levels then drifted from the exact ones by 3-5%.
    o.interior_point_finish = false;
    if (warm_prices.size() == m) o.warm_start_prices = warm_prices;
    // Rounding in a sum of k terms: a bound this close to 0 proves nothing.
    const double proof = 1e-13 * static_cast<double>(k);
    const progress_callback decide = [proof, decided_deficit](const progress& s) {
      return s.dual_bound < -proof || s.primal_objective >= -decided_deficit
                 ? callback_action::stop
                 : callback_action::proceed;
    };
    solve_result r = popalloc::solve(d, utility::target_priority{}, o, decide);
    if (r.status == solve_status::interrupted) r.status = solve_status::converged;  // decided
    detail::scatter_allocation(r, rows, out.x);
    out.dual_bound = r.dual_bound;
    out.primal_objective = r.primal_objective;
    out.status = r.status;
    out.prices = r.prices;
    out.infeasible = r.dual_bound < -proof;
  } else {
    out.status = solve_status::converged;
  }
  out.levels = levels_of(p, out.x);
  out.achieved = achieved_level(p, out.levels);
  return out;
}

namespace detail {

/// For a linear level problem: the crossover at a probe's `prices` (cluster/level_crossover.hpp)
/// raises the certified lower end with its allocation; then either its own prices or the probe's
/// may prove a level just above the new lower end infeasible, which closes the bracket. One LP
/// and a few passes over the jobs, against the probes near the optimum that stall. False when
/// the problem could not be restricted (nothing changed but the linear bound).
inline bool cross_over(const level_problem& p, const Eigen::VectorXd& prices, double tolerance,
                       level_solution& out) {
  if (p.linear_coefficient.size() != p.throughput.rows() || prices.size() == 0) return false;
  out.upper = std::min(out.upper, linear_level_bound(p, prices));
  const level_crossover cross = crossover_level(p, prices, out.upper);
  if (!cross.ok) return false;
  const double achieved = achieved_level(p, levels_of(p, cross.x));
  if (achieved > out.level && achieved <= out.upper) {
    out.level = achieved;
    out.x = cross.x;
  }
  out.upper = std::min(out.upper, linear_level_bound(p, cross.prices));
  // The linear bound leaves out the jobs' time; where it binds at the optimum, D(level) at
  // prices scaled below every job's deficit weight (level_price_bound.hpp) counts it: one pass.
  const double candidate = out.level * (1.0 + 2.0 * tolerance);
  if (!(candidate < out.upper)) return true;
  for (const Eigen::VectorXd* q : {&cross.prices, &prices}) {
    if (level_dual_value(p, below_deficit_weights(p, *q, candidate), out.level, candidate)
            .proves_infeasible()) {
      out.upper = candidate;
      break;
    }
  }
  return true;
}

}  // namespace detail

/// \brief Maximises the level by bisection between `lower` (certified by `x_lower`, which must be
/// feasible and reach it) and `upper` (a level known to be infeasible or an upper bound), until
/// (upper - lower) <= tolerance * upper, or until the certified ends are within 4 * tolerance (the
/// converged status's criterion). Each step solves to an absolute deficit gap of 5% of the
/// bracket's relative width (at least tolerance / 10): coarse while the bracket is wide, exact
/// where it matters. A level the solve cannot decide (not proved infeasible, and its allocation
/// falls short of the level by more than tolerance / 2) is solved again with the gap at the
/// decision threshold, up to 2 times, then treated as infeasible for the search only (`upper` stays
/// certified); the search ends instead at an undecided level when the certified ends are already
/// within 4 * tolerance. If the search ends with the certified ends further apart, the probes'
/// prices lower `upper` to the smallest level they prove infeasible. `after_probe`, if set, sees
/// the solution after every probe.
inline level_solution maximize_level(
    const level_problem& p, double lower, const Eigen::MatrixXd& x_lower, double upper,
    double tolerance, const solver_options& base, const Eigen::VectorXd& warm_prices = {},
    double deadline_seconds = std::numeric_limits<double>::infinity(),
    const std::function<void(const level_solution&)>& after_probe = {}) {
  const popalloc::detail::stopwatch clock;
  level_solution out;
  out.x = x_lower;
  out.level = lower;
  out.upper = upper;
  out.prices = warm_prices;
  double search_upper = upper;
  std::vector<std::pair<double, Eigen::VectorXd>> probe_prices;  // (probe level, its prices)
  double pending = std::numeric_limits<double>::quiet_NaN();     // level to retry more precisely
  int retries = 0;
  // The certified ends meet the reported tolerance.
  const auto closed = [&out, tolerance] {
    return out.upper - out.level <= 4.0 * tolerance * out.upper;
  };
  bool crossed = false;  // the last probe's prices gave a crossover
  while (search_upper - out.level > tolerance * search_upper) {
    if (clock.seconds() > deadline_seconds) {
      out.status = worse(out.status, solve_status::time_limit);
      break;
    }
    const double lo = out.level, hi = search_upper;
    // The first probe tries just below the upper end: the "every job alone" bound is often
    // tight (one job that can only run on one small type), and then one solve settles it.
    // While the crossover works, the probes' use is their prices, and those of an infeasible
    // level near the optimum serve best: the probe goes a tenth of the way down from the upper
    // end. Without it, the bisection's middle.
    const double split = crossed ? 0.1 : 0.5;
    const double level = !std::isnan(pending)          ? pending
                         : out.solves == 0             ? hi * (1.0 - 0.5 * tolerance)
                         : (lo > 0.0 && hi > 4.0 * lo) ? std::sqrt(lo * hi)
                                                       : hi - split * (hi - lo);
    // A retry solves to the decision threshold itself: then a converged solve either reaches
    // every requirement to the tolerance or has a negative dual bound.
    const double decided = 0.4 * tolerance;
    const double gap = retries > 0 ? 0.5 * decided : std::max(0.05 * (hi - lo) / hi, decided);
    const level_probe probe = probe_level(p, level, gap, base, out.prices, decided);
    ++out.solves;
    out.status = worse(out.status, probe.status);
    if (probe.prices.size() != 0) out.prices = probe.prices;
    if (probe.achieved > out.level) {
      out.level = std::min(probe.achieved, upper);
      out.x = probe.x;
    }
    pending = std::numeric_limits<double>::quiet_NaN();
    if (probe.prices.size() != 0) probe_prices.emplace_back(level, probe.prices);
    if (probe.infeasible) {
      out.upper = std::min(out.upper, level);
      search_upper = std::min(search_upper, level);
      retries = 0;
    } else if (probe.achieved >= level * (1.0 - 0.5 * tolerance)) {
      retries = 0;  // feasible to the tolerance: out.level moved up to ~level
    } else if (closed()) {
      // Undecided, but the certified ends already meet the reported tolerance: refining them
      // further would cost the slowest solves of the search (levels this close to the optimum
      // are where the core stalls).
      if (after_probe) after_probe(out);
      break;
    } else if (retries < 2) {
      // Neither proved infeasible nor reached: the solve was too coarse to tell.
      pending = level;
      ++retries;
    } else {
      // Still undecided at the decision threshold (the solver stalled or hit a limit): treat as
      // infeasible for the search only.
      search_upper = level;
      retries = 0;
    }
    if (probe.prices.size() != 0 && !closed()) {
      crossed = detail::cross_over(p, probe.prices, tolerance, out);
      search_upper = std::min(search_upper, out.upper);
      if (!(pending > out.level)) pending = std::numeric_limits<double>::quiet_NaN();
    }
    if (after_probe) after_probe(out);
    // The certified ends meet the reported tolerance: the search's finer target only buys
    // precision nobody asked for, with the slowest probes of the search (those nearest the
    // optimum).
    if (out.level >= out.upper || closed()) break;
  }
  // Where the probes near the optimum stalled, their prices (or earlier ones) often prove
  // levels below the lowest proved one: one pass over the jobs per level tried.
  for (std::size_t k = probe_prices.size(); k-- > 0 && !closed();) {
    out.upper =
        std::min(out.upper, price_level_bound(p, probe_prices[k].second, probe_prices[k].first,
                                              out.level, out.upper, 0.25 * tolerance));
  }
  // Sub-solves that stalled or hit a limit do not matter if the certified bracket closed.
  if (closed() && out.status != solve_status::numerical_error) out.status = solve_status::converged;
  if (!closed() && out.status == solve_status::converged) out.status = solve_status::stalled;
  return out;
}

}  // namespace popalloc::cluster
