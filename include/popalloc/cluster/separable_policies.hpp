// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The separable policies of cluster/policies.hpp (proportional fairness, max-throughput
/// with or without SLO floors): one core solve each, with a check that the floors can be met.
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
#include "popalloc/cluster/policy.hpp"
#include "popalloc/cluster/policy_support.hpp"
#include "popalloc/dense_problem.hpp"
#include "popalloc/dual_solver.hpp"
#include "popalloc/options.hpp"
#include "popalloc/utility/linear.hpp"
#include "popalloc/utility/linear_with_floor.hpp"
#include "popalloc/utility/log.hpp"
#include "popalloc/utility/target_priority.hpp"

namespace popalloc::cluster::detail {

/// max over the jobs with a floor L_q > 0 of floor_shortfall(L_q, ET_q), ET_q = throughput_q .
/// x_q (-inf when no job has a floor).
template <class Throughput>
double worst_floor_shortfall(const Eigen::VectorXd& floors, const Throughput& throughput,
                             const Eigen::MatrixXd& x) {
  double worst = -HUGE_VAL;
  for (Eigen::Index q = 0; q < floors.size(); ++q)
    if (floors[q] > 0.0)
      worst = std::max(worst, floor_shortfall(floors[q], throughput.row(q).dot(x.row(q))));
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

}  // namespace popalloc::cluster::detail
