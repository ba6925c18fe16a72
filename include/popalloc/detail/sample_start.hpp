// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Starting prices for a large cold solve from a solve of a sample of its jobs.
///
/// The optimal prices of a problem whose jobs are many draws from one population barely depend
/// on n once the capacities scale with n (POP's observation, applied to the duals). A solve of
/// every s-th job with the capacities scaled by 1/s therefore gives prices close to the full
/// problem's at 1/s of the cost per evaluation, and the full solve starts from them like a warm
/// start: at n = 1e6, m = 8 (target priority) the full problem then needs 3 evaluations instead
/// of 15 (docs/method.md "Sample start"). The sample is a stride, so it is deterministic and
/// follows the input order; an adversarial order costs evaluations, never correctness.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include <Eigen/Core>

#include "popalloc/dense_problem.hpp"

namespace popalloc::detail {

template <class Problem>
struct is_dense_problem : std::false_type {};
template <class Scalar>
struct is_dense_problem<dense_problem<Scalar>> : std::true_type {};

/// Problems with at least this many jobs and job-resource entries are sampled. Below that, an
/// evaluation is so cheap that the sample's fixed cost per evaluation (the Newton step, the
/// reductions) is not repaid (measured: n = 1e5 gains at m = 64, loses a little at m = 4).
constexpr std::int64_t sample_start_min_jobs = 65536;
constexpr std::int64_t sample_start_min_entries = 1500000;
/// The sample has about n / sample_start_stride jobs, and at least sample_start_min_sample.
constexpr std::int64_t sample_start_stride = 50;
constexpr std::int64_t sample_start_min_sample = 4096;
/// The sample's own relative gap: its prices carry a sampling error far above this anyway.
constexpr double sample_start_gap = 1e-3;

/// Every `stride`-th job of `problem` (starting at stride / 2) with capacities scaled to the
/// sample's share of the jobs.
template <class Scalar>
dense_problem<Scalar> sample_jobs(const dense_problem<Scalar>& problem, std::int64_t stride) {
  const Eigen::Index n = problem.jobs();
  const Eigen::Index first = static_cast<Eigen::Index>(stride / 2);
  const Eigen::Index count = (n - first + static_cast<Eigen::Index>(stride) - 1) / stride;
  dense_problem<Scalar> out;
  auto take_rows = [&](const auto& from, auto& to) {
    if (from.rows() == 0) return;
    to.resize(count, from.cols());
    for (Eigen::Index k = 0; k < count; ++k) to.row(k) = from.row(first + k * stride);
  };
  take_rows(problem.throughput, out.throughput);
  take_rows(problem.demand, out.demand);
  take_rows(problem.weight, out.weight);
  take_rows(problem.target, out.target);
  take_rows(problem.job_demand, out.job_demand);
  out.capacity = problem.capacity * (static_cast<double>(count) / static_cast<double>(n));
  return out;
}

/// The stride for `problem`, or 0 when it is not worth sampling.
template <class Scalar>
std::int64_t sample_stride(const dense_problem<Scalar>& problem) {
  const std::int64_t n = problem.jobs();
  if (n < sample_start_min_jobs || n * problem.resources() < sample_start_min_entries) return 0;
  return std::max<std::int64_t>(1, std::min(sample_start_stride, n / sample_start_min_sample));
}

}  // namespace popalloc::detail
