// SPDX-License-Identifier: Apache-2.0
// popalloc-schedule: heterogeneity-aware GPU cluster scheduling (Gavel's policies) on popalloc's
// price-discovery solver, optionally with POP. `popalloc-schedule --help` documents the options.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include <popalloc/cluster/cluster_spec.hpp>
#include <popalloc/cluster/job.hpp>
#include <popalloc/cluster/job_generator.hpp>
#include <popalloc/cluster/policies.hpp>
#include <popalloc/cluster/throughputs.hpp>
#include <popalloc/cluster/trace.hpp>
#include <popalloc/io/atomic_file.hpp>
#include <popalloc/io/input_error.hpp>
#include <popalloc/io/json.hpp>
#include <popalloc/io/text_file.hpp>

#include "embedded_throughputs.hpp"

namespace popalloc_schedule {
namespace {

namespace pc = popalloc::cluster;

constexpr const char* kUsage = R"(Usage:
  popalloc-schedule [--throughputs FILE.json] --cluster TYPE:COUNT,...
                    (--trace FILE | --jobs N [--seed S]) [--policy POLICY] [options]
  popalloc-schedule    64 generated jobs (seed 1) on v100:8,p100:8,k80:8, max-min fairness,
                       built-in Gavel throughputs

Allocates the GPUs of a heterogeneous cluster to training jobs: for every job, the fraction
of wall-clock time it should spend on each GPU type (Gavel, OSDI 2020), solved with popalloc's
price-discovery dual method. A job with scale factor s holds s GPUs of its type at once.

Input:
  --throughputs FILE  Gavel's simulation_throughputs.json (isolated "null" entries are used;
                      zero entries mean "cannot run there"). Default: the built-in copy of
                      Gavel's table for k80, p100 and v100.
  --cluster SPEC      GPU types and counts, e.g. v100:36,p100:36,k80:36 (any order, kept), or
                      Gavel's shorthand 36:36:36 (v100:p100:k80). Default v100:8,p100:8,k80:8.
  --trace FILE        Gavel trace, 10 tab-separated columns per job (job i = line order)
  --jobs N            generate N jobs like Gavel's generator instead (job i = generation order)
  --seed S            generator seed (default 1)
  --single-gpu        generated jobs all have scale factor 1 (default: 1/2/4/8 at 70/10/15/5 %)
  --multi-priority    generated jobs get priority 5 with probability 0.2
  --jobs-per-hour R   generated arrival times: Poisson at R jobs/hour (default: all at t = 0)
  --slo               generated jobs get an SLO in {1.2, 2, 10} (probability 1/3 each): the
                      deadline is arrival + SLO * duration on the reference GPU (V100)

Policy:
  --policy POLICY     max-min-fairness (default) | proportional-fairness | max-throughput |
                      min-makespan | finish-time-fairness | isolated | fifo
  --heterogeneity-agnostic   Gavel's agnostic variant (max-min, proportional: every
                      throughput 1; others: the V100 throughput on every type)
  --no-water-filling  max-min: plain max-min (only the minimum is raised)
  --gpu-cost TYPE:PRICE,...  max-throughput: maximise throughput per unit price
  --no-slo-floors     max-throughput: ignore the jobs' SLOs (by default a job with an SLO
                      must reach the throughput that meets its deadline; if the floors cannot
                      all be met they are dropped, as Gavel does, and the output says so)
  --tolerance TOL     relative accuracy, 0 < TOL < 0.1 (default 1e-6)
  --threads N         OpenMP threads (default 0: OpenMP default)
  --time-limit SEC    wall-clock limit of the solve

POP:
  --pop K             split the jobs into K random parts, each with 1/K of every GPU type
                      (remainders handed out, never dropped), solve and merge (default 1)
  --pop-seed S        partition seed (default 0)
  --pop-strategy STR  uniform-random (default, POP's) | shuffled | round-robin
  --compare-full      with --pop K > 1: also solve the whole problem and report the mean
                      effective-throughput ratio POP / full and the speed-up

Output:
  --output FILE       JSON: policy, objective, bound, status, seconds, cluster, summary, pop,
                      jobs [{id, job_type, scale_factor, allocation {type: fraction},
                      effective_throughput, normalized_throughput}]
  --quiet             no per-job table on stdout (the summary is still printed)
  --help              this text

Objective (Gavel, OSDI 2020): max-min: min_i s_i ET_i / (w_i P_i) (P_i = sum_w T_iw n_w / N);
makespan: seconds; finish-time fairness: max_i rho_i; proportional: sum_i w_i log(ET_i / P_i);
max-throughput: sum_i ET_i (per unit price with --gpu-cost). ET_i = sum_w T_iw X_iw (steps/s).

Outputs are replaced atomically; symbolic links are written through, "-" (stdout), devices and
FIFOs directly, and a read-only file or an output that is an input or another output is refused
before any work.

Exit status: 0 done, 2 usage or input error (nothing written), 1 internal error.
)";

