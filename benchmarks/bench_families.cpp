// SPDX-License-Identifier: Apache-2.0
// bench_families: popalloc's solve time on every instance family of
// examples/popalloc_solve/families.hpp, per utility, job count and resource count, with the
// worst and the median family per (utility, n, m) as a markdown table; `--memory` measures the
// bytes per job instead. A plain program (not Google Benchmark): `bench_families --help`;
// docs/benchmarks.md, "Instance families".
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <time.h>
#include <type_traits>
#include <unistd.h>
#include <utility>
#include <vector>

#include <popalloc/io/atomic_file.hpp>
#include <popalloc/io/json.hpp>
#include <popalloc/popalloc.hpp>

#include "../examples/common/command_line.hpp"
#include "families.hpp"

namespace bench_families {
namespace {

constexpr const char* kUsage = R"(Usage: bench_families [options]

Times popalloc::solve on the instance families of popalloc-solve's --family option, for each
utility x job count x resource count, and prints one row per cell, then per (utility, n, m) the
median over the families and the worst family as a markdown table.

  --families LIST     family specs, e.g. classes,classes:tight,paper:loose (default: generations,
                      uniform, classes, classes:tight, classes:loose, gavel, paper, paper:tight,
                      sparse, sparse:tight, and for target-priority also the :reachable
                      variants of classes, generations, paper, sparse, gavel and classes:far)
  --utilities LIST    linear, target-priority, log (default: all three)
  --sizes LIST        job counts n >= 1, e.g. 10000,1e5 (default 10000,100000,1000000)
  --resources LIST    resource counts m >= 1 (default 8); gavel always runs at m = 3
  --threads T         popalloc's threads (default 2)
  --tolerance TOL     relative duality gap (default 1e-3)
  --repeat R          report the median of R solves (default: n < 1e6 repeats until 1 s and
                      at least 3 solves, n >= 1e6 solves once)
  --seed S            instance seed (default 1)
  --json FILE         everything as JSON (written to a temporary file, then renamed)
  --memory            instead of timing: bytes per job at m = 8 for double and float storage,
                      from the growth of the peak RSS over a solve (first utility of
                      --utilities, family generations, each solve in a fresh process)
  --memory-sizes LIST job counts of --memory (default 1000000,10000000)
  --help

Columns: status (popalloc's solve_status), wall s (median over the repeats of the whole
popalloc::solve call), evals (full dual evaluations), sample (evaluations of the sample start),
ns/job/eval (evaluation seconds / evals / n), objective (feasible allocation), bound (certified
upper bound), gap (bound - objective), rel gap (gap / scale) and scale (its denominator's name).

Exit status: 0 every cell produced a finite certificate, 1 some cell did not (or an internal
error), 2 usage error.
)";

constexpr const char* kProbeOption = "memory-probe";  // internal: one measurement, see --memory

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using popalloc_cli::option_spec;
constexpr option_spec kOptions[] = {
    {"families", true},   {"utilities", true}, {"sizes", true},  {"resources", true},
    {"threads", true},    {"tolerance", true}, {"repeat", true}, {"seed", true},
    {"json", true},       {"memory", false},   {"help", false},  {"memory-sizes", true},
    {kProbeOption, true},
};

struct usage_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void usage_error(const std::string& what) {
  throw usage_failure(what + " (see bench_families --help)");
}

// ---- Command line -------------------------------------------------------------------------

std::vector<std::string> split(const std::string& text, char separator, const std::string& what) {
  if (text.empty()) usage_error(what + " needs a non-empty list");
  std::vector<std::string> items;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(separator, start);
    std::string item = text.substr(start, end == std::string::npos ? end : end - start);
    if (item.empty()) usage_error(what + ": empty item in '" + text + "'");
    items.push_back(std::move(item));
    if (end == std::string::npos) return items;
    start = end + 1;
  }
}

double parse_number(const std::string& text, const std::string& what) {
  double value = 0.0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size())
    usage_error(what + ": '" + text + "' is not a number");
  return value;
}

/// A whole number in [minimum, maximum]; "1e6" is accepted.
std::int64_t parse_count(const std::string& text, const std::string& what, std::int64_t minimum,
                         std::int64_t maximum) {
  const double value = parse_number(text, what);
  if (value != std::floor(value)) usage_error(what + ": '" + text + "' is not a whole number");
  if (value < static_cast<double>(minimum))
    usage_error(what + " must be >= " + std::to_string(minimum) + ", got '" + text + "'");
  if (value > static_cast<double>(maximum))
    usage_error(what + " must be <= " + std::to_string(maximum) + ", got '" + text + "'");
  return static_cast<std::int64_t>(value);
}

std::vector<std::int64_t> parse_counts(const std::string& text, const std::string& what,
                                       std::int64_t maximum) {
  std::vector<std::int64_t> counts;
  for (const std::string& item : split(text, ',', what))
    counts.push_back(parse_count(item, what, 1, maximum));
  return counts;
}

