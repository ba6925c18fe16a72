// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The E-Store-style greedy baseline of POP's load-balancing experiment
/// (LoadBalancer.heuristicBalance), generalised to shards with several replicas.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <set>
#include <utility>
#include <vector>

#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/lb/checker.hpp"
#include "popalloc/lb/problem.hpp"

namespace popalloc::lb {

namespace detail {

/// \brief Per-shard routing in load units while a heuristic edits it, plus server totals.
struct load_routing {
  std::vector<std::vector<std::pair<std::int32_t, double>>> parts;  ///< (server, load) per shard
  std::vector<double> server_load;
  std::vector<double> server_memory;

  /// \brief Adds `amount` of shard j's load to server i (creating the replica if needed).
  void add(const problem& prob, std::size_t j, std::int32_t i, double amount) {
    for (auto& part : parts[j])
      if (part.first == i) {
        part.second += amount;
        server_load[static_cast<std::size_t>(i)] += amount;
        return;
      }
    parts[j].emplace_back(i, amount);
    server_load[static_cast<std::size_t>(i)] += amount;
    server_memory[static_cast<std::size_t>(i)] += prob.memory[j];
  }

  /// \brief Removes `amount` of shard j's load from server i; drops the replica when its part
  /// reaches zero (`keep_replica` false) so that its memory is freed.
  void remove(const problem& prob, std::size_t j, std::int32_t i, double amount,
              bool keep_replica = false) {
    auto& v = parts[j];
    for (std::size_t k = 0; k < v.size(); ++k)
      if (v[k].first == i) {
        const double take = std::min(amount, v[k].second);
        v[k].second -= take;
        server_load[static_cast<std::size_t>(i)] -= take;
        if (!keep_replica && v[k].second <= 0.0) {
          server_load[static_cast<std::size_t>(i)] -= v[k].second;  // exact zero
          server_memory[static_cast<std::size_t>(i)] -= prob.memory[j];
          v.erase(v.begin() + static_cast<std::ptrdiff_t>(k));
        }
        return;
      }
  }

  double part_on(std::size_t j, std::int32_t i) const {
    for (const auto& part : parts[j])
      if (part.first == i) return part.second;
    return 0.0;
  }

  bool holds(std::size_t j, std::int32_t i) const {
    for (const auto& part : parts[j])
      if (part.first == i) return true;
    return false;
  }

