// SPDX-License-Identifier: Apache-2.0
// Reading and writing the CSV instance format (see instance.hpp). Reading is built for
// million-row files: the whole file is read at once, fields are string_views into it, numbers
// go through std::from_chars, and duplicate ids are found with a flat open-addressing table.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <utility>
#include <vector>

#include "instance.hpp"
#include "io.hpp"

namespace popalloc_solve {
namespace {

/// Prefix of a per-resource demand column: `demand:v100` is the units of v100 the job occupies.
constexpr std::string_view kDemandPrefix = "demand:";

bool is_demand_column(std::string_view name) {
  return name.substr(0, kDemandPrefix.size()) == kDemandPrefix;
}

/// Names a resource cannot take: the jobs file's own columns.
bool is_jobs_column_name(std::string_view name) {
  return name == "id" || name == "weight" || name == "target" || name == "demand" ||
         is_demand_column(name);
}

struct resource_table {
  std::vector<std::string> names;
  std::vector<double> capacity;
  std::unordered_map<std::string, std::size_t> index;
};

resource_table read_resources(const std::string& path) {
  const std::string text = read_whole_file(path);
  csv_records records(text, path);
  std::vector<std::string_view> fields;
  if (!records.next(fields)) fail_at(path, 1, "file is empty, expected the header 'name,capacity'");
  const long header_line = records.line();
  const std::size_t columns = fields.size();
  const std::vector<std::size_t> at = popalloc::io::header_columns(
      fields, {"name", "capacity"}, 2, "expected the header 'name,capacity'", path, header_line);
  const std::size_t name_column = at[0], capacity_column = at[1];

  resource_table table;
  std::vector<long> defined_on;
  while (records.next(fields)) {
    const long line = records.line();
    check_field_count(fields, columns, path, line);
    const std::string_view name = fields[name_column];
    if (name.empty()) fail_at(path, line, "empty resource name");
    // A name is a column of the jobs file and of every output: control characters (a stray
    // carriage return, a NUL) would not survive either.
    const auto control = std::find_if(name.begin(), name.end(), [](char c) {
      return static_cast<unsigned char>(c) < 0x20 || c == '\x7f';
    });
    if (control != name.end())
      fail_at(path, line,
              "resource name " + quoted_field(name) + " contains a control character (byte " +
                  std::to_string(static_cast<unsigned char>(*control)) + ")");
    if (is_jobs_column_name(name))
      fail_at(path, line,
              "resource name " + quoted_field(name) + " is reserved for a column of the jobs file");
    const auto [where, inserted] = table.index.emplace(std::string(name), table.names.size());
    if (!inserted)
      fail_at(path, line,
              "duplicate resource " + quoted_field(name) + " (first on line " +
                  std::to_string(defined_on[where->second]) + ")");
    table.names.emplace_back(name);
    table.capacity.push_back(parse_non_negative(fields[capacity_column], "capacity", path, line));
    defined_on.push_back(line);
  }
  if (table.names.empty()) fail_at(path, header_line, "no resources after the header");
  return table;
}

/// Detects repeated job ids in one pass with a flat open-addressing table: a node-based hash set
/// costs several times the memory and time on a million rows. A slot holds the upper 32 bits of
/// the id's hash (so most probes skip the string comparison) and the row + 1 (0 = empty).
class duplicate_detector {
 public:
  explicit duplicate_detector(std::size_t max_entries) {
    std::size_t size = 16;
    while (size < 2 * max_entries) size *= 2;
    slots_.assign(size, 0);
  }

  /// Records `ids[row]`; returns the earlier row with the same id, or -1.
  std::int64_t insert(const std::vector<std::string_view>& ids, std::size_t row) {
    const std::uint64_t hash = std::hash<std::string_view>{}(ids[row]);
    const std::uint64_t tag = hash & ~kRowMask;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t slot = static_cast<std::size_t>(hash) & mask;; slot = (slot + 1) & mask) {
      const std::uint64_t entry = slots_[slot];
      if (entry == 0) {
        slots_[slot] = tag | (row + 1);
        return -1;
      }
      const std::size_t other = static_cast<std::size_t>(entry & kRowMask) - 1;
      if ((entry & ~kRowMask) == tag && ids[other] == ids[row])
        return static_cast<std::int64_t>(other);
    }
  }

 private:
  static constexpr std::uint64_t kRowMask = 0xFFFFFFFFu;
  std::vector<std::uint64_t> slots_;
};

/// Role of a JOBS.csv column: one of these, the index of a resource (>= 0) for its throughput,
/// or demand_role(j) for the column `demand:<name of resource j>`.
constexpr long kIdColumn = -1, kWeightColumn = -2, kTargetColumn = -3, kDemandColumn = -4;
constexpr long kFirstDemandRole = -100;
constexpr long demand_role(std::size_t resource) {
  return kFirstDemandRole - static_cast<long>(resource);
}
constexpr bool is_demand_role(long role) { return role <= kFirstDemandRole; }
constexpr std::size_t demand_resource(long role) {
  return static_cast<std::size_t>(kFirstDemandRole - role);
}
double parse_demand(std::string_view field, const std::string& column, const std::string& path,
                    long line) {
  const double demand = parse_non_negative(field, column, path, line);
  if (!(demand > 0.0))
    fail_at(path, line, column + " must be > 0 (units of the resource the job occupies)");
  return demand;
}

}  // namespace

