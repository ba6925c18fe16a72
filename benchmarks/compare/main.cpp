// SPDX-License-Identifier: Apache-2.0
// popalloc-compare: one instance, solved by popalloc and by every LP solver this build has, on
// the identical LP, each under a time limit; prints a side-by-side table and optionally JSON.
// `popalloc-compare --help` documents the options; docs/benchmarks.md the measured figures.
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <new>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <time.h>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <popalloc/popalloc.hpp>

#if defined(POPALLOC_HAS_THRUST) && POPALLOC_HAS_THRUST && __has_include(<popalloc/backend/thrust.hpp>)
#include <popalloc/backend/thrust.hpp>
#define POPALLOC_COMPARE_WITH_THRUST 1
#else
#define POPALLOC_COMPARE_WITH_THRUST 0
#endif

// popalloc-solve's generator and CSV reader, compiled into this program (read-only reuse).
#include "../../examples/common/command_line.hpp"
#include "families.hpp"
#include "generator.hpp"
#include "instance.hpp"
#include "io.hpp"
#include "lp_model.hpp"
#include "lp_solvers.hpp"

namespace popalloc_compare {
namespace {

using popalloc_solve::input_error;
namespace json = popalloc_solve::json;

constexpr const char* kUsage = R"(Usage:
  popalloc-compare --generate N,M [--family SPEC] [--seed S] [options]
  popalloc-compare --jobs JOBS.csv --resources RESOURCES.csv [options]
  popalloc-compare              compare on a generated 2000 x 8 instance (seed 1)

Solves one instance with popalloc and with every LP solver of this build (COIN-OR CLP primal
simplex, dual simplex and barrier; GLPK primal simplex, dual simplex and interior point; Gurobi
and MOSEK when they were found at build time), all on the identical LP, each with a time limit,
and prints solver, status, seconds, objective, relative difference to the best objective and
popalloc's speed-up. Instance options and file formats are those of popalloc-solve.

Input:
  --generate N,M           popalloc-solve's generator: N jobs on M resources
  --family SPEC            its instance family (default generations; alone: 2000 x 8, x 3 for
                           gavel): NAME[:tight|:loose][:reachable|:far], NAME one of
                           generations, uniform, classes, gavel, paper, sparse
                           (docs/instance-families.md)
  --seed S                 generator seed (default 1)
  --jobs FILE, --resources FILE
                           popalloc-solve's CSV formats (see popalloc-solve --help)
  --target-scale F         multiply every job's target by F > 0 (default 1). At F = 1 every
                           target of the generated instances is reachable (target-priority
                           optimum 0); the documented benchmarks use F = 3 for contention
  --write-instance PREFIX  also write PREFIX.jobs.csv and PREFIX.resources.csv (after
                           --target-scale, so popalloc-solve can read the identical instance)

Comparison:
  --utility U              target-priority (default) | linear: an LP, every solver runs;
                           log | power:ALPHA: not an LP, only popalloc runs here (the conic
                           solvers are driven by benchmarks/python/compare_conic.py)
  --solvers LIST           comma-separated subset of: popalloc, popalloc-1thread,
                           popalloc-thrust, clp-primal, clp-dual, clp-barrier, glpk-primal,
                           glpk-dual, glpk-interior, gurobi, mosek (default: all)
  --time-limit SECONDS     per solver (default 600); an LP solver still running 5 s (or 5%)
                           after it is killed and reported as killed_at_limit
  --stop-early NAME=S,...  stop these solvers after S seconds instead (S < --time-limit):
                           for solvers whose scaling shows they cannot finish within the
                           limit; reported as stopped at S, and as such in the JSON
  --tolerance TOL          popalloc's relative duality gap (default 1e-7)
  --agreement TOL          finished solvers must agree to TOL relative (default: the larger of
                           1e-6 and --tolerance)
  --threads N              popalloc's threads (default 0: the OpenMP default)
  --repeat K               time popalloc K times and report the fastest (default 3)

Output:
  --json FILE              everything as JSON (written atomically), incl. popalloc's gap trace
  --quiet                  no table
  --list-solvers           the solvers of this build and their versions
  --help, --version

Relative difference = (best - objective) / max(|best|, 1), best = the largest objective among
solvers that finished. speed-up = solver wall seconds / popalloc wall seconds; cpu = solver
CPU seconds / popalloc-1thread CPU seconds (">" when the solver hit its limit). LP solvers run
single-threaded in a child process under a CPU-time limit (RLIMIT_CPU), so the limit means the
same work on a loaded machine; popalloc's limit is wall-clock. Every objective is recomputed from the solver's own x with popalloc's utility.

Exit status: 0 all finished solvers agree, 3 they disagree beyond --agreement (or a solution
is infeasible beyond it, or popalloc's dual bound lies below an LP optimum), 2 usage or input
error, 1 internal error.
)";

// ---- Command line -------------------------------------------------------------------------

using popalloc_cli::option_spec;

constexpr option_spec kOptions[] = {
    {"jobs", true},      {"resources", true},     {"generate", true},       {"seed", true},
    {"family", true},    {"utility", true},       {"solvers", true},        {"time-limit", true},
    {"tolerance", true}, {"agreement", true},     {"threads", true},        {"stop-early", true},
    {"repeat", true},    {"json", true},          {"write-instance", true}, {"target-scale", true},
    {"quiet", false},    {"list-solvers", false}, {"help", false},          {"version", false},
};

[[noreturn]] void usage_error(const std::string& what) {
  throw input_error(what + " (see popalloc-compare --help)");
}

std::map<std::string, std::string, std::less<>> parse_arguments(int argc, char** argv) {
  return popalloc_cli::parse_arguments(argc, argv, kOptions, usage_error);
}

const popalloc_cli::value_reader read_value{usage_error};

using utility_variant = std::variant<popalloc::utility::linear, popalloc::utility::log,
                                     popalloc::utility::power, popalloc::utility::target_priority>;

struct chosen_utility {
  utility_variant utility{popalloc::utility::target_priority{}};
  std::string name = "target-priority";
  bool is_lp = true;
  lp_kind kind = lp_kind::target_priority;
};

chosen_utility parse_utility(const std::string& spec) {
  chosen_utility c;
  c.name = spec;
  if (spec == "target-priority" || spec == "target_priority") {
    c.name = "target-priority";
  } else if (spec == "linear") {
    c.utility = popalloc::utility::linear{};
    c.kind = lp_kind::linear;
  } else if (spec == "log") {
    c.utility = popalloc::utility::log{};
    c.is_lp = false;
  } else if (spec.rfind("power:", 0) == 0) {
    const std::string_view text = std::string_view(spec).substr(6);
    double alpha = 0.0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), alpha);
    if (error != std::errc() || end != text.data() + text.size() || text.empty() ||
        !(alpha > 0.0 && alpha < 1.0))
      usage_error("--utility power:ALPHA needs 0 < ALPHA < 1, got '" + std::string(text) + "'");
    c.utility = popalloc::utility::power(alpha);
    c.is_lp = false;
  } else {
    usage_error("unknown utility '" + spec + "' (target-priority, linear, log or power:ALPHA)");
  }
  return c;
}

