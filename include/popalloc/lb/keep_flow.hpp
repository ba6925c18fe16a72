// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The keep LP of load balancing, solved exactly by a greedy augmenting flow, with the
/// server prices that certify its optimum.
///
/// The LP relaxation of shard placement only decides how much of each moving shard stays on the
/// servers that already hold it; whatever leaves fits somewhere, since the servers' room under
/// the upper bound adds up to at least the load to place (docs/load-balancing.md). What is left
/// is the keep LP over the LP shards r (load d_r > 0, holding servers H_r) and those servers c
/// (room C_c >= 0), with y_rc the load of r kept on c:
///
///     max sum_r k_r / d_r   s.t.   k_r = sum_{c in H_r} y_rc <= d_r,   sum_r y_rc <= C_c,  y >= 0.
///
/// Every unit of load of shard r is worth 1 / d_r wherever it stays, so the keepable load
/// vectors (k_r) form a polymatroid, over which a linear objective is maximised greedily: shards
/// by increasing load, each keeping as much as augmenting paths (re-routing earlier shards
/// among their own replicas, never reducing what they keep) can find. A search that finds no
/// room closes the set of servers it reached: no later path can enter it and leave with room,
/// so those servers are full for good, and their price per unit of load is the weight 1 / d_r of
/// the shard that closed them. With u_r = max(0, 1 - d_r min_{c in H_r} p_c), the dual value
/// sum_r u_r + sum_c C_c p_c equals the greedy objective (complementary slackness holds shard by
/// shard); the bound is computed from the prices, so it is a certificate whatever the flow did.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace popalloc::lb::detail {

/// \brief The keep LP: shard r's edges are [edge_offset[r], edge_offset[r + 1]), each naming a
/// column (a holding server) of `room`.
struct keep_lp {
  std::vector<double> load;               ///< d_r > 0 per shard
  std::vector<std::size_t> edge_offset;   ///< shards + 1 entries, from 0
  std::vector<std::int32_t> edge_column;  ///< column of every edge
  std::vector<double> room;               ///< C_c >= 0 per column
};

/// \brief The keep LP's optimum and its certificate.
struct keep_solution {
  std::vector<double> kept;   ///< y per edge (load kept)
  std::vector<double> price;  ///< per column, per unit of load
  double objective = 0.0;     ///< sum_r k_r / d_r, the shards kept (fractionally)
  double bound = 0.0;         ///< the dual value at `price`: no feasible keep is worth more
  std::size_t searches = 0;   ///< augmenting-path searches
};

/// \brief The dual value at column prices `price` (any prices >= 0 give an upper bound):
/// sum_r max(0, 1 - d_r min_{c in H_r} p_c) + sum_c C_c p_c.
inline double keep_bound(const keep_lp& lp, const std::vector<double>& price) {
  double bound = 0.0;
  for (std::size_t c = 0; c < lp.room.size(); ++c) bound += lp.room[c] * price[c];
  for (std::size_t r = 0; r + 1 < lp.edge_offset.size(); ++r) {
    double cheapest = std::numeric_limits<double>::infinity();
    for (std::size_t e = lp.edge_offset[r]; e < lp.edge_offset[r + 1]; ++e)
      cheapest = std::min(cheapest, price[static_cast<std::size_t>(lp.edge_column[e])]);
    if (lp.edge_offset[r] < lp.edge_offset[r + 1])
      bound += std::max(0.0, 1.0 - lp.load[r] * cheapest);
  }
  return bound;
}

/// \brief The greedy augmenting flow of the file comment.
class keep_flow {
 public:
  explicit keep_flow(const keep_lp& lp) : lp_(lp) {
    validate();
    const std::size_t shards = lp.load.size(), columns = lp.room.size();
    const std::size_t edges = lp.edge_column.size();
    edge_shard_.resize(edges);
    column_offset_.assign(columns + 1, 0);
    for (std::size_t r = 0; r < shards; ++r)
      for (std::size_t e = lp.edge_offset[r]; e < lp.edge_offset[r + 1]; ++e) {
        edge_shard_[e] = r;
        ++column_offset_[static_cast<std::size_t>(lp.edge_column[e]) + 1];
      }
    std::partial_sum(column_offset_.begin(), column_offset_.end(), column_offset_.begin());
    column_edges_.resize(edges);
    std::vector<std::size_t> next(column_offset_.begin(), column_offset_.end() - 1);
    for (std::size_t e = 0; e < edges; ++e)
      column_edges_[next[static_cast<std::size_t>(lp.edge_column[e])]++] = e;
    double scale = 0.0;
    for (const double d : lp.load) scale = std::max(scale, d);
    for (const double c : lp.room) scale = std::max(scale, c);
    tiny_ = 1e-12 * scale;
    room_left_ = lp.room;
    closed_.assign(columns, 0);
    column_seen_.assign(columns, 0);
    shard_seen_.assign(shards, 0);
    column_parent_.assign(columns, 0);
    shard_parent_.assign(shards, 0);
    out_.kept.assign(edges, 0.0);
    out_.price.assign(columns, 0.0);
  }

