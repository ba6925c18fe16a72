// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Gavel's job trace format: tab-separated, 10 columns, one job per line.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "popalloc/cluster/cluster_spec.hpp"
#include "popalloc/cluster/job.hpp"
#include "popalloc/cluster/throughputs.hpp"
#include "popalloc/io/input_error.hpp"
#include "popalloc/io/text_file.hpp"
#include "popalloc/value_range.hpp"

namespace popalloc::cluster {

/// \brief One trace line. Columns: job_type, command, working_directory, num_steps_arg,
/// needs_data_dir, total_steps, scale_factor, priority_weight, SLO, arrival_time (only the
/// job type and columns 6-10 matter in simulation).
struct trace_job {
  std::string job_type;
  std::string command;
  std::string working_directory;
  std::string num_steps_arg;
  bool needs_data_dir = false;
  double total_steps = 0.0;
  int scale_factor = 1;
  double priority_weight = 1.0;
  double slo = -1.0;
  double arrival_time = 0.0;
  long line = 0;  ///< line in the trace file (1-based)
};

/// \brief Latest arrival time a trace may give, in seconds (about 317 years): simulated times stay
/// below it, where a double still resolves a millisecond, so a round or a job's run time is
/// never lost to rounding (an arrival of 1e308 s would otherwise "finish" a job with JCT 0).
inline constexpr double max_trace_seconds = 1e10;

namespace detail {
inline bool parse_number(std::string_view text, double& out) {
  // from_chars for double is not available everywhere (libstdc++ < 11); strtod on a copy.
  if (text.empty()) return false;
  const std::string copy(text);
  char* end = nullptr;
  out = std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size() && std::isfinite(out);
}
}  // namespace detail

/// \brief Parses trace text. Empty lines are skipped; every other line needs exactly 10
/// tab-separated fields. \throws io::input_error "PATH:LINE: what" (wrong column count,
/// non-numeric or negative steps, scale factor not a positive integer, weight <= 0, an SLO that
/// is neither -1 (none) nor > 0, bad arrival time; arrival times going backwards is allowed but
/// negative ones are not). Steps, weights and SLOs must lie in popalloc's value range
/// (value_range.hpp), arrival times in [0, max_trace_seconds].
inline std::vector<trace_job> parse_trace(std::string_view text, const std::string& path) {
  std::vector<trace_job> out;
  long line_number = 0;
  std::size_t start = 0;
  if (text.substr(0, 3) == "\xEF\xBB\xBF") start = 3;  // a UTF-8 byte-order mark, as elsewhere
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    std::vector<std::string_view> fields;
    std::size_t from = 0;
    for (;;) {
      const std::size_t tab = line.find('\t', from);
      fields.push_back(
          line.substr(from, tab == std::string_view::npos ? std::string_view::npos : tab - from));
      if (tab == std::string_view::npos) break;
      from = tab + 1;
    }
    if (fields.size() != 10)
      io::fail_at(path, line_number,
                  "expected 10 tab-separated columns (job_type, command, working_directory, "
                  "num_steps_arg, needs_data_dir, total_steps, scale_factor, priority_weight, "
                  "SLO, arrival_time), got " +
                      std::to_string(fields.size()));
    trace_job job;
    job.line = line_number;
    job.job_type = std::string(fields[0]);
    if (job.job_type.empty()) io::fail_at(path, line_number, "empty job type (column 1)");
    job.command = std::string(fields[1]);
    job.working_directory = std::string(fields[2]);
    job.num_steps_arg = std::string(fields[3]);
    double value = 0.0;
    if (!detail::parse_number(fields[4], value) || (value != 0.0 && value != 1.0))
      io::fail_at(path, line_number,
                  "needs_data_dir (column 5) must be 0 or 1, got '" + std::string(fields[4]) + "'");
    job.needs_data_dir = value != 0.0;
    const std::string positive = popalloc::detail::positive_value_range_text();
    if (!detail::parse_number(fields[5], job.total_steps) || job.total_steps < 0.0 ||
        !popalloc::detail::in_value_range(job.total_steps))
      io::fail_at(path, line_number,
                  "total_steps (column 6) must be 0 or a number " + positive + ", got '" +
                      std::string(fields[5]) + "'");
    if (!detail::parse_number(fields[6], value) || value < 1.0 || value != std::floor(value) ||
        value > 1e6)
      io::fail_at(path, line_number,
                  "scale_factor (column 7) must be a positive whole number, got '" +
                      std::string(fields[6]) + "'");
    job.scale_factor = static_cast<int>(value);
    if (!detail::parse_number(fields[7], job.priority_weight) || !(job.priority_weight > 0.0) ||
        !popalloc::detail::in_value_range(job.priority_weight))
      io::fail_at(path, line_number,
                  "priority_weight (column 8) must be a number " + positive + ", got '" +
                      std::string(fields[7]) + "'");
    if (!detail::parse_number(fields[8], job.slo) ||
        !(job.slo == -1.0 || (job.slo > 0.0 && popalloc::detail::in_value_range(job.slo))))
      io::fail_at(path, line_number,
                  "SLO (column 9) must be -1 (none) or a number " + positive + ", got '" +
                      std::string(fields[8]) + "'");
    if (!detail::parse_number(fields[9], job.arrival_time) || !(job.arrival_time >= 0.0) ||
        !(job.arrival_time <= max_trace_seconds))
      io::fail_at(path, line_number,
                  "arrival_time (column 10) must be a number of seconds in [0, 1e10], got '" +
                      std::string(fields[9]) + "'");
    out.push_back(std::move(job));
  }
  if (out.empty()) io::fail_at(path, line_number, "the trace has no jobs");
  return out;
}

/// \brief Reads a trace file. \throws io::input_error.
inline std::vector<trace_job> load_trace(const std::string& path) {
  return parse_trace(io::read_whole_file(path), path);
}

/// \brief Jobs for `cluster`: job i gets id i (its position in the trace), throughputs from
/// `table`. \throws io::input_error "PATH:LINE: ..." if a (job type, scale factor) is not in the
/// table.
inline std::vector<job> jobs_from_trace(const std::vector<trace_job>& trace,
                                        const throughput_table& table, const gpu_cluster& cluster,
                                        const std::string& path) {
  std::vector<job> out;
  out.reserve(trace.size());
  for (std::size_t i = 0; i < trace.size(); ++i) {
    const trace_job& t = trace[i];
    const job_key key{t.job_type, t.scale_factor};
    if (!table.contains(key))
      io::fail_at(path, t.line,
                  "job " + key.to_string() + " is not in the throughput table" +
                      (table.contains_job_type(t.job_type) ? " (no entry at this scale factor)"
                                                           : " (unknown job type)"));
    job j = make_job(static_cast<std::int64_t>(i), t.job_type, t.scale_factor, t.total_steps, table,
                     cluster);
    j.arrival_time = t.arrival_time;
    j.priority_weight = t.priority_weight;
    j.slo = t.slo;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace popalloc::cluster