struct usage_error : std::exception {
  explicit usage_error(std::string m) : message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
  std::string message;
};

struct arguments {
  std::string throughputs;
  std::string cluster = "v100:8,p100:8,k80:8";
  std::string trace;
  std::int64_t jobs = -1;
  std::uint64_t seed = 1;
  bool single_gpu = false;
  bool multi_priority = false;
  bool slos = false;
  bool slo_floors = true;
  double jobs_per_hour = 0.0;
  std::string policy = "max-min-fairness";
  bool agnostic = false;
  bool water_filling = true;
  std::string gpu_cost;
  double tolerance = 1e-6;
  int threads = 0;
  double time_limit = -1.0;
  int pop = 1;
  std::uint64_t pop_seed = 0;
  std::string pop_strategy = "uniform-random";
  bool compare_full = false;
  std::string output;
  bool quiet = false;
};

template <class T>
T parse_integer(std::string_view flag, std::string_view text, T low) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || value < low)
    throw usage_error(std::string(flag) + ": expected a whole number >= " + std::to_string(low) +
                      ", got '" + std::string(text) + "'");
  return value;
}

double parse_real(std::string_view flag, std::string_view text) {
  const std::string copy(text);
  char* end = nullptr;
  const double v = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(v))
    throw usage_error(std::string(flag) + ": expected a number, got '" + copy + "'");
  return v;
}

/// Largest --jobs: the policies hold a dense jobs x GPU-types model several times over, so far
/// more would exhaust memory long before an answer; the limit fails fast instead.
constexpr std::int64_t kMaxJobs = 10'000'000;

