// SPDX-License-Identifier: Apache-2.0
// popalloc-solve: allocates fungible resources to jobs with popalloc's price-discovery dual
// solver, from CSV files or a generated instance. `popalloc-solve --help` documents the formats.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <popalloc/pop.hpp>
#include <popalloc/popalloc.hpp>

#if defined(POPALLOC_HAS_THRUST) && POPALLOC_HAS_THRUST && __has_include(<popalloc/backend/thrust.hpp>)
#include <popalloc/backend/thrust.hpp>
#define POPALLOC_SOLVE_WITH_THRUST 1
#else
#define POPALLOC_SOLVE_WITH_THRUST 0
#endif

// MPI (examples/popalloc_solve/example.cmake defines POPALLOC_SOLVE_WITH_MPI when popalloc::mpi
// exists): under mpirun every rank solves its shard together with the others (docs/mpi.md).
#if defined(POPALLOC_SOLVE_WITH_MPI) && POPALLOC_SOLVE_WITH_MPI
#include <cstdlib>
#include <thread>

#include <popalloc/backend/mpi.hpp>
#else
#undef POPALLOC_SOLVE_WITH_MPI
#define POPALLOC_SOLVE_WITH_MPI 0
#include <cstdlib>
#endif

#include "../common/command_line.hpp"
#include "families.hpp"
#include "generator.hpp"
#include "instance.hpp"
#include "io.hpp"
#include "result_files.hpp"

