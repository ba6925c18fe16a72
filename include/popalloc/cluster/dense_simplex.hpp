// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A small dense bounded-variable primal simplex for the class-level packed LPs
/// (tens of rows, about a thousand columns): maximise c.x s.t. A x <= b, lo <= x <= up, with
/// b >= 0 and lo = 0 at the start, so the slack basis is feasible and no phase 1 is needed.
///
/// The class LPs are this small because identical jobs are aggregated (combinations.hpp); at
/// that size a dense tableau is exact to rounding, and a price-discovery solve would add
/// nothing. Returns row duals, from which the caller certifies a bound.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "popalloc/error.hpp"

namespace popalloc::cluster {

/// \brief Outcome of dense_simplex::maximize.
enum class simplex_status { optimal, unbounded, iteration_limit };

/// \brief Tableau simplex over the columns of A followed by one slack per row.
class dense_simplex {
 public:
  /// \throws invalid_problem for mismatched sizes, b < 0, non-finite data or up < 0.
  dense_simplex(const Eigen::MatrixXd& a, const Eigen::VectorXd& b, const Eigen::VectorXd& up)
      : rows_(a.rows()), cols_(a.cols()) {
    if (b.size() != rows_ || up.size() != cols_)
      throw invalid_problem("dense_simplex: sizes do not match");
    if (!a.allFinite() || !b.allFinite() || (b.array() < 0.0).any() || (up.array() < 0.0).any() ||
        up.hasNaN())
      throw invalid_problem("dense_simplex: data must be finite, b >= 0 and up >= 0");
    tableau_.resize(rows_, cols_ + rows_);
    tableau_ << a, Eigen::MatrixXd::Identity(rows_, rows_);
    lo_ = Eigen::VectorXd::Zero(cols_ + rows_);
    up_.resize(cols_ + rows_);
    up_ << up, Eigen::VectorXd::Constant(rows_, std::numeric_limits<double>::infinity());
    x_ = Eigen::VectorXd::Zero(cols_ + rows_);
    x_.tail(rows_) = b;
    basis_.resize(static_cast<std::size_t>(rows_));
    is_basic_.assign(static_cast<std::size_t>(cols_ + rows_), -1);
    for (Eigen::Index r = 0; r < rows_; ++r) {
      basis_[static_cast<std::size_t>(r)] = cols_ + r;
      is_basic_[static_cast<std::size_t>(cols_ + r)] = static_cast<int>(r);
    }
  }

  /// \brief Raises the lower bound of column j to `lo` (<= its current value, so the point stays
  /// feasible). \throws invalid_problem otherwise.
  void set_lower(Eigen::Index j, double lo) {
    if (!(lo <= x_[j] + 1e-12 * std::max(1.0, std::abs(x_[j]))) || lo < 0.0)
      throw invalid_problem("dense_simplex: a lower bound above the current value");
    lo_[j] = std::min(lo, x_[j]);
  }

  /// \brief Raises the upper bound of column j to `up` (>= its current value, so the point stays
  /// feasible; +inf allowed). \throws invalid_problem otherwise.
  void set_upper(Eigen::Index j, double up) {
    if (!(up >= x_[j]) || std::isnan(up))
      throw invalid_problem("dense_simplex: an upper bound below the current value");
    up_[j] = up;
  }

  /// \brief Current value of column j (structural columns first, then the slacks).
  double value(Eigen::Index j) const { return x_[j]; }

  /// \brief Primal simplex from the current basis (Dantzig pricing; Bland's rule after a run of
  /// degenerate pivots, so it cannot cycle).
  simplex_status maximize(const Eigen::VectorXd& c, int max_pivots = 100000) {
    cost_ = Eigen::VectorXd::Zero(cols_ + rows_);
    cost_.head(cols_) = c;
    int degenerate = 0;
    // The reduced costs are updated with every pivot (one row operation) and recomputed from
    // the tableau every 64 pivots, so rounding cannot accumulate.
    // Optimality is only declared on freshly recomputed reduced costs.
    Eigen::RowVectorXd& d = reduced_;
    int since_fresh = 64;
    for (int pivot = 0; pivot < max_pivots; ++pivot) {
      if (since_fresh >= 64) {
        d = reduced_costs().transpose();
        since_fresh = 0;
      }
      Eigen::Index enter = choose_entering(d, degenerate > 50);
      if (enter < 0 && since_fresh > 0) {
        d = reduced_costs().transpose();
        since_fresh = 0;
        enter = choose_entering(d, degenerate > 50);
      }
      if (enter < 0) return simplex_status::optimal;
      ++since_fresh;
      const double dir = d[enter] > 0.0 ? 1.0 : -1.0;
      Eigen::Index leave_row = -1;
      const double step = ratio_test(enter, dir, leave_row);
      if (!std::isfinite(step)) return simplex_status::unbounded;
      degenerate = step <= 1e-12 ? degenerate + 1 : 0;
      x_[enter] += dir * step;
      for (Eigen::Index r = 0; r < rows_; ++r)
        x_[basis_[static_cast<std::size_t>(r)]] -= dir * step * tableau_(r, enter);
      if (leave_row >= 0) pivot_on(leave_row, enter);
    }
    return simplex_status::iteration_limit;
  }

