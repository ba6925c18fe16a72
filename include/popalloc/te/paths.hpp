// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Candidate paths per commodity: k edge-disjoint paths from a unit max-flow (POP/NCFlow's
/// default, `nx.edge_disjoint_paths`) or Yen's k shortest simple paths, computed in parallel.
///
/// Edge-disjoint mode follows NCFlow: a maximum set of edge-disjoint s->t paths from an
/// unweighted max-flow (Edmonds-Karp: shortest augmenting paths), decomposed into paths (cycles
/// removed), sorted by weighted length, the first k kept. Yen's search runs A* from every spur
/// node with the exact distance-to-target of the full graph as heuristic (removing arcs and nodes
/// only lengthens distances, so it stays consistent): most spur searches walk straight to the
/// target, which keeps all-pairs Yen on a 754-node network to seconds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <exception>
#include <limits>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "popalloc/backend/cpu.hpp"
#include "popalloc/config.hpp"
#include "popalloc/error.hpp"
#include "popalloc/te/topology.hpp"

namespace popalloc::te {

/// \brief How candidate paths are chosen.
enum class path_method : std::uint8_t {
  edge_disjoint = 0,  ///< max-flow edge-disjoint set, shortest k (POP's benchmarks)
  k_shortest = 1,     ///< Yen's k shortest simple paths
};

/// \brief Arc length used to rank paths.
enum class distance_metric : std::uint8_t {
  inverse_capacity = 0,  ///< 1 / c_e (POP's "inv-cap"; a huge length when c_e = 0)
  min_hop = 1,           ///< 1 per arc (a huge length when c_e <= 0)
};

struct path_options {
  int k = 4;
  path_method method = path_method::edge_disjoint;
  distance_metric metric = distance_metric::inverse_capacity;
  int threads = 0;  ///< OpenMP threads, 0: the OpenMP default
};

/// \brief Paths of every requested (source, target) pair in compressed rows: pair q owns paths
/// pair_offset[q] .. pair_offset[q+1]-1; path p is arcs[path_offset[p] .. path_offset[p+1]-1],
/// from source to target.
struct path_set {
  std::vector<std::int64_t> pair_offset{0};
  std::vector<std::int64_t> path_offset{0};
  std::vector<std::int32_t> arcs;

  std::int64_t pairs() const { return static_cast<std::int64_t>(pair_offset.size()) - 1; }
  std::int64_t paths() const { return static_cast<std::int64_t>(path_offset.size()) - 1; }
};

/// Length POP gives an arc it cannot use (Python's sys.maxsize).
inline constexpr double unusable_arc_length = 9223372036854775807.0;

/// \brief Arc lengths of `metric` on `g`.
inline std::vector<double> arc_lengths(const topology& g, distance_metric metric) {
  std::vector<double> w(g.arcs.size());
  for (std::size_t e = 0; e < w.size(); ++e) {
    const double c = g.arcs[e].capacity;
    if (metric == distance_metric::inverse_capacity)
      w[e] = c == 0.0 ? unusable_arc_length : 1.0 / c;
    else
      w[e] = c <= 0.0 ? unusable_arc_length : 1.0;
  }
  return w;
}

namespace detail {

struct ranked_path {
  double length = 0.0;
  std::vector<std::int32_t> arcs;
};

/// Shorter first, then fewer arcs, then lexicographic arc ids: a total order, so results do not
/// depend on thread scheduling or sort stability.
inline bool path_before(const ranked_path& a, const ranked_path& b) {
  if (a.length != b.length) return a.length < b.length;
  if (a.arcs.size() != b.arcs.size()) return a.arcs.size() < b.arcs.size();
  return a.arcs < b.arcs;
}

inline double path_length(const std::vector<std::int32_t>& arcs, const std::vector<double>& w) {
  double total = 0.0;
  for (const auto e : arcs) total += w[static_cast<std::size_t>(e)];
  return total;
}

/// Unit-capacity max-flow from s to t (Edmonds-Karp) decomposed into edge-disjoint paths.
class disjoint_search {
 public:
  explicit disjoint_search(const topology& g)
      : g_(g),
        flow_(g.arcs.size(), 0),
        stamp_(static_cast<std::size_t>(g.nodes), 0),
        parent_(static_cast<std::size_t>(g.nodes), 0),
        queue_(static_cast<std::size_t>(g.nodes), 0) {}

