// SPDX-License-Identifier: Apache-2.0
// A scheduler's rounds through incremental_solver: the problem stays in the solver, each round
// a few jobs arrive, finish or are re-profiled, and every solve starts where the last ended.
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include <popalloc/popalloc.hpp>

#include "tutorial_checks.hpp"

int main() {
  constexpr Eigen::Index resources = 4;
  std::mt19937_64 random(5);
  std::uniform_real_distribution<double> speed(0.5, 4.0), weight(1.0, 3.0);
  auto profile = [&] {
    return Eigen::RowVectorXd::NullaryExpr(resources, [&] { return speed(random); }).eval();
  };
  popalloc::solver_options options;
  options.relative_gap = 1e-5;
  popalloc::incremental_solver<popalloc::utility::log> cluster(
      Eigen::VectorXd::Constant(resources, 600.0), options);
  std::vector<popalloc::incremental_solver<popalloc::utility::log>::job_id> running;
  for (int k = 0; k < 5000; ++k) running.push_back(cluster.add_job(profile(), weight(random)));
  cluster.solve();  // the first plan starts cold

  for (int round = 0; round < 5; ++round) {
    for (int k = 0; k < 20; ++k) {  // 0.4% of the jobs finish ...
      const std::size_t done = random() % running.size();
      cluster.remove_job(running[done]);
      running[done] = cluster.add_job(profile(), weight(random));  // ... and as many arrive
    }
    cluster.update_throughput(running[7], profile());  // one job re-profiled
    if (round == 3) cluster.set_capacity(1, 450.0);    // a rack of resource 1 goes down

    const popalloc::solve_result& plan = cluster.solve();      // valid until the next solve()
    const popalloc::solve_result cold = cluster.solve_cold();  // only to compare
    std::printf("round %d: %s, objective %.9g, bound %.9g, evaluations %d (cold: %d + %d)\n", round,
                popalloc::to_string(plan.status), plan.primal_objective, plan.dual_bound,
                plan.iterations, cold.iterations, cold.sample_iterations);
    // Row i of the plan is job cluster.job_ids()[i], until the next change.
    const Eigen::Index row = cluster.row_of(running[7]);
    std::printf("  job %lld gets throughput %.4f\n", static_cast<long long>(running[7]),
                plan.throughput[row]);

    tutorial::check_dense_certificate(cluster.problem(), popalloc::utility::log{}, plan);
    tutorial::check_converged(plan, options.relative_gap);
    tutorial::check(plan.iterations < cold.iterations + cold.sample_iterations,
                    "starting from the last round saves evaluations");
    const double rounding = 1e-12 * std::abs(cold.dual_bound);
    tutorial::check(plan.primal_objective <= cold.dual_bound + rounding &&
                        cold.primal_objective <= plan.dual_bound + rounding,
                    "the plan and a cold solve agree within their certificates");
  }
  return tutorial::failures() == 0 ? 0 : 1;
}
