// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Solver behaviour: hand-solved cases, certificates, statuses, threads, warm start.
#include <algorithm>
#include <cmath>
#include <string>

#include <doctest/doctest.h>

#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

using popalloc::solve_status;

TEST_CASE("[popalloc] log utility, one resource shared by two jobs (hand-solved)") {
  // max log(x1) + log(2 x2), x1 + x2 <= 1  =>  x = (1/2, 1/2), U = -log 2, price 2.
  popalloc::dense_problem<double> p;
  p.throughput.resize(2, 1);
  p.throughput << 1.0, 2.0;
  p.capacity = Eigen::VectorXd::Ones(1);
  popalloc::solver_options o;
  o.relative_gap = 1e-9;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, o);
  CHECK(r.status == solve_status::converged);
  CHECK(r.primal_objective == doctest::Approx(-std::log(2.0)).epsilon(1e-8));
  CHECK(r.dual_bound >= -std::log(2.0) - 1e-12);
  CHECK(r.prices[0] == doctest::Approx(2.0).epsilon(1e-4));
  CHECK(r.throughput[0] == doctest::Approx(0.5).epsilon(1e-4));
  CHECK(r.throughput[1] == doctest::Approx(1.0).epsilon(1e-4));
  CHECK(popalloc_test::allocation_violation(p, r) <= 1e-12);
}

TEST_CASE("[popalloc] log utility, two jobs on two resources (hand-solved)") {
  // Each job has one unit of time; job 1 gets at most 1 anywhere, job 2 at most 3 (on r2).
  popalloc::dense_problem<double> p;
  p.throughput.resize(2, 2);
  p.throughput << 1.0, 1.0, 1.0, 3.0;
  p.capacity = Eigen::VectorXd::Ones(2);
  popalloc::solver_options o;
  o.relative_gap = 1e-6;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, o);
  CHECK(r.status == solve_status::converged);
  CHECK(r.primal_objective == doctest::Approx(std::log(3.0)).epsilon(1e-6));
  CHECK(r.throughput[1] == doctest::Approx(3.0).epsilon(1e-6));
  CHECK(popalloc_test::allocation_violation(p, r) <= 1e-12);
}

TEST_CASE("[popalloc] log utility whose optimum is exactly 0 converges (gap relative to sum w)") {
  // Each job on its own resource: t = (1, 1), U = 0. Relative to |U| the gap could never
  // close (this stalled at relative gap 1 before the anchor); relative to sum w = 2 it does.
  popalloc::dense_problem<double> p;
  p.throughput.resize(2, 2);
  p.throughput << 1.0, 0.5, 0.5, 1.0;
  p.capacity = Eigen::VectorXd::Ones(2);
  popalloc::solver_options o;
  o.relative_gap = 1e-6;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, o);
  CHECK(r.status == solve_status::converged);
  CHECK(r.dual_bound >= 0.0);
  CHECK(r.primal_objective <= 0.0);
  CHECK(r.duality_gap <= 2e-6);
  CHECK(r.relative_gap == doctest::Approx(r.duality_gap / 2.0));
  CHECK(r.throughput[0] == doctest::Approx(1.0).epsilon(1e-5));
  CHECK(popalloc_test::allocation_violation(p, r) <= 1e-12);
}

TEST_CASE("[popalloc] log utility: the stopping gap does not depend on the throughput unit") {
  // Here U* = -17,618 and sum w = 30,042, so the gap is relative to sum w; in units e^4 times
  // larger the optimum moves by 4 sum w (to 102,550) and |U| becomes the larger scale.
  auto p = popalloc_test::random_problem(20000, 4, 11);
  const double weights = p.weight.sum();
  popalloc::solver_options o;
  o.relative_gap = 1e-4;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, o);
  REQUIRE(r.status == solve_status::converged);
  CHECK(std::abs(r.dual_bound) < weights);
  CHECK(r.relative_gap == doctest::Approx(r.duality_gap / weights));
  CHECK(r.duality_gap <= 1e-4 * weights);
  p.throughput *= std::exp(4.0);
  const auto scaled = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, o);
  REQUIRE(scaled.status == solve_status::converged);
  CHECK(scaled.relative_gap == doctest::Approx(scaled.duality_gap / std::abs(scaled.dual_bound)));
  // Both bound the same optimum, shifted by 4 sum w.
  const double shift = 4.0 * weights;
  CHECK(scaled.dual_bound - shift >= r.primal_objective - 1e-9 * shift);
  CHECK(r.dual_bound + shift >= scaled.primal_objective - 1e-9 * shift);
}

