// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The hull walk against brute force over all pairs of options (resalloc's method), the
/// exact dual terms the regularised pass takes from its response against the hull walk, the
/// closed-form saturated response against the piece search, and the smoothed response of
/// strictly concave utilities from every search start.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/backend/cpu.hpp>
#include <popalloc/detail/best_response.hpp>
#include <popalloc/detail/dense_view.hpp>
#include <popalloc/detail/engine.hpp>
#include <popalloc/detail/regularized_response.hpp>
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
    smoothed.marginal_prices(p.capacity);  // sets the regularisation scales
    std::mt19937_64 rng(static_cast<std::uint64_t>(seed));
    for (const double level : {1e-1, 1e-3, 1e-6}) {
      for (int k = 0; k < 40; ++k) {
        // Low prices, some exactly 0, every fourth time: jobs then saturate on many options.
        const double price_scale = k % 4 == 3 ? 0.02 : 2.5;
        Eigen::VectorXd prices(m);
        for (int j = 0; j < m; ++j) {
          prices[j] = popalloc_test::uniform(rng, 0.0, price_scale) * (j + 1);
          if (k % 4 == 3 && rng() % 3 == 0) prices[j] = 0.0;
        }
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

namespace {

/// t(nu) of the regularised response at state s: sum_o a_o x_o.
double throughput_at(const popalloc::detail::local_options& job, double kappa,
                     const popalloc::detail::regularized_state& s) {
  double t = 0.0;
  for (int o = 0; o < job.n; ++o)
    t += job.a[o] * popalloc::detail::regularized_fraction(job, o, kappa, s);
  return t;
}

popalloc::detail::local_options make_job(std::initializer_list<double> a,
                                         std::initializer_list<double> k) {
  popalloc::detail::local_options job;
  for (const double v : a) job.a[job.n++] = v;
  int o = 0;
  for (const double v : k) job.k[o++] = v;
  return job;
}

}  // namespace

TEST_CASE("[popalloc] closed-form saturation with the time constraint slack, hand cases") {
  using popalloc::detail::slack_saturation;
  popalloc::detail::regularized_state s;
  std::int32_t best = -1;
  SUBCASE("one option: x = T / a") {
    const auto job = make_job({2.0}, {1.0});  // (2 nu - 1) / 0.5 = 0.5 at nu = 0.625
    REQUIRE(slack_saturation(job, 0.5, 1.0, 1.0, 0.0, s, best));
    CHECK(s.nu == doctest::Approx(0.625).epsilon(1e-15));
    CHECK(s.saturated);
    CHECK(s.lambda == 0.0);
    CHECK(best == 0);
  }
  SUBCASE("two free options share the target in proportion to their throughputs") {
    const auto job = make_job({1.0, 2.0}, {0.0, 0.0});  // nu = kappa T / (1 + 4)
    REQUIRE(slack_saturation(job, 1.0, 1.0, 1.0, 0.0, s, best));
    CHECK(s.nu == doctest::Approx(0.2).epsilon(1e-15));
    CHECK(throughput_at(job, 1.0, s) == doctest::Approx(1.0).epsilon(1e-15));
    CHECK(best == 1);
  }
  SUBCASE("an option that profits at w drops out at the root") {
    // Both profit at w = 1; on both nu = (1 + 0.5) / 5 = 0.3, where option 0 (cost 0.5) does
    // not; on option 1 alone nu = 1 / 4 = 0.25, x = (0, 0.5).
    const auto job = make_job({1.0, 2.0}, {0.5, 0.0});
    REQUIRE(slack_saturation(job, 1.0, 1.0, 1.0, 0.0, s, best));
    CHECK(s.nu == doctest::Approx(0.25).epsilon(1e-15));
    CHECK(popalloc::detail::regularized_fraction(job, 0, 1.0, s) == 0.0);
    CHECK(popalloc::detail::regularized_fraction(job, 1, 1.0, s) ==
          doctest::Approx(0.5).epsilon(1e-15));
  }
  SUBCASE("declines: the time constraint binds, the root is above w, nothing profits") {
    CHECK_FALSE(slack_saturation(make_job({1.0}, {0.0}), 1.0, 5.0, 2.0, 0.0, s, best));  // x = 2
    CHECK_FALSE(slack_saturation(make_job({1.0}, {0.0}), 1.0, 0.5, 0.9, 0.0, s, best));  // nu 0.9
    CHECK_FALSE(slack_saturation(make_job({1.0}, {2.0}), 1.0, 1.0, 0.1, 0.0, s, best));
    CHECK_FALSE(slack_saturation(make_job({1.0}, {0.0}), 1.0, 1.0, 0.1, 0.2, s, best));  // < w'
  }
}

TEST_CASE("[popalloc] closed-form saturation equals the piece search on random jobs") {
  std::mt19937_64 rng(7);
  int closed_form = 0;
  for (int trial = 0; trial < 20000; ++trial) {
    popalloc::detail::local_options job;
    job.n = 1 + static_cast<int>(rng() % 12);
    const double price_scale = trial % 3 == 0 ? 1.0 : 0.02;
    for (int o = 0; o < job.n; ++o) {
      job.a[o] = rng() % 7 == 0 ? 0.0 : popalloc_test::uniform(rng, 0.05, 2.0);
      job.k[o] = rng() % 4 == 0 ? 0.0 : popalloc_test::uniform(rng, 0.0, price_scale);
    }
    const double kappa = std::pow(10.0, -popalloc_test::uniform(rng, 0.0, 8.0));
    const double w = 1.0 + static_cast<double>(rng() % 3);
    const double w_beyond = trial % 5 == 0 ? 0.25 * w : 0.0;
    const double saturation = popalloc_test::uniform(rng, 0.01, 1.5);
    const auto searched =
        popalloc::detail::regularized_response(job, kappa, w, saturation, 0.0, w_beyond, false);
    popalloc::detail::regularized_state s;
    std::int32_t best = -1;
    CAPTURE(trial);
    if (!popalloc::detail::slack_saturation(job, kappa, w, saturation, w_beyond, s, best)) {
      // Declined only where the answer is something else.
      CHECK((!searched.saturated || searched.lambda > 0.0 || searched.beyond));
      continue;
    }
    ++closed_form;
    REQUIRE(searched.saturated);
    CHECK(searched.lambda == 0.0);
    CHECK(s.nu == doctest::Approx(searched.nu).epsilon(1e-9));
    // It lands on the target to within the rounding of x_o = (nu a_o - k_o) / kappa, whose
    // terms are of size (nu a_o + k_o) / kappa.
    double term_size = 0.0;
    for (int o = 0; o < job.n; ++o) term_size += job.a[o] * (s.nu * job.a[o] + job.k[o]) / kappa;
    CHECK(std::abs(throughput_at(job, kappa, s) - saturation) <= 1e-14 * (term_size + saturation));
    const auto first =
        popalloc::detail::regularized_response(job, kappa, w, saturation, 0.0, w_beyond, true);
    CHECK(first.nu == s.nu);
  }
  CHECK(closed_form > 5000);  // the case is common, not a corner
}

namespace {

/// The smoothed response of a strictly concave utility from the search start `guess`, checked
/// against its defining equation nu = f'(t(nu)); returns its slope.
template <class Utility>
double checked_smooth_response(const popalloc::detail::local_options& job, double kappa,
                               const Utility& u, const job_parameters& params, double guess) {
  const auto s = popalloc::detail::smooth_regularized_response(job, kappa, u, params, guess);
  const double t = throughput_at(job, kappa, s);
  CHECK(t > 0.0);
  CHECK(s.nu == doctest::Approx(u.marginal(t, params)).epsilon(1e-7));
  return s.nu;
}

}  // namespace

TEST_CASE("[popalloc] the smoothed response is the same root from every search start") {
  // Starts below the entry slope min_o k_o / a_o (where no option profits and the search jumps
  // past it), at it, inside the root's piece and far above the root all find the same slope.
  // Smoothing and weights stay where the rounding of t (about 1e-14 nu dt/dnu, which the search
  // accepts as a residual) is far below the tolerances checked.
  std::mt19937_64 rng(11);
  const popalloc::utility::log log_utility;
  const popalloc::utility::power power_utility(0.5);
  for (int trial = 0; trial < 5000; ++trial) {
    popalloc::detail::local_options job;
    job.n = 1 + static_cast<int>(rng() % 8);
    for (int o = 0; o < job.n; ++o) {
      job.a[o] = rng() % 7 == 0 ? 0.0 : popalloc_test::uniform(rng, 0.05, 2.0);
      job.k[o] = rng() % 5 == 0 ? 0.0 : popalloc_test::uniform(rng, 0.0, 2.0);
    }
    job.a[0] = popalloc_test::uniform(rng, 0.05, 2.0);  // log needs an open option
    const double kappa = std::pow(10.0, -popalloc_test::uniform(rng, 0.0, 4.0));
    const job_parameters params{std::pow(10.0, popalloc_test::uniform(rng, -2.0, 2.0)), 0.0};
    CAPTURE(trial);
    const double entry = popalloc::detail::entry_slope(job);
    const double reference = checked_smooth_response(job, kappa, log_utility, params, 0.0);
    for (const double guess : {0.5 * entry, entry, reference * (1.0 + 1e-6), 10.0 * reference})
      if (guess > 0.0)
        CHECK(checked_smooth_response(job, kappa, log_utility, params, guess) ==
              doctest::Approx(reference).epsilon(1e-8));
    if (entry < power_utility.marginal(0.0, params)) {
      const double power_reference =
          checked_smooth_response(job, kappa, power_utility, params, 0.0);
      CHECK(checked_smooth_response(job, kappa, power_utility, params, 0.5 * entry) ==
            doctest::Approx(power_reference).epsilon(1e-8));
    }
  }
}

TEST_CASE("[popalloc] a smoothed log response whose root lies at its entry slope keeps t > 0") {
  // A job of tiny weight under tiny smoothing (found by robustness_sweep): its root rounds to
  // the entry slope itself, where every fraction is 0, so the search must not stop there.
  const auto job = make_job({0.0025984808258939212, 0.00109525305786336},
                            {8.8218159391327013, 6.4369769380645634});
  const job_parameters params{9.7656250000000002e-07, 0.0};
  const double kappa = 9.7656250000000008e-09;
  const double entry = popalloc::detail::entry_slope(job);
  CHECK(entry == 8.8218159391327013 / 0.0025984808258939212);
  const auto s = popalloc::detail::smooth_regularized_response(job, kappa, popalloc::utility::log{},
                                                               params, entry);
  CHECK(throughput_at(job, kappa, s) > 0.0);
  CHECK(s.nu > entry);
}
