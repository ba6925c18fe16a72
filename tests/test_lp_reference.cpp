// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Against an exact LP (COIN-OR CLP): strong duality of the oracle, validity of the
/// certificate, and the optimum for LP-type utilities.
#include <string>

#include <doctest/doctest.h>

#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

#if POPALLOC_TEST_HAVE_CLP
#include "support/lp_reference.hpp"

namespace {

/// The soft floor used against the LP: slope w + 2 below the target, w above.
const popalloc::utility::linear_with_floor floor_utility{2.0};

popalloc_test::lp_solution exact(const popalloc::dense_problem<double>& p,
                                 popalloc_test::lp_utility kind) {
  const Eigen::VectorXd weight = p.weight, target = p.target;
  auto lp = popalloc_test::make_dense_lp(p.throughput, p.capacity, weight, &target, kind);
  lp.penalty = floor_utility.penalty;
  auto s = popalloc_test::solve_lp(lp);
  REQUIRE(s.optimal);
  return s;
}

/// The exact dual value g(p) = sum_i h_i(p) + p.R from one evaluation pass.
template <class Utility>
double dual_value(const popalloc::dense_problem<double>& p, const Utility& u,
                  const Eigen::VectorXd& prices) {
  popalloc::detail::engine<popalloc::detail::host_executor, popalloc::dense_problem<double>,
                           Utility>
      e(p, u, popalloc::detail::host_executor(1));
  popalloc::detail::evaluation out;
  e.evaluate(prices, 0.0, false, out);
  return out.excess_exact + prices.dot(p.capacity);
}

}  // namespace

TEST_CASE("[popalloc] the dual oracle is exact: g(p_LP) = OPT and g(p) >= OPT") {
  for (int seed = 0; seed < 6; ++seed) {
    CAPTURE(seed);
    const auto p = popalloc_test::random_problem(60 + 40 * seed, 1 + seed % 5, 100 + seed);
    auto check = [&](const auto& u, popalloc_test::lp_utility kind) {
      const auto lp = exact(p, kind);
      const Eigen::VectorXd prices =
          Eigen::Map<const Eigen::VectorXd>(lp.prices.data(), p.resources());
      const double scale = std::max(1.0, std::abs(lp.objective));
      CHECK(dual_value(p, u, prices) ==
            doctest::Approx(lp.objective).epsilon(1e-9 / scale * scale));
      std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
      for (int k = 0; k < 50; ++k) {  // weak duality at random prices
        Eigen::VectorXd q(p.resources());
        for (Eigen::Index j = 0; j < q.size(); ++j) q[j] = popalloc_test::uniform(rng, 0.0, 4.0);
        CHECK(dual_value(p, u, q) >= lp.objective - 1e-9 * scale);
      }
    };
    check(popalloc::utility::linear{}, popalloc_test::lp_utility::linear);
    check(popalloc::utility::target_priority{}, popalloc_test::lp_utility::target_priority);
    check(floor_utility, popalloc_test::lp_utility::linear_with_floor);
  }
}

TEST_CASE("[popalloc] the certificate brackets the exact LP optimum") {
  for (int seed = 0; seed < 8; ++seed) {
    CAPTURE(seed);
    const int n = seed < 4 ? 20 : 400;
    const auto p = popalloc_test::random_problem(n, 1 + seed % 4 * 2, 200 + seed);
    popalloc::solver_options o;
    o.relative_gap = 1e-8;
    o.max_iterations = 150;
    auto check = [&](const auto& u, popalloc_test::lp_utility kind) {
      const auto lp = exact(p, kind);
      const auto r = popalloc::solve<popalloc_test::test_backend>(p, u, o);
      const double tol = 1e-9 * std::max(1.0, std::abs(lp.objective));
      CHECK(r.primal_objective <= lp.objective + tol);  // a feasible allocation
      CHECK(r.dual_bound >= lp.objective - tol);        // a valid upper bound
      CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
    };
    check(popalloc::utility::linear{}, popalloc_test::lp_utility::linear);
    check(popalloc::utility::target_priority{}, popalloc_test::lp_utility::target_priority);
    check(floor_utility, popalloc_test::lp_utility::linear_with_floor);
  }
}

TEST_CASE("[popalloc] LP-type utilities reach the exact LP optimum to 1e-6") {
  int case_index = 0;
  for (const int n : {1, 2, 10, 100, 2000}) {
    for (const int m : {1, 2, 4, 8}) {
      for (const double tightness : {0.5, 3.0}) {  // contended and loose capacities
        const auto p = popalloc_test::random_problem(n, m, 500 + case_index++, tightness);
        CAPTURE(n);
        CAPTURE(m);
        CAPTURE(tightness);
        popalloc::solver_options o;
        o.relative_gap = 1e-7;
        o.absolute_gap = 1e-9;
        auto check = [&](const auto& u, popalloc_test::lp_utility kind) {
          const auto lp = exact(p, kind);
          const auto r = popalloc::solve<popalloc_test::test_backend>(p, u, o);
          const std::string status = popalloc::to_string(r.status);
          CAPTURE(status);
          CHECK(r.primal_objective ==
                doctest::Approx(lp.objective).epsilon(1e-6).scale(std::max(1.0, 1e-3 * n)));
          CHECK(r.dual_bound >= lp.objective - 1e-9 * std::max(1.0, std::abs(lp.objective)));
          CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
        };
        check(popalloc::utility::linear{}, popalloc_test::lp_utility::linear);
        check(popalloc::utility::target_priority{}, popalloc_test::lp_utility::target_priority);
        check(floor_utility, popalloc_test::lp_utility::linear_with_floor);
      }
    }
  }
}

TEST_CASE("[popalloc] ties from duplicated jobs are split to meet the capacities") {
  // 50 identical pairs of jobs: at the optimum many jobs are indifferent between resources.
  auto base = popalloc_test::random_problem(50, 4, 77);
  popalloc::dense_problem<double> p;
  p.throughput.resize(100, 4);
  p.throughput << base.throughput, base.throughput;
  p.capacity = base.capacity;
  p.weight.resize(100);
  p.weight << base.weight, base.weight;
  p.target.resize(100);
  p.target << base.target, base.target;
  popalloc::solver_options o;
  o.relative_gap = 1e-7;
  const auto lp = exact(p, popalloc_test::lp_utility::linear);
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::linear{}, o);
  CHECK(r.primal_objective == doctest::Approx(lp.objective).epsilon(1e-6));
  CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
}
#endif