  /// \brief The placement: fractions = part / sum of parts. Replicas without load are dropped
  /// (POP's benchmark keeps x_ij = [r_ij > 0]); a zero-load shard keeps its first replica.
  placement to_placement() const {
    placement out;
    out.shards.resize(parts.size());
    for (std::size_t j = 0; j < parts.size(); ++j) {
      double sum = 0.0;
      for (const auto& part : parts[j]) sum += part.second;
      for (std::size_t k = 0; k < parts[j].size(); ++k) {
        if (sum > 0.0 && !(parts[j][k].second > 0.0)) continue;  // idle copy: dropped
        const double f = sum > 0.0 ? parts[j][k].second / sum : (k == 0 ? 1.0 : 0.0);
        if (sum <= 0.0 && k > 0) continue;
        out.shards[j].push_back({parts[j][k].first, f});
      }
    }
    return out;
  }
};

/// \brief Routes every shard's load over its current replicas (previous fractions, or equal
/// shares when they are all 0); a shard without replicas goes to the least-loaded server with
/// memory to spare (a new replica).
inline load_routing initial_routing(const problem& prob) {
  load_routing st;
  const std::size_t n = prob.server_count(), s = prob.shards();
  st.parts.resize(s);
  st.server_load.assign(n, 0.0);
  st.server_memory.assign(n, 0.0);
  std::vector<std::size_t> homeless;
  for (std::size_t j = 0; j < s; ++j) {
    const std::vector<route>* cur = prob.current.shards.empty() ? nullptr : &prob.current.shards[j];
    if (cur == nullptr || cur->empty()) {
      homeless.push_back(j);
      continue;
    }
    double sum = 0.0;
    for (const route& r : *cur) sum += r.fraction;
    for (const route& r : *cur) {
      const double f = sum > 0.0 ? r.fraction / sum : 1.0 / static_cast<double>(cur->size());
      st.parts[j].emplace_back(r.server, prob.load[j] * f);
      st.server_load[static_cast<std::size_t>(r.server)] += prob.load[j] * f;
      st.server_memory[static_cast<std::size_t>(r.server)] += prob.memory[j];
    }
  }
  // Heaviest homeless shards first, each to the least-loaded server that has memory for it.
  std::sort(homeless.begin(), homeless.end(), [&](std::size_t a, std::size_t b) {
    return prob.load[a] != prob.load[b] ? prob.load[a] > prob.load[b] : a < b;
  });
  for (const std::size_t j : homeless) {
    std::int32_t best = -1;
    for (std::size_t i = 0; i < n; ++i) {
      if (st.server_memory[i] + prob.memory[j] > prob.max_memory) continue;
      if (best < 0 || st.server_load[i] < st.server_load[static_cast<std::size_t>(best)])
        best = static_cast<std::int32_t>(i);
    }
    if (best < 0) best = 0;  // no memory anywhere: the checker reports the violation
    st.add(prob, j, best, prob.load[j]);
  }
  return st;
}

/// \brief Fills an lb_result from a routing, with the checker's verdict.
inline lb_result finish(const problem& prob, const load_routing& st, double seconds) {
  lb_result out;
  out.result = st.to_placement();
  const check_report rep = check(prob, out.result);
  out.status = rep.feasible ? lb_status::balanced : lb_status::unbalanced;
  out.message = rep.violation;
  out.seconds = seconds;
  return out;
}

}  // namespace detail

/// \brief POP's E-Store-style heuristic: while the most-loaded server is above the upper bound,
/// move its largest shard (its whole part on that server) to the least-loaded server if that
/// server stays within the upper bound (and has memory for it); each overloaded server is
/// visited once, largest shards first. It never splits a shard and ignores the lower bound, so
/// it can fail to balance (a shard heavier than the upper bound cannot be placed anywhere): the
/// result is then `unbalanced` with the checker's first violation. A current placement that
/// check() finds feasible is returned as it is.
inline lb_result solve_greedy(const problem& prob) {
  const popalloc::detail::stopwatch clock;
  prob.validate();
  if (auto kept = keep_balanced_current(prob, clock.seconds())) return *kept;
  detail::load_routing st = detail::initial_routing(prob);
  const std::size_t n = prob.server_count();
  const double hi = prob.upper();
  std::vector<std::vector<std::size_t>> on_server(n);
  for (std::size_t j = 0; j < st.parts.size(); ++j)
    for (const auto& part : st.parts[j])
      on_server[static_cast<std::size_t>(part.first)].push_back(j);
  std::set<std::pair<double, std::int32_t>> by_load;
  for (std::size_t i = 0; i < n; ++i)
    by_load.emplace(st.server_load[i], static_cast<std::int32_t>(i));
  std::vector<char> visited(n, 0);
  while (!by_load.empty()) {
    const auto top = std::prev(by_load.end());
    if (top->first <= hi) break;
    const std::int32_t o = top->second;
    by_load.erase(top);
    visited[static_cast<std::size_t>(o)] = 1;
    auto& mine = on_server[static_cast<std::size_t>(o)];
    std::sort(mine.begin(), mine.end(), [&](std::size_t a, std::size_t b) {
      const double pa = st.part_on(a, o), pb = st.part_on(b, o);
      return pa != pb ? pa > pb : a < b;
    });
    for (const std::size_t j : mine) {
      if (st.server_load[static_cast<std::size_t>(o)] <= hi) break;
      const double part = st.part_on(j, o);
      if (!(part > 0.0) || by_load.empty()) continue;
      const auto least = by_load.begin();
      const std::int32_t u = least->second;
      const auto ui = static_cast<std::size_t>(u);
      const bool has_replica = st.holds(j, u);
      if (st.server_load[ui] + part <= hi &&
          (has_replica || st.server_memory[ui] + prob.memory[j] <= prob.max_memory)) {
        by_load.erase(least);
        st.remove(prob, j, o, part);
        st.add(prob, j, u, part);
        by_load.emplace(st.server_load[ui], u);
      }
    }
  }
  const double seconds = clock.seconds();
  return detail::finish(prob, st, seconds);
}

}  // namespace popalloc::lb
