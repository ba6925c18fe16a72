// SPDX-License-Identifier: Apache-2.0
// Shared helpers of the traffic-engineering tests.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <popalloc/te.hpp>

namespace te_test {

namespace te = popalloc::te;

inline std::string data_file(const std::string& name) {
  return std::string(POPALLOC_TE_DATA_DIR) + "/" + name;
}

/// A topology from (from, to, capacity) triples on nodes 0..n-1 (no SCC pruning surprises:
/// callers pass strongly connected graphs).
inline te::topology graph_of(std::int32_t n, const std::vector<te::arc>& arcs,
                             std::string name = "test") {
  std::vector<std::string> names;
  for (std::int32_t u = 0; u < n; ++u) names.push_back(std::to_string(u));
  return te::make_topology(std::move(name), std::move(names), arcs);
}

/// Arc index of u -> v (-1 if none).
inline std::int32_t arc_of(const te::topology& g, std::int32_t u, std::int32_t v) {
  for (std::int32_t e = 0; e < g.arc_count(); ++e)
    if (g.arcs[static_cast<std::size_t>(e)].from == u &&
        g.arcs[static_cast<std::size_t>(e)].to == v)
      return e;
  return -1;
}

/// An instance with explicit paths, each given as a node sequence.
inline te::instance explicit_instance(
    te::topology g, const std::vector<te::commodity>& commodities,
    const std::vector<std::vector<std::vector<std::int32_t>>>& node_paths) {
  te::instance inst;
  inst.graph = std::move(g);
  inst.commodities = commodities;
  for (const auto& paths : node_paths) {
    for (const auto& nodes : paths) {
      for (std::size_t q = 0; q + 1 < nodes.size(); ++q)
        inst.paths.arcs.push_back(arc_of(inst.graph, nodes[q], nodes[q + 1]));
      inst.paths.path_offset.push_back(static_cast<std::int64_t>(inst.paths.arcs.size()));
    }
    inst.paths.pair_offset.push_back(inst.paths.paths());
  }
  inst.validate();
  return inst;
}

/// Loads a data/topologies file, draws a gravity matrix and computes 4 edge-disjoint paths.
inline te::instance gravity_instance(const std::string& file, double scale, std::uint64_t seed = 1,
                                     double default_capacity = 1000.0) {
  te::topology g = te::load_topology(data_file(file), default_capacity);
  const auto p = te::default_traffic_parameters(g.name);
  const auto tm = te::generate_traffic(g, te::traffic_model::gravity, p, scale, seed);
  auto commodities = te::commodities_of(tm, g.nodes);
  return te::make_instance(std::move(g), std::move(commodities), te::path_options{});
}

}  // namespace te_test
