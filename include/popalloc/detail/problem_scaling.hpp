// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Internal scaling of a dense problem (as LP solvers equilibrate theirs): each job's time
/// unit and the objective's unit are rescaled by powers of two so that the solver works on
/// fractions and objective values of order 1, and the result is mapped back to the caller's units.
///
/// Two exact transformations (docs/robustness.md "Internal scaling"):
/// - Time: a job whose useful resources can give it at most S_i = sum_j R_j / d_ij < 1 of its
///   time (capacities of 1e-9 leave it fractions of 1e-9) gets time unit c_i = 2^ceil(log2 S_i)
///   >= S_i: x_ij = c_i x'_ij, a'_ij = c_i a_ij, d'_ij = c_i d_ij. Throughputs and usages are
///   unchanged, and sum_j x'_ij <= 1 is implied by the capacities exactly as sum_j x_ij <= 1 was
///   (time on options of throughput 0 never helps a nondecreasing utility). Without it the
///   smoothed responses must resolve fractions of 1e-12 against prices of order 1, below the
///   precision of a double, and the solve stalls.
/// - Objective: for utilities with f(t; s w) = s f(t; w) (linear, target priority, log, power),
///   the weights are multiplied by sigma = 2^-round(log2 M), M the largest utility range of a
///   job, so the objective, the dual bound and the prices are of order 1 (the method's
///   rounding thresholds are relative to values of order 1).
/// Powers of two make both exact in floating point: throughputs, usages and the relative gap of
/// the scaled solve are those of the unscaled problem bit for bit, and the objective, bound and
/// prices are divided back exactly. A problem with every scale 1 is solved as given.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/config.hpp"
#include "popalloc/dense_problem.hpp"
#include "popalloc/error.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/utility.hpp"
#include "popalloc/value_range.hpp"

namespace popalloc::detail {

/// Problems that scale_problem takes: a dense_problem, which it can copy. Other dense types (a
/// customization of is_dense_problem over data the caller owns) are solved as given.
template <class Problem>
struct is_scalable_problem : std::false_type {};
template <class Scalar>
struct is_scalable_problem<dense_problem<Scalar>> : std::true_type {};

/// Utilities with f(t; s w) = s f(t; w) for s > 0: scaling every weight scales the objective.
template <class Utility>
struct weight_homogeneous : std::bool_constant<std::is_same_v<Utility, utility::linear> ||
                                               std::is_same_v<Utility, utility::target_priority> ||
                                               std::is_same_v<Utility, utility::log> ||
                                               std::is_same_v<Utility, utility::power>> {};

/// The scales of one problem; identity() when the problem is solved as given.
struct problem_scaling {
  /// A job's time unit c_i is changed only below this (its useful capacity is a small fraction
  /// of its time), the objective's unit only outside [1/limit, limit]: data of order 1 is solved
  /// exactly as given.
  static constexpr double time_limit = 0x1.0p-4;
  static constexpr double objective_limit = 0x1.0p4;

  Eigen::VectorXd job_time;  ///< c_i (empty: all 1)
  double objective = 1.0;    ///< sigma: the scaled objective is sigma times the caller's

  bool identity() const { return job_time.size() == 0 && objective == 1.0; }
  /// The solve reads a scaled copy of the problem (time units change the throughputs);
  /// otherwise it reads the caller's problem with every weight times `objective`
  /// (the engine's problem_storage copies the weights alone), which spares a copy of the matrix.
  bool copies() const { return job_time.size() != 0; }
  /// The factor the solve applies to the weights of the problem it reads.
  double weight_factor() const { return copies() ? 1.0 : objective; }

  /// Options in the scaled units: the absolute gap and warm-start prices scale with sigma.
  solver_options scaled(const solver_options& options) const {
    solver_options out = options;
    out.absolute_gap *= objective;
    out.warm_start_prices *= objective;
    return out;
  }

