// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The dense problem: n jobs x m resource types given by a throughput matrix.
#pragma once

#include <cmath>
#include <string>

#include <Eigen/Core>

#include "popalloc/config.hpp"
#include "popalloc/error.hpp"
#include "popalloc/utility/concept.hpp"
#include "popalloc/value_range.hpp"

namespace popalloc {

/// \brief maximize sum_i f_i(t_i), t_i = sum_j A_ij x_ij, over x_i >= 0, sum_j x_ij <= 1,
/// sum_i d_ij x_ij <= R_j.
///
/// Storage is row-major so one job's options are contiguous. `Scalar` (float or double) is the
/// storage type of the per-job data; all accumulation happens in double.
template <class Scalar = double>
struct dense_problem {
  using scalar_type = Scalar;
  using matrix = Eigen::Matrix<Scalar, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  using vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

  matrix throughput;         ///< A, n x m, A_ij >= 0 (0: job i cannot use resource j)
  Eigen::VectorXd capacity;  ///< R, m entries >= 0 (0 closes a resource)
  vector weight;             ///< w_i > 0 or >= 0 (utility-dependent); empty means all 1
  vector target;             ///< T_i, target-priority only; empty otherwise
  vector job_demand;         ///< d_i: units of any resource job i holds at once; empty means 1
  matrix demand;             ///< d_ij, n x m; empty means job_demand (or 1). Not with job_demand.

  Eigen::Index jobs() const { return throughput.rows(); }
  Eigen::Index resources() const { return throughput.cols(); }
  /// d_ij: the units of resource j that job i holds while it runs there.
  double amount(Eigen::Index i, Eigen::Index j) const {
    if (demand.size() != 0) return static_cast<double>(demand(i, j));
    if (job_demand.size() != 0) return static_cast<double>(job_demand[i]);
    return 1.0;
  }

  /// \brief Throws invalid_problem (naming the offending entry) unless the data is usable by
  /// `Utility`: check_shape() and check_entries().
  template <class Utility>
  void validate(const Utility& utility) const {
    check_shape(utility);
    check_entries(utility);
  }

  /// \brief validate() but for the entries of `throughput` and `demand`: sizes, capacities and
  /// the per-job vectors (popalloc::solve checks the matrices' entries in the pass that also
  /// measures the problem's scale).
  template <class Utility>
  void check_shape(const Utility& /*utility*/) const {
    detail::check_utility<Utility>();
    const Eigen::Index n = jobs(), m = resources();
    if (n == 0) throw invalid_problem("problem has no jobs");
    if (m == 0) throw invalid_problem("problem has no resources");
    if (capacity.size() != m)
      throw invalid_problem("capacity has " + std::to_string(capacity.size()) +
                            " entries but the throughput matrix has " + std::to_string(m) +
                            " columns");
    for (Eigen::Index j = 0; j < m; ++j) {
      if (!detail::in_value_range(capacity[j]) || capacity[j] < 0)
        throw invalid_problem("capacity[" + std::to_string(j) + "] must be >= 0 and " +
                              detail::value_range_text());
    }
    check_vector(weight, "weight", Utility::requires_positive_weight);
    if (Utility::uses_target) {
      if (target.size() != n)
        throw invalid_problem("this utility needs a target for every job (" + std::to_string(n) +
                              " entries, got " + std::to_string(target.size()) + ")");
      for (Eigen::Index i = 0; i < n; ++i)
        if (!(std::abs(static_cast<double>(target[i])) <= value_max))
          throw invalid_problem("target[" + std::to_string(i) +
                                "] must be finite and within [-1e60, 1e60]");
    } else if (target.size() != 0 && target.size() != n) {
      throw invalid_problem("target must be empty or have one entry per job");
    }
    check_vector(job_demand, "job_demand", false);
    if (demand.size() != 0) {
      if (job_demand.size() != 0)
        throw invalid_problem("give either demand (n x m) or job_demand (n), not both");
      if (demand.rows() != n || demand.cols() != m)
        throw invalid_problem("demand must be " + std::to_string(n) + " x " + std::to_string(m));
    }
  }

