// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Adversarial numerics: extreme magnitudes, tiny and huge capacities, unusable jobs,
/// unreachable targets, identical jobs. Each must converge with a feasible allocation and a
/// finite certificate (or report why not).
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

namespace {

template <class Utility>
void expect_certified(const popalloc::dense_problem<double>& p, const Utility& u) {
  popalloc::solver_options o;
  o.relative_gap = 1e-4;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, u, o);
  const std::string status = popalloc::to_string(r.status);
  CAPTURE(status);
  CHECK(r.status == popalloc::solve_status::converged);
  CHECK(std::isfinite(r.primal_objective));
  CHECK(std::isfinite(r.dual_bound));
  CHECK(r.dual_bound >= r.primal_objective);
  CHECK(r.prices.allFinite());
  CHECK((r.prices.array() >= 0.0).all());
  CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
}

template <class Check>
void for_lp_and_concave(const popalloc::dense_problem<double>& p, Check check) {
  SUBCASE("linear") { check(p, popalloc::utility::linear{}); }
  SUBCASE("target priority") { check(p, popalloc::utility::target_priority{}); }
  SUBCASE("log") { check(p, popalloc::utility::log{}); }
}

}  // namespace

TEST_CASE("[popalloc] throughputs spanning 1e-9 .. 1e9 in one problem") {
  auto p = popalloc_test::random_problem(1000, 6, 3);
  std::mt19937_64 rng(1);
  for (Eigen::Index i = 0; i < p.jobs(); ++i)
    for (Eigen::Index j = 0; j < p.resources(); ++j)
      p.throughput(i, j) = std::pow(10.0, popalloc_test::uniform(rng, -9.0, 9.0));
  for_lp_and_concave(p, [](const auto& q, const auto& u) { expect_certified(q, u); });
}

TEST_CASE("[popalloc] capacities of 1e-12 and 1e12") {
  auto p = popalloc_test::random_problem(1000, 6, 4);
  p.capacity[0] = 1e-12;
  p.capacity[1] = 1e12;
  for_lp_and_concave(p, [](const auto& q, const auto& u) { expect_certified(q, u); });
}

TEST_CASE("[popalloc] abundant capacity: prices must fall to zero") {
  auto p = popalloc_test::random_problem(1000, 6, 5);
  p.capacity *= 1e6;
  for_lp_and_concave(p, [](const auto& q, const auto& u) { expect_certified(q, u); });
}

TEST_CASE("[popalloc] jobs that can use nothing and targets nobody can reach") {
  auto p = popalloc_test::random_problem(1000, 6, 6);
  p.throughput.row(5).setZero();
  p.throughput.row(6).setZero();
  expect_certified(p, popalloc::utility::linear{});
  p.target *= 100.0;
  expect_certified(p, popalloc::utility::target_priority{});
}

TEST_CASE("[popalloc] one resource, one job, and thousands of identical jobs") {
  expect_certified(popalloc_test::random_problem(5000, 1, 7), popalloc::utility::linear{});
  expect_certified(popalloc_test::random_problem(5000, 1, 7), popalloc::utility::log{});
  expect_certified(popalloc_test::random_problem(1, 1, 8), popalloc::utility::log{});
  popalloc::dense_problem<double> same;
  const auto base = popalloc_test::random_problem(1, 6, 9, 3000.0);
  same.throughput = base.throughput.replicate(3000, 1);
  same.capacity = base.capacity;
  for_lp_and_concave(same, [](const auto& q, const auto& u) {
    if constexpr (std::is_same_v<std::decay_t<decltype(u)>, popalloc::utility::target_priority>) {
      auto t = q;
      t.target = Eigen::VectorXd::Constant(q.jobs(), 1.0);
      expect_certified(t, u);
    } else {
      expect_certified(q, u);
    }
  });
}

TEST_CASE("[popalloc] many resources (m = 64)") {
  expect_certified(popalloc_test::random_problem(2000, 64, 10),
                   popalloc::utility::target_priority{});
}

TEST_CASE("[popalloc] many resources (m = 512)") {
  // Few jobs for many resources: ~440 dual evaluations, each with a 512 x 512 Newton system.
  expect_certified(popalloc_test::random_problem(300, 512, 12),
                   popalloc::utility::target_priority{});
  expect_certified(popalloc_test::random_problem(300, 512, 12), popalloc::utility::log{});
}

