// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The fast shard placement solver: the MILP's LP relaxation solved by popalloc's
/// price-discovery core, then rounding and repair to an integral, balanced placement.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/dense_problem.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/dual_solver.hpp"
#include "popalloc/error.hpp"
#include "popalloc/lb/checker.hpp"
#include "popalloc/lb/greedy.hpp"
#include "popalloc/lb/keep_flow.hpp"
#include "popalloc/lb/problem.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"
#include "popalloc/utility/linear.hpp"

namespace popalloc::lb {

/// \brief Where solve_price() is when it calls price_options::callback.
enum class stage : std::uint8_t {
  lp = 0,      ///< solving the LP relaxation (after every dual evaluation)
  repair = 1,  ///< the LP is done (or was not needed); rounding and repair follow
};

/// \brief Stable lower-case name of a stage: "lp" or "repair".
inline const char* to_string(stage s) noexcept {
  switch (s) {
    case stage::lp:
      return "lp";
    case stage::repair:
      return "repair";
  }
  return "unknown";
}

/// \brief How solve_price() solves the LP relaxation.
enum class relaxation_method : std::uint8_t {
  /// The keep LP (docs/load-balancing.md), exactly, by a greedy augmenting flow over the servers
  /// that hold the moving shards, with the server prices that certify it.
  keep_flow = 0,
  /// The relaxation over holding servers and receivers as a dense problem for popalloc::solve,
  /// the price-discovery core (to its relative_gap).
  core = 1,
};

/// \brief Stable lower-case name of a relaxation method: "flow" or "core".
inline const char* to_string(relaxation_method m) noexcept {
  return m == relaxation_method::keep_flow ? "flow" : "core";
}

/// \brief What price_options::callback receives.
struct progress {
  lb::stage stage = lb::stage::lp;
  std::size_t lp_shards = 0;   ///< shards in the LP
  std::size_t lp_servers = 0;  ///< servers (columns) in the LP
  int lp_iterations = 0;       ///< dual evaluations of the LP so far (0 with keep_flow)
  double lp_relative_gap = 0.0;
  double elapsed_seconds = 0.0;  ///< since solve_price() started
};

/// \brief Progress callback of solve_price(); returning callback_action::stop during the LP ends
/// the LP relaxation early (price_report::lp_status interrupted). Rounding and repair always run,
/// so a placement is always returned.
using progress_callback = std::function<callback_action(const progress&)>;

/// \brief Options of solve_price().
struct price_options {
  relaxation_method relaxation = relaxation_method::keep_flow;
  /// The core's options of the LP relaxation: relative_gap, max_iterations (dual evaluations),
  /// threads (0: OpenMP default) and time_limit_seconds (of each LP relaxation; infinity: none).
  /// keep_flow is exact and uses only relative_gap, as the gap its certificate must meet.
  solver_options solver;
  /// Value of routing a unit fraction of a shard to a server that already holds it, on top of
  /// the value 1 of routing it anywhere (see docs/load-balancing.md: any value > 0 gives the
  /// LP relaxation's optimum; 1 keeps the stay-put signal at the size of the objective). Core
  /// only.
  double stay_bonus = 1.0;
  /// The LP's columns are the servers holding LP shards plus receivers: the least-loaded other
  /// servers, at least `min_receivers` of them and enough that their spare capacity is
  /// `receiver_factor` x the LP load the holding servers have no room for
  /// (docs/load-balancing.md: exact while a receiver keeps slack, which price_report::lp_exact
  /// says). Core only: the keep LP needs no receivers.
  std::size_t min_receivers = 16;
  double receiver_factor = 2.0;
  /// keep_flow: how far into the upper half of the band the rounding's plan fills the servers
  /// that keep shards, from 0 (default: to the mean load, the band's centre, which leaves the
  /// next round's loads room both ways) to 1 (to the upper bound: the relaxation's own optimum).
  /// The reported relaxation (price_report) is the exact one either way.
  double keep_fill = 0.0;
  /// The repair frees a replica that carries a small part (moving the part onto the shard's
  /// other replicas) only on servers whose memory is at least this fraction of max_memory. Below
  /// it the spare replicas stay: they cost no move now and let the next round re-route load
  /// without moving data. 0 frees every replica it can (one replica per shard where possible);
  /// a repair that the kept replicas leave unbalanced runs again with 0. Must be in [0, 1].
  double consolidate_memory = 0.75;
  /// Called as `progress` says (keep_flow: once at stage lp, when it is solved); with pop_solve()
  /// once per part's solve, one part after another.
  progress_callback callback;
};

namespace detail {

/// \brief A shard whose load must find a place, with the amount still unplaced.
struct residual {
  std::size_t shard;
  double amount;
};

/// \brief Servers ordered by load with memory to spare for a shard of `memory` size (the
/// worst-fit order used by the repair).
inline std::int32_t least_loaded_with_memory(
    const problem& prob, const load_routing& st,
    const std::set<std::pair<double, std::int32_t>>& by_load, std::size_t j, std::int32_t exclude) {
  for (const auto& e : by_load) {
    if (e.second == exclude) continue;
    const auto i = static_cast<std::size_t>(e.second);
    if (st.holds(j, e.second) || st.server_memory[i] + prob.memory[j] <= prob.max_memory)
      return e.second;
  }
  return -1;
}

/// \brief Places residual loads (largest first): on the shard's existing replicas while they
/// stay within the upper bound (free), otherwise on the least-loaded server with memory, whole
/// if it fits under the upper bound, else filling that server to the bound and continuing
/// (a split shard: one new replica per piece).
inline bool place_residuals(const problem& prob, load_routing& st, std::vector<residual> work,
                            std::string& why) {
  const double hi = prob.upper();
  std::sort(work.begin(), work.end(), [](const residual& a, const residual& b) {
    return a.amount != b.amount ? a.amount > b.amount : a.shard < b.shard;
  });
  std::set<std::pair<double, std::int32_t>> by_load;
  for (std::size_t i = 0; i < st.server_load.size(); ++i)
    by_load.emplace(st.server_load[i], static_cast<std::int32_t>(i));
  auto update = [&](std::int32_t i, double before) {
    by_load.erase({before, i});
    by_load.emplace(st.server_load[static_cast<std::size_t>(i)], i);
  };
  for (const residual& w : work) {
    double left = w.amount;
    const std::size_t j = w.shard;
    // Existing replicas first: no data moves.
    for (std::size_t k = 0; k < st.parts[j].size() && left > 0.0; ++k) {
      const std::int32_t i = st.parts[j][k].first;
      const double before = st.server_load[static_cast<std::size_t>(i)];
      const double room = hi - before;
      if (room <= 0.0) continue;
      const double take = std::min(room, left);
      st.add(prob, j, i, take);
      update(i, before);
      left -= take;
    }
    while (left > 1e-12 * hi) {
      const std::int32_t i = least_loaded_with_memory(prob, st, by_load, j, -1);
      if (i < 0) {
        why = "no server has memory left for shard " + std::to_string(j);
        return false;
      }
      const double before = st.server_load[static_cast<std::size_t>(i)];
      const double room = hi - before;
      if (room <= 0.0) {
        why = "no server has load room left for shard " + std::to_string(j);
        return false;
      }
      const double take = std::min(room, left);
      st.add(prob, j, i, take);
      update(i, before);
      left -= take;
    }
  }
  return true;
}

/// \brief Room under the upper bound `hi` on the servers other than `a` that hold shard j.
inline double room_on_other_replicas(const load_routing& st, std::size_t j, std::int32_t a,
                                     double hi) {
  double room = 0.0;
  for (const auto& e : st.parts[j])
    if (e.first != a) room += std::max(0.0, hi - st.server_load[static_cast<std::size_t>(e.first)]);
  return room;
}

/// \brief Moves shard j's part on server `a` onto its other replicas, each filled at most to the
/// upper bound `hi`, and drops the replica on `a` (no data moves). The caller has checked that
/// room_on_other_replicas() covers the part.
inline void spread_to_other_replicas(const problem& prob, load_routing& st, std::size_t j,
                                     std::int32_t a, double hi) {
  double left = st.part_on(j, a);
  st.remove(prob, j, a, left);
  const auto replicas = st.parts[j];
  for (const auto& e : replicas) {
    if (left <= 0.0) break;
    const double room = hi - st.server_load[static_cast<std::size_t>(e.first)];
    const double take = std::min(left, std::max(0.0, room));
    if (take <= 0.0) continue;
    st.add(prob, j, e.first, take);
    left -= take;
  }
}

/// \brief Frees memory on server i (below the lower bound, full) so that it can take a part:
/// the smallest part on i whose shard's other replicas have room for it moves there (free),
/// else the smallest part on i moves whole to the least-loaded server with memory and room
/// (one new replica). Returns the number of new replicas (0 or 1), or -1 when neither is
/// possible.
inline int free_memory_on(const problem& prob, load_routing& st, std::size_t i,
                          const std::vector<std::size_t>& held) {
  const auto si = static_cast<std::int32_t>(i);
  const double hi = prob.upper();
  const std::size_t none = st.parts.size();
  std::size_t shift = none, move = none;
  double shift_part = 0.0, move_part = 0.0;
  for (const std::size_t j : held) {
    if (!st.holds(j, si)) continue;
    const double part = st.part_on(j, si);
    const bool free = st.parts[j].size() >= 2 && room_on_other_replicas(st, j, si, hi) >= part;
    std::size_t& pick = free ? shift : move;
    double& pick_part = free ? shift_part : move_part;
    if (pick == none || part < pick_part) {
      pick = j;
      pick_part = part;
    }
  }
  if (shift != none) {
    spread_to_other_replicas(prob, st, shift, si, hi);
    return 0;
  }
  if (move == none) return -1;
  std::size_t target = st.server_load.size();
  for (std::size_t t = 0; t < st.server_load.size(); ++t) {
    if (t == i || st.holds(move, static_cast<std::int32_t>(t))) continue;
    if (st.server_memory[t] + prob.memory[move] > prob.max_memory) continue;
    if (hi - st.server_load[t] < move_part) continue;
    if (target == st.server_load.size() || st.server_load[t] < st.server_load[target]) target = t;
  }
  if (target == st.server_load.size()) return -1;
  st.remove(prob, move, si, move_part);
  st.add(prob, move, static_cast<std::int32_t>(target), move_part);
  return 1;
}

/// \brief Raises every server to the lower bound by pulling load from the most-loaded servers:
/// first by shifting routing of a shard the server already holds (free), else by moving a whole
/// part that fits (one new replica, the donor's copy is dropped), else a partial part (one new
/// replica). A server whose memory is full first frees a replica (free_memory_on, at most
/// twice per server, so that freeing and refilling cannot cycle). Returns the number of new
/// replicas it created, or -1 when stuck.
inline std::int64_t raise_to_lower_bound(const problem& prob, load_routing& st, std::string& why) {
  const std::size_t n = prob.server_count();
  const double lo = prob.lower(), hi = prob.upper(), mean = prob.mean_load();
  const double slack = 1e-9 * mean;
  std::vector<std::vector<std::size_t>> on_server(n);
  for (std::size_t j = 0; j < st.parts.size(); ++j)
    for (const auto& part : st.parts[j])
      on_server[static_cast<std::size_t>(part.first)].push_back(j);
  std::int64_t added = 0;
  std::vector<int> memory_freed(n, 0);
  const std::size_t max_steps = 4 * (n + st.parts.size()) + 16;
  for (std::size_t step = 0; step < max_steps; ++step) {
    std::size_t i = 0;
    for (std::size_t k = 1; k < n; ++k)
      if (st.server_load[k] < st.server_load[i]) i = k;
    if (st.server_load[i] >= lo - slack) return added;
    const auto si = static_cast<std::int32_t>(i);
    const double need = lo - st.server_load[i];    // must receive at least this
    const double want = mean - st.server_load[i];  // aim for the mean
    // 1. Free: a shard on i that also lives on a server above the lower bound.
    bool done = false;
    for (const std::size_t j : on_server[i]) {
      if (!st.holds(j, si)) continue;
      for (const auto& part : st.parts[j]) {
        const auto d = static_cast<std::size_t>(part.first);
        if (d == i || part.second <= 0.0) continue;
        const double give = std::min({part.second, st.server_load[d] - lo, want});
        if (give <= slack) continue;
        const std::int32_t sd = part.first;
        st.remove(prob, j, sd, give, true);
        st.add(prob, j, si, give);
        done = true;
        break;
      }
      if (done) break;
    }
    if (done) continue;
    // 2. Donors by decreasing load: a whole part within [need, room], else a partial part.
    std::vector<std::size_t> donors(n);
    for (std::size_t k = 0; k < n; ++k) donors[k] = k;
    std::sort(donors.begin(), donors.end(), [&](std::size_t a, std::size_t b) {
      return st.server_load[a] != st.server_load[b] ? st.server_load[a] > st.server_load[b] : a < b;
    });
    const double room = hi - st.server_load[i];
    for (const std::size_t d : donors) {
      const double spare = st.server_load[d] - lo;
      if (d == i || spare <= slack) break;
      const auto sd = static_cast<std::int32_t>(d);
      std::size_t best_whole = st.parts.size(), best_partial = st.parts.size();
      double best_whole_gap = std::numeric_limits<double>::infinity(), best_partial_part = 0.0;
      for (const std::size_t j : on_server[d]) {
        const double part = st.part_on(j, sd);
        if (part <= 0.0 || st.holds(j, si)) continue;
        if (st.server_memory[i] + prob.memory[j] > prob.max_memory) continue;
        if (part >= need && part <= std::min(room, spare)) {
          const double gap = std::abs(part - want);
          if (gap < best_whole_gap) {
            best_whole_gap = gap;
            best_whole = j;
          }
        }
        if (part > best_partial_part) {
          best_partial_part = part;
          best_partial = j;
        }
      }
      if (best_whole < st.parts.size()) {
        const double part = st.part_on(best_whole, sd);
        st.remove(prob, best_whole, sd, part);
        st.add(prob, best_whole, si, part);
        on_server[i].push_back(best_whole);
        ++added;
        done = true;
        break;
      }
      if (best_partial < st.parts.size()) {
        const double give = std::min({best_partial_part, spare, want, room});
        if (give <= slack) continue;
        st.remove(prob, best_partial, sd, give);
        st.add(prob, best_partial, si, give);
        on_server[i].push_back(best_partial);
        ++added;
        done = true;
        break;
      }
    }
    if (!done && memory_freed[i] < 2) {
      const int moved = free_memory_on(prob, st, i, on_server[i]);
      if (moved >= 0) {
        ++memory_freed[i];
        added += moved;
        continue;
      }
    }
    if (!done) {
      why = "cannot raise server " + std::to_string(i) + " to the lower bound";
      return -1;
    }
  }
  why = "lower-bound repair did not finish";
  return -1;
}

/// \brief Frees replicas without moving data: a shard's smallest part moves onto the shard's
/// other replicas when they have room under the upper bound and its server stays above the
/// lower bound. Replicas without load always go; one with load only from a server whose memory
/// is at least `memory_fraction` x max_memory, so that replicas cannot pile up until memory is
/// full.
inline void consolidate(const problem& prob, load_routing& st, double memory_fraction) {
  const double lo = prob.lower(), hi = prob.upper();
  const double keep_below = memory_fraction * prob.max_memory;
  for (std::size_t j = 0; j < st.parts.size(); ++j) {
    while (st.parts[j].size() >= 2) {
      auto& v = st.parts[j];
      std::size_t small = 0;
      for (std::size_t k = 1; k < v.size(); ++k)
        if (v[k].second < v[small].second) small = k;
      const std::int32_t a = v[small].first;
      const double part = v[small].second;
      if (part > 0.0 && st.server_memory[static_cast<std::size_t>(a)] < keep_below) break;
      if (st.server_load[static_cast<std::size_t>(a)] - part < lo) break;
      if (room_on_other_replicas(st, j, a, hi) < part) break;
      spread_to_other_replicas(prob, st, j, a, hi);
    }
  }
}

/// \brief The LP shards: those with a replica on a server above the upper bound (counting only
/// the shards that have a home) and those without replicas, each with load > 0.
inline std::vector<std::size_t> overloaded_shards(const problem& prob, const load_routing& st) {
  const std::size_t n = prob.server_count(), s = prob.shards();
  const double hi = prob.upper();
  // Which shards are homeless (initial_routing placed them; they belong to the LP anyway).
  std::vector<char> in_lp(s, 0);
  for (std::size_t j = 0; j < s; ++j)
    if (prob.current.shards.empty() || prob.current.shards[j].empty()) in_lp[j] = 1;
  std::vector<double> home_load(n, 0.0);  // loads before homeless shards were placed
  for (std::size_t j = 0; j < s; ++j)
    if (!in_lp[j])
      for (const auto& part : st.parts[j])
        home_load[static_cast<std::size_t>(part.first)] += part.second;
  for (std::size_t j = 0; j < s; ++j)
    if (!in_lp[j] && prob.load[j] > 0.0)
      for (const auto& part : st.parts[j])
        if (home_load[static_cast<std::size_t>(part.first)] > hi) in_lp[j] = 1;
  std::vector<std::size_t> lp_shards;
  for (std::size_t j = 0; j < s; ++j)
    if (in_lp[j] && prob.load[j] > 0.0) lp_shards.push_back(j);
  return lp_shards;
}

/// \brief The servers that are the LP's columns, in increasing order.
struct lp_columns {
  std::vector<std::int32_t> server_of;  ///< server of every column
  std::vector<std::int32_t> column_of;  ///< column of every server, -1 when none
  std::vector<char> is_home;            ///< per server: holds an LP shard
  bool every_server = false;            ///< every server is a column
};

/// \brief Columns: every server holding an LP shard, plus receivers (the servers with the most
/// spare capacity, at least min_receivers of them) until they can hold receiver_factor x what
/// the holding servers cannot. The restriction loses nothing when a receiver keeps slack (price
/// 0): every missing option has value 1 and a price >= 0, so the restricted dual stays feasible
/// for the full LP (price_report::lp_exact).
inline lp_columns choose_columns(const problem& prob, const price_options& opt,
                                 const load_routing& st,
                                 const std::vector<std::size_t>& lp_shards) {
  const std::size_t n = prob.server_count();
  const double hi = prob.upper();
  lp_columns cols;
  cols.column_of.assign(n, -1);
  auto& column_of = cols.column_of;
  auto& server_of = cols.server_of;
  double lp_load = 0.0, home_room = 0.0;
  for (const std::size_t j : lp_shards) {
    lp_load += prob.load[j];
    if (!prob.current.shards.empty())
      for (const route& c : prob.current.shards[j])
        if (column_of[static_cast<std::size_t>(c.server)] < 0) {
          column_of[static_cast<std::size_t>(c.server)] = 0;
          server_of.push_back(c.server);
        }
  }
  for (const std::int32_t i : server_of)
    home_room += std::max(0.0, hi - st.server_load[static_cast<std::size_t>(i)]);
  // What the holding servers cannot keep must go to receivers. Asking the columns for a
  // multiple of the whole LP load instead made every server a column in every round at
  // 16384 x 2048: the dense Newton model had 2,048 prices where 328 sufficed (round 1 of
  // POP's benchmark, 12x longer).
  const double overflow = std::max(0.0, lp_load - home_room);
  double receiver_room = 0.0;
  cols.is_home.assign(n, 0);
  for (const std::int32_t i : server_of) cols.is_home[static_cast<std::size_t>(i)] = 1;
  std::vector<std::int32_t> others;
  for (std::size_t i = 0; i < n; ++i)
    if (column_of[i] < 0) others.push_back(static_cast<std::int32_t>(i));
  std::sort(others.begin(), others.end(), [&](std::int32_t x, std::int32_t y) {
    const double lx = st.server_load[static_cast<std::size_t>(x)];
    const double ly = st.server_load[static_cast<std::size_t>(y)];
    return lx != ly ? lx < ly : x < y;
  });
  std::size_t taken = 0;
  for (const std::int32_t i : others) {
    if (taken >= opt.min_receivers && receiver_room >= opt.receiver_factor * overflow) break;
    server_of.push_back(i);
    receiver_room += std::max(0.0, hi - st.server_load[static_cast<std::size_t>(i)]);
    ++taken;
  }
  cols.every_server = taken == others.size();
  std::sort(server_of.begin(), server_of.end());
  for (std::size_t c = 0; c < server_of.size(); ++c)
    column_of[static_cast<std::size_t>(server_of[c])] = static_cast<std::int32_t>(c);
  return cols;
}

/// \brief The LP relaxation over `cols` (see solve_price), scaled by the mean load.
inline popalloc::dense_problem<float> relaxation(const problem& prob, const price_options& opt,
                                                 const load_routing& st,
                                                 const std::vector<std::size_t>& lp_shards,
                                                 const lp_columns& cols) {
  const double mean = prob.mean_load(), hi = prob.upper();
  const auto m = static_cast<Eigen::Index>(lp_shards.size());
  const auto n_cols = static_cast<Eigen::Index>(cols.server_of.size());
  popalloc::dense_problem<float> lp;
  lp.throughput.setOnes(m, n_cols);
  lp.job_demand.resize(m);
  lp.capacity.resize(n_cols);
  for (Eigen::Index c = 0; c < n_cols; ++c)
    lp.capacity[c] = std::max(0.0, hi - st.server_load[static_cast<std::size_t>(
                                            cols.server_of[static_cast<std::size_t>(c)])]) /
                     mean;
  for (Eigen::Index r = 0; r < m; ++r) {
    const std::size_t j = lp_shards[static_cast<std::size_t>(r)];
    lp.job_demand[r] = static_cast<float>(prob.load[j] / mean);
    if (!prob.current.shards.empty())
      for (const route& c : prob.current.shards[j])
        lp.throughput(r, cols.column_of[static_cast<std::size_t>(c.server)]) =
            static_cast<float>(1.0 + opt.stay_bonus);
  }
  return lp;
}

/// \brief Solves the relaxation with the core (progress forwarded to opt.callback) and records
/// its statistics in `rep`: iterations, gap, status, lp_exact and the moves bound.
inline popalloc::solve_result solve_relaxation(const popalloc::dense_problem<float>& lp,
                                               const price_options& opt, const lp_columns& cols,
                                               const popalloc::detail::stopwatch& clock,
                                               price_report& rep) {
  popalloc::progress_callback forward;
  if (opt.callback)
    forward = [&](const popalloc::progress& p) {
      progress step;
      step.stage = stage::lp;
      step.lp_shards = rep.lp_shards;
      step.lp_servers = rep.lp_servers;
      step.lp_iterations = p.iteration;
      step.lp_relative_gap = p.relative_gap;
      step.elapsed_seconds = clock.seconds();
      return opt.callback(step);
    };
  const popalloc::detail::stopwatch lp_clock;
  popalloc::solve_result sol =
      popalloc::solve(lp, popalloc::utility::linear{}, opt.solver, forward);
  rep.lp_seconds = lp_clock.seconds();
  rep.lp_iterations = sol.iterations;
  rep.lp_relative_gap = sol.relative_gap;
  rep.lp_status = sol.status;
  rep.lp_exact = cols.every_server;
  for (Eigen::Index c = 0; c < lp.capacity.size() && !rep.lp_exact; ++c)
    if (!cols.is_home[static_cast<std::size_t>(cols.server_of[static_cast<std::size_t>(c)])] &&
        sol.usage[c] < lp.capacity[c] * (1.0 - 1e-6))
      rep.lp_exact = true;
  // Objective = sum_j (1 + b * home_j): moves bound = m - (bound - m) / b, clipped at 0.
  const auto m = static_cast<double>(lp.job_demand.size());
  rep.lp_moves_bound = std::max(0.0, m - (sol.dual_bound - m) / opt.stay_bonus);
  return sol;
}

/// \brief What the relaxation keeps of every LP shard on the servers that hold it: LP shard r's
/// entries are [offset[r], offset[r + 1]).
struct home_shares {
  std::vector<std::size_t> offset{0};
  std::vector<std::int32_t> server;
  std::vector<double> fraction;
};

/// \brief The home shares in the core's allocation of the relaxation over `cols`.
inline home_shares shares_of(const problem& prob, const std::vector<std::size_t>& lp_shards,
                             const lp_columns& cols, const popalloc::solve_result& sol) {
  home_shares out;
  const auto& a = sol.allocation;
  for (std::size_t r = 0; r < lp_shards.size(); ++r) {
    const std::size_t j = lp_shards[r];
    for (auto k = a.job_offset[r]; k < a.job_offset[r + 1]; ++k) {
      const auto server =
          cols.server_of[static_cast<std::size_t>(a.option[static_cast<std::size_t>(k)])];
      if (!prob.current.shards.empty() && prob.current.holds(j, server)) {
        out.server.push_back(server);
        out.fraction.push_back(a.fraction[static_cast<std::size_t>(k)]);
      }
    }
    out.offset.push_back(out.server.size());
  }
  return out;
}

/// \brief Rounding: the LP's home shares of multi-replica shards are kept as they are; on every
/// server the single-replica shards' LP load is re-kept whole in order of their LP share, at
/// most one partially, within that budget. What is not kept goes to `leave`.
inline void round_relaxation(const problem& prob, load_routing& st,
                             const std::vector<std::size_t>& lp_shards, const home_shares& kept,
                             std::vector<residual>& leave) {
  const std::size_t n = prob.server_count(), s = prob.shards();
  const double mean = prob.mean_load();
  std::vector<double> home_share(s, 0.0);
  std::vector<std::vector<std::size_t>> single_home(n);
  std::vector<double> budget(n, 0.0);
  for (std::size_t r = 0; r < lp_shards.size(); ++r) {
    const std::size_t j = lp_shards[r];
    const bool single = !prob.current.shards.empty() && prob.current.shards[j].size() == 1;
    double share = 0.0;
    for (std::size_t k = kept.offset[r]; k < kept.offset[r + 1]; ++k) {
      const std::int32_t server = kept.server[k];
      const double f = kept.fraction[k];
      if (single)
        budget[static_cast<std::size_t>(server)] += f * prob.load[j];
      else
        st.add(prob, j, server, f * prob.load[j]);
      share += f;
    }
    if (single) {
      home_share[j] = share;
      single_home[static_cast<std::size_t>(prob.current.shards[j][0].server)].push_back(j);
    } else if (share < 1.0) {
      leave.push_back({j, prob.load[j] * (1.0 - share)});
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    auto& c = single_home[i];
    std::sort(c.begin(), c.end(), [&](std::size_t x, std::size_t y) {
      if (home_share[x] != home_share[y]) return home_share[x] > home_share[y];
      return prob.load[x] != prob.load[y] ? prob.load[x] < prob.load[y] : x < y;
    });
    double left = budget[i] * (1.0 + 1e-12);
    std::vector<std::size_t> skipped;
    for (const std::size_t j : c) {
      if (prob.load[j] <= left) {
        st.add(prob, j, static_cast<std::int32_t>(i), prob.load[j]);
        left -= prob.load[j];
      } else {
        skipped.push_back(j);
      }
    }
    for (std::size_t k = 0; k < skipped.size(); ++k) {
      const std::size_t j = skipped[k];
      const double keep = k == 0 ? std::max(0.0, std::min(left, prob.load[j])) : 0.0;
      if (keep > 1e-12 * mean) st.add(prob, j, static_cast<std::int32_t>(i), keep);
      if (prob.load[j] - keep > 0.0) leave.push_back({j, prob.load[j] - keep});
    }
  }
}

/// \brief The keep LP of the LP shards over the servers that hold them (`server_of` names each
/// column's server), in the units of the load, with each server's room measured up to `level`.
inline keep_lp keep_problem(const problem& prob, const load_routing& st,
                            const std::vector<std::size_t>& lp_shards, double level,
                            std::vector<std::int32_t>& server_of) {
  std::vector<std::int32_t> column_of(prob.server_count(), -1);
  keep_lp lp;
  lp.edge_offset.push_back(0);
  for (const std::size_t j : lp_shards) {
    lp.load.push_back(prob.load[j]);
    if (!prob.current.shards.empty())
      for (const route& c : prob.current.shards[j]) {
        auto& column = column_of[static_cast<std::size_t>(c.server)];
        if (column < 0) {
          column = static_cast<std::int32_t>(server_of.size());
          server_of.push_back(c.server);
          lp.room.push_back(
              std::max(0.0, level - st.server_load[static_cast<std::size_t>(c.server)]));
        }
        lp.edge_column.push_back(column);
      }
    lp.edge_offset.push_back(lp.edge_column.size());
  }
  return lp;
}

/// \brief Records the relaxation's exact optimum and certificate in `rep` (progress forwarded to
/// opt.callback once): the keep LP with rooms up to the upper bound.
inline void report_keep_relaxation(const problem& prob, const price_options& opt,
                                   const load_routing& st,
                                   const std::vector<std::size_t>& lp_shards,
                                   const popalloc::detail::stopwatch& clock, price_report& rep) {
  std::vector<std::int32_t> server_of;
  const keep_solution sol =
      solve_keep_lp(keep_problem(prob, st, lp_shards, prob.upper(), server_of));
  rep.lp_servers = server_of.size();
  rep.lp_iterations = 0;
  const double scale = std::max(std::abs(sol.objective), std::abs(sol.bound));
  rep.lp_relative_gap = scale > 0.0 ? (sol.bound - sol.objective) / scale : 0.0;
  rep.lp_status = rep.lp_relative_gap <= opt.solver.relative_gap ? solve_status::converged
                                                                 : solve_status::stalled;
  // The servers' room adds up to at least the LP load, so what leaves always fits: the keep LP
  // is the whole relaxation.
  rep.lp_exact = true;
  rep.lp_moves_bound = std::max(0.0, static_cast<double>(lp_shards.size()) - sol.bound);
  if (opt.callback) {
    progress step;
    step.lp_shards = rep.lp_shards;
    step.lp_servers = rep.lp_servers;
    step.lp_relative_gap = rep.lp_relative_gap;
    step.elapsed_seconds = clock.seconds();
    opt.callback(step);
  }
}

/// \brief The home shares the rounding starts from: the keep LP's optimum with rooms up to
/// opt.keep_fill of the way from the mean to the upper bound (1: the relaxation's optimum).
inline home_shares plan_keep(const problem& prob, const price_options& opt, const load_routing& st,
                             const std::vector<std::size_t>& lp_shards) {
  const double level = prob.mean_load() + opt.keep_fill * (prob.upper() - prob.mean_load());
  std::vector<std::int32_t> server_of;
  const keep_lp lp = keep_problem(prob, st, lp_shards, level, server_of);
  const keep_solution sol = solve_keep_lp(lp);
  home_shares out;
  for (std::size_t r = 0; r < lp_shards.size(); ++r) {
    for (std::size_t e = lp.edge_offset[r]; e < lp.edge_offset[r + 1]; ++e) {
      if (sol.kept[e] <= 0.0) continue;
      out.server.push_back(server_of[static_cast<std::size_t>(lp.edge_column[e])]);
      out.fraction.push_back(sol.kept[e] / lp.load[r]);
    }
    out.offset.push_back(out.server.size());
  }
  return out;
}

/// \brief Steps 2 and 3 of solve_price for the LP shards: they leave the routing, the LP
/// relaxation places them, the rounding keeps what it can and the rest goes to `leave`.
inline void relax_and_round(const problem& prob, const price_options& opt, load_routing& st,
                            const std::vector<std::size_t>& lp_shards,
                            const popalloc::detail::stopwatch& clock, price_report& rep,
                            std::vector<residual>& leave) {
  // Take the LP shards out of the routing; what stays is fixed.
  for (const std::size_t j : lp_shards) {
    const bool homeless = prob.current.shards.empty() || prob.current.shards[j].empty();
    auto parts = st.parts[j];
    for (const auto& part : parts) st.remove(prob, j, part.first, part.second, !homeless);
  }
  if (opt.relaxation == relaxation_method::keep_flow) {
    const popalloc::detail::stopwatch lp_clock;
    report_keep_relaxation(prob, opt, st, lp_shards, clock, rep);
    const home_shares plan = plan_keep(prob, opt, st, lp_shards);
    rep.lp_seconds = lp_clock.seconds();
    round_relaxation(prob, st, lp_shards, plan, leave);
    return;
  }
  const lp_columns cols = choose_columns(prob, opt, st, lp_shards);
  rep.lp_servers = cols.server_of.size();
  const popalloc::dense_problem<float> lp = relaxation(prob, opt, st, lp_shards, cols);
  const popalloc::solve_result sol = solve_relaxation(lp, opt, cols, clock, rep);
  round_relaxation(prob, st, lp_shards, shares_of(prob, lp_shards, cols, sol), leave);
}

/// \brief Any server still above the upper bound (rounding) sheds its largest parts to `leave`.
inline void shed_excess(const problem& prob, load_routing& st, std::vector<residual>& leave) {
  const std::size_t n = prob.server_count(), s = prob.shards();
  const double hi = prob.upper();
  for (std::size_t i = 0; i < n; ++i) {
    double excess = st.server_load[i] - hi;
    while (excess > 0.0) {
      std::size_t best = s;
      double best_part = 0.0;
      for (std::size_t j = 0; j < s; ++j) {
        const double part = st.part_on(j, static_cast<std::int32_t>(i));
        if (part > best_part) {
          best_part = part;
          best = j;
        }
      }
      if (best == s) break;
      const double take = std::min(best_part, excess);
      st.remove(prob, best, static_cast<std::int32_t>(i), take);
      leave.push_back({best, take});
      excess -= take;
    }
  }
}

/// \brief Step 4 of solve_price: places `leave`, raises servers to the lower bound, and lets the
/// checker decide the status (a repair that stopped early explains why). `consolidate_memory`
/// as in price_options.
inline lb_result repair(const problem& prob, double consolidate_memory, load_routing& st,
                        std::vector<residual> leave, const popalloc::detail::stopwatch& clock,
                        price_report& rep) {
  std::string why;
  consolidate(prob, st, consolidate_memory);
  bool ok = place_residuals(prob, st, std::move(leave), why);
  if (ok) {
    const std::int64_t added = raise_to_lower_bound(prob, st, why);
    ok = added >= 0;
    rep.repair_moves = std::max<std::int64_t>(0, added);
  }
  consolidate(prob, st, consolidate_memory);
  lb_result out = finish(prob, st, clock.seconds());
  if (!ok)
    out.message += (out.message.empty() ? "repair: " : " (repair: ") + why +
                   (out.status == lb_status::balanced ? "" : ")");
  return out;
}

}  // namespace detail

/// \brief Balances with the LP relaxation solved by popalloc::solve and a rounding/repair step.
///
/// 0. A current placement that check() finds feasible is returned as it is (no new replica).
/// 1. Route every shard over its current replicas (previous fractions). Shards with a replica on
///    a server above the upper bound, and shards without replicas, form the LP; the others stay.
/// 2. LP relaxation (docs/load-balancing.md): minimising sum_ij (1 - a_ij) r_ij over the LP
///    shards, the MILP relaxation with x = r, without the lower bound and the memory rows. The
///    servers' room (upper bound - load of the shards that stay) adds up to at least the LP
///    load, so the relaxation only decides how much of each shard its holding servers keep: the
///    keep LP, solved exactly by keep_flow (default). relaxation_method::core solves it instead
///    as a dense problem for popalloc::solve: the LP shards are jobs, the holding servers and
///    receivers resources with capacity room / mean; a job consumes l_j / mean per unit
///    fraction and earns 1 + stay_bonus on servers that hold it, 1 elsewhere (linear utility).
/// 3. Rounding: on every server the LP keeps K_i of its single-replica shards' load; the shards
///    are re-kept whole in order of their LP share, at most one partially, within K_i (so the
///    server load is unchanged and few shards are split). With keep_flow the shares come from
///    the keep LP with rooms up to the mean load by default (price_options::keep_fill).
/// 4. Repair: the load that leaves is placed largest first on the least-loaded server with memory
///    (whole when it fits under the upper bound), then servers below the lower bound pull load
///    from the most-loaded ones (a full server first frees a replica). Replicas carrying little
///    load are freed only where memory is tight (price_options::consolidate_memory): the others
///    stay for the next round. The checker decides `balanced` or `unbalanced`.
/// lb_result::price has the LP's statistics.
inline lb_result solve_price(const problem& prob, const price_options& opt = {}) {
  const popalloc::detail::stopwatch clock;
  prob.validate();
  if (!(opt.keep_fill >= 0.0 && opt.keep_fill <= 1.0))
    throw popalloc::invalid_options("lb::price_options::keep_fill must be in [0, 1], got " +
                                    std::to_string(opt.keep_fill));
  if (!(opt.consolidate_memory >= 0.0 && opt.consolidate_memory <= 1.0))
    throw popalloc::invalid_options(
        "lb::price_options::consolidate_memory must be in [0, 1], got " +
        std::to_string(opt.consolidate_memory));
  price_report rep;
  if (auto kept = keep_balanced_current(prob, clock.seconds())) return *kept;
  detail::load_routing st = detail::initial_routing(prob);
  const std::vector<std::size_t> lp_shards = detail::overloaded_shards(prob, st);
  rep.lp_shards = lp_shards.size();
  std::vector<detail::residual> leave;
  if (!lp_shards.empty()) detail::relax_and_round(prob, opt, st, lp_shards, clock, rep, leave);
  detail::shed_excess(prob, st, leave);
  if (opt.callback) {
    progress step;
    step.stage = stage::repair;
    step.lp_shards = rep.lp_shards;
    step.lp_servers = rep.lp_servers;
    step.lp_iterations = rep.lp_iterations;
    step.lp_relative_gap = rep.lp_relative_gap;
    step.elapsed_seconds = clock.seconds();
    opt.callback(step);
  }
  // The spare replicas that consolidate_memory keeps can leave a server that needs load without
  // the memory for it; the repair then runs again from the same point, consolidating everywhere.
  const bool can_retry = opt.consolidate_memory > 0.0;
  detail::load_routing before_repair = can_retry ? st : detail::load_routing{};
  lb_result out = detail::repair(prob, opt.consolidate_memory, st, leave, clock, rep);
  if (out.status != lb_status::balanced && can_retry) {
    price_report retry_rep = rep;
    lb_result retry = detail::repair(prob, 0.0, before_repair, std::move(leave), clock, retry_rep);
    if (retry.status == lb_status::balanced) {
      out = std::move(retry);
      rep = retry_rep;
    }
  }
  out.price = rep;
  return out;
}

}  // namespace popalloc::lb
