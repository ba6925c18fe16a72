// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The level policies of cluster/policies.hpp (max-min fairness, min makespan,
/// finish-time fairness): a bisection on the level with target-priority solves, water filling,
/// and the exact class solve where the jobs fall into few classes.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "popalloc/cluster/class_policies.hpp"
#include "popalloc/cluster/instance.hpp"
#include "popalloc/cluster/level_bisection.hpp"
#include "popalloc/cluster/policy.hpp"
#include "popalloc/cluster/policy_support.hpp"
#include "popalloc/dense_problem.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/dual_solver.hpp"
#include "popalloc/options.hpp"
#include "popalloc/utility/target_priority.hpp"

namespace popalloc::cluster::detail {

/// A level problem on the active rows of `in`; `target` and `level_of` get active-row indices.
inline level_problem make_level_problem(const instance& in, const std::vector<Eigen::Index>& rows) {
  level_problem p;
  p.throughput = rows_of(in.model_throughput, rows);
  p.scale = rows_of(in.scale, rows);
  p.capacity = in.capacity;
  p.cap.assign(rows.size(), inf());
  return p;
}

/// Certified upper bound: every job alone at full time on its best type.
inline double alone_bound(const level_problem& p, const std::vector<double>* caps) {
  double hi = inf();
  for (Eigen::Index r = 0; r < p.throughput.rows(); ++r) {
    if (caps && std::isfinite((*caps)[static_cast<std::size_t>(r)])) continue;
    hi = std::min(hi, p.level_of(r, p.throughput.row(r).maxCoeff()));
  }
  return hi;
}

/// Water filling (Gavel's max_min_fairness_water_filling) after the max-min level `level`:
/// freeze the free jobs that cannot rise above the current level while every other job keeps
/// its own, then maximise the level of the rest, until every job is frozen.
///
/// The bottleneck test is exact up to `threshold`: job j is free iff the target-priority
/// problem "j at level (1 + threshold), every other job at its current requirement" is feasible.
/// Deciding it from one probe slightly above the level is not enough (the LP may put the deficit
/// on any of the jobs sharing the contended GPUs). The test runs once per class of identical
/// jobs (same throughput row, scale factor and normaliser): by symmetry and convexity, if one
/// member can rise alone, all members can rise together. Gavel answers the same question with a
/// MILP (max number of jobs above 1.0001 L).
inline void water_fill(level_problem& p, const solver_options& base, const policy_options& o,
                       double tolerance, double deadline, double level, Eigen::MatrixXd& x,
                       Eigen::VectorXd& prices, policy_outcome& out) {
  const popalloc::detail::stopwatch clock;
  const auto n = static_cast<std::size_t>(p.throughput.rows());
  const double threshold = o.water_filling_threshold;
  const double nan = std::numeric_limits<double>::quiet_NaN();  // no upper end while testing
  const double stage_tolerance = std::max(tolerance, 0.01 * threshold);
  solver_options test_options = base;
  test_options.max_iterations = std::min(base.max_iterations, 100);
  // Classes of identical jobs: same row, scale and level normaliser (target at level 1).
  std::vector<std::size_t> class_of(n);
  {
    std::vector<std::size_t> representative;
    for (std::size_t i = 0; i < n; ++i) {
      const auto ii = static_cast<Eigen::Index>(i);
      std::size_t c = 0;
      for (; c < representative.size(); ++c) {
        const auto r = static_cast<Eigen::Index>(representative[c]);
        if (p.scale[r] == p.scale[ii] && p.target(r, 1.0) == p.target(ii, 1.0) &&
            p.throughput.row(r) == p.throughput.row(ii))
          break;
      }
      if (c == representative.size()) representative.push_back(i);
      class_of[i] = c;
    }
  }
  while (out.levels < o.max_water_filling_levels && clock.seconds() < deadline) {
    // Free classes, and whether some member already sits above the level (then it can rise).
    const Eigen::VectorXd levels = levels_of(p, x);
    std::vector<int> state;  // per class: -1 frozen/absent, 0 untested, 1 can rise
    for (std::size_t i = 0; i < n; ++i) {
      if (class_of[i] >= state.size()) state.resize(class_of[i] + 1, -1);
      if (std::isfinite(p.cap[i])) continue;
      int& st = state[class_of[i]];
      if (st < 0) st = 0;
      if (levels[static_cast<Eigen::Index>(i)] > level * (1.0 + threshold)) st = 1;
    }
    for (std::size_t c = 0; c < state.size(); ++c) {
      if (state[c] != 0) continue;
      std::size_t j = 0;
      while (class_of[j] != c || std::isfinite(p.cap[j])) ++j;
      // Requirement: every free job at `level`, j at level (1 + threshold), frozen at caps.
      level_problem test = p;
      for (std::size_t i = 0; i < n; ++i)
        if (!std::isfinite(test.cap[i])) test.cap[i] = level;
      test.cap[j] = level * (1.0 + threshold);
      // Near-degenerate tests can stall just above a 0 dual bound; they are undecided, which
      // freezes (safe), so a short iteration budget loses nothing.
      const level_probe probe =
          probe_level(test, detail::inf(), 0.05 * threshold, test_options, prices, 0.1 * threshold);
      ++out.solves;  // its status does not matter: an undecided test freezes (safe)
      report(o, "water filling", out.solves, out.levels, level, nan, nan);
      bool reached = !probe.infeasible;
      for (std::size_t i = 0; i < n && reached; ++i)
        reached =
            probe.levels[static_cast<Eigen::Index>(i)] >= test.cap[i] * (1.0 - 0.2 * threshold);
      state[c] = reached ? 1 : -2;  // undecided counts as a bottleneck (frozen: safe)
    }
    std::size_t free_left = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (std::isfinite(p.cap[i])) continue;
      if (state[class_of[i]] == -2)
        p.cap[i] = level;
      else
        ++free_left;
    }
    ++out.levels;
    if (free_left == 0) break;
    // Raise the free jobs. Frozen jobs are held at their exact level by the targets and only
    // need to keep it to within the stage's tolerance to count as satisfied: the stage's solves
    // stop at an absolute gap of a fraction of that tolerance, and that gap (a sum of relative
    // deficits) may sit on a frozen job. A tighter slack than the solves' own gap made the
    // search's decisions depend on where the solver happened to leave a 1e-7 deficit.
    const double slack = 0.5 * stage_tolerance;
    level_problem q = p;
    for (double& a : q.cap)
      if (std::isfinite(a)) a *= 1.0 - slack;
    q.target = [exact = p.cap, target = p.target](Eigen::Index i, double l) {
      const double c = exact[static_cast<std::size_t>(i)];
      return target(i, std::isfinite(c) ? std::max(l, c) : l);
    };
    q.linear_coefficient.resize(0);  // frozen jobs' requirements are fixed, not k_i L
    const double lo = achieved_level(q, levels_of(q, x));
    const double hi = alone_bound(q, &q.cap);
    if (!(hi > lo)) break;
    // Its status is not reported: the certified objective (the minimum) comes from the first
    // stage, and a later stage only keeps an allocation that is better for the free jobs.
    level_solution next = maximize_level(q, lo, x, hi, stage_tolerance, base, prices, deadline,
                                         level_reporter(o, "water filling", out));
    out.solves += next.solves;
    if (!(next.level > level)) break;  // no progress: the free jobs stay where they are
    x = next.x;
    level = next.level;
    prices = next.prices;
  }
}

