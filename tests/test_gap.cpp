// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The certificate's honesty: the bound never above the unlimited-capacity objective, the
/// gap measures and the scale each result names.
#include <cmath>
#include <cstring>

#include <doctest/doctest.h>

#include <popalloc/detail/relative_gap.hpp>
#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

using popalloc::gap_measure;
using popalloc::solve_status;

namespace {

/// n jobs whose targets can all be met with room to spare: the target-priority optimum is 0
/// exactly and the optimal prices are 0. Big enough for the sample start (>= 8,192 jobs).
popalloc::dense_problem<double> reachable_targets(int n, int m, int seed) {
  popalloc::dense_problem<double> p = popalloc_test::random_problem(n, m, seed);
  // An equal share of every resource gives each job at least sum_j R_j / n * min_j a_ij; targets
  // at half of that are met by the equal-share allocation, which fits every capacity.
  const Eigen::VectorXd share = p.capacity / static_cast<double>(n);
  for (int i = 0; i < n; ++i) p.target[i] = 0.5 * p.throughput.row(i).dot(share);
  return p;
}

}  // namespace

TEST_CASE("[popalloc] gap measures: the scale and its name (hand-computed)") {
  using popalloc::detail::measure_gap;
  // Target priority: idle = -1000 (weighted target sum), bound 0, objective -0.5.
  const popalloc::detail::gap_references tp{-1000.0, 0.0};
  auto g = measure_gap(0.0, -0.5, gap_measure::objective, tp);
  CHECK(g.scale == doctest::Approx(0.5));
  CHECK(std::strcmp(g.scale_name, "objective") == 0);
  CHECK(g.relative == doctest::Approx(1.0));
  g = measure_gap(0.0, -0.5, gap_measure::anchored, tp);
  CHECK(g.scale == doctest::Approx(1000.0));
  CHECK(std::strcmp(g.scale_name, "idle range") == 0);
  CHECK(g.relative == doctest::Approx(5e-4));
  // Both near 0: the objective measure's floor is 1e-6 of the idle range.
  g = measure_gap(0.0, -1e-7, gap_measure::objective, tp);
  CHECK(g.scale == doctest::Approx(1e-3));
  CHECK(std::strcmp(g.scale_name, "1e-6 x idle range") == 0);
  CHECK(g.relative == doctest::Approx(1e-4));
  // automatic is objective where f(0) is finite, anchored (elasticity) where it is not.
  CHECK(measure_gap(0.0, -0.5, gap_measure::automatic, tp).measure == gap_measure::objective);
  const popalloc::detail::gap_references log_refs{-HUGE_VAL, 40.0};
  g = measure_gap(1.0, 0.5, gap_measure::automatic, log_refs);
  CHECK(g.measure == gap_measure::anchored);
  CHECK(std::strcmp(g.scale_name, "elasticity") == 0);
  CHECK(g.relative == doctest::Approx(0.5 / 40.0));
  // A negative gap (rounding) is 0.
  CHECK(measure_gap(1.0, 1.0 + 1e-15, gap_measure::objective, tp).relative == 0.0);
}

TEST_CASE("[popalloc] linear with ample capacity: the bound is the trivial bound (hand-solved)") {
  // Both jobs alone on their fastest resource: OPT = 2*3 + 1*2 = 8 = sum_i w_i max_j a_ij.
  popalloc::dense_problem<double> p;
  p.throughput.resize(2, 2);
  p.throughput << 1.0, 3.0, 2.0, 1.0;
  p.capacity = Eigen::VectorXd::Constant(2, 5.0);
  p.weight = Eigen::VectorXd(2);
  p.weight << 2.0, 1.0;
  popalloc::solver_options o;
  o.relative_gap = 1e-9;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::linear{}, o);
  CHECK(r.trivial_bound == 8.0);
  CHECK(r.dual_bound <= r.trivial_bound);
  CHECK(r.status == solve_status::converged);
  CHECK(r.primal_objective == doctest::Approx(8.0).epsilon(1e-9));
  CHECK(r.gap_measure == gap_measure::objective);
  CHECK(r.duality_gap == doctest::Approx(r.dual_bound - r.primal_objective));
  CHECK(popalloc_test::allocation_violation(p, r) <= 1e-12);
}

TEST_CASE("[popalloc] every dual bound lies between the objective and the trivial bound") {
  for (int seed = 1; seed <= 3; ++seed) {
    const auto p = popalloc_test::random_problem(300, 4, seed);
    popalloc::solver_options o;
    o.relative_gap = 1e-3;
    for (const auto& r :
         {popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::linear{}, o),
          popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::target_priority{}, o),
          popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, o)}) {
      CHECK(r.status == solve_status::converged);
      CHECK(r.dual_bound <= r.trivial_bound);
      CHECK(r.dual_bound >= r.primal_objective);
      CHECK(r.relative_gap <= 1e-3);
      CHECK(r.duality_gap == doctest::Approx(r.relative_gap * r.gap_scale).epsilon(1e-9));
    }
  }
}

TEST_CASE("[popalloc] target priority whose optimum is exactly 0: bound 0 and a gap that closes") {
  // Every target is reachable, so OPT = 0 = g(0). Before the bound was capped at g(0) it was
  // reported far above 0 (the dual value at the prices that gave the feasible allocation), and a
  // sample start at the sample's near-zero prices stalled with a shortfall.
  for (const bool sample_start : {true, false}) {
    const auto p = reachable_targets(20000, 8, 5);
    popalloc::solver_options o;
    o.relative_gap = 1e-4;
    o.sample_start = sample_start;
    const auto r =
        popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::target_priority{}, o);
    INFO("sample start " << sample_start << ": objective " << r.primal_objective << ", "
                         << r.iterations << " evaluations");
    CHECK(r.status == solve_status::converged);
    CHECK(r.trivial_bound == 0.0);
    CHECK(r.dual_bound == 0.0);
    CHECK(r.gap_measure == gap_measure::objective);
    // Converged against the floor: at most 1e-4 x 1e-6 of the weighted target sum is missed.
    const double target_sum = p.weight.dot(p.target);
    CHECK(r.primal_objective <= 0.0);
    CHECK(-r.primal_objective <= 1e-10 * target_sum);
    CHECK(popalloc_test::allocation_violation(p, r) <= 1e-9);
  }
}

TEST_CASE("[popalloc] an anchored target-priority gap names the idle range as its scale") {
  const auto p = reachable_targets(2000, 4, 9);
  popalloc::solver_options o;
  o.relative_gap = 1e-3;
  o.gap = gap_measure::anchored;
  const auto anchored =
      popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::target_priority{}, o);
  CHECK(anchored.status == solve_status::converged);
  CHECK(anchored.gap_measure == gap_measure::anchored);
  CHECK(anchored.relative_gap <= 1e-3);
  if (anchored.duality_gap > 0.0) {
    CHECK(std::strcmp(anchored.gap_scale_name, "idle range") == 0);
    CHECK(anchored.gap_scale ==
          doctest::Approx(anchored.dual_bound + p.weight.dot(p.target)).epsilon(1e-9));
  }
}

TEST_CASE("[popalloc] gap_measure is validated") {
  popalloc::solver_options o;
  o.gap = static_cast<gap_measure>(7);
  CHECK_THROWS_AS(o.validate(), popalloc::invalid_options);
}
