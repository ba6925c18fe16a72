// SPDX-License-Identifier: Apache-2.0
// Re-solving after a change: the scheduler's next round differs a little from the last (a
// resource lost a tenth of its capacity), so the last round's prices are a good start. The
// progress callback sees every dual evaluation and could stop the solve early.
#include <algorithm>
#include <cstdio>
#include <random>
#include <vector>

#include <popalloc/popalloc.hpp>

#include "tutorial_checks.hpp"

int main() {
  constexpr Eigen::Index jobs = 2000, resources = 6;
  std::mt19937_64 random(3);
  std::uniform_real_distribution<double> speed(0.5, 4.0);
  popalloc::dense_problem<double> problem;
  problem.throughput = Eigen::MatrixXd::NullaryExpr(jobs, resources, [&] { return speed(random); });
  problem.capacity = Eigen::VectorXd::Constant(resources, 150.0);
  const popalloc::utility::log utility;
  popalloc::solver_options options;
  options.relative_gap = 1e-6;
  const popalloc::solve_result last_round = popalloc::solve(problem, utility, options);

  problem.capacity[2] *= 0.9;  // the next round
  const popalloc::solve_result cold = popalloc::solve(problem, utility, options);

  // The callback records what it sees: the best bound and objective so far, per evaluation.
  std::vector<popalloc::progress> seen;
  const popalloc::progress_callback record = [&](const popalloc::progress& now) {
    std::printf("  evaluation %2d  %.3f ms  objective %.9g  bound %.9g  gap %.2e  smoothing %.0e\n",
                now.iteration, 1e3 * now.elapsed_seconds, now.primal_objective, now.dual_bound,
                now.relative_gap, now.smoothing);
    seen.push_back(now);
    return popalloc::callback_action::proceed;  // stop would end it with status interrupted
  };
  options.warm_start_prices = last_round.prices;
  options.callback_every = 1;  // every evaluation (the default)
  std::printf("warm start from the last round's prices:\n");
  const popalloc::solve_result warm = popalloc::solve(problem, utility, options, record);
  tutorial::print_certificate(warm);
  std::printf("evaluations: cold %d, warm %d\n", cold.iterations, warm.iterations);

  tutorial::check_dense_certificate(problem, utility, warm);
  tutorial::check_converged(warm, options.relative_gap);
  tutorial::check(warm.iterations < cold.iterations, "the warm start saves evaluations");
  // Both objectives lie below the optimum by at most their own gap, so they differ by at most
  // the larger gap.
  tutorial::check(std::abs(warm.primal_objective - cold.primal_objective) <=
                      std::max(warm.duality_gap, cold.duality_gap) * (1.0 + 1e-9),
                  "cold and warm solves agree within their certificates");
  tutorial::check(static_cast<int>(seen.size()) == warm.iterations,
                  "the callback saw every evaluation");
  for (std::size_t k = 1; k < seen.size(); ++k)
    tutorial::check(seen[k].dual_bound <= seen[k - 1].dual_bound &&
                        seen[k].primal_objective >= seen[k - 1].primal_objective,
                    "the best bound and objective only improve");
  tutorial::check(!seen.empty() && seen.back().dual_bound == warm.dual_bound,
                  "the last report is the result's bound");
  return tutorial::failures() == 0 ? 0 : 1;
}
