// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The hull walk against brute force over all pairs of options (resalloc's method), and
/// the exact dual terms the regularised pass takes from its response against the hull walk.
#include <algorithm>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/backend/cpu.hpp>
#include <popalloc/detail/best_response.hpp>
#include <popalloc/detail/dense_view.hpp>
#include <popalloc/detail/engine.hpp>
#include <popalloc/utility.hpp>

#include "support/instances.hpp"

namespace {

using popalloc::job_parameters;
using view_type = popalloc::detail::dense_view<double>;

/// max over the slack, every vertex and every pair (l, r) of the segment optimum.
template <class Utility>
double brute_force_excess(const view_type& v, const double* prices, const Utility& u,
                          const job_parameters& job, double mu) {
  auto objective = [&](double t) { return u.value(t, job) - 0.5 * mu * t * t; };
  double best = objective(0.0);
  for (int r = 0; r < v.m; ++r) best = std::max(best, objective(v.value(0, r)) - prices[r]);
  for (int l = -1; l < v.m; ++l) {
    for (int r = 0; r < v.m; ++r) {
      const double al = l < 0 ? 0.0 : v.value(0, l), cl = l < 0 ? 0.0 : prices[l];
      const double ar = v.value(0, r), cr = prices[r];
      if (!(ar > al)) continue;
      const double slope = (cr - cl) / (ar - al);
      const double t = u.maximize(slope, mu, al, ar, job);
      best = std::max(best, objective(t) - cl - slope * (t - al));
    }
  }
  return best;
}

template <class Utility>
void compare_on_random_jobs(const Utility& u, double mu, bool with_ties) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 3000; ++trial) {
    const int m = 1 + static_cast<int>(rng() % 6);
    std::vector<double> a(static_cast<std::size_t>(m)), prices(static_cast<std::size_t>(m));
    for (int j = 0; j < m; ++j) {
      a[static_cast<std::size_t>(j)] = popalloc_test::uniform(rng, 0.0, 2.0);
      prices[static_cast<std::size_t>(j)] = popalloc_test::uniform(rng, 0.0, 2.0);
      if (with_ties) {  // duplicate throughputs, zero throughputs, zero prices, collinear points
        switch (rng() % 6) {
          case 0:
            a[static_cast<std::size_t>(j)] = a[0];
            break;
          case 1:
            a[static_cast<std::size_t>(j)] = 0.0;
            break;
          case 2:
            prices[static_cast<std::size_t>(j)] = 0.0;
            break;
          case 3:
            prices[static_cast<std::size_t>(j)] = 0.5 * a[static_cast<std::size_t>(j)];
            break;
          default:
            break;
        }
      }
    }
    view_type v;
    v.throughput = a.data();
    v.n = 1;
    v.m = m;
    job_parameters job;
    job.weight = 1.0 + static_cast<double>(rng() % 3);
    job.target = popalloc_test::uniform(rng, 0.0, 2.0);
    if (u.value(0.0, job) < -1e300 && *std::max_element(a.begin(), a.end()) <= 0.0)
      continue;  // log utility with nothing usable: excluded by problem validation
    const auto s = popalloc::detail::walk_hull(v, 0, prices.data(), u, job, mu, -1);
    const double expected = brute_force_excess(v, prices.data(), u, job, mu);
    CAPTURE(trial);
    CHECK(s.excess == doctest::Approx(expected).epsilon(1e-12).scale(1.0));
    // At most two options; the allocation is in the simplex and reproduces tau and the cost.
    CHECK(s.theta >= 0.0);
    CHECK(s.theta <= 1.0);
    double tau = 0.0, cost = 0.0;
    if (s.left >= 0) {
      tau += (1.0 - s.theta) * a[static_cast<std::size_t>(s.left)];
      cost += (1.0 - s.theta) * prices[static_cast<std::size_t>(s.left)];
    }
    if (s.right >= 0) {
      tau += s.theta * a[static_cast<std::size_t>(s.right)];
      cost += s.theta * prices[static_cast<std::size_t>(s.right)];
    }
    CHECK(tau == doctest::Approx(s.tau).epsilon(1e-12).scale(1.0));
    CHECK(u.value(s.tau, job) - 0.5 * mu * s.tau * s.tau - cost ==
          doctest::Approx(s.excess).epsilon(1e-12).scale(1.0));
  }
}

}  // namespace