TEST_CASE("[popalloc] linear utility, hand-solved assignment") {
  // A = [[2,1],[1,1]], R = (1,1): job 0 on resource 0, job 1 on resource 1, optimum 3.
  popalloc::dense_problem<double> p;
  p.throughput.resize(2, 2);
  p.throughput << 2.0, 1.0, 1.0, 1.0;
  p.capacity = Eigen::VectorXd::Ones(2);
  popalloc::solver_options o;
  o.relative_gap = 1e-9;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::linear{}, o);
  CHECK(r.status == solve_status::converged);
  CHECK(r.primal_objective == doctest::Approx(3.0).epsilon(1e-8));
  CHECK(r.dual_bound >= 3.0 - 1e-9);
}

TEST_CASE("[popalloc] certificate and allocation are consistent for every utility") {
  const auto p = popalloc_test::random_problem(20000, 6, 7);
  popalloc::solver_options o;
  o.relative_gap = 1e-4;
  // The gap's scale (docs/method.md): the objective, or for log (f(0) = -inf) sum w when that
  // is larger; sum_i f_i(0) = 0 for linear and power, and below the optimum's range here for
  // target-priority.
  auto check = [&](const auto& u, double anchor = 0.0) {
    const auto r = popalloc::solve<popalloc_test::test_backend>(p, u, o);
    const std::string status = popalloc::to_string(r.status);
    CAPTURE(status);
    CHECK(r.relative_gap ==
          doctest::Approx(r.duality_gap / std::max({std::abs(r.dual_bound),
                                                    std::abs(r.primal_objective), anchor})));
    CHECK(r.dual_bound >= r.primal_objective);
    CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
    CHECK(r.max_capacity_violation == 0.0);
    CHECK(popalloc_test::recomputed_objective(p, u, r) ==
          doctest::Approx(r.primal_objective).epsilon(1e-10));
    return r;
  };
  CHECK(check(popalloc::utility::linear{}).status == solve_status::converged);
  CHECK(check(popalloc::utility::log{}, p.weight.sum()).status == solve_status::converged);
  CHECK(check(popalloc::utility::power{0.5}).status == solve_status::converged);
  const auto target = check(popalloc::utility::target_priority{});
  CHECK(target.relative_gap < 1e-2);
}

TEST_CASE("[popalloc] results do not depend on the number of threads") {
  const auto p = popalloc_test::random_problem(20000, 8, 3);
  popalloc::solver_options one, two;
  one.threads = 1;
  two.threads = 2;
  const auto a = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, one);
  const auto b = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, two);
  CHECK(a.iterations == b.iterations);
  CHECK(a.primal_objective == b.primal_objective);  // bitwise: fixed chunking and sum order
  CHECK(a.dual_bound == b.dual_bound);
  CHECK((a.prices - b.prices).cwiseAbs().maxCoeff() == 0.0);
}

TEST_CASE("[popalloc] warm start from the previous round converges in fewer iterations") {
  auto p = popalloc_test::random_problem(20000, 8, 5);
  popalloc::solver_options o;
  o.relative_gap = 1e-4;
  o.sample_start = false;  // compare with a plain cold start (the sample is tested below)
  auto check = [&](const auto& u) {
    const auto first = popalloc::solve<popalloc_test::test_backend>(p, u, o);
    REQUIRE(first.status == solve_status::converged);
    auto q = p;  // next round: 5% of the jobs replaced
    const auto fresh = popalloc_test::random_problem(1000, 8, 99);
    q.throughput.topRows(1000) = fresh.throughput;
    q.weight.head(1000) = fresh.weight;
    q.target.head(1000) = fresh.target;
    const auto cold = popalloc::solve<popalloc_test::test_backend>(q, u, o);
    auto warm_options = o;
    warm_options.warm_start_prices = first.prices;
    const auto warm = popalloc::solve<popalloc_test::test_backend>(q, u, warm_options);
    CHECK(warm.status == solve_status::converged);
    CHECK(warm.iterations < cold.iterations);
  };
  SUBCASE("log") { check(popalloc::utility::log{}); }
  SUBCASE("linear") { check(popalloc::utility::linear{}); }
}

