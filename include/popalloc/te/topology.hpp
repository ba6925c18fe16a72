// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A directed network with arc capacities, and the loading rules shared by every file
/// format: collapse parallel arcs, keep the largest strongly connected component, relabel 0..n-1.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "popalloc/error.hpp"

namespace popalloc::te {

/// \brief One directed link u -> v with its capacity (Mbps in Topology Zoo files).
struct arc {
  std::int32_t from = 0;
  std::int32_t to = 0;
  double capacity = 0.0;
};

/// \brief A directed graph: nodes 0..nodes-1, arcs in a fixed order (the order of the constraint
/// rows of every formulation), and the out-arcs of every node in compressed rows.
struct topology {
  std::string name;                      ///< e.g. the file name without its extension
  std::int32_t nodes = 0;                ///< node count
  std::vector<std::string> node_names;   ///< original id (or label) of every node
  std::vector<arc> arcs;                 ///< no parallel arcs, no self loops
  std::vector<std::int32_t> out_offset;  ///< out-arcs of u: out_arc[out_offset[u] .. [u+1]-1]
  std::vector<std::int32_t> out_arc;     ///< arc indices, by tail node, in arc order
  std::vector<std::int32_t> in_offset;   ///< in-arcs of v: in_arc[in_offset[v] .. [v+1]-1]
  std::vector<std::int32_t> in_arc;

  std::int32_t arc_count() const { return static_cast<std::int32_t>(arcs.size()); }

  /// \brief Rebuilds out_offset/out_arc and in_offset/in_arc from `arcs`.
  void index_arcs() {
    const auto n = static_cast<std::size_t>(nodes);
    out_offset.assign(n + 1, 0);
    in_offset.assign(n + 1, 0);
    for (const arc& a : arcs) {
      ++out_offset[static_cast<std::size_t>(a.from) + 1];
      ++in_offset[static_cast<std::size_t>(a.to) + 1];
    }
    for (std::size_t u = 0; u < n; ++u) {
      out_offset[u + 1] += out_offset[u];
      in_offset[u + 1] += in_offset[u];
    }
    out_arc.assign(arcs.size(), 0);
    in_arc.assign(arcs.size(), 0);
    std::vector<std::int32_t> out_fill(out_offset.begin(), out_offset.end() - 1);
    std::vector<std::int32_t> in_fill(in_offset.begin(), in_offset.end() - 1);
    for (std::size_t e = 0; e < arcs.size(); ++e) {
      out_arc[static_cast<std::size_t>(out_fill[static_cast<std::size_t>(arcs[e].from)]++)] =
          static_cast<std::int32_t>(e);
      in_arc[static_cast<std::size_t>(in_fill[static_cast<std::size_t>(arcs[e].to)]++)] =
          static_cast<std::int32_t>(e);
    }
  }

  /// \brief Throws invalid_problem unless the graph is usable: at least 2 nodes, arcs between
  /// existing distinct nodes, finite capacities >= 0, indexes built.
  void validate() const {
    if (nodes < 2) throw invalid_problem("topology '" + name + "' has fewer than 2 nodes");
    if (arcs.empty()) throw invalid_problem("topology '" + name + "' has no links");
    for (std::size_t e = 0; e < arcs.size(); ++e) {
      const arc& a = arcs[e];
      if (a.from < 0 || a.from >= nodes || a.to < 0 || a.to >= nodes || a.from == a.to)
        throw invalid_problem("topology '" + name + "': arc " + std::to_string(e) +
                              " does not join two distinct nodes");
      if (!std::isfinite(a.capacity) || a.capacity < 0.0)
        throw invalid_problem("topology '" + name + "': capacity of arc " + std::to_string(e) +
                              " must be finite and >= 0");
    }
    if (out_offset.size() != static_cast<std::size_t>(nodes) + 1 || out_arc.size() != arcs.size() ||
        in_arc.size() != arcs.size())
      throw invalid_problem("topology '" + name + "': arc index not built (call index_arcs())");
  }
};

namespace detail {

/// Strongly connected components (Kosaraju, iterative): component id per node.
inline std::vector<std::int32_t> strong_components(const topology& g, std::int32_t& count) {
  const auto n = static_cast<std::size_t>(g.nodes);
  std::vector<std::int32_t> order;
  order.reserve(n);
  std::vector<char> seen(n, 0);
  std::vector<std::pair<std::int32_t, std::int32_t>> stack;  // (node, next out position)
  for (std::int32_t root = 0; root < g.nodes; ++root) {
    if (seen[static_cast<std::size_t>(root)]) continue;
    seen[static_cast<std::size_t>(root)] = 1;
    stack.emplace_back(root, g.out_offset[static_cast<std::size_t>(root)]);
    while (!stack.empty()) {
      auto& [u, next] = stack.back();
      if (next < g.out_offset[static_cast<std::size_t>(u) + 1]) {
        const std::int32_t v =
            g.arcs[static_cast<std::size_t>(g.out_arc[static_cast<std::size_t>(next++)])].to;
        if (!seen[static_cast<std::size_t>(v)]) {
          seen[static_cast<std::size_t>(v)] = 1;
          stack.emplace_back(v, g.out_offset[static_cast<std::size_t>(v)]);
        }
      } else {
        order.push_back(u);
        stack.pop_back();
      }
    }
  }
  std::vector<std::int32_t> component(n, -1);
  count = 0;
  std::vector<std::int32_t> todo;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (component[static_cast<std::size_t>(*it)] >= 0) continue;
    todo.push_back(*it);
    component[static_cast<std::size_t>(*it)] = count;
    while (!todo.empty()) {
      const std::int32_t v = todo.back();
      todo.pop_back();
      for (auto q = g.in_offset[static_cast<std::size_t>(v)];
           q < g.in_offset[static_cast<std::size_t>(v) + 1]; ++q) {
        const std::int32_t u =
            g.arcs[static_cast<std::size_t>(g.in_arc[static_cast<std::size_t>(q)])].from;
        if (component[static_cast<std::size_t>(u)] < 0) {
          component[static_cast<std::size_t>(u)] = count;
          todo.push_back(u);
        }
      }
    }
    ++count;
  }
  return component;
}

}  // namespace detail

