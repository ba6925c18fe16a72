// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A traffic-engineering instance: topology, commodities (source, target, demand) and the
/// candidate paths of every commodity.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "popalloc/error.hpp"
#include "popalloc/te/paths.hpp"
#include "popalloc/te/topology.hpp"

namespace popalloc::te {

/// \brief Demand `demand` > 0 from `source` to `target`.
struct commodity {
  std::int32_t source = 0;
  std::int32_t target = 0;
  double demand = 0.0;
};

/// \brief Commodity q may use paths paths.pair_offset[q] .. [q+1]-1 (arc lists in paths.arcs).
struct instance {
  topology graph;
  std::vector<commodity> commodities;
  path_set paths;

  std::int64_t commodity_count() const { return static_cast<std::int64_t>(commodities.size()); }
  std::int64_t path_count() const { return paths.paths(); }
  double total_demand() const {
    double total = 0.0;
    for (const auto& c : commodities) total += c.demand;
    return total;
  }

  /// \brief Throws invalid_problem unless the instance is consistent and every commodity has a
  /// positive finite demand, distinct endpoints and at least one path.
  void validate() const {
    graph.validate();
    if (commodities.empty()) throw invalid_problem("the traffic matrix has no positive demand");
    if (paths.pairs() != commodity_count())
      throw invalid_problem("path set and commodity list differ in size");
    for (std::size_t q = 0; q < commodities.size(); ++q) {
      const commodity& c = commodities[q];
      if (c.source < 0 || c.source >= graph.nodes || c.target < 0 || c.target >= graph.nodes ||
          c.source == c.target)
        throw invalid_problem("commodity " + std::to_string(q) + " does not join two nodes");
      if (!std::isfinite(c.demand) || !(c.demand > 0.0))
        throw invalid_problem("demand of commodity " + std::to_string(q) +
                              " must be finite and > 0");
      if (paths.pair_offset[q + 1] == paths.pair_offset[q])
        throw invalid_problem("commodity " + std::to_string(q) + " (" +
                              graph.node_names[static_cast<std::size_t>(c.source)] + " -> " +
                              graph.node_names[static_cast<std::size_t>(c.target)] +
                              ") has no path");
    }
  }
};

/// \brief Commodities of a row-major n x n traffic matrix: every (s, t), s != t, with D_st > 0,
/// in row-major order (POP's numbering). \throws invalid_problem for a wrong size or entries
/// that are negative or not finite.
inline std::vector<commodity> commodities_of(const std::vector<double>& matrix,
                                             std::int32_t nodes) {
  const auto n = static_cast<std::size_t>(nodes);
  if (matrix.size() != n * n)
    throw invalid_problem("traffic matrix has " + std::to_string(matrix.size()) +
                          " entries, expected " + std::to_string(n * n));
  std::vector<commodity> out;
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t t = 0; t < n; ++t) {
      const double d = matrix[s * n + t];
      if (!std::isfinite(d) || d < 0.0)
        throw invalid_problem("traffic matrix entry (" + std::to_string(s) + ", " +
                              std::to_string(t) + ") must be finite and >= 0");
      if (s != t && d > 0.0)
        out.push_back(commodity{static_cast<std::int32_t>(s), static_cast<std::int32_t>(t), d});
    }
  return out;
}

/// \brief Builds and validates an instance: computes `options.k` paths per commodity.
inline instance make_instance(topology graph, std::vector<commodity> commodities,
                              const path_options& options) {
  instance inst;
  inst.graph = std::move(graph);
  inst.commodities = std::move(commodities);
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  pairs.reserve(inst.commodities.size());
  for (const auto& c : inst.commodities) pairs.emplace_back(c.source, c.target);
  inst.paths = compute_paths(inst.graph, pairs, options);
  inst.validate();
  return inst;
}

}  // namespace popalloc::te