popalloc_solve::data_requirements requirements_of(const chosen_utility& chosen) {
  return std::visit(
      [&](const auto& utility) {
        using utility_type = std::decay_t<decltype(utility)>;
        return popalloc_solve::data_requirements{chosen.name.c_str(), utility_type::uses_target,
                                                 utility_type::requires_positive_weight,
                                                 utility_type::requires_positive_throughput};
      },
      chosen.utility);
}

const std::vector<std::string>& popalloc_solver_names() {
  static const std::vector<std::string> names = {"popalloc", "popalloc-1thread", "popalloc-thrust"};
  return names;
}

std::vector<std::string> known_solver_names() {
  std::vector<std::string> names = popalloc_solver_names();
  for (const char* name : {"clp-primal", "clp-dual", "clp-barrier", "glpk-primal", "glpk-dual",
                           "glpk-interior", "gurobi", "mosek"})
    names.emplace_back(name);
  return names;
}

struct settings {
  std::string jobs_path, resources_path, write_prefix, json_path;
  bool generate = true;
  popalloc_solve::generator_settings generator;
  chosen_utility utility;
  std::vector<std::string> solvers;  ///< requested, in display order
  double time_limit = 600.0;
  double tolerance = 1e-7;
  double agreement = 1e-6;
  int threads = 0;
  int repeat = 3;
  double target_scale = 1.0;
  std::map<std::string, double> stop_early;  ///< solver -> seconds (< time_limit)
  bool quiet = false;
};

