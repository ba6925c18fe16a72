// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Gavel's measured throughput table (simulation_throughputs.json): isolated steps/s of
/// every (job type, scale factor) on every GPU type.
#pragma once

#include <charconv>
#include <cmath>
#include <map>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "popalloc/cluster/cluster_spec.hpp"
#include "popalloc/error.hpp"
#include "popalloc/io/input_error.hpp"
#include "popalloc/io/json.hpp"
#include "popalloc/io/text_file.hpp"
#include "popalloc/value_range.hpp"

namespace popalloc::cluster {

/// \brief A (job type, scale factor) pair, Gavel's throughput key "('<job type>', <s>)".
struct job_key {
  std::string job_type;
  int scale_factor = 1;

  friend bool operator<(const job_key& a, const job_key& b) {
    return a.job_type != b.job_type ? a.job_type < b.job_type : a.scale_factor < b.scale_factor;
  }
  friend bool operator==(const job_key& a, const job_key& b) {
    return a.job_type == b.job_type && a.scale_factor == b.scale_factor;
  }
  /// \brief Gavel's spelling of the key, e.g. "('ResNet-18 (batch size 16)', 1)".
  std::string to_string() const {
    return "('" + job_type + "', " + std::to_string(scale_factor) + ")";
  }
};

/// \brief Isolated throughputs T[(job type, s)][GPU type] in steps/s of the whole s-GPU job.
/// Only positive entries are stored: a zero in the file means "cannot run there" (the model
/// does not fit) and reads back as 0 from get(), never as a value to divide by. Co-location
/// (space-sharing) entries of two keys with the same scale factor are kept as (T_first,
/// T_second) per GPU type (get_pair()); a pair with a 0 on either side cannot share a GPU.
class throughput_table {
 public:
  /// \brief GPU types in file order (Gavel's file: k80, p100, v100 and *_unconsolidated).
  const std::vector<std::string>& gpu_types() const { return gpu_types_; }

  /// \brief Adds a GPU type (no-op if present).
  void add_gpu_type(const std::string& gpu) {
    for (const std::string& g : gpu_types_)
      if (g == gpu) return;
    gpu_types_.push_back(gpu);
  }

  /// \brief Records T >= 0 (a zero only registers the key: the job type exists but cannot run on
  /// `gpu`). \throws invalid_problem for a negative or non-finite value or an unknown GPU type.
  void set(const job_key& key, const std::string& gpu, double value) {
    if (!std::isfinite(value) || value < 0.0)
      throw invalid_problem("throughput of " + key.to_string() + " on " + gpu +
                            " must be finite and >= 0");
    bool known = false;
    for (const std::string& g : gpu_types_) known = known || g == gpu;
    if (!known) throw invalid_problem("unknown GPU type '" + gpu + "' in the throughput table");
    auto& row = entries_[key];
    if (value > 0.0) row[gpu] = value;
  }

  /// \brief Whether (job type, s) has an entry for any GPU type.
  bool contains(const job_key& key) const { return entries_.count(key) != 0; }
  bool contains_job_type(std::string_view job_type) const {
    for (const auto& entry : entries_)
      if (entry.first.job_type == job_type) return true;
    return false;
  }

  /// \brief T on `gpu`, 0 when the key or the GPU type has no positive entry.
  double get(const job_key& key, std::string_view gpu) const {
    const auto row = entries_.find(key);
    if (row == entries_.end()) return 0.0;
    for (const auto& [name, value] : row->second)
      if (name == gpu) return value;
    return 0.0;
  }

  /// \brief Every key, sorted by job type then scale factor.
  std::vector<job_key> keys() const {
    std::vector<job_key> out;
    out.reserve(entries_.size());
    for (const auto& entry : entries_) out.push_back(entry.first);
    return out;
  }

  /// \brief The job types (sorted) that have a scale-factor-1 entry.
  std::vector<std::string> job_types() const {
    std::vector<std::string> out;
    for (const auto& entry : entries_)
      if (entry.first.scale_factor == 1) out.push_back(entry.first.job_type);
    return out;
  }

