// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Room on full resources for the placed jobs short of their goal, made by kept jobs that
/// move time to resources with room without losing throughput.
///
/// A re-plan at g(0) places the jobs that arrived or changed on their fastest resources with room
/// (fill_free_time). One can fall short of its goal when the resources fast for it are full of
/// kept jobs, which a solve would move. A kept job k that moves y units of its time on a full
/// resource j to a resource j' with room keeps its throughput with y A_kj / A_kj' units there: it
/// needs that much time beyond the y it gives up (its free time) and that much room on j'. The
/// room it frees on j goes to the short job, in place of the job's free time or its time on its
/// slowest resource. Every step keeps the usage within the room and every kept job's throughput,
/// and raises the short job's, so the objective only rises. Kept jobs that move become placed
/// rows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/detail/carried_allocation.hpp"
#include "popalloc/detail/dense_view.hpp"
#include "popalloc/detail/give_way.hpp"
#include "popalloc/result.hpp"

namespace popalloc::detail {

/// Kept jobs on each full resource that could move time off it, found by one pass over the kept
/// rows. At most `per_chunk` of them per resource and row chunk (row_chunks), in job order: a few
/// short jobs need little room, and the candidates do not depend on the thread count.
template <class Scalar>
std::vector<std::vector<Eigen::Index>> movable_kept_jobs(
    const dense_view<Scalar>& view, const allocation& last, const std::vector<std::int64_t>& origin,
    const std::vector<unsigned char>& full, const Eigen::VectorXd& spare, int threads) {
  constexpr std::size_t per_chunk = 64;
  const Eigen::Index m = view.m;
  const auto last_jobs = static_cast<std::int64_t>(last.jobs());
  const row_chunks chunks(view.n);
  std::vector<std::vector<std::vector<Eigen::Index>>> found(static_cast<std::size_t>(chunks.count));
  chunks.run(threads, [&](Eigen::Index c) {
    auto& mine = found[static_cast<std::size_t>(c)];
    mine.resize(static_cast<std::size_t>(m));
    // The full resources whose list is still open: the scan stops when there are none.
    auto open_lists = static_cast<std::size_t>(std::count(full.begin(), full.end(), 1));
    for (Eigen::Index k = chunks.begin(c); k < chunks.end(c) && open_lists > 0; ++k) {
      const std::int64_t from = origin[static_cast<std::size_t>(k)];
      if (from < 0 || from >= last_jobs) continue;
      const auto row = static_cast<std::size_t>(from);
      double busy = 0.0;
      for (auto e = last.job_offset[row]; e < last.job_offset[row + 1]; ++e)
        busy += last.fraction[static_cast<std::size_t>(e)];
      for (auto e = last.job_offset[row]; e < last.job_offset[row + 1]; ++e) {
        const std::int32_t j = last.option[static_cast<std::size_t>(e)];
        auto& list = mine[static_cast<std::size_t>(j)];
        if (!full[static_cast<std::size_t>(j)] || list.size() >= per_chunk) continue;
        for (std::int32_t to = 0; to < view.m; ++to) {
          const double speed = view.value(k, to);
          if (to != j && spare[to] > 0.0 && speed > 0.0 &&
              (busy < 1.0 || speed >= view.value(k, j))) {
            list.push_back(k);
            if (list.size() == per_chunk) --open_lists;
            break;
          }
        }
      }
    }
  });
  std::vector<std::vector<Eigen::Index>> out(static_cast<std::size_t>(m));
  for (const auto& chunk : found)
    for (std::size_t j = 0; j < chunk.size(); ++j)
      out[j].insert(out[j].end(), chunk[j].begin(), chunk[j].end());
  return out;
}

/// The exchange of time between short placed jobs and movable kept ones (file comment).
template <class Utility, class Scalar>
class room_exchange {
 public:
  room_exchange(const dense_view<Scalar>& view, const Utility& utility, const Eigen::VectorXd& room,
                const allocation& last, const std::vector<std::int64_t>& origin, carried_rows& rows)
      : view_(view), utility_(utility), room_(room), last_(last), origin_(origin), rows_(rows) {}