settings interpret(const std::map<std::string, std::string, std::less<>>& given) {
  auto value_of = [&](const char* name) -> const std::string* {
    const auto found = given.find(name);
    return found == given.end() ? nullptr : &found->second;
  };
  settings s;
  s.generator.jobs = 2000;
  s.generator.resources = 8;
  const std::string* jobs = value_of("jobs");
  const std::string* resources = value_of("resources");
  const std::string* generate = value_of("generate");
  if (generate != nullptr && (jobs != nullptr || resources != nullptr))
    usage_error("--generate cannot be combined with --jobs/--resources");
  if ((jobs == nullptr) != (resources == nullptr))
    usage_error("--jobs and --resources must be given together");
  if (jobs != nullptr) {
    s.generate = false;
    s.jobs_path = *jobs;
    s.resources_path = *resources;
  } else if (generate != nullptr) {
    const std::size_t comma = generate->find(',');
    if (comma == std::string::npos) usage_error("--generate expects N,M (jobs,resources)");
    s.generator.jobs = read_value.integer<long long>(generate->substr(0, comma), "--generate N", 1);
    s.generator.resources =
        read_value.integer<long long>(generate->substr(comma + 1), "--generate M", 1);
    if (s.generator.jobs > std::numeric_limits<std::int32_t>::max() ||
        s.generator.resources > std::numeric_limits<std::int32_t>::max())
      usage_error("--generate: N and M must be below 2^31");
  }
  if (const std::string* family = value_of("family")) {
    if (!s.generate) usage_error("--family only applies to --generate");
    try {
      s.generator.family = popalloc_solve::parse_family(*family);
      if (generate == nullptr && s.generator.family.family == "gavel") s.generator.resources = 3;
      popalloc_solve::family_resource_names(s.generator.family, s.generator.resources);
    } catch (const std::invalid_argument& e) {
      usage_error(std::string("--family: ") + e.what());
    }
  }
  if (const std::string* seed = value_of("seed")) {
    if (!s.generate) usage_error("--seed only applies to --generate");
    s.generator.seed = read_value.integer<std::uint64_t>(*seed, "--seed", 0);
  }
  if (const std::string* prefix = value_of("write-instance")) {
    if (prefix->empty()) usage_error("--write-instance needs a non-empty PREFIX");
    s.write_prefix = *prefix;
  }
  if (const std::string* u = value_of("utility")) s.utility = parse_utility(*u);
  const std::vector<std::string> known = known_solver_names();
  if (const std::string* list = value_of("solvers")) {
    std::stringstream stream(*list);
    std::string name;
    std::vector<std::string> wanted;
    while (std::getline(stream, name, ',')) {
      if (std::find(known.begin(), known.end(), name) == known.end())
        usage_error("--solvers: unknown solver '" + name + "'");
      if (std::find(wanted.begin(), wanted.end(), name) != wanted.end())
        usage_error("--solvers: '" + name + "' given twice");
      wanted.push_back(name);
    }
    if (wanted.empty()) usage_error("--solvers needs at least one solver");
    for (const std::string& k : known)  // display order
      if (std::find(wanted.begin(), wanted.end(), k) != wanted.end()) s.solvers.push_back(k);
  } else {
    s.solvers = known;
  }
  if (const std::string* v = value_of("time-limit"))
    s.time_limit = read_value.number(*v, "--time-limit", popalloc_cli::above(0.0));
  if (const std::string* v = value_of("tolerance"))
    s.tolerance = read_value.number(*v, "--tolerance", popalloc_cli::above(0.0));
  // popalloc's objective is within --tolerance of the optimum (relative gap, objective measure):
  // agreement is never asked tighter than that.
  s.agreement = std::max(s.agreement, s.tolerance);
  if (const std::string* v = value_of("agreement"))
    s.agreement = read_value.number(*v, "--agreement", popalloc_cli::above(0.0));
  if (const std::string* v = value_of("threads"))
    s.threads = read_value.integer(*v, "--threads", 0);
  if (const std::string* v = value_of("repeat"))
    s.repeat = read_value.integer(*v, "--repeat", 1, 1000);
  if (const std::string* v = value_of("json")) s.json_path = *v;
  if (const std::string* list = value_of("stop-early")) {
    std::stringstream stream(*list);
    std::string item;
    while (std::getline(stream, item, ',')) {
      const std::size_t equals = item.find('=');
      if (equals == std::string::npos) usage_error("--stop-early expects NAME=SECONDS,...");
      const std::string name = item.substr(0, equals);
      if (std::find(known.begin(), known.end(), name) == known.end())
        usage_error("--stop-early: unknown solver '" + name + "'");
      s.stop_early[name] = read_value.number(item.substr(equals + 1), "--stop-early " + name,
                                             popalloc_cli::above(0.0));
    }
  }
  if (const std::string* v = value_of("target-scale"))
    s.target_scale = read_value.number(*v, "--target-scale", popalloc_cli::above(0.0));
  s.quiet = given.count("quiet") != 0;
  return s;
}

