// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A re-plan certified at the last solve's prices without a pass over the jobs that did
/// not change.
///
/// The dual function is a sum over the jobs, g(p) = sum_i h_i(p) + p . R, with h_i(p) the best
/// value job i can get at prices p. After a solve whose bound was g(p) at prices p, the sum over
/// the jobs that do not change is known without visiting them: the last bound less p . R less
/// the terms of the jobs that left or changed, each taken out (price_ledger::retire) before its
/// data changes. The jobs that arrived or changed add their terms at p and take their exact best
/// response there (at most two options each); the others keep their rows of the last allocation,
/// whose objective and usage are likewise kept as sums. g(p) of the changed problem is then an
/// exact dual bound, and the allocation a feasible one once the changed jobs give back what they
/// take beyond the capacities. When the two meet the tolerance the re-plan costs O(changed jobs)
/// hull walks and the copy of the result, instead of dual evaluations over every job; otherwise
/// the caller solves from these prices.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/detail/best_response.hpp"
#include "popalloc/detail/carried_allocation.hpp"
#include "popalloc/detail/dense_view.hpp"
#include "popalloc/detail/interior_point.hpp"
#include "popalloc/detail/relative_gap.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"
#include "popalloc/utility/log.hpp"

namespace popalloc::detail {

/// Sums over the jobs of the last answer that have not changed since, at that answer's prices.
struct price_ledger {
  bool active = false;
  Eigen::VectorXd prices;        ///< p: the last answer's prices, where its bound was g(p)
  Eigen::VectorXd final_prices;  ///< where the next warm solve starts (solve_result::final_prices)
  double smoothing = 0.0;        ///< the level the next warm solve starts at
  double start_gap = 0.0;        ///< the relative gap of the answer the sums are from
  double dual_terms = 0.0;       ///< sum_i h_i(p) over the kept jobs
  double unlimited_terms = 0.0;  ///< sum_i h_i(0) over the kept jobs (the trivial bound's)
  double objective = 0.0;        ///< sum_i f_i(t_i) over the kept jobs' rows
  Eigen::VectorXd usage;         ///< the kept jobs' rows' usage
  Eigen::VectorXd throughput;    ///< t_i by the job's row in the last answer
  std::vector<unsigned char> closed;  ///< resources of capacity 0 at p (their pattern is fixed)

  /// Starts from a converged answer whose bound is g(prices) below the trivial bound; otherwise
  /// inactive.
  void open(const solve_result& r, const Eigen::VectorXd& capacity) {
    active = r.status == solve_status::converged && r.dual_bound < r.trivial_bound &&
             std::isfinite(r.dual_bound) && std::isfinite(r.primal_objective) &&
             r.prices.size() == capacity.size() && r.prices.allFinite() &&
             r.usage.size() == capacity.size() && r.final_prices.size() == capacity.size();
    if (!active) return;
    prices = r.prices;
    final_prices = r.final_prices;
    smoothing = r.smoothing;
    start_gap = std::isfinite(r.relative_gap) ? r.relative_gap : 0.0;
    dual_terms = r.dual_bound - r.prices.dot(capacity);
    unlimited_terms = r.trivial_bound;
    objective = r.primal_objective;
    usage = r.usage;
    throughput = r.throughput;
    closed = closed_pattern(capacity);
  }

  static std::vector<unsigned char> closed_pattern(const Eigen::VectorXd& capacity) {
    std::vector<unsigned char> out(static_cast<std::size_t>(capacity.size()));
    for (Eigen::Index j = 0; j < capacity.size(); ++j)
      out[static_cast<std::size_t>(j)] = capacity[j] == 0 ? 1 : 0;
    return out;
  }

