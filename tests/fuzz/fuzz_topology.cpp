// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the topology readers. The first byte picks the format (even: GraphML, odd: JSON
// node-link); the rest is the file. Any input is either rejected with io::input_error "PATH:..."
// or gives a valid topology (arcs between existing distinct nodes, finite capacities >= 0,
// no parallel arcs, consistent adjacency), on which both path methods return well-formed paths
// that start at the source, are connected and end at the target.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include <popalloc/te/graphml.hpp>
#include <popalloc/te/node_link_json.hpp>
#include <popalloc/te/paths.hpp>

namespace {

void check_topology(const popalloc::te::topology& g) {
  if (g.nodes < 1) std::abort();
  std::set<std::pair<std::int32_t, std::int32_t>> seen;
  for (const auto& a : g.arcs) {
    if (a.from < 0 || a.from >= g.nodes || a.to < 0 || a.to >= g.nodes || a.from == a.to)
      std::abort();
    if (!std::isfinite(a.capacity) || a.capacity < 0.0) std::abort();
    if (!seen.emplace(a.from, a.to).second) std::abort();
  }
  if (g.out_offset.size() != static_cast<std::size_t>(g.nodes) + 1) std::abort();
  if (g.out_arc.size() != g.arcs.size() || g.in_arc.size() != g.arcs.size()) std::abort();
}

void check_paths(const popalloc::te::topology& g, popalloc::te::path_method method) {
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  for (std::int32_t s = 0; s < g.nodes && pairs.size() < 40; ++s)
    for (std::int32_t t = 0; t < g.nodes && pairs.size() < 40; ++t)
      if (s != t) pairs.emplace_back(s, t);
  popalloc::te::path_options options;
  options.k = 3;
  options.method = method;
  options.threads = 1;
  const auto paths = popalloc::te::compute_paths(g, pairs, options);
  if (paths.pairs() != static_cast<std::int64_t>(pairs.size())) std::abort();
  for (std::int64_t q = 0; q < paths.pairs(); ++q) {
    const auto [s, t] = pairs[static_cast<std::size_t>(q)];
    for (auto p = paths.pair_offset[static_cast<std::size_t>(q)];
         p < paths.pair_offset[static_cast<std::size_t>(q) + 1]; ++p) {
      const auto first = paths.path_offset[static_cast<std::size_t>(p)];
      const auto last = paths.path_offset[static_cast<std::size_t>(p) + 1];
      if (first >= last) std::abort();
      std::int32_t at = s;
      for (auto k = first; k < last; ++k) {
        const auto e = paths.arcs[static_cast<std::size_t>(k)];
        if (e < 0 || e >= g.arc_count()) std::abort();
        if (g.arcs[static_cast<std::size_t>(e)].from != at) std::abort();
        at = g.arcs[static_cast<std::size_t>(e)].to;
      }
      if (at != t) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool json = (data[0] & 1) != 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  popalloc::te::topology g;
  try {
    g = json ? popalloc::te::parse_node_link_json(text, "net.json", "net")
             : popalloc::te::parse_graphml(text, "net.graphml", "net");
  } catch (const popalloc::io::input_error& e) {
    const std::string_view message = e.what();
    if (message.rfind(json ? "net.json:" : "net.graphml:", 0) != 0) std::abort();
    return 0;
  }
  check_topology(g);
  if (g.nodes <= 30) {
    check_paths(g, popalloc::te::path_method::edge_disjoint);
    check_paths(g, popalloc::te::path_method::k_shortest);
  }
  return 0;
}
