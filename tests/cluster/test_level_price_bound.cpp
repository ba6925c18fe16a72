// SPDX-License-Identifier: Apache-2.0
// The price bound of a level search (cluster/level_price_bound.hpp): each job's dual term
// against hand-computed vertex values, and the bound's monotonicity and edge cases. The bound
// against exact LP optima is in test_vs_clp.cpp.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/cluster/level_bisection.hpp>
#include <popalloc/cluster/level_crossover.hpp>
#include <popalloc/cluster/level_price_bound.hpp>

namespace pc = popalloc::cluster;

namespace {

/// One resource per column, level_i(ET) = ET / c_i (max-min with normalisers c).
pc::level_problem linear_levels(Eigen::MatrixXd a, Eigen::VectorXd scale, Eigen::VectorXd cap,
                                std::vector<double> c) {
  pc::level_problem p;
  p.throughput = std::move(a);
  p.scale = std::move(scale);
  p.capacity = std::move(cap);
  p.cap.assign(static_cast<std::size_t>(p.throughput.rows()),
               std::numeric_limits<double>::infinity());
  p.target = [c](Eigen::Index i, double level) { return level * c[static_cast<std::size_t>(i)]; };
  p.level_of = [c](Eigen::Index i, double et) { return et / c[static_cast<std::size_t>(i)]; };
  p.linear_coefficient =
      Eigen::Map<const Eigen::VectorXd>(c.data(), static_cast<Eigen::Index>(c.size()));
  return p;
}

}  // namespace

TEST_CASE("a job's dual term is the best vertex: nothing, one type, or two types at full time") {
  const char open[] = {1, 1};
  // a = (2, 0.5), W = 1. Vertices: x = 0 -> -1; type 0 up to the target (x0 = 1/2) ->
  // (2 - c0) / 2 - 1; type 1 at full time -> 0.5 - c1 - 1; both at full time meeting the target
  // (x0 = 1/3, x1 = 2/3) -> -(c0 / 3 + 2 c1 / 3).
  const double a[] = {2.0, 0.5};
  const double expensive[] = {3.0, 0.1};  // type 1 alone wins: -0.6
  CHECK(pc::detail::job_dual_term(a, expensive, open, 2, 1.0) == doctest::Approx(-0.6));
  const double cheap[] = {0.5, 0.1};  // the mix wins: -(0.5 + 0.2) / 3
  CHECK(pc::detail::job_dual_term(a, cheap, open, 2, 1.0) == doctest::Approx(-0.7 / 3.0));
  const double dear[] = {30.0, 20.0};  // nothing wins
  CHECK(pc::detail::job_dual_term(a, dear, open, 2, 1.0) == doctest::Approx(-1.0));
  const double free_prices[] = {0.0, 0.0};  // the target is met for free
  CHECK(pc::detail::job_dual_term(a, free_prices, open, 2, 1.0) == doctest::Approx(0.0));
  const char only_slow[] = {0, 1};  // type 0 closed: type 1 alone (0.5 - 0.1 - 1)
  CHECK(pc::detail::job_dual_term(a, cheap, only_slow, 2, 1.0) == doctest::Approx(-0.6));
  // W scales the deficit term only: W = 2, type 0 up to the target: (4 - 0.5) / 2 - 2.
  CHECK(pc::detail::job_dual_term(a, cheap, open, 2, 2.0) ==
        doctest::Approx(std::max(-0.7 / 3.0, 3.5 / 2.0 - 2.0)));
}

TEST_CASE("the dual value at fixed prices is nonincreasing in the level and proves infeasibility") {
  // Two jobs, two GPU types of 1 each. Job 0 runs at 2 on type 0, job 1 at 1 on type 1: both
  // reach level 1 alone (c = 2 and 1), so the optimum is 1.
  Eigen::MatrixXd a(2, 2);
  a << 2.0, 0.0, 0.0, 1.0;
  const pc::level_problem p =
      linear_levels(a, Eigen::VectorXd::Ones(2), Eigen::VectorXd::Ones(2), {2.0, 1.0});
  // Prices 1/2 per GPU at weight level 1.2: each job needs 1.2 GPUs' time and gets at most 1.
  Eigen::VectorXd prices(2);
  prices << 0.5, 0.5;
  double last = std::numeric_limits<double>::infinity();
  for (double level = 0.5; level <= 2.0; level += 0.05) {
    const pc::level_dual d = pc::level_dual_value(p, prices, 1.2, level);
    CHECK(d.value <= last + 1e-12);
    last = d.value;
    if (level <= 1.0) CHECK_FALSE(d.proves_infeasible());  // feasible levels are never "proved"
  }
  // At level 1.2 each job needs 2.4 (job 0) or 1.2 (job 1) and reaches 5/6 of it at full
  // time: term max(-1, (5/6 - 1) - 0.5) = -2/3 each, plus p.R = 1: D = -1/3. Above level 1,
  // D = 2 / L - 2 < 0, so these prices certify the optimum itself.
  CHECK(pc::level_dual_value(p, prices, 1.2, 1.2).value == doctest::Approx(1.0 - 4.0 / 3.0));
  // At the optimum itself D is 0 up to rounding, which never counts as a proof.
  CHECK_FALSE(pc::level_dual_value(p, prices, 1.2, 1.0).proves_infeasible());
  CHECK(pc::level_dual_value(p, prices, 1.2, 1.0).value == doctest::Approx(0.0));
  const double bound = pc::price_level_bound(p, prices, 1.2, 0.0, 1.2, 1e-12);
  CHECK(bound >= 1.0);
  CHECK(bound == doctest::Approx(1.0).epsilon(1e-9));
  // Prices of zero certify the level every job reaches alone at full time (1 here); a
  // wrong-sized or negative price vector is not used.
  CHECK(pc::price_level_bound(p, Eigen::VectorXd::Zero(2), 1.2, 0.0, 1.2, 1e-12) ==
        doctest::Approx(1.0).epsilon(1e-9));
  CHECK(pc::price_level_bound(p, Eigen::VectorXd::Ones(3), 1.2, 0.0, 1.2, 1e-12) == 1.2);
  CHECK(pc::price_level_bound(p, -prices, 1.2, 0.0, 1.2, 1e-12) == 1.2);
  CHECK(pc::price_level_bound(p, prices, 1.2, 0.0, std::numeric_limits<double>::infinity(),
                              1e-12) == std::numeric_limits<double>::infinity());
}