TEST_CASE(
    "[popalloc] a large cold solve starts from a sample's prices: same optimum, fewer passes") {
  const auto p = popalloc_test::random_problem(200000, 8, 11);
  popalloc::solver_options on, off;
  on.relative_gap = off.relative_gap = 1e-4;
  off.sample_start = false;
  auto check = [&](const auto& u) {
    const auto a = popalloc::solve<popalloc_test::test_backend>(p, u, on);
    const auto b = popalloc::solve<popalloc_test::test_backend>(p, u, off);
    REQUIRE(a.status == solve_status::converged);
    REQUIRE(b.status == solve_status::converged);
    CHECK(a.sample_iterations > 0);
    CHECK(b.sample_iterations == 0);
    CHECK(a.iterations < b.iterations);  // passes over all jobs
    // Both are certified to 1e-4: each one's allocation is below the other's bound.
    CHECK(a.primal_objective <= b.dual_bound + 1e-12 * std::abs(b.dual_bound));
    CHECK(b.primal_objective <= a.dual_bound + 1e-12 * std::abs(a.dual_bound));
    CHECK(popalloc_test::allocation_violation(p, a) <= 0.0);
    auto warm = on;  // given prices take precedence over the sample
    warm.warm_start_prices = a.prices;
    CHECK(popalloc::solve<popalloc_test::test_backend>(p, u, warm).sample_iterations == 0);
  };
  SUBCASE("target priority") { check(popalloc::utility::target_priority{}); }
  SUBCASE("linear") { check(popalloc::utility::linear{}); }
  SUBCASE("log") { check(popalloc::utility::log{}); }
}

TEST_CASE("[popalloc] the sample keeps every per-job field and scales the capacities") {
  auto p = popalloc_test::random_problem(1000, 3, 2);
  p.job_demand = Eigen::VectorXd::LinSpaced(1000, 1.0, 2.0);
  const auto s = popalloc::detail::sample_jobs(p, 50);
  REQUIRE(s.jobs() == 20);  // jobs 25, 75, ..., 975
  for (Eigen::Index k = 0; k < s.jobs(); ++k) {
    const Eigen::Index i = 25 + 50 * k;
    CHECK(s.throughput.row(k) == p.throughput.row(i));
    CHECK(s.weight[k] == p.weight[i]);
    CHECK(s.target[k] == p.target[i]);
    CHECK(s.job_demand[k] == p.job_demand[i]);
  }
  CHECK(s.demand.size() == 0);
  CHECK((s.capacity - p.capacity * 0.02).cwiseAbs().maxCoeff() <= 1e-12);
  CHECK(popalloc::detail::sample_stride(p, true) == 0);  // too small to sample
  const auto large = popalloc_test::random_problem(20000, 64, 2);
  CHECK(popalloc::detail::sample_stride(large, true) == 19);  // >= 1024 sampled jobs
  CHECK(popalloc::detail::sample_stride(large, false) == 2);  // >= 128 per resource
  CHECK(popalloc::detail::sample_stride(popalloc_test::random_problem(10000, 64, 2), false) == 0);
}

TEST_CASE("[popalloc] sample prices carry over only when they price filled resources") {
  popalloc::solve_result r;
  const Eigen::Vector3d capacity(10.0, 10.0, 4.0);
  r.final_prices = Eigen::Vector3d(1.0, 0.0, 2.0);  // p.R = 18
  r.usage = Eigen::Vector3d(9.8, 2.0, 3.7);         // slack priced at 0.2 + 0.6 = 0.8 <= 0.9
  CHECK(popalloc::detail::prices_complementary(r, capacity));
  r.usage = Eigen::Vector3d(9.8, 2.0, 3.5);  // 0.2 + 1.0 = 1.2 > 5% of 18
  CHECK_FALSE(popalloc::detail::prices_complementary(r, capacity));
  r.usage = Eigen::Vector3d(12.0, 2.0, 3.7);  // over-use is not slack
  CHECK(popalloc::detail::prices_complementary(r, capacity));
  r.final_prices.setZero();  // nothing priced: no minimiser to carry over
  CHECK_FALSE(popalloc::detail::prices_complementary(r, capacity));
  r.final_prices.resize(0);
  CHECK_FALSE(popalloc::detail::prices_complementary(r, capacity));
}

TEST_CASE("[popalloc] every stopping status is reachable") {
  const auto p = popalloc_test::random_problem(5000, 8, 11);
  const popalloc::utility::log u;
  SUBCASE("iteration limit") {
    popalloc::solver_options o;
    o.relative_gap = 1e-12;
    o.max_iterations = 3;
    const auto r = popalloc::solve<popalloc_test::test_backend>(p, u, o);
    CHECK(r.status == solve_status::iteration_limit);
    CHECK(r.iterations == 3);
    CHECK(std::isfinite(r.primal_objective));  // a feasible allocation is still returned
  }
  SUBCASE("time limit") {
    popalloc::solver_options o;
    o.relative_gap = 1e-14;
    o.time_limit_seconds = 1e-9;
    CHECK(popalloc::solve<popalloc_test::test_backend>(p, u, o).status == solve_status::time_limit);
  }
  SUBCASE("interrupted by the callback") {
    popalloc::solver_options o;
    o.relative_gap = 1e-12;
    int calls = 0;
    const auto r =
        popalloc::solve<popalloc_test::test_backend>(p, u, o, [&](const popalloc::progress& info) {
          ++calls;
          CHECK(info.n_resources == 8);
          return info.iteration >= 2 ? popalloc::callback_action::stop
                                     : popalloc::callback_action::proceed;
        });
    CHECK(r.status == solve_status::interrupted);
    CHECK(calls == 2);
  }
}