  /// \brief Throughputs of (job type, s) in the cluster's GPU-type order (0 where it cannot
  /// run). \throws invalid_problem if the key is not in the table.
  std::vector<double> for_cluster(const job_key& key, const gpu_cluster& cluster) const {
    if (!contains(key))
      throw invalid_problem("job " + key.to_string() + " is not in the throughput table");
    std::vector<double> out(cluster.size());
    for (std::size_t w = 0; w < cluster.size(); ++w) out[w] = get(key, cluster.types[w]);
    return out;
  }

  std::size_t size() const { return entries_.size(); }

  /// \brief Records the co-located throughputs of `first` running next to `second` on `gpu`:
  /// `first_value` for `first`, `second_value` for `second` (steps/s of each whole job). Keys
  /// with different scale factors never share GPUs and are ignored. \throws invalid_problem for
  /// a negative or non-finite value or an unknown GPU type.
  void set_pair(const job_key& first, const job_key& second, const std::string& gpu,
                double first_value, double second_value) {
    if (!(std::isfinite(first_value) && first_value >= 0.0 && std::isfinite(second_value) &&
          second_value >= 0.0))
      throw invalid_problem("co-located throughputs of " + first.to_string() + " with " +
                            second.to_string() + " on " + gpu + " must be finite and >= 0");
    bool known = false;
    for (const std::string& g : gpu_types_) known = known || g == gpu;
    if (!known) throw invalid_problem("unknown GPU type '" + gpu + "' in the throughput table");
    if (first.scale_factor != second.scale_factor) return;
    if (first_value > 0.0 && second_value > 0.0)
      pairs_[{first, second}][gpu] = {first_value, second_value};
  }

  /// \brief (T_first, T_second) when `first` shares a GPU of type `gpu` with `second`; (0, 0)
  /// when the table has no such pair (or a zero in it). Looked up as given, else reversed.
  std::pair<double, double> get_pair(const job_key& first, const job_key& second,
                                     std::string_view gpu) const {
    auto find = [&](const job_key& a, const job_key& b) -> const std::pair<double, double>* {
      const auto row = pairs_.find({a, b});
      if (row == pairs_.end()) return nullptr;
      for (const auto& [name, value] : row->second)
        if (name == gpu) return &value;
      return nullptr;
    };
    if (const auto* v = find(first, second)) return *v;
    if (const auto* v = find(second, first)) return {v->second, v->first};
    return {0.0, 0.0};
  }

  /// \brief Number of (first, second) key pairs with a co-located entry on some GPU type.
  std::size_t pair_count() const { return pairs_.size(); }

 private:
  std::vector<std::string> gpu_types_;
  std::map<job_key, std::map<std::string, double>> entries_;
  std::map<std::pair<job_key, job_key>, std::map<std::string, std::pair<double, double>>> pairs_;
};

/// \brief Parses Gavel's job key "('<job type>', <scale factor>)"; false if malformed.
inline bool parse_job_key(std::string_view text, job_key& out) {
  if (text.size() < 7 || text.substr(0, 2) != "('" || text.back() != ')') return false;
  const std::size_t quote = text.rfind("', ");
  if (quote == std::string_view::npos || quote < 2) return false;
  const std::string_view number = text.substr(quote + 3, text.size() - quote - 4);
  int s = 0;
  const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), s);
  if (number.empty() || ec != std::errc() || end != number.data() + number.size() || s < 1)
    return false;
  out.job_type = std::string(text.substr(2, quote - 2));
  out.scale_factor = s;
  return !out.job_type.empty();
}

/// One co-location array [T_self, T_partner] of `key` on `gpu`.
inline void read_colocated(const io::json::member& m, const job_key& key, const std::string& gpu,
                           const std::string& path, throughput_table& table) {
  job_key partner;
  if (!parse_job_key(m.key, partner))
    io::fail_at(
        path, m.content.line,
        "malformed partner key \"" + m.key + "\" in the co-location entries of " + key.to_string());
  const double self = m.content.items[0].number, other = m.content.items[1].number;
  for (const double v : {self, other})
    if (!std::isfinite(v) || v < 0.0 || !popalloc::detail::in_value_range(v))
      io::fail_at(path, m.content.line,
                  "co-located throughput of " + key.to_string() + " with " + m.key + " on '" + gpu +
                      "' must be finite and >= 0 (" + popalloc::detail::value_range_text() + ")");
  table.set_pair(key, partner, gpu, self, other);
}

