// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The relative duality gap that every solve reports and stops on.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace popalloc::detail {

/// (dual - primal) / scale, where the scale is the largest of |dual|, |primal| and
/// - dual - idle, when leaving every job idle has a finite objective `idle` = sum_i f_i(0):
///   target-priority optima are near 0, and a gap relative to the objective would never close;
/// - `elasticity` = sum_i t_i f_i'(t_i) otherwise (log: the sum of the weights): a log
///   objective has no natural zero (changing the throughput unit by c adds log(c) sum_i w_i to
///   it), so its size says nothing about precision; a gap of r times the weight sum is a factor
///   e^r in the weighted geometric mean throughput, whatever the unit.
/// 0 when the gap is not positive.
inline double relative_gap(double dual, double primal, double idle, double elasticity) {
  const double gap = dual - primal;
  if (!(gap > 0.0)) return 0.0;
  double scale = std::max(std::abs(dual), std::abs(primal));
  if (std::isfinite(idle)) {
    scale = std::max(scale, std::abs(dual - idle));
  } else if (std::isfinite(elasticity)) {
    scale = std::max(scale, std::abs(elasticity));
  }
  return scale > 0.0 ? gap / scale : std::numeric_limits<double>::infinity();
}

}  // namespace popalloc::detail