arguments parse_arguments(int argc, char** argv) {
  arguments a;
  bool have_jobs = false;
  std::vector<std::string_view> seen;
  for (int k = 1; k < argc; ++k) {
    const std::string_view flag = argv[k];
    if (std::find(seen.begin(), seen.end(), flag) != seen.end())
      throw usage_error("option " + std::string(flag) + " given twice");
    seen.push_back(flag);
    auto value = [&]() -> std::string_view {
      if (k + 1 >= argc) throw usage_error(std::string(flag) + " needs a value");
      return argv[++k];
    };
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (flag == "--throughputs") {
      a.throughputs = value();
    } else if (flag == "--cluster") {
      a.cluster = value();
    } else if (flag == "--trace") {
      a.trace = value();
    } else if (flag == "--jobs") {
      a.jobs = parse_integer<std::int64_t>(flag, value(), 1);
      if (a.jobs > kMaxJobs)
        throw usage_error("--jobs must be <= " + std::to_string(kMaxJobs) + ", got " +
                          std::to_string(a.jobs));
      have_jobs = true;
    } else if (flag == "--seed") {
      a.seed = parse_integer<std::uint64_t>(flag, value(), 0);
    } else if (flag == "--single-gpu") {
      a.single_gpu = true;
    } else if (flag == "--multi-priority") {
      a.multi_priority = true;
    } else if (flag == "--slo") {
      a.slos = true;
    } else if (flag == "--no-slo-floors") {
      a.slo_floors = false;
    } else if (flag == "--jobs-per-hour") {
      a.jobs_per_hour = parse_real(flag, value());
      if (!(a.jobs_per_hour > 0.0)) throw usage_error("--jobs-per-hour must be > 0");
    } else if (flag == "--policy") {
      a.policy = value();
    } else if (flag == "--heterogeneity-agnostic") {
      a.agnostic = true;
    } else if (flag == "--no-water-filling") {
      a.water_filling = false;
    } else if (flag == "--gpu-cost") {
      a.gpu_cost = value();
    } else if (flag == "--tolerance") {
      a.tolerance = parse_real(flag, value());
      if (!(a.tolerance > 0.0 && a.tolerance < 0.1))
        throw usage_error("--tolerance must be in (0, 0.1)");
    } else if (flag == "--threads") {
      a.threads = parse_integer<int>(flag, value(), 0);
    } else if (flag == "--time-limit") {
      a.time_limit = parse_real(flag, value());
      if (!(a.time_limit > 0.0)) throw usage_error("--time-limit must be > 0");
    } else if (flag == "--pop") {
      a.pop = parse_integer<int>(flag, value(), 1);
    } else if (flag == "--pop-seed") {
      a.pop_seed = parse_integer<std::uint64_t>(flag, value(), 0);
    } else if (flag == "--pop-strategy") {
      a.pop_strategy = value();
    } else if (flag == "--compare-full") {
      a.compare_full = true;
    } else if (flag == "--output") {
      a.output = value();
      if (a.output.empty()) throw usage_error("--output needs a file name");
    } else if (flag == "--quiet") {
      a.quiet = true;
    } else {
      throw usage_error("unknown option '" + std::string(flag) + "' (see --help)");
    }
  }
  if (!a.trace.empty() && have_jobs) throw usage_error("give either --trace or --jobs, not both");
  if (a.trace.empty() && !have_jobs) a.jobs = 64;  // the built-in default run
  if (a.compare_full && a.pop == 1) throw usage_error("--compare-full needs --pop K with K > 1");
  // Options of one mode given in another do nothing; say so rather than let the user believe.
  auto warn = [](const char* what) {
    std::fprintf(stderr, "popalloc-schedule: warning: %s\n", what);
  };
  if (!a.trace.empty()) {
    for (const char* generator_only :
         {"--seed", "--single-gpu", "--multi-priority", "--jobs-per-hour", "--slo"})
      if (std::find(seen.begin(), seen.end(), generator_only) != seen.end())
        throw usage_error(std::string(generator_only) + " is for generated jobs, not --trace");
  }
  if (a.pop == 1) {
    for (const char* pop_only : {"--pop-seed", "--pop-strategy"})
      if (std::find(seen.begin(), seen.end(), pop_only) != seen.end())
        warn((std::string(pop_only) + " does nothing without --pop K > 1").c_str());
  }
  if (a.policy != "max-min-fairness" && !a.water_filling)
    warn("--no-water-filling only applies to --policy max-min-fairness");
  if (a.policy != "max-throughput" && (!a.gpu_cost.empty() || !a.slo_floors))
    warn("--gpu-cost and --no-slo-floors only apply to --policy max-throughput");
  return a;
}

std::vector<double> parse_costs(const std::string& text, const pc::gpu_cluster& cluster) {
  std::vector<double> cost(cluster.size(), std::nan(""));
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t colon = item.find(':');
    if (colon == std::string::npos)
      throw usage_error("--gpu-cost entry '" + item + "' is not TYPE:PRICE");
    const int w = cluster.index_of(item.substr(0, colon));
    if (w < 0)
      throw usage_error("--gpu-cost: GPU type '" + item.substr(0, colon) +
                        "' is not in the cluster");
    const double v = parse_real("--gpu-cost", item.substr(colon + 1));
    if (!(v > 0.0)) throw usage_error("--gpu-cost: prices must be > 0");
    cost[static_cast<std::size_t>(w)] = v;
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (std::size_t w = 0; w < cost.size(); ++w)
    if (std::isnan(cost[w]))
      throw usage_error("--gpu-cost: no price for GPU type '" + cluster.types[w] + "'");
  return cost;
}

struct summary {
  double min = 0.0, mean = 0.0, max = 0.0;
  std::int64_t unschedulable = 0;
};

summary summarize(const pc::cluster_allocation& a) {
  summary s;
  s.min = HUGE_VAL;
  s.max = -HUGE_VAL;
  std::int64_t count = 0;
  for (Eigen::Index i = 0; i < a.normalized_throughput.size(); ++i) {
    if (!a.schedulable[static_cast<std::size_t>(i)]) {
      ++s.unschedulable;
      continue;
    }
    const double v = a.normalized_throughput[i];
    s.min = std::min(s.min, v);
    s.max = std::max(s.max, v);
    s.mean += v;
    ++count;
  }
  if (count > 0) s.mean /= static_cast<double>(count);
  if (count == 0) s.min = s.max = 0.0;
  return s;
}

