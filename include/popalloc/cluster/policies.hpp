// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Gavel's heterogeneity-aware scheduling policies on popalloc's price-discovery core,
/// with POP: `allocate(jobs, cluster, options)`.
///
/// STABLE (used by the round-based simulator): allocate(), policy_kind and its names,
/// policy_options, cluster_allocation and the job / gpu_cluster / throughput_table / trace /
/// generator headers. Fields may be added; existing ones keep their meaning. The detail::
/// functions and instance / level_bisection internals may change.
///
/// How each policy maps to the core solver (docs/cluster-scheduling.md has the derivations):
///   max-throughput         linear utility on A_iw = T_iw / cost_w, job demand s_i; with SLO
///                          floors the exact penalty linear_with_floor (solve_with_slo_floors)
///   proportional fairness  log utility, weight w_i, on A_iw = T_iw / P_i
///   max-min fairness       bisection on the level L; each step a target-priority solve
///                          (level_bisection.hpp); then water filling: bottleneck jobs are frozen
///                          and the others raised level by level
///   min makespan           the same bisection on u = 1 / makespan, targets u r_i
///   finish-time fairness   the same bisection on 1 / rho, targets r_i / (rho D_i - t_i)
///   isolated, fifo         closed-form baselines
/// A job with scale factor s_i consumes s_i GPUs of its type per unit time (dense_problem's
/// job_demand); POP splits GPUs with pop::split_units, so no GPU is lost to integer division.
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
#include "popalloc/cluster/cluster_spec.hpp"
#include "popalloc/cluster/instance.hpp"
#include "popalloc/cluster/job.hpp"
#include "popalloc/cluster/level_bisection.hpp"
#include "popalloc/cluster/policy.hpp"
#include "popalloc/dense_problem.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/dual_solver.hpp"
#include "popalloc/error.hpp"
#include "popalloc/options.hpp"
#include "popalloc/pop/partition.hpp"
#include "popalloc/pop/pop_solver.hpp"
#include "popalloc/pop/split.hpp"
#include "popalloc/utility/linear.hpp"
#include "popalloc/utility/linear_with_floor.hpp"
#include "popalloc/utility/log.hpp"
#include "popalloc/utility/target_priority.hpp"

