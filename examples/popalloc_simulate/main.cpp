// SPDX-License-Identifier: Apache-2.0
// popalloc-simulate: simulates a GPU cluster scheduled by a Gavel policy (solved by popalloc)
// through Gavel's round-based mechanism, over a Gavel trace or a generated Poisson stream, and
// reports job completion times. `popalloc-simulate --help` documents the options.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <popalloc/cluster/cluster_spec.hpp>
#include <popalloc/cluster/job.hpp>
#include <popalloc/cluster/job_generator.hpp>
#include <popalloc/cluster/policies.hpp>
#include <popalloc/cluster/policy.hpp>
#include <popalloc/cluster/sim_policy.hpp>
#include <popalloc/cluster/simulator.hpp>
#include <popalloc/cluster/throughputs.hpp>
#include <popalloc/cluster/trace.hpp>
#include <popalloc/io/atomic_file.hpp>
#include <popalloc/io/input_error.hpp>
#include <popalloc/io/json.hpp>
#include <popalloc/io/text_file.hpp>
#include <popalloc/version.hpp>

#include "../common/command_line.hpp"
#include "../common/shipped_throughputs.hpp"
#include "default_throughputs.hpp"

namespace popalloc_simulate {
namespace {

namespace pc = popalloc::cluster;
namespace json = popalloc::io::json;
using popalloc::io::input_error;

constexpr const char* kUsage = R"(Usage:
  popalloc-simulate --throughputs FILE.json --cluster TYPE:COUNT,...
                    (--trace FILE | --arrival-rate JOBS_PER_HOUR --jobs N --seed S)
                    --policy POLICY [--heterogeneity-agnostic] [--space-sharing] [--pop K]
                    [--round-seconds 360] --output OUT.json [--per-job FILE.csv]
  popalloc-simulate     a small demo: 120 single-GPU jobs at 3 jobs/h on v100:12,p100:12,k80:12,
                        max-min fairness, Gavel's built-in throughputs

Simulates a cluster scheduled by Gavel's round-based mechanism: every round (360 s) jobs are
ranked per GPU type by allocation / share of time received and placed greedily; the allocation
is recomputed by POLICY (solved with popalloc, warm-started from the previous prices unless
--cold-policy) when jobs arrive or finish, at most once per --min-reset-seconds.

Workload:
  --throughputs FILE     Gavel's simulation_throughputs.json (default: the same isolated
                         throughputs, built in)
  --cluster SPEC         GPU types and counts, e.g. v100:36,p100:36,k80:36 (or 36:36:36)
  --trace FILE           Gavel trace (10 tab-separated columns); job ids are line positions
  --arrival-rate R       generate jobs with Poisson arrivals at R jobs per hour...
  --jobs N               ...N of them...
  --seed S               ...from seed S (Gavel's generate_job distributions)
  --multi-gpu            generated jobs get scale factors 1/2/4/8 (70/10/15/5 %)
  --single-gpu           generated jobs all have scale factor 1 (the default, as in Gavel's LAS
                         experiments; popalloc-schedule's default is --multi-gpu)
  --multi-priority       20 % of generated jobs get priority weight 5

Policy:
  --policy POLICY        max-min-fairness | proportional-fairness | max-throughput |
                         min-makespan | finish-time-fairness | isolated | fifo
  --heterogeneity-agnostic  Gavel's agnostic variant (and type order shuffled every round)
  --pop K                POP with K parts (default 1)
  --space-sharing        Gavel's packed policies: two jobs of the same scale factor may share
                         GPUs at their co-located throughputs (max-min-fairness, plain or
                         with --water-filling, max-throughput, or fifo: Gavel's packed FIFO
                         with its threshold 1.5; not with
                         --heterogeneity-agnostic).
                         Needs the co-located entries of --throughputs FILE; without it the
                         shipped share/popalloc/gavel/simulation_throughputs.json is read.
                         gpu_utilization then counts a shared GPU once
  --water-filling        max-min fairness keeps raising the other jobs after the minimum is
                         fixed (Gavel's max_min_fairness_water_filling); default plain max-min
                         (Gavel's max_min_fairness_perf, the policy of its LAS experiments;
                         popalloc-schedule's default is --water-filling)
  --no-water-filling     plain max-min (the default)
  --tolerance TOL        policy accuracy, 0 < TOL < 0.1 (default 1e-4: the policy is solved at
                         every reset; popalloc-schedule's default is 1e-6)
  --threads N            solver threads (default 0: OpenMP default)
  --time-limit SECONDS   wall-clock limit of each core solve of the policy
  --cold-policy          every recomputation starts cold instead of from the previous call's
                         prices (what the warm start saves: compare policy_seconds_per_round;
                         not with --space-sharing, whose policies start cold anyway)

Mechanism:
  --round-seconds S      round length (default 360)
  --min-reset-seconds S  least time between allocation recomputations (default 1920, Gavel's)
  --gpus-per-server N    servers hold N GPUs of their type (default 4)
  --window FIRST:LAST    measure JCT over job ids FIRST..LAST-1 and stop once they are done
  --max-hours H          stop after H simulated hours (unfinished jobs are reported)

Output:
  --output FILE          summary JSON (share/popalloc/schemas/popalloc-simulate.schema.json,
                         docs/output-format.md): schema_version, program, popalloc_version,
                         command_line, inputs, status, seconds, pop_parts, jobs_total,
                         jobs_finished, avg_jct_hours, p50_jct_hours, p99_jct_hours,
                         makespan_hours, gpu_utilization, avg_policy_seconds,
                         space_sharing, ... (pairs_allocated with --space-sharing)
  --per-job FILE         per-job CSV: id, job_type, scale_factor, ..., status, jct_hours
  --quiet                no progress on stderr and no summary on stdout
  --verbose              progress also for a run shorter than a second (its final state)
  -h, --help             this text
  --version              popalloc version, backends, LP/MILP libraries

Outputs are replaced atomically; symbolic links are written through, "-" (stdout), devices and
FIFOs directly, and a read-only file or an output that is an input or another output is refused
before any work.

Exit status: 0 done (also with unfinished jobs: they are counted in the outputs), 2 usage or
input error (nothing is written), 1 internal error.
)";

using popalloc_cli::option_spec;

/// Shortest round: below a millisecond the rounds are pure overhead, and simulated times of up to
/// max_trace_seconds still resolve them.
constexpr double kMinRoundSeconds = 1e-3;
/// Most rounds a run may need (a lower bound computed up front): far above any experiment (Gavel's
/// take thousands of rounds), and a clear error instead of a run that never ends.
constexpr double kMaxRounds = 1e7;

constexpr option_spec kOptions[] = {
    {"throughputs", true},
    {"cluster", true},
    {"trace", true},
    {"arrival-rate", true},
    {"jobs", true},
    {"multi-gpu", false},
    {"single-gpu", false},
    {"multi-priority", false},
    {"policy", true},
    {"heterogeneity-agnostic", false},
    {"space-sharing", false},
    {"pop", true},
    {"tolerance", true},
    {"water-filling", false},
    {"no-water-filling", false},
    {"cold-policy", false},
    {"round-seconds", true},
    {"min-reset-seconds", true},
    {"gpus-per-server", true},
    {"window", true},
    {"max-hours", true},
    {"per-job", true},
};

[[noreturn]] void usage_error(const std::string& what) {
  throw input_error(what + " (see popalloc-simulate --help)");
}

using popalloc_cli::given_options;

given_options parse_arguments(int argc, char** argv) {
  return popalloc_cli::parse_program_arguments(argc, argv, kOptions, usage_error);
}

const popalloc_cli::value_reader read_value{usage_error};

std::string json_number(double value) {
  std::string out;
  json::append_number(out, value);
  return out;
}

struct settings {
  std::string throughputs_path;  // empty: built in
  std::string cluster_spec = "v100:12,p100:12,k80:12";
  std::string trace_path;
  double arrival_rate = 3.0;
  long long jobs = 120;
  std::uint64_t seed = 0;
  bool multi_gpu = false, multi_priority = false;
  pc::policy_options policy;
  pc::simulator_options simulator;
  std::string output_path, per_job_path;
  popalloc_cli::verbosity verbosity = popalloc_cli::verbosity::normal;
  bool window = false;
  bool space_sharing = false;
  bool warm_policy = true;
};

settings interpret(const given_options& given) {
  auto value_of = [&](const char* name) -> const std::string* {
    const auto found = given.find(name);
    return found == given.end() ? nullptr : &found->second;
  };
  settings s;
  s.policy.tolerance = 1e-4;
  if (const auto* v = value_of("throughputs")) s.throughputs_path = *v;
  if (const auto* v = value_of("cluster")) s.cluster_spec = *v;
  if (const auto* v = value_of("trace")) {
    s.trace_path = *v;
    for (const char* generator_only :
         {"arrival-rate", "jobs", "seed", "multi-gpu", "single-gpu", "multi-priority"})
      if (given.count(generator_only) != 0)
        usage_error(std::string("--") + generator_only + " is for generated jobs, not --trace");
  }
  if (const auto* v = value_of("arrival-rate"))
    s.arrival_rate = read_value.number(*v, "--arrival-rate", popalloc_cli::above(0.0));
  if (const auto* v = value_of("jobs"))
    s.jobs = read_value.integer<long long>(*v, "--jobs", 1, 100'000'000);
  if (const auto* v = value_of("seed")) s.seed = read_value.integer<std::uint64_t>(*v, "--seed", 0);
  if (given.count("multi-gpu") != 0 && given.count("single-gpu") != 0)
    usage_error("--multi-gpu and --single-gpu cannot be combined");
  s.multi_gpu = given.count("multi-gpu") != 0;
  s.multi_priority = given.count("multi-priority") != 0;
  if (const auto* v = value_of("policy")) {
    try {
      s.policy.policy = pc::parse_policy(*v);
    } catch (const popalloc::invalid_options& e) {
      usage_error(e.what());
    }
  }
  s.policy.heterogeneity_agnostic = given.count("heterogeneity-agnostic") != 0;
  if (given.count("water-filling") != 0 && given.count("no-water-filling") != 0)
    usage_error("--water-filling and --no-water-filling cannot be combined");
  s.policy.water_filling = given.count("water-filling") != 0;
  s.space_sharing = given.count("space-sharing") != 0;
  s.warm_policy = given.count("cold-policy") == 0;
  if (s.space_sharing && !s.warm_policy)
    usage_error("--cold-policy is for the policies without --space-sharing (those start cold)");
  if (s.space_sharing) {
    // What the packed policies do not implement is refused before any file is read.
    // Packed min makespan is exact over classes of jobs with equal remaining steps; in a
    // simulation every active job has its own, and the class LP grows with their square.
    if (s.policy.policy != pc::policy_kind::max_min_fairness &&
        s.policy.policy != pc::policy_kind::max_throughput &&
        s.policy.policy != pc::policy_kind::fifo)
      usage_error(std::string("--space-sharing runs --policy max-min-fairness, max-throughput or "
                              "fifo, not ") +
                  pc::to_string(s.policy.policy));
    if (s.policy.heterogeneity_agnostic)
      usage_error(
          "--space-sharing cannot be combined with --heterogeneity-agnostic (the packed "
          "policies are heterogeneity-aware)");
  }
  if (s.policy.water_filling && s.policy.policy != pc::policy_kind::max_min_fairness)
    std::fprintf(stderr,
                 "popalloc-simulate: warning: --water-filling only applies to --policy "
                 "max-min-fairness\n");
  if (const auto* v = value_of("pop")) s.policy.pop_parts = read_value.integer(*v, "--pop", 1);
  if (const auto* v = value_of("tolerance")) {
    s.policy.tolerance = read_value.number(*v, "--tolerance", popalloc_cli::above(0.0));
    if (!(s.policy.tolerance < 0.1)) usage_error("--tolerance must be in (0, 0.1)");
  }
  if (const auto* v = value_of("threads"))
    s.policy.threads = read_value.integer(*v, "--threads", 0);
  if (const auto* v = value_of("time-limit"))
    s.policy.time_limit_seconds = read_value.number(*v, "--time-limit", popalloc_cli::above(0.0));
  if (const auto* v = value_of("round-seconds")) {
    s.simulator.round_seconds = read_value.number(*v, "--round-seconds", popalloc_cli::above(0.0));
    if (!(s.simulator.round_seconds >= kMinRoundSeconds && s.simulator.round_seconds <= 1e9))
      usage_error("--round-seconds must be in [" + json_number(kMinRoundSeconds) + ", 1e9]");
  }
  if (const auto* v = value_of("min-reset-seconds"))
    s.simulator.min_seconds_between_resets =
        read_value.number(*v, "--min-reset-seconds", popalloc_cli::at_least(0.0));
  int per_server = 4;
  if (const auto* v = value_of("gpus-per-server"))
    per_server = read_value.integer(*v, "--gpus-per-server", 1);
  s.simulator.gpus_per_server.assign(1, per_server);  // expanded once the cluster is known
  if (const auto* v = value_of("window")) {
    const std::size_t colon = v->find(':');
    if (colon == std::string::npos) usage_error("--window expects FIRST:LAST (job ids)");
    s.simulator.window_first = read_value.integer<std::int64_t>(
        std::string_view(*v).substr(0, colon), "--window FIRST", 0);
    s.simulator.window_last = read_value.integer<std::int64_t>(
        std::string_view(*v).substr(colon + 1), "--window LAST", 0);
    if (s.simulator.window_last <= s.simulator.window_first)
      usage_error("--window FIRST:LAST needs FIRST < LAST");
    s.window = true;
  }
  if (const auto* v = value_of("max-hours")) {
    s.simulator.max_simulated_seconds =
        3600.0 * read_value.number(*v, "--max-hours", popalloc_cli::above(0.0));
    if (!(s.simulator.max_simulated_seconds <= pc::max_trace_seconds))
      usage_error("--max-hours must be <= " + json_number(pc::max_trace_seconds / 3600.0));
  }
  for (const char* name : {"output", "per-job"})
    if (const auto* v = value_of(name); v != nullptr && v->empty())
      usage_error(std::string("--") + name + " needs a file name");
  if (const auto* v = value_of("output")) s.output_path = *v;
  if (const auto* v = value_of("per-job")) s.per_job_path = *v;
  if (!s.output_path.empty() && s.output_path == s.per_job_path && s.output_path != "-")
    usage_error("--output and --per-job name the same file");
  s.verbosity = popalloc_cli::verbosity_of(given);
  s.simulator.shuffle_type_order = s.policy.heterogeneity_agnostic;
  s.simulator.seed = s.seed;
  s.policy.pop_seed = s.seed;
  s.policy.fifo_seed = s.seed;
  return s;
}

/// Gavel serves the fastest type first (v100, p100, k80): here the types by decreasing mean of
/// T_iw / max_w T_iw over the workload's jobs, ties in cluster order.
std::vector<int> fastest_first(const std::vector<pc::job>& jobs, std::size_t types) {
  std::vector<double> score(types, 0.0);
  for (const pc::job& j : jobs) {
    const double best = *std::max_element(j.throughput.begin(), j.throughput.end());
    if (best > 0.0)
      for (std::size_t w = 0; w < types; ++w) score[w] += j.throughput[w] / best;
  }
  std::vector<int> order(types);
  for (std::size_t w = 0; w < types; ++w) order[w] = static_cast<int>(w);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return score[static_cast<std::size_t>(a)] > score[static_cast<std::size_t>(b)];
  });
  return order;
}

void write_summary_json(const std::string& path, const settings& s, const pc::gpu_cluster& cluster,
                        const pc::sim_result& result, const pc::policy_call_stats& stats,
                        const std::string& workload, const popalloc_cli::run_record& run) {
  popalloc::io::atomic_output_file file(path);
  std::string& out = file.buffer();
  const pc::sim_summary& m = result.summary;
  auto field = [&](const char* key, double value, bool last = false) {
    out += "  ";
    json::append_string(out, key);
    out += ": ";
    json::append_number(out, value);
    out += last ? "\n" : ",\n";
  };
  auto text = [&](const char* key, const std::string& value) {
    out += "  ";
    json::append_string(out, key);
    out += ": ";
    json::append_string(out, value);
    out += ",\n";
  };
  out += "{\n";
  popalloc_cli::append_envelope(out, run);
  // finished: every job ran to its end; stopped: --max-hours or --window ended the run first.
  text("status", m.jobs_unfinished == 0 ? "finished" : "stopped");
  field("seconds", m.wall_seconds);
  field("pop_parts", s.policy.pop_parts);
  field("jobs_total", static_cast<double>(m.jobs_total));
  field("jobs_finished", static_cast<double>(m.jobs_finished));
  field("jobs_unfinished", static_cast<double>(m.jobs_unfinished));
  field("jobs_measured", static_cast<double>(m.jobs_measured));
  field("avg_jct_hours", m.avg_jct_hours);
  field("p50_jct_hours", m.p50_jct_hours);
  field("p99_jct_hours", m.p99_jct_hours);
  field("makespan_hours", m.makespan_hours);
  field("gpu_utilization", m.gpu_utilization);
  field("avg_policy_seconds", m.avg_policy_seconds);
  field("max_policy_seconds", m.max_policy_seconds);
  field("total_policy_seconds", m.total_policy_seconds);
  field("policy_calls", static_cast<double>(m.policy_calls));
  field("policy_calls_warm_started", static_cast<double>(stats.warm_started));
  field("policy_calls_not_converged", static_cast<double>(stats.not_converged));
  field("core_solves", static_cast<double>(stats.core_solves));
  if (s.policy.pop_parts > 1)
    field("avg_pop_part_max_seconds", m.policy_calls > 0 ? stats.pop_parts_seconds_max_total /
                                                               static_cast<double>(m.policy_calls)
                                                         : 0.0);
  field("policy_seconds_per_round",
        m.rounds > 0 ? m.total_policy_seconds / static_cast<double>(m.rounds) : 0.0);
  field("rounds", static_cast<double>(m.rounds));
  field("simulated_hours", m.simulated_hours);
  text("policy", pc::to_string(s.policy.policy));
  out += "  \"heterogeneity_agnostic\": ";
  out += s.policy.heterogeneity_agnostic ? "true,\n" : "false,\n";
  out += "  \"water_filling\": ";
  out += s.policy.water_filling ? "true,\n" : "false,\n";
  out += "  \"space_sharing\": ";
  out += s.space_sharing ? "true,\n" : "false,\n";
  // Pairs in the allocations, summed over the policy calls.
  if (s.space_sharing) field("pairs_allocated", static_cast<double>(stats.pairs));
  field("tolerance", s.policy.tolerance);
  field("round_seconds", s.simulator.round_seconds);
  field("min_reset_seconds", s.simulator.min_seconds_between_resets);
  text("cluster", cluster.to_string());
  text("workload", workload);
  if (s.window) {
    field("window_first", static_cast<double>(s.simulator.window_first));
    field("window_last", static_cast<double>(s.simulator.window_last));
  }
  field("seed", static_cast<double>(s.seed), true);
  out += "}\n";
  file.commit();
}

std::string format_seconds(double seconds) {
  std::string out;
  if (!std::isnan(seconds)) popalloc::io::append_number(out, seconds);
  return out;
}

void write_per_job_csv(const std::string& path, const pc::gpu_cluster& cluster,
                       const std::vector<pc::job>& jobs, const pc::sim_result& result) {
  popalloc::io::atomic_output_file file(path);
  std::string& out = file.buffer();
  out +=
      "id,job_type,scale_factor,priority_weight,total_steps,arrival_seconds,status,"
      "first_run_seconds,finish_seconds,jct_hours,steps_done,rounds";
  for (const std::string& type : cluster.types) out += ",seconds_" + type;
  out += '\n';
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const pc::job& j = jobs[i];
    const pc::sim_job_result& r = result.jobs[i];
    out += std::to_string(i) + ',';
    popalloc::io::append_csv_field(out, j.job_type);
    out += ',' + std::to_string(j.scale_factor) + ',';
    popalloc::io::append_number(out, j.priority_weight);
    out += ',';
    popalloc::io::append_number(out, j.total_steps);
    out += ',';
    popalloc::io::append_number(out, j.arrival_time);
    out += ',';
    out += pc::to_string(r.status);
    out += ',' + format_seconds(r.first_run_seconds) + ',' + format_seconds(r.finish_seconds) + ',';
    out += format_seconds(r.status == pc::sim_job_status::finished ? r.jct_seconds() / 3600.0
                                                                   : std::nan(""));
    out += ',';
    popalloc::io::append_number(out, r.steps_done);
    out += ',' + std::to_string(r.rounds_run);
    for (const double seconds : r.seconds_on_type) {
      out += ',';
      popalloc::io::append_number(out, seconds);
    }
    out += '\n';
    file.flush_if_large();
  }
  file.commit();
}

/// Refuses a workload whose simulation cannot finish in kMaxRounds rounds: a lower bound on the
/// rounds it needs is the longest job alone on its fastest usable type, and the GPU-seconds of all
/// jobs spread over the whole cluster, each divided by the round length; --max-hours caps both.
void check_round_budget(const std::vector<pc::job>& jobs, const pc::gpu_cluster& cluster,
                        const pc::simulator_options& options) {
  double longest = 0.0, work = 0.0;
  std::int64_t longest_job = -1;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const pc::job& j = jobs[i];
    double fastest = 0.0;
    for (std::size_t w = 0; w < cluster.size(); ++w)
      if (cluster.counts[w] >= j.scale_factor) fastest = std::max(fastest, j.throughput[w]);
    if (!(fastest > 0.0)) continue;  // unrunnable: never scheduled
    const double seconds = j.total_steps / fastest;
    if (seconds > longest) longest = seconds, longest_job = static_cast<std::int64_t>(i);
    work += seconds * j.scale_factor;
  }
  const std::int64_t gpus = cluster.total();
  const double busy =
      std::min(std::max(longest, work / static_cast<double>(std::max<std::int64_t>(gpus, 1))),
               options.max_simulated_seconds);
  const double rounds = busy / options.round_seconds;
  if (rounds > kMaxRounds)
    usage_error("the workload needs at least " + json_number(std::ceil(rounds)) + " rounds of " +
                json_number(options.round_seconds) + " s (job " + std::to_string(longest_job) +
                " alone runs " + json_number(longest / 3600.0) + " h), more than the limit of " +
                std::to_string(static_cast<long long>(kMaxRounds)) +
                "; use a longer --round-seconds or a --max-hours");
}

/// The summary JSON's envelope: the inputs by file name or as described by the workload.
popalloc_cli::run_record run_record_of(const settings& s, int argc, char** argv) {
  popalloc_cli::run_record run("popalloc-simulate", argc, argv);
  run.input("throughputs",
            s.throughputs_path.empty() ? "<built-in Gavel throughputs>" : s.throughputs_path);
  if (!s.trace_path.empty())
    run.input("trace", s.trace_path);
  else
    run.input("jobs", "<generated " + std::to_string(s.jobs) + " jobs at " +
                          json_number(s.arrival_rate) + " jobs/h, seed " + std::to_string(s.seed) +
                          ">");
  return run;
}

int run(int argc, char** argv) {
  const given_options given = parse_arguments(argc, argv);
  if (given.count("help") != 0) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (given.count("version") != 0) {
    std::fputs(popalloc_cli::version_text("popalloc-simulate", "", "").c_str(), stdout);
    return 0;
  }
  settings s = interpret(given);
  // The built-in table has no co-located throughputs, which sharing needs: the shipped file.
  if (s.space_sharing && s.throughputs_path.empty()) {
    s.throughputs_path = popalloc_cli::shipped_gavel_throughputs();
    if (s.throughputs_path.empty())
      usage_error(
          "--space-sharing needs --throughputs FILE (Gavel's simulation_throughputs.json with "
          "co-located throughputs): the shipped copy was not found");
  }
  // Before any work: the outputs must be writable and none an input or the other.
  popalloc::io::check_output_files(
      {{"--output", s.output_path}, {"--per-job", s.per_job_path}},
      {{"--throughputs", s.throughputs_path}, {"--trace", s.trace_path}});
  // Everything that can be wrong with the input is found before any output file is touched.
  const pc::throughput_table table =
      s.throughputs_path.empty()
          ? pc::parse_throughputs(kDefaultThroughputsJson, "<built-in throughputs>")
          : pc::load_throughputs(s.throughputs_path);
  pc::gpu_cluster cluster;
  try {
    cluster = pc::parse_cluster(s.cluster_spec, table.gpu_types());
  } catch (const popalloc::invalid_problem& e) {
    usage_error(std::string("--cluster: ") + e.what());
  }
  std::vector<pc::job> jobs;
  std::string workload;
  if (!s.trace_path.empty()) {
    jobs = pc::jobs_from_trace(pc::load_trace(s.trace_path), table, cluster, s.trace_path);
    workload = "trace " + s.trace_path;
  } else {
    pc::generator_options generator;
    generator.seed = s.seed;
    generator.multi_gpu = s.multi_gpu;
    generator.multi_priority = s.multi_priority;
    generator.jobs_per_hour = s.arrival_rate;
    const auto rows = pc::generate_jobs(s.jobs, table, generator);
    jobs = pc::jobs_from_generated(rows, table, cluster);
    workload = "generated " + std::to_string(s.jobs) + " jobs at " + json_number(s.arrival_rate) +
               " jobs/h, seed " + std::to_string(s.seed) +
               (s.multi_gpu ? ", multi-GPU" : ", single-GPU");
  }
  pc::validate_jobs(jobs, cluster);
  if (s.policy.pop_parts > static_cast<int>(jobs.size()))
    usage_error("--pop " + std::to_string(s.policy.pop_parts) + " asks for more parts than the " +
                std::to_string(jobs.size()) + " jobs");
  const std::int64_t gpus = cluster.total();
  if (s.policy.pop_parts > gpus)
    usage_error("--pop " + std::to_string(s.policy.pop_parts) + " asks for more parts than the " +
                std::to_string(gpus) + " GPUs of the cluster (each part needs one)");
  check_round_budget(jobs, cluster, s.simulator);
  if (s.space_sharing && s.policy.policy == pc::policy_kind::max_throughput)
    for (std::size_t i = 0; i < jobs.size(); ++i)
      if (jobs[i].slo > 0.0)
        usage_error("--space-sharing: job " + std::to_string(i) +
                    " has an SLO; packed max-throughput's SLO floors need a class LP column "
                    "per pair of jobs with distinct floors, which the active jobs outgrow");
  if (s.window && s.simulator.window_last > static_cast<std::int64_t>(jobs.size()))
    usage_error("--window LAST is beyond the " + std::to_string(jobs.size()) + " jobs");
  s.simulator.gpus_per_server.assign(cluster.size(), s.simulator.gpus_per_server.front());
  s.simulator.type_order = fastest_first(jobs, cluster.size());
  for (const std::string* path : {&s.output_path, &s.per_job_path})
    if (!path->empty()) popalloc::io::check_output_path(*path);

  if (s.verbosity != popalloc_cli::verbosity::quiet) {
    // The simulator reports after its first interval, then every interval.
    s.simulator.progress_seconds = popalloc_cli::kProgressIntervalSeconds;
    // The simulator also reports when it ends, which a run shorter than a second keeps quiet.
    const double first =
        s.verbosity == popalloc_cli::verbosity::verbose ? 0.0 : popalloc_cli::kProgressFirstSeconds;
    s.simulator.progress = [first](const pc::sim_progress& p) {
      if (p.wall_seconds < first) return;
      std::fprintf(stderr,
                   "  simulated %8.1f h  arrived %6lld/%lld  finished %6lld  active %5lld  "
                   "rounds %7lld  policy calls %6lld  wall %6.1f s\n",
                   p.simulated_seconds / 3600.0, static_cast<long long>(p.jobs_arrived),
                   static_cast<long long>(p.jobs_total), static_cast<long long>(p.jobs_finished),
                   static_cast<long long>(p.jobs_active), static_cast<long long>(p.rounds),
                   static_cast<long long>(p.policy_calls), p.wall_seconds);
    };
  }
  pc::sim_result result;
  pc::policy_call_stats stats;
  if (s.space_sharing) {
    const pc::packed_policy_adapter policy(jobs, cluster, table, s.policy);
    result = pc::simulate_packed(pc::to_sim_jobs(jobs), pc::sim_gpus(cluster), policy, s.simulator);
    stats = policy.stats();
  } else {
    const pc::policy_adapter adapter(jobs, cluster, s.policy, s.warm_policy);
    result = pc::simulate(pc::to_sim_jobs(jobs), pc::sim_gpus(cluster), adapter, s.simulator);
    stats = adapter.stats();
  }
  const pc::sim_summary& m = result.summary;
  if (s.verbosity != popalloc_cli::verbosity::quiet) {
    std::printf(
        "%s%s%s%s on %s: %lld/%lld jobs finished  avg JCT %.3f h  p50 %.3f h  p99 %.3f h  "
        "makespan %.2f h  utilization %.3f  policy %.4f s/call (%lld calls)  wall %.2f s\n",
        pc::to_string(s.policy.policy), s.policy.heterogeneity_agnostic ? " (agnostic)" : "",
        s.space_sharing ? " with space sharing" : "",
        s.policy.pop_parts > 1 ? (" POP-" + std::to_string(s.policy.pop_parts)).c_str() : "",
        cluster.to_string().c_str(), static_cast<long long>(m.jobs_finished),
        static_cast<long long>(m.jobs_total), m.avg_jct_hours, m.p50_jct_hours, m.p99_jct_hours,
        m.makespan_hours, m.gpu_utilization, m.avg_policy_seconds,
        static_cast<long long>(m.policy_calls), m.wall_seconds);
    std::fflush(stdout);
  }
  if (!s.output_path.empty())
    write_summary_json(s.output_path, s, cluster, result, stats, workload,
                       run_record_of(s, argc, argv));
  if (!s.per_job_path.empty()) write_per_job_csv(s.per_job_path, cluster, jobs, result);
  return 0;
}

}  // namespace
}  // namespace popalloc_simulate

int main(int argc, char** argv) {
  return popalloc_cli::run_program("popalloc-simulate",
                                   [&] { return popalloc_simulate::run(argc, argv); });
}