// ---- Runs -----------------------------------------------------------------------------------

struct trace_point {
  double seconds, primal, dual, gap;
};

struct row {
  std::string name, description;
  solver_outcome outcome;
  double time_limit = std::numeric_limits<double>::quiet_NaN();  ///< this solver's limit
  // popalloc only
  bool is_popalloc = false;
  double dual_bound = std::numeric_limits<double>::quiet_NaN();
  double relative_gap = std::numeric_limits<double>::quiet_NaN();
  int threads = 0;
  std::vector<trace_point> trace;
  // filled by the comparison
  double relative_difference = std::numeric_limits<double>::quiet_NaN();
  double speedup = std::numeric_limits<double>::quiet_NaN();      ///< wall, vs popalloc
  double cpu_speedup = std::numeric_limits<double>::quiet_NaN();  ///< CPU, vs 1-thread popalloc
  bool speedup_is_lower_bound = false;
};

bool finished(const row& r) {
  return r.outcome.status == run_status::optimal || r.outcome.status == run_status::converged;
}

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

void set_note(solver_outcome& out, const std::string& text) {
  std::snprintf(out.message, sizeof out.message, "%s", text.c_str());
}

template <class Backend, class Utility>
row run_popalloc(const std::string& name, const popalloc::dense_problem<double>& problem,
                 const Utility& utility, const settings& config, int threads) {
  row r;
  r.name = name;
  r.is_popalloc = true;
  r.time_limit = config.time_limit;
  popalloc::solver_options options;
  options.relative_gap = config.tolerance;
  options.time_limit_seconds = config.time_limit;
  options.max_iterations = 100000;  // the time limit and the gap decide, not an iteration cap
  options.threads = threads;
  double best = std::numeric_limits<double>::infinity(), spent = 0.0;
  std::vector<trace_point> trace;
  const popalloc::progress_callback record = [&trace](const popalloc::progress& p) {
    trace.push_back({p.elapsed_seconds, p.primal_objective, p.dual_bound, p.relative_gap});
    return popalloc::callback_action::proceed;
  };
  for (int k = 0; k < config.repeat; ++k) {
    trace.clear();
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = process_cpu_seconds();
    const popalloc::solve_result result =
        popalloc::solve<Backend>(problem, utility, options, record);
    const double cpu_seconds = process_cpu_seconds() - cpu_start;
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    spent += seconds;
    if (seconds < best) {
      best = seconds;
      auto& o = r.outcome;
      o.seconds = seconds;
      o.cpu_seconds = cpu_seconds;
      o.objective = o.reported_objective = result.primal_objective;
      o.max_violation = result.max_capacity_violation;
      o.iterations = result.iterations;
      r.dual_bound = result.dual_bound;
      r.relative_gap = result.relative_gap;
      switch (result.status) {
        case popalloc::solve_status::converged:
          o.status = run_status::converged;
          break;
        case popalloc::solve_status::time_limit:
          o.status = run_status::time_limit;
          break;
        case popalloc::solve_status::iteration_limit:
        case popalloc::solve_status::stalled:
          o.status = run_status::stopped;
          break;
        default:
          o.status = run_status::failed;
      }
      set_note(o, std::string("solver status ") + popalloc::to_string(result.status));
      r.trace = trace;
    }
    // Repeats only reduce noise on short runs; a long run is measured once or twice.
    if (spent > 20.0 || r.outcome.status == run_status::time_limit) break;
  }
  return r;
}

#if POPALLOC_OPENMP_ACTIVE
int default_threads() { return omp_get_max_threads(); }
#else
int default_threads() { return 1; }
#endif

// ---- Output ---------------------------------------------------------------------------------

struct report {
  std::string source;
  std::int64_t jobs = 0, resources = 0;
  std::int64_t lp_rows = 0, lp_columns = 0, lp_nonzeros = 0;
  double lp_build_seconds = 0.0;
  double best_objective = std::numeric_limits<double>::quiet_NaN();
  std::string best_solver;
  bool agree = true;
  std::vector<std::string> problems;
  std::vector<row> rows;
};

