// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The interior-point finish (detail/interior_point.hpp): small problems across the
/// supported range converge to their exact optimum, however far apart their scales, with a bound
/// that an independent evaluation of the dual function confirms; the finish runs only where the
/// price iterations fell short, and only on small problems.
#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

namespace {

/// The problems of benchmarks/robustness_sweep.cpp (its default seed), where the price
/// iterations alone leave 34 log and 9 target-priority problems short of the tolerance.
constexpr unsigned long sweep_seed = 5;
constexpr int sweep_trials = 1000;

popalloc::solver_options sweep_options() {
  popalloc::solver_options o;
  o.relative_gap = 1e-4;
  o.threads = 1;
  return o;
}

/// max over x >= 0, sum x <= 1 of w log(sum_o a_o x_o) - sum_o c_o x_o, by enumeration: the
/// optimum is one option at the time w / c_o (or all of it), or, where the job's time binds, a
/// mix of two options with all of it (the stationary point of the concave function of the mix).
double log_job_term(const std::vector<double>& a, const std::vector<double>& c,
                    const popalloc::job_parameters& job) {
  const double w = job.weight;
  double best = -HUGE_VAL;
  for (std::size_t o = 0; o < a.size(); ++o) {
    const double x = c[o] > 0.0 ? std::min(1.0, w / c[o]) : 1.0;
    best = std::max(best, w * std::log(a[o] * x) - c[o] * x);
    for (std::size_t q = 0; q < a.size(); ++q) {
      const double da = a[q] - a[o], dc = c[q] - c[o];
      if (!(da > 0.0 && dc > 0.0)) continue;
      const double theta = std::clamp((w * da / dc - a[o]) / da, 0.0, 1.0);
      best = std::max(best, w * std::log(a[o] + theta * da) - c[o] - theta * dc);
    }
  }
  return best;
}

/// max over x >= 0, sum x <= 1 of w min(sum_o a_o x_o - T, 0) - sum_o c_o x_o: a linear program
/// whose optimum is a vertex of the simplex cut by a.x = T, so idle, one option with all of its
/// time or with just enough to reach T, or two options with all of it mixed to reach T exactly.
double target_job_term(const std::vector<double>& a, const std::vector<double>& c,
                       const popalloc::job_parameters& job) {
  const double w = job.weight, target = job.target;
  const auto value = [&](double t, double cost) { return w * std::min(t - target, 0.0) - cost; };
  double best = value(0.0, 0.0);
  for (std::size_t o = 0; o < a.size(); ++o) {
    best = std::max(best, value(a[o], c[o]));
    const double x = std::clamp(target / a[o], 0.0, 1.0);
    best = std::max(best, value(a[o] * x, c[o] * x));
    for (std::size_t q = 0; q < a.size(); ++q) {
      if (!(a[o] < target && target < a[q])) continue;
      const double theta = (target - a[o]) / (a[q] - a[o]);
      best = std::max(best, value(target, c[o] + theta * (c[q] - c[o])));
    }
  }
  return best;
}

/// The dual function at `prices`, written independently of the library's hull walk: the
/// capacities' worth plus each job's best response (`job_term`) over its open options.
template <class JobTerm>
double dual_value(const popalloc::dense_problem<double>& p, const Eigen::VectorXd& prices,
                  JobTerm job_term) {
  double value = p.capacity.dot(prices);
  for (Eigen::Index i = 0; i < p.jobs(); ++i) {
    std::vector<double> a, c;
    for (Eigen::Index j = 0; j < p.resources(); ++j) {
      if (!(p.throughput(i, j) > 0.0 && p.capacity[j] > 0.0)) continue;
      a.push_back(p.throughput(i, j));
      c.push_back(prices[j]);
    }
    popalloc::job_parameters job;
    job.weight = p.weight[i];
    job.target = p.target[i];
    value += job_term(a, c, job);
  }
  return value;
}

/// Every sweep problem under `utility` converges, feasible; where the finish ran, its bound is
/// either the price iterations' (tested elsewhere) or one that the brute-force dual confirms at
/// the reported prices (or at 0 where the bound is g(0)). Returns how many needed the finish.
template <class Utility, class JobTerm>
int check_sweep(const Utility& utility, JobTerm job_term) {
  std::mt19937_64 rng(sweep_seed);
  int finished = 0;
  for (int trial = 0; trial < sweep_trials; ++trial) {
    const auto p = popalloc_test::wide_range_problem(rng);
    CAPTURE(trial);
    const auto r = popalloc::solve<popalloc_test::test_backend>(p, utility, sweep_options());
    CAPTURE(r.primal_objective);
    CAPTURE(r.dual_bound);
    finished += r.interior_point_steps > 0 ? 1 : 0;
    REQUIRE(r.status == popalloc::solve_status::converged);
    CHECK(r.relative_gap <= 1e-4);
    CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
    CHECK(popalloc_test::recomputed_objective(p, utility, r) ==
          doctest::Approx(r.primal_objective).epsilon(1e-12).scale(r.gap_scale));
    if (r.interior_point_steps == 0) continue;
    popalloc::solver_options without = sweep_options();
    without.interior_point_finish = false;
    const auto cut = popalloc::solve<popalloc_test::test_backend>(p, utility, without);
    CHECK(cut.status != popalloc::solve_status::converged);
    CHECK(r.primal_objective >= cut.primal_objective);
    CHECK(r.dual_bound <= cut.dual_bound);
    if (r.dual_bound == cut.dual_bound) continue;
    const double at_prices = dual_value(p, r.prices, job_term);
    const double at_zero = dual_value(p, Eigen::VectorXd::Zero(p.resources()), job_term);
    const double rounding = 1e-9 * (r.gap_scale + p.capacity.dot(r.prices));
    CHECK(r.dual_bound >= std::min(at_prices, at_zero) - rounding);
  }
  return finished;
}

}  // namespace

