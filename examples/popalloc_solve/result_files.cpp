// SPDX-License-Identifier: Apache-2.0
#include "result_files.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string_view>
#include <unordered_map>

#include <popalloc/status.hpp>
#include <popalloc/value_range.hpp>

#include "io.hpp"

namespace popalloc_solve {

namespace {

// printf writes a NaN with its sign bit ("-nan"), which reads like a negative number.
double plain_nan(double value) {
  return std::isnan(value) ? std::numeric_limits<double>::quiet_NaN() : value;
}

}  // namespace

std::string summary_line(const popalloc::solve_result& result, const run_summary& summary) {
  // The absolute gap always stands beside the relative one: an objective and a bound on either
  // side of 0 (target priority) make a relative gap alone unreadable.
  char line[512];
  std::snprintf(line, sizeof line,
                "status %s  objective %.10g  dual bound %.10g  gap %.3e = %.3e x %.4g (%s)  "
                "iterations %d",
                popalloc::to_string(result.status), plain_nan(result.primal_objective),
                plain_nan(result.dual_bound), plain_nan(result.duality_gap),
                plain_nan(result.relative_gap), plain_nan(result.gap_scale), result.gap_scale_name,
                result.iterations);
  std::string out = line;
  if (result.sample_iterations > 0)
    out += " (+" + std::to_string(result.sample_iterations) + " on a sample)";
  std::snprintf(line, sizeof line, "  seconds %.3f", summary.solve_seconds);
  return out + line;
}

popalloc::gap_measure parse_gap_measure(const std::string& text) {
  for (auto measure : {popalloc::gap_measure::automatic, popalloc::gap_measure::objective,
                       popalloc::gap_measure::anchored})
    if (text == popalloc::to_string(measure)) return measure;
  throw input_error("--gap: unknown measure '" + text + "' (automatic, objective or anchored)");
}

void fill_result_json(atomic_output_file& file, const instance& data,
                      const popalloc::solve_result& result, const run_summary& summary) {
  std::string& out = file.buffer();
  auto key = [&out](const char* name) {
    out += "  \"";
    out += name;
    out += "\": ";
  };
  auto number = [&](const char* name, double value) {
    key(name);
    json::append_number(out, value);
    out += ",\n";
  };
  auto integer = [&](const char* name, long long value) {
    key(name);
    out += std::to_string(value);
    out += ",\n";
  };
  out += "{\n";
  out += summary.envelope;
  key("status");
  json::append_string(out, popalloc::to_string(result.status));
  out += ",\n";
  number("objective", result.primal_objective);
  number("dual_bound", result.dual_bound);
  number("trivial_bound", result.trivial_bound);
  number("absolute_gap", result.duality_gap);
  number("relative_gap", result.relative_gap);
  key("gap_measure");
  json::append_string(out, popalloc::to_string(result.gap_measure));
  out += ",\n";
  number("gap_scale", result.gap_scale);
  key("gap_scale_name");
  json::append_string(out, result.gap_scale_name);
  out += ",\n";
  integer("iterations", result.iterations);
  integer("sample_iterations", result.sample_iterations);
  number("seconds", summary.solve_seconds);
  integer("n_jobs", summary.n_jobs >= 0 ? summary.n_jobs : data.problem.jobs());
  integer("n_resources", data.problem.resources());
  number("max_capacity_violation", result.max_capacity_violation);
  integer("pop_parts", summary.pop_parts);
  if (summary.pop_parts > 1) {
    number("pop_parts_seconds_sum", summary.pop_parts_seconds_sum);
    number("pop_parts_seconds_max", summary.pop_parts_seconds_max);
    number("pop_bound_seconds", summary.pop_bound_seconds);
  }
  if (summary.mpi_ranks > 0) integer("mpi_ranks", summary.mpi_ranks);
  key("utility");
  json::append_string(out, summary.utility_name);
  out += ",\n";
  key("prices");
  out += "{";
  for (std::size_t j = 0; j < data.resource_names.size(); ++j) {
    out += j == 0 ? "\n    " : ",\n    ";
    json::append_string(out, data.resource_names[j]);
    out += ": ";
    const auto index = static_cast<Eigen::Index>(j);
    json::append_number(out, index < result.prices.size()
                                 ? result.prices[index]
                                 : std::numeric_limits<double>::quiet_NaN());
  }
  out += "\n  }\n}\n";
}

void fill_allocation_csv(atomic_output_file& file, const instance& data,
                         const popalloc::solve_result& result) {
  std::string& out = file.buffer();
  out += "id,resource,fraction\n";
  const popalloc::allocation& x = result.allocation;
  for (std::size_t i = 0; i < x.jobs(); ++i) {
    for (std::int64_t k = x.job_offset[i]; k < x.job_offset[i + 1]; ++k) {
      const auto entry = static_cast<std::size_t>(k);
      if (!(x.fraction[entry] > 0.0)) continue;
      // For a dense problem an option is a resource column.
      append_csv_field(out, data.job_ids[i]);
      out += ',';
      append_csv_field(out, data.resource_names[static_cast<std::size_t>(x.option[entry])]);
      out += ',';
      append_number(out, x.fraction[entry]);
      out += '\n';
    }
    file.flush_if_large();
  }
}

Eigen::VectorXd read_warm_start_prices(const std::string& path,
                                       const std::vector<std::string>& resource_names) {
  const std::string text = read_whole_file(path);
  const json::value root = json::parse(text, path);
  if (root.type != json::value::kind::object)
    fail_at(path, root.line,
            std::string("expected an object of resource prices (or a result file with a "
                        "\"prices\" object), found ") +
                json::describe(root.type));
  const json::value* prices = root.find("prices");
  if (prices == nullptr) {
    prices = &root;  // a bare prices object
  } else if (prices->type != json::value::kind::object) {
    fail_at(path, prices->line,
            std::string("\"prices\" must be an object, found ") + json::describe(prices->type));
  }

  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t j = 0; j < resource_names.size(); ++j) index.emplace(resource_names[j], j);
  const auto m = static_cast<Eigen::Index>(resource_names.size());
  Eigen::VectorXd result = Eigen::VectorXd::Zero(m);
  std::vector<long> given_on(resource_names.size(), 0);
  for (const json::member& entry : prices->members) {
    const long line = entry.content.line;
    const auto found = index.find(entry.key);
    if (found == index.end())
      fail_at(path, line, "unknown resource '" + entry.key + "' (not in the instance)");
    const std::size_t j = found->second;
    if (given_on[j] != 0)
      fail_at(path, line,
              "price of resource '" + entry.key + "' given twice (first on line " +
                  std::to_string(given_on[j]) + ")");
    if (entry.content.type != json::value::kind::number)
      fail_at(path, line,
              "price of resource '" + entry.key + "' must be a number, found " +
                  json::describe(entry.content.type));
    if (!(entry.content.number >= 0.0))
      fail_at(path, line, "price of resource '" + entry.key + "' is negative");
    if (!(entry.content.number <= popalloc::value_max))
      fail_at(path, line, "price of resource '" + entry.key + "' is above 1e60");
    result[static_cast<Eigen::Index>(j)] = entry.content.number;
    given_on[j] = line;
  }
  for (std::size_t j = 0; j < resource_names.size(); ++j)
    if (given_on[j] == 0)
      fail_at(path, prices->line, "no price for resource '" + resource_names[j] + "'");
  return result;
}

}  // namespace popalloc_solve
