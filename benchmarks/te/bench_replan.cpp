// SPDX-License-Identifier: Apache-2.0
// Re-planning a drifted traffic matrix: te::replan_price from the last answer against a cold
// te::solve_price of the same drifted instance, measured in the same run.
//   bench_te_replan FILE... [--scale S] [--drift F] [--rounds R] [--tolerance TOL]
//                   [--threads T] [--objectives LIST]
// For every topology file (gravity traffic matrix, seed 0, 4 edge-disjoint paths) and objective,
// round 0 is a cold solve; each later round multiplies every demand by its own factor, uniform in
// [1 - F, 1 + F] around the last round's (seeded by the round), and solves the result cold and
// as a re-plan from the last re-plan's answer. Prints one line per (topology, objective): the
// median and worst re-plan/cold time ratio over the rounds, core solves and dual evaluations of
// both. Exit status 1 when an answer is not converged or the two answers disagree (each
// objective must lie within the other's certified bound, to the tolerance).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <popalloc/random.hpp>
#include <popalloc/te.hpp>

namespace te = popalloc::te;

namespace {

struct settings {
  std::vector<std::string> files;
  double scale = 8.0;
  double drift = 0.05;
  int rounds = 5;
  double tolerance = 1e-5;
  int threads = 0;
  // Total flow re-plans solve cold (te::replan_price): nothing to compare by default.
  std::vector<te::te_objective> objectives{te::te_objective::concurrent_flow,
                                           te::te_objective::min_max_utilization};
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "bench_te_replan: %s\nusage: bench_te_replan FILE... [--scale S] [--drift F] "
               "[--rounds R] [--tolerance TOL] [--threads T] [--objectives a,b,...]\n",
               why.c_str());
  std::exit(2);
}

double number(const std::string& text, const std::string& flag, double low, double high) {
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !(v >= low && v <= high))
    usage(flag + " needs a number in [" + std::to_string(low) + ", " + std::to_string(high) + "]");
  return v;
}

std::vector<te::te_objective> objectives_of(const std::string& list) {
  std::vector<te::te_objective> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    out.push_back(te::parse_te_objective(list.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

settings parse(int argc, char** argv) {
  settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--", 0) != 0) {
      s.files.push_back(arg);
      continue;
    }
    if (i + 1 >= argc) usage(arg + " needs a value");
    const std::string value = argv[++i];
    if (arg == "--scale") {
      s.scale = number(value, arg, 1e-6, 1e6);
    } else if (arg == "--drift") {
      s.drift = number(value, arg, 0.0, 0.9);
    } else if (arg == "--rounds") {
      s.rounds = static_cast<int>(number(value, arg, 1, 1000));
    } else if (arg == "--tolerance") {
      s.tolerance = number(value, arg, 1e-9, 0.1);
    } else if (arg == "--threads") {
      s.threads = static_cast<int>(number(value, arg, 0, 1024));
    } else if (arg == "--objectives") {
      s.objectives = objectives_of(value);
    } else {
      usage("unknown option " + arg);
    }
  }
  if (s.files.empty()) usage("no topology file");
  return s;
}

te::instance drifted(const te::instance& base, double drift, std::uint64_t seed) {
  te::instance out = base;
  popalloc::random_source rng(seed);
  for (te::commodity& c : out.commodities) c.demand *= 1.0 - drift + 2.0 * drift * rng.unit();
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

// Each answer's objective within the other's certified bound, to the tolerance.
bool agree(te::te_objective objective, const te::result& a, const te::result& b, double tol) {
  const double scale = std::max({std::abs(a.bound), std::abs(b.bound), 1e-300});
  if (objective == te::te_objective::min_max_utilization)
    return a.objective >= b.bound - tol * scale && b.objective >= a.bound - tol * scale;
  return a.objective <= b.bound + tol * scale && b.objective <= a.bound + tol * scale;
}

bool run(const std::string& file, te::te_objective objective, const settings& s) {
  const te::topology graph = te::load_topology(file);
  const auto matrix = te::generate_traffic(graph, te::traffic_model::gravity,
                                           te::default_traffic_parameters(graph.name), s.scale, 0);
  te::path_options paths;
  paths.threads = s.threads;
  te::instance inst = te::make_instance(graph, te::commodities_of(matrix, graph.nodes), paths);
  te::price_options options;
  options.solver.relative_gap = s.tolerance;
  options.solver.threads = s.threads;
  te::result last = te::solve_price(inst, objective, options);
  bool ok = last.status == te::solve_status::converged;
  std::vector<double> ratio, cold_seconds, warm_seconds;
  int cold_solves = 0, warm_solves = 0, cold_evaluations = 0, warm_evaluations = 0;
  for (int round = 1; round <= s.rounds; ++round) {
    inst = drifted(inst, s.drift, static_cast<std::uint64_t>(round));
    const te::result cold = te::solve_price(inst, objective, options);
    const te::result warm = te::replan_price(inst, objective, last, options);
    const bool converged =
        cold.status == te::solve_status::converged && warm.status == te::solve_status::converged;
    if (!converged || !agree(objective, cold, warm, s.tolerance)) {
      std::printf("  %s %s round %d: cold %s %.9g (bound %.9g), re-plan %s %.9g (bound %.9g)\n",
                  graph.name.c_str(), te::to_string(objective), round, te::to_string(cold.status),
                  cold.objective, cold.bound, te::to_string(warm.status), warm.objective,
                  warm.bound);
      ok = false;
    }
    ratio.push_back(warm.seconds / std::max(cold.seconds, 1e-9));
    cold_seconds.push_back(cold.seconds);
    warm_seconds.push_back(warm.seconds);
    cold_solves += cold.solves;
    warm_solves += warm.solves;
    cold_evaluations += cold.iterations;
    warm_evaluations += warm.iterations;
    last = warm;
  }
  std::printf("| %s | %s | %.3f | %.3f | %.3f | %.3f | %.1f / %.1f | %.1f / %.1f |\n",
              graph.name.c_str(), te::to_string(objective), median(cold_seconds),
              median(warm_seconds), median(ratio), *std::max_element(ratio.begin(), ratio.end()),
              double(cold_solves) / s.rounds, double(cold_evaluations) / s.rounds,
              double(warm_solves) / s.rounds, double(warm_evaluations) / s.rounds);
  std::fflush(stdout);
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const settings s = parse(argc, argv);
    std::printf(
        "scale %g, drift %g, %d rounds, tolerance %g\n"
        "| topology | objective | cold s (median) | re-plan s (median) | re-plan / cold: median "
        "| worst | cold solves / evaluations per round | re-plan solves / evaluations |\n"
        "|---|---|---|---|---|---|---|---|\n",
        s.scale, s.drift, s.rounds, s.tolerance);
    bool ok = true;
    for (const std::string& file : s.files)
      for (const te::te_objective objective : s.objectives) ok = run(file, objective, s) && ok;
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_te_replan: %s\n", e.what());
    return 2;
  }
}