namespace popalloc_solve {
namespace {

constexpr const char* kUsage = R"(Usage:
  popalloc-solve --jobs JOBS.csv --resources RESOURCES.csv [--utility UTILITY] [options]
  popalloc-solve --generate N,M [--family SPEC] [--seed S] [--write-instance PREFIX] [options]
  popalloc-solve              solve a generated 1000000 x 8 instance (seed 1, log utility)

Maximizes sum_i f_i(t_i), t_i = sum_j A_ij x_ij, over x_ij >= 0 with sum_j x_ij <= 1 for every
job i and sum_i x_ij <= R_j for every resource j.

Input:
  --jobs FILE              header id,weight,target,demand,<resource>,... in any order. weight
                           is optional (default 1), target is needed by target-priority only,
                           demand is optional (default 1: the units of every resource the job
                           occupies while it runs, e.g. its GPUs), demand:<resource> columns
                           are optional per-resource demands (> 0; a resource without one
                           takes demand), and each resource column holds the job's throughput
                           A_ij there (0 = cannot use; a resource without a column is 0 for
                           every job)
  --resources FILE         header name,capacity
  --generate N,M           generate N jobs on M resources (r0..r{M-1}) instead of reading files
  --family SPEC            instance family of --generate (default generations; alone: the
                           default size, M = 3 for gavel): NAME[:tight|:loose][:reachable|:far]
                           with the names below (docs/instance-families.md)
  --seed S                 generator seed (default 1), also the POP partition seed
  --write-instance PREFIX  also write the instance to PREFIX.jobs.csv and PREFIX.resources.csv

Model and solver:
  --utility UTILITY        linear | log | power:ALPHA (0 < ALPHA < 1) | target-priority
                           (default log)
  --tolerance TOL          stop at this relative duality gap, 0 < TOL < 0.1 (default
                           1e-4)
  --gap MEASURE            what the relative gap is relative to: objective (the standard
                           (bound - objective) / max(|objective|, |bound|), raised to 1e-6 x the
                           anchor where both are smaller), anchored (max(|objective|, |bound|,
                           anchor); anchor: bound - sum f_i(0), or the weight sum for log), or
                           automatic (default: anchored for log, objective otherwise)
  --max-iterations N       at most N dual evaluations (default 500)
  --time-limit SECONDS     wall-clock limit of the solve
  --threads N              CPU threads (default 0: the OpenMP default)
  --backend cpu|thrust     compute backend (default cpu)
  --pop K                  POP: split the jobs into K random parts (seed: --seed, default 0),
                           give each part 1/K of every capacity, solve the parts in parallel and
                           merge them; objective, dual_bound and relative_gap are those of the
                           whole problem, and the status is parts_converged when the parts
                           converged but the whole misses --tolerance (K <= the number of jobs;
                           default 1: solve the whole problem at once)
  --warm-start FILE        start from the prices of an earlier --output file (or of a JSON
                           object mapping every resource name to its price)
  --no-sample-start        cold starts of problems with >= 8,192 jobs normally begin from
                           the prices of a solve of a sample of them (every 50th job when
                           there are enough); this starts from the equal-share estimate

Output:
  --output FILE            result as JSON (schema: share/popalloc/schemas/popalloc-solve.schema.json,
                           docs/output-format.md): schema_version, program, popalloc_version,
                           command_line, inputs, status, objective, dual_bound, trivial_bound,
                           absolute_gap, relative_gap, gap_measure, gap_scale,
                           gap_scale_name, iterations, sample_iterations, seconds, n_jobs,
                           n_resources, max_capacity_violation,
                           pop_parts, utility, prices (resource name -> price)
  --allocation FILE        allocation as CSV: id,resource,fraction (one row per x_ij > 0)
  --quiet                  no progress and no summary line
  --verbose                progress at every iteration, from the start
  -h, --help               this text
  --version                popalloc version, backends, LP/MILP libraries

Outputs are replaced atomically and only after a successful solve, RESULT.json and
ALLOCATION.csv together; symbolic links are written through, "-" (stdout), devices and FIFOs
are written directly, and a read-only file or an output that is an input or another output is
refused before any work. Progress goes to stderr after the first second, the summary line to
stdout. Ctrl-C stops the solve early and still writes the best allocation found (exit status
130), also during the writing; a second Ctrl-C ends the run at once, leaving the outputs as
they were.

Under MPI (mpirun -np R popalloc-solve ..., in builds with popalloc::mpi; docs/mpi.md):
  every rank holds a shard of the jobs: --generate makes each rank generate only its jobs (the
  same instance as one process), a --jobs path containing {rank} names one file per rank
  (otherwise every rank reads the file and keeps its share). Rank 0 writes --output; an
  --allocation path containing {rank} is written per rank, otherwise gathered by rank 0;
  --write-instance needs {rank} in PREFIX. --pop and --backend thrust are not available.
  --mpi-timeout SECONDS    end the run with an error when the ranks wait longer than this for
                           each other (default 600; a dead or stuck rank)
  --mpi-sums cpu|exact     cpu (default): the single-process result bit for bit; exact: exact
                           sums, for more than 256 ranks (both independent of the rank count)

Exit status: 0 solved (also when an iteration or time limit stopped it, the solver stalled or
POP's parts converged without the whole: the status says which), 2 usage or input error
(nothing is written), 1 internal error or a numerical failure of the solve (nothing is
written), 130 interrupted by Ctrl-C.
)";

// ---- Command line ---------------------------------------------------------------------------

/// The options a flag-value pair can name; `takes_value` false means a flag.
using popalloc_cli::option_spec;

constexpr option_spec kOptions[] = {
    {"jobs", true},
    {"resources", true},
    {"utility", true},
    {"tolerance", true},
    {"gap", true},
    {"max-iterations", true},
    {"backend", true},
    {"pop", true},
    {"warm-start", true},
    {"allocation", true},
    {"generate", true},
    {"family", true},
    {"write-instance", true},
    {"mpi-timeout", true},
    {"mpi-sums", true},
    {"no-sample-start", false},
    // Hidden: times reading --jobs/--resources and exits (the CLI tests report the speed).
    {"benchmark-read", false},
};

[[noreturn]] void usage_error(const std::string& what) {
  throw input_error(what + " (see popalloc-solve --help)");
}

/// --help: the usage text and the instance families of --family.
void print_usage() {
  std::fputs(kUsage, stdout);
  std::fputs("\nInstance families (--family NAME[:tight|:loose][:reachable|:far]):\n", stdout);
  for (const std::string& name : family_names())
    std::printf("  %-12s %s\n", name.c_str(), describe_family(name).c_str());
}

std::map<std::string, std::string, std::less<>> parse_arguments(int argc, char** argv) {
  return popalloc_cli::parse_program_arguments(argc, argv, kOptions, usage_error);
}

const popalloc_cli::value_reader read_value{usage_error};

using utility_variant = std::variant<popalloc::utility::linear, popalloc::utility::log,
                                     popalloc::utility::power, popalloc::utility::target_priority>;

struct chosen_utility {
  utility_variant utility;
  std::string name;
};

chosen_utility parse_utility(const std::string& spec) {
  if (spec == "linear") return {popalloc::utility::linear{}, spec};
  if (spec == "log") return {popalloc::utility::log{}, spec};
  if (spec == "target-priority" || spec == "target_priority")
    return {popalloc::utility::target_priority{}, "target-priority"};
  if (spec.rfind("power:", 0) == 0) {
    const std::string_view alpha_text = std::string_view(spec).substr(6);
    double alpha = 0.0;
    const auto [end, error] =
        std::from_chars(alpha_text.data(), alpha_text.data() + alpha_text.size(), alpha);
    if (error != std::errc() || end != alpha_text.data() + alpha_text.size() ||
        alpha_text.empty() || !(alpha > 0.0 && alpha < 1.0))
      usage_error("--utility power:ALPHA needs a number 0 < ALPHA < 1, got '" +
                  std::string(alpha_text) + "'");
    return {popalloc::utility::power(alpha), spec};
  }
  usage_error("unknown utility '" + spec + "' (linear, log, power:ALPHA or target-priority)");
}

data_requirements requirements_of(const chosen_utility& chosen) {
  return std::visit(
      [&](const auto& utility) {
        using utility_type = std::decay_t<decltype(utility)>;
        return data_requirements{chosen.name.c_str(), utility_type::uses_target,
                                 utility_type::requires_positive_weight,
                                 utility_type::requires_positive_throughput};
      },
      chosen.utility);
}

enum class backend_kind { cpu, thrust };

struct settings {
  // Input: either files or the generator.
  std::string jobs_path, resources_path;
  bool generate = false;
  generator_settings generator;
  std::string family_text = "generations";  ///< --family as given
  std::string write_instance_prefix;
  chosen_utility utility{popalloc::utility::log{}, "log"};
  popalloc::solver_options options;
  backend_kind backend = backend_kind::cpu;
  std::string warm_start_path, output_path, allocation_path;
  popalloc_cli::verbosity verbosity = popalloc_cli::verbosity::normal;
  bool benchmark_read = false;
  int pop_parts = 1;           ///< --pop K
  std::uint64_t pop_seed = 0;  ///< --seed when given, else 0
};

settings interpret(const std::map<std::string, std::string, std::less<>>& given) {
  auto value_of = [&](const char* name) -> const std::string* {
    const auto found = given.find(name);
    return found == given.end() ? nullptr : &found->second;
  };
  settings result;
  const std::string* jobs = value_of("jobs");
  const std::string* resources = value_of("resources");
  const std::string* generate = value_of("generate");
  if (generate != nullptr && (jobs != nullptr || resources != nullptr))
    usage_error("--generate cannot be combined with --jobs/--resources");
  if ((jobs == nullptr) != (resources == nullptr))
    usage_error("--jobs and --resources must be given together");
  if (jobs != nullptr) {
    result.jobs_path = *jobs;
    result.resources_path = *resources;
  } else {
    // No input files: the generator, with the default 1000000 x 8 size unless --generate says.
    result.generate = true;
    if (generate != nullptr) {
      const std::size_t comma = generate->find(',');
      if (comma == std::string::npos) usage_error("--generate expects N,M (jobs,resources)");
      result.generator.jobs =
          read_value.integer<long long>(generate->substr(0, comma), "--generate N", 1);
      result.generator.resources =
          read_value.integer<long long>(generate->substr(comma + 1), "--generate M", 1);
      if (result.generator.jobs > std::numeric_limits<std::int32_t>::max() ||
          result.generator.resources > std::numeric_limits<std::int32_t>::max())
        usage_error("--generate: N and M must be below 2^31");
    }
  }
  if (const std::string* family = value_of("family")) {
    if (!result.generate) usage_error("--family only applies to --generate");
    try {
      result.generator.family = parse_family(*family);
      result.family_text = *family;
      // Without --generate: the default size, on gavel's three GPU types.
      if (generate == nullptr && result.generator.family.family == "gavel")
        result.generator.resources = 3;
      family_resource_names(result.generator.family, result.generator.resources);
    } catch (const std::invalid_argument& e) {
      usage_error(std::string("--family: ") + e.what());
    }
  }
  if (const std::string* seed = value_of("seed")) {
    if (!result.generate && given.count("pop") == 0)
      usage_error("--seed only applies to --generate and --pop");
    result.generator.seed = read_value.integer<std::uint64_t>(*seed, "--seed", 0);
    result.pop_seed = result.generator.seed;
  }
  if (const std::string* prefix = value_of("write-instance")) {
    if (prefix->empty()) usage_error("--write-instance needs a non-empty PREFIX");
    result.write_instance_prefix = *prefix;
  }
  if (const std::string* utility = value_of("utility")) result.utility = parse_utility(*utility);
  if (const std::string* tolerance = value_of("tolerance")) {
    result.options.relative_gap =
        read_value.number(*tolerance, "--tolerance", popalloc_cli::above(0.0));
    if (!(result.options.relative_gap < 0.1)) usage_error("--tolerance must be in (0, 0.1)");
  }
  if (const std::string* gap = value_of("gap")) result.options.gap = parse_gap_measure(*gap);
  if (const std::string* iterations = value_of("max-iterations"))
    result.options.max_iterations = read_value.integer(*iterations, "--max-iterations", 1);
  if (const std::string* limit = value_of("time-limit"))
    result.options.time_limit_seconds =
        read_value.number(*limit, "--time-limit", popalloc_cli::above(0.0));
  if (const std::string* threads = value_of("threads"))
    result.options.threads = read_value.integer(*threads, "--threads", 0);
  if (const std::string* backend = value_of("backend")) {
    if (*backend == "thrust") {
      if (!POPALLOC_SOLVE_WITH_THRUST)
        throw input_error(
            "--backend thrust: this build has no Thrust backend; rebuild with "
            "-DPOPALLOC_ENABLE_THRUST=ON");
      result.backend = backend_kind::thrust;
    } else if (*backend != "cpu") {
      usage_error("unknown backend '" + *backend + "' (cpu or thrust)");
    }
  }
  if (const std::string* pop = value_of("pop")) {
    result.pop_parts = read_value.integer(*pop, "--pop", 1);
    if (result.generate && result.pop_parts > result.generator.jobs)
      usage_error("--pop " + *pop + " asks for more parts than the " +
                  std::to_string(result.generator.jobs) + " jobs");
  }
  for (const char* name : {"warm-start", "output", "allocation"})
    if (const std::string* path = value_of(name); path != nullptr && path->empty())
      usage_error(std::string("--") + name + " needs a file name");
  if (const std::string* path = value_of("warm-start")) result.warm_start_path = *path;
  if (const std::string* path = value_of("output")) result.output_path = *path;
  if (const std::string* path = value_of("allocation")) result.allocation_path = *path;
  if (!result.output_path.empty() && result.output_path == result.allocation_path &&
      result.output_path != "-")
    usage_error("--output and --allocation name the same file");
  result.verbosity = popalloc_cli::verbosity_of(given);
  if (given.count("no-sample-start") != 0) result.options.sample_start = false;
  result.benchmark_read = given.count("benchmark-read") != 0;
  if (result.benchmark_read && result.generate)
    usage_error("--benchmark-read needs --jobs and --resources");
  return result;
}

/// --version; `ranks` > 0 under MPI.
std::string version_text(int ranks) {
  std::string backends;
  if (POPALLOC_SOLVE_WITH_THRUST) backends = "thrust";
  if (POPALLOC_SOLVE_WITH_MPI) {
    backends += backends.empty() ? "mpi" : ", mpi";
    if (ranks > 0) backends += " (" + std::to_string(ranks) + " ranks)";
  }
  return popalloc_cli::version_text("popalloc-solve", backends, "");
}

/// RESULT.json's opening members; a generated instance is named by its --generate size, family
/// and seed.
std::string envelope_of(const settings& config, int argc, char** argv) {
  popalloc_cli::run_record run("popalloc-solve", argc, argv);
  if (config.generate) {
    const generator_settings& g = config.generator;
    run.input("instance", "<generated " + std::to_string(g.jobs) + " x " +
                              std::to_string(g.resources) + ", family " + config.family_text +
                              ", seed " + std::to_string(g.seed) + ">");
  } else {
    run.input("jobs", config.jobs_path);
    run.input("resources", config.resources_path);
  }
  if (!config.warm_start_path.empty()) run.input("warm_start", config.warm_start_path);
  std::string out;
  popalloc_cli::append_envelope(out, run);
  return out;
}

// ---- Solve ---------------------------------------------------------------------------------

/// Set by SIGINT; the progress callback then asks the solver to stop.
volatile std::sig_atomic_t interrupt_requested = 0;

extern "C" void on_interrupt(int /*signal*/) {
  if (interrupt_requested != 0) {  // a second Ctrl-C: the user does not want to wait
    popalloc::io::remove_temporary_files();
    std::signal(SIGINT, SIG_DFL);
    std::raise(SIGINT);
  }
  interrupt_requested = 1;
}

/// The paths a run reads and writes, for the check that no output overwrites an input or
/// another output.
std::vector<popalloc::io::named_path> output_paths_of(const settings& config,
                                                      const std::string& allocation_path,
                                                      const std::string& prefix) {
  std::vector<popalloc::io::named_path> outputs = {{"--output", config.output_path},
                                                   {"--allocation", allocation_path}};
  if (!prefix.empty()) {
    outputs.push_back({"--write-instance", prefix + ".jobs.csv"});
    outputs.push_back({"--write-instance", prefix + ".resources.csv"});
  }
  return outputs;
}

/// Prints progress to stderr, but only for solves that take long enough for a user to wonder.
class progress_reporter {
 public:
  explicit progress_reporter(popalloc_cli::verbosity level)
      : enabled_(level != popalloc_cli::verbosity::quiet),
        interval_(level == popalloc_cli::verbosity::verbose ? 0.0 : kReportInterval),
        next_report_seconds_(
            level == popalloc_cli::verbosity::verbose ? 0.0 : popalloc_cli::kProgressFirstSeconds) {
  }