std::string format_seconds(const row& r, double seconds) {
  char buffer[32];
  const bool over =
      r.outcome.status == run_status::killed || r.outcome.status == run_status::time_limit;
  std::snprintf(buffer, sizeof buffer, "%s%.4g", over ? ">" : "", seconds);
  return buffer;
}

void print_table(const report& rep, const settings& config) {
  std::printf("popalloc-compare: %lld jobs x %lld resources (%s), utility %s\n",
              static_cast<long long>(rep.jobs), static_cast<long long>(rep.resources),
              rep.source.c_str(), config.utility.name.c_str());
  if (rep.lp_columns > 0)
    std::printf("LP: %lld rows, %lld columns, %lld nonzeros, built once in %.3f s\n",
                static_cast<long long>(rep.lp_rows), static_cast<long long>(rep.lp_columns),
                static_cast<long long>(rep.lp_nonzeros), rep.lp_build_seconds);
  std::printf(
      "time limit %g s per solver (CPU s for LP solvers); popalloc tolerance %g (relative gap)\n"
      "speed-up: wall time vs popalloc; cpu: CPU time vs popalloc-1thread\n\n",
      config.time_limit, config.tolerance);
  std::printf("%-17s %-16s %10s %10s %20s %9s %9s %9s  %s\n", "solver", "status", "wall s", "cpu s",
              "objective", "rel. diff", "speed-up", "cpu", "note");
  for (const row& r : rep.rows) {
    const auto& o = r.outcome;
    const bool has_value =
        finished(r) || o.status == run_status::time_limit || o.status == run_status::stopped;
    const bool ran = has_value || o.status == run_status::killed ||
                     (o.status == run_status::failed && o.seconds > 0);
    char objective[32] = "-", difference[32] = "-", speedup[32] = "-", cpu_speedup[32] = "-";
    // A stopped LP solver's last point is usually infeasible (see its violation in the note):
    // its objective means nothing, so only popalloc's stopped points (always feasible) show one.
    const bool show_value = has_value && (finished(r) || r.is_popalloc);
    if (show_value && std::isfinite(o.objective))
      std::snprintf(objective, sizeof objective, "%.12g", o.objective);
    if (show_value && std::isfinite(r.relative_difference))
      std::snprintf(difference, sizeof difference, "%.1e", r.relative_difference);
    if (std::isfinite(r.speedup))
      std::snprintf(speedup, sizeof speedup, "%s%.3gx", r.speedup_is_lower_bound ? ">" : "",
                    r.speedup);
    if (std::isfinite(r.cpu_speedup))
      std::snprintf(cpu_speedup, sizeof cpu_speedup, "%s%.3gx", r.speedup_is_lower_bound ? ">" : "",
                    r.cpu_speedup);
    std::string note = o.message;
    if (r.is_popalloc && has_value) {
      char buffer[120];
      std::snprintf(buffer, sizeof buffer, "gap %.1e, bound %.12g, %lld evaluations, %d thread%s",
                    r.relative_gap, r.dual_bound, o.iterations, r.threads,
                    r.threads == 1 ? "" : "s");
      note = buffer;
    } else if (!r.is_popalloc && has_value) {
      char buffer[120];
      std::snprintf(buffer, sizeof buffer, "%lld iterations, violation %.1e", o.iterations,
                    o.max_violation);
      note = buffer + (note.empty() ? "" : "; " + note);
    }
    std::printf("%-17s %-16s %10s %10s %20s %9s %9s %9s  %s\n", r.name.c_str(), to_string(o.status),
                ran ? format_seconds(r, o.seconds).c_str() : "-",
                ran ? format_seconds(r, o.cpu_seconds).c_str() : "-", objective, difference,
                speedup, cpu_speedup, note.c_str());
  }
  if (std::isfinite(rep.best_objective))
    std::printf("\nbest objective %.15g (%s)\n", rep.best_objective, rep.best_solver.c_str());
  std::printf("agreement to %g: %s\n", config.agreement, rep.agree ? "yes" : "NO");
  for (const std::string& p : rep.problems) std::printf("  %s\n", p.c_str());
  std::fflush(stdout);
}

