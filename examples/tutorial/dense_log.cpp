// SPDX-License-Identifier: Apache-2.0
// A dense problem with the proportional-fair utility f_i(t) = w_i log t_i: 2,000 jobs share 4
// resource types, job i runs at throughput(i, j) on type j. The solve returns a feasible
// allocation and a certificate: the dual bound is an upper bound on the optimum, so the gap
// bounds how far the allocation is from optimal.
#include <cstdio>
#include <random>

#include <popalloc/popalloc.hpp>

#include "tutorial_checks.hpp"

int main() {
  constexpr Eigen::Index jobs = 2000, resources = 4;
  std::mt19937_64 random(7);  // a fixed seed: the same instance and output on every run
  std::uniform_real_distribution<double> speed(0.5, 4.0), priority(1.0, 3.0);

  popalloc::dense_problem<double> problem;
  problem.throughput.resize(jobs, resources);
  problem.weight.resize(jobs);
  for (Eigen::Index i = 0; i < jobs; ++i) {
    for (Eigen::Index j = 0; j < resources; ++j) problem.throughput(i, j) = speed(random);
    problem.weight[i] = priority(random);
  }
  problem.capacity = Eigen::Vector4d(300.0, 200.0, 500.0, 100.0);  // units of each type

  popalloc::solver_options options;
  options.relative_gap = 1e-6;  // tighter than the default 1e-4
  const popalloc::solve_result result = popalloc::solve(problem, popalloc::utility::log{}, options);

  tutorial::print_certificate(result);
  std::printf("gap measure %s, scale %.6g\n", popalloc::to_string(result.gap_measure),
              result.gap_scale);
  for (Eigen::Index j = 0; j < resources; ++j)
    std::printf("resource %ld: price %.6g, used %.6g of %.6g\n", static_cast<long>(j),
                result.prices[j], result.usage[j], problem.capacity[j]);
  // Job 0's row of the allocation: the resources it runs on and for what fraction of its time.
  const popalloc::allocation& x = result.allocation;
  for (auto k = x.job_offset[0]; k < x.job_offset[1]; ++k)
    std::printf("job 0 runs %.4f of its time on resource %d\n",
                x.fraction[static_cast<std::size_t>(k)], x.option[static_cast<std::size_t>(k)]);

  tutorial::check_dense_certificate(problem, popalloc::utility::log{}, result);
  tutorial::check_converged(result, options.relative_gap);
  // A priced resource is fully used (complementary slackness), up to the solver's margin.
  for (Eigen::Index j = 0; j < resources; ++j)
    if (result.prices[j] > 0.0)
      tutorial::check(result.usage[j] >= problem.capacity[j] * (1.0 - 1e-3),
                      "every priced resource is (nearly) fully used");
  return tutorial::failures() == 0 ? 0 : 1;
}
