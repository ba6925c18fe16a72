// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief What a solve returns: status, certificate, prices and the allocation.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include "popalloc/detail/uninitialized_allocator.hpp"
#include "popalloc/options.hpp"
#include "popalloc/status.hpp"

namespace popalloc {

/// \brief The allocation in compressed rows: job i's nonzero fractions are entries
/// job_offset[i] .. job_offset[i+1]-1 of `option` and `fraction`. An option is indexed within its
/// job (for dense problems: the resource index), in increasing order. Most jobs use one or two
/// options; a job indifferent between several (a tie the smoothing splits, or time to spare
/// once its target is met) may use more.
/// Its arrays are std::vectors whose resize() leaves new elements uninitialised, so that the
/// solver writes millions of entries once, in parallel, instead of one thread zeroing them
/// first; copy one into a plain std::vector by its iterators.
struct allocation {
  template <class T>
  using array = std::vector<T, detail::uninitialized_allocator<T>>;

  array<std::int64_t> job_offset{0};
  array<std::int32_t> option;
  array<double> fraction;

  std::size_t jobs() const { return job_offset.size() - 1; }
};

/// \brief Wall-clock timings of a solve, in seconds.
struct solve_timings {
  double setup_seconds = 0.0;     ///< validation, data layout, initial prices
  double solve_seconds = 0.0;     ///< price iterations and primal recovery
  double evaluate_seconds = 0.0;  ///< part of solve_seconds spent in dual evaluations
  /// Spent solving the sample: part of setup_seconds, except the sample's continuation after a
  /// probe that fell short (docs/method.md "Sample start"), which is part of solve_seconds.
  double sample_seconds = 0.0;
};

/// \brief Result of a solve. Objective values are sums of f_i(t_i) (maximization).
struct solve_result {
  solve_status status = solve_status::not_solved;
  int iterations = 0;  ///< dual evaluations (passes over all jobs)
  /// Dual evaluations of the sample that chose the starting prices (solver_options::
  /// sample_start; each a pass over the sampled jobs only), 0 when none.
  int sample_iterations = 0;
  /// Newton steps of the interior-point finish (solver_options::interior_point_finish), 0 where
  /// it did not run.
  int interior_point_steps = 0;
  int smoothing_stages = 0;  ///< continuation stages used (0 for strictly concave utilities)
  double smoothing = 0.0;    ///< relative smoothing level at the end (docs/method.md)
  /// Utility of the returned allocation, which is always feasible.
  double primal_objective = std::numeric_limits<double>::quiet_NaN();
  /// An upper bound on the optimum: the lowest dual value g(p) seen, or trivial_bound when that
  /// is lower.
  double dual_bound = std::numeric_limits<double>::quiet_NaN();
  /// The objective with unlimited capacities, sum_i max_x f_i(t_i(x)) = g(0): no bound is
  /// reported above it (0 for target priority, sum_i w_i max_o a_io for linear).
  double trivial_bound = std::numeric_limits<double>::quiet_NaN();
  double duality_gap = std::numeric_limits<double>::quiet_NaN();  ///< dual_bound - primal
  /// duality_gap / gap_scale (0 when the gap is not positive).
  double relative_gap = std::numeric_limits<double>::quiet_NaN();
  /// The denominator of relative_gap under gap_measure (solver_options::gap, resolved):
  /// objective: max(|primal|, |dual|, 1e-6 anchor); anchored: max(|primal|, |dual|, anchor).
  double gap_scale = std::numeric_limits<double>::quiet_NaN();
  /// Which term gap_scale is: "objective", "idle range" (dual - sum_i f_i(0)), "elasticity"
  /// (sum_i t_i f_i'(t_i), log: the weight sum), or "1e-6 x idle range" / "1e-6 x elasticity"
  /// (the objective measure's floor). docs/method.md, "Certificate".
  const char* gap_scale_name = "objective";
  popalloc::gap_measure gap_measure = popalloc::gap_measure::objective;  ///< the measure used
  /// max_j max(0, usage_j - capacity_j) of the returned allocation (0 up to rounding).
  double max_capacity_violation = std::numeric_limits<double>::quiet_NaN();
  /// The evaluated prices with the lowest dual value g(p) (dual_bound = min(g(prices),
  /// trivial_bound)).
  Eigen::VectorXd prices;
  /// The prices of the last evaluation, at smoothing level `smoothing`: the estimate of the
  /// smoothed dual's minimiser, which can differ from `prices` (where the dual bound is g(0)
  /// the best evaluated prices may be 0 while the allocation needed positive ones). Empty in a
  /// merged POP result.
  Eigen::VectorXd final_prices;
  Eigen::VectorXd usage;            ///< resource usage of the returned allocation
  Eigen::VectorXd throughput;       ///< t_i of each job under the returned allocation
  popalloc::allocation allocation;  ///< nonzero time fractions, by job
  solve_timings timings;
};

/// \brief Snapshot passed to the progress callback after a dual evaluation.
struct progress {
  int iteration = 0;
  double elapsed_seconds = 0.0;
  double primal_objective = 0.0;  ///< best feasible objective so far (-inf if none yet)
  double dual_bound = 0.0;        ///< best dual bound so far
  double relative_gap = 0.0;
  double smoothing = 0.0;          ///< current relative smoothing parameter (0 = exact dual)
  const double* prices = nullptr;  ///< current prices (host memory, n_resources entries)
  Eigen::Index n_resources = 0;
};

/// \brief What the callback tells the solver.
enum class callback_action : std::uint8_t { proceed = 0, stop = 1 };

/// \brief Progress callback; returning callback_action::stop ends the solve with
/// solve_status::interrupted (the result still holds the best feasible allocation).
using progress_callback = std::function<callback_action(const progress&)>;

/// \brief The allocation of a dense problem as a sparse n x m matrix (row i = job i).
inline Eigen::SparseMatrix<double, Eigen::RowMajor> allocation_matrix(const solve_result& result,
                                                                      Eigen::Index n_options) {
  const auto& a = result.allocation;
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(a.option.size());
  for (std::size_t i = 0; i < a.jobs(); ++i)
    for (auto k = a.job_offset[i]; k < a.job_offset[i + 1]; ++k)
      entries.emplace_back(static_cast<Eigen::Index>(i), a.option[static_cast<std::size_t>(k)],
                           a.fraction[static_cast<std::size_t>(k)]);
  Eigen::SparseMatrix<double, Eigen::RowMajor> x(static_cast<Eigen::Index>(a.jobs()), n_options);
  x.setFromTriplets(entries.begin(), entries.end());
  return x;
}

}  // namespace popalloc