void write_json(const std::string& path, const report& rep, const settings& config) {
  popalloc_solve::atomic_output_file file(path);
  std::string& out = file.buffer();
  auto string = [&](const char* key, const std::string& value, const char* end = ",\n") {
    out += "  \"";
    out += key;
    out += "\": ";
    json::append_string(out, value);
    out += end;
  };
  auto number = [&](const char* key, double value, const char* end = ",\n") {
    out += "  \"";
    out += key;
    out += "\": ";
    json::append_number(out, value);
    out += end;
  };
  out += "{\n";
  string("program", "popalloc-compare");
  string("popalloc_version", popalloc::version_string);
  string("source", rep.source);
  number("jobs", static_cast<double>(rep.jobs));
  number("resources", static_cast<double>(rep.resources));
  number("seed", config.generate ? static_cast<double>(config.generator.seed)
                                 : std::numeric_limits<double>::quiet_NaN());
  string("utility", config.utility.name);
  number("target_scale", config.target_scale);
  number("time_limit", config.time_limit);
  number("tolerance", config.tolerance);
  number("agreement_tolerance", config.agreement);
  number("lp_rows", static_cast<double>(rep.lp_rows));
  number("lp_columns", static_cast<double>(rep.lp_columns));
  number("lp_nonzeros", static_cast<double>(rep.lp_nonzeros));
  number("lp_build_seconds", rep.lp_build_seconds);
  number("best_objective", rep.best_objective);
  string("best_solver", rep.best_solver);
  out += "  \"agreement\": ";
  out += rep.agree ? "true" : "false";
  out += ",\n  \"problems\": [";
  for (std::size_t k = 0; k < rep.problems.size(); ++k) {
    if (k > 0) out += ", ";
    json::append_string(out, rep.problems[k]);
  }
  out += "],\n  \"solvers\": [\n";
  for (std::size_t k = 0; k < rep.rows.size(); ++k) {
    const row& r = rep.rows[k];
    const auto& o = r.outcome;
    out += "    {\"name\": ";
    json::append_string(out, r.name);
    out += ", \"description\": ";
    json::append_string(out, r.description);
    out += ", \"status\": ";
    json::append_string(out, to_string(o.status));
    out += ", \"finished\": ";
    out += finished(r) ? "true" : "false";
    auto field = [&](const char* key, double value) {
      out += ", \"";
      out += key;
      out += "\": ";
      json::append_number(out, value);
    };
    field("seconds", o.seconds);
    field("cpu_seconds", o.cpu_seconds);
    field("time_limit", r.time_limit);
    field("objective", o.objective);
    field("reported_objective", o.reported_objective);
    field("max_violation", o.max_violation);
    field("iterations", static_cast<double>(o.iterations));
    field("relative_difference", r.relative_difference);
    field("speedup", r.speedup);
    field("cpu_speedup", r.cpu_speedup);
    out += ", \"speedup_is_lower_bound\": ";
    out += r.speedup_is_lower_bound ? "true" : "false";
    out += ", \"message\": ";
    json::append_string(out, o.message);
    if (r.is_popalloc) {
      field("dual_bound", r.dual_bound);
      field("relative_gap", r.relative_gap);
      field("threads", r.threads);
      out += ", \"trace\": [";
      for (std::size_t t = 0; t < r.trace.size(); ++t) {
        if (t > 0) out += ", ";
        out += '[';
        json::append_number(out, r.trace[t].seconds);
        out += ", ";
        json::append_number(out, r.trace[t].primal);
        out += ", ";
        json::append_number(out, r.trace[t].dual);
        out += ", ";
        json::append_number(out, r.trace[t].gap);
        out += ']';
      }
      out += ']';
    }
    out += k + 1 < rep.rows.size() ? "},\n" : "}\n";
  }
  out += "  ]\n}\n";
  file.commit();
}

// ---- Comparison -----------------------------------------------------------------------------

