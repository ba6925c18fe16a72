// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Topology Zoo GraphML loading with POP's rules (undirected links become two arcs,
/// parallel links collapse, largest strongly connected component, every capacity 1000).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "popalloc/io/input_error.hpp"
#include "popalloc/io/text_file.hpp"
#include "popalloc/te/topology.hpp"
#include "popalloc/te/xml_reader.hpp"

namespace popalloc::te {

/// Capacity given to every arc of a GraphML topology: Topology Zoo files carry none (the few
/// link-speed attributes are ignored, as in POP, so results stay comparable).
inline constexpr double graphml_default_capacity = 1000.0;

/// \brief Reads a GraphML document (text already loaded; `path` names it in errors).
/// \throws io::input_error "PATH:LINE: what" for malformed XML, a missing or repeated <graph>,
/// nodes without or with repeated ids, edges naming unknown nodes, or an empty graph.
inline topology parse_graphml(std::string_view text, const std::string& path, std::string name) {
  const xml::element root = xml::parse(text, path);
  if (root.name != "graphml")
    io::fail_at(path, root.line, "root element is <" + root.name + ">, expected <graphml>");
  const xml::element* graph = nullptr;
  for (const auto& child : root.children) {
    if (child.name != "graph") continue;
    if (graph != nullptr)
      io::fail_at(path, child.line, "more than one <graph> (only one graph per file is read)");
    graph = &child;
  }
  if (graph == nullptr) io::fail_at(path, root.line, "no <graph> element");
  bool directed = false;
  if (const std::string* d = graph->attribute("edgedefault")) {
    if (*d == "directed") {
      directed = true;
    } else if (*d != "undirected") {
      io::fail_at(path, graph->line,
                  "edgedefault must be 'directed' or 'undirected', not '" + *d + "'");
    }
  }
  std::vector<std::string> names;
  std::unordered_map<std::string, std::int32_t> index;
  for (const auto& child : graph->children) {
    if (child.name != "node") continue;
    const std::string* id = child.attribute("id");
    if (id == nullptr) io::fail_at(path, child.line, "<node> without an id attribute");
    if (!index.emplace(*id, static_cast<std::int32_t>(names.size())).second)
      io::fail_at(path, child.line, "node id '" + *id + "' appears twice");
    names.push_back(*id);
  }
  std::vector<arc> raw;
  for (const auto& child : graph->children) {
    if (child.name != "edge") continue;
    const std::string* source = child.attribute("source");
    const std::string* target = child.attribute("target");
    if (source == nullptr || target == nullptr)
      io::fail_at(path, child.line, "<edge> needs both source and target attributes");
    const auto u = index.find(*source);
    const auto v = index.find(*target);
    if (u == index.end())
      io::fail_at(path, child.line, "edge source '" + *source + "' is not a declared node");
    if (v == index.end())
      io::fail_at(path, child.line, "edge target '" + *target + "' is not a declared node");
    bool edge_directed = directed;
    if (const std::string* d = child.attribute("directed")) edge_directed = *d == "true";
    raw.push_back(arc{u->second, v->second, graphml_default_capacity});
    if (!edge_directed) raw.push_back(arc{v->second, u->second, graphml_default_capacity});
  }
  if (names.size() < 2) io::fail_at(path, graph->line, "the graph has fewer than 2 nodes");
  if (raw.empty()) io::fail_at(path, graph->line, "the graph has no edges");
  topology g = make_topology(std::move(name), std::move(names), raw);
  if (g.nodes < 2)
    io::fail_at(path, graph->line, "the largest strongly connected component has 1 node");
  return g;
}

/// \brief Loads a Topology Zoo .graphml file. \throws io::input_error.
inline topology load_graphml(const std::string& path, std::string name) {
  return parse_graphml(io::read_whole_file(path), path, std::move(name));
}

}  // namespace popalloc::te