TEST_CASE("[popalloc] a million identical jobs: the hand-computed linear optimum") {
  // Every job does 1 unit/s on resource 0 and 3 on resource 1; 5e5 units of capacity in total
  // for 1e6 jobs, so the optimum fills both resources: 1 * 2e5 + 3 * 3e5.
  popalloc::dense_problem<double> p;
  p.throughput.resize(1000000, 2);
  p.throughput.col(0).setConstant(1.0);
  p.throughput.col(1).setConstant(3.0);
  p.capacity = Eigen::Vector2d(2e5, 3e5);
  popalloc::solver_options o;
  o.relative_gap = 1e-6;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::linear{}, o);
  CHECK(r.status == popalloc::solve_status::converged);
  CHECK(r.primal_objective == doctest::Approx(1.1e6).epsilon(1e-6));
  CHECK(r.dual_bound >= r.primal_objective);
  CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
}

TEST_CASE("[popalloc] duplicating every job and doubling capacity doubles the optimum") {
  const auto p = popalloc_test::random_problem(800, 5, 13);
  popalloc::dense_problem<double> twice;
  twice.throughput.resize(2 * p.jobs(), p.resources());
  twice.throughput << p.throughput, p.throughput;
  twice.capacity = 2.0 * p.capacity;
  twice.weight.resize(2 * p.jobs());
  twice.weight << p.weight, p.weight;
  twice.target.resize(2 * p.jobs());
  twice.target << p.target, p.target;
  popalloc::solver_options o;
  o.relative_gap = 1e-7;
  auto check = [&](const auto& utility) {
    const auto once = popalloc::solve<popalloc_test::test_backend>(p, utility, o);
    const auto doubled = popalloc::solve<popalloc_test::test_backend>(twice, utility, o);
    REQUIRE(once.status == popalloc::solve_status::converged);
    REQUIRE(doubled.status == popalloc::solve_status::converged);
    // Both certified to 1e-7 relative, so the optima agree to about 2e-7 of their size.
    CHECK(doubled.primal_objective ==
          doctest::Approx(2.0 * once.primal_objective).epsilon(5e-7).scale(1.0));
    CHECK(popalloc_test::allocation_violation(twice, doubled) <= 0.0);
  };
  SUBCASE("linear") { check(popalloc::utility::linear{}); }
  SUBCASE("log") { check(popalloc::utility::log{}); }
  SUBCASE("target priority") { check(popalloc::utility::target_priority{}); }
}

namespace {

/// max sum_i w_i log(a_i x_i) s.t. sum_i x_i <= R, 0 <= x_i <= 1: x_i = min(1, w_i / lambda)
/// with the uncapped jobs sharing what the capped ones leave, in proportion to their weights.
double one_resource_log_optimum(const Eigen::VectorXd& a, const Eigen::VectorXd& w, double R) {
  const Eigen::Index n = w.size();
  std::vector<Eigen::Index> order(static_cast<std::size_t>(n));
  for (Eigen::Index i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  std::sort(order.begin(), order.end(),
            [&](Eigen::Index p, Eigen::Index q) { return w[p] > w[q]; });
  double rest = w.sum();
  for (Eigen::Index capped = 0; capped <= n; ++capped) {
    if (capped == n ||
        rest / (R - static_cast<double>(capped)) >= w[order[static_cast<std::size_t>(capped)]]) {
      const double lambda = capped == n ? 0.0 : rest / (R - static_cast<double>(capped));
      double objective = 0.0;
      for (Eigen::Index k = 0; k < n; ++k) {
        const Eigen::Index i = order[static_cast<std::size_t>(k)];
        objective += w[i] * std::log(a[i] * (k < capped ? 1.0 : w[i] / lambda));
      }
      return objective;
    }
    rest -= w[order[static_cast<std::size_t>(capped)]];
  }
  return 0.0;  // not reached: capped == n ends the loop
}

}  // namespace

TEST_CASE(
    "[popalloc] log utility: capacities of 1e-12 .. 2.5 and weights of 1e-3 .. 1e3 on "
    "one resource, against the closed form") {
  const std::vector<std::vector<double>> weight_sets = {
      {1000, 1000, 0.001, 1, 0.001}, {1, 1, 1, 1, 1}, {1e-3, 1e3, 1, 1e-3, 1e3}};
  for (const double capacity : {1e-12, 1e-9, 1e-6, 1e-3, 1.0, 2.5}) {
    for (const auto& weights : weight_sets) {
      popalloc::dense_problem<double> p;
      p.throughput.resize(5, 1);
      p.throughput << 1.3, 0.7, 1.1, 0.5, 1.9;
      p.capacity = Eigen::VectorXd::Constant(1, capacity);
      p.weight = Eigen::Map<const Eigen::VectorXd>(weights.data(), 5);
      const double optimum = one_resource_log_optimum(p.throughput.col(0), p.weight, capacity);
      popalloc::solver_options o;
      o.relative_gap = 1e-4;
      const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, o);
      CAPTURE(capacity);
      CAPTURE(weights[0]);
      const std::string status = popalloc::to_string(r.status);
      CAPTURE(status);
      // The log gap's scale: max(|objective|, |bound|, sum of weights) (docs/method.md,
      // "Certificate", the anchored measure).
      const double scale = std::max(std::abs(optimum), p.weight.sum());
      CHECK(r.status == popalloc::solve_status::converged);
      CHECK(r.primal_objective <= optimum + 1e-9 * scale);
      CHECK(r.dual_bound >= optimum - 1e-9 * scale);
      CHECK(r.primal_objective >= optimum - 1e-4 * scale);
      CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
    }
  }
}