  popalloc::callback_action operator()(const popalloc::progress& info) {
    if (interrupt_requested != 0) return popalloc::callback_action::stop;
    if (enabled_ && info.elapsed_seconds >= next_report_seconds_) {
      // A NaN gap (no finite bound yet) printed with its sign reads "-nan".
      std::fprintf(stderr, "  iteration %5d  relative gap %10.3e  elapsed %7.1f s\n",
                   info.iteration,
                   std::isnan(info.relative_gap) ? std::numeric_limits<double>::quiet_NaN()
                                                 : info.relative_gap,
                   info.elapsed_seconds);
      next_report_seconds_ = info.elapsed_seconds + interval_;
    }
    return popalloc::callback_action::proceed;
  }

 private:
  static constexpr double kReportInterval = 0.5;
  bool enabled_;
  double interval_;
  double next_report_seconds_;
};

template <class Utility>
popalloc::solve_result solve_on(backend_kind backend,
                                const popalloc::dense_problem<double>& problem,
                                const Utility& utility, const popalloc::solver_options& options,
                                const popalloc::progress_callback& callback) {
#if POPALLOC_SOLVE_WITH_THRUST
  if (backend == backend_kind::thrust)
    return popalloc::solve<popalloc::backend::thrust>(problem, utility, options, callback);
#else
  (void)backend;  // interpret() rejects --backend thrust in this build
#endif
  return popalloc::solve<popalloc::backend::cpu>(problem, utility, options, callback);
}

/// POP with K parts (K > 1): shuffled random partition, capacity / K per part.
template <class Utility>
popalloc::pop::pop_solve_result pop_solve_on(backend_kind backend,
                                             const popalloc::dense_problem<double>& problem,
                                             const Utility& utility,
                                             const popalloc::pop::pop_options& options) {
#if POPALLOC_SOLVE_WITH_THRUST
  if (backend == backend_kind::thrust)
    return popalloc::pop::pop_solve<popalloc::backend::thrust>(problem, utility, options);
#else
  (void)backend;  // interpret() rejects --backend thrust in this build
#endif
  return popalloc::pop::pop_solve<popalloc::backend::cpu>(problem, utility, options);
}

int exit_status_for(popalloc::solve_status status) {
  switch (status) {
    case popalloc::solve_status::converged:
    case popalloc::solve_status::iteration_limit:
    case popalloc::solve_status::time_limit:
    case popalloc::solve_status::stalled:  // a feasible allocation with a valid bound: usable
    case popalloc::solve_status::parts_converged:
      return 0;
    case popalloc::solve_status::interrupted:
      return 130;  // the shell convention for "stopped by SIGINT"
    default:
      return 1;
  }
}

/// Test hook (tests/cli/run_cli_tests.sh), deliberately not an option: raises the signal named
/// by POPALLOC_SOLVE_TEST_SIGNAL (INT or TERM) once both outputs are written to their temporary
/// files and before they are renamed, the moment a signal is most likely to arrive in a large run.
void raise_test_signal() {
  const char* name = std::getenv("POPALLOC_SOLVE_TEST_SIGNAL");
  if (name == nullptr || *name == '\0') return;
  const std::string_view text = name;
  if (text == "INT") std::raise(SIGINT);
  if (text == "TERM") std::raise(SIGTERM);
}

/// RESULT.json and ALLOCATION.csv: both written to temporary files, then renamed one after the
/// other with signals blocked, so the pair on disk is always from the same run.
void write_outputs(const settings& config, const instance& data,
                   const popalloc::solve_result& result, const run_summary& summary) {
  std::unique_ptr<atomic_output_file> json_file, allocation_file;
  if (!config.output_path.empty()) {
    json_file = std::make_unique<atomic_output_file>(config.output_path);
    fill_result_json(*json_file, data, result, summary);
  }
  if (!config.allocation_path.empty()) {
    allocation_file = std::make_unique<atomic_output_file>(config.allocation_path);
    fill_allocation_csv(*allocation_file, data, result);
  }
  raise_test_signal();
  atomic_output_file::commit_together({json_file.get(), allocation_file.get()});
}

int benchmark_read(const settings& config) {
  const auto start = std::chrono::steady_clock::now();
  const instance data =
      read_instance(config.jobs_path, config.resources_path, requirements_of(config.utility));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double megabytes = static_cast<double>(read_whole_file(config.jobs_path).size() +
                                               read_whole_file(config.resources_path).size()) /
                           1e6;
  std::printf("read %lld jobs x %lld resources (%.1f MB) in %.3f s: %.0f MB/s\n",
              static_cast<long long>(data.problem.jobs()),
              static_cast<long long>(data.problem.resources()), megabytes, seconds,
              megabytes / seconds);
  return 0;
}

int run(int argc, char** argv) {
  const auto given = parse_arguments(argc, argv);
  if (given.count("help") != 0) {
    print_usage();
    return 0;
  }
  if (given.count("version") != 0) {
    std::fputs(version_text(0).c_str(), stdout);
    return 0;
  }
  if (given.count("mpi-timeout") != 0 || given.count("mpi-sums") != 0)
    usage_error("--mpi-timeout and --mpi-sums only apply to runs under mpirun");
  settings config = interpret(given);
  if (config.benchmark_read) return benchmark_read(config);
  // Before any work: no output may be an input or another output, or unwritable.
  popalloc::io::check_output_files(
      output_paths_of(config, config.allocation_path, config.write_instance_prefix),
      {{"--jobs", config.jobs_path},
       {"--resources", config.resources_path},
       {"--warm-start", config.warm_start_path}});

  // Everything that can be wrong with the input is found before any output file is touched.
  const instance data = config.generate ? generate_instance(config.generator)
                                        : read_instance(config.jobs_path, config.resources_path,
                                                        requirements_of(config.utility));
  if (config.pop_parts > data.problem.jobs())
    usage_error("--pop " + std::to_string(config.pop_parts) + " asks for more parts than the " +
                std::to_string(data.problem.jobs()) + " jobs");
  if (!config.warm_start_path.empty())
    config.options.warm_start_prices =
        read_warm_start_prices(config.warm_start_path, data.resource_names);
  config.options.validate();
  std::visit([&](const auto& utility) { data.problem.validate(utility); }, config.utility.utility);
  // Again after the reading, which can take long enough for the file system to change.
  for (const auto& output :
       output_paths_of(config, config.allocation_path, config.write_instance_prefix))
    if (!output.path.empty()) check_output_path(output.path);

  if (!config.write_instance_prefix.empty()) write_instance(data, config.write_instance_prefix);

  progress_reporter reporter(config.verbosity);
  const popalloc::progress_callback callback = std::ref(reporter);
  const auto previous_handler = std::signal(SIGINT, on_interrupt);
  const auto start = std::chrono::steady_clock::now();
  popalloc::solve_result result;
  popalloc::pop::pop_timings pop_timings;
  if (config.pop_parts > 1) {
    // Parts run concurrently, so they share no progress printer (its state is not thread-safe);
    // they only poll the Ctrl-C flag, and an interrupted part makes the whole result interrupted.
    popalloc::pop::pop_options pop;
    pop.parts = config.pop_parts;
    pop.strategy = popalloc::pop::partition_strategy::shuffled;
    pop.seed = config.pop_seed;
    pop.solver = config.options;
    pop.threads = config.options.threads;
    pop.callback = [](const popalloc::progress&) {
      return interrupt_requested != 0 ? popalloc::callback_action::stop
                                      : popalloc::callback_action::proceed;
    };
    result = std::visit(
        [&](const auto& utility) {
          auto solved = pop_solve_on(config.backend, data.problem, utility, pop);
          pop_timings = solved.timings;
          return std::move(solved.result);
        },
        config.utility.utility);
  } else {
    result = std::visit(
        [&](const auto& utility) {
          return solve_on(config.backend, data.problem, utility, config.options, callback);
        },
        config.utility.utility);
  }
  run_summary summary;
  summary.solve_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.utility_name = config.utility.name;
  summary.pop_parts = config.pop_parts;
  summary.pop_parts_seconds_sum = pop_timings.parts_seconds_sum;
  summary.pop_parts_seconds_max = pop_timings.parts_seconds_max;
  summary.pop_bound_seconds = pop_timings.bound_seconds;
  summary.envelope = envelope_of(config, argc, argv);

  if (config.verbosity != popalloc_cli::verbosity::quiet) {
    std::printf("%s\n", summary_line(result, summary).c_str());
    std::fflush(stdout);
  }
  int status = exit_status_for(result.status);
  if (status == 1) {
    std::signal(SIGINT, previous_handler == SIG_ERR ? SIG_DFL : previous_handler);
    std::fprintf(stderr, "popalloc-solve: the solve ended with status %s; no output written\n",
                 popalloc::to_string(result.status));
    return status;
  }
  // The Ctrl-C handler stays through the write phase: a Ctrl-C there still gets both outputs
  // (exit 130), a second one removes the temporary files before it ends the process.
  write_outputs(config, data, result, summary);
  std::signal(SIGINT, previous_handler == SIG_ERR ? SIG_DFL : previous_handler);
  if (interrupt_requested != 0) status = 130;
  return status;
}

// ---- MPI: mpirun -np R popalloc-solve ... (docs/mpi.md) ---------------------------------------

/// Ranks and size from the launcher's environment: set by OpenMPI's mpirun (OMPI_*), MPICH and
/// Intel MPI (PMI_*), PMIx launchers such as srun --mpi=pmix (PMIX_RANK) and MVAPICH (MV2_*).
/// Without any of them popalloc-solve runs as one process and never initialises MPI.
int launcher_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "MV2_COMM_WORLD_SIZE"}) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return std::max(1, std::atoi(value));
  }
  return std::getenv("PMIX_RANK") != nullptr ? 1 : 0;  // a PMIx launch of unknown size
}