  /// \brief The entries of `throughput` and `demand` (check_shape() first): each 0 or within the
  /// value range, and for utilities that need it, a positive throughput on an open resource for
  /// every job. Throws invalid_problem naming the first offending entry.
  template <class Utility>
  void check_entries(const Utility& /*utility*/) const {
    const Eigen::Index n = jobs(), m = resources();
    // A branch-free parallel sweep accepts valid data at a fraction of the cost of the
    // sequential scan below, which runs only to name the first offending entry.
    if (entries_valid(throughput, Utility::requires_positive_throughput) &&
        (demand.size() == 0 || entries_valid(demand, false)))
      return;
    for (Eigen::Index i = 0; i < n; ++i) {
      double row_max = 0.0;
      for (Eigen::Index j = 0; j < m; ++j) {
        const double a = static_cast<double>(throughput(i, j));
        if (!detail::in_value_range(a) || a < 0)
          throw invalid_problem("throughput(" + std::to_string(i) + ", " + std::to_string(j) +
                                ") must be >= 0 and " + detail::value_range_text());
        if (demand.size() != 0) {
          const double d = static_cast<double>(demand(i, j));
          if (!detail::in_value_range(d) || d < 0)
            throw invalid_problem("demand(" + std::to_string(i) + ", " + std::to_string(j) +
                                  ") must be >= 0 and " + detail::value_range_text());
        }
        if (capacity[j] > 0 && a > row_max) row_max = a;
      }
      if (Utility::requires_positive_throughput && !(row_max > 0))
        throw invalid_problem("job " + std::to_string(i) +
                              " has no positive throughput on an open resource, so its utility "
                              "is -infinity for every allocation");
    }
  }

 private:
  /// Every entry 0 or within the value range (false for NaN); with `need_open_option`, also
  /// every job has a positive entry on a resource of positive capacity. In parallel: the sweep
  /// is bound by memory bandwidth, which one core does not saturate.
  bool entries_valid(const matrix& values, bool need_open_option) const {
    const Eigen::Index n = values.rows(), m = values.cols();
    const Scalar* data = values.data();
    const Eigen::Index total = n * m;
    // A flat sweep counting bad entries in a double: the form GCC vectorises (an int flag
    // built from double comparisons stays scalar, 3x slower).
    double bad = 0.0;
    POPALLOC_PRAGMA_OMP(omp parallel for reduction(+ : bad) if (total > 65536))
    for (Eigen::Index k = 0; k < total; ++k) {
      const double v = static_cast<double>(data[k]);
      bad += detail::invalid_nonnegative(v);
    }
    if (bad != 0.0 || !need_open_option) return bad == 0.0;
    int closed_rows = 0;
    POPALLOC_PRAGMA_OMP(omp parallel for reduction(| : closed_rows) if (total > 65536))
    for (Eigen::Index i = 0; i < n; ++i) {
      int open = 0;
      for (Eigen::Index j = 0; j < m; ++j)
        open |= static_cast<int>(values(i, j) > 0 && capacity[j] > 0.0);
      closed_rows |= static_cast<int>(!open);
    }
    return closed_rows == 0;
  }

  void check_vector(const vector& v, const char* name, bool positive) const {
    const Eigen::Index n = jobs();
    if (v.size() == 0) return;
    if (v.size() != n)
      throw invalid_problem(std::string(name) + " has " + std::to_string(v.size()) +
                            " entries, expected " + std::to_string(n) + " (one per job) or 0");
    for (Eigen::Index i = 0; i < n; ++i) {
      const double x = static_cast<double>(v[i]);
      if (!detail::in_value_range(x) || x < 0 || (positive && x == 0))
        throw invalid_problem(std::string(name) + "[" + std::to_string(i) + "] must be " +
                              (positive ? "> 0" : ">= 0") + " and " + detail::value_range_text());
    }
  }
};

}  // namespace popalloc