TEST_CASE("[popalloc] hull walk equals brute force over pairs") {
  for (const bool ties : {false, true}) {
    CAPTURE(ties);
    SUBCASE("linear") { compare_on_random_jobs(popalloc::utility::linear{}, 0.0, ties); }
    SUBCASE("linear smoothed") { compare_on_random_jobs(popalloc::utility::linear{}, 0.3, ties); }
    SUBCASE("target priority") {
      compare_on_random_jobs(popalloc::utility::target_priority{}, 0.0, ties);
    }
    SUBCASE("target priority smoothed") {
      compare_on_random_jobs(popalloc::utility::target_priority{}, 0.2, ties);
    }
    SUBCASE("linear with floor") {
      compare_on_random_jobs(popalloc::utility::linear_with_floor{1.5}, 0.0, ties);
    }
    SUBCASE("linear with floor smoothed") {
      compare_on_random_jobs(popalloc::utility::linear_with_floor{0.7}, 0.2, ties);
    }
    SUBCASE("log") { compare_on_random_jobs(popalloc::utility::log{}, 0.0, ties); }
    SUBCASE("power") { compare_on_random_jobs(popalloc::utility::power{0.5}, 0.0, ties); }
    SUBCASE("power smoothed") { compare_on_random_jobs(popalloc::utility::power{0.3}, 0.1, ties); }
  }
}

TEST_CASE("[popalloc] hull walk hand cases") {
  const popalloc::utility::linear linear;
  job_parameters job;
  SUBCASE("a job that can use nothing stays idle") {
    const double a[2] = {0.0, 0.0}, p[2] = {1.0, 1.0};
    view_type v;
    v.throughput = a;
    v.n = 1;
    v.m = 2;
    const auto s = popalloc::detail::walk_hull(v, 0, p, linear, job, 0.0, -1);
    CHECK(s.left == -1);
    CHECK(s.right == -1);
    CHECK(s.excess == 0.0);
  }
  SUBCASE("m = 1: buy the resource when its price per unit of work is below the weight") {
    const double a[1] = {2.0};
    view_type v;
    v.throughput = a;
    v.n = 1;
    v.m = 1;
    const double cheap[1] = {1.5}, dear[1] = {2.5};
    const auto buy = popalloc::detail::walk_hull(v, 0, cheap, linear, job, 0.0, -1);
    CHECK(buy.left == 0);
    CHECK(buy.excess == doctest::Approx(0.5));
    const auto idle = popalloc::detail::walk_hull(v, 0, dear, linear, job, 0.0, -1);
    CHECK(idle.left == -1);
    CHECK(idle.excess == 0.0);
  }
  SUBCASE("log utility splits between two resources on one hull segment") {
    // points (1, 0.25), (3, 1.75): segment slope 0.75; log optimum t = 1/0.75 inside (1, 3)
    const double a[2] = {1.0, 3.0}, p[2] = {0.25, 1.75};
    view_type v;
    v.throughput = a;
    v.n = 1;
    v.m = 2;
    const auto s = popalloc::detail::walk_hull(v, 0, p, popalloc::utility::log{}, job, 0.0, -1);
    CHECK(s.left == 0);
    CHECK(s.right == 1);
    CHECK(s.tau == doctest::Approx(4.0 / 3.0));
    CHECK(s.theta == doctest::Approx((4.0 / 3.0 - 1.0) / 2.0));
  }
}

namespace {

/// The exact dual term that the regularised pass takes from its response where it can (an idle
/// job, an unsaturated one, one saturated on a single option, one beyond its kink) against the
/// hull walk's, at the same prices, for every smoothing level. One job per problem checks each
/// job's term; a larger problem checks the sum over jobs in every state at once. Each engine
/// evaluates a sequence of prices, so the searches also start from the previous slopes.
template <class Utility>
void compare_exact_terms(const Utility& u) {
  using engine = popalloc::detail::engine<popalloc::detail::host_executor,
                                          popalloc::dense_problem<double>, Utility>;
  for (int seed = 0; seed < 48; ++seed) {
    const int m = 1 + seed % 8;
    const int n = seed < 40 ? 1 : 300;
    CAPTURE(seed);
    const auto p = popalloc_test::random_problem(n, m, 900 + seed);
    engine smoothed(p, u, popalloc::detail::host_executor(1));
    engine exact(p, u, popalloc::detail::host_executor(1));
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    for (const double level : {1e-1, 1e-3, 1e-6}) {
      for (int k = 0; k < 40; ++k) {
        Eigen::VectorXd prices(m);
        for (int j = 0; j < m; ++j) prices[j] = popalloc_test::uniform(rng, 0.0, 2.5) * (j + 1);
        popalloc::detail::evaluation from_response, from_hull;
        smoothed.evaluate(prices, level, true, from_response);
        exact.evaluate(prices, 0.0, false, from_hull);
        CAPTURE(level);
        CHECK(from_response.excess_exact == doctest::Approx(from_hull.excess_exact).epsilon(1e-12));
      }
    }
  }
}

}  // namespace

TEST_CASE("[popalloc] the regularised pass's exact dual terms equal the hull walk's") {
  SUBCASE("linear") { compare_exact_terms(popalloc::utility::linear{}); }
  SUBCASE("target priority") { compare_exact_terms(popalloc::utility::target_priority{}); }
  SUBCASE("linear with floor") { compare_exact_terms(popalloc::utility::linear_with_floor{1.5}); }
}