  /// \brief Values of the structural columns.
  Eigen::VectorXd solution() const { return x_.head(cols_); }
  /// \brief y = c_B B^-1 per row (>= 0 at an optimum of a maximisation with <= rows).
  Eigen::VectorXd duals() const {
    Eigen::VectorXd y(rows_);
    for (Eigen::Index r = 0; r < rows_; ++r) {
      double v = 0.0;
      for (Eigen::Index k = 0; k < rows_; ++k)
        v += cost_[basis_[static_cast<std::size_t>(k)]] * tableau_(k, cols_ + r);
      y[r] = v;
    }
    return y;
  }

 private:
  Eigen::VectorXd reduced_costs() const {
    Eigen::VectorXd cb(rows_);
    for (Eigen::Index r = 0; r < rows_; ++r) cb[r] = cost_[basis_[static_cast<std::size_t>(r)]];
    return cost_ - (cb.transpose() * tableau_).transpose();
  }

  // A nonbasic column that improves: below its upper bound with d > 0, or above its lower
  // bound with d < 0. Bland: the lowest index; Dantzig: the largest |d|.
  Eigen::Index choose_entering(const Eigen::RowVectorXd& d, bool bland) const {
    constexpr double eps = 1e-11;
    Eigen::Index best = -1;
    double best_value = 0.0;
    for (Eigen::Index j = 0; j < cols_ + rows_; ++j) {
      if (is_basic_[static_cast<std::size_t>(j)] >= 0) continue;
      const bool up = d[j] > eps && x_[j] < up_[j];
      const bool down = d[j] < -eps && x_[j] > lo_[j];
      if (!up && !down) continue;
      if (bland) return j;
      if (std::abs(d[j]) > best_value) {
        best_value = std::abs(d[j]);
        best = j;
      }
    }
    return best;
  }

  // Largest step of column `enter` in direction `dir` keeping every basic variable in bounds;
  // leave_row = -1 when the entering column reaches its own other bound first.
  double ratio_test(Eigen::Index enter, double dir, Eigen::Index& leave_row) const {
    constexpr double pivot_eps = 1e-9;
    double step = dir > 0.0 ? up_[enter] - x_[enter] : x_[enter] - lo_[enter];
    leave_row = -1;
    double best_pivot = 0.0;
    for (Eigen::Index r = 0; r < rows_; ++r) {
      const double alpha = dir * tableau_(r, enter);  // the basic variable moves by -alpha t
      if (std::abs(alpha) <= pivot_eps) continue;
      const Eigen::Index j = basis_[static_cast<std::size_t>(r)];
      const double room = alpha > 0.0 ? x_[j] - lo_[j] : up_[j] - x_[j];
      const double t = std::max(room, 0.0) / std::abs(alpha);
      if (t < step - 1e-12 || (t <= step + 1e-12 && std::abs(alpha) > best_pivot)) {
        step = std::min(step, t);
        leave_row = r;
        best_pivot = std::abs(alpha);
      }
    }
    return step;
  }

  void pivot_on(Eigen::Index r, Eigen::Index enter) {
    const Eigen::Index leave = basis_[static_cast<std::size_t>(r)];
    tableau_.row(r) /= tableau_(r, enter);
    Eigen::VectorXd factor = tableau_.col(enter);
    factor[r] = 0.0;
    const Eigen::RowVectorXd pivot_row = tableau_.row(r);
    tableau_.noalias() -= factor * pivot_row;
    if (reduced_.size() == pivot_row.size()) {
      const double d_enter = reduced_[enter];
      reduced_ -= d_enter * pivot_row;
    }
    // The leaving variable sits at the bound it reached.
    const double mid = 0.5 * (lo_[leave] + std::min(up_[leave], lo_[leave] + 1e300));
    x_[leave] = x_[leave] <= mid ? lo_[leave] : up_[leave];
    is_basic_[static_cast<std::size_t>(leave)] = -1;
    is_basic_[static_cast<std::size_t>(enter)] = static_cast<int>(r);
    basis_[static_cast<std::size_t>(r)] = enter;
  }

  Eigen::Index rows_, cols_;
  // Row-major: a pivot updates whole rows.
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> tableau_;
  Eigen::VectorXd lo_, up_, x_, cost_;
  Eigen::RowVectorXd reduced_;  ///< cost_ - c_B B^-1 A during maximize()
  std::vector<Eigen::Index> basis_;
  std::vector<int> is_basic_;
};

}  // namespace popalloc::cluster