TEST_CASE(
    "[popalloc] log utility: scaling every capacity by 1e-3 .. 1e-9 shifts the optimum "
    "by log(scale) * sum of weights") {
  // With every job far from its time limit, x(c R) = c x(R): the optimum moves by log(c) sum w.
  const auto base = popalloc_test::random_problem(300, 4, 16, 0.01);
  popalloc::solver_options o;
  o.relative_gap = 1e-6;
  const auto reference =
      popalloc::solve<popalloc_test::test_backend>(base, popalloc::utility::log{}, o);
  REQUIRE(reference.status == popalloc::solve_status::converged);
  const double weights = base.weight.sum();
  for (const double c : {1e-3, 1e-6, 1e-9}) {
    auto p = base;
    p.capacity *= c;
    const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, o);
    CAPTURE(c);
    const std::string status = popalloc::to_string(r.status);
    CAPTURE(status);
    CHECK(r.status == popalloc::solve_status::converged);
    // Each objective lies within 1e-6 of its gap's scale, max(|objective|, sum of weights), of
    // its optimum.
    const double slack = 1e-6 * (std::max(std::abs(r.primal_objective), weights) +
                                 std::max(std::abs(reference.primal_objective), weights));
    CHECK(std::abs(r.primal_objective - std::log(c) * weights - reference.primal_objective) <=
          slack);
    CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
  }
}

TEST_CASE("[popalloc] log utility near its domain edge: throughputs of order 1e-16") {
  // Jobs 0..9 can only use resource 0, whose capacity is 1e-12: their throughputs are ~1e-16
  // and resource 0's price ~1e13 while the others cost ~10. With the smoothing at each job's
  // full time their regularised responses cancelled every digit (numerical_error); at the scale
  // of their expected share (share_headroom) the solve converges.
  auto p = popalloc_test::random_problem(500, 4, 14);
  p.capacity[0] = 1e-12;
  for (int i = 0; i < 10; ++i) {
    p.throughput.row(i).setZero();
    p.throughput(i, 0) = 1e-3;
  }
  popalloc::solver_options o;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, o);
  const std::string status = popalloc::to_string(r.status);
  CAPTURE(status);
  CHECK(r.status == popalloc::solve_status::converged);
  CHECK(r.dual_bound >= r.primal_objective);
  CHECK(std::isfinite(r.primal_objective));
  CHECK(std::isfinite(r.dual_bound));
  CHECK(r.prices.allFinite());
  CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
}

TEST_CASE("[popalloc] data beyond the supported range is rejected, not mis-solved") {
  auto p = popalloc_test::random_problem(50, 3, 15);
  p.throughput(3, 1) = 1e300;
  CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}),
                  popalloc::invalid_problem);
  p.throughput(3, 1) = 1e-300;
  CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}),
                  popalloc::invalid_problem);
}
