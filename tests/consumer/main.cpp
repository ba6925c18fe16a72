// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Smallest consumer of an installed popalloc (find_package + popalloc::popalloc): runs
/// README's example and fails unless it converges to the hand-computed optimum.
#include <cmath>
#include <cstdio>

#include <popalloc/popalloc.hpp>

int main() {
  std::printf("popalloc %d.%d.%d\n", POPALLOC_VERSION_MAJOR, POPALLOC_VERSION_MINOR,
              POPALLOC_VERSION_PATCH);
  // README's example: each job has one unit of time, so job 0 gets at most 2 and job 1 at most 3;
  // giving each its fast resource reaches both: log 2 + log 3.
  popalloc::dense_problem<double> p;
  p.throughput.resize(2, 2);
  p.throughput << 2.0, 1.0,  // job 0: 2 units/s on resource 0, 1 on resource 1
      1.0, 3.0;              // job 1
  p.capacity = Eigen::Vector2d(1.0, 1.0);
  const auto r = popalloc::solve(p, popalloc::utility::log{});
  std::printf("status %s objective %.9f (expected %.9f)\n", popalloc::to_string(r.status),
              r.primal_objective, std::log(6.0));
  const bool ok = r.status == popalloc::solve_status::converged &&
                  std::abs(r.primal_objective - std::log(6.0)) <= 1e-4 * std::log(6.0);
  return ok ? 0 : 1;
}
