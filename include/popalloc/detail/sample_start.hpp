// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Starting prices for a large cold solve from a solve of a sample of its jobs.
///
/// The optimal prices of a problem whose jobs are many draws from one population barely depend
/// on n once the capacities scale with n (POP's observation, applied to the duals). A solve of
/// every s-th job with the capacities scaled by 1/s therefore gives prices close to the full
/// problem's at 1/s of the cost per evaluation, and the full solve starts from them like a warm
/// start: at n = 1e6, m = 8 (target priority) the full problem then needs 3 evaluations instead
/// of 15, at n = 1e4 8 instead of 20 (docs/method.md "Sample start"). The sample is a stride, so it
/// is deterministic and follows the input order; an adversarial order costs evaluations, never
/// correctness.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <Eigen/Core>

#include "popalloc/dense_problem.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"

namespace popalloc::detail {

/// Problems with at least this many jobs are sampled, with at least sample_start_min_sample
/// jobs in the sample (1/50 of the jobs when there are enough). Strictly concave utilities
/// also need sample_start_min_per_resource sampled jobs per resource: they have no coarse
/// continuation stages for the sample to skip, so a thin sample's price error can cost more
/// full evaluations than it saves, while piecewise-linear utilities gain even from a thin
/// sample. docs/method.md "Sample start" has the measurements.
constexpr std::int64_t sample_start_min_jobs = 8192;
constexpr std::int64_t sample_start_stride = 50;
constexpr std::int64_t sample_start_min_sample = 1024;
constexpr std::int64_t sample_start_min_per_resource = 128;
/// The sample's own relative gap: its prices carry a sampling error far above this anyway.
constexpr double sample_start_gap = 1e-3;

/// The jobs of `shard` whose global index (offset + local index, in a problem of `total` jobs)
/// is stride / 2 + k stride, with capacities scaled to the sample's share of all jobs. With
/// offset 0 and total = shard.jobs(): every stride-th job of a whole problem. Every shard of a
/// problem split over MPI ranks gives its part of the same sample.
template <class Scalar>
dense_problem<Scalar> sample_jobs(const dense_problem<Scalar>& shard, std::int64_t stride,
                                  std::int64_t offset, std::int64_t total) {
  const std::int64_t first_global = stride / 2;
  // Global index of the first sampled job at or after `offset`.
  const std::int64_t from =
      offset <= first_global
          ? first_global
          : first_global + (offset - first_global + stride - 1) / stride * stride;
  const std::int64_t end = offset + shard.jobs();
  const auto count = static_cast<Eigen::Index>(from < end ? (end - from + stride - 1) / stride : 0);
  const auto first = static_cast<Eigen::Index>(from - offset);
  dense_problem<Scalar> out;
  auto take_rows = [&](const auto& from_rows, auto& to) {
    if (from_rows.rows() == 0) return;
    to.resize(count, from_rows.cols());
    for (Eigen::Index k = 0; k < count; ++k) to.row(k) = from_rows.row(first + k * stride);
  };
  take_rows(shard.throughput, out.throughput);
  if (shard.throughput.rows() == 0) out.throughput.resize(0, shard.throughput.cols());
  take_rows(shard.demand, out.demand);
  take_rows(shard.weight, out.weight);
  take_rows(shard.target, out.target);
  take_rows(shard.job_demand, out.job_demand);
  const std::int64_t sampled_total =
      total > first_global ? (total - first_global + stride - 1) / stride : 0;
  out.capacity = shard.capacity * (static_cast<double>(sampled_total) / static_cast<double>(total));
  return out;
}

template <class Scalar>
dense_problem<Scalar> sample_jobs(const dense_problem<Scalar>& problem, std::int64_t stride) {
  return sample_jobs(problem, stride, 0, problem.jobs());
}

/// The stride for a problem of `n` jobs and `m` resources under a piecewise-linear or a
/// strictly concave utility, or 0 when it is not worth sampling.
inline std::int64_t sample_stride(std::int64_t n, std::int64_t m, bool piecewise_linear) {
  if (n < sample_start_min_jobs) return 0;
  std::int64_t least = sample_start_min_sample;
  if (!piecewise_linear) least = std::max<std::int64_t>(least, sample_start_min_per_resource * m);
  const std::int64_t stride = std::min(sample_start_stride, n / least);
  return stride >= 2 ? stride : 0;
}

template <class Scalar>
std::int64_t sample_stride(const dense_problem<Scalar>& problem, bool piecewise_linear) {
  return sample_stride(problem.jobs(), problem.resources(), piecewise_linear);
}

/// The options of the sample's solve: no sample of its own, the sample's gap, the absolute gap
/// scaled to the sample's size.
inline solver_options sample_options(const solver_options& options, std::int64_t stride) {
  solver_options o = options;
  o.sample_start = false;
  o.relative_gap = std::max(options.relative_gap, sample_start_gap);
  o.absolute_gap = options.absolute_gap / static_cast<double>(stride);
  return o;
}

/// A sample continued from its probe prices (continuation_options) ends where the smoothed
/// dual's optimality residual is at most this share of the capacities, in the price scale's
/// units (price_discovery::near_minimiser): close enough that the full solve's Newton iteration
/// starts where it converges fast. docs/method.md "Sample start" has the measurements.
constexpr double sample_minimiser_residual = 1e-4;

/// The options of the sample solve that goes on from the probe prices, where the sample met its
/// targets early, to its smoothed minimiser (solve_role::sample_to_minimiser): warm there, and
/// at most `stride` evaluations, about the cost of one full evaluation.
inline solver_options continuation_options(const solver_options& options, std::int64_t stride,
                                           Eigen::VectorXd probe_prices) {
  solver_options o = sample_options(options, stride);
  o.warm_start_prices = std::move(probe_prices);
  o.max_iterations = static_cast<int>(std::min<std::int64_t>(stride, options.max_iterations));
  return o;
}

/// Where the full solve starts after a sample: its first smoothing level (0: the usual one) and
/// whether that level is kept even above the usual warm-start level; and prices to try first.
struct sample_start_level {
  double level = 0.0;
  bool exactly = false;
  /// Prices at which the sample's allocation closed its gap before its Newton iteration reached
  /// the smoothed minimiser (empty: none), with their level: the full solve evaluates there
  /// once, stops if its own allocation closes the gap too, and otherwise starts where
  /// price_discovery::after_failed_probe says (cold when nothing does).
  Eigen::VectorXd probe_prices;
  double probe_level = 0.0;
  /// The sample converged at its smoothed minimiser with the bound at g(0): the full solve's
  /// first evaluation there usually ends it, so that evaluation leaves out the Newton model
  /// (the m x m sums per job), which a step then computes first.
  bool likely_final = false;

