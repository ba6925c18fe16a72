// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A user's traffic matrix as CSV: one row `source,target,demand` per node pair, the
/// nodes named as the topology names them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "popalloc/io/csv.hpp"
#include "popalloc/io/input_error.hpp"
#include "popalloc/te/instance.hpp"
#include "popalloc/te/topology.hpp"

namespace popalloc::te {

namespace detail {

/// Node index by name; -1 for a name that several nodes carry (a label used twice).
inline std::unordered_map<std::string_view, std::int32_t> node_index(const topology& graph) {
  std::unordered_map<std::string_view, std::int32_t> index;
  index.reserve(graph.node_names.size());
  for (std::size_t u = 0; u < graph.node_names.size(); ++u) {
    const auto [it, added] = index.emplace(graph.node_names[u], static_cast<std::int32_t>(u));
    if (!added) it->second = -1;
  }
  return index;
}

/// The columns source, target and demand of a demands CSV header, in file order.
struct demand_columns {
  std::size_t source, target, demand, count;
};

inline demand_columns read_demand_header(const std::vector<std::string_view>& fields,
                                         const std::string& path, long line) {
  const std::vector<std::size_t> at =
      io::header_columns(fields, {"source", "target", "demand"}, 3,
                         "expected the header 'source,target,demand'", path, line);
  return {at[0], at[1], at[2], fields.size()};
}

}  // namespace detail

/// \brief The commodities of a traffic matrix given as CSV text (`path` names it in errors):
/// a header with the columns `source`, `target` and `demand` in any order, then one row per
/// ordered node pair with the nodes named as in `graph.node_names` (a Topology Zoo node's id, a
/// node-link JSON node's id). Rows of demand 0 are skipped; the commodities come in POP's
/// row-major order (by source index, then target index), as commodities_of() numbers a matrix.
/// \throws io::input_error "PATH:LINE: what" for a malformed file, a node the topology does not
/// have (or has twice: an ambiguous label), a pair from a node to itself, a pair given twice, or
/// a demand that is not a number >= 0 in popalloc's value range.
inline std::vector<commodity> read_demands_csv(std::string_view text, const std::string& path,
                                               const topology& graph) {
  io::csv_records records(text, path);
  std::vector<std::string_view> fields;
  if (!records.next(fields))
    io::fail_at(path, 1, "file is empty, expected the header 'source,target,demand'");
  const detail::demand_columns columns = detail::read_demand_header(fields, path, records.line());
  const auto index = detail::node_index(graph);
  auto node_of = [&](std::string_view name, long line) {
    const auto found = index.find(name);
    if (found == index.end())
      io::fail_at(path, line,
                  "node " + io::quoted_field(name) + " is not in topology '" + graph.name +
                      "' (or not in its largest strongly connected component)");
    if (found->second < 0)
      io::fail_at(path, line,
                  "node name " + io::quoted_field(name) + " names more than one node of '" +
                      graph.name + "'");
    return found->second;
  };
  struct row {
    commodity pair;
    long line;
  };
  std::vector<row> rows;
  while (records.next(fields)) {
    const long line = records.line();
    io::check_field_count(fields, columns.count, path, line);
    const std::int32_t s = node_of(fields[columns.source], line);
    const std::int32_t t = node_of(fields[columns.target], line);
    if (s == t)
      io::fail_at(
          path, line,
          "source and target are the same node " + io::quoted_field(fields[columns.source]));
    const double d = io::parse_non_negative(fields[columns.demand], "demand", path, line);
    rows.push_back({commodity{s, t, d}, line});
  }
  std::sort(rows.begin(), rows.end(), [](const row& a, const row& b) {
    return std::tie(a.pair.source, a.pair.target, a.line) <
           std::tie(b.pair.source, b.pair.target, b.line);
  });
  std::vector<commodity> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i > 0 && rows[i].pair.source == rows[i - 1].pair.source &&
        rows[i].pair.target == rows[i - 1].pair.target)
      io::fail_at(path, rows[i].line,
                  "the pair " + graph.node_names[static_cast<std::size_t>(rows[i].pair.source)] +
                      " -> " + graph.node_names[static_cast<std::size_t>(rows[i].pair.target)] +
                      " was already given on line " + std::to_string(rows[i - 1].line));
    if (rows[i].pair.demand > 0.0) out.push_back(rows[i].pair);
  }
  return out;
}

}  // namespace popalloc::te