#if POPALLOC_SOLVE_WITH_MPI

/// PATH with every "{rank}" replaced by the rank.
std::string for_rank(std::string path, int rank) {
  const std::string key = "{rank}", value = std::to_string(rank);
  for (std::size_t at = path.find(key); at != std::string::npos; at = path.find(key, at))
    path.replace(at, key.size(), value), at += value.size();
  return path;
}
bool per_rank(const std::string& path) { return path.find("{rank}") != std::string::npos; }

/// Jobs [begin, end) of `data`, the rest dropped.
void keep_jobs(instance& data, std::int64_t begin, std::int64_t end) {
  auto& p = data.problem;
  const Eigen::Index b = begin, count = end - begin;
  p.throughput = popalloc::dense_problem<double>::matrix(p.throughput.middleRows(b, count));
  if (p.weight.size() != 0)
    p.weight = popalloc::dense_problem<double>::vector(p.weight.segment(b, count));
  if (p.target.size() != 0)
    p.target = popalloc::dense_problem<double>::vector(p.target.segment(b, count));
  if (p.job_demand.size() != 0)
    p.job_demand = popalloc::dense_problem<double>::vector(p.job_demand.segment(b, count));
  if (p.demand.size() != 0)
    p.demand = popalloc::dense_problem<double>::matrix(p.demand.middleRows(b, count));
  data.job_ids = std::vector<std::string>(data.job_ids.begin() + begin, data.job_ids.begin() + end);
}