enum class utility_kind { linear, target_priority, log };

const char* name_of(utility_kind kind) {
  switch (kind) {
    case utility_kind::linear:
      return "linear";
    case utility_kind::target_priority:
      return "target-priority";
    case utility_kind::log:
      return "log";
  }
  return "unknown";
}

utility_kind parse_utility(const std::string& text) {
  for (const utility_kind kind :
       {utility_kind::linear, utility_kind::target_priority, utility_kind::log})
    if (text == name_of(kind)) return kind;
  if (text == "target_priority") return utility_kind::target_priority;
  usage_error("--utilities: unknown utility '" + text + "' (linear, target-priority, log)");
}

/// Calls `f` with the utility object of `kind`.
template <class F>
decltype(auto) with_utility(utility_kind kind, F&& f) {
  switch (kind) {
    case utility_kind::linear:
      return f(popalloc::utility::linear{});
    case utility_kind::target_priority:
      return f(popalloc::utility::target_priority{});
    case utility_kind::log:
      break;
  }
  return f(popalloc::utility::log{});
}

/// The canonical text of a family spec. \throws usage_failure naming the option.
std::string canonical_family(const std::string& text) {
  try {
    return popalloc_solve::to_string(popalloc_solve::parse_family(text));
  } catch (const std::invalid_argument& e) {
    usage_error(std::string("--families: ") + e.what());
  }
}

struct settings {
  std::vector<std::string> families;  ///< empty: the default list of each utility
  std::vector<utility_kind> utilities{utility_kind::linear, utility_kind::target_priority,
                                      utility_kind::log};
  std::vector<std::int64_t> sizes{10'000, 100'000, 1'000'000};
  std::vector<std::int64_t> resources{8};
  std::vector<std::int64_t> memory_sizes{1'000'000, 10'000'000};
  int threads = 2;
  double tolerance = 1e-3;
  int repeat = 0;  ///< 0: automatic (see --help)
  std::uint64_t seed = 1;
  std::string json_path;
  bool memory = false;
  std::string probe;  ///< internal --memory-probe SCALAR,N,UTILITY
};

constexpr std::int64_t kMaxJobs = std::numeric_limits<std::int32_t>::max();

void interpret_lists(const popalloc_cli::given_options& given, settings& s) {
  if (auto f = given.find("families"); f != given.end())
    for (const std::string& item : split(f->second, ',', "--families"))
      s.families.push_back(canonical_family(item));
  if (auto u = given.find("utilities"); u != given.end()) {
    s.utilities.clear();
    for (const std::string& item : split(u->second, ',', "--utilities"))
      s.utilities.push_back(parse_utility(item));
  }
  if (auto n = given.find("sizes"); n != given.end())
    s.sizes = parse_counts(n->second, "--sizes", kMaxJobs);
  if (auto m = given.find("resources"); m != given.end())
    s.resources = parse_counts(m->second, "--resources", 1 << 20);
  if (auto n = given.find("memory-sizes"); n != given.end())
    s.memory_sizes = parse_counts(n->second, "--memory-sizes", kMaxJobs);
}

settings interpret(const popalloc_cli::given_options& given) {
  settings s;
  interpret_lists(given, s);
  if (auto t = given.find("threads"); t != given.end())
    s.threads = static_cast<int>(parse_count(t->second, "--threads", 1, 4096));
  if (auto t = given.find("tolerance"); t != given.end()) {
    s.tolerance = parse_number(t->second, "--tolerance");
    if (!(s.tolerance > 0.0 && s.tolerance < 1.0)) usage_error("--tolerance must be in (0, 1)");
  }
  if (auto r = given.find("repeat"); r != given.end())
    s.repeat = static_cast<int>(parse_count(r->second, "--repeat", 1, 100000));
  if (auto v = given.find("seed"); v != given.end())
    s.seed = static_cast<std::uint64_t>(parse_count(v->second, "--seed", 0, 1LL << 53));
  if (auto j = given.find("json"); j != given.end()) {
    if (j->second.empty()) usage_error("--json needs a file name");
    s.json_path = j->second;
  }
  s.memory = given.count("memory") != 0;
  if (auto p = given.find(kProbeOption); p != given.end()) s.probe = p->second;
  return s;
}

/// The families of one utility: --families, or the default variants plus any family of
/// family_names() they miss.
std::vector<std::string> families_for(const settings& s, utility_kind utility) {
  if (!s.families.empty()) return s.families;
  std::vector<std::string> list = {"generations", "uniform", "classes", "classes:tight",
                                   "classes:loose"};
  if (utility == utility_kind::target_priority)
    list.insert(list.end(), {"classes:reachable", "classes:far", "generations:reachable",
                             "paper:reachable", "sparse:reachable", "gavel:reachable"});
  list.insert(list.end(), {"gavel", "paper", "paper:tight", "sparse", "sparse:tight"});
  for (const std::string& name : popalloc_solve::family_names())
    if (std::find(list.begin(), list.end(), name) == list.end()) list.push_back(name);
  return list;
}