  /// Maps a result of the scaled problem back to the caller's units.
  void unscale(solve_result& r) const {
    if (objective != 1.0) {
      const double back = 1.0 / objective;  // exact: a power of two
      r.primal_objective *= back;
      r.dual_bound *= back;
      r.trivial_bound *= back;
      r.duality_gap *= back;
      r.gap_scale *= back;
      r.prices *= back;
      r.final_prices *= back;
    }
    if (job_time.size() != 0) {
      auto& a = r.allocation;
      for (std::size_t i = 0; i < a.jobs(); ++i)
        for (auto k = a.job_offset[i]; k < a.job_offset[i + 1]; ++k)
          a.fraction[static_cast<std::size_t>(k)] *= job_time[static_cast<Eigen::Index>(i)];
    }
  }

  /// The progress report in the caller's units (`buffer` holds the prices).
  progress unscale(const progress& p, Eigen::VectorXd& buffer) const {
    progress out = p;
    if (objective == 1.0) return out;
    const double back = 1.0 / objective;
    out.primal_objective *= back;
    out.dual_bound *= back;
    buffer = Eigen::Map<const Eigen::VectorXd>(p.prices, p.n_resources) * back;
    out.prices = buffer.data();
    return out;
  }
};

/// Multiplies every weight of `p` by `factor` (all 1 when it has none).
template <class Scalar>
void scale_weights(dense_problem<Scalar>& p, double factor) {
  const auto f = static_cast<Scalar>(factor);
  if (p.weight.size() != 0) {
    p.weight *= f;
  } else {
    p.weight = dense_problem<Scalar>::vector::Constant(p.jobs(), f);
  }
}

/// 2^k for the least k with 2^k >= v (v > 0 finite).
inline double power_of_two_above(double v) {
  int e = 0;
  const double f = std::frexp(v, &e);  // v = f 2^e, f in [0.5, 1)
  return f == 0.5 ? std::ldexp(1.0, e - 1) : std::ldexp(1.0, e);
}

/// 2^round(log2 v) (v > 0 finite).
inline double nearest_power_of_two(double v) { return std::exp2(std::round(std::log2(v))); }

/// What scale_problem reads of one job: its useful capacity S_i (reach), its largest throughput
/// on an open resource (0: none), and how many of its entries are invalid (neither 0 nor within
/// the value range, or negative).
struct job_measure {
  double reach = 0.0, fastest = 0.0, bad = 0.0;
};

template <class Scalar>
job_measure measure_job(const dense_problem<Scalar>& p, Eigen::Index i, Eigen::Index m) {
  job_measure out;
  const Scalar* a_row = p.throughput.data() + i * m;
  const bool per_entry = p.demand.size() != 0;
  const Scalar* d_row = per_entry ? p.demand.data() + i * m : nullptr;
  for (Eigen::Index j = 0; j < m; ++j)
    out.bad += invalid_nonnegative(static_cast<double>(a_row[j]));
  if (per_entry)
    for (Eigen::Index j = 0; j < m; ++j)
      out.bad += invalid_nonnegative(static_cast<double>(d_row[j]));
  for (Eigen::Index j = 0; j < m; ++j) {
    const double a = static_cast<double>(a_row[j]), capacity = p.capacity[j];
    if (!(a > 0.0) || !(capacity > 0.0)) continue;
    out.fastest = std::max(out.fastest, a);
    if (per_entry) {
      const double d = static_cast<double>(d_row[j]);
      out.reach += d > 0.0 ? capacity / d : HUGE_VAL;
    } else {
      out.reach += capacity;
    }
  }
  if (!per_entry && p.job_demand.size() != 0) {
    const double d = static_cast<double>(p.job_demand[i]);
    out.reach = d > 0.0 ? out.reach / d : (out.reach > 0.0 ? HUGE_VAL : 0.0);
  }
  return out;
}

/// The scales of `p` for `utility`, and the scaled problem in `scaled` when they copy() it.
/// Scales whose scaled data would leave the value range are dropped. Checks the entries of the
/// throughput and demand matrices as dense_problem::check_entries does (throws invalid_problem);
/// the rest of dense_problem::validate is the caller's (check_shape).
template <class Scalar, class Utility>
problem_scaling scale_problem(const dense_problem<Scalar>& p, const Utility& utility,
                              dense_problem<Scalar>& scaled) {
  problem_scaling s;
  const Eigen::Index n = p.jobs(), m = p.resources();
  // Job i's useful capacity S_i (its time unit is 2^ceil(log2 S_i) where S_i < time_limit) and
  // the range of its utility at that unit, in the pass that also checks the matrices' entries
  // (dense_problem::check_entries names the offender only when this pass finds one). A second
  // pass only where a time unit changes: data of order 1 pays one read of the matrices.
  const auto measure = [&p, m](Eigen::Index i) { return measure_job(p, i, m); };
  const auto time_unit = [](double reach) {
    return reach > 0.0 && reach < problem_scaling::time_limit ? power_of_two_above(reach) : 1.0;
  };
  double largest_range = 0.0, smallest_unit = 1.0, bad = 0.0, closed_rows = 0.0;
  POPALLOC_PRAGMA_OMP(omp parallel for reduction(max : largest_range) reduction(min : smallest_unit)
                          reduction(+ : bad, closed_rows) if (n * m > 65536))
  for (Eigen::Index i = 0; i < n; ++i) {
    const job_measure job_data = measure(i);
    bad += job_data.bad;
    closed_rows += job_data.fastest > 0.0 ? 0.0 : 1.0;
    const double unit = time_unit(job_data.reach);
    smallest_unit = std::min(smallest_unit, unit);
    job_parameters job;
    job.weight = p.weight.size() != 0 ? static_cast<double>(p.weight[i]) : 1.0;
    job.target = p.target.size() != 0 ? static_cast<double>(p.target[i]) : 0.0;
    const double idle = utility.value(0.0, job);
    const double range = std::isfinite(idle) ? utility.value(unit * job_data.fastest, job) - idle
                                             : job.weight;  // log: t f'(t) = w
    if (std::isfinite(range) && range > largest_range) largest_range = range;
  }
  if (bad != 0.0 || (Utility::requires_positive_throughput && closed_rows != 0.0)) {
    p.check_entries(utility);
    throw invalid_problem("the throughput or demand matrix has an invalid entry");
  }
  const bool any_time = smallest_unit < 1.0;
  Eigen::VectorXd time;
  if (any_time) {
    time.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) time[i] = time_unit(measure(i).reach);
  }
  s.job_time = std::move(time);  // empty unless a time unit changes
  if constexpr (weight_homogeneous<Utility>::value) {
    if (largest_range > 0.0 && (largest_range > problem_scaling::objective_limit ||
                                largest_range < 1.0 / problem_scaling::objective_limit))
      s.objective = 1.0 / nearest_power_of_two(largest_range);
  }
  if (s.identity()) return s;
  // Scaled data outside the value range (or below a float's normal range): solve as given.
  const auto in_range = [](const auto& values, double factor = 1.0) {
    for (Eigen::Index k = 0; k < values.size(); ++k) {
      const double v = static_cast<double>(values.data()[k]) * factor;
      if (!in_value_range(v) || (v != 0.0 && std::abs(v) < std::numeric_limits<Scalar>::min()))
        return false;
    }
    return true;
  };
  if (!s.copies()) {
    const bool weights_in_range =
        p.weight.size() != 0 ? in_range(p.weight, s.objective)
                             : in_range(Eigen::VectorXd(Eigen::VectorXd::Ones(1)), s.objective);
    return weights_in_range ? s : problem_scaling{};
  }
  scaled = p;
  if (any_time) {
    for (Eigen::Index i = 0; i < n; ++i)
      scaled.throughput.row(i) *= static_cast<Scalar>(s.job_time[i]);
    if (p.demand.size() != 0) {
      for (Eigen::Index i = 0; i < n; ++i)
        scaled.demand.row(i) *= static_cast<Scalar>(s.job_time[i]);
    } else if (p.job_demand.size() != 0) {
      scaled.job_demand = p.job_demand.cwiseProduct(s.job_time.cast<Scalar>());
    } else {
      scaled.job_demand = s.job_time.cast<Scalar>();
    }
  }
  if (s.objective != 1.0) scale_weights(scaled, s.objective);
  if (!in_range(scaled.throughput) || !in_range(scaled.demand) || !in_range(scaled.job_demand) ||
      !in_range(scaled.weight))
    return problem_scaling{};
  return s;
}

}  // namespace popalloc::detail