  std::vector<std::vector<std::int32_t>> run(std::int32_t s, std::int32_t t) {
    touched_.clear();
    const auto su = static_cast<std::size_t>(s), tu = static_cast<std::size_t>(t);
    const std::int32_t bound = std::min(g_.out_offset[su + 1] - g_.out_offset[su],
                                        g_.in_offset[tu + 1] - g_.in_offset[tu]);
    std::int32_t value = 0;
    while (value < bound && augment(s, t)) ++value;
    // Decompose: follow unused flow arcs from s; flow conservation brings every walk to t.
    std::vector<std::vector<std::int32_t>> paths;
    for (std::int32_t q = 0; q < value; ++q) {
      std::vector<std::int32_t> arcs;
      std::vector<std::int32_t> nodes{s};
      std::int32_t u = s;
      while (u != t) {
        std::int32_t next = -1;
        for (auto p = g_.out_offset[static_cast<std::size_t>(u)];
             p < g_.out_offset[static_cast<std::size_t>(u) + 1]; ++p) {
          const auto e = g_.out_arc[static_cast<std::size_t>(p)];
          if (flow_[static_cast<std::size_t>(e)] == 1) {
            next = e;
            break;
          }
        }
        if (next < 0) break;                        // cannot happen with a valid flow
        flow_[static_cast<std::size_t>(next)] = 2;  // used by the decomposition
        u = g_.arcs[static_cast<std::size_t>(next)].to;
        // Remove a cycle: cut back to u's first visit.
        const auto seen = std::find(nodes.begin(), nodes.end(), u);
        if (seen != nodes.end()) {
          const auto keep = seen - nodes.begin();
          nodes.resize(static_cast<std::size_t>(keep) + 1);
          arcs.resize(static_cast<std::size_t>(keep));
        } else {
          nodes.push_back(u);
          arcs.push_back(next);
        }
      }
      if (u == t) paths.push_back(std::move(arcs));
    }
    for (const auto e : touched_) flow_[static_cast<std::size_t>(e)] = 0;
    return paths;
  }

 private:
  /// One BFS in the residual graph; augments one unit along the shortest path found.
  bool augment(std::int32_t s, std::int32_t t) {
    ++round_;
    std::size_t head = 0, tail = 0;
    queue_[tail++] = s;
    stamp_[static_cast<std::size_t>(s)] = round_;
    while (head < tail) {
      const std::int32_t u = queue_[head++];
      const auto uu = static_cast<std::size_t>(u);
      for (auto p = g_.out_offset[uu]; p < g_.out_offset[uu + 1]; ++p) {
        const auto e = g_.out_arc[static_cast<std::size_t>(p)];
        const auto v = g_.arcs[static_cast<std::size_t>(e)].to;
        if (flow_[static_cast<std::size_t>(e)] != 0 ||
            stamp_[static_cast<std::size_t>(v)] == round_)
          continue;
        stamp_[static_cast<std::size_t>(v)] = round_;
        parent_[static_cast<std::size_t>(v)] = e + 1;  // forward: +(e+1)
        if (v == t) return apply(s, t);
        queue_[tail++] = v;
      }
      for (auto p = g_.in_offset[uu]; p < g_.in_offset[uu + 1]; ++p) {
        const auto e = g_.in_arc[static_cast<std::size_t>(p)];
        const auto v = g_.arcs[static_cast<std::size_t>(e)].from;
        if (flow_[static_cast<std::size_t>(e)] != 1 ||
            stamp_[static_cast<std::size_t>(v)] == round_)
          continue;
        stamp_[static_cast<std::size_t>(v)] = round_;
        parent_[static_cast<std::size_t>(v)] = -(e + 1);  // cancel flow on e
        if (v == t) return apply(s, t);
        queue_[tail++] = v;
      }
    }
    return false;
  }

  bool apply(std::int32_t s, std::int32_t t) {
    std::int32_t v = t;
    while (v != s) {
      const std::int32_t code = parent_[static_cast<std::size_t>(v)];
      if (code > 0) {
        const auto e = static_cast<std::size_t>(code - 1);
        flow_[e] = 1;
        touched_.push_back(code - 1);
        v = g_.arcs[e].from;
      } else {
        const auto e = static_cast<std::size_t>(-code - 1);
        flow_[e] = 0;
        v = g_.arcs[e].to;
      }
    }
    return true;
  }