instance read_instance(const std::string& jobs_path, const std::string& resources_path,
                       const data_requirements& requirements) {
  resource_table resources = read_resources(resources_path);
  const auto m = static_cast<Eigen::Index>(resources.names.size());

  const std::string text = read_whole_file(jobs_path);
  const std::string& path = jobs_path;
  csv_records records(text, path);
  std::vector<std::string_view> fields;
  if (!records.next(fields))
    fail_at(path, 1, "file is empty, expected a header 'id,weight,target,<resource>,...'");
  const long header_line = records.line();
  const std::size_t columns = fields.size();
  std::vector<long> role(columns);
  std::vector<std::string> column_names(fields.begin(), fields.end());
  bool has_id = false, has_weight = false, has_target = false, has_demand = false;
  std::vector<bool> resource_seen(resources.names.size(), false);
  std::vector<bool> demand_seen(resources.names.size(), false);
  bool has_resource_demand = false;
  for (std::size_t c = 0; c < columns; ++c) {
    const std::string_view name = fields[c];
    bool duplicate = false;
    if (name == "id") {
      duplicate = std::exchange(has_id, true);
      role[c] = kIdColumn;
    } else if (name == "weight") {
      duplicate = std::exchange(has_weight, true);
      role[c] = kWeightColumn;
    } else if (name == "target") {
      duplicate = std::exchange(has_target, true);
      role[c] = kTargetColumn;
    } else if (name == "demand") {
      duplicate = std::exchange(has_demand, true);
      role[c] = kDemandColumn;
    } else if (is_demand_column(name)) {
      const std::string_view resource = name.substr(kDemandPrefix.size());
      const auto found = resources.index.find(std::string(resource));
      if (found == resources.index.end())
        fail_at(path, header_line,
                "unknown column " + quoted_field(name) + ": " + quoted_field(resource) +
                    " is not a resource of " + resources_path);
      duplicate = demand_seen[found->second];
      demand_seen[found->second] = true;
      has_resource_demand = true;
      role[c] = demand_role(found->second);
    } else {
      const auto found = resources.index.find(std::string(name));
      if (found == resources.index.end())
        fail_at(path, header_line,
                "unknown column " + quoted_field(name) +
                    ": not id, weight, target, demand, demand:<resource> or a resource of " +
                    resources_path);
      duplicate = resource_seen[found->second];
      resource_seen[found->second] = true;
      role[c] = static_cast<long>(found->second);
    }
    if (duplicate) fail_at(path, header_line, "duplicate column " + quoted_field(name));
  }
  if (!has_id) fail_at(path, header_line, "missing column 'id'");
  if (requirements.needs_target && !has_target)
    fail_at(path, header_line,
            std::string("missing column 'target', which the ") + requirements.utility_name +
                " utility needs");

  const std::size_t row_bound = records.remaining_records_bound();
  if (row_bound >= std::numeric_limits<std::int32_t>::max())
    fail_at(path, header_line, "too many lines: at most 2^31 - 2 jobs are supported");
  instance result;
  result.resource_names = std::move(resources.names);
  auto& problem = result.problem;
  problem.capacity = Eigen::Map<const Eigen::VectorXd>(resources.capacity.data(), m);
  problem.throughput.setZero(static_cast<Eigen::Index>(row_bound), m);
  if (has_weight) problem.weight.resize(static_cast<Eigen::Index>(row_bound));
  if (has_target) problem.target.resize(static_cast<Eigen::Index>(row_bound));
  if (has_demand) problem.job_demand.resize(static_cast<Eigen::Index>(row_bound));
  // With a demand:<resource> column the problem takes an n x m demand matrix; a resource
  // without one takes the job's `demand` (or 1).
  if (has_resource_demand) problem.demand.setOnes(static_cast<Eigen::Index>(row_bound), m);

  std::vector<std::string_view> ids;
  std::vector<long> row_lines;
  ids.reserve(row_bound);
  row_lines.reserve(row_bound);
  duplicate_detector duplicates(row_bound);
  while (records.next(fields)) {
    const long line = records.line();
    check_field_count(fields, columns, path, line);
    const auto row = static_cast<Eigen::Index>(ids.size());
    double* throughput = problem.throughput.row(row).data();
    for (std::size_t c = 0; c < columns; ++c) {
      const std::string_view field = fields[c];
      switch (role[c]) {
        case kIdColumn:
          if (field.empty()) fail_at(path, line, "empty job id");
          ids.push_back(field);
          break;
        case kWeightColumn: {
          const double weight = parse_non_negative(field, "weight", path, line);
          if (requirements.needs_positive_weight && !(weight > 0.0))
            fail_at(path, line,
                    std::string("weight must be > 0 for the ") + requirements.utility_name +
                        " utility");
          problem.weight[row] = weight;
          break;
        }
        case kTargetColumn:
          problem.target[row] = parse_non_negative(field, "target", path, line);
          break;
        case kDemandColumn: {
          const double demand = parse_non_negative(field, "demand", path, line);
          if (!(demand > 0.0))
            fail_at(path, line, "demand must be > 0 (units of every resource the job occupies)");
          problem.job_demand[row] = demand;
          break;
        }
        default:
          if (is_demand_role(role[c])) {
            problem.demand(row, static_cast<Eigen::Index>(demand_resource(role[c]))) =
                parse_demand(field, column_names[c], path, line);
          } else {
            throughput[role[c]] = parse_non_negative(field, column_names[c], path, line);
          }
      }
    }
    if (has_resource_demand && has_demand)
      for (Eigen::Index j = 0; j < m; ++j)
        if (!demand_seen[static_cast<std::size_t>(j)])
          problem.demand(row, j) = problem.job_demand[row];
    row_lines.push_back(line);
    const std::int64_t earlier = duplicates.insert(ids, ids.size() - 1);
    if (earlier >= 0)
      fail_at(path, line,
              "duplicate job id " + quoted_field(ids.back()) + " (first on line " +
                  std::to_string(row_lines[static_cast<std::size_t>(earlier)]) + ")");
    if (requirements.needs_positive_throughput) {
      bool usable = false;
      for (Eigen::Index j = 0; j < m && !usable; ++j)
        usable = throughput[j] > 0.0 && problem.capacity[j] > 0.0;
      if (!usable)
        fail_at(path, line,
                "job " + quoted_field(ids.back()) +
                    " has no positive throughput on a resource with capacity > 0, which the " +
                    requirements.utility_name + " utility needs");
    }
  }
  if (ids.empty()) fail_at(path, header_line, "no jobs after the header");

  const auto n = static_cast<Eigen::Index>(ids.size());
  problem.throughput.conservativeResize(n, m);
  if (has_weight) problem.weight.conservativeResize(n);
  if (has_target) problem.target.conservativeResize(n);
  if (has_demand) problem.job_demand.conservativeResize(n);
  if (has_resource_demand) {
    problem.demand.conservativeResize(n, m);
    problem.job_demand.resize(0);  // folded into the matrix, which the problem takes alone
  }
  result.job_ids.assign(ids.begin(), ids.end());
  return result;
}

