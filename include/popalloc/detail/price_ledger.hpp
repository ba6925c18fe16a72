// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Sums over the jobs of the last answer that have not changed since, kept while jobs
/// arrive, leave and change, so that a re-plan does not visit the jobs it keeps.
///
/// The dual function is a sum over the jobs, g(p) = sum_i h_i(p) + p . R, with h_i(p) the best
/// value job i can get at prices p. After a solve whose bound was g(p), the sum over the jobs
/// that do not change is the last bound less p . R less the terms of the jobs that left or
/// changed, each taken out (price_ledger::retire) before its data changes. The kept rows'
/// objective and usage are kept the same way. When the last bound was g(0), the trivial bound
/// (every job got what it could get with unlimited capacities), the ledger is kept at prices 0.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "popalloc/detail/best_response.hpp"
#include "popalloc/detail/carried_allocation.hpp"
#include "popalloc/detail/dense_view.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"

namespace popalloc::detail {

/// Sums over the jobs of the last answer that have not changed since, at that answer's prices.
struct price_ledger {
  bool active = false;
  /// The last bound was g(0) (carries_over): the prices are 0 and dual_terms is the trivial
  /// bound. Such an answer's allocation is carried over (unlimited_carry.hpp), not re-priced.
  bool at_unlimited = false;
  Eigen::VectorXd prices;        ///< p: the last answer's prices, where its bound was g(p)
  Eigen::VectorXd final_prices;  ///< where the next warm solve starts (solve_result::final_prices)
  double smoothing = 0.0;        ///< the level the next warm solve starts at
  double start_gap = 0.0;        ///< the relative gap of the answer the sums are from
  double start_duality_gap = 0.0;     ///< its absolute gap
  double dual_terms = 0.0;            ///< sum_i h_i(p) over the kept jobs
  double unlimited_terms = 0.0;       ///< sum_i h_i(0) over the kept jobs (the trivial bound's)
  double objective = 0.0;             ///< sum_i f_i(t_i) over the kept jobs' rows
  Eigen::VectorXd usage;              ///< the kept jobs' rows' usage
  Eigen::VectorXd zero;               ///< prices 0, where h_i is the trivial bound's term
  std::vector<unsigned char> closed;  ///< resources of capacity 0 at p (their pattern is fixed)

  /// Starts from a converged answer whose bound is g(prices) below the trivial bound, or g(0);
  /// otherwise inactive.
  void open(const solve_result& r, const Eigen::VectorXd& capacity) {
    const Eigen::Index m = capacity.size();
    const bool finished = r.status == solve_status::converged && std::isfinite(r.dual_bound) &&
                          std::isfinite(r.primal_objective) && r.usage.size() == m;
    at_unlimited = finished && carries_over(r);
    active = at_unlimited || (finished && r.dual_bound < r.trivial_bound && r.prices.size() == m &&
                              r.prices.allFinite() && r.final_prices.size() == m);
    if (!active) return;
    zero = Eigen::VectorXd::Zero(m);
    prices = at_unlimited ? zero : r.prices;
    final_prices = r.final_prices;
    smoothing = r.smoothing;
    start_gap = std::isfinite(r.relative_gap) ? r.relative_gap : 0.0;
    start_duality_gap = std::isfinite(r.duality_gap) ? std::max(0.0, r.duality_gap) : 0.0;
    dual_terms = r.dual_bound - prices.dot(capacity);
    unlimited_terms = r.trivial_bound;
    objective = r.primal_objective;
    usage = r.usage;
    closed = closed_pattern(capacity);
  }

  static std::vector<unsigned char> closed_pattern(const Eigen::VectorXd& capacity) {
    std::vector<unsigned char> out(static_cast<std::size_t>(capacity.size()));
    for (Eigen::Index j = 0; j < capacity.size(); ++j)
      out[static_cast<std::size_t>(j)] = capacity[j] == 0 ? 1 : 0;
    return out;
  }

  /// Takes job i (row `from` of the last answer `last`, the one the ledger was opened with) out
  /// of the sums, before its data changes or it leaves. `view` reads the job's data as it was at
  /// the last answer.
  template <class Utility, class Scalar>
  void retire(const dense_view<Scalar>& view, std::int64_t i, std::int64_t from,
              const solve_result& last, const Utility& utility) {
    const allocation& rows = last.allocation;
    if (!active || from < 0 || static_cast<std::size_t>(from) >= rows.jobs()) return;
    const job_parameters job = view.parameters(i);
    const double unlimited = walk_hull(view, i, zero.data(), utility, job, 0.0, -1).excess;
    dual_terms -=
        at_unlimited ? unlimited : walk_hull(view, i, prices.data(), utility, job, 0.0, -1).excess;
    unlimited_terms -= unlimited;
    objective -= utility.value(last.throughput[from], job);
    const auto row = static_cast<std::size_t>(from);
    for (auto k = rows.job_offset[row]; k < rows.job_offset[row + 1]; ++k) {
      const std::int32_t j = rows.option[static_cast<std::size_t>(k)];
      usage[j] -= view.amount(i, j) * rows.fraction[static_cast<std::size_t>(k)];
    }
  }
};

}  // namespace popalloc::detail