/// \brief Builds a topology from raw arcs: drops self loops, collapses parallel arcs (the first
/// one's capacity is kept, as networkx's DiGraph does when a multigraph is converted), keeps the
/// largest strongly connected component (ties: the one holding the lowest node) and relabels its
/// nodes 0..n-1 in their original order. Arcs keep their first-appearance order.
inline topology make_topology(std::string name, std::vector<std::string> node_names,
                              const std::vector<arc>& raw_arcs) {
  topology g;
  g.name = std::move(name);
  g.nodes = static_cast<std::int32_t>(node_names.size());
  std::vector<std::pair<std::int64_t, std::size_t>> keys;
  keys.reserve(raw_arcs.size());
  for (std::size_t e = 0; e < raw_arcs.size(); ++e) {
    const arc& a = raw_arcs[e];
    if (a.from < 0 || a.from >= g.nodes || a.to < 0 || a.to >= g.nodes)
      throw invalid_problem("topology '" + g.name + "': link " + std::to_string(e) +
                            " names an unknown node");
    if (a.from == a.to) continue;
    keys.emplace_back(static_cast<std::int64_t>(a.from) * g.nodes + a.to, e);
  }
  std::stable_sort(keys.begin(), keys.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::size_t> kept;
  for (std::size_t q = 0; q < keys.size(); ++q)
    if (q == 0 || keys[q].first != keys[q - 1].first) kept.push_back(keys[q].second);
  std::sort(kept.begin(), kept.end());
  for (const std::size_t e : kept) g.arcs.push_back(raw_arcs[e]);
  g.index_arcs();
  std::int32_t count = 0;
  const auto component = detail::strong_components(g, count);
  std::vector<std::int32_t> size(static_cast<std::size_t>(count), 0);
  for (const auto c : component) ++size[static_cast<std::size_t>(c)];
  std::int32_t best = -1;
  for (std::int32_t u = 0; u < g.nodes; ++u) {
    const auto c = component[static_cast<std::size_t>(u)];
    if (best < 0 || size[static_cast<std::size_t>(c)] > size[static_cast<std::size_t>(best)])
      best = c;
  }
  if (best >= 0 && size[static_cast<std::size_t>(best)] == g.nodes) {
    g.node_names = std::move(node_names);
    return g;
  }
  std::vector<std::int32_t> relabel(static_cast<std::size_t>(g.nodes), -1);
  topology h;
  h.name = g.name;
  for (std::int32_t u = 0; u < g.nodes; ++u)
    if (component[static_cast<std::size_t>(u)] == best) {
      relabel[static_cast<std::size_t>(u)] = h.nodes++;
      h.node_names.push_back(node_names[static_cast<std::size_t>(u)]);
    }
  for (const arc& a : g.arcs) {
    const auto u = relabel[static_cast<std::size_t>(a.from)];
    const auto v = relabel[static_cast<std::size_t>(a.to)];
    if (u >= 0 && v >= 0) h.arcs.push_back(arc{u, v, a.capacity});
  }
  h.index_arcs();
  return h;
}

}  // namespace popalloc::te