  /// Raises the short placed jobs towards their goals; returns what the kept jobs that moved
  /// had as kept rows (their objective, now counted among the placed rows').
  double run(int threads) {
    std::vector<std::size_t> short_jobs;
    goals_.resize(rows_.to_place.size());
    for (std::size_t q = 0; q < rows_.to_place.size(); ++q) {
      goals_[q] = goal(rows_.to_place[q]);
      if (shortfall(q) > 0.0) short_jobs.push_back(q);
    }
    if (short_jobs.empty()) return 0.0;
    const Eigen::Index m = view_.m;
    std::vector<unsigned char> full(static_cast<std::size_t>(m));
    for (Eigen::Index j = 0; j < m; ++j)
      full[static_cast<std::size_t>(j)] = spare(j) < room_[j] * full_share ? 1 : 0;
    movable_ = movable_kept_jobs(view_, last_, origin_, full, (room_ - rows_.usage).cwiseMax(0.0),
                                 threads);
    next_movable_.assign(static_cast<std::size_t>(m), 0);
    for (const std::size_t q : short_jobs) raise(q);
    double kept_objective = 0.0;
    for (auto& [k, row] : moved_) {
      kept_objective += utility_.value(rows_.throughput[k], view_.parameters(k));
      row.erase(
          std::remove_if(row.begin(), row.end(), [](const auto& e) { return !(e.second > 0.0); }),
          row.end());
      rows_.throughput[k] = throughput_of(k, row);
    }
    merge_converted(std::move(moved_), rows_);
    return kept_objective;
  }

 private:
  /// A resource with less than this share of its room left is full.
  static constexpr double full_share = 1e-9;

  double spare(Eigen::Index j) const { return room_[j] - rows_.usage[j]; }

  double goal(Eigen::Index i) const {
    return throughput_goal(utility_, view_.parameters(i), fastest_open(view_, i));
  }

  /// How far placed job q is below its goal, 0 within rounding of it.
  double shortfall(std::size_t q) const {
    const double g = goals_[q], need = g - rows_.throughput[rows_.to_place[q]];
    return need > 1e-12 * g ? need : 0.0;
  }

  double throughput_of(Eigen::Index i, const placed_row& row) const {
    double t = 0.0;
    for (const auto& [j, x] : row) t += x * view_.value(i, j);
    return t;
  }

  static double& entry(placed_row& row, std::int32_t j) {
    auto at = std::lower_bound(row.begin(), row.end(), std::make_pair(j, 0.0),
                               [](const auto& a, const auto& b) { return a.first < b.first; });
    if (at == row.end() || at->first != j) at = row.insert(at, {j, 0.0});
    return at->second;
  }

  static double busy(const placed_row& row) {
    double b = 0.0;
    for (const auto& e : row) b += e.second;
    return b;
  }

  /// Placed job q takes time on the resources faster for it than what it has, fastest first,
  /// with the room movable kept jobs free there.
  void raise(std::size_t q) {
    const Eigen::Index i = rows_.to_place[q];
    placed_row& row = rows_.placed[q];
    std::sort(row.begin(), row.end());
    std::vector<std::int32_t> order(static_cast<std::size_t>(view_.m));
    std::iota(order.begin(), order.end(), std::int32_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
      return view_.value(i, a) > view_.value(i, b);
    });
    for (const std::int32_t j : order) {
      if (!(shortfall(q) > 0.0) || !(view_.value(i, j) > 0.0)) break;
      // Each step uses up the job's source of time, the room on j, a candidate, or the need,
      // up to rounding: the bound stops steps that rounding alone would keep going.
      const std::size_t steps = movable_[static_cast<std::size_t>(j)].size() + 2 * row.size() + 8;
      for (std::size_t step = 0; step < steps && shortfall(q) > 0.0 && take_time(q, j); ++step) {
      }
    }
    row.erase(
        std::remove_if(row.begin(), row.end(), [](const auto& e) { return !(e.second > 0.0); }),
        row.end());
    rows_.throughput[i] = throughput_of(i, row);
  }

