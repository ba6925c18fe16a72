// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Device check of the Thrust CUDA backend: results against the CPU backend on fresh
/// random instances, then solve times for n in {1e5, 1e6, 1e7, 1e8} x m = 8 timed with CUDA
/// events. Run by benchmarks/gpu/run.sh on a machine with an NVIDIA GPU.
///
///   popalloc_gpu_check [max_n]     (default 1e8; exits 1 if a check fails)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

#include <cuda_runtime.h>

#include <popalloc/backend/thrust.hpp>
#include <popalloc/popalloc.hpp>

namespace {

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

/// Heterogeneous jobs: resource j is (j + 1) times faster on average; contended capacities.
popalloc::dense_problem<float> make_problem(std::int64_t n, int m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  popalloc::dense_problem<float> p;
  p.throughput.resize(n, m);
  for (std::int64_t i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j)
      p.throughput(i, j) = static_cast<float>(uniform(rng, 0.1, 1.0) * (j + 1));
  p.capacity.resize(m);
  for (int j = 0; j < m; ++j)
    p.capacity[j] = uniform(rng, 0.1, 1.0) * static_cast<double>(n) / m * 0.5;
  p.weight.resize(n);
  p.target.resize(n);
  for (std::int64_t i = 0; i < n; ++i) {
    p.weight[i] = (rng() % 2 == 0) ? 1.0f : 2.0f;
    p.target[i] = static_cast<float>(0.5 * uniform(rng, 0.1, 1.0) * m);
  }
  return p;
}

double feasibility_violation(const popalloc::dense_problem<float>& p,
                             const popalloc::solve_result& r) {
  Eigen::VectorXd usage = Eigen::VectorXd::Zero(p.resources());
  double worst = 0.0;
  for (std::size_t i = 0; i < r.allocation.jobs(); ++i) {
    double total = 0.0;
    for (auto k = r.allocation.job_offset[i]; k < r.allocation.job_offset[i + 1]; ++k) {
      const double x = r.allocation.fraction[static_cast<std::size_t>(k)];
      usage[r.allocation.option[static_cast<std::size_t>(k)]] += x;
      total += x;
    }
    worst = std::max(worst, total - 1.0);
  }
  return std::max(worst, (usage - p.capacity).maxCoeff());
}

template <class Utility>
bool check_against_cpu(const char* name, const Utility& u, std::int64_t n) {
  const auto p = make_problem(n, 8, 1000 + static_cast<std::uint64_t>(n));
  popalloc::solver_options o;
  o.relative_gap = 1e-4;
  const auto cpu = popalloc::solve<popalloc::backend::cpu>(p, u, o);
  const auto gpu = popalloc::solve<popalloc::backend::thrust>(p, u, o);
  // Both are certified to 1e-4: their objectives bracket the same optimum.
  const double scale = std::max(std::abs(cpu.dual_bound), std::abs(gpu.dual_bound));
  const bool bracket = gpu.primal_objective <= cpu.dual_bound + 1e-9 * scale &&
                       cpu.primal_objective <= gpu.dual_bound + 1e-9 * scale;
  const double violation = feasibility_violation(p, gpu);
  const bool ok = gpu.status == popalloc::solve_status::converged && bracket && violation <= 0.0;
  std::printf("check %-16s n=%-9lld cpu %.10g [%s, %d evals]  gpu %.10g [%s, %d evals]  %s\n", name,
              static_cast<long long>(n), cpu.primal_objective, popalloc::to_string(cpu.status),
              cpu.iterations, gpu.primal_objective, popalloc::to_string(gpu.status), gpu.iterations,
              ok ? "OK" : "FAILED");
  return ok;
}

template <class Utility>
void time_row(const char* name, const Utility& u, std::int64_t n) {
  const auto p = make_problem(n, 8, 7);
  popalloc::solver_options o;
  o.relative_gap = 1e-3;
  (void)popalloc::solve<popalloc::backend::thrust>(p, u, o);  // warm-up: context, allocations
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaEventRecord(start);
  const auto r = popalloc::solve<popalloc::backend::thrust>(p, u, o);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float total_ms = 0.0f;
  cudaEventElapsedTime(&total_ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::printf("| %-15s | %11lld | %5d | %9.2e | %-15s | %10.2f | %10.2f | %9.3f |\n", name,
              static_cast<long long>(n), r.iterations, r.relative_gap,
              popalloc::to_string(r.status), total_ms, 1e3 * r.timings.solve_seconds,
              1e3 * r.timings.evaluate_seconds / std::max(1, r.iterations));
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t max_n = argc > 1 ? std::atoll(argv[1]) : 100000000;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::printf("no CUDA device\n");
    return 2;
  }
  std::printf("device: %s, %.0f GiB\n", prop.name,
              static_cast<double>(prop.totalGlobalMem) / (1 << 30));
  bool ok = true;
  for (const std::int64_t n : {std::int64_t{100000}, std::int64_t{1000000}}) {
    ok = check_against_cpu("target-priority", popalloc::utility::target_priority{}, n) && ok;
    ok = check_against_cpu("log", popalloc::utility::log{}, n) && ok;
    ok = check_against_cpu("linear", popalloc::utility::linear{}, n) && ok;
  }
  std::printf(
      "\n| utility         |           n | evals |       gap | status          |"
      "   total ms |   solve ms | ms / eval |\n|---|---|---|---|---|---|---|---|\n");
  for (std::int64_t n = 100000; n <= max_n; n *= 10) {
    time_row("target-priority", popalloc::utility::target_priority{}, n);
    time_row("log", popalloc::utility::log{}, n);
  }
  return ok ? 0 : 1;
}