/// Max-min fairness and makespan over classes of identical jobs (class_policies.hpp): exact,
/// no core solve. Returns false (nothing written) when there are more than
/// o.class_lp_max_classes classes, more than 64 classes averaging under two jobs each, or the
/// class LP does not certify the tolerance; the core path then solves the problem.
inline bool solve_level_policy_by_classes(const instance& in, const policy_options& o,
                                          const std::vector<Eigen::Index>& rows,
                                          const level_problem& p, const Eigen::VectorXd& r,
                                          policy_outcome& out) {
  const bool max_min = o.policy == policy_kind::max_min_fairness;
  const auto n = static_cast<Eigen::Index>(rows.size());
  Eigen::VectorXd coef(n);
  for (Eigen::Index q = 0; q < n; ++q) {
    const Eigen::Index i = rows[static_cast<std::size_t>(q)];
    coef[q] = max_min ? in.weight[i] * in.proportional[i] / in.scale[i] : r[q];
  }
  const auto classes = identical_row_classes(p.throughput, p.scale, coef,
                                             static_cast<std::size_t>(o.class_lp_max_classes));
  if (classes.empty()) return false;
  const auto k = static_cast<Eigen::Index>(classes.size());
  // The dense class LP costs about k^3, the core about n per solve: with more than 64 classes
  // that are mostly single jobs the core is faster.
  constexpr Eigen::Index small_class_lp = 64;
  if (k > small_class_lp && 2 * k > n) return false;
  Eigen::MatrixXd t(k, in.types());
  Eigen::VectorXd scale(k), count(k), c(k);
  for (Eigen::Index a = 0; a < k; ++a) {
    const auto& members = classes[static_cast<std::size_t>(a)];
    t.row(a) = p.throughput.row(members.front());
    scale[a] = p.scale[members.front()];
    c[a] = coef[members.front()];
    count[a] = static_cast<double>(members.size());
  }
  const class_solve cs =
      solve_level_classes(t, scale, count, c, in.capacity, max_min && o.water_filling,
                          o.water_filling_threshold, o.max_water_filling_levels);
  if (!cs.ok) return false;
  const Eigen::MatrixXd x = spread_class_rows(cs.rows, classes, p.scale, p.capacity, n);
  policy_outcome result;
  result.x = scatter_rows(x, rows, in.jobs());
  result.objective = policy_objective(in, o, result.x);
  // Level scale: max-min's objective is the level, makespan's its reciprocal.
  const double achieved = max_min ? result.objective : 1.0 / result.objective;
  if (!(std::isfinite(cs.bound) && achieved > 0.0 && cs.bound - achieved <= o.tolerance * cs.bound))
    return false;
  result.bound = max_min ? cs.bound : 1.0 / cs.bound;
  result.status = solve_status::converged;
  // Warm start for a later core solve: a GPU's dual y_w (level gained per GPU) in the units of
  // the level probes' target-priority prices (sum of relative deficits per GPU), y_w n / L.
  result.prices = cs.gpu_duals * (static_cast<double>(n) / cs.level);
  result.levels = cs.levels;
  result.classes = k;
  result.simplex_runs = cs.runs;
  out = std::move(result);
  return true;
}

