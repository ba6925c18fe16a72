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
/// exact dual bound, and the allocation a feasible one once the time worth least on the
/// resources they overfill gives way (give_way.hpp). When the two meet the tolerance the re-plan
/// costs O(changed jobs) hull walks and the copy of the result, or, where the kept rows must give
/// way too, a pass over them, instead of dual evaluations over every job; otherwise the caller
/// solves from these prices.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/detail/best_response.hpp"
#include "popalloc/detail/carried_allocation.hpp"
#include "popalloc/detail/dense_view.hpp"
#include "popalloc/detail/give_way.hpp"
#include "popalloc/detail/host_executor.hpp"
#include "popalloc/detail/interior_point.hpp"
#include "popalloc/detail/price_ledger.hpp"
#include "popalloc/detail/priced_room.hpp"
#include "popalloc/detail/relative_gap.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"
#include "popalloc/utility/linear.hpp"
#include "popalloc/utility/log.hpp"

namespace popalloc::detail {

/// The kept rows (gather_kept_rows) and the changed jobs' exact best responses at the ledger's
/// prices, with the changed jobs' dual terms.
struct placed_responses {
  carried_rows rows;
  double dual_terms = 0.0, unlimited_terms = 0.0;
};

/// Job i's exact best response at the ledger's prices, as its row; adds its dual terms to `out`
/// and its usage to `usage`, and returns its throughput.
template <class Utility, class Scalar>
double respond_to_prices(const dense_view<Scalar>& view, const Utility& utility,
                         const price_ledger& ledger, Eigen::Index i, placed_row& row,
                         Eigen::VectorXd& usage, placed_responses& out) {
  const job_parameters job = view.parameters(i);
  const segment s = walk_hull(view, i, ledger.prices.data(), utility, job, 0.0, -1);
  out.dual_terms += s.excess;
  out.unlimited_terms += walk_hull(view, i, ledger.zero.data(), utility, job, 0.0, -1).excess;
  row.clear();
  if (s.left >= 0 && s.theta < 1.0) row.emplace_back(s.left, 1.0 - s.theta);
  if (s.right >= 0 && s.theta > 0.0) row.emplace_back(s.right, s.theta);
  std::sort(row.begin(), row.end());
  double t = 0.0;
  for (const auto& [j, x] : row) {
    usage[j] += view.amount(i, j) * x;
    t += x * view.value(i, j);
  }
  return t;
}

/// The kept jobs' throughputs and the changed jobs' best responses, on up to `threads` threads
/// over fixed chunks (the same sums on any number of threads).
template <class Utility, class Scalar>
placed_responses respond_at_prices(const dense_view<Scalar>& view, const Utility& utility,
                                   const price_ledger& ledger, const solve_result& last,
                                   const std::vector<std::int64_t>& origin, int threads,
                                   answer_buffers& buffers) {
  // A few hundred hull walks are worth a thread.
  constexpr Eigen::Index responses_per_chunk = 512;
  placed_responses out;
  carried_rows& rows = out.rows;
  rows = gather_kept_rows(ledger.usage, last, origin, threads, buffers);
  const row_chunks chunks(static_cast<Eigen::Index>(rows.to_place.size()), responses_per_chunk);
  std::vector<placed_responses> found(static_cast<std::size_t>(chunks.count));
  chunks.run(threads, [&](Eigen::Index c) {
    placed_responses& mine = found[static_cast<std::size_t>(c)];
    mine.rows.usage = Eigen::VectorXd::Zero(view.m);
    for (Eigen::Index q = chunks.begin(c); q < chunks.end(c); ++q) {
      const Eigen::Index i = rows.to_place[static_cast<std::size_t>(q)];
      rows.throughput[i] =
          respond_to_prices(view, utility, ledger, i, rows.placed[static_cast<std::size_t>(q)],
                            mine.rows.usage, mine);
    }
  });
  for (const placed_responses& chunk : found) {
    out.dual_terms += chunk.dual_terms;
    out.unlimited_terms += chunk.unlimited_terms;
    if (chunk.rows.usage.size() != 0) rows.usage += chunk.rows.usage;
  }
  return out;
}

/// Where the usage exceeds `room` on a resource, the placed jobs give back their share of the
/// excess there (their fractions scaled alike): for a strictly concave utility a cut spread over
/// many jobs loses less than one taken from the cheapest few. Records the jobs cut (job order)
/// and what the cuts took in `out`. False when the kept rows alone exceed a capacity.
template <class Utility, class Scalar>
bool share_excess(const dense_view<Scalar>& view, const Utility& utility,
                  const Eigen::VectorXd& capacity, const Eigen::VectorXd& room, carried_rows& rows,
                  given_way& out) {
  const Eigen::Index m = capacity.size();
  Eigen::VectorXd placed_usage = Eigen::VectorXd::Zero(m);
  for (std::size_t q = 0; q < rows.to_place.size(); ++q)
    for (const auto& [j, x] : rows.placed[q])
      placed_usage[j] += view.amount(rows.to_place[q], j) * x;
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
  for (std::size_t q = 0; q < rows.to_place.size(); ++q) {
    const Eigen::Index i = rows.to_place[q];
    double lost_throughput = 0.0;
    for (auto& [j, x] : rows.placed[q]) {
      lost_throughput += (1.0 - factor[j]) * x * view.value(i, j);
      x *= factor[j];
    }
    if (!(lost_throughput > 0.0)) continue;
    const job_parameters job = view.parameters(i);
    out.loss += utility.value(rows.throughput[i], job) -
                utility.value(rows.throughput[i] - lost_throughput, job);
    out.cut.push_back(i);
  }
  return true;
}

/// Brings the usage within (1 - margin) of every capacity, then gives the jobs that were cut,
/// and after them the other placed jobs, their free time on their fastest resources with room
/// (fill_free_time). A piecewise-linear utility's jobs are cut where their time is worth least
/// (give_way; the kept rows' time too where `use_kept`, and then the room left at positive
/// `prices` goes to the kept jobs that value it most: give_priced_room); a strictly concave
/// utility's placed jobs share the excess (share_excess). False when the rows cannot fit.
template <class Utility, class Scalar>
bool fit_placed(const dense_view<Scalar>& view, const Utility& utility,
                const Eigen::VectorXd& capacity, const Eigen::VectorXd& prices, double margin,
                const allocation& last, const std::vector<std::int64_t>& origin, bool use_kept,
                int threads, carried_rows& rows, given_way& given) {
  const Eigen::VectorXd room = capacity * (1.0 - margin);
  if constexpr (Utility::piecewise_linear) {
    if (!give_way(view, utility, capacity, room, last, origin, use_kept, rows, given, threads))
      return false;
    if (use_kept) give_priced_room(view, utility, prices, room, last, origin, threads, rows, given);
  } else {
    if (!share_excess(view, utility, capacity, room, rows, given)) return false;
  }
  std::vector<double> free_time(rows.to_place.size(), 0.0);
  std::vector<std::size_t> cut, uncut;
  for (std::size_t q = 0; q < rows.to_place.size(); ++q) {
    auto& row = rows.placed[q];
    row.erase(
        std::remove_if(row.begin(), row.end(), [](const auto& e) { return !(e.second > 0.0); }),
        row.end());
    double busy = 0.0;
    for (const auto& e : row) busy += e.second;
    free_time[q] = 1.0 - busy;
    const bool was_cut = std::binary_search(given.cut.begin(), given.cut.end(), rows.to_place[q]);
    (was_cut ? cut : uncut).push_back(q);
  }
  // The jobs that were cut first: they may have lost all their throughput.
  for (const std::size_t q : cut) fill_free_time(view, utility, q, free_time[q], room, rows);
  for (const std::size_t q : uncut) fill_free_time(view, utility, q, free_time[q], room, rows);
  return true;
}

/// The gap's references of the problem (gap_references_of), summed over row chunks on up to
/// `threads` threads in chunk order (the same sums on any number of threads). Linear utilities
/// leave nothing to sum (f(0) = 0, finite for every job); for log with every resource open,
/// t f'(t) = w for every job, so the elasticity is the weights' sum.
template <class Utility, class Scalar>
gap_references carry_gap_references(const dense_problem<Scalar>& problem, const Utility& utility,
                                    int threads) {
  if constexpr (std::is_same_v<Utility, utility::linear>) {
    return gap_references{};
  } else if constexpr (std::is_same_v<Utility, utility::log>) {
    if ((problem.capacity.array() > 0.0).all()) {
      gap_references refs;
      refs.idle = -HUGE_VAL;
      refs.elasticity = problem.weight.size() != 0
                            ? static_cast<double>(problem.weight.template cast<double>().sum())
                            : static_cast<double>(problem.jobs());
      return refs;
    }
  }
  const row_chunks chunks(problem.jobs());
  std::vector<gap_references> found(static_cast<std::size_t>(chunks.count));
  chunks.run(threads, [&](Eigen::Index c) {
    found[static_cast<std::size_t>(c)] =
        gap_references_of_rows(problem, utility, chunks.begin(c), chunks.end(c));
  });
  gap_references refs;
  for (const gap_references& chunk : found) {
    refs.idle += chunk.idle;
    refs.elasticity += chunk.elasticity;
  }
  return refs;
}

/// The placed jobs' part of carried_rows, to try a second way of fitting them from the same start
/// without copying the kept jobs' throughputs.
struct placed_snapshot {
  std::vector<Eigen::Index> to_place;
  std::vector<placed_row> placed;
  Eigen::VectorXd usage;
  std::vector<double> throughput;  ///< by to_place