/// The largest error code over the ranks (0: every rank is fine). Blocking: all ranks are alive
/// here (a dead one makes mpirun end the job).
int agree(int code) {
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return worst;
}

/// After the solver's backend_error the ranks cannot continue together: every rank has printed
/// its error; wait briefly (a barrier with a deadline: a rank may be dead) so the others can do
/// the same, then end the job.
[[noreturn]] void abort_job(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  while (done == 0 && std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  MPI_Abort(MPI_COMM_WORLD, code);
  std::exit(code);
}

/// This rank's allocation rows (CSV, no header).
std::string allocation_rows(const instance& data, const popalloc::solve_result& result) {
  std::string out;
  const popalloc::allocation& x = result.allocation;
  for (std::size_t i = 0; i < x.jobs(); ++i) {
    for (std::int64_t k = x.job_offset[i]; k < x.job_offset[i + 1]; ++k) {
      const auto entry = static_cast<std::size_t>(k);
      if (!(x.fraction[entry] > 0.0)) continue;
      append_csv_field(out, data.job_ids[i]);
      out += ',';
      append_csv_field(out, data.resource_names[static_cast<std::size_t>(x.option[entry])]);
      out += ',';
      append_number(out, x.fraction[entry]);
      out += '\n';
    }
  }
  return out;
}

/// Rank 0 opens `file` at `path` and writes the header and every rank's rows to it in rank
/// order (received one rank at a time, in pieces of at most 1 GiB); the caller commits it.
/// Returns 0 or an exit code (then `file` is empty).
int gather_allocation(const std::string& path, const instance& data,
                      const popalloc::solve_result& result, int rank, int ranks,
                      std::unique_ptr<atomic_output_file>& file) {
  constexpr std::int64_t kPiece = std::int64_t{1} << 30;
  const std::string rows = allocation_rows(data, result);
  if (rank != 0) {
    const auto size = static_cast<std::int64_t>(rows.size());
    MPI_Send(&size, 1, MPI_INT64_T, 0, 1, MPI_COMM_WORLD);
    for (std::int64_t at = 0; at < size; at += kPiece)
      MPI_Send(rows.data() + at, static_cast<int>(std::min(kPiece, size - at)), MPI_CHAR, 0, 2,
               MPI_COMM_WORLD);
    return 0;
  }
  int code = 0;
  try {
    file = std::make_unique<atomic_output_file>(path);
    file->buffer() += "id,resource,fraction\n";
    file->buffer() += rows;
    file->flush_if_large();
  } catch (const input_error& e) {
    std::fprintf(stderr, "popalloc-solve: %s\n", e.what());
    code = 2;
    file.reset();
  }
  std::string piece;
  for (int r = 1; r < ranks; ++r) {  // receive everything even after an error: ranks are waiting
    std::int64_t size = 0;
    MPI_Recv(&size, 1, MPI_INT64_T, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (std::int64_t at = 0; at < size; at += kPiece) {
      piece.resize(static_cast<std::size_t>(std::min(kPiece, size - at)));
      MPI_Recv(&piece[0], static_cast<int>(piece.size()), MPI_CHAR, r, 2, MPI_COMM_WORLD,
               MPI_STATUS_IGNORE);
      if (file) {
        file->buffer() += piece;
        try {
          file->flush_if_large();
        } catch (const input_error& e) {
          std::fprintf(stderr, "popalloc-solve: %s\n", e.what());
          code = 2;
          file.reset();
        }
      }
    }
  }
  return code;
}

/// Test hook (tests/mpi/run_cli_mpi.sh), deliberately not an option: the rank named by
/// POPALLOC_SOLVE_TEST_FAIL_WRITE fails to prepare its outputs, as a full disk would.
bool test_write_failure(int rank) {
  const char* value = std::getenv("POPALLOC_SOLVE_TEST_FAIL_WRITE");
  return value != nullptr && *value != '\0' && std::to_string(rank) == value;
}

/// Every rank writes its outputs (rank 0: RESULT.json and a gathered allocation; a per-rank
/// allocation on each rank) to temporary files; they are renamed only once every rank has
/// written its own, so a failure on any rank leaves every old output in place. Returns 0 or the
/// worst exit code of all ranks.
int write_rank_outputs(const settings& config, const std::string& allocation_path,
                       const instance& data, const popalloc::solve_result& result,
                       const run_summary& summary, int rank, int ranks) {
  std::unique_ptr<atomic_output_file> json_file, allocation_file;
  int code = 0;
  try {
    if (test_write_failure(rank)) throw input_error("cannot write the outputs (test failure)");
    if (rank == 0 && !config.output_path.empty()) {
      json_file = std::make_unique<atomic_output_file>(config.output_path);
      fill_result_json(*json_file, data, result, summary);
    }
    if (per_rank(config.allocation_path)) {
      allocation_file = std::make_unique<atomic_output_file>(allocation_path);
      fill_allocation_csv(*allocation_file, data, result);
    }
  } catch (const input_error& e) {
    std::fprintf(stderr, "popalloc-solve: rank %d: %s\n", rank, e.what());
    code = 2;
  }
  if (!config.allocation_path.empty() && !per_rank(config.allocation_path))
    code = std::max(code,
                    gather_allocation(allocation_path, data, result, rank, ranks, allocation_file));
  if (const int worst = agree(code); worst != 0) return worst;  // the temporaries go
  try {
    atomic_output_file::commit_together({json_file.get(), allocation_file.get()});
  } catch (const input_error& e) {
    std::fprintf(stderr, "popalloc-solve: rank %d: %s\n", rank, e.what());
    code = 2;
  }
  return agree(code);
}

/// One rank of `mpirun -np R popalloc-solve ...`. Input problems are found on each rank and
/// agreed on (exit 2 everywhere, each failing rank saying why); solver errors end the job.
int run_rank(int argc, char** argv, int rank, int ranks) {
  settings config;
  instance data;
  std::string allocation_path;
  popalloc::backend::mpi where{MPI_COMM_WORLD};
  bool quit = false;  // --help / --version: rank 0 prints, every rank exits 0
  int code = 0;
  try {
    const auto given = parse_arguments(argc, argv);
    if (given.count("help") != 0 || given.count("version") != 0) {
      quit = true;
      if (rank == 0) {
        if (given.count("help") != 0) {
          print_usage();
        } else {
          std::fputs(version_text(ranks).c_str(), stdout);
        }
      }
    } else {
      if (const auto timeout = given.find("mpi-timeout"); timeout != given.end())
        where.timeout_seconds =
            read_value.number(timeout->second, "--mpi-timeout", popalloc_cli::above(0.0));
      if (const auto sums = given.find("mpi-sums"); sums != given.end()) {
        if (sums->second == "exact") {
          where.sums = popalloc::backend::mpi_sums::exact;
        } else if (sums->second != "cpu") {
          usage_error("--mpi-sums must be cpu or exact, got '" + sums->second + "'");
        }
      }
      config = interpret(given);
      if (config.pop_parts > 1) usage_error("--pop is not available under MPI");
      if (config.backend != backend_kind::cpu)
        usage_error("--backend thrust is not available under MPI");
      if (config.benchmark_read) usage_error("--benchmark-read is not available under MPI");
      if (!config.write_instance_prefix.empty() && ranks > 1 &&
          !per_rank(config.write_instance_prefix))
        usage_error(
            "--write-instance under MPI needs {rank} in PREFIX (one instance file per rank)");
      allocation_path = for_rank(config.allocation_path, rank);
      if (config.generate) {
        const std::int64_t n = config.generator.jobs;
        const std::int64_t begin = n * rank / ranks, end = n * (rank + 1) / ranks;
        data = generate_instance(config.generator, begin, end - begin);
      } else {
        data =
            read_instance(for_rank(config.jobs_path, rank), for_rank(config.resources_path, rank),
                          requirements_of(config.utility));
        if (!per_rank(config.jobs_path) && ranks > 1) {  // one file for all: keep this rank's share
          const std::int64_t n = data.problem.jobs();
          keep_jobs(data, n * rank / ranks, n * (rank + 1) / ranks);
        }
      }
      if (!config.warm_start_path.empty())
        config.options.warm_start_prices =
            read_warm_start_prices(config.warm_start_path, data.resource_names);
      std::vector<popalloc::io::named_path> outputs;
      if (rank == 0) outputs.push_back({"--output", config.output_path});
      if (rank == 0 || per_rank(config.allocation_path))
        outputs.push_back({"--allocation", allocation_path});
      if (!config.write_instance_prefix.empty()) {
        const std::string prefix = for_rank(config.write_instance_prefix, rank);
        outputs.push_back({"--write-instance", prefix + ".jobs.csv"});
        outputs.push_back({"--write-instance", prefix + ".resources.csv"});
      }
      popalloc::io::check_output_files(outputs,
                                       {{"--jobs", for_rank(config.jobs_path, rank)},
                                        {"--resources", for_rank(config.resources_path, rank)},
                                        {"--warm-start", config.warm_start_path}});
      if (!config.write_instance_prefix.empty())
        write_instance(data, for_rank(config.write_instance_prefix, rank));
    }
  } catch (const input_error& e) {
    std::fprintf(stderr, "popalloc-solve: rank %d: %s\n", rank, e.what());
    code = 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "popalloc-solve: rank %d: out of memory\n", rank);
    code = 1;
  }
  if (const int worst = agree(code); worst != 0 || quit) {
    if (worst != 0 && code == 0 && rank == 0)
      std::fprintf(stderr, "popalloc-solve: rank 0: stopping, another rank reported an error\n");
    return worst;
  }

  progress_reporter reporter(rank == 0 ? config.verbosity : popalloc_cli::verbosity::quiet);
  const popalloc::progress_callback callback = std::ref(reporter);
  const auto previous_handler = std::signal(SIGINT, on_interrupt);
  const auto start = std::chrono::steady_clock::now();
  popalloc::solve_result result;
  try {
    result = std::visit(
        [&](const auto& utility) {
          return popalloc::solve(where, data.problem, utility, config.options, callback);
        },
        config.utility.utility);
  } catch (const popalloc::invalid_problem& e) {  // agreed: thrown on every rank alike
    if (rank == 0) std::fprintf(stderr, "popalloc-solve: invalid problem: %s\n", e.what());
    return 2;
  } catch (const popalloc::invalid_options& e) {
    if (rank == 0) std::fprintf(stderr, "popalloc-solve: invalid option: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {  // the ranks cannot go on together
    std::fprintf(stderr, "popalloc-solve: rank %d: error: %s\n", rank, e.what());
    abort_job(1);
  }
  std::signal(SIGINT, previous_handler == SIG_ERR ? SIG_DFL : previous_handler);
  run_summary summary;
  summary.solve_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.utility_name = config.utility.name;
  std::int64_t local_jobs = data.problem.jobs();
  MPI_Allreduce(&local_jobs, &summary.n_jobs, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  summary.mpi_ranks = ranks;
  summary.envelope = envelope_of(config, argc, argv);

  if (config.verbosity != popalloc_cli::verbosity::quiet && rank == 0) {
    std::printf("%s  ranks %d\n", summary_line(result, summary).c_str(), ranks);
    std::fflush(stdout);
  }
  // The status is the collective solve's, the same on every rank.
  const int status = exit_status_for(result.status);
  if (status == 1) {  // as in one process: a failed solve writes nothing
    if (rank == 0)
      std::fprintf(stderr, "popalloc-solve: the solve ended with status %s; no output written\n",
                   popalloc::to_string(result.status));
    return status;
  }
  if (const int worst =
          write_rank_outputs(config, allocation_path, data, result, summary, rank, ranks);
      worst != 0)
    return worst;
  return status;
}

int run_mpi(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  int status = 1;
  try {
    status = run_rank(argc, argv, rank, ranks);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "popalloc-solve: rank %d: internal error: %s\n", rank, e.what());
    abort_job(1);
  }
  MPI_Finalize();
  return status;
}

#else

int run_mpi(int /*argc*/, char** /*argv*/) {
  std::fprintf(stderr,
               "popalloc-solve: started by an MPI launcher with several ranks, but this build has "
               "no MPI support (configure with -DPOPALLOC_ENABLE_MPI=ON and MPI installed)\n");
  return 2;
}

#endif

}  // namespace
}  // namespace popalloc_solve

int main(int argc, char** argv) {
  // Under an MPI launcher every rank joins the distributed solve; otherwise nothing changes.
  const int world = popalloc_solve::launcher_world_size();
  if (world > 1 || (world == 1 && POPALLOC_SOLVE_WITH_MPI))
    return popalloc_solve::run_mpi(argc, argv);
  return popalloc_cli::run_program("popalloc-solve",
                                   [&] { return popalloc_solve::run(argc, argv); });
}