/// Max-min fairness, makespan and finish-time fairness: bisection on the level (and water
/// filling for max-min).
inline policy_outcome solve_level_policy(const instance& in, const policy_options& o, int threads,
                                         double deadline) {
  policy_outcome out;
  const bool needs_work = o.policy != policy_kind::max_min_fairness;
  const std::vector<Eigen::Index> rows = active_jobs(in, needs_work);
  out.x = Eigen::MatrixXd::Zero(in.jobs(), in.types());
  if (rows.empty()) {
    out.objective = policy_objective(in, o, out.x);
    return out;
  }
  level_problem p = make_level_problem(in, rows);
  const Eigen::VectorXd r = rows_of(in.remaining, rows);
  if (o.policy != policy_kind::finish_time_fairness && o.class_lp_max_classes > 0 &&
      solve_level_policy_by_classes(in, o, rows, p, r, out))
    return out;
  if (o.policy == policy_kind::max_min_fairness) {
    // Normalised throughput s_i ET_i / (w_i P_i) >= L  <=>  ET_i >= L w_i P_i / s_i.
    Eigen::VectorXd c(static_cast<Eigen::Index>(rows.size()));
    for (std::size_t q = 0; q < rows.size(); ++q)
      c[static_cast<Eigen::Index>(q)] =
          in.weight[rows[q]] * in.proportional[rows[q]] / in.scale[rows[q]];
    p.target = [c](Eigen::Index i, double level) { return level * c[i]; };
    p.level_of = [c](Eigen::Index i, double et) { return et / c[i]; };
    // The crossover's allocation holds every job at exactly the optimal level, and water
    // filling's bottleneck tests from there took 5-8x longer: it serves plain max-min only.
    if (!o.water_filling) p.linear_coefficient = c;
  } else if (o.policy == policy_kind::min_makespan) {
    // Level u = 1 / makespan: ET_i >= u r_i.
    p.target = [r](Eigen::Index i, double u) { return u * r[i]; };
    p.level_of = [r](Eigen::Index i, double et) { return et / r[i]; };
    p.linear_coefficient = r;
  } else {
    // Level 1 / rho: rho_i = (t_i + r_i / ET_i) / D_i <= rho  <=>  ET_i >= r_i / (rho D_i - t_i).
    Eigen::VectorXd d(r.size()), t(r.size());
    for (std::size_t q = 0; q < rows.size(); ++q) {
      const Eigen::Index i = rows[q];
      d[static_cast<Eigen::Index>(q)] = isolated_finish_time(in, i);
      t[static_cast<Eigen::Index>(q)] = in.elapsed[i];
    }
    p.target = [r, d, t](Eigen::Index i, double level) {
      const double slack = d[i] - t[i] * level;  // (rho D_i - t_i) / rho
      return slack > 0.0 ? r[i] * level / slack : inf();
    };
    p.level_of = [r, d, t](Eigen::Index i, double et) {
      return et > 0.0 ? d[i] / (t[i] + r[i] / et) : 0.0;
    };
  }
  const solver_options base = core_options(o, threads);
  // The bracket: the isolated allocation is feasible (lower end), every job alone at full time
  // on its best type bounds the level from above.
  const Eigen::MatrixXd x_iso = isolated_allocation(p.throughput, p.scale, p.capacity);
  const double tolerance = 0.25 * o.tolerance;
  double lower = achieved_level(p, levels_of(p, x_iso));
  const double upper = alone_bound(p, nullptr);
  level_solution stage =
      maximize_level(p, std::min(lower, upper), x_iso, upper, tolerance, base, o.warm_start_prices,
                     deadline, level_reporter(o, "level search", out));
  out.status = stage.status;
  out.solves += stage.solves;
  out.levels = 1;
  out.bound = stage.upper;
  Eigen::MatrixXd x = stage.x;
  Eigen::VectorXd prices = stage.prices;
  if (o.policy == policy_kind::max_min_fairness && o.water_filling) {
    water_fill(p, base, o, tolerance, deadline, stage.level, x, prices, out);
  }
  out.x = scatter_rows(x, rows, in.jobs());
  out.prices = prices;
  out.objective = policy_objective(in, o, out.x);
  // The bound is on the policy's own scale: makespan and rho are reciprocals of the level.
  if (o.policy != policy_kind::max_min_fairness)
    out.bound = std::isfinite(out.bound) && out.bound > 0.0 ? 1.0 / out.bound : 0.0;
  return out;
}

}  // namespace popalloc::cluster::detail