  explicit placed_snapshot(const carried_rows& rows)
      : to_place(rows.to_place), placed(rows.placed), usage(rows.usage) {
    for (const Eigen::Index i : rows.to_place) throughput.push_back(rows.throughput[i]);
  }
  void restore(carried_rows& rows) const {
    rows.to_place = to_place;
    rows.placed = placed;
    rows.usage = usage;
    for (std::size_t q = 0; q < to_place.size(); ++q) rows.throughput[to_place[q]] = throughput[q];
  }
};

/// The certificate of one way of fitting the placed rows (fit_placed).
struct fitted_rows {
  bool fitted = false;  ///< the rows fit, with a finite objective (the gap is measured)
  bool certified = false;
  double objective = 0.0;
  measured_gap gap;
  double loss = 0.0;  ///< the utility the cuts took, before any free time was refilled
};

/// Fits `rows` (fit_placed) and measures the answer's gap against `dual`, the exact g(p) of the
/// changed problem. `references`: the gap's references, computed on first use.
template <class Utility, class Scalar>
fitted_rows fit_and_measure(const dense_view<Scalar>& view, const dense_problem<Scalar>& problem,
                            const Utility& utility, const solver_options& options,
                            const allocation& last, const std::vector<std::int64_t>& origin,
                            const price_ledger& ledger, double margin, double dual, bool use_kept,
                            carried_rows& rows, std::optional<gap_references>& references) {
  fitted_rows out;
  given_way given;
  if (!fit_placed(view, utility, problem.capacity, ledger.prices, margin, last, origin, use_kept,
                  host_executor(options.threads).threads(), rows, given))
    return out;
  out.loss = given.loss;
  out.objective = ledger.objective - given.kept_objective;
  for (const Eigen::Index i : rows.to_place)
    out.objective += utility.value(rows.throughput[i], view.parameters(i));
  if (!std::isfinite(out.objective)) return out;
  out.fitted = true;
  if (!references)
    references = carry_gap_references(problem, utility, host_executor(options.threads).threads());
  out.gap = measure_gap(dual, out.objective, options.gap, *references);
  out.certified = within_tolerance(dual - out.objective, out.gap, options);
  return out;
}

/// The kept rows with the changed jobs' best responses at the ledger's prices (file comment), or
/// nothing when that answer does not meet `options`' tolerance. `last_answer`: the answer the
/// ledger was opened with; `origin[i]`: the row job i had there, -1 when it arrived or changed
/// since. `buffers`: memory the answer's arrays may reuse.
template <class Utility, class Scalar>
std::optional<solve_result> carry_at_prices(const dense_view<Scalar>& view,
                                            const dense_problem<Scalar>& problem,
                                            const Utility& utility, const solver_options& options,
                                            const solve_result& last_answer,
                                            const std::vector<std::int64_t>& origin,
                                            const price_ledger& ledger, double margin,
                                            answer_buffers& buffers) {
  if (!ledger.active || ledger.at_unlimited || static_cast<Eigen::Index>(origin.size()) != view.n ||
      ledger.closed != price_ledger::closed_pattern(problem.capacity))
    return {};
  const allocation& last = last_answer.allocation;
  const int threads = host_executor(options.threads).threads();
  placed_responses placed =
      respond_at_prices(view, utility, ledger, last_answer, origin, threads, buffers);
  carried_rows& rows = placed.rows;
  const double dual = ledger.dual_terms + placed.dual_terms + ledger.prices.dot(problem.capacity);
  const double unlimited = ledger.unlimited_terms + placed.unlimited_terms;
  if (!std::isfinite(dual) || !(dual < unlimited)) return {};
  std::optional<gap_references> references;
  const auto fit = [&](bool use_kept) {
    return fit_and_measure(view, problem, utility, options, last, origin, ledger, margin, dual,
                           use_kept, rows, references);
  };
  std::optional<placed_snapshot> start;
  if constexpr (Utility::piecewise_linear) start.emplace(rows);
  const Eigen::VectorXd room = problem.capacity * (1.0 - margin);
  const double priced_excess = ledger.prices.dot((rows.usage - room).cwiseMax(0.0));
  const double priced_room = ledger.prices.dot((room - rows.usage).cwiseMax(0.0));
  fitted_rows answer = fit(false);
  if constexpr (Utility::piecewise_linear) {
    // The placed jobs give way among themselves first: that costs no pass over the kept rows.
    // Where that fails, or spends more than half of the gap the tolerance leaves (the next few
    // re-plans would need a warm solve), the kept rows give way too where their time is worth
    // less, and the smaller gap wins. Cutting a unit of resource j from a job at its best
    // response at p loses at least p_j, from the other jobs at least p_j less their share of
    // the last answer's gap: the cuts lose at least priced_excess less that gap. So the kept
    // rows are not offered for cuts where even cuts that cheap would miss the tolerance. Room
    // left at positive prices (where jobs left) adds its price to the gap unless jobs at the
    // margin take it, and those are kept jobs (give_priced_room): that is worth the pass too
    // where the room could account for a good part of what the gap grew by.
    const double spare = options.relative_gap - ledger.start_gap;
    const bool spends_half =
        !answer.certified || answer.gap.relative - ledger.start_gap > 0.5 * spare;
    const double best_case =
        answer.objective + answer.loss - priced_excess + ledger.start_duality_gap;
    const bool cuts_could_certify =
        answer.loss > 0.0 && references.has_value() &&
        within_tolerance(dual - best_case, measure_gap(dual, best_case, options.gap, *references),
                         options);
    const double grown = dual - answer.objective - ledger.start_duality_gap;
    const bool room_could_matter =
        priced_room > 0.0 && (!answer.fitted || priced_room >= 0.25 * grown);
    if (spends_half && (cuts_could_certify || room_could_matter)) {
      std::optional<carried_rows> placed_rows;
      if (answer.certified) placed_rows = rows;
      start->restore(rows);
      const fitted_rows with_kept = fit(true);
      if (with_kept.certified &&
          (!answer.certified || with_kept.gap.relative < answer.gap.relative)) {
        answer = with_kept;
      } else if (answer.certified) {
        rows = std::move(*placed_rows);
      }
    }
  }
  if (!answer.certified) return {};
  const double objective = answer.objective;
  const measured_gap& gap = answer.gap;

  solve_result r;
  r.allocation = std::move(buffers.rows);
  assemble_rows(rows, last, origin, r.allocation, threads);
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