TEST_CASE("[interior point] log across the range of capacities and weights: converged, certified") {
  // The problems the price iterations leave short are the finish's (fails if it never runs).
  CHECK(check_sweep(popalloc::utility::log{}, log_job_term) >= 20);
}

TEST_CASE(
    "[interior point] target priority across the range of capacities, weights and targets: "
    "converged, certified") {
  CHECK(check_sweep(popalloc::utility::target_priority{}, target_job_term) >= 5);
}

TEST_CASE("[interior point] it finishes a solve cut short, to the closed-form optimum") {
  // Two log jobs on one resource of capacity R <= 1: x_i = w_i R / (w_1 + w_2). One price
  // iteration cannot converge from the equal-share start with weights a million apart.
  popalloc::dense_problem<double> p;
  p.throughput.resize(2, 1);
  p.throughput << 2.0, 0.5;
  p.capacity = Eigen::VectorXd::Constant(1, 1e-6);
  p.weight.resize(2);
  p.weight << 1e3, 1e-3;
  const double total = p.weight.sum();
  const double optimum =
      1e3 * std::log(2.0 * 1e3 * 1e-6 / total) + 1e-3 * std::log(0.5 * 1e-3 * 1e-6 / total);
  popalloc::solver_options o = sweep_options();
  o.relative_gap = 1e-9;
  o.max_iterations = 1;
  o.interior_point_finish = false;
  const auto cut = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, o);
  CHECK(cut.status == popalloc::solve_status::iteration_limit);
  CHECK(cut.interior_point_steps == 0);
  o.interior_point_finish = true;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}, o);
  CHECK(r.status == popalloc::solve_status::converged);
  CHECK(r.interior_point_steps > 0);
  CHECK(r.iterations == 1);
  CHECK(r.primal_objective == doctest::Approx(optimum).epsilon(1e-9));
  CHECK(r.dual_bound >= optimum - 1e-9);
  // The price of the resource is the marginal value of its capacity: (w_1 + w_2) / R.
  CHECK(r.prices[0] == doctest::Approx(total / 1e-6).epsilon(1e-6));
  CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
}

TEST_CASE("[interior point] it leaves converged solves and large problems alone") {
  // 300 options: above the finish's size, so a solve cut short stays at the iteration limit.
  const auto large = popalloc_test::random_problem(100, 3, 3);
  popalloc::solver_options o = sweep_options();
  o.max_iterations = 1;
  const auto cut = popalloc::solve<popalloc_test::test_backend>(large, popalloc::utility::log{}, o);
  CHECK(cut.status == popalloc::solve_status::iteration_limit);
  CHECK(cut.interior_point_steps == 0);
  const auto converged = popalloc::solve<popalloc_test::test_backend>(
      large, popalloc::utility::log{}, sweep_options());
  CHECK(converged.status == popalloc::solve_status::converged);
  CHECK(converged.interior_point_steps == 0);
}