  /// One step of placed job q onto resource j: from its free time, else from its slowest
  /// resource slower than j. False when it has no such time or no room on j can be made.
  bool take_time(std::size_t q, std::int32_t j) {
    const Eigen::Index i = rows_.to_place[q];
    placed_row& row = rows_.placed[q];
    const double speed = view_.value(i, j), d = view_.amount(i, j);
    const double free_time = 1.0 - busy(row);
    std::int32_t source = -1;
    double available = free_time > 0.0 ? free_time : 0.0, source_speed = 0.0;
    if (!(available > 0.0)) {
      for (const auto& [s, x] : row)
        if (x > 0.0 && view_.value(i, s) < speed &&
            (source < 0 || view_.value(i, s) < source_speed)) {
          source = s;
          source_speed = view_.value(i, s);
          available = x;
        }
      if (source < 0) return false;
    }
    double w = std::min(available, shortfall(q) / (speed - source_speed));
    if (d > 0.0) {
      if (spare(j) < d * w) free_room(j, d * w - std::max(0.0, spare(j)));
      w = std::min(w, std::max(0.0, spare(j)) / d);
    }
    if (!(w > 0.0)) return false;
    entry(row, j) += w;
    rows_.usage[j] += d * w;
    if (source >= 0) {
      double& x = entry(row, source);
      x = std::max(0.0, x - w);
      rows_.usage[source] -= view_.amount(i, source) * w;
    }
    rows_.throughput[i] += (speed - source_speed) * w;
    return true;
  }

  /// Moves movable kept jobs' time off resource j until `amount` of it is free or none is left.
  void free_room(std::int32_t j, double amount) {
    const auto& candidates = movable_[static_cast<std::size_t>(j)];
    std::size_t& next = next_movable_[static_cast<std::size_t>(j)];
    while (amount > 0.0 && next < candidates.size()) {
      const double freed = move_off(candidates[next], j, amount);
      if (freed < amount) ++next;  // this job can give no more (or the next one must help)
      amount -= freed;
    }
  }

  /// Kept job k's row to change: its last row the first time.
  placed_row& moved_row(Eigen::Index k) {
    auto at = moved_.find(k);
    if (at != moved_.end()) return at->second;
    return moved_
        .emplace(k,
                 row_of_last(last_, static_cast<std::size_t>(origin_[static_cast<std::size_t>(k)])))
        .first->second;
  }

  /// Moves up to `amount` of kept job k's use of resource j to its fastest resource with room,
  /// keeping its throughput; returns the room freed on j.
  double move_off(Eigen::Index k, std::int32_t j, double amount) {
    placed_row& row = moved_row(k);
    const double d = view_.amount(k, j), speed = view_.value(k, j);
    const double on_j = entry(row, j);
    std::int32_t to = -1;
    for (std::int32_t r = 0; r < view_.m; ++r)
      if (r != j && spare(r) > 0.0 && view_.value(k, r) > 0.0 &&
          (to < 0 || view_.value(k, r) > view_.value(k, to)))
        to = r;
    if (to < 0 || !(on_j > 0.0) || !(d > 0.0)) return 0.0;
    const double ratio = speed / view_.value(k, to), d_to = view_.amount(k, to);
    double y = std::min(on_j, amount / d);
    // Rounding must not take the job past its time or the room.
    constexpr double inside = 1.0 - 1e-12;
    if (ratio > 1.0) y = std::min(y, inside * (1.0 - busy(row)) / (ratio - 1.0));
    if (d_to > 0.0) y = std::min(y, inside * spare(to) / (d_to * ratio));
    if (!(y > 0.0)) return 0.0;
    entry(row, j) = on_j - y;
    entry(row, to) += y * ratio;
    rows_.usage[j] -= d * y;
    rows_.usage[to] += d_to * y * ratio;
    return d * y;
  }

  const dense_view<Scalar>& view_;
  const Utility& utility_;
  const Eigen::VectorXd& room_;
  const allocation& last_;
  const std::vector<std::int64_t>& origin_;
  carried_rows& rows_;
  std::vector<std::vector<Eigen::Index>> movable_;
  std::vector<std::size_t> next_movable_;
  std::vector<double> goals_;  ///< the placed jobs' goals (throughput_goal), by to_place
  std::map<Eigen::Index, placed_row> moved_;
};

/// Raises the placed jobs short of their goals with room that movable kept jobs make (file
/// comment); returns what the kept jobs that moved had as kept rows, now placed rows.
template <class Utility, class Scalar>
double exchange_room(const dense_view<Scalar>& view, const Utility& utility,
                     const Eigen::VectorXd& room, const allocation& last,
                     const std::vector<std::int64_t>& origin, int threads, carried_rows& rows) {
  return room_exchange<Utility, Scalar>(view, utility, room, last, origin, rows).run(threads);
}

}  // namespace popalloc::detail
