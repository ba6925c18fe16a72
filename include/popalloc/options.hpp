// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Solver options and their validation.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <Eigen/Core>

#include "popalloc/error.hpp"
#include "popalloc/value_range.hpp"

namespace popalloc {

/// \brief What a relative duality gap is measured against (solve_result::gap_scale_name says
/// which scale a result used). The anchor is dual bound - sum_i f_i(0), the range of objectives
/// above leaving every job idle (for target priority: the weighted target sum minus |bound|),
/// or, where f_i(0) = -inf (log), sum_i t_i f_i'(t_i) (log: the sum of the weights).
/// docs/method.md, "Certificate".
enum class gap_measure : std::uint8_t {
  /// anchored for utilities with f(0) = -inf (log), objective for every other utility.
  automatic = 0,
  /// The standard (bound - objective) / max(|objective|, |bound|), the scale raised to 1e-6 x
  /// the anchor where both are smaller (an optimum of exactly 0 would otherwise never close).
  objective = 1,
  /// (bound - objective) / max(|objective|, |bound|, anchor).
  anchored = 2,
};

/// \brief Stable lower-case name of a gap measure: "automatic", "objective" or "anchored".
inline const char* to_string(gap_measure measure) noexcept {
  switch (measure) {
    case gap_measure::automatic:
      return "automatic";
    case gap_measure::objective:
      return "objective";
    case gap_measure::anchored:
      return "anchored";
  }
  return "unknown";
}

/// \brief Options of the price-discovery dual solver. Field names are stable (usable as keys).
struct solver_options {
  /// Stop when (dual bound - primal objective) <= relative_gap * the scale of `gap` (see
  /// solve_result::relative_gap and gap_scale).
  double relative_gap = 1e-4;
  /// What relative_gap is measured against.
  gap_measure gap = gap_measure::automatic;
  /// Also stop when (dual bound - primal objective) <= absolute_gap (0 disables).
  double absolute_gap = 0.0;
  /// Maximum number of dual evaluations (passes over all jobs).
  int max_iterations = 500;
  /// Wall-clock limit for the solve, in seconds.
  double time_limit_seconds = std::numeric_limits<double>::infinity();
  /// OpenMP threads for the CPU backend; 0 uses the OpenMP default.
  int threads = 0;
  /// Prices to start from (one per resource, >= 0), e.g. the prices of the previous round.
  /// Empty: the solver picks marginal values at an equal-share allocation.
  Eigen::VectorXd warm_start_prices;
  /// Call the progress callback every this many dual evaluations.
  int callback_every = 1;
  /// Dense problems with at least 8,192 jobs and no warm_start_prices: start from the prices of
  /// a solve of every s-th job (capacities scaled alike; s <= 50, at least 1,024 sampled jobs,
  /// and 128 per resource for strictly concave utilities) instead of the equal-share estimate.
  /// Only the starting point changes (docs/method.md "Sample start").
  bool sample_start = true;
  /// Where the bound is g(0), let the repair top up jobs the scaling of over-used resources
  /// took throughput from, on resources with capacity left, when that ends the solve
  /// (docs/method.md "Certificate"). The objective then meets the tolerance, but the remaining
  /// shortfall rests on the jobs that could not be topped up instead of being spread over the
  /// jobs in proportion to their use of the scarce resources: callers that read each job's share
  /// (a feasibility probe judged by its worst job) turn this off.
  bool topups = true;
  /// A dense problem with at most 256 options (plus one per job whose piecewise-linear utility
  /// has a kink) whose price iterations end stalled, at the iteration limit or in a numerical
  /// error is finished by an interior-point (barrier) method on its exact formulation; the
  /// better of the two certificates is kept (docs/method.md "Interior-point finish").
  bool interior_point_finish = true;
  /// Lengthen the Newton steps where the smoothed dual is nearly linear along them, up to
  /// 1,024-fold (docs/method.md "Step expansion"). It cuts the evaluations of bundle problems
  /// barely over capacity several-fold (the traffic-engineering bisection's probes, which turn it
  /// on); on the dense instance families it changes little, and it changes where the iterates
  /// of precision-bound solves end, so it is off by default.
  bool expand_steps = false;

  /// \brief Calls f(name, value) for every field, in declaration order. Code that must see every
  /// option (the MPI backend's check that all ranks pass the same ones) walks this list, so a
  /// new field is added here, beside its declaration.
  template <class F>
  void for_each_field(F&& f) const {
    f("relative_gap", relative_gap);
    f("gap", gap);
    f("absolute_gap", absolute_gap);
    f("max_iterations", max_iterations);
    f("time_limit_seconds", time_limit_seconds);
    f("threads", threads);
    f("warm_start_prices", warm_start_prices);
    f("callback_every", callback_every);
    f("sample_start", sample_start);
    f("topups", topups);
    f("interior_point_finish", interior_point_finish);
    f("expand_steps", expand_steps);
  }

  /// \brief Throws invalid_options when a field is out of range.
  void validate() const {
    if (!(relative_gap >= 0.0) || !std::isfinite(relative_gap))
      throw invalid_options("relative_gap must be a finite number >= 0");
    if (!(absolute_gap >= 0.0) || !std::isfinite(absolute_gap))
      throw invalid_options("absolute_gap must be a finite number >= 0");
    if (relative_gap == 0.0 && absolute_gap == 0.0)
      throw invalid_options("relative_gap and absolute_gap cannot both be 0");
    if (gap != gap_measure::automatic && gap != gap_measure::objective &&
        gap != gap_measure::anchored)
      throw invalid_options("gap must be gap_measure::automatic, objective or anchored");
    if (max_iterations < 1) throw invalid_options("max_iterations must be >= 1");
    if (!(time_limit_seconds > 0.0))
      throw invalid_options("time_limit_seconds must be > 0 (use infinity for no limit)");
    if (threads < 0) throw invalid_options("threads must be >= 0 (0 = OpenMP default)");
    if (callback_every < 1) throw invalid_options("callback_every must be >= 1");
    for (Eigen::Index j = 0; j < warm_start_prices.size(); ++j) {
      const double p = warm_start_prices[j];
      // Above the data's range a price overflows the per-job costs (1e308 left the solve
      // stalled at a wrong objective); tiny prices are harmless (a bisection's warm starts).
      if (!std::isfinite(p) || p < 0.0 || p > value_max)
        throw invalid_options("warm_start_prices[" + std::to_string(j) +
                              "] must be finite, >= 0 and at most 1e60");
    }
  }
};

}  // namespace popalloc