  const topology& g_;
  std::vector<char> flow_;
  std::vector<std::uint32_t> stamp_;
  std::vector<std::int32_t> parent_;
  std::vector<std::int32_t> queue_;
  std::vector<std::int32_t> touched_;
  std::uint32_t round_ = 0;
};

/// Distances to every target and the next arc on a shortest path (reverse Dijkstra per target).
struct distance_table {
  std::int32_t n = 0;
  std::vector<double> to;              ///< to[t * n + v]: length of a shortest v -> t path
  std::vector<std::int32_t> next_arc;  ///< first arc of that path (-1 at t or unreachable)
};

inline void reverse_dijkstra(const topology& g, const std::vector<double>& w, std::int32_t t,
                             double* dist, std::int32_t* next) {
  const double inf = std::numeric_limits<double>::infinity();
  std::fill(dist, dist + g.nodes, inf);
  std::fill(next, next + g.nodes, -1);
  using entry = std::pair<double, std::int32_t>;
  std::priority_queue<entry, std::vector<entry>, std::greater<entry>> heap;
  dist[t] = 0.0;
  heap.emplace(0.0, t);
  while (!heap.empty()) {
    const auto [d, v] = heap.top();
    heap.pop();
    if (d > dist[v]) continue;
    const auto vu = static_cast<std::size_t>(v);
    for (auto p = g.in_offset[vu]; p < g.in_offset[vu + 1]; ++p) {
      const auto e = g.in_arc[static_cast<std::size_t>(p)];
      const auto u = g.arcs[static_cast<std::size_t>(e)].from;
      const double candidate = d + w[static_cast<std::size_t>(e)];
      // Ties: the lower arc id, so the tree does not depend on heap order.
      if (candidate < dist[u] || (candidate == dist[u] && next[u] > e)) {
        const bool improved = candidate < dist[u];
        dist[u] = candidate;
        next[u] = e;
        if (improved) heap.emplace(candidate, u);
      }
    }
  }
}

/// Yen's k shortest simple paths with A* spur searches (Lawler's restriction of spur nodes to
/// those at or after the parent's deviation point).
class yen_search {
 public:
  yen_search(const topology& g, const std::vector<double>& w, const distance_table& table)
      : g_(g),
        w_(w),
        table_(table),
        blocked_node_(static_cast<std::size_t>(g.nodes), 0),
        blocked_arc_(g.arcs.size(), 0),
        g_score_(static_cast<std::size_t>(g.nodes), 0.0),
        via_(static_cast<std::size_t>(g.nodes), -1),
        stamp_(static_cast<std::size_t>(g.nodes), 0),
        closed_(static_cast<std::size_t>(g.nodes), 0) {}

  std::vector<ranked_path> run(std::int32_t s, std::int32_t t, int k) {
    const std::size_t base = static_cast<std::size_t>(t) * static_cast<std::size_t>(table_.n);
    std::vector<ranked_path> accepted;
    std::vector<std::size_t> deviation;
    if (!(table_.to[base + static_cast<std::size_t>(s)] < unusable_arc_length)) return accepted;
    ranked_path first;
    for (std::int32_t v = s; v != t;) {
      const auto e = table_.next_arc[base + static_cast<std::size_t>(v)];
      first.arcs.push_back(e);
      v = g_.arcs[static_cast<std::size_t>(e)].to;
    }
    first.length = path_length(first.arcs, w_);
    accepted.push_back(std::move(first));
    deviation.push_back(0);
    std::vector<std::pair<ranked_path, std::size_t>> candidates;
    while (static_cast<int>(accepted.size()) < k) {
      const ranked_path& previous = accepted.back();
      std::vector<std::int32_t> nodes{s};
      for (const auto e : previous.arcs) nodes.push_back(g_.arcs[static_cast<std::size_t>(e)].to);
      for (std::size_t j = deviation.back(); j < previous.arcs.size(); ++j) {
        const std::int32_t spur = nodes[j];
        std::vector<std::int32_t> blocked_arcs;
        for (const auto& p : accepted)
          if (p.arcs.size() > j && std::equal(p.arcs.begin(), p.arcs.begin() + static_cast<long>(j),
                                              previous.arcs.begin()))
            blocked_arcs.push_back(p.arcs[j]);
        for (const auto e : blocked_arcs) blocked_arc_[static_cast<std::size_t>(e)] = 1;
        for (std::size_t q = 0; q < j; ++q) blocked_node_[static_cast<std::size_t>(nodes[q])] = 1;
        // Only paths that can still be among the k best matter: once the candidates hold
        // `need` paths, a spur search may stop beyond the need-th shortest (with a margin for
        // rounding, so ties are still found and ranked).
        const std::size_t need = static_cast<std::size_t>(k) - accepted.size();
        double limit = std::numeric_limits<double>::infinity();
        if (candidates.size() >= need) {
          lengths_.clear();
          for (const auto& c : candidates) lengths_.push_back(c.first.length);
          std::nth_element(lengths_.begin(), lengths_.begin() + static_cast<long>(need - 1),
                           lengths_.end());
          double root = 0.0;
          for (std::size_t q = 0; q < j; ++q)
            root += w_[static_cast<std::size_t>(previous.arcs[q])];
          limit = (lengths_[need - 1] - root) + 1e-12 * lengths_[need - 1];
        }
        std::vector<std::int32_t> spur_arcs;
        const bool found = a_star(spur, t, base, limit, spur_arcs);
        for (const auto e : blocked_arcs) blocked_arc_[static_cast<std::size_t>(e)] = 0;
        for (std::size_t q = 0; q < j; ++q) blocked_node_[static_cast<std::size_t>(nodes[q])] = 0;
        if (!found) continue;
        ranked_path candidate;
        candidate.arcs.assign(previous.arcs.begin(), previous.arcs.begin() + static_cast<long>(j));
        candidate.arcs.insert(candidate.arcs.end(), spur_arcs.begin(), spur_arcs.end());
        candidate.length = path_length(candidate.arcs, w_);
        if (!(candidate.length < unusable_arc_length)) continue;
        const bool known = std::any_of(candidates.begin(), candidates.end(), [&](const auto& c) {
          return c.first.arcs == candidate.arcs;
        });
        if (!known) candidates.emplace_back(std::move(candidate), j);
      }
      if (candidates.empty()) break;
      auto best = candidates.begin();
      for (auto it = candidates.begin(); it != candidates.end(); ++it)
        if (path_before(it->first, best->first)) best = it;
      accepted.push_back(std::move(best->first));
      deviation.push_back(best->second);
      candidates.erase(best);
    }
    return accepted;
  }

