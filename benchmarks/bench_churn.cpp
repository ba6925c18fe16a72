// SPDX-License-Identifier: Apache-2.0
// bench_churn: re-planning after churn. For each instance family x utility x job count, the
// jobs go into an incremental_solver and are solved once; then, for each churn rate in turn, that
// share of the jobs changes (a third leave, as many arrive from the same family, a third have
// their throughputs scaled by U(0.5, 1.5)) and the changed problem is solved three ways in the
// same run: cold (popalloc::solve, sample start included), warm (popalloc::solve from the last
// plan's prices) and incremental (incremental_solver::solve). Prints one row per cell and, per
// (n, churn), the median and the worst ratio to the cold solve over the families and utilities.
// A plain program: `bench_churn --help`; docs/benchmarks.md, "Re-planning".
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <new>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <popalloc/popalloc.hpp>

#include "../examples/common/command_line.hpp"
#include "families.hpp"

namespace bench_churn {
namespace {

constexpr const char* kUsage = R"(Usage: bench_churn [options]

Re-planning after churn: the jobs of each family x utility x job count are solved once through
popalloc::incremental_solver; then, for each churn rate in turn (each on top of the last), that
share of the jobs changes (a third leave, as many arrive, a third are re-profiled: throughputs
x U(0.5, 1.5)) and the changed problem is solved cold (popalloc::solve), warm (popalloc::solve
from the last plan's prices) and incremental (incremental_solver::solve), in the same run.
With --replans K, each churn rate is applied K times in a row, each a re-plan of its own (a
scheduler's steady state: the first re-plan after the first solve also sets up the solver's
buffers).

  --families LIST   family specs (default: generations, uniform, classes, classes:tight,
                    classes:reachable, gavel, paper, sparse)
  --utilities LIST  linear, target-priority, log (default: all three)
  --sizes LIST      job counts n >= 100 (default 100000,1000000)
  --churn LIST      shares of the jobs changed per re-plan, in (0, 1] (default 0.001,0.01,0.1)
  --resources M     resource count (default 8; gavel always 3)
  --threads T       popalloc's threads (default 2)
  --tolerance TOL   relative duality gap (default 1e-3)
  --seed S          instance seed (default 1; arrivals use S + 1, changes S + 2)
  --replans K       re-plans per churn rate (default 1)
  --help

Columns: the re-plan's number at its churn rate, wall seconds and dual evaluations (cold: full + sample) of each solve, the incremental
and warm solves' time over the cold one's, and "agree": whether each of the incremental and cold
objectives lies below the other's dual bound (both certificates hold for the same problem).
Exit status: 0 every solve converged and agreed, 1 otherwise, 2 usage error.
)";

using popalloc_cli::option_spec;
constexpr option_spec kOptions[] = {
    {"families", true},  {"utilities", true}, {"sizes", true},     {"churn", true},
    {"resources", true}, {"threads", true},   {"tolerance", true}, {"seed", true},
    {"replans", true},   {"help", false},
};

struct usage_failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void usage_error(const std::string& what) {
  throw usage_failure(what + " (see bench_churn --help)");
}

std::vector<std::string> split(const std::string& text, const std::string& what) {
  std::vector<std::string> items;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(',', start);
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
  if (text.empty() || error != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value))
    usage_error(what + ": '" + text + "' is not a number");
  return value;
}

std::int64_t parse_count(const std::string& text, const std::string& what, std::int64_t minimum,
                         std::int64_t maximum) {
  const double value = parse_number(text, what);
  if (value != std::floor(value) || value < static_cast<double>(minimum) ||
      value > static_cast<double>(maximum))
    usage_error(what + ": '" + text + "' must be a whole number in [" + std::to_string(minimum) +
                ", " + std::to_string(maximum) + "]");
  return static_cast<std::int64_t>(value);
}

enum class utility_kind { linear, target_priority, log };

const char* name_of(utility_kind kind) {
  switch (kind) {
    case utility_kind::linear:
      return "linear";
    case utility_kind::target_priority:
      return "target-priority";
    case utility_kind::log:
      break;
  }
  return "log";
}

struct settings {
  std::vector<std::string> families{"generations",       "uniform", "classes", "classes:tight",
                                    "classes:reachable", "gavel",   "paper",   "sparse"};
  std::vector<utility_kind> utilities{utility_kind::linear, utility_kind::target_priority,
                                      utility_kind::log};
  std::vector<std::int64_t> sizes{100'000, 1'000'000};
  std::vector<double> churn{0.001, 0.01, 0.1};
  std::int64_t resources = 8;
  int threads = 2;
  double tolerance = 1e-3;
  std::uint64_t seed = 1;
  int replans = 1;
};

settings interpret(const popalloc_cli::given_options& given) {
  settings s;
  if (auto f = given.find("families"); f != given.end()) {
    s.families.clear();
    for (const std::string& item : split(f->second, "--families")) {
      try {
        s.families.push_back(popalloc_solve::to_string(popalloc_solve::parse_family(item)));
      } catch (const std::invalid_argument& e) {
        usage_error(std::string("--families: ") + e.what());
      }
    }
  }
  if (auto u = given.find("utilities"); u != given.end()) {
    s.utilities.clear();
    for (const std::string& item : split(u->second, "--utilities")) {
      if (item == "linear") {
        s.utilities.push_back(utility_kind::linear);
      } else if (item == "target-priority" || item == "target_priority") {
        s.utilities.push_back(utility_kind::target_priority);
      } else if (item == "log") {
        s.utilities.push_back(utility_kind::log);
      } else {
        usage_error("--utilities: unknown utility '" + item + "' (linear, target-priority, log)");
      }
    }
  }
  if (auto n = given.find("sizes"); n != given.end()) {
    s.sizes.clear();
    for (const std::string& item : split(n->second, "--sizes"))
      s.sizes.push_back(parse_count(item, "--sizes", 100, 1LL << 30));
  }
  if (auto c = given.find("churn"); c != given.end()) {
    s.churn.clear();
    for (const std::string& item : split(c->second, "--churn")) {
      const double share = parse_number(item, "--churn");
      if (!(share > 0.0 && share <= 1.0)) usage_error("--churn: '" + item + "' is not in (0, 1]");
      s.churn.push_back(share);
    }
  }
  if (auto m = given.find("resources"); m != given.end())
    s.resources = parse_count(m->second, "--resources", 1, 1 << 16);
  if (auto t = given.find("threads"); t != given.end())
    s.threads = static_cast<int>(parse_count(t->second, "--threads", 1, 4096));
  if (auto t = given.find("tolerance"); t != given.end()) {
    s.tolerance = parse_number(t->second, "--tolerance");
    if (!(s.tolerance > 0.0 && s.tolerance < 1.0)) usage_error("--tolerance must be in (0, 1)");
  }
  if (auto v = given.find("seed"); v != given.end())
    s.seed = static_cast<std::uint64_t>(parse_count(v->second, "--seed", 0, 1LL << 52));
  if (auto k = given.find("replans"); k != given.end())
    s.replans = static_cast<int>(parse_count(k->second, "--replans", 1, 1000));
  return s;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// One re-plan: the three solves of the changed problem.
struct cell {
  std::string family, utility;
  std::int64_t jobs = 0;
  double churn = 0.0;
  int replan = 1;
  double cold_s = 0.0, warm_s = 0.0, incremental_s = 0.0;
  int cold_evals = 0, cold_sample = 0, warm_evals = 0, incremental_evals = 0;
  bool converged = false, agree = false;
};

/// Applies `share` of churn to `solver`: departures, arrivals (rows of `pool` from `next`),
/// throughput updates.
template <class Solver>
void apply_churn(Solver& solver, const popalloc::dense_problem<double>& pool, std::int64_t& next,
                 double share, bool targets, std::mt19937_64& random) {
  const auto changes = std::max<std::int64_t>(
      3, static_cast<std::int64_t>(std::llround(share * static_cast<double>(solver.jobs()))));
  std::uniform_real_distribution<double> factor(0.5, 1.5);
  for (std::int64_t k = 0; k < changes; ++k) {
    const auto& ids = solver.job_ids();
    const auto pick = [&] { return ids[random() % ids.size()]; };
    switch (k % 3) {
      case 0:
        solver.remove_job(pick());
        break;
      case 1: {
        const Eigen::Index i = next++ % pool.jobs();
        solver.add_job(pool.throughput.row(i), pool.weight.size() != 0 ? pool.weight[i] : 1.0,
                       targets ? pool.target[i] : 0.0,
                       pool.job_demand.size() != 0 ? pool.job_demand[i] : 1.0);
        break;
      }
      default: {
        const auto id = pick();
        const Eigen::RowVectorXd scaled =
            solver.problem().throughput.row(solver.row_of(id)) * factor(random);
        solver.update_throughput(id, scaled);
      }
    }
  }
}

/// The three solves of the problem `solver` holds now; `plan`: its last answer (updated).
template <class Utility>
cell replan(popalloc::incremental_solver<Utility>& solver, const popalloc::solver_options& options,
            const popalloc::solve_result*& plan) {
  cell c;
  const popalloc::dense_problem<double>& changed = solver.problem();
  auto start = std::chrono::steady_clock::now();
  const popalloc::solve_result cold = popalloc::solve(changed, Utility{}, options);
  c.cold_s = seconds_since(start);
  popalloc::solver_options warm_options = options;
  warm_options.warm_start_prices = plan->prices;
  start = std::chrono::steady_clock::now();
  const popalloc::solve_result warm = popalloc::solve(changed, Utility{}, warm_options);
  c.warm_s = seconds_since(start);
  start = std::chrono::steady_clock::now();
  plan = &solver.solve();
  c.incremental_s = seconds_since(start);
  c.cold_evals = cold.iterations;
  c.cold_sample = cold.sample_iterations;
  c.warm_evals = warm.iterations;
  c.incremental_evals = plan->iterations;
  const auto ok = popalloc::solve_status::converged;
  c.converged = cold.status == ok && warm.status == ok && plan->status == ok;
  const double rounding = 1e-9 * (std::abs(cold.dual_bound) + std::abs(plan->dual_bound));
  c.agree = plan->primal_objective <= cold.dual_bound + rounding &&
            cold.primal_objective <= plan->dual_bound + rounding;
  return c;
}

template <class Utility>
std::vector<cell> run_family(const settings& s, const std::string& family, std::int64_t n) {
  const popalloc_solve::family_spec spec = popalloc_solve::parse_family(family);
  const std::int64_t m = spec.family == "gavel" ? 3 : s.resources;
  popalloc::dense_problem<double> jobs = popalloc_solve::generate_family(spec, n, m, s.seed);
  popalloc::dense_problem<double> pool = popalloc_solve::generate_family(spec, n, m, s.seed + 1);
  if (!Utility::uses_target) jobs.target.resize(0), pool.target.resize(0);
  popalloc::solver_options options;
  options.relative_gap = s.tolerance;
  options.threads = s.threads;
  popalloc::incremental_solver<Utility> solver(jobs.capacity, options);
  solver.add_jobs(jobs);
  // The solver's own answer, valid until its next solve(): what a scheduler reads, not a copy.
  const popalloc::solve_result* plan = &solver.solve();
  std::mt19937_64 random(s.seed + 2);
  std::int64_t next_arrival = 0;
  std::vector<cell> cells;
  for (const double share : s.churn)
    for (int k = 1; k <= s.replans; ++k) {
      apply_churn(solver, pool, next_arrival, share, Utility::uses_target, random);
      cell c = replan<Utility>(solver, options, plan);
      c.family = family;
      c.utility = name_of(Utility::uses_target        ? utility_kind::target_priority
                          : Utility::piecewise_linear ? utility_kind::linear
                                                      : utility_kind::log);
      c.jobs = n;
      c.churn = share;
      c.replan = k;
      std::printf(
          "| %-18s | %-15s | %8lld | %6.2f%% | %2d | %7.3f (%2d+%2d) | %7.3f (%2d) | %7.3f (%2d) "
          "| %5.2f | %5.2f | %s |\n",
          c.family.c_str(), c.utility.c_str(), static_cast<long long>(n), 100.0 * share, k,
          c.cold_s, c.cold_evals, c.cold_sample, c.warm_s, c.warm_evals, c.incremental_s,
          c.incremental_evals, c.incremental_s / c.cold_s, c.warm_s / c.cold_s,
          c.converged && c.agree ? "yes" : (c.converged ? "NO" : "not converged"));
      std::fflush(stdout);
      cells.push_back(c);
    }
  return cells;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t k = v.size() / 2;
  return v.size() % 2 == 1 ? v[k] : 0.5 * (v[k - 1] + v[k]);
}

void print_summary(const settings& s, const std::vector<cell>& cells) {
  std::printf(
      "\n| n | churn | incremental / cold: median | worst (family, utility) "
      "| warm / cold: median | worst |\n|---|---|---|---|---|---|\n");
  for (const std::int64_t n : s.sizes)
    for (const double share : s.churn) {
      std::vector<double> inc, warm;
      const cell* worst = nullptr;
      double worst_warm = 0.0;
      for (const cell& c : cells) {
        if (c.jobs != n || c.churn != share) continue;
        inc.push_back(c.incremental_s / c.cold_s);
        warm.push_back(c.warm_s / c.cold_s);
        worst_warm = std::max(worst_warm, warm.back());
        if (worst == nullptr || inc.back() > worst->incremental_s / worst->cold_s) worst = &c;
      }
      if (worst == nullptr) continue;
      std::printf("| %lld | %.2f%% | %.2f | %.2f (%s, %s) | %.2f | %.2f |\n",
                  static_cast<long long>(n), 100.0 * share, median(inc),
                  worst->incremental_s / worst->cold_s, worst->family.c_str(),
                  worst->utility.c_str(), median(warm), worst_warm);
    }
}

int run(int argc, char** argv) {
  const popalloc_cli::given_options given =
      popalloc_cli::parse_arguments(argc, argv, kOptions, usage_error);
  if (given.count("help") != 0) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const settings s = interpret(given);
  std::printf(
      "| family | utility | n | churn | re-plan | cold s (evals+sample) | warm s (evals) "
      "| incremental s (evals) | inc/cold | warm/cold | agree |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<cell> cells;
  for (const std::int64_t n : s.sizes)
    for (const std::string& family : s.families)
      for (const utility_kind utility : s.utilities) {
        std::vector<cell> more;
        if (utility == utility_kind::linear) {
          more = run_family<popalloc::utility::linear>(s, family, n);
        } else if (utility == utility_kind::target_priority) {
          more = run_family<popalloc::utility::target_priority>(s, family, n);
        } else {
          more = run_family<popalloc::utility::log>(s, family, n);
        }
        cells.insert(cells.end(), more.begin(), more.end());
      }
  print_summary(s, cells);
  const bool all_good =
      std::all_of(cells.begin(), cells.end(), [](const cell& c) { return c.converged && c.agree; });
  return all_good ? 0 : 1;
}

}  // namespace
}  // namespace bench_churn

int main(int argc, char** argv) {
  try {
    return bench_churn::run(argc, argv);
  } catch (const bench_churn::usage_failure& e) {
    std::fprintf(stderr, "bench_churn: %s\n", e.what());
    return 2;
  } catch (const std::bad_alloc&) {
    std::fprintf(stderr, "bench_churn: out of memory\n");
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_churn: %s\n", e.what());
    return 1;
  }
}