  /// Takes job i (row `from` of `last`) out of the sums, before its data changes or it leaves.
  /// `view` reads the job's data as it was at the last answer.
  template <class Utility, class Scalar>
  void retire(const dense_view<Scalar>& view, std::int64_t i, std::int64_t from,
              const allocation& last, const Utility& utility) {
    if (!active || from < 0 || static_cast<std::size_t>(from) >= last.jobs()) return;
    const job_parameters job = view.parameters(i);
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(prices.size());
    dual_terms -= walk_hull(view, i, prices.data(), utility, job, 0.0, -1).excess;
    unlimited_terms -= walk_hull(view, i, zero.data(), utility, job, 0.0, -1).excess;
    objective -= utility.value(throughput[from], job);
    const auto row = static_cast<std::size_t>(from);
    for (auto k = last.job_offset[row]; k < last.job_offset[row + 1]; ++k) {
      const std::int32_t j = last.option[static_cast<std::size_t>(k)];
      usage[j] -= view.amount(i, j) * last.fraction[static_cast<std::size_t>(k)];
    }
  }
};

/// The changed jobs' exact best responses at the ledger's prices, with their dual terms.
struct placed_responses {
  carried_rows rows;  ///< usage: every job's; throughput: the placed jobs' only
  double dual_terms = 0.0, unlimited_terms = 0.0;
};

template <class Utility, class Scalar>
placed_responses respond_at_prices(const dense_view<Scalar>& view, const Utility& utility,
                                   const price_ledger& ledger, std::size_t last_jobs,
                                   const std::vector<std::int64_t>& origin) {
  placed_responses out;
  carried_rows& rows = out.rows;
  rows.usage = ledger.usage;
  rows.throughput = Eigen::VectorXd::Zero(view.n);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(view.m);
  for (Eigen::Index i = 0; i < view.n; ++i) {
    const std::int64_t from = origin[static_cast<std::size_t>(i)];
    if (from >= 0 && static_cast<std::size_t>(from) < last_jobs) {
      rows.throughput[i] = ledger.throughput[from];
      continue;
    }
    const job_parameters job = view.parameters(i);
    const segment s = walk_hull(view, i, ledger.prices.data(), utility, job, 0.0, -1);
    out.dual_terms += s.excess;
    out.unlimited_terms += walk_hull(view, i, zero.data(), utility, job, 0.0, -1).excess;
    std::vector<std::pair<std::int32_t, double>> row;
    if (s.left >= 0 && s.theta < 1.0) row.emplace_back(s.left, 1.0 - s.theta);
    if (s.right >= 0 && s.theta > 0.0) row.emplace_back(s.right, s.theta);
    std::sort(row.begin(), row.end());
    double t = 0.0;
    for (const auto& [j, x] : row) {
      rows.usage[j] += view.amount(i, j) * x;
      t += x * view.value(i, j);
    }
    rows.throughput[i] = t;
    rows.to_place.push_back(i);
    rows.placed.push_back(std::move(row));
  }
  return out;
}

/// Gives placed job to_place[q] up to `free_time` more time on its fastest resources with room, up
/// to its throughput_goal, and sets its throughput: the time a job gave back on a full resource
/// (a log job cut to no throughput would lose all its utility), or that its best response left
/// idle at a kink of a piecewise-linear utility while capacity is left.
template <class Utility, class Scalar>
void refill_free_time(const dense_view<Scalar>& view, const Utility& utility, std::size_t q,
                      double free_time, const Eigen::VectorXd& room, carried_rows& rows) {
  const Eigen::Index i = rows.to_place[q];
  auto& row = rows.placed[q];
  double t = 0.0;
  for (const auto& [j, x] : row) t += x * view.value(i, j);
  double goal = fastest_open(view, i);
  if constexpr (Utility::piecewise_linear)
    goal = throughput_goal(utility, view.parameters(i), goal);
  rows.throughput[i] = t;
  if (!(free_time > 0.0) || !(t < goal)) return;
  std::vector<std::int32_t> order(static_cast<std::size_t>(view.m));
  std::iota(order.begin(), order.end(), std::int32_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return view.value(i, a) > view.value(i, b);
  });
  for (const std::int32_t j : order) {
    const double speed = view.value(i, j), d = view.amount(i, j);
    if (!(t < goal) || !(free_time > 0.0) || !(speed > 0.0)) break;
    double x = std::min(free_time, (goal - t) / speed);
    if (d > 0.0) x = std::min(x, (room[j] - rows.usage[j]) / d);
    if (!(x > 0.0)) continue;
    const auto at =
        std::find_if(row.begin(), row.end(), [&](const auto& e) { return e.first == j; });
    if (at != row.end()) {
      at->second += x;
    } else {
      row.emplace_back(j, x);
    }
    rows.usage[j] += d * x;
    t += x * speed;
    free_time -= x;
  }
  std::sort(row.begin(), row.end());
  rows.throughput[i] = t;
}