/// \brief Parses the JSON text of a Gavel throughput file (schema in data/gavel/README.md):
/// {"<gpu>": {"('<job type>', <s>)": {"null": T, "('<partner>', <s>)": [a, b], ...}, ...}, ...}.
/// The isolated "null" entries and the co-location arrays [T_self, T_partner] are read.
/// \throws io::input_error "PATH:LINE: what" for malformed files, duplicate keys, missing
/// "null" entries, malformed partner keys, or negative/non-numeric throughputs.
inline throughput_table parse_throughputs(std::string_view text, const std::string& path) {
  using io::json::value;
  const value root = io::json::parse(text, path);
  if (root.type != value::kind::object)
    io::fail_at(path, root.line, "expected an object mapping GPU types to job tables");
  if (root.members.empty()) io::fail_at(path, root.line, "the throughput table is empty");
  throughput_table table;
  for (const auto& gpu : root.members) table.add_gpu_type(gpu.key);
  if (table.gpu_types().size() != root.members.size())
    for (std::size_t a = 0; a < root.members.size(); ++a)
      for (std::size_t b = 0; b < a; ++b)
        if (root.members[a].key == root.members[b].key)
          io::fail_at(path, root.members[a].content.line,
                      "GPU type '" + root.members[a].key + "' appears twice");
  for (const auto& gpu : root.members) {
    const value& jobs = gpu.content;
    if (jobs.type != value::kind::object)
      io::fail_at(path, jobs.line,
                  "GPU type '" + gpu.key + "': expected an object of job keys, got " +
                      io::json::describe(jobs.type));
    std::map<job_key, long> seen;
    for (const auto& entry : jobs.members) {
      job_key key;
      if (!parse_job_key(entry.key, key))
        io::fail_at(path, entry.content.line,
                    "malformed job key \"" + entry.key +
                        "\" (expected \"('<job type>', <scale factor>)\")");
      if (!seen.emplace(key, entry.content.line).second)
        io::fail_at(path, entry.content.line,
                    "job key " + entry.key + " appears twice under '" + gpu.key + "'");
      if (entry.content.type != value::kind::object)
        io::fail_at(path, entry.content.line,
                    "entry " + entry.key + " on '" + gpu.key +
                        "' must be an object with a \"null\" member");
      const value* isolated = nullptr;
      std::vector<const io::json::member*> colocated;
      for (const auto& m : entry.content.members) {
        if (m.key == "null") {
          if (isolated != nullptr)
            io::fail_at(path, m.content.line, "\"null\" appears twice in " + entry.key);
          isolated = &m.content;
        } else if (m.content.type != value::kind::array || m.content.items.size() != 2 ||
                   m.content.items[0].type != value::kind::number ||
                   m.content.items[1].type != value::kind::number) {
          io::fail_at(path, m.content.line,
                      "co-location entry " + m.key + " of " + entry.key +
                          " must be an array of two numbers");
        } else {
          colocated.push_back(&m);
        }
      }
      if (isolated == nullptr)
        io::fail_at(path, entry.content.line,
                    "entry " + entry.key + " on '" + gpu.key +
                        "' has no \"null\" (isolated throughput) member");
      if (isolated->type != value::kind::number)
        io::fail_at(path, isolated->line,
                    "isolated throughput of " + entry.key + " on '" + gpu.key +
                        "' must be a number, got " + io::json::describe(isolated->type));
      // The core's range: beyond it the policies' normalisers overflow or underflow and a
      // policy would "converge" on garbage (max-min fairness reported objective 0).
      if (!std::isfinite(isolated->number) || isolated->number < 0.0 ||
          !popalloc::detail::in_value_range(isolated->number))
        io::fail_at(path, isolated->line,
                    "isolated throughput of " + entry.key + " on '" + gpu.key +
                        "' must be finite and >= 0 (" + popalloc::detail::value_range_text() + ")");
      table.set(key, gpu.key, isolated->number);
      for (const auto* m : colocated) read_colocated(*m, key, gpu.key, path, table);
    }
  }
  return table;
}

/// \brief Reads and parses a Gavel throughput JSON file. \throws io::input_error.
inline throughput_table load_throughputs(const std::string& path) {
  return parse_throughputs(io::read_whole_file(path), path);
}

}  // namespace popalloc::cluster