void write_instance(const instance& data, const std::string& prefix) {
  const auto& problem = data.problem;
  const Eigen::Index n = problem.jobs(), m = problem.resources();
  atomic_output_file resources(prefix + ".resources.csv");
  atomic_output_file jobs(prefix + ".jobs.csv");

  std::string& r = resources.buffer();
  r += "name,capacity\n";
  for (Eigen::Index j = 0; j < m; ++j) {
    append_csv_field(r, data.resource_names[static_cast<std::size_t>(j)]);
    r += ',';
    append_number(r, problem.capacity[j]);
    r += '\n';
  }

  const bool has_weight = problem.weight.size() != 0, has_target = problem.target.size() != 0;
  const bool has_demand = problem.job_demand.size() != 0;
  const bool has_resource_demand = problem.demand.size() != 0;
  std::string& out = jobs.buffer();
  out += "id";
  if (has_weight) out += ",weight";
  if (has_target) out += ",target";
  if (has_demand) out += ",demand";
  if (has_resource_demand)
    for (const std::string& name : data.resource_names) {
      out += ',';
      append_csv_field(out, std::string(kDemandPrefix) + name);
    }
  for (const std::string& name : data.resource_names) {
    out += ',';
    append_csv_field(out, name);
  }
  out += '\n';
  for (Eigen::Index i = 0; i < n; ++i) {
    append_csv_field(out, data.job_ids[static_cast<std::size_t>(i)]);
    if (has_weight) {
      out += ',';
      append_number(out, problem.weight[i]);
    }
    if (has_target) {
      out += ',';
      append_number(out, problem.target[i]);
    }
    if (has_demand) {
      out += ',';
      append_number(out, problem.job_demand[i]);
    }
    if (has_resource_demand)
      for (Eigen::Index j = 0; j < m; ++j) {
        out += ',';
        append_number(out, problem.demand(i, j));
      }
    for (Eigen::Index j = 0; j < m; ++j) {
      out += ',';
      append_number(out, problem.throughput(i, j));
    }
    out += '\n';
    jobs.flush_if_large();
  }
  atomic_output_file::commit_together({&resources, &jobs});
}

}  // namespace popalloc_solve