/// Where the usage exceeds (1 - margin) of a capacity, the placed jobs give back their share of
/// the excess on that resource (their fractions there scaled alike); false when the kept rows
/// alone exceed it. The placed jobs' free time then goes to their fastest resources with room
/// (refill_free_time).
template <class Utility, class Scalar>
bool fit_placed(const dense_view<Scalar>& view, const Utility& utility,
                const Eigen::VectorXd& capacity, double margin, carried_rows& rows) {
  const Eigen::Index m = capacity.size();
  Eigen::VectorXd placed_usage = Eigen::VectorXd::Zero(m);
  for (std::size_t q = 0; q < rows.to_place.size(); ++q)
    for (const auto& [j, x] : rows.placed[q])
      placed_usage[j] += view.amount(rows.to_place[q], j) * x;
  const Eigen::VectorXd room = capacity * (1.0 - margin);
  Eigen::VectorXd factor = Eigen::VectorXd::Ones(m);
  for (Eigen::Index j = 0; j < m; ++j) {
    if (!(rows.usage[j] > room[j])) continue;
    const double kept = rows.usage[j] - placed_usage[j];
    if (!(kept <= capacity[j])) return false;  // the capacity shrank under the kept rows
    // Kept rows within rounding of the room leave the placed jobs none of it.
    const double limit = kept <= room[j] ? room[j] : kept;
    factor[j] = placed_usage[j] > 0.0 ? (limit - kept) / placed_usage[j] : 1.0;
    rows.usage[j] = kept + factor[j] * placed_usage[j];
  }
  std::vector<double> free_time(rows.to_place.size(), 0.0);
  std::vector<std::size_t> cut, uncut;
  for (std::size_t q = 0; q < rows.to_place.size(); ++q) {
    auto& row = rows.placed[q];
    double busy = 0.0;
    bool was_cut = false;
    for (auto& [j, x] : row) {
      was_cut = was_cut || factor[j] < 1.0;
      x *= factor[j];
      busy += x;
    }
    row.erase(
        std::remove_if(row.begin(), row.end(), [](const auto& e) { return !(e.second > 0.0); }),
        row.end());
    free_time[q] = 1.0 - busy;
    (was_cut ? cut : uncut).push_back(q);
  }
  // The jobs that were cut first: they may have lost all their throughput.
  for (const std::size_t q : cut) refill_free_time(view, utility, q, free_time[q], room, rows);
  for (const std::size_t q : uncut) refill_free_time(view, utility, q, free_time[q], room, rows);
  return true;
}

/// The gap's references of the problem (gap_references_of). For log with every resource open,
/// t f'(t) = w for every job, so the elasticity is the weights' sum and the pass over the
/// throughputs is skipped.
template <class Utility, class Scalar>
gap_references carry_gap_references(const dense_problem<Scalar>& problem, const Utility& utility) {
  if constexpr (std::is_same_v<Utility, utility::log>) {
    if ((problem.capacity.array() > 0.0).all()) {
      gap_references refs;
      refs.idle = -HUGE_VAL;
      refs.elasticity = problem.weight.size() != 0
                            ? static_cast<double>(problem.weight.template cast<double>().sum())
                            : static_cast<double>(problem.jobs());
      return refs;
    }
  }
  return gap_references_of(problem, utility);
}

/// The kept rows with the changed jobs' best responses at the ledger's prices (file comment), or
/// nothing when that answer does not meet `options`' tolerance. `origin[i]`: the row job i had in
/// `last`, -1 when it arrived or changed since.
template <class Utility, class Scalar>
std::optional<solve_result> carry_at_prices(const dense_view<Scalar>& view,
                                            const dense_problem<Scalar>& problem,
                                            const Utility& utility, const solver_options& options,
                                            const allocation& last,
                                            const std::vector<std::int64_t>& origin,
                                            const price_ledger& ledger, double margin) {
  if (!ledger.active || static_cast<Eigen::Index>(origin.size()) != view.n ||
      ledger.closed != price_ledger::closed_pattern(problem.capacity))
    return {};
  placed_responses placed = respond_at_prices(view, utility, ledger, last.jobs(), origin);
  carried_rows& rows = placed.rows;
  if (!fit_placed(view, utility, problem.capacity, margin, rows)) return {};
  double objective = ledger.objective;
  for (const Eigen::Index i : rows.to_place)
    objective += utility.value(rows.throughput[i], view.parameters(i));
  const double dual = ledger.dual_terms + placed.dual_terms + ledger.prices.dot(problem.capacity);
  const double unlimited = ledger.unlimited_terms + placed.unlimited_terms;
  if (!std::isfinite(objective) || !std::isfinite(dual) || !(dual < unlimited)) return {};
  const measured_gap gap =
      measure_gap(dual, objective, options.gap, carry_gap_references(problem, utility));
  if (!within_tolerance(dual - objective, gap, options)) return {};

  solve_result r;
  r.allocation = assemble_rows(rows, last, origin);
  r.status = solve_status::converged;
  r.primal_objective = objective;
  r.dual_bound = dual;
  r.trivial_bound = unlimited;
  r.duality_gap = dual - objective;
  r.relative_gap = gap.relative;
  r.gap_scale = gap.scale;
  r.gap_scale_name = gap.scale_name;
  r.gap_measure = gap.measure;
  r.smoothing = ledger.smoothing;
  r.max_capacity_violation = (rows.usage - problem.capacity).cwiseMax(0.0).maxCoeff();
  r.usage = std::move(rows.usage);
  r.throughput = std::move(rows.throughput);
  r.prices = ledger.prices;
  r.final_prices = ledger.final_prices;
  return r;
}

}  // namespace popalloc::detail
