// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A user's shards, servers and current placement as CSV: one row `shard,server,load`
/// per replica (the queries that server serves for that shard), shards and servers by name; and
/// the same format written back for a new placement.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "popalloc/io/csv.hpp"
#include "popalloc/io/input_error.hpp"
#include "popalloc/io/text_file.hpp"
#include "popalloc/lb/problem.hpp"

namespace popalloc::lb {

/// \brief A load-balancing problem read from a placement CSV, with the names of its shards and
/// servers (index = the problem's shard and server numbers, in order of first appearance).
struct named_problem {
  problem instance;  ///< loads, memories, servers and the current placement; the caller sets
                     ///< epsilon and max_memory
  std::vector<std::string> shard_names;
  std::vector<std::string> server_names;
};

namespace detail {

/// Column positions of a placement CSV header, in file order; `count` where absent.
struct placement_columns {
  std::size_t shard, server, load, memory, is_new, count;
};

inline placement_columns read_placement_header(const std::vector<std::string_view>& fields,
                                               const std::string& path, long line) {
  const std::vector<std::size_t> at =
      io::header_columns(fields, {"shard", "server", "load", "memory", "new"}, 3,
                         "expected 'shard,server,load' and optionally 'memory'", path, line);
  return {at[0], at[1], at[2], at[3], at[4], fields.size()};
}

/// Index of `name` in `names`, adding it when new.
inline std::int32_t intern(std::unordered_map<std::string, std::int32_t>& index,
                           std::vector<std::string>& names, std::string_view name) {
  const auto [it, added] =
      index.emplace(std::string(name), static_cast<std::int32_t>(names.size()));
  if (added) names.emplace_back(name);
  return it->second;
}

/// What the rows said about one shard so far.
struct shard_rows {
  double load = 0.0;
  double memory = 1.0;
  long first_line = 0;
  bool unplaced = false;  ///< its row has an empty server
};

}  // namespace detail

/// \brief The shards, servers and current placement of a CSV text (`path` names it in errors).
///
/// The header names the columns `shard`, `server` and `load` in any order, optionally `memory`
/// (the shard's memory, default 1; every row of a shard gives the same value) and `new` (written
/// by append_placement_csv, ignored here). Each row is one replica: shard `shard` lives on server
/// `server`, which serves `load` of its queries (>= 0; 0 is an idle copy). A shard's load is the
/// sum over its rows and its routing fractions are the rows' shares of it (equal shares for a
/// shard whose rows are all 0). Two kinds of rows have an empty field:
/// - an empty `server`: a shard that lives nowhere yet (its only row), to be placed;
/// - an empty `shard` with load 0 or empty: a server that holds nothing yet, to be filled.
/// \throws io::input_error "PATH:LINE: what" for a malformed file, a repeated shard-server pair,
/// memories of one shard that differ, a bad number, no shard or no server at all.
inline named_problem read_placement_csv(std::string_view text, const std::string& path) {
  io::csv_records records(text, path);
  std::vector<std::string_view> fields;
  if (!records.next(fields))
    io::fail_at(path, 1, "file is empty, expected the header 'shard,server,load'");
  const detail::placement_columns columns =
      detail::read_placement_header(fields, path, records.line());
  named_problem out;
  std::unordered_map<std::string, std::int32_t> shard_index, server_index;
  std::vector<detail::shard_rows> shards;
  // (shard, server) -> line, to name the first of a repeated pair.
  std::unordered_map<std::uint64_t, long> pair_line;
  std::vector<std::vector<std::pair<std::int32_t, double>>> replicas;
  while (records.next(fields)) {
    const long line = records.line();
    io::check_field_count(fields, columns.count, path, line);
    const std::string_view shard_name = fields[columns.shard];
    const std::string_view server_name = fields[columns.server];
    if (shard_name.empty()) {
      if (server_name.empty()) io::fail_at(path, line, "both shard and server are empty");
      if (!fields[columns.load].empty() &&
          io::parse_non_negative(fields[columns.load], "load", path, line) != 0.0)
        io::fail_at(path, line,
                    "a row without a shard declares an empty server; its load must be 0 or empty");
      detail::intern(server_index, out.server_names, server_name);
      continue;
    }
    const double load = io::parse_non_negative(fields[columns.load], "load", path, line);
    const auto j =
        static_cast<std::size_t>(detail::intern(shard_index, out.shard_names, shard_name));
    const bool first_row = j == shards.size();
    if (first_row) {
      shards.push_back({});
      shards.back().first_line = line;
      replicas.emplace_back();
    }
    detail::shard_rows& rows = shards[j];
    if (!first_row && (server_name.empty() || rows.unplaced))
      io::fail_at(path, line,
                  "shard " + io::quoted_field(shard_name) + " was first given on line " +
                      std::to_string(rows.first_line) +
                      "; a shard to be placed (empty server) has that one row only");
    rows.unplaced = server_name.empty();
    if (columns.memory != columns.count) {
      const double memory = io::parse_non_negative(fields[columns.memory], "memory", path, line);
      if (!first_row && memory != rows.memory)
        io::fail_at(path, line,
                    "shard " + io::quoted_field(shard_name) + " has memory " +
                        io::quoted_field(fields[columns.memory]) +
                        " here but a different one on line " + std::to_string(rows.first_line));
      rows.memory = memory;
    }
    rows.load += load;
    if (server_name.empty()) continue;
    const std::int32_t i = detail::intern(server_index, out.server_names, server_name);
    const std::uint64_t key = (static_cast<std::uint64_t>(j) << 32) | static_cast<std::uint32_t>(i);
    const auto [seen, added] = pair_line.emplace(key, line);
    if (!added)
      io::fail_at(path, line,
                  "shard " + io::quoted_field(shard_name) + " on server " +
                      io::quoted_field(server_name) + " was already given on line " +
                      std::to_string(seen->second));
    replicas[j].emplace_back(i, load);
  }
  if (shards.empty())
    io::fail_at(path, records.line(), "no shard: expected a row 'shard,server,load' per replica");
  if (out.server_names.empty())
    io::fail_at(path, records.line(),
                "no server: every shard is to be placed, and no row declares a server");
  problem& p = out.instance;
  p.servers = static_cast<std::int32_t>(out.server_names.size());
  p.load.resize(shards.size());
  p.memory.resize(shards.size());
  p.current.shards.resize(shards.size());
  for (std::size_t j = 0; j < shards.size(); ++j) {
    p.load[j] = shards[j].load;
    p.memory[j] = shards[j].memory;
    auto& routes = p.current.shards[j];
    for (const auto& [server, replica_load] : replicas[j]) {
      const double share = shards[j].load > 0.0 ? replica_load / shards[j].load
                                                : 1.0 / static_cast<double>(replicas[j].size());
      routes.push_back(route{server, share});
    }
  }
  return out;
}

/// \brief Appends `result` as placement CSV: the header `shard,server,load,memory,new`, then one
/// row per replica in shard order (each shard's load times the replica's fraction; `new` is 1
/// for a replica that `named.instance.current` does not have; a shard without replicas gets the
/// row of a shard to be placed), then a row with an empty shard for every server that holds
/// nothing. read_placement_csv() reads it back as the next round's
/// current placement. \throws io::input_error for a name that cannot be written as a CSV field.
inline void append_placement_csv(std::string& out, const named_problem& named,
                                 const placement& result) {
  const problem& p = named.instance;
  // A row; an empty shard name (a server's own row) leaves the memory empty.
  const auto row = [&](const std::string& shard, const std::string& server, double load,
                       std::size_t j, bool is_new) {
    io::append_csv_field(out, shard);
    out += ',';
    io::append_csv_field(out, server);
    out += ',';
    io::append_number(out, load);
    out += ',';
    if (!shard.empty()) io::append_number(out, p.memory[j]);
    out += is_new ? ",1\n" : ",0\n";
  };
  out += "shard,server,load,memory,new\n";
  std::vector<char> holds(static_cast<std::size_t>(p.servers), 0);
  for (std::size_t j = 0; j < result.shards.size(); ++j) {
    if (result.shards[j].empty())  // placed nowhere: the row of a shard to be placed
      row(named.shard_names[j], std::string(), p.load[j], j, false);
    for (const route& r : result.shards[j]) {
      const auto i = static_cast<std::size_t>(r.server);
      holds[i] = 1;
      row(named.shard_names[j], named.server_names[i], p.load[j] * r.fraction, j,
          p.current.shards.empty() || !p.current.holds(j, r.server));
    }
  }
  for (std::size_t i = 0; i < holds.size(); ++i)
    if (holds[i] == 0) row(std::string(), named.server_names[i], 0.0, 0, false);
}

}  // namespace popalloc::lb
