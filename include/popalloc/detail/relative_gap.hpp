// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The relative duality gap that every solve reports and stops on, and its scale.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "popalloc/options.hpp"

namespace popalloc::detail {

/// Under gap_measure::objective a scale below this fraction of the anchor is raised to it: an
/// optimum at 0 (every target met) would otherwise need a gap of exactly 0.
constexpr double objective_scale_floor = 1e-6;

/// The objective's references that give a gap its scale, from one pass over the jobs.
struct gap_references {
  /// sum_i f_i(0), the objective of leaving every job idle; -inf for log utilities.
  double idle = 0.0;
  /// sum_i t_i f_i'(t_i) at the equal share over the jobs with f_i(0) = -inf (log: sum_i w_i).
  double elasticity = 0.0;
};

/// A relative gap with the denominator it was measured against.
struct measured_gap {
  double relative = 0.0;
  double scale = 0.0;
  const char* scale_name = "objective";
  gap_measure measure = gap_measure::objective;
};

/// The measure gap_measure::automatic stands for: anchored where f_i(0) = -inf (log: its
/// objective has no natural zero, a change of throughput unit by c adds log(c) sum_i w_i to it),
/// objective otherwise.
inline gap_measure resolve_gap_measure(gap_measure requested, const gap_references& refs) {
  if (requested != gap_measure::automatic) return requested;
  return std::isfinite(refs.idle) ? gap_measure::objective : gap_measure::anchored;
}

/// (dual - primal) / scale, 0 when the gap is not positive. The anchor is dual - idle (the
/// range of objectives above leaving every job idle: the weighted target sum for target
/// priority) when idle is finite, else the elasticity (a gap of r times the weight sum is a
/// factor e^r in the weighted geometric mean throughput, whatever the unit).
/// - objective: scale = max(|dual|, |primal|, 1e-6 anchor);
/// - anchored:  scale = max(|dual|, |primal|, anchor).
inline measured_gap measure_gap(double dual, double primal, gap_measure requested,
                                const gap_references& refs) {
  measured_gap out;
  out.measure = resolve_gap_measure(requested, refs);
  const bool idle_finite = std::isfinite(refs.idle);
  double anchor = idle_finite ? std::abs(dual - refs.idle) : std::abs(refs.elasticity);
  if (!std::isfinite(anchor)) anchor = 0.0;
  const bool anchored = out.measure == gap_measure::anchored;
  if (!anchored) anchor *= objective_scale_floor;
  out.scale = std::max(std::abs(dual), std::abs(primal));
  if (anchor > out.scale) {
    out.scale = anchor;
    if (idle_finite) {
      out.scale_name = anchored ? "idle range" : "1e-6 x idle range";
    } else {
      out.scale_name = anchored ? "elasticity" : "1e-6 x elasticity";
    }
  }
  const double gap = dual - primal;
  if (!(gap > 0.0)) return out;
  out.relative = out.scale > 0.0 ? gap / out.scale : std::numeric_limits<double>::infinity();
  return out;
}

/// The stopping test of every solve: the absolute gap `absolute` (dual - primal) or the relative
/// one within the options' tolerance.
inline bool within_tolerance(double absolute, const measured_gap& gap,
                             const solver_options& options) {
  return absolute <= options.absolute_gap || gap.relative <= options.relative_gap;
}

/// The largest gap (dual - primal) that within_tolerance accepts at the scale of `gap`.
inline double allowed_gap(const measured_gap& gap, const solver_options& options) {
  return std::max(options.absolute_gap, options.relative_gap * gap.scale);
}

}  // namespace popalloc::detail