  keep_solution solve() {
    std::vector<std::size_t> order(lp_.load.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return lp_.load[a] < lp_.load[b]; });
    // Each search either completes its shard, fills a column, empties an edge or closes
    // columns; the cap only guards against round-off cycling (the bound stays a certificate).
    const std::size_t max_searches =
        8 * (lp_.edge_column.size() + lp_.room.size() + lp_.load.size()) + 64;
    for (const std::size_t r : order) {
      double need = lp_.load[r];
      while (need > 1e-12 * lp_.load[r] && out_.searches < max_searches) {
        ++out_.searches;
        const double moved = augment(r, need);
        if (moved <= 0.0) break;
        need -= moved;
      }
    }
    for (std::size_t r = 0; r < lp_.load.size(); ++r)
      for (std::size_t e = lp_.edge_offset[r]; e < lp_.edge_offset[r + 1]; ++e)
        out_.objective += out_.kept[e] / lp_.load[r];
    out_.bound = keep_bound(lp_, out_.price);
    return std::move(out_);
  }

 private:
  void validate() const {
    const std::size_t shards = lp_.load.size(), columns = lp_.room.size();
    if (lp_.edge_offset.size() != shards + 1 || lp_.edge_offset.front() != 0 ||
        lp_.edge_offset.back() != lp_.edge_column.size())
      throw std::invalid_argument("keep_lp: edge_offset must have shards + 1 entries, 0 to edges");
    for (std::size_t r = 0; r < shards; ++r) {
      if (lp_.edge_offset[r] > lp_.edge_offset[r + 1])
        throw std::invalid_argument("keep_lp: edge_offset must not decrease");
      if (!(lp_.load[r] > 0.0) || !(lp_.load[r] < std::numeric_limits<double>::infinity()))
        throw std::invalid_argument("keep_lp: shard " + std::to_string(r) +
                                    " needs a finite load > 0");
    }
    for (const std::int32_t c : lp_.edge_column)
      if (c < 0 || static_cast<std::size_t>(c) >= columns)
        throw std::invalid_argument("keep_lp: edge column out of range");
    for (const double c : lp_.room)
      if (!(c >= 0.0) || !(c < std::numeric_limits<double>::infinity()))
        throw std::invalid_argument("keep_lp: room must be finite and >= 0");
  }

  /// Breadth-first search from shard r over open columns (forward edges) and the shards kept on
  /// them (backward edges with flow). Returns the column with room it reached, or -1 after
  /// closing every column it reached at price 1 / d_r.
  std::int64_t search(std::size_t r) {
    ++stamp_;
    queue_.clear();
    queue_.push_back(r);
    shard_seen_[r] = stamp_;
    for (std::size_t head = 0; head < queue_.size(); ++head) {
      const std::size_t s = queue_[head];
      for (std::size_t e = lp_.edge_offset[s]; e < lp_.edge_offset[s + 1]; ++e) {
        const auto c = static_cast<std::size_t>(lp_.edge_column[e]);
        if (closed_[c] || column_seen_[c] == stamp_) continue;
        column_seen_[c] = stamp_;
        column_parent_[c] = e;
        reached_.push_back(c);
        if (room_left_[c] > tiny_) return static_cast<std::int64_t>(c);
        for (std::size_t k = column_offset_[c]; k < column_offset_[c + 1]; ++k) {
          const std::size_t back = column_edges_[k];
          const std::size_t s2 = edge_shard_[back];
          if (out_.kept[back] <= tiny_ || shard_seen_[s2] == stamp_) continue;
          shard_seen_[s2] = stamp_;
          shard_parent_[s2] = back;
          queue_.push_back(s2);
        }
      }
    }
    for (const std::size_t c : reached_) {
      closed_[c] = 1;
      out_.price[c] = 1.0 / lp_.load[r];
    }
    return -1;
  }

  /// One augmenting path for shard r, carrying at most `need`; returns the load it moved.
  double augment(std::size_t r, double need) {
    reached_.clear();
    const std::int64_t found = search(r);
    if (found < 0) return 0.0;
    const auto target = static_cast<std::size_t>(found);
    double amount = std::min(need, room_left_[target]);
    for (std::size_t c = target;;) {
      const std::size_t s = edge_shard_[column_parent_[c]];
      if (s == r) break;
      amount = std::min(amount, out_.kept[shard_parent_[s]]);
      c = static_cast<std::size_t>(lp_.edge_column[shard_parent_[s]]);
    }
    room_left_[target] -= amount;
    for (std::size_t c = target;;) {
      const std::size_t forward = column_parent_[c];
      out_.kept[forward] += amount;
      const std::size_t s = edge_shard_[forward];
      if (s == r) break;
      const std::size_t back = shard_parent_[s];
      // A residue of round-off is dropped: it only under-counts what s keeps on that column.
      out_.kept[back] = out_.kept[back] - amount > tiny_ ? out_.kept[back] - amount : 0.0;
      c = static_cast<std::size_t>(lp_.edge_column[back]);
    }
    return amount;
  }

  const keep_lp& lp_;
  std::vector<std::size_t> edge_shard_, column_offset_, column_edges_;
  std::vector<double> room_left_;
  std::vector<char> closed_;
  std::vector<std::uint64_t> column_seen_, shard_seen_;
  std::vector<std::size_t> column_parent_, shard_parent_, queue_, reached_;
  std::uint64_t stamp_ = 0;
  double tiny_ = 0.0;
  keep_solution out_;
};

/// \brief The keep LP's exact optimum, with its prices and dual bound.
inline keep_solution solve_keep_lp(const keep_lp& lp) { return keep_flow(lp).solve(); }

}  // namespace popalloc::lb::detail
