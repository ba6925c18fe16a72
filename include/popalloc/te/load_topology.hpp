// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Loads a topology file by its extension (.graphml or .json).
#pragma once

#include <string>

#include "popalloc/io/input_error.hpp"
#include "popalloc/te/graphml.hpp"
#include "popalloc/te/node_link_json.hpp"
#include "popalloc/te/topology.hpp"

namespace popalloc::te {

/// \brief The file name without directory and extension ("Colt" for ".../Colt.graphml"): the
/// topology's name, which selects the traffic-matrix defaults.
inline std::string topology_name_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  const std::size_t dot = base.find_last_of('.');
  return dot == std::string::npos || dot == 0 ? base : base.substr(0, dot);
}

/// \brief Loads `path`: ".graphml" (Topology Zoo rules) or ".json" (node-link; arcs without a
/// capacity get `default_capacity`). \throws io::input_error for other extensions or bad files.
inline topology load_topology(const std::string& path, double default_capacity = 1000.0) {
  auto ends_with = [&](const char* suffix) {
    const std::string s(suffix);
    return path.size() >= s.size() && path.compare(path.size() - s.size(), s.size(), s) == 0;
  };
  if (ends_with(".graphml")) return load_graphml(path, topology_name_of(path));
  if (ends_with(".json"))
    return load_node_link_json(path, topology_name_of(path), default_capacity);
  throw io::input_error(path + ": unknown topology format (expected .graphml or .json)");
}

}  // namespace popalloc::te
