// SPDX-License-Identifier: Apache-2.0
// popalloc-schedule: heterogeneity-aware GPU cluster scheduling (Gavel's policies) on popalloc's
// price-discovery solver, optionally with POP. `popalloc-schedule --help` documents the options.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <popalloc/cluster/cluster_spec.hpp>
#include <popalloc/cluster/job.hpp>
#include <popalloc/cluster/job_generator.hpp>
#include <popalloc/cluster/packed_policies.hpp>
#include <popalloc/cluster/policies.hpp>
#include <popalloc/cluster/throughputs.hpp>
#include <popalloc/cluster/trace.hpp>
#include <popalloc/io/atomic_file.hpp>
#include <popalloc/io/input_error.hpp>
#include <popalloc/io/json.hpp>
#include <popalloc/io/text_file.hpp>

#include "../common/command_line.hpp"
#include "../common/shipped_throughputs.hpp"
#include "embedded_throughputs.hpp"
#include "scheduler_state.hpp"

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
  --single-gpu        generated jobs all have scale factor 1
  --multi-gpu         generated jobs get scale factors 1/2/4/8 at 70/10/15/5 % (the default;
                      popalloc-simulate's default is --single-gpu)
  --multi-priority    generated jobs get priority 5 with probability 0.2
  --jobs-per-hour R   generated arrival times: Poisson at R jobs/hour (default: all at t = 0)
  --state FILE        a live scheduler's state instead of --trace/--jobs: JSON {"cluster":
                      {TYPE: COUNT}, "jobs": [{"id", "throughputs" {TYPE: steps/s},
                      "scale_factor", "priority_weight", "total_steps", "remaining_steps",
                      "arrival_time", "slo", "job_type"}]} (what Gavel's get_allocation
                      receives; docs/cluster-scheduling.md). No --throughputs or --cluster
  --slo               generated jobs get an SLO in {1.2, 2, 10} (probability 1/3 each): the
                      deadline is arrival + SLO * duration on the reference GPU (V100)