TEST_CASE("[popalloc] float storage gives the same optimum as double") {
  const auto p = popalloc_test::random_problem(4000, 4, 13);
  popalloc::dense_problem<float> f;
  f.throughput = p.throughput.cast<float>();
  f.capacity = p.capacity;
  f.weight = p.weight.cast<float>();
  popalloc::dense_problem<double> rounded;  // the same data, rounded to float
  rounded.throughput = f.throughput.cast<double>();
  rounded.capacity = p.capacity;
  rounded.weight = f.weight.cast<double>();
  popalloc::solver_options o;
  o.relative_gap = 1e-7;
  const auto a = popalloc::solve<popalloc_test::test_backend>(f, popalloc::utility::log{}, o);
  const auto b = popalloc::solve<popalloc_test::test_backend>(rounded, popalloc::utility::log{}, o);
  CHECK(a.status == solve_status::converged);
  CHECK(a.primal_objective == doctest::Approx(b.primal_objective).epsilon(1e-7));
}

TEST_CASE("[popalloc] a bundle problem with one resource per option equals the dense problem") {
  const auto p = popalloc_test::random_problem(20000, 5, 17);
  popalloc::bundle_problem<double> b(p.capacity);
  for (Eigen::Index i = 0; i < p.jobs(); ++i) {
    b.add_job({p.weight[i], p.target[i]});
    for (int j = 0; j < 5; ++j) b.add_option(p.throughput(i, j), {{j, 1.0}});
  }
  popalloc::solver_options o;
  o.relative_gap = 1e-4;
  o.sample_start = false;  // bundle problems are not sampled: compare the same iterations
  const auto dense = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, o);
  const auto bundle = popalloc::solve<popalloc_test::test_backend>(b, popalloc::utility::log{}, o);
  CHECK(bundle.status == solve_status::converged);
  CHECK(bundle.iterations == dense.iterations);
  CHECK(bundle.primal_objective == doctest::Approx(dense.primal_objective).epsilon(1e-12));
}

TEST_CASE("[popalloc] a resource with zero capacity is never allocated") {
  auto p = popalloc_test::random_problem(1000, 4, 19);
  p.capacity[2] = 0.0;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{});
  CHECK(r.status == solve_status::converged);
  CHECK(r.usage[2] == 0.0);
  CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
}

TEST_CASE("[popalloc] per-job demands (scale factors) are respected") {
  auto p = popalloc_test::random_problem(3000, 4, 23);
  p.job_demand.resize(3000);
  for (Eigen::Index i = 0; i < 3000; ++i) p.job_demand[i] = static_cast<double>(1 << (i % 3));
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{});
  CHECK(r.status == solve_status::converged);
  CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
}

#if POPALLOC_TEST_THRUST_BACKEND
TEST_CASE("[popalloc] the Thrust backend matches the CPU backend") {
  const auto p = popalloc_test::random_problem(30000, 8, 29);
  popalloc::solver_options o;
  o.relative_gap = 1e-4;
  auto check = [&](const auto& u) {
    const auto cpu = popalloc::solve<popalloc::backend::cpu>(p, u, o);
    const auto device = popalloc::solve<popalloc::backend::thrust>(p, u, o);
    // Same chunking and summation order as the CPU backend on CPU device systems; on a GPU the
    // order differs and the check below is the 1e-9 agreement of the objective.
    CHECK(device.status == cpu.status);
    CHECK(device.iterations == cpu.iterations);
    CHECK(device.primal_objective == doctest::Approx(cpu.primal_objective).epsilon(1e-9));
    CHECK(device.dual_bound == doctest::Approx(cpu.dual_bound).epsilon(1e-9));
    CHECK(popalloc_test::allocation_violation(p, device) <= 0.0);
  };
  check(popalloc::utility::log{});
  check(popalloc::utility::linear{});
  check(popalloc::utility::target_priority{});
}
#endif
