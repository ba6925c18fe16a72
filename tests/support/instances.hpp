// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Random test instances and allocation checks shared by the test files.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include <popalloc/popalloc.hpp>

#if POPALLOC_TEST_THRUST_BACKEND
#include <popalloc/backend/thrust.hpp>
#endif

namespace popalloc_test {

/// The backend every solver test runs on: popalloc_tests uses the CPU backend,
/// popalloc_tests_thrust the Thrust backend (OMP device system in CI).
#if POPALLOC_TEST_THRUST_BACKEND
using test_backend = popalloc::backend::thrust;
#else
using test_backend = popalloc::backend::cpu;
#endif

/// Portable uniform double in [lo, hi) from 53 random bits (std::uniform_real_distribution is
/// implementation-defined, which would make instances differ between standard libraries).
inline double uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

/// n jobs x m resources; resource j is (j+1) times faster on average; capacities make the
/// problem contended; weights in {1, 2}; targets below the best throughput.
inline popalloc::dense_problem<double> random_problem(int n, int m, int seed,
                                                      double capacity_factor = 0.5) {
  std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
  popalloc::dense_problem<double> p;
  p.throughput.resize(n, m);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) p.throughput(i, j) = uniform(rng, 0.1, 1.0) * (j + 1);
  p.capacity.resize(m);
  for (int j = 0; j < m; ++j) p.capacity[j] = uniform(rng, 0.1, 1.0) * n / m * capacity_factor;
  p.weight.resize(n);
  p.target.resize(n);
  for (int i = 0; i < n; ++i) {
    p.weight[i] = (rng() % 2 == 0) ? 1.0 : 2.0;
    p.target[i] = 0.5 * uniform(rng, 0.1, 1.0) * m;
  }
  return p;
}

/// Capacities and weights across popalloc's supported range (tests/test_scaling.cpp,
/// benchmarks/robustness_sweep.cpp).
inline constexpr double wide_capacities[] = {1e-12, 1e-9, 1e-6, 1e-3, 1.0, 50.0};
inline constexpr double wide_weights[] = {1e-3, 1.0, 1e3};

/// 1-6 jobs x 1-4 resources whose capacities (from wide_capacities) can lie 1e13 apart in one
/// problem and whose weights (from wide_weights) 1e6 apart: throughputs U(0.1, 2), a quarter of
/// them 0 (each job keeps a positive one), targets a capacity from wide_capacities times
/// U(0.1, 2).
inline popalloc::dense_problem<double> wide_range_problem(std::mt19937_64& rng) {
  const int n = 1 + static_cast<int>(rng() % 6), m = 1 + static_cast<int>(rng() % 4);
  popalloc::dense_problem<double> p;
  p.throughput.resize(n, m);
  p.capacity.resize(m);
  p.weight.resize(n);
  p.target.resize(n);
  for (int i = 0; i < n; ++i) {
    p.weight[i] = wide_weights[rng() % 3];
    bool usable = false;
    for (int j = 0; j < m; ++j) {
      p.throughput(i, j) = rng() % 4 == 0 ? 0.0 : uniform(rng, 0.1, 2.0);
      usable = usable || p.throughput(i, j) > 0.0;
    }
    if (!usable) p.throughput(i, 0) = 1.0;
    p.target[i] = wide_capacities[rng() % 6] * uniform(rng, 0.1, 2.0);
  }
  for (int j = 0; j < m; ++j) p.capacity[j] = wide_capacities[rng() % 6];
  return p;
}

/// Largest violation of x >= 0, per-job sum <= 1 and per-resource usage <= capacity (absolute).
/// Usage is summed in long double: a plain double sum of a million equal fractions carries a
/// rounding error (~1e-11 relative) as large as the solver's capacity margin.
inline double allocation_violation(const popalloc::dense_problem<double>& p,
                                   const popalloc::solve_result& r) {
  double worst = 0.0;
  std::vector<long double> usage(static_cast<std::size_t>(p.resources()), 0.0L);
  const auto& a = r.allocation;
  if (a.jobs() != static_cast<std::size_t>(p.jobs())) return 1e300;
  for (Eigen::Index i = 0; i < p.jobs(); ++i) {
    double total = 0.0;
    for (auto k = a.job_offset[static_cast<std::size_t>(i)];
         k < a.job_offset[static_cast<std::size_t>(i) + 1]; ++k) {
      const auto j = a.option[static_cast<std::size_t>(k)];
      const double x = a.fraction[static_cast<std::size_t>(k)];
      worst = std::max(worst, -x);
      total += x;
      const double d =
          p.demand.size() ? p.demand(i, j) : (p.job_demand.size() ? p.job_demand[i] : 1.0);
      usage[static_cast<std::size_t>(j)] += static_cast<long double>(d) * x;
    }
    worst = std::max(worst, total - 1.0);
  }
  for (Eigen::Index j = 0; j < p.resources(); ++j)
    worst = std::max(worst, static_cast<double>(usage[static_cast<std::size_t>(j)] -
                                                static_cast<long double>(p.capacity[j])));
  return worst;
}

/// sum_i f_i(t_i) of the returned allocation, recomputed from scratch.
template <class Utility>
double recomputed_objective(const popalloc::dense_problem<double>& p, const Utility& u,
                            const popalloc::solve_result& r) {
  double total = 0.0;
  const auto& a = r.allocation;
  for (Eigen::Index i = 0; i < p.jobs(); ++i) {
    double t = 0.0;
    for (auto k = a.job_offset[static_cast<std::size_t>(i)];
         k < a.job_offset[static_cast<std::size_t>(i) + 1]; ++k)
      t += a.fraction[static_cast<std::size_t>(k)] *
           p.throughput(i, a.option[static_cast<std::size_t>(k)]);
    popalloc::job_parameters job;
    job.weight = p.weight.size() ? p.weight[i] : 1.0;
    job.target = p.target.size() ? p.target[i] : 0.0;
    total += u.value(t, job);
  }
  return total;
}

}  // namespace popalloc_test
