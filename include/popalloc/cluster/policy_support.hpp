// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief What every policy of cluster/policies.hpp shares: the outcome of one policy solve, the
/// jobs it considers, the core solver's options, progress reports and the policy's objective.
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

#include "popalloc/cluster/instance.hpp"
#include "popalloc/cluster/level_bisection.hpp"
#include "popalloc/cluster/policy.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"

namespace popalloc::cluster::detail {

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

/// The n-row allocation with the rows of `sub` at `rows` and zeros elsewhere (undoes rows_of).
inline Eigen::MatrixXd scatter_rows(const Eigen::MatrixXd& sub,
                                    const std::vector<Eigen::Index>& rows, Eigen::Index n) {
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(n, sub.cols());
  for (std::size_t r = 0; r < rows.size(); ++r)
    x.row(rows[r]) = sub.row(static_cast<Eigen::Index>(r));
  return x;
}

/// ET_i = sum_w T_iw x_iw under the policy's throughput model, one entry per job.
inline Eigen::VectorXd effective_throughput(const instance& in, const Eigen::MatrixXd& x) {
  Eigen::VectorXd et(in.jobs());
  for (Eigen::Index i = 0; i < in.jobs(); ++i) et[i] = in.model_throughput.row(i).dot(x.row(i));
  return et;
}

/// max_i r_i / ET_i over the schedulable jobs with work left (+inf if one of them gets nothing;
/// 0 if none has work left).
inline double makespan_of(const instance& in, const Eigen::VectorXd& et) {
  double out = 0.0;
  for (Eigen::Index i = 0; i < in.jobs(); ++i)
    if (in.schedulable[static_cast<std::size_t>(i)] && in.remaining[i] > 0.0)
      out = std::max(out, et[i] > 0.0 ? in.remaining[i] / et[i] : inf());
  return out;
}

/// The relative shortfall (floor - et) / floor of an SLO floor > 0; 1 for an infinite floor (a
/// deadline already passed: none of it can be met).
inline double floor_shortfall(double floor, double et) {
  return std::isfinite(floor) ? (floor - et) / floor : 1.0;
}

/// The worst floor_shortfall over the schedulable jobs with an SLO floor, given every job's ET
/// (-inf when none has a floor); `jobs` gets their number.
inline double applied_floor_shortfall(const instance& in, const Eigen::VectorXd& et,
                                      std::int64_t& jobs) {
  double worst = -HUGE_VAL;
  jobs = 0;
  for (Eigen::Index i = 0; i < in.jobs(); ++i) {
    if (!in.schedulable[static_cast<std::size_t>(i)] || !(in.slo_floor[i] > 0.0)) continue;
    ++jobs;
    worst = std::max(worst, floor_shortfall(in.slo_floor[i], et[i]));
  }
  return worst;
}

/// D_i = C_i + r_i / ET_iso_i: job i's finish time at its isolated share, the denominator of
/// its finish-time fairness rho_i = (t_i + r_i / ET_i) / D_i.
inline double isolated_finish_time(const instance& in, Eigen::Index i) {
  return in.isolated_time[i] + in.remaining[i] / in.isolated_throughput[i];
}

/// max_i rho_i = (t_i + r_i / ET_i) / D_i over the schedulable jobs with remaining steps: the
/// finish-time fairness objective (0 without such jobs).
inline double finish_time_fairness_of(const instance& in, const Eigen::VectorXd& et) {
  double out = 0.0;
  for (Eigen::Index i = 0; i < in.jobs(); ++i) {
    if (!in.schedulable[static_cast<std::size_t>(i)] || !(in.remaining[i] > 0.0)) continue;
    const double rho = (in.elapsed[i] + in.remaining[i] / et[i]) / isolated_finish_time(in, i);
    out = std::max(out, et[i] > 0.0 ? rho : inf());
  }
  return out;
}

/// min_i s_i ET_i / (w_i P_i) over the schedulable jobs: the max-min fairness level.
inline double max_min_level_of(const instance& in, const Eigen::VectorXd& et) {
  double out = inf();
  for (Eigen::Index i = 0; i < in.jobs(); ++i)
    if (in.schedulable[static_cast<std::size_t>(i)])
      out = std::min(out, in.scale[i] * et[i] / (in.weight[i] * in.proportional[i]));
  return out;
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
      return makespan_of(in, effective_throughput(in, x));
    case policy_kind::finish_time_fairness:
      return finish_time_fairness_of(in, effective_throughput(in, x));
    case policy_kind::max_min_fairness:
    case policy_kind::isolated:
    case policy_kind::fifo:
      break;
  }
  return max_min_level_of(in, effective_throughput(in, x));
}

}  // namespace popalloc::cluster::detail