 private:
  bool a_star(std::int32_t from, std::int32_t t, std::size_t base, double limit,
              std::vector<std::int32_t>& arcs) {
    ++round_;
    using entry = std::pair<double, std::int32_t>;
    std::priority_queue<entry, std::vector<entry>, std::greater<entry>> open;
    auto h = [&](std::int32_t v) { return table_.to[base + static_cast<std::size_t>(v)]; };
    if (!(h(from) < std::numeric_limits<double>::infinity())) return false;
    stamp_[static_cast<std::size_t>(from)] = round_;
    g_score_[static_cast<std::size_t>(from)] = 0.0;
    via_[static_cast<std::size_t>(from)] = -1;
    closed_[static_cast<std::size_t>(from)] = 0;
    open.emplace(h(from), from);
    while (!open.empty()) {
      const auto [f, u] = open.top();
      open.pop();
      const auto uu = static_cast<std::size_t>(u);
      if (closed_[uu] == round_) continue;
      if (f > limit) return false;  // every remaining path is longer than needed
      closed_[uu] = round_;
      if (u == t) {
        arcs.clear();
        for (std::int32_t v = t; v != from;) {
          const auto e = via_[static_cast<std::size_t>(v)];
          arcs.push_back(e);
          v = g_.arcs[static_cast<std::size_t>(e)].from;
        }
        std::reverse(arcs.begin(), arcs.end());
        return true;
      }
      for (auto p = g_.out_offset[uu]; p < g_.out_offset[uu + 1]; ++p) {
        const auto e = g_.out_arc[static_cast<std::size_t>(p)];
        const auto v = g_.arcs[static_cast<std::size_t>(e)].to;
        const auto vu = static_cast<std::size_t>(v);
        if (blocked_arc_[static_cast<std::size_t>(e)] || blocked_node_[vu] || closed_[vu] == round_)
          continue;
        const double hv = h(v);
        if (!(hv < std::numeric_limits<double>::infinity())) continue;
        const double candidate = g_score_[uu] + w_[static_cast<std::size_t>(e)];
        if (stamp_[vu] != round_ || candidate < g_score_[vu] ||
            (candidate == g_score_[vu] && e < via_[vu])) {
          stamp_[vu] = round_;
          g_score_[vu] = candidate;
          via_[vu] = e;
          open.emplace(candidate + hv, v);
        }
      }
    }
    return false;
  }