// ---- Machine --------------------------------------------------------------------------------

struct load_sample {
  std::string text;  ///< /proc/loadavg as read ("" when unavailable)
  double load1 = kNaN;
  long running = -1, threads = -1;  ///< runnable / existing kernel threads on the machine
};

load_sample read_load() {
  load_sample sample;
  std::FILE* file = std::fopen("/proc/loadavg", "r");
  if (file == nullptr) return sample;
  char line[256] = {};
  if (std::fgets(line, sizeof line, file) != nullptr) {
    sample.text = line;
    while (!sample.text.empty() && sample.text.back() == '\n') sample.text.pop_back();
    double load5 = 0.0, load15 = 0.0;
    if (std::sscanf(line, "%lf %lf %lf %ld/%ld", &sample.load1, &load5, &load15, &sample.running,
                    &sample.threads) != 5)
      sample.running = sample.threads = -1;
  }
  std::fclose(file);
  return sample;
}

void print_load(const char* when, const load_sample& load, const settings& s) {
  std::printf(
      "%s: load average %s (/proc/loadavg: 1, 5, 15 min, running/all threads, last pid); "
      "%u cores; popalloc threads %d\n",
      when, load.text.empty() ? "unavailable" : load.text.c_str(),
      std::thread::hardware_concurrency(), s.threads);
  std::fflush(stdout);
}

// ---- One cell -------------------------------------------------------------------------------

template <class R, class = void>
struct has_gap_scale : std::false_type {};
template <class R>
struct has_gap_scale<
    R, std::void_t<decltype(R::gap_scale), decltype(R::gap_scale_name), decltype(R::trivial_bound)>>
    : std::true_type {};

struct gap_report {
  double scale = kNaN;
  std::string name;
  double trivial_bound = kNaN;
};

/// The relative gap's denominator. A core without solve_result::gap_scale (before the
/// gap-reporting change) only implies it: duality_gap / relative_gap, named "implied".
template <class Result>
gap_report gap_of(const Result& r) {
  gap_report g;
  if constexpr (has_gap_scale<Result>::value) {
    g.scale = r.gap_scale;
    g.name = r.gap_scale_name != nullptr ? r.gap_scale_name : "";
    g.trivial_bound = r.trivial_bound;
  } else {
    if (r.relative_gap > 0.0) g.scale = r.duality_gap / r.relative_gap;
    g.name = "implied";
  }
  return g;
}

struct cell {
  std::string family, utility;
  std::int64_t n = 0, m = 0;
  std::string status = "not_run";
  std::string error;  ///< why no solve result (generation or validation failed)
  int repeats = 0;
  double seconds = kNaN;      ///< median wall seconds
  double cpu_seconds = kNaN;  ///< median process CPU seconds (all threads)
  int iterations = 0, sample_iterations = 0;
  double ns_per_job_evaluation = kNaN;
  double objective = kNaN;
  double dual_bound = kNaN;
  double gap = kNaN;
  double relative_gap = kNaN;
  gap_report scale;

  bool converged() const { return status == "converged"; }
  bool certified() const {
    return error.empty() && std::isfinite(objective) && std::isfinite(dual_bound) &&
           std::isfinite(gap) && status != "numerical_error";
  }
};

struct timed_result {
  double seconds = 0.0;
  double cpu_seconds = 0.0;  ///< process CPU time (all threads, spin-waiting included)
  popalloc::solve_result result;
};

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

popalloc::solver_options options_of(const settings& s) {
  popalloc::solver_options options;
  options.relative_gap = s.tolerance;
  options.threads = s.threads;
  return options;
}

double median_of(std::vector<double> values) {
  if (values.empty()) return kNaN;
  std::sort(values.begin(), values.end());
  const std::size_t k = values.size();
  return k % 2 == 1 ? values[k / 2] : 0.5 * (values[k / 2 - 1] + values[k / 2]);
}

bool another_repeat(const settings& s, std::int64_t n, int done, double spent) {
  if (s.repeat > 0) return done < s.repeat;
  if (n >= 1'000'000) return done < 1;
  return done < 3 || (spent < 1.0 && done < 1000);
}