  /// Starts at `start` (`exact`: even above the usual warm-start level), with no probe.
  static sample_start_level at(double start, bool exact) {
    sample_start_level out;
    out.level = start;
    out.exactly = exact;
    return out;
  }

  /// Starts at the smoothed minimiser of a solve that ended at `level` with the bound at g(0),
  /// exactly at that level, whose first evaluation is likely_final.
  static sample_start_level at_g0_minimiser(double level) {
    sample_start_level out = at(level, true);
    out.likely_final = true;
    return out;
  }
};

/// Whether the sample's last prices price only resources its allocation fills (complementary
/// slackness of the smoothed problem, to 5% of p.R): then they are the smoothed dual's
/// minimiser rather than wherever the sample's allocation happened to close its gap.
inline bool prices_complementary(const solve_result& sample, const Eigen::VectorXd& capacity) {
  const Eigen::VectorXd& p = sample.final_prices;
  if (p.size() != capacity.size() || sample.usage.size() != capacity.size() || !p.allFinite())
    return false;
  const double priced = p.dot(capacity);
  if (!(priced > 0.0)) return false;
  const double slack = p.dot((capacity - sample.usage).cwiseMax(0.0));
  return slack <= 0.05 * priced;
}

/// Starts `run_options` from the sample's prices (`capacity`: the sample's) and says at which
/// level.
template <class Utility>
sample_start_level start_from_sample(const solve_result& sample, const Eigen::VectorXd& capacity,
                                     solver_options& run_options) {
  if (!(sample.dual_bound < sample.trivial_bound)) {
    // The bound is the unlimited-capacity objective: the optimal prices are 0, but the smoothed
    // minimiser's are proportional to the smoothing (at p = kappa q the saturated jobs'
    // responses do not depend on kappa). The sample's last prices therefore fit its last level
    // and no other: the full solve continues there. One that did not converge may have ended
    // at any level (the smoothing floor, after a stall): the full solve then starts cold. A
    // sample whose allocation met every target before its Newton iteration reached the
    // minimiser stopped at prices that are no point to continue from, but where the full
    // problem's responses, drawn from the same population, most likely meet their targets too:
    // a probe, tried first; when it falls short, the sample goes on from there to its minimiser
    // and the full solve starts at that (start_from_continuation; docs/method.md "Sample start").
    if (sample.status != solve_status::converged) return {};
    if (!prices_complementary(sample, capacity)) {
      sample_start_level probe;
      if (sample.final_prices.allFinite()) {
        probe.probe_prices = sample.final_prices;
        probe.probe_level = sample.smoothing;
      }
      return probe;
    }
    run_options.warm_start_prices = sample.final_prices;
    return sample_start_level::at_g0_minimiser(sample.smoothing);
  }
  if (sample.prices.allFinite()) run_options.warm_start_prices = sample.prices;
  // Strictly concave utilities continue at the level the sample ended at (log at n = 1e6, when
  // its gap was still relative to |objective|: 6 full evaluations instead of 10);
  // piecewise-linear ones gain nothing from it (m = 16: 8 instead of 5) and keep the usual
  // warm-start level.
  return sample_start_level::at(Utility::piecewise_linear ? 0.0 : sample.smoothing, false);
}

/// Where the full solve starts after its probe failed: at the continued sample's last prices
/// (set in `prices`), exactly at their level, as after a sample that reached its minimiser, but
/// with the Newton model from the first evaluation: the failed probe says the full problem has
/// jobs the sample does not represent, so that evaluation rarely ends the solve (likely_final).
/// Cold (no prices) when the continuation did not converge.
inline sample_start_level start_from_continuation(const solve_result& continued,
                                                  Eigen::VectorXd& prices) {
  if (continued.status != solve_status::converged || !continued.final_prices.allFinite()) return {};
  prices = continued.final_prices;
  return sample_start_level::at(continued.smoothing, true);
}

}  // namespace popalloc::detail
