// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Linear utility with a soft floor: f(t) = w t - M max(T - t, 0).
#pragma once

#include <cmath>

#include "popalloc/config.hpp"
#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::utility {

/// \brief f(t) = w t - M max(T - t, 0): weighted throughput, with every unit of throughput below
/// the job's floor T (its `target`) costing the penalty M on top. Slope w + M below T, w above.
///
/// This is the exact-penalty form of "maximise sum_i w_i t_i subject to t_i >= T_i": when the
/// floors can be met and M exceeds every floor's Lagrange multiplier, the maximisers of both
/// problems coincide (check t_i >= T_i on the result; if a floor is missed, either the floors
/// cannot all be met or M is too small, which a larger M tells apart). A target <= 0 means no
/// floor. Piecewise linear: the solver smooths it.
struct linear_with_floor {
  static constexpr bool piecewise_linear = true;
  static constexpr bool uses_target = true;
  static constexpr bool requires_positive_weight = false;
  static constexpr bool requires_positive_throughput = false;

  double penalty = 1.0;  ///< M >= 0, the same for every job

  POPALLOC_HD double value(double t, const job_parameters& job) const {
    return job.weight * t - (t < job.target ? penalty * (job.target - t) : 0.0);
  }
  POPALLOC_HD double marginal(double t, const job_parameters& job) const {
    return t < job.target ? job.weight + penalty : job.weight;
  }
  /// Zero on both linear pieces, infinite at the kink t == T.
  POPALLOC_HD double curvature(double t, const job_parameters& job) const {
    return t == job.target && penalty > 0.0 ? HUGE_VAL : 0.0;
  }
  /// Where the slope drops from w + M to w: the floor, or none.
  POPALLOC_HD double saturation(const job_parameters& job) const {
    return job.target > 0.0 && penalty > 0.0 ? job.target : HUGE_VAL;
  }
  /// argmax over [lo, hi] of f(t) - mu t^2 / 2 - slope t; ties (mu == 0) go left.
  POPALLOC_HD double maximize(double slope, double mu, double lo, double hi,
                              const job_parameters& job) const {
    const double floor = job.target;
    const double below = job.weight + penalty - slope;  // right derivative of the line below T
    const double above = job.weight - slope;            // ... and above T
    double t;
    if (mu > 0.0) {
      t = below / mu;
      if (!(t < floor)) {
        t = above / mu;
        if (t < floor) t = floor;
      }
    } else if (above > 0.0) {
      t = hi;
    } else if (below > 0.0 && floor > lo) {
      t = floor;
    } else {
      t = lo;
    }
    return t < lo ? lo : (t > hi ? hi : t);
  }
};

}  // namespace popalloc::utility
