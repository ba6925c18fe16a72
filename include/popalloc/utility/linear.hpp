// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Linear utility f(t) = w t (total weighted throughput).
#pragma once

#include <cmath>

#include "popalloc/config.hpp"
#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::utility {

/// \brief f(t) = w t. The problem is a linear program; the solver smooths it (see docs/method.md).
struct linear {
  static constexpr bool piecewise_linear = true;
  static constexpr bool uses_target = false;
  static constexpr bool requires_positive_weight = false;
  static constexpr bool requires_positive_throughput = false;

  POPALLOC_HD double value(double t, const job_parameters& job) const { return job.weight * t; }
  POPALLOC_HD double marginal(double /*t*/, const job_parameters& job) const { return job.weight; }
  POPALLOC_HD double curvature(double /*t*/, const job_parameters& /*job*/) const { return 0.0; }
  /// Throughput beyond which f is flat: none.
  POPALLOC_HD double saturation(const job_parameters& /*job*/) const { return HUGE_VAL; }
  /// argmax over [lo, hi] of w t - mu t^2 / 2 - slope t; ties (slope == w, mu == 0) go left.
  POPALLOC_HD double maximize(double slope, double mu, double lo, double hi,
                              const job_parameters& job) const {
    if (mu > 0.0) {
      const double t = (job.weight - slope) / mu;
      return t < lo ? lo : (t > hi ? hi : t);
    }
    return job.weight > slope ? hi : lo;
  }
};

}  // namespace popalloc::utility
