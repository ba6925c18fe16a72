// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Power (alpha-fair) utility f(t) = w t^alpha, 0 < alpha < 1.
#pragma once

#include <cmath>
#include <limits>

#include "popalloc/config.hpp"
#include "popalloc/error.hpp"
#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::utility {

/// \brief f(t) = w t^alpha with 0 < alpha < 1 and w > 0.
struct power {
  static constexpr bool piecewise_linear = false;
  static constexpr bool uses_target = false;
  static constexpr bool requires_positive_weight = true;
  static constexpr bool requires_positive_throughput = false;

  double alpha = 0.5;

  power() = default;
  /// \throws invalid_options unless 0 < alpha < 1.
  explicit power(double exponent) : alpha(exponent) {
    if (!(exponent > 0.0 && exponent < 1.0))
      throw invalid_options("power utility needs 0 < alpha < 1");
  }

  POPALLOC_HD double value(double t, const job_parameters& job) const {
    return t > 0.0 ? job.weight * std::pow(t, alpha) : 0.0;
  }
  POPALLOC_HD double marginal(double t, const job_parameters& job) const {
    return t > 0.0 ? job.weight * alpha * std::pow(t, alpha - 1.0) : HUGE_VAL;
  }
  POPALLOC_HD double curvature(double t, const job_parameters& job) const {
    return job.weight * alpha * (1.0 - alpha) * std::pow(t, alpha - 2.0);
  }
  /// argmax over [lo, hi] of w t^alpha - mu t^2 / 2 - slope t.
  POPALLOC_HD double maximize(double slope, double mu, double lo, double hi,
                              const job_parameters& job) const {
    if (mu == 0.0) {
      if (slope <= 0.0) return hi;
      const double t = std::pow(slope / (job.weight * alpha), 1.0 / (alpha - 1.0));
      return t < lo ? lo : (t > hi ? hi : t);
    }
    // The derivative is decreasing: bisect its sign change (only used with smoothing on).
    auto derivative = [&](double t) { return marginal(t, job) - mu * t - slope; };
    if (derivative(hi) >= 0.0) return hi;
    if (lo > 0.0 && derivative(lo) <= 0.0) return lo;
    double a = lo, b = hi;
    for (int k = 0; k < 100 && b - a > 1e-15 * b; ++k) {
      const double mid = 0.5 * (a + b);
      (derivative(mid) > 0.0 ? a : b) = mid;
    }
    return 0.5 * (a + b);
  }
};

}  // namespace popalloc::utility
