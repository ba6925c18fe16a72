// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The range of data magnitudes popalloc accepts.
#pragma once

#include <cmath>

namespace popalloc {

/// \brief Largest magnitude of a throughput, capacity, demand, weight or target.
///
/// Prices are ratios of throughputs and weights to demands, and the dual bound multiplies them
/// by capacities; with every input within [value_min, value_max] those products stay many orders
/// of magnitude away from overflow and underflow, so the certificate keeps its meaning. Data
/// outside the range is rejected (invalid_problem) instead of being solved to a wrong answer.
/// Rescale the units (steps/s -> Msteps/s) to bring such data into range.
inline constexpr double value_max = 1e60;
/// \brief Smallest nonzero magnitude of a throughput, capacity, demand or weight (0 is allowed).
inline constexpr double value_min = 1e-60;

namespace detail {

/// True for 0 and for finite values with value_min <= |v| <= value_max.
inline bool in_value_range(double v) {
  const double magnitude = std::abs(v);
  return std::isfinite(v) &&
         (magnitude == 0.0 || (magnitude >= value_min && magnitude <= value_max));
}

/// 1 unless v is 0 or within [value_min, value_max] (so 1 for negatives and NaN), as a double:
/// the branch-free form GCC vectorises in sweeps that count invalid entries.
inline double invalid_nonnegative(double v) {
  return (v == 0.0) | ((v >= value_min) & (v <= value_max)) ? 0.0 : 1.0;
}

/// The range as written in error messages.
inline const char* value_range_text() { return "0 or within [1e-60, 1e60] in magnitude"; }
/// The range of a quantity that must be positive, as written in error messages.
inline const char* positive_value_range_text() { return "within [1e-60, 1e60]"; }

}  // namespace detail
}  // namespace popalloc