/// Solves `repeat` times; keeps the run of median time (the lower middle one for even counts)
/// and the median time itself.
template <class Utility>
timed_result time_solves(const popalloc::dense_problem<double>& problem, const Utility& utility,
                         const settings& s, int& repeats) {
  std::vector<timed_result> runs;
  double spent = 0.0;
  const popalloc::solver_options options = options_of(s);
  while (another_repeat(s, problem.jobs(), static_cast<int>(runs.size()), spent)) {
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = process_cpu_seconds();
    popalloc::solve_result result = popalloc::solve(problem, utility, options);
    const double cpu = process_cpu_seconds() - cpu_start;
    result.allocation = {};  // only the statistics are kept
    result.throughput.resize(0);
    runs.push_back({seconds_since(start), cpu, std::move(result)});
    spent += runs.back().seconds;
  }
  repeats = static_cast<int>(runs.size());
  std::sort(runs.begin(), runs.end(),
            [](const timed_result& a, const timed_result& b) { return a.seconds < b.seconds; });
  const std::size_t k = runs.size();
  timed_result median = std::move(runs[(k - 1) / 2]);
  if (k % 2 == 0) median.seconds = 0.5 * (median.seconds + runs[k / 2].seconds);
  std::vector<double> cpu;
  for (const timed_result& run : runs) cpu.push_back(run.cpu_seconds);
  median.cpu_seconds = median_of(std::move(cpu));
  return median;
}

void fill_from(cell& c, const timed_result& timed) {
  const popalloc::solve_result& r = timed.result;
  c.status = popalloc::to_string(r.status);
  c.seconds = timed.seconds;
  c.cpu_seconds = timed.cpu_seconds;
  c.iterations = r.iterations;
  c.sample_iterations = r.sample_iterations;
  if (r.iterations > 0)
    c.ns_per_job_evaluation =
        1e9 * r.timings.evaluate_seconds / r.iterations / static_cast<double>(c.n);
  c.objective = r.primal_objective;
  c.dual_bound = r.dual_bound;
  c.gap = r.duality_gap;
  c.relative_gap = r.relative_gap;
  c.scale = gap_of(r);
}

cell run_cell(const std::string& family, utility_kind utility,
              const popalloc::dense_problem<double>& problem, const settings& s) {
  cell c;
  c.family = family;
  c.utility = name_of(utility);
  c.n = problem.jobs();
  c.m = problem.resources();
  try {
    with_utility(utility,
                 [&](const auto& u) { fill_from(c, time_solves(problem, u, s, c.repeats)); });
  } catch (const popalloc::error& e) {
    c.status = "error";
    c.error = e.what();
  }
  return c;
}

// ---- Output ---------------------------------------------------------------------------------

void print_cell_header() {
  std::printf("%-18s %-15s %9s %3s %-15s %10s %10s %6s %6s %8s %17s %17s %9s %8s  %s\n", "family",
              "utility", "n", "m", "status", "wall s", "cpu s", "evals", "sample", "ns/j/ev",
              "objective", "bound", "gap", "rel gap", "scale");
}

void print_cell(const cell& c) {
  if (!c.error.empty()) {
    std::printf("%-18s %-15s %9lld %3lld %-15s  %s\n", c.family.c_str(), c.utility.c_str(),
                static_cast<long long>(c.n), static_cast<long long>(c.m), c.status.c_str(),
                c.error.c_str());
  } else {
    std::printf(
        "%-18s %-15s %9lld %3lld %-15s %10.4g %10.4g %6d %6d %8.3g %17.10g %17.10g %9.2e "
        "%8.1e  %s%s\n",
        c.family.c_str(), c.utility.c_str(), static_cast<long long>(c.n),
        static_cast<long long>(c.m), c.status.c_str(), c.seconds, c.cpu_seconds, c.iterations,
        c.sample_iterations, c.ns_per_job_evaluation, c.objective, c.dual_bound, c.gap,
        c.relative_gap, c.scale.name.c_str(), c.converged() ? "" : "   <== NOT CONVERGED");
  }
  std::fflush(stdout);
}

struct summary {
  std::string utility;
  std::int64_t n = 0, m = 0;
  std::vector<const cell*> cells;
  const cell* worst = nullptr;  ///< the family of largest wall time
  double median_seconds = kNaN;
  double median_evaluations = kNaN;
  std::vector<std::string> not_converged;  ///< families (with their status)
};

void finish_summary(summary& g) {
  std::vector<double> seconds, evaluations;
  for (const cell* c : g.cells) {
    if (!c->converged()) g.not_converged.push_back(c->family + " (" + c->status + ")");
    if (!std::isfinite(c->seconds)) continue;
    seconds.push_back(c->seconds);
    evaluations.push_back(c->iterations);
    if (g.worst == nullptr || c->seconds > g.worst->seconds) g.worst = c;
  }
  g.median_seconds = median_of(seconds);
  g.median_evaluations = median_of(evaluations);
}