namespace popalloc::cluster {
namespace detail {

/// What one policy solve on one (sub-)instance produces.
struct policy_outcome {
  Eigen::MatrixXd x;  ///< n x m
  double objective = std::numeric_limits<double>::quiet_NaN();
  double bound = std::numeric_limits<double>::quiet_NaN();
  solve_status status = solve_status::converged;
  int solves = 0;
  int levels = 0;
  Eigen::VectorXd prices;
  bool slo_floors_dropped = false;
  std::int64_t classes = 0;  ///< classes of the exact class solve (0: the core path)
  int simplex_runs = 0;
};

inline double inf() { return std::numeric_limits<double>::infinity(); }

/// Indices of the jobs the optimisation policies consider (schedulable, and with work left for
/// makespan / finish-time fairness).
inline std::vector<Eigen::Index> active_jobs(const instance& in, bool needs_work) {
  std::vector<Eigen::Index> out;
  for (Eigen::Index i = 0; i < in.jobs(); ++i)
    if (in.schedulable[static_cast<std::size_t>(i)] && (!needs_work || in.remaining[i] > 0.0))
      out.push_back(i);
  return out;
}

inline Eigen::MatrixXd rows_of(const Eigen::MatrixXd& a, const std::vector<Eigen::Index>& rows) {
  Eigen::MatrixXd out(static_cast<Eigen::Index>(rows.size()), a.cols());
  for (std::size_t r = 0; r < rows.size(); ++r)
    out.row(static_cast<Eigen::Index>(r)) = a.row(rows[r]);
  return out;
}
inline Eigen::VectorXd rows_of(const Eigen::VectorXd& a, const std::vector<Eigen::Index>& rows) {
  Eigen::VectorXd out(static_cast<Eigen::Index>(rows.size()));
  for (std::size_t r = 0; r < rows.size(); ++r) out[static_cast<Eigen::Index>(r)] = a[rows[r]];
  return out;
}

inline solver_options core_options(const policy_options& o, int threads) {
  solver_options s;
  s.threads = threads;
  s.max_iterations = 200;
  s.relative_gap = o.tolerance;
  return s;
}

/// Sends a report to o.progress, if set.
inline void report(const policy_options& o, const char* stage, int core_solves,
                   int water_filling_levels, double lower, double upper, double relative_gap) {
  if (!o.progress) return;
  policy_progress p;
  p.stage = stage;
  p.core_solves = core_solves;
  p.water_filling_levels = water_filling_levels;
  p.lower = lower;
  p.upper = upper;
  p.relative_gap = relative_gap;
  o.progress(p);
}

/// A level search's report after each probe, counting the solves `out` holds from before it.
inline std::function<void(const level_solution&)> level_reporter(const policy_options& o,
                                                                 const char* stage,
                                                                 const policy_outcome& out) {
  if (!o.progress) return {};
  return [&o, stage, &out](const level_solution& s) {
    const double gap =
        s.upper > 0.0 ? (s.upper - s.level) / s.upper : std::numeric_limits<double>::quiet_NaN();
    report(o, stage, out.solves + s.solves, out.levels, s.level, s.upper, gap);
  };
}

/// The progress callback of a separable policy's core solves: every iteration to o.progress.
inline progress_callback solve_reporter(const policy_options& o, const policy_outcome& out) {
  if (!o.progress) return {};
  return [&o, &out](const progress& s) {
    report(o, "solve", out.solves, 0, s.primal_objective, s.dual_bound, s.relative_gap);
    return callback_action::proceed;
  };
}

/// The policy's objective for allocation x (model throughputs, schedulable jobs).
inline double policy_objective(const instance& in, const policy_options& o,
                               const Eigen::MatrixXd& x) {
  const Eigen::Index n = in.jobs();
  double out = 0.0;
  switch (o.policy) {
    case policy_kind::proportional_fairness:
      for (Eigen::Index i = 0; i < n; ++i)
        if (in.schedulable[static_cast<std::size_t>(i)])
          out += in.weight[i] *
                 std::log(in.model_throughput.row(i).dot(x.row(i)) / in.proportional[i]);
      return out;
    case policy_kind::max_throughput:
      for (Eigen::Index i = 0; i < n; ++i)
        for (Eigen::Index w = 0; w < in.types(); ++w)
          out += in.model_throughput(i, w) * x(i, w) /
                 (o.gpu_cost.empty() ? 1.0 : o.gpu_cost[static_cast<std::size_t>(w)]);
      return out;
    case policy_kind::min_makespan:
      for (Eigen::Index i = 0; i < n; ++i) {
        if (!in.schedulable[static_cast<std::size_t>(i)] || !(in.remaining[i] > 0.0)) continue;
        const double et = in.model_throughput.row(i).dot(x.row(i));
        out = std::max(out, et > 0.0 ? in.remaining[i] / et : inf());
      }
      return out;
    case policy_kind::finish_time_fairness:
      for (Eigen::Index i = 0; i < n; ++i) {
        if (!in.schedulable[static_cast<std::size_t>(i)] || !(in.remaining[i] > 0.0)) continue;
        const double et = in.model_throughput.row(i).dot(x.row(i));
        const double d = in.isolated_time[i] + in.remaining[i] / in.isolated_throughput[i];
        out = std::max(out, et > 0.0 ? (in.elapsed[i] + in.remaining[i] / et) / d : inf());
      }
      return out;
    case policy_kind::max_min_fairness:
    case policy_kind::isolated:
    case policy_kind::fifo:
      break;
  }
  out = inf();
  for (Eigen::Index i = 0; i < n; ++i)
    if (in.schedulable[static_cast<std::size_t>(i)])
      out = std::min(out, in.scale[i] * in.model_throughput.row(i).dot(x.row(i)) /
                              (in.weight[i] * in.proportional[i]));
  return out;
}

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

inline Eigen::MatrixXd scatter_rows(const Eigen::MatrixXd& sub,
                                    const std::vector<Eigen::Index>& rows, Eigen::Index n) {
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(n, sub.cols());
  for (std::size_t r = 0; r < rows.size(); ++r)
    x.row(rows[r]) = sub.row(static_cast<Eigen::Index>(r));
  return x;
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
  } else if (o.policy == policy_kind::min_makespan) {
    // Level u = 1 / makespan: ET_i >= u r_i.
    p.target = [r](Eigen::Index i, double u) { return u * r[i]; };
    p.level_of = [r](Eigen::Index i, double et) { return et / r[i]; };
  } else {
    // Level 1 / rho: rho_i = (t_i + r_i / ET_i) / D_i <= rho  <=>  ET_i >= r_i / (rho D_i - t_i).
    Eigen::VectorXd d(r.size()), t(r.size());
    for (std::size_t q = 0; q < rows.size(); ++q) {
      const Eigen::Index i = rows[q];
      d[static_cast<Eigen::Index>(q)] =
          in.isolated_time[i] + in.remaining[i] / in.isolated_throughput[i];
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

/// max over the jobs with a floor L_q > 0 of (L_q - ET_q) / L_q, ET_q = throughput_q . x_q
/// (-inf when no job has a floor).
template <class Throughput>
double worst_floor_shortfall(const Eigen::VectorXd& floors, const Throughput& throughput,
                             const Eigen::MatrixXd& x) {
  double worst = -HUGE_VAL;
  for (Eigen::Index q = 0; q < floors.size(); ++q)
    if (floors[q] > 0.0)
      worst = std::max(worst, (floors[q] - throughput.row(q).dot(x.row(q))) / floors[q]);
  return worst;
}

/// Whether the SLO floors L_q can all be met, to `tolerance`: maximises
/// sum_q min(t_q / L_q - 1, 0) (target priority, weight 1 / L_q). The dual bound certifies
/// infeasibility when it is below -tolerance; an undecided solve counts as feasible.
inline bool slo_floors_feasible(const dense_problem<double>& d, const Eigen::VectorXd& floors,
                                solver_options s, double tolerance, policy_outcome& out,
                                const progress_callback& callback = {}) {
  dense_problem<double> check = d;
  check.target = floors;
  check.weight = Eigen::VectorXd::Zero(floors.size());
  for (Eigen::Index q = 0; q < floors.size(); ++q)
    if (floors[q] > 0.0) check.weight[q] = 1.0 / floors[q];
  s.relative_gap = 0.0;
  s.absolute_gap = tolerance;
  s.warm_start_prices.resize(0);
  const solve_result r = popalloc::solve(check, utility::target_priority{}, s, callback);
  ++out.solves;
  return !(r.dual_bound < -tolerance);
}

/// Max-throughput with SLO floors t_i >= L_i: the exact penalty sum_i t_i - M max(L_i - t_i, 0)
/// (utility::linear_with_floor). For M above every floor's multiplier the penalised optimum is
/// the constrained one; a job's multiplier is (price per GPU of its type) / (its throughput per
/// GPU) - 1, so M starts at a few times the ratio of the best throughput per GPU to the floor
/// jobs' and grows 16-fold (warm-started) while a floor is missed. A missed floor first triggers
/// a feasibility solve (slo_floors_feasible); floors that cannot all be met, or that exceed what
/// a job gets alone on its best type, are dropped and the problem solved without them, as
/// Gavel does. The penalised objective carries M sum_i L_i, so the solves stop at an absolute
/// gap of tolerance times a bound on the total throughput instead of a relative one.
inline solve_result solve_with_slo_floors(dense_problem<double>& d, const Eigen::VectorXd& floors,
                                          solver_options s, double tolerance, policy_outcome& out,
                                          const progress_callback& callback = {}) {
  const Eigen::Index k = d.throughput.rows();
  double best_per_gpu = 0.0, worst_floor_job = HUGE_VAL, rate_bound = 0.0;
  bool reachable = true;
  for (Eigen::Index q = 0; q < k; ++q) {
    const double best = d.throughput.row(q).maxCoeff();
    best_per_gpu = std::max(best_per_gpu, best / d.job_demand[q]);
    if (!(floors[q] > 0.0)) continue;
    worst_floor_job = std::min(worst_floor_job, best / d.job_demand[q]);
    if (!(floors[q] <= best)) reachable = false;
  }
  for (Eigen::Index w = 0; w < d.throughput.cols(); ++w) {
    double rate = 0.0;  // the best throughput per GPU of type w
    for (Eigen::Index q = 0; q < k; ++q)
      rate = std::max(rate, d.throughput(q, w) / d.job_demand[q]);
    rate_bound += d.capacity[w] * rate;
  }
  const solver_options base = s;
  s.relative_gap = 0.0;
  s.absolute_gap = tolerance * rate_bound;
  // A floor counts as met when the shortfall is within the solve's own accuracy.
  const double met = 10.0 * tolerance;
  auto shortfall = [&](const solve_result& r) {
    return worst_floor_shortfall(floors, d.throughput,
                                 allocation_matrix(r, k, d.throughput.cols()));
  };
  if (reachable) {
    d.target = floors;
    double penalty = 4.0 * best_per_gpu / worst_floor_job;
    bool checked = false;
    for (int attempt = 0; attempt < 4; ++attempt, penalty *= 16.0) {
      solve_result r = popalloc::solve(d, utility::linear_with_floor{penalty}, s, callback);
      ++out.solves;
      if (shortfall(r) <= met) return r;
      if (!checked) {
        checked = true;
        if (!slo_floors_feasible(d, floors, base, met, out, callback)) break;
      }
      s.warm_start_prices = r.prices;
    }
    d.target.resize(0);
  }
  out.slo_floors_dropped = true;
  ++out.solves;
  return popalloc::solve(d, utility::linear{}, base, callback);
}

/// Max-throughput and proportional fairness: one separable solve.
inline policy_outcome solve_separable_policy(const instance& in, const policy_options& o,
                                             int threads) {
  policy_outcome out;
  out.x = Eigen::MatrixXd::Zero(in.jobs(), in.types());
  const std::vector<Eigen::Index> rows = active_jobs(in, false);
  if (rows.empty()) {
    out.objective = policy_objective(in, o, out.x);
    return out;
  }
  dense_problem<double> d;
  const auto k = static_cast<Eigen::Index>(rows.size());
  d.throughput = rows_of(in.model_throughput, rows);
  d.capacity = in.capacity;
  d.job_demand = rows_of(in.scale, rows);
  solver_options s = core_options(o, threads);
  if (o.warm_start_prices.size() == in.types()) s.warm_start_prices = o.warm_start_prices;
  const progress_callback callback = solve_reporter(o, out);
  solve_result r;
  double offset = 0.0;
  if (o.policy == policy_kind::max_throughput) {
    for (Eigen::Index w = 0; w < in.types(); ++w)
      d.throughput.col(w) /= o.gpu_cost.empty() ? 1.0 : o.gpu_cost[static_cast<std::size_t>(w)];
    const Eigen::VectorXd floors = rows_of(in.slo_floor, rows);
    if (o.slo_floors && (floors.array() > 0.0).any()) {
      r = solve_with_slo_floors(d, floors, s, o.tolerance, out, callback);
    } else {
      r = popalloc::solve(d, utility::linear{}, s, callback);
      out.solves = 1;
    }
  } else {
    d.weight = rows_of(in.weight, rows);
    for (Eigen::Index q = 0; q < k; ++q) {
      d.throughput.row(q) /= in.proportional[rows[static_cast<std::size_t>(q)]];
    }
    // Near an optimum of 0 a relative gap cannot close: also stop at tolerance * sum of weights
    // (an average relative throughput error of `tolerance`).
    s.absolute_gap = o.tolerance * d.weight.sum();
    // Identical jobs (same rescaled row, scale factor, weight) form classes; the problem over
    // classes (class a: weight n_a w_a, demand n_a s_a, one per-job row) has the same dual
    // function g(p) = sum_a n_a max_x (w_a log(A_a x) - s_a p.x) + p.n and, by strict
    // concavity of log in ET and symmetry, the optimum that gives every member the class row.
    const auto classes =
        o.class_lp_max_classes > 0 && k > 1
            ? identical_row_classes(
                  d.throughput, d.job_demand, d.weight,
                  static_cast<std::size_t>(std::max<Eigen::Index>(o.class_lp_max_classes, k / 2)))
            : std::vector<std::vector<Eigen::Index>>{};
    if (!classes.empty() && static_cast<Eigen::Index>(classes.size()) < k) {
      const auto kc = static_cast<Eigen::Index>(classes.size());
      dense_problem<double> dc;
      dc.throughput.resize(kc, in.types());
      dc.capacity = d.capacity;
      dc.job_demand.resize(kc);
      dc.weight.resize(kc);
      for (Eigen::Index a = 0; a < kc; ++a) {
        const auto& members = classes[static_cast<std::size_t>(a)];
        const auto size = static_cast<double>(members.size());
        dc.throughput.row(a) = d.throughput.row(members.front());
        dc.job_demand[a] = size * d.job_demand[members.front()];
        dc.weight[a] = size * d.weight[members.front()];
      }
      r = popalloc::solve(dc, utility::log{}, s, callback);
      out.solves = 1;
      out.classes = kc;
      const Eigen::MatrixXd xc = allocation_matrix(r, kc, in.types());
      const Eigen::MatrixXd x = spread_class_rows(xc, classes, d.job_demand, d.capacity, k);
      out.x = scatter_rows(x, rows, in.jobs());
      out.status = r.status;
      out.bound = r.dual_bound + offset;
      out.prices = r.prices;
      out.objective = policy_objective(in, o, out.x);
      return out;
    }
    r = popalloc::solve(d, utility::log{}, s, callback);
    out.solves = 1;
  }
  out.x = scatter_rows(allocation_matrix(r, k, in.types()), rows, in.jobs());
  out.status = r.status;
  out.bound = r.dual_bound + offset;
  out.prices = r.prices;
  out.objective = policy_objective(in, o, out.x);
  return out;
}

inline policy_outcome solve_baseline(const instance& in, const policy_options& o) {
  policy_outcome out;
  out.solves = 0;
  if (o.policy == policy_kind::isolated) {
    out.x = isolated_allocation(in.model_throughput, in.scale, in.capacity);
  } else {
    // FIFO: arrival order (ties: input order), whole GPUs, each job on one type for all its time.
    out.x = Eigen::MatrixXd::Zero(in.jobs(), in.types());
    std::vector<Eigen::Index> order(static_cast<std::size_t>(in.jobs()));
    std::iota(order.begin(), order.end(), Eigen::Index{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](Eigen::Index a, Eigen::Index b) { return in.arrival[a] < in.arrival[b]; });
    Eigen::VectorXd free = in.capacity;
    random_source rng(o.fifo_seed);
    for (const Eigen::Index i : order) {
      std::vector<Eigen::Index> fits;
      for (Eigen::Index w = 0; w < in.types(); ++w)
        if (in.model_throughput(i, w) > 0.0 && free[w] >= in.scale[i]) fits.push_back(w);
      if (fits.empty()) continue;
      Eigen::Index pick = fits[0];
      if (o.heterogeneity_agnostic) {
        pick = fits[static_cast<std::size_t>(rng.below(fits.size()))];
      } else {
        for (const Eigen::Index w : fits)
          if (in.true_throughput(i, w) > in.true_throughput(i, pick)) pick = w;
      }
      out.x(i, pick) = 1.0;
      free[pick] -= in.scale[i];
    }
  }
  out.objective = policy_objective(in, o, out.x);
  return out;
}

inline policy_outcome solve_policy(const instance& in, const policy_options& o, int threads,
                                   double deadline) {
  switch (o.policy) {
    case policy_kind::max_min_fairness:
    case policy_kind::min_makespan:
    case policy_kind::finish_time_fairness:
      return solve_level_policy(in, o, threads, deadline);
    case policy_kind::proportional_fairness:
    case policy_kind::max_throughput:
      return solve_separable_policy(in, o, threads);
    case policy_kind::isolated:
    case policy_kind::fifo:
      break;
  }
  return solve_baseline(in, o);
}

inline void validate_options(const policy_options& o, const gpu_cluster& cluster) {
  if (!(o.tolerance > 0.0) || !(o.tolerance < 0.1))
    throw invalid_options("tolerance must be in (0, 0.1)");
  if (o.pop_parts < 1) throw invalid_options("POP needs k >= 1 parts");
  if (o.pop_parts > cluster.total())
    throw invalid_options("POP with " + std::to_string(o.pop_parts) +
                          " parts needs at least one GPU per part; the cluster has " +
                          std::to_string(cluster.total()));
  if (o.threads < 0) throw invalid_options("threads must be >= 0");
  if (o.class_lp_max_classes < 0) throw invalid_options("class_lp_max_classes must be >= 0");
  if (o.max_water_filling_levels < 1)
    throw invalid_options("max_water_filling_levels must be >= 1");
  if (!(o.water_filling_threshold > 0.0) || !(o.water_filling_threshold < 0.5))
    throw invalid_options("water_filling_threshold must be in (0, 0.5)");
  if (!(o.time_limit_seconds > 0.0)) throw invalid_options("time_limit_seconds must be > 0");
  if (!o.gpu_cost.empty()) {
    if (o.gpu_cost.size() != cluster.size())
      throw invalid_options("gpu_cost needs one price per GPU type (" +
                            std::to_string(cluster.size()) + ")");
    for (const double c : o.gpu_cost)
      if (!(std::isfinite(c) && c > 0.0)) throw invalid_options("GPU costs must be finite and > 0");
  }
  for (Eigen::Index w = 0; w < o.warm_start_prices.size(); ++w)
    if (!(std::isfinite(o.warm_start_prices[w]) && o.warm_start_prices[w] >= 0.0))
      throw invalid_options("warm_start_prices must be finite and >= 0");
}

}  // namespace detail

/// \brief Allocates the cluster's GPUs to `jobs` with `options.policy`: the fraction of time
/// every job should spend on every GPU type. Call it whenever jobs arrive or finish, with each
/// job's remaining_steps (and elapsed_time / isolated_time for finish-time fairness);
/// cluster_allocation::prices can warm-start the next call.
/// \throws invalid_problem for invalid jobs or cluster, invalid_options for bad options.
inline cluster_allocation allocate(const std::vector<job>& jobs, const gpu_cluster& cluster,
                                   const policy_options& options = {}) {
  const popalloc::detail::stopwatch clock;
  detail::validate_options(options, cluster);
  const instance in = prepare_instance(jobs, cluster, options);
  const bool slo_floors = options.policy == policy_kind::max_throughput && options.slo_floors &&
                          (in.slo_floor.array() > 0.0).any();
  if (slo_floors && !options.gpu_cost.empty())
    throw invalid_options(
        "SLO floors are on throughput and cannot be combined with GPU costs (throughput per "
        "cost); set slo_floors = false or give no costs");
  cluster_allocation out;
  out.policy = options.policy;
  out.heterogeneity_agnostic = options.heterogeneity_agnostic;
  out.schedulable = in.schedulable;
  out.pop_parts = options.pop_parts;
  detail::policy_outcome result;
  if (options.pop_parts == 1) {
    result = detail::solve_policy(in, options, options.threads, options.time_limit_seconds);
  } else {
    const int k = options.pop_parts;
    const auto n = static_cast<std::int64_t>(jobs.size());
    pop::partition assignment;
    switch (options.pop_strategy) {
      case pop::partition_strategy::round_robin:
        assignment = pop::partition_round_robin(n, k);
        break;
      case pop::partition_strategy::shuffled:
        assignment = pop::partition_shuffled(n, k, options.pop_seed);
        break;
      case pop::partition_strategy::uniform_random:
      case pop::partition_strategy::two_choices:
        assignment = pop::partition_uniform_random(n, k, options.pop_seed);
        break;
    }
    const pop::unit_split units = pop::split_units(cluster.counts, k);
    policy_options part_options = options;
    part_options.pop_parts = 1;
    const auto parts = pop::pop_solve(
        assignment,
        [&](int s, const std::vector<std::int64_t>& members) {
          Eigen::VectorXd share(static_cast<Eigen::Index>(cluster.size()));
          for (std::size_t w = 0; w < cluster.size(); ++w)
            share[static_cast<Eigen::Index>(w)] =
                static_cast<double>(units.shares[w][static_cast<std::size_t>(s)]);
          detail::policy_outcome o;
          if (members.empty()) return o;
          const instance sub = in.subset(members, share);
          policy_options this_part = part_options;
          if (options.progress)
            this_part.progress = [&options, s](const policy_progress& p) {
              policy_progress tagged = p;
              tagged.pop_part = s;
              options.progress(tagged);
            };
          o = detail::solve_policy(sub, this_part, 1, options.time_limit_seconds);
          return o;
        },
        options.threads);
    result.x = Eigen::MatrixXd::Zero(in.jobs(), in.types());
    const auto members = assignment.members();
    for (int s = 0; s < k; ++s) {
      const auto& part = parts.results[static_cast<std::size_t>(s)];
      const auto& rows = members[static_cast<std::size_t>(s)];
      if (rows.empty()) continue;
      for (std::size_t r = 0; r < rows.size(); ++r)
        result.x.row(static_cast<Eigen::Index>(rows[r])) = part.x.row(static_cast<Eigen::Index>(r));
      result.status = worse(result.status, part.status);
      result.solves += part.solves;
      result.classes += part.classes;
      result.simplex_runs += part.simplex_runs;
      result.levels = std::max(result.levels, part.levels);
      result.slo_floors_dropped = result.slo_floors_dropped || part.slo_floors_dropped;
      if (part.prices.size() != 0) result.prices = part.prices;
    }
    result.objective = detail::policy_objective(in, options, result.x);
    out.pop_parts_seconds_max = parts.seconds_max();
    out.pop_parts_seconds_sum = parts.seconds_sum();
  }
  out.fraction = result.x;
  out.objective = result.objective;
  out.bound = result.bound;
  out.status = options.policy == policy_kind::isolated || options.policy == policy_kind::fifo
                   ? solve_status::converged
                   : result.status;
  out.core_solves = result.solves;
  out.classes = result.classes;
  out.simplex_runs = result.simplex_runs;
  out.water_filling_levels = result.levels;
  out.prices = result.prices;
  out.slo_floors_dropped = result.slo_floors_dropped;
  const Eigen::Index n = in.jobs();
  if (slo_floors) {
    Eigen::VectorXd floors = in.slo_floor;  // the floors the policy applied: schedulable jobs'
    for (Eigen::Index i = 0; i < n; ++i)
      if (!in.schedulable[static_cast<std::size_t>(i)]) floors[i] = 0.0;
    out.slo_jobs = (floors.array() > 0.0).count();
    out.slo_worst_shortfall =
        detail::worst_floor_shortfall(floors, in.model_throughput, out.fraction);
  }
  out.effective_throughput.resize(n);
  out.normalized_throughput.resize(n);
  out.proportional_throughput = in.proportional_true;
  for (Eigen::Index i = 0; i < n; ++i) {
    out.effective_throughput[i] = in.true_throughput.row(i).dot(out.fraction.row(i));
    out.normalized_throughput[i] =
        in.proportional_true[i] > 0.0
            ? in.scale[i] * out.effective_throughput[i] / (in.weight[i] * in.proportional_true[i])
            : 0.0;
  }
  out.seconds = clock.seconds();
  return out;
}

}  // namespace popalloc::cluster
