// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A TE answer as a plan file (JSON) that a later run re-plans from: its arc prices and
/// path flows keyed by node names, so the file stays valid for a drifted traffic matrix whose
/// commodities and path numbering differ.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "popalloc/io/input_error.hpp"
#include "popalloc/io/json.hpp"
#include "popalloc/te/flow.hpp"
#include "popalloc/te/instance.hpp"

namespace popalloc::te {

/// \brief The plan format's version (the "schema_version" member).
inline constexpr int plan_schema_version = 1;

namespace detail {

inline const std::string& node_name(const topology& g, std::int32_t u) {
  return g.node_names[static_cast<std::size_t>(u)];
}

/// The nodes of path p of `inst`, from its source to its target.
inline std::vector<std::int32_t> path_nodes(const instance& inst, std::size_t k, std::size_t p) {
  std::vector<std::int32_t> nodes{inst.commodities[k].source};
  for (auto a = inst.paths.path_offset[p]; a < inst.paths.path_offset[p + 1]; ++a)
    nodes.push_back(
        inst.graph.arcs[static_cast<std::size_t>(inst.paths.arcs[static_cast<std::size_t>(a)])].to);
  return nodes;
}

inline void append_member(std::string& out, const char* key, double value) {
  out += "  ";
  io::json::append_string(out, key);
  out += ": ";
  io::json::append_number(out, value);
  out += ",\n";
}

}  // namespace detail

/// \brief Appends `answer`, a result of solving `inst` for `objective`, as a plan file: the
/// topology's name, the objective, the solve's dual evaluations and core solves, every arc with
/// its price (null without prices: the LP's and POP's answers), and every path with flow, each
/// as its node names and its flow. read_plan_json() reads it back onto an instance of the same
/// topology. \throws invalid_problem when `answer` does not fit `inst`.
inline void append_plan_json(std::string& out, const instance& inst, te_objective objective,
                             const result& answer) {
  if (static_cast<std::int64_t>(answer.path_flow.size()) != inst.path_count() ||
      (!answer.prices.empty() &&
       static_cast<std::int64_t>(answer.prices.size()) != inst.graph.arc_count()))
    throw invalid_problem("the answer does not fit the instance's paths and arcs");
  const topology& g = inst.graph;
  out += "{\n  \"schema_version\": " + std::to_string(plan_schema_version) + ",\n";
  out += "  \"format\": \"popalloc-te-plan\",\n  \"topology\": ";
  io::json::append_string(out, g.name);
  out += ",\n  \"objective_name\": ";
  io::json::append_string(out, to_string(objective));
  out += ",\n";
  detail::append_member(out, "iterations", answer.iterations);
  detail::append_member(out, "solves", answer.solves);
  out += "  \"arcs\": [";
  for (std::size_t e = 0; e < g.arcs.size(); ++e) {
    out += e == 0 ? "\n    {\"from\": " : ",\n    {\"from\": ";
    io::json::append_string(out, detail::node_name(g, g.arcs[e].from));
    out += ", \"to\": ";
    io::json::append_string(out, detail::node_name(g, g.arcs[e].to));
    out += ", \"price\": ";
    if (answer.prices.empty())
      out += "null";
    else
      io::json::append_number(out, answer.prices[e]);
    out += '}';
  }
  out += "\n  ],\n  \"flows\": [";
  bool first = true;
  for (std::size_t k = 0; k < inst.commodities.size(); ++k)
    for (auto p = static_cast<std::size_t>(inst.paths.pair_offset[k]);
         p < static_cast<std::size_t>(inst.paths.pair_offset[k + 1]); ++p) {
      if (!(answer.path_flow[p] > 0.0)) continue;
      out += first ? "\n    {\"nodes\": [" : ",\n    {\"nodes\": [";
      first = false;
      const std::vector<std::int32_t> nodes = detail::path_nodes(inst, k, p);
      for (std::size_t q = 0; q < nodes.size(); ++q) {
        if (q > 0) out += ", ";
        io::json::append_string(out, detail::node_name(g, nodes[q]));
      }
      out += "], \"flow\": ";
      io::json::append_number(out, answer.path_flow[p]);
      out += '}';
    }
  out += "\n  ]\n}\n";
}

namespace detail {

using json_kind = io::json::value::kind;

inline const io::json::value& plan_member(const io::json::value& root, const char* key,
                                          json_kind type, const std::string& path) {
  const io::json::value* v = root.find(key);
  if (v == nullptr) io::fail_at(path, root.line, std::string("missing \"") + key + "\"");
  if (v->type != type)
    io::fail_at(path, v->line,
                std::string("\"") + key + "\" must be " + io::json::describe(type) + ", not " +
                    io::json::describe(v->type));
  return *v;
}

/// A count (dual evaluations, core solves): an integer in [0, 2^31).
inline int plan_count(const io::json::value& root, const char* key, const std::string& path) {
  const io::json::value& v = plan_member(root, key, json_kind::number, path);
  if (!(v.number >= 0.0 && v.number < 2147483648.0) || v.number != std::floor(v.number))
    io::fail_at(path, v.line, std::string("\"") + key + "\" must be an integer >= 0");
  return static_cast<int>(v.number);
}

/// A flow or a price: a finite number >= 0.
inline double plan_amount(const io::json::value& v, const char* what, const std::string& path) {
  if (v.type != json_kind::number || !std::isfinite(v.number) || v.number < 0.0)
    io::fail_at(path, v.line, std::string(what) + " must be a finite number >= 0");
  return v.number;
}

inline std::int32_t plan_node(const io::json::value& v,
                              const std::map<std::string, std::int32_t, std::less<>>& index,
                              const std::string& graph_name, const std::string& path) {
  if (v.type != json_kind::string) io::fail_at(path, v.line, "a node must be a string");
  const auto found = index.find(v.text);
  if (found == index.end())
    io::fail_at(path, v.line, "node '" + v.text + "' is not in topology '" + graph_name + "'");
  return found->second;
}

/// The plan's prices in the order of `g.arcs` (empty when the plan has none). The plan must
/// list exactly the topology's arcs: its prices price those links and no others.
inline std::vector<double> plan_prices(
    const io::json::value& arcs, const topology& g,
    const std::map<std::string, std::int32_t, std::less<>>& index, const std::string& path) {
  std::map<std::pair<std::int32_t, std::int32_t>, std::size_t> arc_of;
  for (std::size_t e = 0; e < g.arcs.size(); ++e) arc_of[{g.arcs[e].from, g.arcs[e].to}] = e;
  if (arcs.items.size() != g.arcs.size())
    io::fail_at(path, arcs.line,
                "the plan has " + std::to_string(arcs.items.size()) + " arcs, topology '" + g.name +
                    "' has " + std::to_string(g.arcs.size()) +
                    " (a re-plan needs the same topology)");
  std::vector<double> prices(g.arcs.size(), 0.0);
  std::vector<char> seen(g.arcs.size(), 0);
  std::size_t priced = 0;
  for (const io::json::value& a : arcs.items) {
    if (a.type != json_kind::object) io::fail_at(path, a.line, "an arc must be an object");
    const std::int32_t u =
        plan_node(plan_member(a, "from", json_kind::string, path), index, g.name, path);
    const std::int32_t v =
        plan_node(plan_member(a, "to", json_kind::string, path), index, g.name, path);
    const auto e = arc_of.find({u, v});
    if (e == arc_of.end())
      io::fail_at(path, a.line,
                  "arc " + node_name(g, u) + " -> " + node_name(g, v) + " is not in topology '" +
                      g.name + "'");
    if (seen[e->second]) io::fail_at(path, a.line, "arc listed twice");
    seen[e->second] = 1;
    const io::json::value* price = a.find("price");
    if (price == nullptr) io::fail_at(path, a.line, "an arc needs a \"price\" (or null)");
    if (price->type == json_kind::null) continue;
    prices[e->second] = plan_amount(*price, "\"price\"", path);
    ++priced;
  }
  if (priced != 0 && priced != prices.size())
    io::fail_at(path, arcs.line, "either every arc has a price or none has");
  if (priced == 0) prices.clear();
  return prices;
}

}  // namespace detail

/// \brief Reads a plan file (append_plan_json()) onto `inst`, an instance of the same topology
/// (same nodes and arcs) whose traffic matrix may have drifted: the result has a flow for every
/// path of `inst` (the plan's flow on the path with the same nodes; 0 for pairs the plan does
/// not route, and flows of pairs `inst` no longer has are dropped), the plan's prices in arc
/// order, and its evaluation and solve counts. replan_price() starts from it.
/// \throws io::input_error "PATH:LINE: what" for a malformed plan, another topology, or a
/// path that is not one of `inst`'s (other --paths or --path-method).
inline result read_plan_json(std::string_view text, const std::string& path, const instance& inst) {
  using detail::json_kind;
  const io::json::value root = io::json::parse(text, path);
  if (root.type != json_kind::object) io::fail_at(path, root.line, "expected a JSON object");
  const io::json::value* format = root.find("format");
  if (format == nullptr || format->type != json_kind::string || format->text != "popalloc-te-plan")
    io::fail_at(path, root.line,
                "not a popalloc-te plan (\"format\": \"popalloc-te-plan\" missing; write one "
                "with popalloc-te --plan)");
  const io::json::value& version =
      detail::plan_member(root, "schema_version", json_kind::number, path);
  if (version.number != plan_schema_version)
    io::fail_at(path, version.line,
                "unsupported schema_version (this popalloc-te reads " +
                    std::to_string(plan_schema_version) + ")");
  const topology& g = inst.graph;
  std::map<std::string, std::int32_t, std::less<>> index;
  for (std::size_t u = 0; u < g.node_names.size(); ++u)
    index.emplace(g.node_names[u], static_cast<std::int32_t>(u));

  result previous;
  previous.iterations = detail::plan_count(root, "iterations", path);
  previous.solves = detail::plan_count(root, "solves", path);
  previous.prices = detail::plan_prices(detail::plan_member(root, "arcs", json_kind::array, path),
                                        g, index, path);

  std::map<std::pair<std::int32_t, std::int32_t>, std::size_t> commodity_of;
  for (std::size_t k = 0; k < inst.commodities.size(); ++k)
    commodity_of[{inst.commodities[k].source, inst.commodities[k].target}] = k;
  previous.path_flow.assign(static_cast<std::size_t>(inst.path_count()), 0.0);
  std::vector<char> seen(previous.path_flow.size(), 0);
  for (const io::json::value& f :
       detail::plan_member(root, "flows", json_kind::array, path).items) {
    if (f.type != json_kind::object) io::fail_at(path, f.line, "a flow must be an object");
    const io::json::value& nodes = detail::plan_member(f, "nodes", json_kind::array, path);
    if (nodes.items.size() < 2) io::fail_at(path, nodes.line, "a path needs at least 2 nodes");
    std::vector<std::int32_t> walk;
    for (const io::json::value& v : nodes.items)
      walk.push_back(detail::plan_node(v, index, g.name, path));
    const double flow = detail::plan_amount(detail::plan_member(f, "flow", json_kind::number, path),
                                            "\"flow\"", path);
    const auto k = commodity_of.find({walk.front(), walk.back()});
    if (k == commodity_of.end()) continue;  // the pair's demand is gone
    std::size_t match = previous.path_flow.size();
    for (auto p = static_cast<std::size_t>(inst.paths.pair_offset[k->second]);
         p < static_cast<std::size_t>(inst.paths.pair_offset[k->second + 1]); ++p)
      if (detail::path_nodes(inst, k->second, p) == walk) match = p;
    if (match == previous.path_flow.size())
      io::fail_at(path, f.line,
                  "this path of " + detail::node_name(g, walk.front()) + " -> " +
                      detail::node_name(g, walk.back()) +
                      " is not one of this run's paths (a re-plan needs the same --paths and "
                      "--path-method)");
    if (seen[match]) io::fail_at(path, f.line, "path listed twice");
    seen[match] = 1;
    previous.path_flow[match] = flow;
  }
  return previous;
}

}  // namespace popalloc::te
