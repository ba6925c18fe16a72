// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Logarithmic (proportional-fair) utility f(t) = w log t.
#pragma once

#include <cmath>
#include <limits>

#include "popalloc/config.hpp"
#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::utility {

/// \brief f(t) = w log t with w > 0. Every job needs a positive throughput on some option.
struct log {
  static constexpr bool piecewise_linear = false;
  static constexpr bool uses_target = false;
  static constexpr bool requires_positive_weight = true;
  static constexpr bool requires_positive_throughput = true;

  POPALLOC_HD double value(double t, const job_parameters& job) const {
    return t > 0.0 ? job.weight * std::log(t) : -HUGE_VAL;
  }
  POPALLOC_HD double marginal(double t, const job_parameters& job) const {
    return t > 0.0 ? job.weight / t : HUGE_VAL;
  }
  POPALLOC_HD double curvature(double t, const job_parameters& job) const {
    return job.weight / (t * t);
  }
  /// Root of w/t - mu t - slope = 0, written to stay accurate when mu -> 0.
  POPALLOC_HD double maximize(double slope, double mu, double lo, double hi,
                              const job_parameters& job) const {
    const double root = std::sqrt(slope * slope + 4.0 * mu * job.weight);
    const double denominator = slope + root;
    const double t = denominator > 0.0 ? 2.0 * job.weight / denominator : hi;
    return t < lo ? lo : (t > hi ? hi : t);
  }
  /// Root t >= 0 of t = alpha + beta w / t (beta >= 0): t^2 - alpha t - beta w = 0, written
  /// without cancellation for either sign of alpha.
  POPALLOC_HD double piece_root(double alpha, double beta, const job_parameters& job) const {
    const double bw = beta * job.weight;
    const double root = std::sqrt(alpha * alpha + 4.0 * bw);
    if (alpha >= 0.0) return 0.5 * (alpha + root);
    const double denominator = root - alpha;
    return denominator > 0.0 ? 2.0 * bw / denominator : 0.0;
  }
};

}  // namespace popalloc::utility