struct comparison {
  double mean_ratio = 0.0, min_ratio = 0.0, std_ratio = 0.0, full_seconds = 0.0,
         full_objective = 0.0;
};

comparison compare(const pc::cluster_allocation& pop, const pc::cluster_allocation& full) {
  comparison c;
  c.full_seconds = full.seconds;
  c.full_objective = full.objective;
  c.min_ratio = HUGE_VAL;
  std::vector<double> ratios;
  for (Eigen::Index i = 0; i < full.effective_throughput.size(); ++i)
    if (full.effective_throughput[i] > 0.0)
      ratios.push_back(pop.effective_throughput[i] / full.effective_throughput[i]);
  for (const double r : ratios) {
    c.mean_ratio += r;
    c.min_ratio = std::min(c.min_ratio, r);
  }
  if (!ratios.empty()) c.mean_ratio /= static_cast<double>(ratios.size());
  for (const double r : ratios) c.std_ratio += (r - c.mean_ratio) * (r - c.mean_ratio);
  if (!ratios.empty()) c.std_ratio = std::sqrt(c.std_ratio / static_cast<double>(ratios.size()));
  return c;
}

void append_key(std::string& out, const char* key) {
  popalloc::io::json::append_string(out, key);
  out += ": ";
}

int run(int argc, char** argv) {
  const arguments args = parse_arguments(argc, argv);
  // Before any work: the output must be writable and no input.
  popalloc::io::check_output_files({{"--output", args.output}},
                                   {{"--throughputs", args.throughputs}, {"--trace", args.trace}});
  const pc::throughput_table table = args.throughputs.empty()
                                         ? embedded_throughput_table()
                                         : pc::load_throughputs(args.throughputs);
  pc::gpu_cluster cluster;
  try {
    cluster = pc::parse_cluster(args.cluster, table.gpu_types());
  } catch (const popalloc::invalid_problem& e) {
    throw usage_error(std::string("--cluster: ") + e.what());
  }
  std::vector<pc::job> jobs;
  if (!args.trace.empty()) {
    jobs = pc::jobs_from_trace(pc::load_trace(args.trace), table, cluster, args.trace);
  } else {
    pc::generator_options g;
    g.seed = args.seed;
    g.multi_gpu = !args.single_gpu;
    g.multi_priority = args.multi_priority;
    g.jobs_per_hour = args.jobs_per_hour;
    g.slos = args.slos;
    jobs = pc::jobs_from_generated(pc::generate_jobs(args.jobs, table, g), table, cluster);
  }
  pc::policy_options o;
  try {
    o.policy = pc::parse_policy(args.policy);
  } catch (const popalloc::invalid_options& e) {
    throw usage_error(std::string("--policy: ") + e.what());
  }
  o.heterogeneity_agnostic = args.agnostic;
  o.water_filling = args.water_filling;
  o.slo_floors = args.slo_floors;
  if (!args.gpu_cost.empty()) o.gpu_cost = parse_costs(args.gpu_cost, cluster);
  o.tolerance = args.tolerance;
  o.threads = args.threads;
  if (args.time_limit > 0.0) o.time_limit_seconds = args.time_limit;
  o.pop_parts = args.pop;
  o.pop_seed = args.pop_seed;
  if (args.pop_strategy == "uniform-random")
    o.pop_strategy = popalloc::pop::partition_strategy::uniform_random;
  else if (args.pop_strategy == "shuffled")
    o.pop_strategy = popalloc::pop::partition_strategy::shuffled;
  else if (args.pop_strategy == "round-robin")
    o.pop_strategy = popalloc::pop::partition_strategy::round_robin;
  else
    throw usage_error("--pop-strategy: expected uniform-random, shuffled or round-robin, got '" +
                      args.pop_strategy + "'");
  if (o.pop_parts > static_cast<int>(jobs.size()))
    throw usage_error("--pop " + std::to_string(o.pop_parts) + " asks for more parts than the " +
                      std::to_string(jobs.size()) + " jobs");
  const std::int64_t gpus = cluster.total();
  if (o.pop_parts > gpus)
    throw usage_error("--pop " + std::to_string(o.pop_parts) + " asks for more parts than the " +
                      std::to_string(gpus) + " GPUs of the cluster (each part needs one)");

  bool any_runnable = false;
  for (const pc::job& j : jobs)
    for (std::size_t w = 0; w < cluster.size(); ++w)
      any_runnable = any_runnable || (j.throughput[w] > 0.0 && cluster.counts[w] >= j.scale_factor);
  if (!any_runnable)
    throw popalloc::io::input_error(
        "no job can run on the cluster: every throughput on its GPU types is 0 (or a job needs "
        "more GPUs than a type has), so no policy has anything to allocate");

  const pc::cluster_allocation a = pc::allocate(jobs, cluster, o);
  comparison cmp;
  if (args.compare_full) {
    pc::policy_options full = o;
    full.pop_parts = 1;
    cmp = compare(a, pc::allocate(jobs, cluster, full));
  }
  const summary s = summarize(a);

  if (!args.quiet) {
    std::printf("%-6s %-36s %3s", "id", "job_type", "s");
    for (const auto& t : cluster.types) std::printf(" %9s", t.c_str());
    std::printf(" %14s %10s\n", "ET (steps/s)", "normalized");
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      std::printf("%-6zu %-36.36s %3d", i, jobs[i].job_type.c_str(), jobs[i].scale_factor);
      for (std::size_t w = 0; w < cluster.size(); ++w)
        std::printf(" %9.6f", a.fraction(r, static_cast<Eigen::Index>(w)));
      std::printf(" %14.6g %10.6f%s\n", a.effective_throughput[r], a.normalized_throughput[r],
                  a.schedulable[i] ? "" : "  (no usable GPU type)");
    }
  }
  // The baselines (isolated, fifo) compute no bound.
  char bound[64] = "none";
  if (!std::isnan(a.bound)) std::snprintf(bound, sizeof bound, "%.10g", a.bound);
  std::printf(
      "policy %s%s: objective %.10g (bound %s), status %s, %zu jobs on %s, %.4f s "
      "(%d core solves%s)\n",
      pc::to_string(o.policy), o.heterogeneity_agnostic ? " (heterogeneity-agnostic)" : "",
      a.objective, bound, popalloc::to_string(a.status), jobs.size(), cluster.to_string().c_str(),
      a.seconds, a.core_solves,
      o.policy == pc::policy_kind::max_min_fairness && o.water_filling
          ? (", " + std::to_string(a.water_filling_levels) + " water-filling levels").c_str()
          : "");
  std::printf(
      "normalized throughput s ET / (w P): min %.6g, mean %.6g, max %.6g; %lld jobs "
      "without a usable GPU type\n",
      s.min, s.mean, s.max, static_cast<long long>(s.unschedulable));
  if (a.slo_jobs > 0)
    std::printf("SLO floors: %lld jobs, worst shortfall (floor - ET) / floor %.3g%s\n",
                static_cast<long long>(a.slo_jobs), a.slo_worst_shortfall,
                a.slo_floors_dropped ? "; the floors could not all be met and were dropped"
                                     : "; every floor met");
  if (args.pop > 1)
    std::printf("POP k=%d: parts max %.4f s, sum %.4f s\n", args.pop, a.pop_parts_seconds_max,
                a.pop_parts_seconds_sum);
  if (args.compare_full)
    std::printf(
        "vs full solve: mean ET ratio %.6f (std %.4f, min %.4f), full %.4f s, speed-up "
        "%.2fx (wall), %.2fx (max part)\n",
        cmp.mean_ratio, cmp.std_ratio, cmp.min_ratio, cmp.full_seconds,
        cmp.full_seconds / a.seconds,
        a.pop_parts_seconds_max > 0 ? cmp.full_seconds / a.pop_parts_seconds_max : 0.0);

  if (!args.output.empty()) {
    popalloc::io::atomic_output_file file(args.output);
    std::string& out = file.buffer();
    namespace json = popalloc::io::json;
    out += "{\n  ";
    append_key(out, "policy");
    json::append_string(out, pc::to_string(o.policy));
    out += ",\n  ";
    append_key(out, "heterogeneity_agnostic");
    out += o.heterogeneity_agnostic ? "true" : "false";
    out += ",\n  ";
    append_key(out, "objective");
    json::append_number(out, a.objective);
    out += ",\n  ";
    append_key(out, "bound");
    json::append_number(out, a.bound);
    out += ",\n  ";
    append_key(out, "status");
    json::append_string(out, popalloc::to_string(a.status));
    out += ",\n  ";
    append_key(out, "seconds");
    json::append_number(out, a.seconds);
    out += ",\n  ";
    append_key(out, "core_solves");
    out += std::to_string(a.core_solves);
    out += ",\n  ";
    append_key(out, "water_filling_levels");
    out += std::to_string(a.water_filling_levels);
    out += ",\n  ";
    append_key(out, "cluster");
    out += "{";
    for (std::size_t w = 0; w < cluster.size(); ++w) {
      if (w) out += ", ";
      append_key(out, cluster.types[w].c_str());
      out += std::to_string(cluster.counts[w]);
    }
    out += "},\n  ";
    append_key(out, "summary");
    out += "{\"normalized_throughput\": {\"min\": ";
    json::append_number(out, s.min);
    out += ", \"mean\": ";
    json::append_number(out, s.mean);
    out += ", \"max\": ";
    json::append_number(out, s.max);
    out += "}, \"unschedulable_jobs\": " + std::to_string(s.unschedulable) + "},\n  ";
    if (a.slo_jobs > 0) {
      append_key(out, "slo");
      out += "{\"jobs\": " + std::to_string(a.slo_jobs) + ", \"floors_dropped\": ";
      out += a.slo_floors_dropped ? "true" : "false";
      out += ", \"worst_shortfall\": ";
      json::append_number(out, a.slo_worst_shortfall);
      out += "},\n  ";
    }
    append_key(out, "pop");
    out += "{\"k\": " + std::to_string(args.pop) + ", \"seed\": " + std::to_string(args.pop_seed) +
           ", \"strategy\": ";
    json::append_string(out, args.pop_strategy);
    out += ", \"parts_seconds_max\": ";
    json::append_number(out, a.pop_parts_seconds_max);
    out += ", \"parts_seconds_sum\": ";
    json::append_number(out, a.pop_parts_seconds_sum);
    if (args.compare_full) {
      out += ", \"full_seconds\": ";
      json::append_number(out, cmp.full_seconds);
      out += ", \"full_objective\": ";
      json::append_number(out, cmp.full_objective);
      out += ", \"mean_effective_throughput_ratio\": ";
      json::append_number(out, cmp.mean_ratio);
      out += ", \"std_effective_throughput_ratio\": ";
      json::append_number(out, cmp.std_ratio);
      out += ", \"min_effective_throughput_ratio\": ";
      json::append_number(out, cmp.min_ratio);
    }
    out += "},\n  ";
    append_key(out, "jobs");
    out += "[";
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      out += i ? ",\n    " : "\n    ";
      out += "{\"id\": " + std::to_string(i) + ", \"job_type\": ";
      json::append_string(out, jobs[i].job_type);
      out += ", \"scale_factor\": " + std::to_string(jobs[i].scale_factor) + ", \"allocation\": {";
      for (std::size_t w = 0; w < cluster.size(); ++w) {
        if (w) out += ", ";
        append_key(out, cluster.types[w].c_str());
        json::append_number(out, a.fraction(r, static_cast<Eigen::Index>(w)));
      }
      out += "}, \"effective_throughput\": ";
      json::append_number(out, a.effective_throughput[r]);
      out += ", \"normalized_throughput\": ";
      json::append_number(out, a.normalized_throughput[r]);
      out += "}";
      file.flush_if_large();
    }
    out += "\n  ]\n}\n";
    file.commit();
  }
  return 0;
}

}  // namespace
}  // namespace popalloc_schedule

int main(int argc, char** argv) {
  try {
    return popalloc_schedule::run(argc, argv);
  } catch (const popalloc_schedule::usage_error& e) {
    std::fprintf(stderr, "popalloc-schedule: %s\n", e.what());
    return 2;
  } catch (const popalloc::io::input_error& e) {
    std::fprintf(stderr, "popalloc-schedule: %s\n", e.what());
    return 2;
  } catch (const popalloc::invalid_problem& e) {
    std::fprintf(stderr, "popalloc-schedule: invalid input: %s\n", e.what());
    return 2;
  } catch (const popalloc::invalid_options& e) {
    std::fprintf(stderr, "popalloc-schedule: invalid option: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "popalloc-schedule: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "popalloc-schedule: internal error: %s\n", e.what());
    return 1;
  }
}
