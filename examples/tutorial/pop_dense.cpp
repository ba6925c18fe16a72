// SPDX-License-Identifier: Apache-2.0
// POP (partition, solve, coalesce): split the jobs into k parts, give each part 1/k of every
// resource, solve the parts independently (in parallel) and merge. The merged allocation is
// feasible for the whole problem, and pop_solve certifies it against a dual bound of the WHOLE
// problem, so its gap says how much POP lost without solving the whole problem.
#include <cstdio>
#include <random>

#include <popalloc/popalloc.hpp>

#include "tutorial_checks.hpp"

int main() {
  constexpr Eigen::Index jobs = 8000, resources = 4;
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> speed(0.5, 4.0);
  popalloc::dense_problem<double> problem;
  problem.throughput = Eigen::MatrixXd::NullaryExpr(jobs, resources, [&] { return speed(random); });
  problem.capacity = Eigen::Vector4d(900.0, 600.0, 1500.0, 300.0);
  const popalloc::utility::log utility;

  popalloc::pop::pop_options pop;
  pop.parts = 4;
  pop.strategy = popalloc::pop::partition_strategy::shuffled;  // random, equal-sized parts
  pop.seed = 1;
  pop.solver.relative_gap = 1e-5;  // each part's tolerance
  const popalloc::pop::pop_solve_result merged = popalloc::pop::pop_solve(problem, utility, pop);
  for (std::size_t s = 0; s < merged.parts.size(); ++s) {
    const popalloc::pop::pop_part_statistics& part = merged.parts[s];
    std::printf("part %zu: %ld jobs, %s in %d evaluations, gap %.2e\n", s,
                static_cast<long>(part.jobs), popalloc::to_string(part.status), part.iterations,
                part.relative_gap);
  }
  std::printf("merged (bound from candidate %d):\n", merged.bound_candidate);
  tutorial::print_certificate(merged.result);

  const popalloc::solve_result whole = popalloc::solve(problem, utility, pop.solver);
  const double loss =
      (whole.primal_objective - merged.result.primal_objective) / std::abs(whole.primal_objective);
  std::printf("whole problem: objective %.9g; POP's loss %.2e of it\n", whole.primal_objective,
              loss);

  tutorial::check_dense_certificate(problem, utility, merged.result);
  tutorial::check(merged.result.status == popalloc::solve_status::converged ||
                      merged.result.status == popalloc::solve_status::parts_converged,
                  "every part converged");
  // Both bounds hold for the same problem, so each caps the other solve's objective.
  tutorial::check(merged.result.dual_bound >= whole.primal_objective - 1e-9 * whole.gap_scale,
                  "POP's bound is a bound on the whole problem");
  tutorial::check(whole.dual_bound >= merged.result.primal_objective - 1e-9 * whole.gap_scale,
                  "POP's allocation is no better than the whole problem allows");
  tutorial::check(whole.primal_objective - merged.result.primal_objective <=
                      merged.result.duality_gap + 1e-9 * whole.gap_scale,
                  "POP's certified gap covers what it lost");
  tutorial::check(loss <= 1e-3, "POP lost less than 0.1% at k = 4");
  return tutorial::failures() == 0 ? 0 : 1;
}
