// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Room made on over-used resources by the jobs whose time there is worth least.
///
/// When the jobs that arrived or changed take their best responses at the last prices, they can
/// overfill a resource. At those prices a kept job at the margin (a piecewise-linear utility's
/// job partly served, a linear job indifferent between options) values its time on the resource
/// at its price; a placed job that strictly prefers it values it above. Cutting a job by one unit
/// of the resource raises the duality gap by what that unit was worth to the job less its price,
/// so the cheapest cut that brings the usage back to the room takes from the jobs whose time there
/// is worth least per unit of the resource, kept or placed alike. The kept jobs that are cut
/// become placed rows.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/detail/carried_allocation.hpp"
#include "popalloc/detail/dense_view.hpp"
#include "popalloc/result.hpp"

namespace popalloc::detail {

/// A job's time on one over-used resource, offered to be cut.
struct cut_offer {
  double cost = 0.0;    ///< utility lost per unit of the resource given back (all of the time)
  double amount = 0.0;  ///< units of the resource the time uses
  Eigen::Index job = 0;
  std::int64_t placed_row = -1;  ///< index into carried_rows::placed, -1 for a kept job
};

/// Orders offers by cost, cheapest first.
inline constexpr auto cheaper = [](const cut_offer& a, const cut_offer& b) {
  return a.cost < b.cost;
};

/// Keeps the `count` cheapest of `offers` (ties broken arbitrarily) and returns the cost of the
/// dearest of them. `offers` holds more than `count`.
inline double keep_cheapest(std::vector<cut_offer>& offers, std::size_t count) {
  const auto last_kept = offers.begin() + static_cast<std::ptrdiff_t>(count - 1);
  std::nth_element(offers.begin(), last_kept, offers.end(), cheaper);
  const double dearest = last_kept->cost;
  offers.erase(last_kept + 1, offers.end());
  return dearest;
}

/// Reorders `offers` so that its first k entries are the cheapest whose amounts reach `need`, and
/// returns k (all of them when they do not). Expected linear time: each step partitions half of
/// what is left around its median.
inline std::size_t cheapest_covering(std::vector<cut_offer>& offers, double need) {
  if (!(need > 0.0)) return 0;
  std::size_t lo = 0, hi = offers.size();
  while (hi - lo > 64) {
    const std::size_t mid = lo + (hi - lo) / 2;
    const auto at = [&](std::size_t k) { return offers.begin() + static_cast<std::ptrdiff_t>(k); };
    std::nth_element(at(lo), at(mid), at(hi), cheaper);
    double below = 0.0;
    for (std::size_t k = lo; k < mid; ++k) below += offers[k].amount;
    if (below >= need) {
      hi = mid;
    } else {
      need -= below;
      lo = mid;
    }
  }
  std::sort(offers.begin() + static_cast<std::ptrdiff_t>(lo),
            offers.begin() + static_cast<std::ptrdiff_t>(hi), cheaper);
  for (std::size_t k = lo; k < hi; ++k) {
    need -= offers[k].amount;
    if (!(need > 0.0)) return k + 1;
  }
  return hi;
}

/// Utility lost per unit of resource j when job i at throughput t gives up its fraction x > 0
/// there (amount > 0). Zero where nothing is lost, or where f is -inf either way (log at t = 0),
/// so that the costs stay ordered.
template <class Utility, class Scalar>
double cut_cost(const dense_view<Scalar>& view, const Utility& utility, Eigen::Index i,
                std::int32_t j, double x, double t) {
  const job_parameters job = view.parameters(i);
  const double lost = utility.value(t, job) - utility.value(t - x * view.value(i, j), job);
  return lost > 0.0 ? lost / (x * view.amount(i, j)) : 0.0;
}

/// The placed rows' time on the resources marked in `over`, by resource.
template <class Utility, class Scalar>
std::vector<std::vector<cut_offer>> placed_offers(const dense_view<Scalar>& view,
                                                  const Utility& utility,
                                                  const std::vector<unsigned char>& over,
                                                  const carried_rows& rows) {
  std::vector<std::vector<cut_offer>> offers(over.size());
  for (std::size_t q = 0; q < rows.to_place.size(); ++q) {
    const Eigen::Index i = rows.to_place[q];
    for (const auto& [j, x] : rows.placed[q]) {
      const double d = view.amount(i, j);
      if (!over[static_cast<std::size_t>(j)] || !(x > 0.0) || !(d > 0.0)) continue;
      offers[static_cast<std::size_t>(j)].push_back(
          {cut_cost(view, utility, i, j, x, rows.throughput[i]), x * d, i,
           static_cast<std::int64_t>(q)});
    }
  }
  return offers;
}

/// Per resource marked in `over`, the cost of the dearest offer needed when only `offers` (a copy:
/// it is reordered) cover the excess over `room`; infinite where they cannot. Time worth more is
/// never chosen.
inline Eigen::VectorXd cover_cost(std::vector<std::vector<cut_offer>> offers,
                                  const std::vector<unsigned char>& over,
                                  const Eigen::VectorXd& usage, const Eigen::VectorXd& room) {
  Eigen::VectorXd cost = Eigen::VectorXd::Constant(room.size(), HUGE_VAL);
  for (Eigen::Index j = 0; j < room.size(); ++j) {
    auto& on_j = offers[static_cast<std::size_t>(j)];
    if (!over[static_cast<std::size_t>(j)]) continue;
    const double excess = usage[j] - room[j];
    double total = 0.0;
    for (const cut_offer& o : on_j) total += o.amount;
    if (!(total >= excess)) continue;
    const std::size_t k = cheapest_covering(on_j, excess);
    if (k > 0) cost[j] = on_j[k - 1].cost;
  }
  return cost;
}

/// Adds the kept rows' (of `last`) time on the resources marked in `over` that is worth less
/// than `below[j]` per unit of resource j, in job order, scanning the rows' chunks (row_chunks)
/// on up to `threads` threads.
template <class Utility, class Scalar>
void add_kept_offers(const dense_view<Scalar>& view, const Utility& utility,
                     const std::vector<unsigned char>& over, const Eigen::VectorXd& below,
                     const allocation& last, const std::vector<std::int64_t>& origin,
                     const carried_rows& rows, int threads,
                     std::vector<std::vector<cut_offer>>& offers) {
  const row_chunks chunks(view.n);
  std::vector<std::vector<std::vector<cut_offer>>> found(
      static_cast<std::size_t>(chunks.count), std::vector<std::vector<cut_offer>>(offers.size()));
  chunks.run(threads, [&](Eigen::Index c) {
    auto& mine = found[static_cast<std::size_t>(c)];
    std::size_t q = first_at_or_after(rows.to_place, chunks.begin(c));
    for (Eigen::Index i = chunks.begin(c); i < chunks.end(c); ++i) {
      if (q < rows.to_place.size() && rows.to_place[q] == i) {
        ++q;
        continue;
      }
      const auto from = static_cast<std::size_t>(origin[static_cast<std::size_t>(i)]);
      for (auto k = last.job_offset[from]; k < last.job_offset[from + 1]; ++k) {
        const std::int32_t j = last.option[static_cast<std::size_t>(k)];
        const double x = last.fraction[static_cast<std::size_t>(k)], d = view.amount(i, j);
        if (!over[static_cast<std::size_t>(j)] || !(x > 0.0) || !(d > 0.0)) continue;
        const double cost = cut_cost(view, utility, i, j, x, rows.throughput[i]);
        if (cost < below[j]) mine[static_cast<std::size_t>(j)].push_back({cost, x * d, i, -1});
      }
    }
  });
  for (std::size_t j = 0; j < offers.size(); ++j)
    for (const auto& mine : found)
      offers[j].insert(offers[j].end(), mine[j].begin(), mine[j].end());
}

/// Adds the rows of `converted` (by job) to the placed rows, keeping to_place in job order.
inline void merge_converted(std::map<Eigen::Index, placed_row>&& converted, carried_rows& rows) {
  if (converted.empty()) return;
  std::vector<Eigen::Index> to_place;
  std::vector<placed_row> placed;
  to_place.reserve(rows.to_place.size() + converted.size());
  placed.reserve(to_place.capacity());
  auto next = converted.begin();
  for (std::size_t q = 0; q <= rows.to_place.size(); ++q) {
    const Eigen::Index stop =
        q < rows.to_place.size() ? rows.to_place[q] : std::numeric_limits<Eigen::Index>::max();
    for (; next != converted.end() && next->first < stop; ++next) {
      to_place.push_back(next->first);
      placed.push_back(std::move(next->second));
    }
    if (q == rows.to_place.size()) break;
    to_place.push_back(rows.to_place[q]);
    placed.push_back(std::move(rows.placed[q]));
  }
  rows.to_place = std::move(to_place);
  rows.placed = std::move(placed);
}

/// What giving way changed beyond the rows.
struct given_way {
  std::vector<Eigen::Index> cut;  ///< every job cut, placed or kept, in job order
  double kept_objective = 0.0;    ///< what the kept jobs cut had as kept rows (now placed rows)
  double loss = 0.0;              ///< the utility the cuts took, before any free time is refilled
};

/// Cuts the cheapest time on every resource whose usage exceeds `room` until it fits (file
/// comment): the placed rows' time, and the kept rows' where `from_kept`, moving the kept jobs it
/// cut into the placed rows (scanning them on up to `threads` threads). False when the offers
/// cannot bring the usage within `capacity` (rows that were within rounding of the room stay as
/// they are).
template <class Utility, class Scalar>
bool give_way(const dense_view<Scalar>& view, const Utility& utility,
              const Eigen::VectorXd& capacity, const Eigen::VectorXd& room, const allocation& last,
              const std::vector<std::int64_t>& origin, bool from_kept, carried_rows& rows,
              given_way& out, int threads = 1) {
  std::vector<unsigned char> over(static_cast<std::size_t>(room.size()), 0);
  bool any = false;
  for (Eigen::Index j = 0; j < room.size(); ++j)
    any |= (over[static_cast<std::size_t>(j)] = rows.usage[j] > room[j] ? 1 : 0) != 0;
  if (!any) return true;
  std::vector<std::vector<cut_offer>> offers = placed_offers(view, utility, over, rows);
  if (from_kept)
    add_kept_offers(view, utility, over, cover_cost(offers, over, rows.usage, room), last, origin,
                    rows, threads, offers);

  // The kept jobs cut take a placed row each, merged into job order at the end.
  std::map<Eigen::Index, placed_row> converted;
  const auto row_of = [&](const cut_offer& o) -> placed_row& {
    if (o.placed_row >= 0) return rows.placed[static_cast<std::size_t>(o.placed_row)];
    const auto [at, inserted] = converted.try_emplace(o.job);
    if (inserted) {
      at->second =
          row_of_last(last, static_cast<std::size_t>(origin[static_cast<std::size_t>(o.job)]));
      out.kept_objective += utility.value(rows.throughput[o.job], view.parameters(o.job));
    }
    return at->second;
  };
  for (Eigen::Index j = 0; j < room.size(); ++j) {
    auto& on_j = offers[static_cast<std::size_t>(j)];
    if (!over[static_cast<std::size_t>(j)]) continue;
    double excess = rows.usage[j] - room[j];
    const std::size_t taken = cheapest_covering(on_j, excess);
    for (std::size_t k = 0; k < taken && excess > 0.0; ++k) {
      const cut_offer& o = on_j[k];
      const double given = std::min(o.amount, excess);
      const double d = view.amount(o.job, static_cast<std::int32_t>(j));
      auto& row = row_of(o);
      const auto entry = std::find_if(row.begin(), row.end(), [&](const auto& e) {
        return e.first == static_cast<std::int32_t>(j);
      });
      const double dx = std::min(entry->second, given / d);
      const double t = rows.throughput[o.job];
      const job_parameters job = view.parameters(o.job);
      entry->second -= dx;
      rows.throughput[o.job] -= dx * view.value(o.job, static_cast<std::int32_t>(j));
      out.loss += utility.value(t, job) - utility.value(rows.throughput[o.job], job);
      rows.usage[j] -= given;
      excess -= given;
      out.cut.push_back(o.job);
    }
    if (excess > 0.0 && !(rows.usage[j] <= capacity[j])) return false;
  }
  merge_converted(std::move(converted), rows);
  std::sort(out.cut.begin(), out.cut.end());
  out.cut.erase(std::unique(out.cut.begin(), out.cut.end()), out.cut.end());
  return true;
}

}  // namespace popalloc::detail
