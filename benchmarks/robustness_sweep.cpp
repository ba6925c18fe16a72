// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Small random problems across the supported range of capacities, weights and targets:
/// how many converge, per utility, and which do not. Every answer must be finite and feasible
/// whatever its status (the exit status checks that).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <random>
#include <string>

#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

namespace {

constexpr const char* usage_text = R"(Usage: robustness_sweep [options]

Solves --trials random problems of 1-6 jobs and 1-4 resources under linear, target-priority and
log utilities: throughputs U(0.1, 2) (a quarter of them 0, at least one positive per job),
capacities drawn from {1e-12, 1e-9, 1e-6, 1e-3, 1, 50}, weights from {1e-3, 1, 1e3}, targets
from the capacities' grid times U(0.1, 2). Prints the count of each status per utility and the
first --show problems of each utility and status other than converged, and how many of each
utility's converged problems the interior-point finish completed (docs/method.md).

  --trials N       problems (default 1000)
  --seed S         (default 5)
  --tolerance TOL  relative duality gap (default 1e-4)
  --show K         problems listed per utility and status (default 3)
  --no-interior-point
                   solve without the interior-point finish (the price iterations alone)
  --require-converged LIST
                   utilities (linear, target-priority, log; comma-separated) whose every
                   problem must converge (default: none)
  --help

Exit status 1 when an answer is not finite or not feasible (any status), or a problem of a
--require-converged utility does not converge; 2 on a usage error.
)";

struct sweep_options {
  int trials = 1000;
  unsigned long seed = 5;
  double tolerance = 1e-4;
  int show = 3;
  bool interior_point = true;
  std::string require_converged;  ///< ",linear,log," style list
};

[[noreturn]] void usage_error(const std::string& what) {
  std::fprintf(stderr, "robustness_sweep: %s\n", what.c_str());
  std::exit(2);
}

double parse_number(const char* text, const char* flag, double lo, double hi) {
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == text || *end != '\0' || !(value >= lo && value <= hi))
    usage_error(std::string(flag) + " takes a number in [" + std::to_string(lo) + ", " +
                std::to_string(hi) + "], got '" + text + "'");
  return value;
}

sweep_options parse(int argc, char** argv) {
  sweep_options o;
  for (int k = 1; k < argc; ++k) {
    const std::string flag = argv[k];
    if (flag == "--help") {
      std::fputs(usage_text, stdout);
      std::exit(0);
    }
    if (flag == "--no-interior-point") {
      o.interior_point = false;
      continue;
    }
    if (k + 1 >= argc) usage_error("unknown option or missing value: '" + flag + "'");
    const char* value = argv[++k];
    if (flag == "--trials") {
      o.trials = static_cast<int>(parse_number(value, "--trials", 1, 1e7));
    } else if (flag == "--seed") {
      o.seed = static_cast<unsigned long>(parse_number(value, "--seed", 0, 4e9));
    } else if (flag == "--tolerance") {
      o.tolerance = parse_number(value, "--tolerance", 1e-12, 0.1);
    } else if (flag == "--show") {
      o.show = static_cast<int>(parse_number(value, "--show", 0, 1e6));
    } else if (flag == "--require-converged") {
      o.require_converged = std::string(",") + value + ",";
      for (std::size_t at = 1; at < o.require_converged.size();) {
        const std::size_t end = o.require_converged.find(',', at);
        const std::string name = o.require_converged.substr(at, end - at);
        if (name != "linear" && name != "target-priority" && name != "log")
          usage_error("--require-converged takes linear, target-priority and log, got '" + name +
                      "'");
        at = end + 1;
      }
    } else {
      usage_error("unknown option '" + flag + "'");
    }
  }
  return o;
}

std::string describe(const popalloc::dense_problem<double>& p) {
  std::string out = std::to_string(p.jobs()) + " jobs, capacities";
  char number[32];
  for (Eigen::Index j = 0; j < p.resources(); ++j) {
    std::snprintf(number, sizeof number, " %g", p.capacity[j]);
    out += number;
  }
  out += ", weights";
  for (Eigen::Index i = 0; i < p.jobs(); ++i) {
    std::snprintf(number, sizeof number, " %g", p.weight[i]);
    out += number;
  }
  return out;
}

template <class Utility>
bool run(const popalloc::dense_problem<double>& p, const Utility& utility, const char* name,
         int trial, const sweep_options& options, std::map<std::string, int>& counts) {
  popalloc::solver_options o;
  o.relative_gap = options.tolerance;
  o.threads = 1;
  o.interior_point_finish = options.interior_point;
  const auto r = popalloc::solve(p, utility, o);
  const std::string key = std::string(name) + " " + popalloc::to_string(r.status);
  const int seen = ++counts[key];
  if (r.status == popalloc::solve_status::converged && r.interior_point_steps > 0)
    ++counts[std::string(name) + " converged by the finish"];
  if (r.status != popalloc::solve_status::converged && seen <= options.show)
    std::printf("trial %d, %s: %s, objective %.9g, bound %.9g, relative gap %.2e (%s)\n", trial,
                name, popalloc::to_string(r.status), r.primal_objective, r.dual_bound,
                r.relative_gap, describe(p).c_str());
  const bool finite = r.throughput.allFinite() && r.prices.allFinite() &&
                      !std::isnan(r.primal_objective) && !std::isnan(r.dual_bound);
  const bool feasible = popalloc_test::allocation_violation(p, r) <= 0.0;
  if (!finite || !feasible)
    std::printf("trial %d, %s: %s answer (%s)\n", trial, name, finite ? "infeasible" : "non-finite",
                describe(p).c_str());
  const bool required =
      options.require_converged.find(std::string(",") + name + ",") != std::string::npos;
  if (required && r.status != popalloc::solve_status::converged)
    std::printf("trial %d, %s: %s, required to converge (%s)\n", trial, name,
                popalloc::to_string(r.status), describe(p).c_str());
  return finite && feasible && (!required || r.status == popalloc::solve_status::converged);
}

}  // namespace

int main(int argc, char** argv) {
  const sweep_options options = parse(argc, argv);
  std::mt19937_64 rng(options.seed);
  std::map<std::string, int> counts;
  bool sound = true;
  for (int trial = 0; trial < options.trials; ++trial) {
    const auto p = popalloc_test::wide_range_problem(rng);
    sound &= run(p, popalloc::utility::linear{}, "linear", trial, options, counts);
    sound &=
        run(p, popalloc::utility::target_priority{}, "target-priority", trial, options, counts);
    sound &= run(p, popalloc::utility::log{}, "log", trial, options, counts);
  }
  std::printf("\n%d problems, tolerance %g, seed %lu%s:\n", options.trials, options.tolerance,
              options.seed, options.interior_point ? "" : ", no interior-point finish");
  for (const auto& [key, count] : counts) std::printf("  %-40s %d\n", key.c_str(), count);
  return sound ? 0 : 1;
}