/// Groups the cells by (utility, n, m): --utilities order, then --sizes order, then m.
std::vector<summary> summarize(const std::vector<cell>& cells, const settings& s) {
  std::vector<summary> groups;
  for (const utility_kind u : s.utilities)
    for (const std::int64_t n : s.sizes) {
      std::vector<std::int64_t> ms;
      for (const cell& c : cells)
        if (c.utility == name_of(u) && c.n == n) ms.push_back(c.m);
      std::sort(ms.begin(), ms.end());
      ms.erase(std::unique(ms.begin(), ms.end()), ms.end());
      for (const std::int64_t m : ms) {
        summary g;
        g.utility = name_of(u);
        g.n = n;
        g.m = m;
        for (const cell& c : cells)
          if (c.utility == g.utility && c.n == n && c.m == m) g.cells.push_back(&c);
        finish_summary(g);
        groups.push_back(std::move(g));
      }
    }
  return groups;
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

void print_summary(const std::vector<summary>& groups, const settings& s) {
  std::printf(
      "\nSummary (tolerance %g, %d threads): median over the families and the worst "
      "family (largest wall time) per utility, n, m\n\n",
      s.tolerance, s.threads);
  std::printf(
      "| utility | n | m | families | median s | median evals | worst family | worst s | "
      "worst evals | not converged |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (const summary& g : groups) {
    const cell* w = g.worst;
    std::printf(
        "| %s | %lld | %lld | %zu | %.3g | %.3g | %s | %.3g | %d | %s |\n", g.utility.c_str(),
        static_cast<long long>(g.n), static_cast<long long>(g.m), g.cells.size(), g.median_seconds,
        g.median_evaluations, w != nullptr ? w->family.c_str() : "-",
        w != nullptr ? w->seconds : kNaN, w != nullptr ? w->iterations : 0,
        g.not_converged.empty() ? "none" : ("**" + join(g.not_converged, ", ") + "**").c_str());
  }
  for (const summary& g : groups)
    for (const std::string& f : g.not_converged)
      std::fprintf(stderr, "bench_families: WARNING: %s, n = %lld, m = %lld: %s did not converge\n",
                   g.utility.c_str(), static_cast<long long>(g.n), static_cast<long long>(g.m),
                   f.c_str());
}

// ---- JSON -----------------------------------------------------------------------------------

namespace json = popalloc::io::json;

class json_object {
 public:
  explicit json_object(std::string& out) : out_(out) { out_ += '{'; }
  json_object& number(const char* key, double value) {
    json::append_number(start(key), value);
    return *this;
  }
  json_object& text(const char* key, const std::string& value) {
    json::append_string(start(key), value);
    return *this;
  }
  json_object& raw(const char* key, const std::string& value) {
    start(key) += value;
    return *this;
  }
  void close() { out_ += '}'; }

 private:
  std::string& start(const char* key) {
    if (!first_) out_ += ", ";
    first_ = false;
    json::append_string(out_, key);
    out_ += ": ";
    return out_;
  }
  std::string& out_;
  bool first_ = true;
};

std::string cell_json(const cell& c) {
  std::string out;
  json_object o(out);
  o.text("family", c.family).text("utility", c.utility).number("n", static_cast<double>(c.n));
  o.number("m", static_cast<double>(c.m)).text("status", c.status).text("error", c.error);
  o.number("repeats", c.repeats).number("wall_seconds", c.seconds);
  o.number("cpu_seconds", c.cpu_seconds);
  o.number("evaluations", c.iterations).number("sample_evaluations", c.sample_iterations);
  o.number("ns_per_job_per_evaluation", c.ns_per_job_evaluation);
  o.number("objective", c.objective).number("dual_bound", c.dual_bound);
  o.number("absolute_gap", c.gap).number("relative_gap", c.relative_gap);
  o.number("gap_scale", c.scale.scale).text("gap_scale_name", c.scale.name);
  o.number("trivial_bound", c.scale.trivial_bound);
  o.raw("converged", c.converged() ? "true" : "false");
  o.raw("certified", c.certified() ? "true" : "false");
  o.close();
  return out;
}

std::string summary_json(const summary& g) {
  std::string out, names;
  for (const std::string& f : g.not_converged) {
    names += names.empty() ? "[" : ", ";
    json::append_string(names, f);
  }
  json_object o(out);
  o.text("utility", g.utility).number("n", static_cast<double>(g.n));
  o.number("m", static_cast<double>(g.m)).number("families", static_cast<double>(g.cells.size()));
  o.number("median_wall_seconds", g.median_seconds);
  o.number("median_evaluations", g.median_evaluations);
  o.text("worst_family", g.worst != nullptr ? g.worst->family : "");
  o.number("worst_wall_seconds", g.worst != nullptr ? g.worst->seconds : kNaN);
  o.number("worst_evaluations",
           g.worst != nullptr ? static_cast<double>(g.worst->iterations) : kNaN);
  o.raw("not_converged", names.empty() ? "[]" : names + "]");
  o.close();
  return out;
}

std::string load_json(const load_sample& load) {
  std::string out;
  json_object o(out);
  o.text("loadavg", load.text).number("load1", load.load1);
  o.number("running_threads", static_cast<double>(load.running));
  o.number("threads", static_cast<double>(load.threads));
  o.close();
  return out;
}

template <class T, class F>
std::string json_array(const std::vector<T>& items, F&& to_json) {
  std::string out = "[";
  for (std::size_t k = 0; k < items.size(); ++k)
    out += (k == 0 ? "\n    " : ",\n    ") + to_json(items[k]);
  return out + "\n  ]";
}

std::string settings_json(const settings& s) {
  std::string out;
  json_object o(out);
  o.number("threads", s.threads).number("tolerance", s.tolerance);
  o.number("repeat", s.repeat).number("seed", static_cast<double>(s.seed));
  o.text("repeat_rule", s.repeat > 0 ? "fixed" : "n < 1e6: until 1 s and >= 3; else 1");
  o.close();
  return out;
}

struct run_record {
  load_sample load_start, load_end;
  std::vector<cell> cells;
  std::vector<summary> groups;
  std::string memory;  ///< the --memory object, "" when not measured
};

void write_json(const std::string& path, const run_record& record, const settings& s) {
  popalloc::io::atomic_output_file file(path);
  std::string& out = file.buffer();
  out += "{\n  \"program\": \"bench_families\",\n  \"popalloc_version\": ";
  json::append_string(out, popalloc::version_string);
  out += ",\n  \"cores\": " + std::to_string(std::thread::hardware_concurrency());
  out += ",\n  \"settings\": " + settings_json(s);
  out += ",\n  \"load_start\": " + load_json(record.load_start);
  out += ",\n  \"load_end\": " + load_json(record.load_end);
  if (!record.memory.empty()) out += ",\n  \"memory\": " + record.memory;
  out += ",\n  \"cells\": " + json_array(record.cells, cell_json);
  out += ",\n  \"summary\": " + json_array(record.groups, summary_json);
  out += "\n}\n";
  file.commit();
}

// ---- The timing grid ------------------------------------------------------------------------

/// The utilities of --utilities whose family list holds `family`.
std::vector<utility_kind> utilities_of(const std::string& family, const settings& s) {
  std::vector<utility_kind> out;
  for (const utility_kind u : s.utilities) {
    const std::vector<std::string> list = families_for(s, u);
    if (std::find(list.begin(), list.end(), family) != list.end()) out.push_back(u);
  }
  return out;
}

/// Every family of any utility, in first-seen order.
std::vector<std::string> all_families(const settings& s) {
  std::vector<std::string> out;
  for (const utility_kind u : s.utilities)
    for (const std::string& f : families_for(s, u))
      if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
  return out;
}

bool is_gavel(const std::string& family) {
  return popalloc_solve::parse_family(family).family == "gavel";
}

/// One family at one size: generated once, solved for each of its utilities.
void run_family(const std::string& family, std::int64_t n, std::int64_t m, const settings& s,
                std::vector<cell>& cells) {
  popalloc::dense_problem<double> problem;
  std::string failure;
  try {
    problem = popalloc_solve::generate_family(popalloc_solve::parse_family(family), n, m, s.seed);
  } catch (const std::invalid_argument& e) {
    failure = std::string("generation failed: ") + e.what();
  }
  for (const utility_kind u : utilities_of(family, s)) {
    cell c;
    if (failure.empty()) {
      c = run_cell(family, u, problem, s);
    } else {
      c.family = family;
      c.utility = name_of(u);
      c.n = n;
      c.m = m;
      c.status = "error";
      c.error = failure;
    }
    print_cell(c);
    cells.push_back(std::move(c));
  }
}

std::vector<cell> run_grid(const settings& s) {
  std::vector<cell> cells;
  print_cell_header();
  for (const std::int64_t n : s.sizes)
    for (const std::string& family : all_families(s)) {
      if (is_gavel(family)) {  // Gavel's three GPU types: m = 3, once per n
        run_family(family, n, 3, s, cells);
        continue;
      }
      for (const std::int64_t m : s.resources) run_family(family, n, m, s, cells);
    }
  return cells;
}

// ---- --memory -------------------------------------------------------------------------------

/// A field of /proc/self/status in bytes (VmRSS, VmHWM), -1 when unavailable.
double status_bytes(const char* field) {
  std::FILE* file = std::fopen("/proc/self/status", "r");
  if (file == nullptr) return -1.0;
  char line[256];
  double kib = -1.0;
  const std::string prefix = std::string(field) + ":";
  while (std::fgets(line, sizeof line, file) != nullptr)
    if (std::string(line).rfind(prefix, 0) == 0) kib = std::atof(line + prefix.size());
  std::fclose(file);
  return kib < 0 ? -1.0 : 1024.0 * kib;
}

/// Resets VmHWM to the current RSS (Linux >= 4.0: "5" > /proc/self/clear_refs).
bool reset_peak_rss() {
  std::FILE* file = std::fopen("/proc/self/clear_refs", "w");
  if (file == nullptr) return false;
  const bool ok = std::fputs("5", file) >= 0;
  return std::fclose(file) == 0 && ok;
}

template <class Scalar>
popalloc::dense_problem<Scalar> stored_as(popalloc::dense_problem<double>&& p) {
  if constexpr (std::is_same_v<Scalar, double>) {
    return std::move(p);
  } else {
    popalloc::dense_problem<Scalar> out;
    out.throughput = p.throughput.template cast<Scalar>();
    out.capacity = p.capacity;
    out.weight = p.weight.template cast<Scalar>();
    out.target = p.target.template cast<Scalar>();
    out.job_demand = p.job_demand.template cast<Scalar>();
    out.demand = p.demand.template cast<Scalar>();
    return out;
  }
}

template <class Scalar>
double array_bytes(const popalloc::dense_problem<Scalar>& p) {
  const auto entries = p.throughput.size() + p.weight.size() + p.target.size() +
                       p.job_demand.size() + p.demand.size();
  return static_cast<double>(entries) * sizeof(Scalar);
}

/// The child's side of --memory: generates, stores as Scalar, solves, prints one line.
template <class Scalar>
int memory_probe(std::int64_t n, utility_kind utility, const settings& s) {
  const double rss_start = status_bytes("VmRSS");
  popalloc::dense_problem<Scalar> problem = stored_as<Scalar>(
      popalloc_solve::generate_family(popalloc_solve::family_spec{}, n, 8, s.seed));
  const double rss_problem = status_bytes("VmRSS");
  const bool reset = reset_peak_rss();
  const popalloc::solve_result r = with_utility(
      utility, [&](const auto& u) { return popalloc::solve(problem, u, options_of(s)); });
  std::printf("probe %.0f %.0f %.0f %.0f %d %s %d\n", rss_start, rss_problem, status_bytes("VmHWM"),
              array_bytes(problem), reset ? 1 : 0, popalloc::to_string(r.status), r.iterations);
  return 0;
}

int run_probe(const settings& s) {
  const std::vector<std::string> parts = split(s.probe, ',', "--memory-probe");
  if (parts.size() != 3) usage_error("--memory-probe expects SCALAR,N,UTILITY");
  const std::int64_t n = parse_count(parts[1], "--memory-probe N", 1, kMaxJobs);
  const utility_kind u = parse_utility(parts[2]);
  if (parts[0] == "float") return memory_probe<float>(n, u, s);
  if (parts[0] == "double") return memory_probe<double>(n, u, s);
  usage_error("--memory-probe: SCALAR must be float or double");
}

struct memory_point {
  std::string scalar;
  std::int64_t n = 0;
  double rss_start = 0, rss_problem = 0, peak = 0, array_bytes = 0;
  bool reset = false, ok = false;
  std::string status;
  int evaluations = 0;

  double problem_per_job() const { return array_bytes / static_cast<double>(n); }
  double measured_problem_per_job() const {
    return (rss_problem - rss_start) / static_cast<double>(n);
  }
  double solver_per_job() const { return (peak - rss_problem) / static_cast<double>(n); }
};

std::string self_path() {
  char buffer[4096];
  const ssize_t length = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  if (length <= 0) throw std::runtime_error("cannot read /proc/self/exe");
  return std::string(buffer, static_cast<std::size_t>(length));
}

/// Runs one measurement in a fresh process (so no earlier solve's freed memory is reused).
memory_point measure(const std::string& scalar, std::int64_t n, const settings& s) {
  memory_point p;
  p.scalar = scalar;
  p.n = n;
  const std::string command = "'" + self_path() + "' --" + kProbeOption + " " + scalar + "," +
                              std::to_string(n) + "," + name_of(s.utilities.front()) +
                              " --threads " + std::to_string(s.threads) + " --tolerance " +
                              std::to_string(s.tolerance) + " --seed " + std::to_string(s.seed);
  std::FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return p;
  char line[512] = {}, status[64] = {};
  int reset = 0;
  while (std::fgets(line, sizeof line, pipe) != nullptr)
    if (std::sscanf(line, "probe %lf %lf %lf %lf %d %63s %d", &p.rss_start, &p.rss_problem, &p.peak,
                    &p.array_bytes, &reset, status, &p.evaluations) == 7)
      p.ok = true;
  p.ok = pclose(pipe) == 0 && p.ok && p.peak > 0;
  p.reset = reset != 0;
  p.status = status;
  return p;
}

void print_memory_point(const memory_point& p) {
  if (!p.ok) {
    std::printf("| %s | %lld | measurement failed | | | | |\n", p.scalar.c_str(),
                static_cast<long long>(p.n));
    return;
  }
  std::printf("| %s | %lld | %.1f | %.1f | %.1f | %.1f | %s, %d evals%s |\n", p.scalar.c_str(),
              static_cast<long long>(p.n), p.problem_per_job(), p.measured_problem_per_job(),
              p.solver_per_job(), p.problem_per_job() + p.solver_per_job(), p.status.c_str(),
              p.evaluations, p.reset ? "" : "; peak not reset: includes generation");
}

std::string memory_point_json(const memory_point& p) {
  std::string out;
  json_object o(out);
  o.text("scalar", p.scalar).number("n", static_cast<double>(p.n)).number("m", 8);
  o.raw("ok", p.ok ? "true" : "false").raw("peak_reset", p.reset ? "true" : "false");
  o.number("rss_start_bytes", p.rss_start).number("rss_after_problem_bytes", p.rss_problem);
  o.number("peak_rss_bytes", p.peak).number("problem_array_bytes", p.array_bytes);
  o.number("problem_bytes_per_job", p.problem_per_job());
  o.number("measured_problem_bytes_per_job", p.measured_problem_per_job());
  o.number("solver_bytes_per_job", p.solver_per_job());
  o.text("status", p.status).number("evaluations", p.evaluations);
  o.close();
  return out;
}

/// Extrapolates the largest float measurement to 1e8 jobs x 8 against 24 GiB.
std::string print_extrapolation(const std::vector<memory_point>& points) {
  const memory_point* base = nullptr;
  for (const memory_point& p : points)
    if (p.ok && p.scalar == "float" && (base == nullptr || p.n > base->n)) base = &p;
  if (base == nullptr) return "null";
  const double jobs = 1e8, limit = 24.0 * (1 << 30);
  const double bytes = base->rss_start + jobs * (base->problem_per_job() + base->solver_per_job());
  std::printf(
      "\n1e8 x 8 float, extrapolated from n = %lld: %.1f GiB (%.1f B/job + %.0f MiB "
      "base) -> %s in 24 GiB (the generator's double copy, %.1f GiB more, not counted)\n",
      static_cast<long long>(base->n), bytes / (1 << 30),
      base->problem_per_job() + base->solver_per_job(), base->rss_start / (1 << 20),
      bytes <= limit ? "fits" : "does NOT fit", jobs * 10 * 8 / (1 << 30));
  std::string out;
  json_object o(out);
  o.number("jobs", jobs).number("from_n", static_cast<double>(base->n)).number("bytes", bytes);
  o.number("limit_bytes", limit).raw("fits", bytes <= limit ? "true" : "false");
  o.close();
  return out;
}

std::string run_memory(const settings& s, bool& ok) {
  std::printf(
      "memory at m = 8 (family generations, utility %s, %d threads, tolerance %g): bytes "
      "per job\n\n| storage | n | problem arrays | problem, RSS growth | solver extra "
      "(peak RSS growth over the solve) | total | solve |\n|---|---|---|---|---|---|---|\n",
      name_of(s.utilities.front()), s.threads, s.tolerance);
  std::vector<memory_point> points;
  for (const char* scalar : {"double", "float"})
    for (const std::int64_t n : s.memory_sizes) {
      points.push_back(measure(scalar, n, s));
      print_memory_point(points.back());
      std::fflush(stdout);
      ok = ok && points.back().ok;
    }
  const std::string fit = print_extrapolation(points);
  return "{\"points\": " + json_array(points, memory_point_json) +
         ", \"extrapolation_1e8\": " + fit + "}";
}

// ---- main -----------------------------------------------------------------------------------

int run(int argc, char** argv) {
  const popalloc_cli::given_options given =
      popalloc_cli::parse_arguments(argc, argv, kOptions, usage_error);
  if (given.count("help") != 0) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const settings s = interpret(given);
  if (!s.probe.empty()) return run_probe(s);
  if (!s.json_path.empty()) popalloc::io::check_output_path(s.json_path);
  run_record record;
  record.load_start = read_load();
  print_load("start", record.load_start, s);
  bool ok = true;
  if (s.memory) {
    record.memory = run_memory(s, ok);
  } else {
    record.cells = run_grid(s);
    record.groups = summarize(record.cells, s);
    print_summary(record.groups, s);
    for (const cell& c : record.cells) ok = ok && c.certified();
  }
  record.load_end = read_load();
  print_load("end", record.load_end, s);
  if (!s.json_path.empty()) write_json(s.json_path, record, s);
  if (!ok) std::fprintf(stderr, "bench_families: some cell has no finite certificate\n");
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace bench_families

int main(int argc, char** argv) {
  try {
    return bench_families::run(argc, argv);
  } catch (const bench_families::usage_failure& e) {
    std::fprintf(stderr, "bench_families: %s\n", e.what());
    return 2;
  } catch (const popalloc::io::input_error& e) {
    std::fprintf(stderr, "bench_families: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "bench_families: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_families: internal error: %s\n", e.what());
    return 1;
  }
}