TEST_CASE("the linear bound: GPUs' worth over what the level costs every job at its cheapest") {
  // The two jobs above: job 0 needs 2 L on type 0 (A = 2), job 1 needs L on type 1 (A = 1).
  Eigen::MatrixXd a(2, 2);
  a << 2.0, 0.0, 0.0, 1.0;
  pc::level_problem p =
      linear_levels(a, Eigen::VectorXd::Ones(2), Eigen::VectorXd::Ones(2), {2.0, 1.0});
  Eigen::VectorXd prices(2);
  // (0.5, 0.5): p.n = 1, job 0 pays 2 x 0.5 / 2 = 0.5 per level, job 1 pays 0.5: L <= 1.
  prices << 0.5, 0.5;
  CHECK(pc::linear_level_bound(p, prices) >= 1.0);
  CHECK(pc::linear_level_bound(p, prices) == doctest::Approx(1.0).epsilon(1e-12));
  // (1, 0): job 1 pays nothing, job 0 pays 1 per level, p.n = 1: L <= 1 again.
  prices << 1.0, 0.0;
  CHECK(pc::linear_level_bound(p, prices) == doctest::Approx(1.0).epsilon(1e-12));
  // (1, 3): p.n = 4, the jobs pay 1 + 3 per level: still exact (both types are needed).
  prices << 1.0, 3.0;
  CHECK(pc::linear_level_bound(p, prices) == doctest::Approx(1.0).epsilon(1e-12));
  // Prices no job pays prove nothing; so do bad or mismatched prices, and a nonlinear problem.
  CHECK(pc::linear_level_bound(p, Eigen::VectorXd::Zero(2)) ==
        std::numeric_limits<double>::infinity());
  CHECK(pc::linear_level_bound(p, -prices) == std::numeric_limits<double>::infinity());
  CHECK(pc::linear_level_bound(p, Eigen::VectorXd::Ones(3)) ==
        std::numeric_limits<double>::infinity());
  // A job that holds GPUs but has no open type cannot run: level 0.
  p.capacity << 1.0, 0.0;
  CHECK(pc::linear_level_bound(p, prices) == 0.0);
  p.linear_coefficient.resize(0);
  CHECK(pc::linear_level_bound(p, prices) == std::numeric_limits<double>::infinity());
}

TEST_CASE("the crossover refuses what it cannot restrict, and is exact on a hand case") {
  // Job 0 runs at 2 on type 0 and 1 on type 1 (k = 1), job 1 at 1 on either (k = 1/2); one GPU
  // of type 0, half of type 1. At prices (1, 1) job 0 is clearly cheapest on type 0 and job 1
  // ties. Optimum: job 1 takes type 1 whole and the rest from type 0: L/2 + (L/2 - 1/2) <= 1,
  // L = 3/2 (both jobs within their time).
  Eigen::MatrixXd a(2, 2);
  a << 2.0, 1.0, 1.0, 1.0;
  Eigen::VectorXd capacity(2);
  capacity << 1.0, 0.5;
  pc::level_problem p = linear_levels(a, Eigen::VectorXd::Ones(2), capacity, {1.0, 0.5});
  Eigen::VectorXd prices(2);
  prices << 1.0, 1.0;
  const pc::level_crossover cross = pc::crossover_level(p, prices, 2.0);
  REQUIRE(cross.ok);
  CHECK(cross.level == doctest::Approx(1.5).epsilon(1e-12));
  CHECK(pc::achieved_level(p, pc::levels_of(p, cross.x)) == doctest::Approx(1.5).epsilon(1e-12));
  CHECK(cross.x(0, 1) == 0.0);  // job 0 stays on its cheapest type
  CHECK(cross.x(1, 1) == doctest::Approx(0.5).epsilon(1e-12));
  // Job 1 is indifferent at the optimum, so the GPUs' duals are equal and certify 3/2.
  CHECK(pc::linear_level_bound(p, cross.prices) == doctest::Approx(1.5).epsilon(1e-12));
  CHECK(pc::linear_level_bound(p, cross.prices) >= 1.5);
  // Not linear, capped, or prices that are all 0, negative or of the wrong size: refused.
  CHECK_FALSE(pc::crossover_level(p, Eigen::VectorXd::Zero(2), 2.0).ok);
  CHECK_FALSE(pc::crossover_level(p, -prices, 2.0).ok);
  CHECK_FALSE(pc::crossover_level(p, Eigen::VectorXd::Ones(3), 2.0).ok);
  CHECK_FALSE(pc::crossover_level(p, prices, std::numeric_limits<double>::infinity()).ok);
  pc::level_problem capped = p;
  capped.cap[0] = 0.5;
  CHECK_FALSE(pc::crossover_level(capped, prices, 2.0).ok);
  pc::level_problem nonlinear = p;
  nonlinear.linear_coefficient.resize(0);
  CHECK_FALSE(pc::crossover_level(nonlinear, prices, 2.0).ok);
}
