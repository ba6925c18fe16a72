// SPDX-License-Identifier: Apache-2.0
// The Thrust backend: the same solve with the per-job passes run by Thrust, on a GPU (device
// system CUDA) or, as built here, on Thrust's OpenMP or serial host systems. Only the backend
// tag changes; problem, options and result are the same types. On a host device system the
// reductions use the CPU backend's chunk layout, so the two answers agree bit for bit.
#include <cstdio>
#include <random>

#include <popalloc/backend/thrust.hpp>
#include <popalloc/popalloc.hpp>

#include "tutorial_checks.hpp"

int main() {
  constexpr Eigen::Index jobs = 5000, resources = 8;
  std::mt19937_64 random(13);
  std::uniform_real_distribution<double> speed(0.5, 4.0);
  popalloc::dense_problem<float> problem;  // float storage halves the data moved to a device
  problem.throughput = popalloc::dense_problem<float>::matrix::NullaryExpr(
      jobs, resources, [&] { return static_cast<float>(speed(random)); });
  problem.capacity = Eigen::VectorXd::Constant(resources, 400.0);
  const popalloc::utility::log utility;
  popalloc::solver_options options;
  options.relative_gap = 1e-6;

  const popalloc::solve_result on_thrust =
      popalloc::solve<popalloc::backend::thrust>(problem, utility, options);
  const popalloc::solve_result on_cpu =
      popalloc::solve<popalloc::backend::cpu>(problem, utility, options);
  std::printf("Thrust backend:\n");
  tutorial::print_certificate(on_thrust);
  std::printf("CPU backend: objective %.17g in %d evaluations\n", on_cpu.primal_objective,
              on_cpu.iterations);

  tutorial::check_dense_certificate(problem, utility, on_thrust);
  tutorial::check_converged(on_thrust, options.relative_gap);
  tutorial::check(on_thrust.iterations == on_cpu.iterations &&
                      on_thrust.primal_objective == on_cpu.primal_objective &&
                      on_thrust.dual_bound == on_cpu.dual_bound &&
                      on_thrust.prices == on_cpu.prices,
                  "the Thrust host backend reproduces the CPU backend exactly");
  return tutorial::failures() == 0 ? 0 : 1;
}
