// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The one LP every external solver of popalloc-compare receives: built once, in column
/// (CSC) form, from the same instance popalloc solves.
///
///   maximize   sum_i f_i(t_i),  t_i = sum_j A_ij x_ij
///   subject to sum_j x_ij <= 1                (job rows, i = 0..n-1)
///              sum_i d_ij x_ij <= R_j         (capacity rows, j = 0..m-1)
///              x >= 0
///
/// linear:          f_i(t) = w_i t                 objective w_i A_ij on x_ij
/// target-priority: f_i(t) = w_i min(t - T_i, 0)   epigraph column z_i <= 0 with the row
///                  z_i - w_i sum_j A_ij x_ij <= -w_i T_i, objective sum_i z_i
///
/// Entries with A_ij = 0 get no column: such an x_ij adds nothing to t_i and only uses capacity,
/// so dropping it cannot change the optimum (popalloc never uses them either).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <popalloc/dense_problem.hpp>

namespace popalloc_compare {

enum class lp_kind { linear, target_priority };

struct lp_model {
  lp_kind kind = lp_kind::linear;
  int rows = 0;
  int columns = 0;
  int x_columns = 0;  ///< columns 0..x_columns-1 are x_ij; the rest are z_i (target-priority)
  // Column-major matrix: column c has entries start[c] .. start[c+1]-1.
  std::vector<std::int64_t> start;
  std::vector<int> index;
  std::vector<double> value;
  // Bounds use +-infinity (each adapter translates); the objective is maximized.
  std::vector<double> column_lower, column_upper, objective, row_lower, row_upper;
  std::vector<std::int64_t> x_job;  ///< job of each x column
  std::vector<int> x_resource;      ///< resource of each x column

  std::int64_t nonzeros() const { return start.empty() ? 0 : start.back(); }
};

/// \brief Builds the LP of `problem` (throws popalloc::invalid_problem when it does not fit in
/// the int indices the LP libraries use).
lp_model build_lp(const popalloc::dense_problem<double>& problem, lp_kind kind);

/// \brief The true objective sum_i f_i(t_i) of a primal point given by its x columns, and its
/// largest constraint violation (negative x, job rows over 1, capacity rows over R_j), so every
/// solver is judged by the same arithmetic, not by its own objective report.
struct primal_check {
  double objective = 0.0;
  double max_violation = 0.0;
};
primal_check check_primal(const popalloc::dense_problem<double>& problem, lp_kind kind,
                          const lp_model& model, const double* column_values);

const char* to_string(lp_kind kind);

}  // namespace popalloc_compare
