// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief POP for shard placement: servers in k contiguous groups, shards dealt to groups
/// preferring where they live (a shard's load split across groups when needed), each group
/// solved on its own, and the routing merged with fractions scaled by partial load.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/error.hpp"
#include "popalloc/lb/checker.hpp"
#include "popalloc/lb/problem.hpp"

namespace popalloc::lb {

/// \brief One POP sub-problem: global ids of its servers and shards, each shard's partial load,
/// and the sub-problem itself (local indices, the full problem's load band).
struct pop_part {
  std::int32_t first_server = 0;     ///< servers first_server .. first_server + sub.servers - 1
  std::vector<std::size_t> shards;   ///< global shard id of every local shard
  std::vector<double> partial_load;  ///< the load of that shard this part carries
  problem sub;
};

/// \brief Splits `prob` into k parts (POP's `balanceLoad(..., splitFactor = k)`).
///
/// Servers go to k contiguous groups whose sizes differ by at most one (POP requires k | N);
/// group g's load target is total * N_g / N. Each group first takes the shards already on its
/// servers, lightest first, until its target; the shard that overflows contributes only the part
/// that fits and keeps the rest. Groups still short take the remaining load in shard order with
/// the same rule. Zero-load shards stay in the group of their first replica (POP drops them,
/// leaving their routing empty). Every part keeps the full problem's load band, which equals the
/// part's own mean -+ epsilon mean because the targets are exact (no integer rounding).
/// \throws invalid_problem if k < 1 or k > N.
inline std::vector<pop_part> pop_split(const problem& prob, int k) {
  prob.validate();
  if (k < 1 || k > prob.servers)
    throw invalid_problem("load balancing: POP needs 1 <= k <= servers (k = " + std::to_string(k) +
                          ", servers = " + std::to_string(prob.servers) + ")");
  const std::size_t s = prob.shards();
  const auto n = static_cast<std::int64_t>(prob.servers);
  const double total = prob.total_load();
  std::vector<pop_part> parts(static_cast<std::size_t>(k));
  std::vector<std::int32_t> group_of(prob.server_count());
  for (int g = 0; g < k; ++g) {
    const auto begin = static_cast<std::int32_t>(n * g / k);
    const auto end = static_cast<std::int32_t>(n * (g + 1) / k);
    parts[static_cast<std::size_t>(g)].first_server = begin;
    parts[static_cast<std::size_t>(g)].sub.servers = end - begin;
    for (std::int32_t i = begin; i < end; ++i) group_of[static_cast<std::size_t>(i)] = g;
  }
  std::vector<double> target(parts.size()), filled(parts.size(), 0.0);
  for (std::size_t g = 0; g < parts.size(); ++g)
    target[g] = total * static_cast<double>(parts[g].sub.servers) / static_cast<double>(n);
  std::vector<double> rest = prob.load;
  const double eps = 1e-12 * total;
  auto take = [&](std::size_t g, std::size_t j) {
    const double room = target[g] - filled[g];
    const double amount = std::min(rest[j], room);
    parts[g].shards.push_back(j);
    parts[g].partial_load.push_back(amount);
    filled[g] += amount;
    rest[j] -= amount;
    if (rest[j] <= eps) rest[j] = 0.0;
  };
  const bool have_current = !prob.current.shards.empty();
  // 1. Shards already in the group, lightest first.
  std::vector<std::vector<std::size_t>> present(parts.size());
  if (have_current)
    for (std::size_t j = 0; j < s; ++j) {
      std::vector<std::int32_t> groups;
      for (const route& r : prob.current.shards[j]) {
        const std::int32_t g = group_of[static_cast<std::size_t>(r.server)];
        if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
      }
      for (const std::int32_t g : groups) present[static_cast<std::size_t>(g)].push_back(j);
    }
  for (std::size_t g = 0; g < parts.size(); ++g) {
    auto& c = present[g];
    std::stable_sort(c.begin(), c.end(),
                     [&](std::size_t a, std::size_t b) { return prob.load[a] < prob.load[b]; });
    for (const std::size_t j : c) {
      if (target[g] - filled[g] <= eps) break;
      if (rest[j] > 0.0) take(g, j);
    }
  }
  // 2. Groups still short: remaining load in shard order.
  std::size_t next = 0;
  for (std::size_t g = 0; g < parts.size(); ++g) {
    while (target[g] - filled[g] > eps && next < s) {
      if (rest[next] > 0.0) take(g, next);
      if (rest[next] <= 0.0) ++next;
    }
  }
  // 3. Rounding leftovers (at most a few ulps of the total) and zero-load shards.
  std::vector<char> assigned(s, 0);
  for (const auto& p : parts)
    for (const std::size_t j : p.shards) assigned[j] = 1;
  for (std::size_t j = 0; j < s; ++j) {
    if (rest[j] > 0.0) {
      std::size_t g = 0;
      for (std::size_t h = 1; h < parts.size(); ++h)
        if (target[h] - filled[h] > target[g] - filled[g]) g = h;
      parts[g].shards.push_back(j);
      parts[g].partial_load.push_back(rest[j]);
      filled[g] += rest[j];
      rest[j] = 0.0;
      assigned[j] = 1;
    }
    if (!assigned[j]) {
      std::size_t g = 0;
      if (have_current && !prob.current.shards[j].empty())
        g = static_cast<std::size_t>(
            group_of[static_cast<std::size_t>(prob.current.shards[j][0].server)]);
      parts[g].shards.push_back(j);
      parts[g].partial_load.push_back(0.0);
    }
  }
  // 4. The sub-problems.
  const double lo = prob.lower(), hi = prob.upper();
  for (auto& p : parts) {
    auto& q = p.sub;
    q.load = p.partial_load;
    q.memory.resize(p.shards.size());
    q.max_memory = prob.max_memory;
    q.replication = prob.replication;
    q.epsilon = prob.epsilon;
    q.lower_bound = lo;
    q.upper_bound = hi;
    q.current.shards.resize(p.shards.size());
    for (std::size_t l = 0; l < p.shards.size(); ++l) {
      const std::size_t j = p.shards[l];
      q.memory[l] = prob.memory[j];
      if (!have_current) continue;
      for (const route& r : prob.current.shards[j])
        if (r.server >= p.first_server && r.server < p.first_server + q.servers)
          q.current.shards[l].push_back({r.server - p.first_server, r.fraction});
    }
  }
  return parts;
}

/// \brief Merges the parts' placements: r_ij = sum over parts of (partial load / l_j) times the
/// part's fraction, the replicas are the union. POP's code copies each part's fractions
/// unscaled, so a shard split over g groups gets fractions summing to g.
inline placement pop_merge(const problem& prob, const std::vector<pop_part>& parts,
                           const std::vector<placement>& results) {
  if (results.size() != parts.size())
    throw invalid_problem("load balancing: pop_merge needs one placement per part");
  placement out;
  out.shards.resize(prob.shards());
  for (std::size_t g = 0; g < parts.size(); ++g) {
    const pop_part& p = parts[g];
    if (results[g].shards.size() != p.shards.size())
      throw invalid_problem("load balancing: placement of part " + std::to_string(g) + " has " +
                            std::to_string(results[g].shards.size()) + " shards, expected " +
                            std::to_string(p.shards.size()));
    for (std::size_t l = 0; l < p.shards.size(); ++l) {
      const std::size_t j = p.shards[l];
      const double l_j = prob.load[j];
      // A zero-load shard lives in exactly one part: its fractions are taken as they are.
      const double scale = l_j > 0.0 ? p.partial_load[l] / l_j : 1.0;
      for (const route& r : results[g].shards[l]) {
        const std::int32_t server = r.server + p.first_server;
        bool merged = false;
        for (route& e : out.shards[j])
          if (e.server == server) {
            e.fraction += scale * r.fraction;
            merged = true;
          }
        if (!merged) out.shards[j].push_back({server, scale * r.fraction});
      }
    }
  }
  return out;
}

/// \brief POP over any solver: `solve_part(const problem&) -> lb_result`. Parts are solved one
/// after the other (POP's accounting for load balancing: the wall clock of the whole call). The
/// merged placement is checked against the full problem; a part without a solution makes the
/// result `no_solution` (or `infeasible`), naming the part. lb_result::pop has the per-part
/// statistics.
template <class SolvePart>
lb_result pop_solve(const problem& prob, int k, SolvePart&& solve_part) {
  const popalloc::detail::stopwatch clock;
  pop_report rep;
  std::vector<pop_part> parts = pop_split(prob, k);
  rep.split_seconds = clock.seconds();
  std::vector<placement> results(parts.size());
  lb_result out;
  for (std::size_t g = 0; g < parts.size(); ++g) {
    const popalloc::detail::stopwatch part_clock;
    lb_result r = solve_part(static_cast<const problem&>(parts[g].sub));
    rep.part_seconds.push_back(part_clock.seconds());
    rep.part_status.push_back(r.status);
    if (r.status == lb_status::no_solution || r.status == lb_status::infeasible) {
      out.status = r.status;
      out.message = "POP part " + std::to_string(g) + ": " + r.message;
      out.seconds = clock.seconds();
      out.pop = std::move(rep);
      return out;
    }
    results[g] = std::move(r.result);
  }
  const popalloc::detail::stopwatch merge_clock;
  out.result = pop_merge(prob, parts, results);
  rep.merge_seconds = merge_clock.seconds();
  out.seconds = clock.seconds();
  const check_report c = check(prob, out.result);
  out.status = c.feasible ? lb_status::balanced : lb_status::unbalanced;
  out.message = c.violation;
  out.pop = std::move(rep);
  return out;
}

}  // namespace popalloc::lb
