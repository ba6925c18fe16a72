// SPDX-License-Identifier: Apache-2.0
// The trust-region step's box QP on the conjugate-gradient path (more than
// box_qp_direct_limit free prices), where a badly scaled diagonal is the normal case.
#include <cmath>
#include <random>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <doctest/doctest.h>

#include "popalloc/detail/box_qp.hpp"

namespace {

/// A symmetric positive definite matrix D^(1/2) (I + B B^T / k) D^(1/2) whose diagonal spans
/// `decades` orders of magnitude, like a price-space Hessian whose resources carry jobs of very
/// different sizes.
Eigen::MatrixXd badly_scaled_spd(Eigen::Index n, double decades, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const Eigen::Index k = n / 4;
  Eigen::MatrixXd b(n, k);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < k; ++j) b(i, j) = normal(rng);
  Eigen::MatrixXd a = Eigen::MatrixXd::Identity(n, n) + b * b.transpose() / static_cast<double>(k);
  Eigen::VectorXd root(n);
  for (Eigen::Index i = 0; i < n; ++i) root[i] = std::pow(10.0, 0.5 * decades * unit(rng));
  return root.asDiagonal() * a * root.asDiagonal();
}

}  // namespace

TEST_CASE("[box_qp] conjugate gradients solve a badly scaled system to the direct solution") {
  for (const unsigned seed : {1u, 2u, 3u}) {
    const Eigen::Index n = 600;
    const Eigen::MatrixXd a = badly_scaled_spd(n, 6.0, seed);
    std::mt19937 rng(seed + 100);
    std::normal_distribution<double> normal;
    Eigen::VectorXd rhs(n);
    for (Eigen::Index i = 0; i < n; ++i) rhs[i] = normal(rng);
    const Eigen::VectorXd exact = a.ldlt().solve(rhs);
    const Eigen::VectorXd x = popalloc::detail::conjugate_gradient(a, rhs);
    CAPTURE(seed);
    CHECK((a * x - rhs).norm() <= 1e-9 * rhs.norm());
    CHECK((x - exact).norm() <= 1e-6 * exact.norm());
  }
}

TEST_CASE("[box_qp] the box QP on the conjugate-gradient path meets its optimality conditions") {
  const Eigen::Index n = 700;
  static_assert(700 > popalloc::detail::box_qp_direct_limit);
  for (const unsigned seed : {4u, 5u}) {
    const Eigen::MatrixXd h = badly_scaled_spd(n, 4.0, seed);
    std::mt19937 rng(seed + 200);
    std::normal_distribution<double> normal;
    Eigen::VectorXd g(n), lo(n), hi(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      g[i] = normal(rng) * std::sqrt(h(i, i));
      // Tight boxes on a third of the variables, so some bounds are active at the optimum.
      const double width = i % 3 == 0 ? 1e-3 : 10.0;
      lo[i] = -width / std::sqrt(h(i, i));
      hi[i] = width / std::sqrt(h(i, i));
    }
    const Eigen::VectorXd d = popalloc::detail::solve_box_qp(g, h, lo, hi);
    const Eigen::VectorXd grad = g + h * d;
    int at_bound = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
      CAPTURE(seed);
      CAPTURE(i);
      REQUIRE(d[i] >= lo[i]);
      REQUIRE(d[i] <= hi[i]);
      // Projected gradient in the units of each variable's curvature.
      const double scaled = grad[i] / std::sqrt(h(i, i));
      if (d[i] <= lo[i]) {
        ++at_bound;
        CHECK(scaled >= -1e-6);
      } else if (d[i] >= hi[i]) {
        ++at_bound;
        CHECK(scaled <= 1e-6);
      } else {
        CHECK(std::abs(scaled) <= 1e-6);
      }
    }
    CHECK(at_bound > 0);
    CHECK(popalloc::detail::quadratic_model(g, h, d) < 0.0);
  }
}
