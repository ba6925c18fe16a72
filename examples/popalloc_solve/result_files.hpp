// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief RESULT.json and ALLOCATION.csv output, and warm-start prices read back from JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <Eigen/Core>

#include <popalloc/io/atomic_file.hpp>
#include <popalloc/result.hpp>

#include "instance.hpp"

namespace popalloc_solve {

/// \brief What RESULT.json records besides the solver's result.
struct run_summary {
  std::string utility_name;
  double solve_seconds = 0.0;  ///< wall time around popalloc::solve (no file reading)
  int pop_parts = 1;           ///< --pop K (1: the whole problem was solved at once)
  /// With --pop K > 1: the sum and the largest of the part solve times (the cost on one core and
  /// with one core per part), and the time spent evaluating the full problem's dual bound.
  double pop_parts_seconds_sum = 0.0, pop_parts_seconds_max = 0.0, pop_bound_seconds = 0.0;
  /// Under MPI: the jobs of all ranks (-1: those of `data`) and the number of ranks (0: no MPI).
  std::int64_t n_jobs = -1;
  int mpi_ranks = 0;
  /// The members RESULT.json opens with (popalloc_cli::append_envelope): schema and program
  /// versions, command line, inputs.
  std::string envelope;
};

/// \brief The summary line: status, objective, dual bound, the absolute gap and the relative
/// gap with its scale by name, iterations, seconds.
std::string summary_line(const popalloc::solve_result& result, const run_summary& summary);

/// \brief The --gap value: automatic, objective or anchored. \throws input_error otherwise.
popalloc::gap_measure parse_gap_measure(const std::string& text);

/// \brief The text of RESULT.json into `file` (not committed): the envelope, status, objective,
/// dual_bound, trivial_bound, absolute_gap, relative_gap, gap_measure, gap_scale, gap_scale_name,
/// iterations, seconds, n_jobs, n_resources, max_capacity_violation, pop_parts (with --pop K > 1
/// also pop_parts_seconds_sum, pop_parts_seconds_max, pop_bound_seconds; under MPI mpi_ranks),
/// utility and prices (resource name -> price); non-finite numbers become null. And the text of
/// ALLOCATION.csv: header id,resource,fraction and one row per positive x_ij. Committed together
/// by the caller, so that both outputs are published at once.
void fill_result_json(popalloc::io::atomic_output_file& file, const instance& data,
                      const popalloc::solve_result& result, const run_summary& summary);
void fill_allocation_csv(popalloc::io::atomic_output_file& file, const instance& data,
                         const popalloc::solve_result& result);

/// \brief Prices in the order of `resource_names`, from a JSON object mapping every resource
/// name to a price, or from a whole RESULT.json (its "prices" object).
/// \throws input_error "FILE:LINE: ..." for malformed JSON, unknown, repeated or missing
/// resources and prices that are not finite numbers >= 0.
Eigen::VectorXd read_warm_start_prices(const std::string& path,
                                       const std::vector<std::string>& resource_names);

}  // namespace popalloc_solve
