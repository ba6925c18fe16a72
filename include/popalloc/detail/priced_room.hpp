// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Room left on priced resources, given to the kept jobs that value it most.
///
/// Jobs that leave free the capacity they held. At prices p that capacity stays in the dual
/// bound (p . R counts it whether it is used or not), so every unit left unused on a resource j
/// with p_j > 0 adds p_j to the gap. A kept job partly served (below what its utility still
/// rewards) with time to spare values a unit of resource j at f'(t) A_kj / d_kj; a job at the
/// margin of j values it at p_j, and taking it costs the gap nothing. The jobs that arrived or
/// changed sit at their best responses at p, so the room they would take values it at less. So
/// the room goes first to the kept jobs that value it most, each on the resource it values most,
/// and the placed jobs' free time takes what is left (fill_free_time). The kept jobs that take
/// room become placed rows.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/detail/carried_allocation.hpp"
#include "popalloc/detail/dense_view.hpp"
#include "popalloc/detail/give_way.hpp"
#include "popalloc/result.hpp"

namespace popalloc::detail {

/// Kept job k's offer for the room in `left` (resources marked in `open`): its time worth most
/// per unit of resource (cost: minus that value), up to its free time and what its utility
/// still rewards; resource -1 when it wants none.
template <class Utility, class Scalar>
std::pair<std::int32_t, cut_offer> room_wanted(const dense_view<Scalar>& view,
                                               const Utility& utility, Eigen::Index k,
                                               double throughput, double free_time,
                                               const std::vector<unsigned char>& open) {
  std::pair<std::int32_t, cut_offer> out{-1, {}};
  const job_parameters job = view.parameters(k);
  const double slope = utility.marginal(throughput, job);
  if (!(slope > 0.0)) return out;
  double best = 0.0, fastest = 0.0;
  for (std::int32_t j = 0; j < view.m; ++j) {
    const double speed = view.value(k, j), d = view.amount(k, j);
    fastest = std::max(fastest, speed);
    if (!open[static_cast<std::size_t>(j)] || !(speed > 0.0) || !(d > 0.0)) continue;
    const double value = slope * speed / d;
    if (value > best) {
      best = value;
      out.first = j;
    }
  }
  const double goal = throughput_goal(utility, job, fastest);
  if (out.first < 0 || !(throughput < goal)) return {-1, {}};
  const double speed = view.value(k, out.first), d = view.amount(k, out.first);
  out.second = {-best, d * std::min(free_time, (goal - throughput) / speed), k, -1};
  return out;
}

/// The most kept jobs that take room on one resource (give_priced_room).
constexpr std::size_t takers_per_resource = 512;

/// Room below this share of a resource's room is left as it is (give_priced_room).
constexpr double negligible_room = 1e-9;

template <class Utility, class Scalar>
void give_priced_room(const dense_view<Scalar>& view, const Utility& utility,
                      const Eigen::VectorXd& prices, const Eigen::VectorXd& room,
                      const allocation& last, const std::vector<std::int64_t>& origin, int threads,
                      carried_rows& rows, given_way& given) {
  const Eigen::Index m = room.size();
  Eigen::VectorXd left = (room - rows.usage).cwiseMax(0.0);
  std::vector<unsigned char> open(static_cast<std::size_t>(m), 0);
  bool any = false;
  // Room within rounding of none is not worth a pass.
  for (Eigen::Index j = 0; j < m; ++j)
    any |= (open[static_cast<std::size_t>(j)] =
                prices[j] > 0.0 && left[j] > negligible_room * room[j] ? 1 : 0) != 0;
  if (!any) return;
  // Each job that takes room becomes a placed row, which the rest of the re-plan pays for:
  // offers below 1/takers_per_resource of the room (most are slivers of jobs within rounding
  // of their goal) are left out, so that at most that many jobs take it. The takers are then
  // among the takers_per_resource offers worth most, so each chunk keeps only its own best that
  // many per resource: the others would be sorted for nothing.
  std::vector<double> smallest(static_cast<std::size_t>(m), HUGE_VAL);
  double smallest_wanted = HUGE_VAL;
  for (Eigen::Index j = 0; j < m; ++j)
    if (open[static_cast<std::size_t>(j)]) {
      smallest[static_cast<std::size_t>(j)] = left[j] / static_cast<double>(takers_per_resource);
      smallest_wanted = std::min(smallest_wanted, smallest[static_cast<std::size_t>(j)]);
    }
  // With per-option amounts, a job's time can use more than one unit of a resource.
  const double largest_amount =
      view.demand != nullptr || view.job_demand != nullptr ? HUGE_VAL : 1.0;
  const auto last_jobs = static_cast<std::int64_t>(last.jobs());
  const row_chunks chunks(view.n);
  std::vector<std::vector<std::vector<cut_offer>>> found(
      static_cast<std::size_t>(chunks.count),
      std::vector<std::vector<cut_offer>>(static_cast<std::size_t>(m)));
  chunks.run(threads, [&](Eigen::Index c) {
    auto& mine = found[static_cast<std::size_t>(c)];
    // The offers a chunk keeps on a resource must beat the cost in `bar`: the last of its
    // takers_per_resource best once it has had twice that many.
    std::vector<double> bar(static_cast<std::size_t>(m), HUGE_VAL);
    std::size_t q = first_at_or_after(rows.to_place, chunks.begin(c));
    for (Eigen::Index k = chunks.begin(c); k < chunks.end(c); ++k) {
      if (q < rows.to_place.size() && rows.to_place[q] == k) {
        ++q;
        continue;
      }
      const std::int64_t from = origin[static_cast<std::size_t>(k)];
      if (from < 0 || from >= last_jobs) continue;
      double free_time = 1.0;
      for (auto e = last.job_offset[static_cast<std::size_t>(from)];
           e < last.job_offset[static_cast<std::size_t>(from) + 1]; ++e)
        free_time -= last.fraction[static_cast<std::size_t>(e)];
      // An offer can be no larger than the job's free time in units of the resource.
      if (!(free_time * largest_amount > smallest_wanted)) continue;
      const auto [j, offer] = room_wanted(view, utility, k, rows.throughput[k], free_time, open);
      if (j < 0) continue;
      const auto at = static_cast<std::size_t>(j);
      if (!(offer.amount >= smallest[at]) || !(offer.cost < bar[at])) continue;
      mine[at].push_back(offer);
      if (mine[at].size() == 2 * takers_per_resource)
        bar[at] = keep_cheapest(mine[at], takers_per_resource);
    }
  });

  std::map<Eigen::Index, placed_row> converted;
  for (Eigen::Index j = 0; j < m; ++j) {
    std::vector<cut_offer> offers;
    for (const auto& mine : found)
      offers.insert(offers.end(), mine[static_cast<std::size_t>(j)].begin(),
                    mine[static_cast<std::size_t>(j)].end());
    // cheapest_covering puts the offers worth most first (their cost is minus their value).
    const std::size_t taken = cheapest_covering(offers, left[j]);
    for (std::size_t o = 0; o < taken && left[j] > 0.0; ++o) {
      const Eigen::Index k = offers[o].job;
      const auto resource = static_cast<std::int32_t>(j);
      const double amount = std::min(offers[o].amount, left[j]);
      const double dx = amount / view.amount(k, resource);
      placed_row row =
          row_of_last(last, static_cast<std::size_t>(origin[static_cast<std::size_t>(k)]));
      const auto at =
          std::lower_bound(row.begin(), row.end(), std::make_pair(resource, 0.0),
                           [](const auto& a, const auto& b) { return a.first < b.first; });
      if (at != row.end() && at->first == resource) {
        at->second += dx;
      } else {
        row.insert(at, {resource, dx});
      }
      given.kept_objective += utility.value(rows.throughput[k], view.parameters(k));
      rows.throughput[k] += dx * view.value(k, resource);
      rows.usage[j] += amount;
      left[j] -= amount;
      converted.emplace(k, std::move(row));
    }
  }
  merge_converted(std::move(converted), rows);
}

}  // namespace popalloc::detail
