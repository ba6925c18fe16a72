// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief networkx node-link JSON topologies (POP's b4-teavar.json, toy-network.json).
#pragma once

#include <cmath>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "popalloc/io/input_error.hpp"
#include "popalloc/io/json.hpp"
#include "popalloc/io/text_file.hpp"
#include "popalloc/te/topology.hpp"
#include "popalloc/value_range.hpp"

namespace popalloc::te {

namespace detail {

/// A node id as text: integers print without a fraction so 3 and "3" name different nodes
/// only if the file mixes both.
inline std::string node_key(const io::json::value& id, const std::string& path) {
  using kind = io::json::value::kind;
  if (id.type == kind::string) return "s:" + id.text;
  if (id.type == kind::number) {
    if (id.number == std::floor(id.number) && std::abs(id.number) < 1e15)
      return "n:" + std::to_string(static_cast<long long>(id.number));
    std::string text = "n:";
    io::json::append_number(text, id.number);
    return text;
  }
  io::fail_at(path, id.line, "a node id must be a number or a string");
}

}  // namespace detail

/// \brief Reads a node-link document: "nodes" (objects with "id"), "links" (or "edges") with
/// "source", "target" and optional "capacity" (`default_capacity` when absent). An undirected
/// document ("directed": false) gives two arcs per link. Nodes whose ids are exactly the integers
/// 0..n-1 are indexed by id (b4-teavar.json lists them out of order); other ids by position.
/// The loading rules of make_topology() apply (parallel arcs collapse, largest strongly
/// connected component). \throws io::input_error "PATH:LINE: what".
inline topology parse_node_link_json(std::string_view text, const std::string& path,
                                     std::string name, double default_capacity = 1000.0) {
  using kind = io::json::value::kind;
  const io::json::value root = io::json::parse(text, path);
  if (root.type != kind::object) io::fail_at(path, root.line, "expected a JSON object");
  bool directed = true;
  if (const auto* d = root.find("directed")) {
    if (d->type != kind::boolean) io::fail_at(path, d->line, "\"directed\" must be true or false");
    directed = d->boolean;
  }
  const io::json::value* nodes = root.find("nodes");
  if (nodes == nullptr || nodes->type != kind::array)
    io::fail_at(path, root.line, "expected a \"nodes\" array");
  const io::json::value* links = root.find("links");
  if (links == nullptr) links = root.find("edges");
  if (links == nullptr || links->type != kind::array)
    io::fail_at(path, root.line, "expected a \"links\" (or \"edges\") array");
  const std::size_t n = nodes->items.size();
  std::vector<std::string> keys(n), names(n);
  bool integer_ids = true;
  std::vector<char> id_seen(n, 0);
  for (std::size_t q = 0; q < n; ++q) {
    const io::json::value& node = nodes->items[q];
    if (node.type != kind::object) io::fail_at(path, node.line, "a node must be an object");
    const io::json::value* id = node.find("id");
    if (id == nullptr) io::fail_at(path, node.line, "node without an \"id\"");
    keys[q] = detail::node_key(*id, path);
    names[q] = keys[q].substr(2);
    if (id->type == kind::number && id->number >= 0 && id->number < static_cast<double>(n) &&
        id->number == std::floor(id->number) && !id_seen[static_cast<std::size_t>(id->number)])
      id_seen[static_cast<std::size_t>(id->number)] = 1;
    else
      integer_ids = false;
  }
  std::unordered_map<std::string, std::int32_t> index;
  std::vector<std::string> ordered(n);
  for (std::size_t q = 0; q < n; ++q) {
    const auto slot = integer_ids ? static_cast<std::int32_t>(std::stoll(names[q]))
                                  : static_cast<std::int32_t>(q);
    if (!index.emplace(keys[q], slot).second)
      io::fail_at(path, nodes->items[q].line, "node id '" + names[q] + "' appears twice");
    ordered[static_cast<std::size_t>(slot)] = names[q];
  }
  std::vector<arc> raw;
  for (const io::json::value& link : links->items) {
    if (link.type != kind::object) io::fail_at(path, link.line, "a link must be an object");
    const io::json::value* source = link.find("source");
    const io::json::value* target = link.find("target");
    if (source == nullptr || target == nullptr)
      io::fail_at(path, link.line, "a link needs \"source\" and \"target\"");
    const auto u = index.find(detail::node_key(*source, path));
    const auto v = index.find(detail::node_key(*target, path));
    if (u == index.end()) io::fail_at(path, source->line, "link source is not a listed node");
    if (v == index.end()) io::fail_at(path, target->line, "link target is not a listed node");
    double capacity = default_capacity;
    if (const io::json::value* c = link.find("capacity")) {
      if (c->type != kind::number || !std::isfinite(c->number) || c->number < 0.0 ||
          !popalloc::detail::in_value_range(c->number))
        io::fail_at(path, c->line,
                    std::string("\"capacity\" must be a finite number >= 0 (") +
                        popalloc::detail::value_range_text() + ")");
      capacity = c->number;
    }
    raw.push_back(arc{u->second, v->second, capacity});
    if (!directed) raw.push_back(arc{v->second, u->second, capacity});
  }
  if (n < 2) io::fail_at(path, nodes->line, "fewer than 2 nodes");
  if (raw.empty()) io::fail_at(path, links->line, "no links");
  topology g = make_topology(std::move(name), std::move(ordered), raw);
  if (g.nodes < 2)
    io::fail_at(path, root.line, "the largest strongly connected component has 1 node");
  return g;
}

/// \brief Loads a node-link .json file. \throws io::input_error.
inline topology load_node_link_json(const std::string& path, std::string name,
                                    double default_capacity = 1000.0) {
  return parse_node_link_json(io::read_whole_file(path), path, std::move(name), default_capacity);
}

}  // namespace popalloc::te
