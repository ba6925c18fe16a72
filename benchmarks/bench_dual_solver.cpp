// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Google Benchmark: time to a 1e-3 relative gap for n jobs x m resources.
///
///   cmake --preset bench && cmake --build --preset bench &&
///   ./build/bench/benchmarks/bench_dual_solver
#include <benchmark/benchmark.h>

#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

namespace {

template <class Utility>
void solve_to_gap(benchmark::State& state, Utility utility) {
  const auto n = static_cast<int>(state.range(0));
  const auto m = static_cast<int>(state.range(1));
  const auto problem = popalloc_test::random_problem(n, m, 1);
  popalloc::solver_options options;
  options.relative_gap = 1e-3;
  popalloc::solve_result result;
  for (auto _ : state) {
    result = popalloc::solve(problem, utility, options);
    benchmark::DoNotOptimize(result.primal_objective);
  }
  state.counters["evaluations"] = result.iterations;
  state.counters["gap"] = result.relative_gap;
  state.counters["converged"] = result.status == popalloc::solve_status::converged ? 1 : 0;
  state.counters["jobs_per_s"] =
      benchmark::Counter(static_cast<double>(n), benchmark::Counter::kIsIterationInvariantRate);
}

void sizes(benchmark::internal::Benchmark* b) {
  for (const int n : {1000, 10000, 100000, 1000000}) b->Args({n, 8});
  for (const int m : {4, 16, 64}) b->Args({100000, m});
  b->UseRealTime()->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK_CAPTURE(solve_to_gap, target_priority, popalloc::utility::target_priority{})
    ->Apply(sizes);
BENCHMARK_CAPTURE(solve_to_gap, log, popalloc::utility::log{})->Apply(sizes);
BENCHMARK_CAPTURE(solve_to_gap, linear, popalloc::utility::linear{})->Apply(sizes);