  const topology& g_;
  const std::vector<double>& w_;
  const distance_table& table_;
  std::vector<char> blocked_node_, blocked_arc_;
  std::vector<double> g_score_;
  std::vector<std::int32_t> via_;
  std::vector<std::uint32_t> stamp_, closed_;
  std::vector<double> lengths_;
  std::uint32_t round_ = 0;
};

}  // namespace detail

/// \brief Computes up to `options.k` paths for every (source, target) pair of `pairs`, in
/// parallel. Pairs with source == target, or nodes out of range, are invalid_problem errors; a
/// pair with no path gets no paths (the caller decides whether that is an error).
inline path_set compute_paths(const topology& g,
                              const std::vector<std::pair<std::int32_t, std::int32_t>>& pairs,
                              const path_options& options) {
  g.validate();
  if (options.k < 1) throw invalid_options("the number of paths per commodity must be >= 1");
  for (const auto& [s, t] : pairs)
    if (s < 0 || s >= g.nodes || t < 0 || t >= g.nodes || s == t)
      throw invalid_problem("path request (" + std::to_string(s) + ", " + std::to_string(t) +
                            ") is not a pair of distinct nodes");
  const std::vector<double> w = arc_lengths(g, options.metric);
  [[maybe_unused]] const int threads = popalloc::detail::host_executor(options.threads).threads();
  detail::distance_table table;
  if (options.method == path_method::k_shortest) {
    table.n = g.nodes;
    const auto n = static_cast<std::size_t>(g.nodes);
    table.to.resize(n * n);
    table.next_arc.resize(n * n);
    POPALLOC_PRAGMA_OMP(omp parallel for schedule(dynamic, 8) num_threads(threads))
    for (std::int32_t t = 0; t < g.nodes; ++t)
      detail::reverse_dijkstra(g, w, t, table.to.data() + static_cast<std::size_t>(t) * n,
                               table.next_arc.data() + static_cast<std::size_t>(t) * n);
  }
  // Chunks of pairs, each chunk's paths in its own buffer, concatenated in pair order.
  constexpr std::int64_t chunk_size = 256;
  const auto count = static_cast<std::int64_t>(pairs.size());
  const std::int64_t chunks = (count + chunk_size - 1) / chunk_size;
  std::vector<path_set> parts(static_cast<std::size_t>(chunks));
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(chunks));
  POPALLOC_PRAGMA_OMP(omp parallel num_threads(threads)) {
    detail::disjoint_search disjoint(g);
    detail::yen_search yen(g, w, table);
    POPALLOC_PRAGMA_OMP(omp for schedule(dynamic, 1))
    for (std::int64_t c = 0; c < chunks; ++c) {
      try {
        path_set& out = parts[static_cast<std::size_t>(c)];
        for (std::int64_t q = c * chunk_size; q < std::min(count, (c + 1) * chunk_size); ++q) {
          const auto [s, t] = pairs[static_cast<std::size_t>(q)];
          std::vector<detail::ranked_path> found;
          if (options.method == path_method::edge_disjoint) {
            for (auto& arcs : disjoint.run(s, t)) {
              detail::ranked_path p;
              p.length = detail::path_length(arcs, w);
              p.arcs = std::move(arcs);
              found.push_back(std::move(p));
            }
            std::sort(found.begin(), found.end(), detail::path_before);
            if (found.size() > static_cast<std::size_t>(options.k))
              found.resize(static_cast<std::size_t>(options.k));
          } else {
            found = yen.run(s, t, options.k);
          }
          for (const auto& p : found) {
            out.arcs.insert(out.arcs.end(), p.arcs.begin(), p.arcs.end());
            out.path_offset.push_back(static_cast<std::int64_t>(out.arcs.size()));
          }
          out.pair_offset.push_back(out.paths());
        }
      } catch (...) {
        failures[static_cast<std::size_t>(c)] = std::current_exception();
      }
    }
  }
  for (const auto& f : failures)
    if (f) std::rethrow_exception(f);
  path_set all;
  for (const auto& part : parts) {
    const std::int64_t path_base = all.paths();
    const auto arc_base = static_cast<std::int64_t>(all.arcs.size());
    for (std::size_t q = 1; q < part.pair_offset.size(); ++q)
      all.pair_offset.push_back(path_base + part.pair_offset[q]);
    for (std::size_t p = 1; p < part.path_offset.size(); ++p)
      all.path_offset.push_back(arc_base + part.path_offset[p]);
    all.arcs.insert(all.arcs.end(), part.arcs.begin(), part.arcs.end());
  }
  return all;
}

}  // namespace popalloc::te
