// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief popalloc against COIN-OR CLP on the same instances, side by side, plus a scaling table.
///
/// Prints, for linear and target-priority utilities, the exact LP optimum and CLP's solve time
/// (dual simplex, model building excluded), popalloc's median time to a 1e-4 relative gap over
/// repeated solves and the speed ratio measured in the same run; then popalloc's time,
/// evaluations and gap for n in {1e3 .. 1e6} at m = 8 and m in {4, 16, 64} at n = 1e5.
///
///   ./build/bench/benchmarks/bench_vs_clp [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>

#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

#if POPALLOC_BENCH_HAVE_CLP
#include "support/lp_reference.hpp"
#endif

namespace {

/// Solves repeatedly, at least `min_runs` times and for at least `min_seconds`, and sets
/// `seconds` to the median time: a single run or the best of a few is at the mercy of a noisy
/// shared machine (the first solves in a process also pay for starting threads and touching
/// fresh memory), while CLP's seconds-long solves average that noise out by themselves.
template <class Utility>
popalloc::solve_result median_time(const popalloc::dense_problem<double>& p, const Utility& u,
                                   double gap, double& seconds) {
  constexpr int min_runs = 5, max_runs = 500;
  constexpr double min_seconds = 1.0;
  popalloc::solver_options o;
  o.relative_gap = gap;
  popalloc::solve_result r;
  std::vector<double> times;
  double total = 0.0;
  while (times.size() < static_cast<std::size_t>(max_runs) &&
         (times.size() < static_cast<std::size_t>(min_runs) || total < min_seconds)) {
    const auto start = std::chrono::steady_clock::now();
    r = popalloc::solve(p, u, o);
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    total += times.back();
  }
  const auto middle = times.begin() + static_cast<std::ptrdiff_t>(times.size() / 2);
  std::nth_element(times.begin(), middle, times.end());
  seconds = *middle;
  return r;
}

#if POPALLOC_BENCH_HAVE_CLP
template <class Utility>
void compare(const char* name, const Utility& u, popalloc_test::lp_utility kind, int n, int m) {
  const auto p = popalloc_test::random_problem(n, m, 42);
  const Eigen::VectorXd w = p.weight, target = p.target;
  const auto lp = popalloc_test::solve_lp(
      popalloc_test::make_dense_lp(p.throughput, p.capacity, w, &target, kind));
  double seconds = 0.0;
  const auto r = median_time(p, u, 1e-4, seconds);
  const double error =
      (lp.objective - r.primal_objective) / std::max(std::abs(lp.objective), 1e-300);
  std::printf("%-16s %8d %3d %14.6f %10.4f %10.4f %9.0fx %11.2e %9s\n", name, n, m, lp.objective,
              lp.seconds, seconds, lp.seconds / seconds, error, popalloc::to_string(r.status));
}
#endif

template <class Utility>
void scaling_row(const char* name, const Utility& u, int n, int m) {
  const auto p = popalloc_test::random_problem(n, m, 1);
  double seconds = 0.0;
  const auto r = median_time(p, u, 1e-3, seconds);
  std::printf("%-16s %8d %3d %10.4f %6d %7d %10.2e %9s\n", name, n, m, seconds, r.iterations,
              r.sample_iterations, r.relative_gap, popalloc::to_string(r.status));
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
#if POPALLOC_BENCH_HAVE_CLP
  std::printf("popalloc (relative gap 1e-4) vs CLP (exact, dual simplex), same instance\n");
  std::printf("%-16s %8s %3s %14s %10s %10s %10s %11s %9s\n", "utility", "n", "m", "LP optimum",
              "CLP s", "popalloc s", "speed-up", "rel. error", "status");
  for (const int n : {1000, 10000}) {
    compare("linear", popalloc::utility::linear{}, popalloc_test::lp_utility::linear, n, 8);
    compare("target-priority", popalloc::utility::target_priority{},
            popalloc_test::lp_utility::target_priority, n, 8);
  }
#else
  std::printf("(built without COIN-OR CLP: no LP comparison)\n");
#endif
  std::printf("\npopalloc to a 1e-3 relative gap (median of repeated solves)\n");
  std::printf("%-16s %8s %3s %10s %6s %7s %10s %9s\n", "utility", "n", "m", "seconds", "evals",
              "sample", "gap", "status");
  const int largest = quick ? 100000 : 1000000;
  for (int n = 1000; n <= largest; n *= 10) {
    scaling_row("target-priority", popalloc::utility::target_priority{}, n, 8);
    scaling_row("log", popalloc::utility::log{}, n, 8);
  }
  for (const int m : {4, 16, 64}) {
    scaling_row("target-priority", popalloc::utility::target_priority{}, 100000, m);
    scaling_row("log", popalloc::utility::log{}, 100000, m);
  }
  return 0;
}
