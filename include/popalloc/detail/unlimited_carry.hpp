// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A re-plan certified without a dual evaluation: the last allocation carried over to a
/// changed problem whose last optimum was the unlimited-capacity objective g(0).
///
/// When every job of the last solve got what it could get with unlimited capacities (the bound
/// was g(0), the trivial bound: every target met), the optimal prices are 0 and the dual has
/// nothing left to find; only an allocation that gets every job of the changed problem as close
/// to g(0) is. The jobs that did not change keep their rows of the last allocation, which fit
/// their old share of the capacities; the jobs that arrived or changed are placed, one after the
/// other, on their fastest resources with room, up to what their utility stops rewarding; a job
/// that falls short takes room that kept jobs make by moving to other resources without losing
/// throughput (room_exchange.hpp). When that allocation is feasible and its objective meets the
/// tolerance against g(0) (an upper bound on every problem's optimum, the dual at prices 0), it
/// is the answer, certified as a solve's would be. Otherwise nothing is returned and the caller
/// solves. The kept jobs' objective, usage and g(0) terms come from the price ledger, kept at
/// prices 0: the re-plan visits the kept rows only to copy them into the answer.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include <Eigen/Core>

#include "popalloc/dense_problem.hpp"
#include "popalloc/detail/best_response.hpp"
#include "popalloc/detail/carried_allocation.hpp"
#include "popalloc/detail/dense_view.hpp"
#include "popalloc/detail/host_executor.hpp"
#include "popalloc/detail/price_ledger.hpp"
#include "popalloc/detail/priced_carry.hpp"
#include "popalloc/detail/relative_gap.hpp"
#include "popalloc/detail/room_exchange.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"

namespace popalloc::detail {

/// The last allocation of the unchanged jobs with the others placed greedily (file comment), or
/// nothing when that allocation does not certify the changed problem to `options`' tolerance.
/// `last_answer`: the answer `ledger` was opened with, at g(0); `origin[i]`: the row job i had
/// there, -1 when it arrived or changed since. `margin`: the relative room every resource keeps,
/// as the solver's repair keeps it. `view`: `problem` as the solver reads it (problem_storage:
/// closed resources give no throughput) in host memory. `buffers`: memory the answer's arrays
/// may reuse.
template <class Utility, class Scalar>
std::optional<solve_result> carry_allocation_over(
    const dense_view<Scalar>& view, const dense_problem<Scalar>& problem, const Utility& utility,
    const solver_options& options, const solve_result& last_answer,
    const std::vector<std::int64_t>& origin, const price_ledger& ledger, double margin,
    answer_buffers& buffers) {
  static_assert(Utility::piecewise_linear, "only piecewise-linear utilities reach g(0) exactly");
  const Eigen::VectorXd& capacity = problem.capacity;
  if (!ledger.active || !ledger.at_unlimited ||
      static_cast<Eigen::Index>(origin.size()) != view.n ||
      ledger.closed != price_ledger::closed_pattern(capacity))
    return {};
  const int threads = host_executor(options.threads).threads();
  const allocation& last = last_answer.allocation;
  carried_rows rows = gather_kept_rows(ledger.usage, last_answer, origin, threads, buffers);
  const Eigen::VectorXd room = capacity * (1.0 - margin);
  if ((rows.usage.array() > room.array()).any()) return {};  // capacities shrank under them
  double unlimited = ledger.unlimited_terms;
  for (std::size_t q = 0; q < rows.to_place.size(); ++q) {
    const Eigen::Index i = rows.to_place[q];
    fill_free_time(view, utility, q, 1.0, room, rows);
    unlimited +=
        walk_hull(view, i, ledger.zero.data(), utility, view.parameters(i), 0.0, -1).excess;
  }
  const double moved_objective = exchange_room(view, utility, room, last, origin, threads, rows);
  double objective = ledger.objective - moved_objective;
  for (const Eigen::Index i : rows.to_place)
    objective += utility.value(rows.throughput[i], view.parameters(i));
  if (!std::isfinite(objective) || !std::isfinite(unlimited)) return {};
  // Decided before the rows are assembled: most of a failed attempt's cost would be theirs.
  const measured_gap gap = measure_gap(unlimited, objective, options.gap,
                                       carry_gap_references(problem, utility, threads));
  if (!within_tolerance(unlimited - objective, gap, options)) return {};

  solve_result r;
  r.allocation = std::move(buffers.rows);
  assemble_rows(rows, last, origin, r.allocation, threads);
  r.status = solve_status::converged;
  r.primal_objective = objective;
  r.dual_bound = r.trivial_bound = unlimited;
  r.duality_gap = unlimited - objective;
  r.relative_gap = gap.relative;
  r.gap_scale = gap.scale;
  r.gap_scale_name = gap.scale_name;
  r.gap_measure = gap.measure;
  r.max_capacity_violation = (rows.usage - capacity).cwiseMax(0.0).maxCoeff();
  r.usage = std::move(rows.usage);
  r.throughput = std::move(rows.throughput);
  r.prices = r.final_prices = Eigen::VectorXd::Zero(view.m);
  return r;
}

}  // namespace popalloc::detail