/// Fills relative differences and speed-ups and checks agreement (see --help).
void compare_rows(report& rep, const settings& config, double capacity_scale) {
  const row* reference = nullptr;
  const row* cpu_reference = nullptr;
  for (const row& r : rep.rows) {
    if (!finished(r)) continue;
    if (!std::isfinite(rep.best_objective) || r.outcome.objective > rep.best_objective) {
      rep.best_objective = r.outcome.objective;
      rep.best_solver = r.name;
    }
    if (reference == nullptr && r.is_popalloc) reference = &r;  // the first popalloc row
    if (r.name == "popalloc-1thread") cpu_reference = &r;
  }
  if (cpu_reference == nullptr) cpu_reference = reference;
  const double scale = std::max(std::abs(rep.best_objective), 1.0);
  int finished_count = 0;
  for (row& r : rep.rows) {
    const auto& o = r.outcome;
    const bool has_value =
        finished(r) || o.status == run_status::time_limit || o.status == run_status::stopped;
    if (has_value && std::isfinite(rep.best_objective) && std::isfinite(o.objective))
      r.relative_difference = (rep.best_objective - o.objective) / scale;
    if (reference != nullptr && !r.is_popalloc &&
        (finished(r) || o.status == run_status::time_limit || o.status == run_status::killed)) {
      r.speedup = o.seconds / reference->outcome.seconds;
      r.cpu_speedup = o.cpu_seconds / cpu_reference->outcome.cpu_seconds;
      r.speedup_is_lower_bound = !finished(r);
    }
    if (!finished(r)) continue;
    ++finished_count;
    char text[240];
    if (!(r.relative_difference <= config.agreement)) {
      std::snprintf(text, sizeof text, "%s: objective %.15g differs from the best by %.2e",
                    r.name.c_str(), o.objective, r.relative_difference);
      rep.problems.emplace_back(text);
    }
    if (!(o.max_violation <= config.agreement * capacity_scale)) {
      std::snprintf(text, sizeof text, "%s: solution violates a constraint by %.2e", r.name.c_str(),
                    o.max_violation);
      rep.problems.emplace_back(text);
    }
  }
  // popalloc's dual bound is an upper bound on the optimum: an LP optimum above it means one of
  // the two is wrong.
  for (const row& p : rep.rows) {
    if (!p.is_popalloc || !finished(p)) continue;
    for (const row& r : rep.rows) {
      if (r.is_popalloc || !finished(r)) continue;
      if ((r.outcome.objective - p.dual_bound) / scale > config.agreement) {
        char text[240];
        std::snprintf(text, sizeof text, "%s: LP objective %.15g exceeds %s's dual bound %.15g",
                      r.name.c_str(), r.outcome.objective, p.name.c_str(), p.dual_bound);
        rep.problems.emplace_back(text);
      }
    }
  }
  if (finished_count < 2)
    rep.problems.emplace_back("fewer than two solvers finished: nothing to compare");
  rep.agree = std::none_of(rep.problems.begin(), rep.problems.end(),
                           [](const std::string& p) { return p.rfind("fewer than", 0) != 0; });
}

