// SPDX-License-Identifier: Apache-2.0
// Checks shared by the tutorial examples: each program re-derives its certificate from the
// returned allocation instead of trusting the result's own numbers, and exits non-zero when a
// check fails (so `ctest -L example` catches a regression).
#pragma once

#include <cmath>
#include <cstdio>

#include <popalloc/popalloc.hpp>

namespace tutorial {

/// Counts failed checks; main() returns failures() != 0.
inline int& failures() {
  static int count = 0;
  return count;
}

inline void check(bool condition, const char* what) {
  if (condition) return;
  std::printf("CHECK FAILED: %s\n", what);
  ++failures();
}

/// Prints the certificate: objective, dual bound, gap, and what the gap is relative to.
inline void print_certificate(const popalloc::solve_result& result) {
  std::printf("status %s after %d dual evaluations\n", popalloc::to_string(result.status),
              result.iterations);
  std::printf("objective %.9g  dual bound %.9g  gap %.3g  relative gap %.3g (of the %s)\n",
              result.primal_objective, result.dual_bound, result.duality_gap, result.relative_gap,
              result.gap_scale_name);
}

/// The solve stopped because the gap met `relative_gap`, its stopping tolerance.
inline void check_converged(const popalloc::solve_result& result, double relative_gap) {
  check(result.status == popalloc::solve_status::converged, "the solve converged");
  check(result.relative_gap <= relative_gap, "the relative gap is within the tolerance");
}

/// Recomputes, from result.allocation alone, that every job uses at most all of its time, that
/// no capacity is exceeded, that the objective is the utility of that allocation, and that the
/// dual bound is not below it (a bound below a feasible objective would be no bound).
template <class Scalar, class Utility>
void check_dense_certificate(const popalloc::dense_problem<Scalar>& problem, const Utility& utility,
                             const popalloc::solve_result& result) {
  const popalloc::allocation& x = result.allocation;
  check(x.jobs() == static_cast<std::size_t>(problem.jobs()), "one allocation row per job");
  Eigen::VectorXd usage = Eigen::VectorXd::Zero(problem.resources());
  double objective = 0.0;
  for (Eigen::Index i = 0; i < problem.jobs(); ++i) {
    double time = 0.0, throughput = 0.0;
    for (auto k = x.job_offset[static_cast<std::size_t>(i)];
         k < x.job_offset[static_cast<std::size_t>(i) + 1]; ++k) {
      const Eigen::Index j = x.option[static_cast<std::size_t>(k)];
      const double fraction = x.fraction[static_cast<std::size_t>(k)];
      check(fraction >= 0.0, "time fractions are nonnegative");
      const double demand =
          problem.demand.size() != 0
              ? static_cast<double>(problem.demand(i, j))
              : (problem.job_demand.size() != 0 ? static_cast<double>(problem.job_demand[i]) : 1.0);
      time += fraction;
      throughput += fraction * static_cast<double>(problem.throughput(i, j));
      usage[j] += demand * fraction;
    }
    check(time <= 1.0 + 1e-12, "no job is given more than all of its time");
    popalloc::job_parameters job;
    if (problem.weight.size() != 0) job.weight = static_cast<double>(problem.weight[i]);
    if (problem.target.size() != 0) job.target = static_cast<double>(problem.target[i]);
    objective += utility.value(throughput, job);
  }
  for (Eigen::Index j = 0; j < problem.resources(); ++j)
    check(usage[j] <= problem.capacity[j] * (1.0 + 1e-12) + 1e-300, "capacities are respected");
  const double scale = std::abs(result.primal_objective) + 1.0;
  check(std::abs(objective - result.primal_objective) <= 1e-9 * scale,
        "the reported objective is the utility of the returned allocation");
  check(result.dual_bound >= result.primal_objective - 1e-9 * scale,
        "the dual bound is not below the objective");
}

}  // namespace tutorial
