// SPDX-License-Identifier: Apache-2.0
#include "scheduler_state.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <popalloc/io/input_error.hpp>
#include <popalloc/io/json.hpp>
#include <popalloc/io/text_file.hpp>

namespace popalloc_schedule {
namespace {

namespace pc = popalloc::cluster;
namespace json = popalloc::io::json;
using popalloc::io::fail_at;

const char* kind_name(json::value::kind type) { return json::describe(type); }

/// Every member of `object` must be one of `known` and appear once.
void check_members(const std::string& path, const json::value& object, const char* what,
                   std::initializer_list<std::string_view> known) {
  std::set<std::string> seen;
  for (const json::member& m : object.members) {
    bool ok = false;
    for (const std::string_view k : known) ok = ok || m.key == k;
    if (!ok) {
      std::string list;
      for (const std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      fail_at(path, m.content.line,
              "unknown key \"" + m.key + "\" in " + what + " (expected " + list + ")");
    }
    if (!seen.insert(m.key).second)
      fail_at(path, m.content.line, "key \"" + m.key + "\" given twice in " + what);
  }
}

const json::value& expect(const std::string& path, const json::value& v, json::value::kind type,
                          const std::string& what) {
  if (v.type != type)
    fail_at(path, v.line, what + " must be " + kind_name(type) + ", found " + kind_name(v.type));
  return v;
}

/// A finite number >= `low` (strictly above it with `strict`).
double number_at(const std::string& path, const json::value& v, const std::string& what, double low,
                 bool strict) {
  expect(path, v, json::value::kind::number, what);
  if (!std::isfinite(v.number) || (strict ? !(v.number > low) : !(v.number >= low)))
    fail_at(path, v.line,
            what + " must be a finite number " + (strict ? "> " : ">= ") +
                std::to_string(static_cast<long long>(low)));
  return v.number;
}

std::int64_t integer_at(const std::string& path, const json::value& v, const std::string& what,
                        double low, double high) {
  expect(path, v, json::value::kind::number, what);
  if (!(v.number >= low && v.number <= high) || std::floor(v.number) != v.number)
    fail_at(path, v.line,
            what + " must be a whole number in [" + std::to_string(static_cast<long long>(low)) +
                ", " + std::to_string(static_cast<long long>(high)) + "]");
  return static_cast<std::int64_t>(v.number);
}

}  // namespace

scheduler_state read_scheduler_state(const std::string& path) {
  const std::string text = popalloc::io::read_whole_file(path);
  const json::value root = json::parse(text, path);
  expect(path, root, json::value::kind::object, "the state");
  check_members(path, root, "the state", {"cluster", "jobs"});
  const json::value* cluster = root.find("cluster");
  const json::value* jobs = root.find("jobs");
  if (cluster == nullptr) fail_at(path, root.line, "the state has no \"cluster\"");
  if (jobs == nullptr) fail_at(path, root.line, "the state has no \"jobs\"");

  scheduler_state state;
  expect(path, *cluster, json::value::kind::object, "\"cluster\"");
  if (cluster->members.empty()) fail_at(path, cluster->line, "\"cluster\" has no GPU type");
  std::set<std::string> types;
  for (const json::member& m : cluster->members) {
    if (m.key.empty()) fail_at(path, m.content.line, "a GPU type needs a name");
    if (!types.insert(m.key).second)
      fail_at(path, m.content.line, "GPU type '" + m.key + "' appears twice in \"cluster\"");
    state.cluster.types.push_back(m.key);
    state.cluster.counts.push_back(
        integer_at(path, m.content, "the count of GPU type '" + m.key + "'", 1, 1e12));
  }

  expect(path, *jobs, json::value::kind::array, "\"jobs\"");
  if (jobs->items.empty()) fail_at(path, jobs->line, "\"jobs\" is empty");
  constexpr double kMaxId = 9007199254740992.0;  // 2^53: ids stay exact as JSON numbers
  std::set<std::int64_t> ids;
  for (const json::value& item : jobs->items) {
    expect(path, item, json::value::kind::object, "a job");
    check_members(
        path, item, "a job",
        {"id", "job_type", "throughputs", "scale_factor", "priority_weight", "total_steps",
         "remaining_steps", "arrival_time", "slo", "elapsed_time", "isolated_time"});
    pc::job j;
    const json::value* id = item.find("id");
    if (id == nullptr) fail_at(path, item.line, "a job has no \"id\"");
    j.id = integer_at(path, *id, "\"id\"", -kMaxId, kMaxId);
    if (!ids.insert(j.id).second)
      fail_at(path, id->line, "job id " + std::to_string(j.id) + " appears twice");
    const std::string who = "job " + std::to_string(j.id);
    if (const json::value* v = item.find("job_type"))
      j.job_type = expect(path, *v, json::value::kind::string, who + ": \"job_type\"").text;
    const json::value* throughputs = item.find("throughputs");
    if (throughputs == nullptr) fail_at(path, item.line, who + " has no \"throughputs\"");
    expect(path, *throughputs, json::value::kind::object, who + ": \"throughputs\"");
    j.throughput.assign(state.cluster.size(), 0.0);
    std::set<std::string> given;
    for (const json::member& m : throughputs->members) {
      const int w = state.cluster.index_of(m.key);
      if (w < 0)
        fail_at(path, m.content.line, who + ": GPU type '" + m.key + "' is not in \"cluster\"");
      if (!given.insert(m.key).second)
        fail_at(path, m.content.line, who + ": throughput on '" + m.key + "' given twice");
      j.throughput[static_cast<std::size_t>(w)] =
          number_at(path, m.content, who + ": throughput on '" + m.key + "'", 0.0, false);
    }
    if (const json::value* v = item.find("scale_factor"))
      j.scale_factor = static_cast<int>(
          integer_at(path, *v, who + ": \"scale_factor\"", 1, std::numeric_limits<int>::max()));
    if (const json::value* v = item.find("priority_weight"))
      j.priority_weight = number_at(path, *v, who + ": \"priority_weight\"", 0.0, true);
    if (const json::value* v = item.find("total_steps"))
      j.total_steps = number_at(path, *v, who + ": \"total_steps\"", 0.0, false);
    if (const json::value* v = item.find("remaining_steps"))
      j.remaining_steps = number_at(path, *v, who + ": \"remaining_steps\"", 0.0, false);
    if (const json::value* v = item.find("arrival_time"))
      j.arrival_time = number_at(path, *v, who + ": \"arrival_time\"", 0.0, false);
    if (const json::value* v = item.find("slo"))
      j.slo = number_at(path, *v, who + ": \"slo\"", 0.0, true);
    if (const json::value* v = item.find("elapsed_time"))
      j.elapsed_time = number_at(path, *v, who + ": \"elapsed_time\"", 0.0, false);
    if (const json::value* v = item.find("isolated_time"))
      j.isolated_time = number_at(path, *v, who + ": \"isolated_time\"", 0.0, false);
    state.jobs.push_back(std::move(j));
  }
  return state;
}

std::string scheduler_state_json(const pc::gpu_cluster& cluster, const std::vector<pc::job>& jobs) {
  std::string out = "{\n  \"cluster\": {";
  for (std::size_t w = 0; w < cluster.size(); ++w) {
    if (w != 0) out += ", ";
    json::append_string(out, cluster.types[w]);
    out += ": " + std::to_string(cluster.counts[w]);
  }
  out += "},\n  \"jobs\": [";
  auto number = [&out](const char* key, double value) {
    out += ", ";
    json::append_string(out, key);
    out += ": ";
    json::append_number(out, value);
  };
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const pc::job& j = jobs[i];
    out += i != 0 ? ",\n    " : "\n    ";
    out += "{\"id\": " + std::to_string(j.id) + ", \"job_type\": ";
    json::append_string(out, j.job_type);
    out += ", \"scale_factor\": " + std::to_string(j.scale_factor);
    number("priority_weight", j.priority_weight);
    number("total_steps", j.total_steps);
    if (j.remaining_steps >= 0.0) number("remaining_steps", j.remaining_steps);
    number("arrival_time", j.arrival_time);
    if (j.slo > 0.0) number("slo", j.slo);
    if (j.elapsed_time != 0.0) number("elapsed_time", j.elapsed_time);
    if (j.isolated_time != 0.0) number("isolated_time", j.isolated_time);
    out += ", \"throughputs\": {";
    for (std::size_t w = 0; w < cluster.size(); ++w) {
      if (w != 0) out += ", ";
      json::append_string(out, cluster.types[w]);
      out += ": ";
      json::append_number(out, j.throughput[w]);
    }
    out += "}}";
  }
  out += "\n  ]\n}\n";
  return out;
}

std::string gavel_allocation_json(const pc::gpu_cluster& cluster, const std::vector<pc::job>& jobs,
                                  const pc::cluster_allocation& allocation) {
  std::string out = "{";
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    out += i != 0 ? ",\n  " : "\n  ";
    json::append_string(out, std::to_string(jobs[i].id));
    out += ": {";
    for (std::size_t w = 0; w < cluster.size(); ++w) {
      if (w != 0) out += ", ";
      json::append_string(out, cluster.types[w]);
      out += ": ";
      json::append_number(
          out, allocation.fraction(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(w)));
    }
    out += "}";
  }
  out += "\n}\n";
  return out;
}

}  // namespace popalloc_schedule