int run(int argc, char** argv) {
  const auto given = parse_arguments(argc, argv);
  if (given.count("help") != 0) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const auto lp_list = lp_solvers();
  if (given.count("version") != 0 || given.count("list-solvers") != 0) {
    std::printf("popalloc-compare %s (popalloc cpu%s; OpenMP %s)\n", popalloc::version_string,
                POPALLOC_COMPARE_WITH_THRUST ? ", thrust" : "",
                POPALLOC_OPENMP_ACTIVE ? "on" : "off");
    for (const auto& s : lp_list)
      std::printf("  %-14s %s%s\n", s.name.c_str(), s.description.c_str(),
                  s.solve == nullptr ? " [not built]" : "");
    return 0;
  }
  const settings config = interpret(given);
  if (!config.json_path.empty()) popalloc_solve::check_output_path(config.json_path);
  if (!config.write_prefix.empty()) {
    popalloc_solve::check_output_path(config.write_prefix + ".jobs.csv");
    popalloc_solve::check_output_path(config.write_prefix + ".resources.csv");
  }

  popalloc_solve::instance data =
      config.generate ? popalloc_solve::generate_instance(config.generator)
                      : popalloc_solve::read_instance(config.jobs_path, config.resources_path,
                                                      requirements_of(config.utility));
  if (config.target_scale != 1.0) data.problem.target *= config.target_scale;
  const auto& problem = data.problem;
  std::visit([&](const auto& utility) { problem.validate(utility); }, config.utility.utility);
  if (!config.write_prefix.empty()) popalloc_solve::write_instance(data, config.write_prefix);

  report rep;
  rep.jobs = problem.jobs();
  rep.resources = problem.resources();
  const std::string family = popalloc_solve::to_string(config.generator.family);
  rep.source = config.generate
                   ? "generated" + (family == "generations" ? "" : " (family " + family + ")") +
                         ", seed " + std::to_string(config.generator.seed)
                   : config.jobs_path + " + " + config.resources_path;
  auto requested = [&](const std::string& name) {
    return std::find(config.solvers.begin(), config.solvers.end(), name) != config.solvers.end();
  };

  // popalloc first: its time is the reference of every speed-up.
  const int threads = config.threads > 0 ? config.threads : default_threads();
  for (const std::string& name : popalloc_solver_names()) {
    if (!requested(name)) continue;
    row r;
    if (name == "popalloc-thrust") {
#if POPALLOC_COMPARE_WITH_THRUST
      r = std::visit(
          [&](const auto& u) {
            return run_popalloc<popalloc::backend::thrust>(name, problem, u, config, 0);
          },
          config.utility.utility);
      r.description = "popalloc, Thrust backend";
#else
      r.name = name;
      r.description = "popalloc, Thrust backend (not built: -DPOPALLOC_ENABLE_THRUST=ON)";
      r.outcome.status = run_status::not_built;
#endif
    } else {
      const int t = name == "popalloc" ? threads : 1;
      r = std::visit(
          [&](const auto& u) {
            return run_popalloc<popalloc::backend::cpu>(name, problem, u, config, t);
          },
          config.utility.utility);
      r.threads = t;
      r.description = "popalloc " + std::string(popalloc::version_string) + ", CPU backend, " +
                      std::to_string(t) + " thread" + (t == 1 ? "" : "s");
    }
    rep.rows.push_back(std::move(r));
  }

  const bool any_lp = std::any_of(lp_list.begin(), lp_list.end(), [&](const lp_solver_entry& e) {
    return requested(e.name) && e.solve != nullptr;
  });
  lp_model lp;
  if (config.utility.is_lp && any_lp) {
    const auto start = std::chrono::steady_clock::now();
    lp = build_lp(problem, config.utility.kind);
    rep.lp_build_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rep.lp_rows = lp.rows;
    rep.lp_columns = lp.columns;
    rep.lp_nonzeros = lp.nonzeros();
  }
  for (const std::string& name : known_solver_names()) {
    if (!requested(name) ||
        std::find(popalloc_solver_names().begin(), popalloc_solver_names().end(), name) !=
            popalloc_solver_names().end())
      continue;
    const auto entry = std::find_if(lp_list.begin(), lp_list.end(),
                                    [&](const lp_solver_entry& e) { return e.name == name; });
    row r;
    r.name = name;
    if (entry == lp_list.end()) {
      // A commercial solver whose library was not found: listed only when asked for by name.
      if (given.count("solvers") == 0) continue;
      r.description = name + " (library not found at configure time)";
      r.outcome.status = run_status::not_built;
    } else if (entry->solve == nullptr) {
      r.description = entry->description;
      r.outcome.status = run_status::not_built;
    } else if (!config.utility.is_lp) {
      r.description = entry->description;
      r.outcome.status = run_status::not_an_lp;
      set_note(r.outcome, "use benchmarks/python/compare_conic.py for conic solvers");
    } else {
      r.description = entry->description;
      const auto early = config.stop_early.find(name);
      r.time_limit = early != config.stop_early.end() ? std::min(early->second, config.time_limit)
                                                      : config.time_limit;
      if (!config.quiet)
        std::fprintf(stderr, "popalloc-compare: running %s (limit %g s)\n", name.c_str(),
                     r.time_limit);
      r.outcome = run_isolated(*entry, lp, problem, r.time_limit);
      // Within the grace period a solver without a limit of its own can still finish: it
      // passed its limit all the same, so it counts as stopped there (a lower bound).
      if (r.outcome.status == run_status::optimal && r.outcome.cpu_seconds > r.time_limit) {
        r.outcome.status = run_status::time_limit;
        set_note(r.outcome, "finished after " + std::to_string(r.outcome.cpu_seconds) +
                                " CPU s, past its limit");
      }
      if (!config.quiet)
        std::fprintf(stderr,
                     "popalloc-compare:   %s: %s after %.3f CPU s (%.3f wall s), objective "
                     "%.12g\n",
                     name.c_str(), to_string(r.outcome.status), r.outcome.cpu_seconds,
                     r.outcome.seconds, r.outcome.objective);
    }
    rep.rows.push_back(std::move(r));
  }

  compare_rows(rep, config, std::max(1.0, problem.capacity.maxCoeff()));
  if (!config.quiet) print_table(rep, config);
  if (!config.json_path.empty()) write_json(config.json_path, rep, config);
  if (!rep.agree) {
    std::fprintf(stderr, "popalloc-compare: the solvers disagree:\n");
    for (const std::string& p : rep.problems) std::fprintf(stderr, "  %s\n", p.c_str());
    return 3;
  }
  return 0;
}

}  // namespace
}  // namespace popalloc_compare

int main(int argc, char** argv) {
  return popalloc_cli::run_program("popalloc-compare",
                                   [&] { return popalloc_compare::run(argc, argv); });
}