Policy:
  --policy POLICY     max-min-fairness (default) | proportional-fairness | max-throughput |
                      min-makespan | finish-time-fairness | isolated | fifo
  --heterogeneity-agnostic   Gavel's agnostic variant (max-min, proportional: every
                      throughput 1; others: the V100 throughput on every type)
  --water-filling     max-min: keep raising the other jobs after the minimum is fixed (Gavel's
                      max_min_fairness_water_filling; the default, popalloc-simulate's is plain)
  --no-water-filling  max-min: plain max-min (only the minimum is raised)
  --class-lp-max-classes K   max-min, min-makespan, proportional fairness: solve exactly over
                      classes of identical jobs when there are at most K (default 256; 0: always
                      the price-discovery core on every job)
  --gpu-cost TYPE:PRICE,...  max-throughput: maximise throughput per unit price
  --no-slo-floors     max-throughput: ignore the jobs' SLOs (by default a job with an SLO
                      must reach the throughput that meets its deadline; if the floors cannot
                      all be met they are dropped, as Gavel does, and the output says so)
  --tolerance TOL     relative accuracy, 0 < TOL < 0.1 (default 1e-6; popalloc-simulate's 1e-4)
  --threads N         OpenMP threads (default 0: OpenMP default)
  --time-limit SEC    wall-clock limit of each core solve

POP:
  --pop K             split the jobs into K random parts, each with 1/K of every GPU type
                      (remainders handed out, never dropped), solve and merge (default 1)
  --pop-seed S        partition seed (default 0)
  --pop-strategy STR  uniform-random (default, POP's) | shuffled | round-robin
  --compare-full      with --pop K > 1: also solve the whole problem and report the mean
                      effective-throughput ratio POP / full and the speed-up

Space sharing:
  --space-sharing     Gavel's packed policies: two jobs of the same scale factor may also
                      share GPUs at their co-located throughputs (max-min-fairness, plain unless
                      --water-filling is given, min-makespan, finish-time-fairness,
                      max-throughput, with SLO floors where jobs have SLOs, or fifo; not with
                      --heterogeneity-agnostic, --gpu-cost, --state or --allocation).
                      Needs the co-located entries of --throughputs FILE; without it the
                      shipped share/popalloc/gavel/simulation_throughputs.json is read
  --pair-threshold X  offer a pair on a type only if T_pair_a / T_a + T_pair_b / T_b >= X
                      (default 1: lower pairs are dominated by running the two jobs in turn);
                      with --policy fifo a queued job joins a running one only above X
                      (default 1.5, Gavel's packed FIFO)

Output:
  --output FILE       JSON (share/popalloc/schemas/popalloc-schedule.schema.json,
                      docs/output-format.md): schema_version, program, popalloc_version,
                      command_line, inputs, policy, objective, dual_bound, relative_gap,
                      status, seconds, pop_parts, space_sharing, cluster, summary, pop,
                      jobs [{id, job_type, scale_factor, allocation {type: fraction},
                      effective_throughput, normalized_throughput}]; with --space-sharing also
                      pairs [{first, second, gpu_type, fraction, first_throughput,
                      second_throughput}] (allocation is then each job's time alone)
  --allocation FILE   the allocation in Gavel's layout: {"JOB_ID": {"TYPE": fraction}}
  --write-state FILE  the jobs and cluster of this run as a --state file
  --quiet             nothing on stdout (errors and warnings still go to stderr)
  --verbose           also the per-job table, and progress from the start
  -h, --help          this text
  --version           popalloc version, backends, LP/MILP libraries

Objective (Gavel, OSDI 2020): max-min: min_i s_i ET_i / (w_i P_i) (P_i = sum_w T_iw n_w / N);
makespan: seconds; finish-time fairness: max_i rho_i; proportional: sum_i w_i log(ET_i / P_i);
max-throughput: sum_i ET_i (per unit price with --gpu-cost). ET_i = sum_w T_iw X_iw (steps/s).

Outputs are replaced atomically; symbolic links are written through, "-" (stdout), devices and
FIFOs directly, and a read-only file or an output that is an input or another output is refused
before any work.

Exit status: 0 done, 2 usage or input error (nothing written), 1 internal error.
)";

/// A bad command line: exit status 2, like a bad input file (popalloc_cli::run_program).
using usage_error = popalloc::io::input_error;

struct arguments {
  int class_lp_max_classes = pc::policy_options{}.class_lp_max_classes;
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
  bool space_sharing = false;
  double pair_threshold = -1.0;  // not given: 1, or Gavel's 1.5 for packed FIFO
  std::string output, allocation, state, write_state;
  popalloc_cli::verbosity verbosity = popalloc_cli::verbosity::normal;
  bool help = false, version = false;
};

/// Largest --jobs: the policies hold a dense jobs x GPU-types model several times over, so far
/// more would exhaust memory long before an answer; the limit fails fast instead.
constexpr std::int64_t kMaxJobs = 10'000'000;

using popalloc_cli::option_spec;

constexpr option_spec kOptions[] = {
    {"throughputs", true},
    {"cluster", true},
    {"trace", true},
    {"jobs", true},
    {"single-gpu", false},
    {"multi-gpu", false},
    {"multi-priority", false},
    {"jobs-per-hour", true},
    {"slo", false},
    {"no-slo-floors", false},
    {"policy", true},
    {"heterogeneity-agnostic", false},
    {"water-filling", false},
    {"no-water-filling", false},
    {"class-lp-max-classes", true},
    {"gpu-cost", true},
    {"tolerance", true},
    {"pop", true},
    {"pop-seed", true},
    {"pop-strategy", true},
    {"compare-full", false},
    {"space-sharing", false},
    {"pair-threshold", true},
    {"state", true},
    {"write-state", true},
    {"allocation", true},
};

[[noreturn]] void fail_usage(const std::string& what) {
  throw usage_error(what + " (see popalloc-schedule --help)");
}

const popalloc_cli::value_reader read_value{fail_usage};

arguments parse_arguments(int argc, char** argv) {
  const popalloc_cli::given_options given =
      popalloc_cli::parse_program_arguments(argc, argv, kOptions, fail_usage);
  arguments a;
  auto value_of = [&](const char* name) -> const std::string* {
    const auto found = given.find(name);
    return found == given.end() ? nullptr : &found->second;
  };
  auto has = [&](const char* name) { return given.count(name) != 0; };
  a.help = has("help");
  a.version = has("version");
  if (const auto* v = value_of("throughputs")) a.throughputs = *v;
  if (const auto* v = value_of("cluster")) a.cluster = *v;
  if (const auto* v = value_of("trace")) a.trace = *v;
  if (const auto* v = value_of("jobs")) {
    a.jobs = read_value.integer<std::int64_t>(*v, "--jobs", 1, kMaxJobs);
  }
  if (const auto* v = value_of("seed")) a.seed = read_value.integer<std::uint64_t>(*v, "--seed", 0);
  if (has("single-gpu") && has("multi-gpu"))
    throw usage_error("--single-gpu and --multi-gpu cannot be combined");
  a.single_gpu = has("single-gpu");
  a.multi_priority = has("multi-priority");
  a.slos = has("slo");
  a.slo_floors = !has("no-slo-floors");
  if (const auto* v = value_of("jobs-per-hour")) {
    a.jobs_per_hour = read_value.number(*v, "--jobs-per-hour", popalloc_cli::above(0.0));
  }
  if (const auto* v = value_of("policy")) a.policy = *v;
  a.agnostic = has("heterogeneity-agnostic");
  if (has("water-filling") && has("no-water-filling"))
    throw usage_error("--water-filling and --no-water-filling cannot be combined");
  a.water_filling = !has("no-water-filling");
  if (const auto* v = value_of("class-lp-max-classes"))
    a.class_lp_max_classes = read_value.integer(*v, "--class-lp-max-classes", 0);
  if (const auto* v = value_of("gpu-cost")) a.gpu_cost = *v;
  if (const auto* v = value_of("tolerance")) {
    a.tolerance = read_value.number(*v, "--tolerance", popalloc_cli::above(0.0));
    if (!(a.tolerance < 0.1)) throw usage_error("--tolerance must be in (0, 0.1)");
  }
  if (const auto* v = value_of("threads")) a.threads = read_value.integer(*v, "--threads", 0);
  if (const auto* v = value_of("time-limit")) {
    a.time_limit = read_value.number(*v, "--time-limit", popalloc_cli::above(0.0));
  }
  if (const auto* v = value_of("pop")) a.pop = read_value.integer(*v, "--pop", 1);
  if (const auto* v = value_of("pop-seed"))
    a.pop_seed = read_value.integer<std::uint64_t>(*v, "--pop-seed", 0);
  if (const auto* v = value_of("pop-strategy")) a.pop_strategy = *v;
  a.compare_full = has("compare-full");
  a.space_sharing = has("space-sharing");
  // Packed max-min is plain unless asked (popalloc-schedule's earlier packed results stay).
  if (a.space_sharing) a.water_filling = has("water-filling");
  if (const auto* v = value_of("pair-threshold")) {
    a.pair_threshold = read_value.number(*v, "--pair-threshold", popalloc_cli::at_least(0.0));
  }
  if (const auto* v = value_of("output")) {
    a.output = *v;
    if (a.output.empty()) throw usage_error("--output needs a file name");
  }
  for (const char* name : {"allocation", "state", "write-state"})
    if (const auto* v = value_of(name); v != nullptr && v->empty())
      throw usage_error(std::string("--") + name + " needs a file name");
  if (const auto* v = value_of("allocation")) a.allocation = *v;
  if (const auto* v = value_of("state")) a.state = *v;
  if (const auto* v = value_of("write-state")) a.write_state = *v;
  a.verbosity = popalloc_cli::verbosity_of(given);
  if (a.help || a.version) return a;

  if (a.space_sharing) {
    // What the packed policies do not implement is refused here, before any file is read.
    pc::policy_kind policy{};
    try {
      policy = pc::parse_policy(a.policy);
    } catch (const popalloc::invalid_options& e) {
      throw usage_error(std::string("--policy: ") + e.what());
    }
    if (policy == pc::policy_kind::proportional_fairness || policy == pc::policy_kind::isolated)
      throw usage_error(
          "--space-sharing runs --policy max-min-fairness, min-makespan, finish-time-fairness, "
          "max-throughput or fifo, not " +
          a.policy);
    auto refuse = [](const std::string& what, const char* why) {
      throw usage_error("--space-sharing cannot be combined with " + what + " (" + why + ")");
    };
    if (a.agnostic)
      refuse("--heterogeneity-agnostic", "the packed policies are heterogeneity-aware");
    if (!a.gpu_cost.empty()) refuse("--gpu-cost", "GPU costs are not supported with sharing");
    if (!a.state.empty())
      refuse("--state", "a state has no job types, so no co-located throughputs");
    if (!a.allocation.empty())
      refuse("--allocation", "Gavel's layout has no pairs; --output lists them");
  } else if (has("pair-threshold")) {
    throw usage_error("--pair-threshold needs --space-sharing");
  }

  if (!a.state.empty()) {
    // The state holds the cluster and the jobs with their throughputs.
    for (const char* other : {"throughputs", "cluster", "trace", "jobs", "seed", "single-gpu",
                              "multi-gpu", "multi-priority", "jobs-per-hour", "slo"})
      if (has(other))
        throw usage_error(std::string("--") + other + " cannot be combined with --state");
    return a;
  }
  if (!a.trace.empty() && has("jobs")) throw usage_error("give either --trace or --jobs, not both");
  if (a.trace.empty() && !has("jobs")) a.jobs = 64;  // the built-in default run
  if (a.compare_full && a.pop == 1) throw usage_error("--compare-full needs --pop K with K > 1");
  // Options of one mode given in another do nothing; say so rather than let the user believe.
  auto warn = [](const std::string& what) {
    std::fprintf(stderr, "popalloc-schedule: warning: %s\n", what.c_str());
  };
  if (!a.trace.empty()) {
    for (const char* generator_only :
         {"seed", "single-gpu", "multi-gpu", "multi-priority", "jobs-per-hour", "slo"})
      if (has(generator_only))
        throw usage_error(std::string("--") + generator_only +
                          " is for generated jobs, not --trace");
  }
  if (a.pop == 1) {
    for (const char* pop_only : {"pop-seed", "pop-strategy"})
      if (has(pop_only)) warn(std::string("--") + pop_only + " does nothing without --pop K > 1");
  }
  if (a.policy != "max-min-fairness" && (has("no-water-filling") || has("water-filling")))
    warn("--water-filling and --no-water-filling only apply to --policy max-min-fairness");
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
    const double v =
        read_value.number(item.substr(colon + 1), "--gpu-cost " + item, popalloc_cli::above(0.0));
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

/// One progress line's state: "level search: 12 core solves, level in [0.41, 0.42], gap 1.6e-02".
std::string describe(const pc::policy_progress& p) {
  std::string out = p.pop_part >= 0 ? "part " + std::to_string(p.pop_part) + ", " : "";
  out += p.stage;
  // Water filling's first level is the level search's; it works on the next one.
  if (p.water_filling_levels > 0) out += " level " + std::to_string(p.water_filling_levels + 1);
  char text[160];
  if (std::string_view(p.stage) == "solve") {
    std::snprintf(text, sizeof text, ": objective %.9g, bound %.9g, gap %.2e", p.lower, p.upper,
                  p.relative_gap);
  } else if (std::isnan(p.upper)) {
    std::snprintf(text, sizeof text, ": %d core solves, bottleneck tests at level %.9g",
                  p.core_solves, p.lower);
  } else {
    std::snprintf(text, sizeof text, ": %d core solves, level in [%.9g, %.9g], gap %.2e",
                  p.core_solves, p.lower, p.upper, p.relative_gap);
  }
  return out + text;
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

void print_summary(const arguments& args, const pc::policy_options& o,
                   const pc::cluster_allocation& a, const summary& s, const comparison& cmp,
                   std::size_t job_count, const pc::gpu_cluster& cluster, const char* bound) {
  std::printf(
      "policy %s%s: objective %.10g (bound %s), status %s, %zu jobs on %s, %.4f s "
      "(%d core solves%s%s)\n",
      pc::to_string(o.policy), o.heterogeneity_agnostic ? " (heterogeneity-agnostic)" : "",
      a.objective, bound, popalloc::to_string(a.status), job_count, cluster.to_string().c_str(),
      a.seconds, a.core_solves,
      o.policy == pc::policy_kind::max_min_fairness && o.water_filling
          ? (", " + std::to_string(a.water_filling_levels) + " water-filling levels").c_str()
          : "",
      a.classes > 0
          ? ("; exact over " + std::to_string(a.classes) + " classes of identical jobs, " +
             std::to_string(a.simplex_runs) + " simplex runs")
                .c_str()
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
  if (a.space_sharing) {
    double shared = 0.0;
    for (const pc::pair_share& p : a.pairs) shared += 2.0 * p.fraction;
    std::printf("space sharing: %zu pairs, %.6g job-time units shared (of %zu)\n", a.pairs.size(),
                shared, job_count);
  }
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
}

int run(int argc, char** argv) {
  const arguments args = parse_arguments(argc, argv);
  if (args.help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (args.version) {
    std::fputs(popalloc_cli::version_text("popalloc-schedule", "", "").c_str(), stdout);
    return 0;
  }
  // The built-in table has no co-located throughputs, which sharing needs: the shipped file.
  std::string throughputs = args.throughputs;
  if (args.space_sharing && throughputs.empty()) {
    throughputs = popalloc_cli::shipped_gavel_throughputs();
    if (throughputs.empty())
      throw usage_error(
          "--space-sharing needs --throughputs FILE (Gavel's simulation_throughputs.json with "
          "co-located throughputs): the shipped copy was not found");
  }
  // Before any work: the output must be writable and no input.
  popalloc::io::check_output_files(
      {{"--output", args.output},
       {"--allocation", args.allocation},
       {"--write-state", args.write_state}},
      {{"--throughputs", throughputs}, {"--trace", args.trace}, {"--state", args.state}});
  // With --state the throughputs come from the state file and the table is not used.
  const pc::throughput_table table =
      !throughputs.empty() ? pc::load_throughputs(throughputs) : embedded_throughput_table();
  pc::gpu_cluster cluster;
  std::vector<pc::job> jobs;
  if (!args.state.empty()) {
    scheduler_state state = read_scheduler_state(args.state);
    cluster = std::move(state.cluster);
    jobs = std::move(state.jobs);
    pc::validate_jobs(jobs, cluster);
  } else {
    try {
      cluster = pc::parse_cluster(args.cluster, table.gpu_types());
    } catch (const popalloc::invalid_problem& e) {
      throw usage_error(std::string("--cluster: ") + e.what());
    }
  }
  if (!args.trace.empty()) {
    jobs = pc::jobs_from_trace(pc::load_trace(args.trace), table, cluster, args.trace);
  } else if (args.state.empty()) {
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
  o.class_lp_max_classes = args.class_lp_max_classes;
  const bool fifo = o.policy == pc::policy_kind::fifo;
  if (args.pair_threshold >= 0.0)
    (fifo ? o.pairing.fifo_threshold : o.pairing.min_combined_throughput) = args.pair_threshold;
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

  // The policy reports after each core solve (the level policies) or core iteration (the
  // separable ones); the heartbeat prints the latest report every second. With POP the parts
  // report concurrently and the latest one is shown. The packed LP reports nothing: the
  // heartbeat alone says the run is alive.
  popalloc_cli::progress_state latest("starting");
  if (args.verbosity != popalloc_cli::verbosity::quiet)
    o.progress = [&latest](const pc::policy_progress& p) { latest.set(describe(p)); };
  pc::cluster_allocation a;
  comparison cmp;
  {
    const popalloc_cli::heartbeat beat(args.verbosity,
                                       std::string("policy ") + pc::to_string(o.policy) + ":",
                                       [&latest] { return latest.get(); });
    auto solve = [&](const pc::policy_options& options) {
      return args.space_sharing ? pc::allocate_packed(jobs, cluster, table, options)
                                : pc::allocate(jobs, cluster, options);
    };
    a = solve(o);
    if (args.compare_full) {
      pc::policy_options full = o;
      full.pop_parts = 1;
      cmp = compare(a, solve(full));
    }
  }
  const summary s = summarize(a);

  if (args.verbosity == popalloc_cli::verbosity::verbose) {
    std::printf("%-6s %-36s %3s", "id", "job_type", "s");
    for (const auto& t : cluster.types) std::printf(" %9s", t.c_str());
    // With sharing the type columns are the time alone; the time in pairs gets its own column.
    std::vector<double> shared(jobs.size(), 0.0);
    for (const pc::pair_share& p : a.pairs) {
      shared[static_cast<std::size_t>(p.first)] += p.fraction;
      shared[static_cast<std::size_t>(p.second)] += p.fraction;
    }
    if (a.space_sharing) std::printf(" %9s", "shared");
    std::printf(" %14s %10s\n", "ET (steps/s)", "normalized");
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const auto r = static_cast<Eigen::Index>(i);
      std::printf("%-6lld %-36.36s %3d", static_cast<long long>(jobs[i].id),
                  jobs[i].job_type.c_str(), jobs[i].scale_factor);
      for (std::size_t w = 0; w < cluster.size(); ++w)
        std::printf(" %9.6f", a.fraction(r, static_cast<Eigen::Index>(w)));
      if (a.space_sharing) std::printf(" %9.6f", shared[i]);
      std::printf(" %14.6g %10.6f%s\n", a.effective_throughput[r], a.normalized_throughput[r],
                  a.schedulable[i] ? "" : "  (no usable GPU type)");
    }
  }
  // The baselines (isolated, fifo) compute no bound.
  char bound[64] = "none";
  if (!std::isnan(a.bound)) std::snprintf(bound, sizeof bound, "%.10g", a.bound);
  if (args.verbosity != popalloc_cli::verbosity::quiet)
    print_summary(args, o, a, s, cmp, jobs.size(), cluster, bound);

  if (!args.output.empty()) {
    popalloc::io::atomic_output_file file(args.output);
    std::string& out = file.buffer();
    namespace json = popalloc::io::json;
    popalloc_cli::run_record run("popalloc-schedule", argc, argv);
    if (!args.state.empty())
      run.input("state", args.state);
    else
      run.input("throughputs", throughputs.empty() ? "<built-in Gavel throughputs>" : throughputs);
    if (!args.trace.empty())
      run.input("trace", args.trace);
    else if (args.state.empty())
      run.input("jobs", "<generated " + std::to_string(args.jobs) + " jobs, seed " +
                            std::to_string(args.seed) + ">");
    out += "{\n";
    popalloc_cli::append_envelope(out, run);
    out += "  ";
    append_key(out, "policy");
    json::append_string(out, pc::to_string(o.policy));
    out += ",\n  ";
    append_key(out, "heterogeneity_agnostic");
    out += o.heterogeneity_agnostic ? "true" : "false";
    out += ",\n  ";
    append_key(out, "water_filling");
    out += o.policy == pc::policy_kind::max_min_fairness && o.water_filling ? "true" : "false";
    out += ",\n  ";
    append_key(out, "objective");
    json::append_number(out, a.objective);
    out += ",\n  ";
    append_key(out, "dual_bound");
    json::append_number(out, a.bound);
    out += ",\n  ";
    // Where the bound exists: the width of the certified bracket relative to its larger end.
    append_key(out, "relative_gap");
    json::append_number(
        out, std::abs(a.bound - a.objective) / std::max(std::abs(a.objective), std::abs(a.bound)));
    out += ",\n  ";
    append_key(out, "status");
    json::append_string(out, popalloc::to_string(a.status));
    out += ",\n  ";
    append_key(out, "seconds");
    json::append_number(out, a.seconds);
    out += ",\n  ";
    append_key(out, "tolerance");
    json::append_number(out, o.tolerance);
    out += ",\n  ";
    append_key(out, "pop_parts");
    out += std::to_string(args.pop);
    out += ",\n  ";
    append_key(out, "space_sharing");
    out += a.space_sharing ? "true" : "false";
    out += ",\n  ";
    if (a.space_sharing) {
      append_key(out, "pair_threshold");
      json::append_number(out, o.policy == pc::policy_kind::fifo
                                   ? o.pairing.fifo_threshold
                                   : o.pairing.min_combined_throughput);
      out += ",\n  ";
    }
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
    out += "{\"seed\": " + std::to_string(args.pop_seed) + ", \"strategy\": ";
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
      out += "{\"id\": " + std::to_string(jobs[i].id) + ", \"job_type\": ";
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
    out += "\n  ]";
    if (a.space_sharing) {
      // Job ids (not rows), as in `jobs`; each pair's fraction counts in both jobs' time.
      out += ",\n  ";
      append_key(out, "pairs");
      out += "[";
      for (std::size_t k = 0; k < a.pairs.size(); ++k) {
        const pc::pair_share& p = a.pairs[k];
        out += k ? ",\n    " : "\n    ";
        out += "{\"first\": " + std::to_string(jobs[static_cast<std::size_t>(p.first)].id) +
               ", \"second\": " + std::to_string(jobs[static_cast<std::size_t>(p.second)].id) +
               ", \"gpu_type\": ";
        json::append_string(out, cluster.types[static_cast<std::size_t>(p.gpu)]);
        out += ", \"fraction\": ";
        json::append_number(out, p.fraction);
        out += ", \"first_throughput\": ";
        json::append_number(out, p.first_throughput);
        out += ", \"second_throughput\": ";
        json::append_number(out, p.second_throughput);
        out += "}";
        file.flush_if_large();
      }
      out += a.pairs.empty() ? "]" : "\n  ]";
    }
    out += "\n}\n";
    file.commit();
  }
  if (!args.allocation.empty()) {
    popalloc::io::atomic_output_file file(args.allocation);
    file.buffer() = gavel_allocation_json(cluster, jobs, a);
    file.commit();
  }
  if (!args.write_state.empty()) {
    popalloc::io::atomic_output_file file(args.write_state);
    file.buffer() = scheduler_state_json(cluster, jobs);
    file.commit();
  }
  return 0;
}

}  // namespace
}  // namespace popalloc_schedule

int main(int argc, char** argv) {
  return popalloc_cli::run_program("popalloc-schedule",
                                   [&] { return popalloc_schedule::run(argc, argv); });
}
