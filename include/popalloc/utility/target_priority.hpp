// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Target-priority utility f(t) = w min(t - T, 0): reach the target T, nothing beyond.
#pragma once

#include <cmath>

#include "popalloc/config.hpp"
#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::utility {

/// \brief f(t) = w min(t - T, 0), so the objective is <= 0 and equals 0 when every job meets
/// its target. Piecewise linear: the solver smooths it.
struct target_priority {
  static constexpr bool piecewise_linear = true;
  static constexpr bool uses_target = true;
  static constexpr bool requires_positive_weight = false;
  static constexpr bool requires_positive_throughput = false;

  POPALLOC_HD double value(double t, const job_parameters& job) const {
    return t < job.target ? job.weight * (t - job.target) : 0.0;
  }
  POPALLOC_HD double marginal(double t, const job_parameters& job) const {
    return t < job.target ? job.weight : 0.0;
  }
  /// Throughput beyond which f is flat: the target.
  POPALLOC_HD double saturation(const job_parameters& job) const { return job.target; }
  /// Zero on both linear pieces, infinite at the kink t == T (locally the optimum does not move).
  POPALLOC_HD double curvature(double t, const job_parameters& job) const {
    return t == job.target ? HUGE_VAL : 0.0;
  }
  /// argmax over [lo, hi] of w min(t - T, 0) - mu t^2 / 2 - slope t (slope >= 0, mu >= 0).
  POPALLOC_HD double maximize(double slope, double mu, double lo, double hi,
                              const job_parameters& job) const {
    if (lo >= job.target) return lo;  // beyond the target the objective only decreases
    double t;
    if (mu > 0.0) {
      t = (job.weight - slope) / mu;
    } else {
      t = job.weight > slope ? job.target : lo;
    }
    if (t > job.target) t = job.target;
    return t < lo ? lo : (t > hi ? hi : t);
  }
};

}  // namespace popalloc::utility
