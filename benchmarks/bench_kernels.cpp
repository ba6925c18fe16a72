// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Google Benchmark: popalloc's kernels over n and m — one job's best response (the hull
/// walk, one thread), one dual evaluation (all jobs, OpenMP), and a whole solve.
///
/// Prices are the solver's own near-optimal prices for the instance (1e-3 gap, computed once,
/// outside the timed loop), so the walks are as long as they are near the optimum. Counters:
/// jobs_per_s (jobs processed per CPU second, all threads), evaluations (dual evaluations of a
/// solve), gap (its relative gap).
///
///   cmake --preset bench && cmake --build --preset bench --target bench_kernels &&
///   ./build/bench/benchmarks/bench_kernels --benchmark_counters_tabular=true
#include <cstdint>

#include <benchmark/benchmark.h>

#include <popalloc/detail/best_response.hpp>
#include <popalloc/detail/dense_view.hpp>
#include <popalloc/detail/engine.hpp>
#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

namespace {

template <class Utility>
Eigen::VectorXd optimal_prices(const popalloc::dense_problem<double>& problem,
                               const Utility& utility) {
  popalloc::solver_options options;
  options.relative_gap = 1e-3;  // near-optimal prices are enough to make the walks representative
  return popalloc::solve(problem, utility, options).prices;
}

popalloc::detail::dense_view<double> view_of(const popalloc::dense_problem<double>& p) {
  popalloc::detail::dense_view<double> v;
  v.throughput = p.throughput.data();
  v.weight = p.weight.size() != 0 ? p.weight.data() : nullptr;
  v.target = p.target.size() != 0 ? p.target.data() : nullptr;
  v.n = p.jobs();
  v.m = static_cast<std::int32_t>(p.resources());
  return v;
}

/// The per-job hull walk, sequentially over all jobs (one thread): cost per job and its scaling
/// in m, without threading or reduction.
template <class Utility>
void best_response(benchmark::State& state, Utility utility) {
  const auto n = static_cast<int>(state.range(0));
  const auto m = static_cast<int>(state.range(1));
  const auto problem = popalloc_test::random_problem(n, m, 1);
  const Eigen::VectorXd prices = optimal_prices(problem, utility);
  const auto view = view_of(problem);
  double walked = 0.0;
  for (auto _ : state) {
    double excess = 0.0;
    for (std::int64_t i = 0; i < n; ++i) {
      const auto s =
          popalloc::detail::walk_hull(view, i, prices.data(), utility, view.parameters(i), 0.0, -1);
      excess += s.excess;
      walked += s.right >= 0 ? 2.0 : 1.0;
    }
    benchmark::DoNotOptimize(excess);
  }
  state.counters["jobs_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["options_used"] =
      walked / (static_cast<double>(n) * static_cast<double>(state.iterations()));
}

/// One exact dual evaluation g(p), usage and (optionally) the generalized Hessian, on the CPU
/// backend with the OpenMP default thread count: what one iteration of the solver costs.
template <class Utility>
void dual_evaluation(benchmark::State& state, Utility utility, bool hessian) {
  const auto n = static_cast<int>(state.range(0));
  const auto m = static_cast<int>(state.range(1));
  const auto problem = popalloc_test::random_problem(n, m, 1);
  const Eigen::VectorXd prices = optimal_prices(problem, utility);
  using executor = popalloc::detail::host_executor;
  popalloc::detail::engine<executor, popalloc::dense_problem<double>, Utility> engine(
      problem, utility, executor(0));
  popalloc::detail::evaluation out;
  for (auto _ : state) {
    engine.evaluate(prices, 0.0, hessian, out);
    benchmark::DoNotOptimize(out.excess_exact);
  }
  state.counters["jobs_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

/// A whole solve to a 1e-4 relative gap from a cold start.
template <class Utility>
void whole_solve(benchmark::State& state, Utility utility) {
  const auto n = static_cast<int>(state.range(0));
  const auto m = static_cast<int>(state.range(1));
  const auto problem = popalloc_test::random_problem(n, m, 1);
  popalloc::solver_options options;
  options.relative_gap = 1e-4;
  popalloc::solve_result result;
  for (auto _ : state) {
    result = popalloc::solve(problem, utility, options);
    benchmark::DoNotOptimize(result.primal_objective);
  }
  state.counters["jobs_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["evaluations"] = result.iterations;
  state.counters["gap"] = result.relative_gap;
  state.counters["converged"] = result.status == popalloc::solve_status::converged ? 1 : 0;
}

void sizes(benchmark::internal::Benchmark* b) {
  for (const int n : {1000, 10000, 100000, 1000000}) b->Args({n, 8});
  for (const int m : {2, 4, 16, 64}) b->Args({100000, m});
  // Process CPU time (all threads) decides the iteration counts and the rates: on the shared
  // 2-core machine wall-clock time mostly measures the other users' load. Wall time is still
  // reported in the Time column.
  b->ArgNames({"n", "m"})->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);
}

using log_utility = popalloc::utility::log;
using popalloc::utility::target_priority;

}  // namespace

BENCHMARK_CAPTURE(best_response, target_priority, target_priority{})->Apply(sizes);
BENCHMARK_CAPTURE(best_response, log, log_utility{})->Apply(sizes);
BENCHMARK_CAPTURE(dual_evaluation, target_priority, target_priority{}, false)->Apply(sizes);
BENCHMARK_CAPTURE(dual_evaluation, log, log_utility{}, false)->Apply(sizes);
BENCHMARK_CAPTURE(dual_evaluation, log_with_hessian, log_utility{}, true)->Apply(sizes);
BENCHMARK_CAPTURE(whole_solve, target_priority, target_priority{})->Apply(sizes);
BENCHMARK_CAPTURE(whole_solve, log, log_utility{})->Apply(sizes);
