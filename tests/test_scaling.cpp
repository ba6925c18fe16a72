// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The internal scaling (detail/problem_scaling.hpp): problems across the supported range
/// of capacities and weights converge to their exact optimum, in the caller's units, and data of
/// order 1 is solved exactly as given.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

#if POPALLOC_TEST_HAVE_CLP
#include "support/lp_reference.hpp"
#endif

namespace {

using popalloc_test::wide_capacities;
using popalloc_test::wide_weights;

/// One resource of capacity R: job i has throughput a_i on it, weight w_i and target T_i.
popalloc::dense_problem<double> one_resource(double capacity, const std::vector<double>& a,
                                             const std::vector<double>& w,
                                             const std::vector<double>& target) {
  const auto n = static_cast<Eigen::Index>(a.size());
  popalloc::dense_problem<double> p;
  p.throughput.resize(n, 1);
  p.weight.resize(n);
  p.target.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    p.throughput(i, 0) = a[k];
    p.weight[i] = w[k];
    p.target[i] = target[k];
  }
  p.capacity = Eigen::VectorXd::Constant(1, capacity);
  return p;
}

/// Fractional knapsack on the one resource: job i takes up to `most[i]` of its time, worth
/// w_i a_i per unit, best first. Returns sum_i w_i a_i x_i.
double greedy_value(const popalloc::dense_problem<double>& p, const std::vector<double>& most) {
  std::vector<Eigen::Index> order(static_cast<std::size_t>(p.jobs()));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  const auto value = [&p](Eigen::Index i) { return p.weight[i] * p.throughput(i, 0); };
  std::sort(order.begin(), order.end(),
            [&](Eigen::Index x, Eigen::Index y) { return value(x) > value(y); });
  double left = p.capacity[0], total = 0.0;
  for (const Eigen::Index i : order) {
    const double x = std::min(most[static_cast<std::size_t>(i)], left);
    total += value(i) * x;
    left -= x;
  }
  return total;
}

double linear_optimum(const popalloc::dense_problem<double>& p) {
  return greedy_value(p, std::vector<double>(static_cast<std::size_t>(p.jobs()), 1.0));
}

double target_priority_optimum(const popalloc::dense_problem<double>& p) {
  std::vector<double> most;
  double idle = 0.0;
  for (Eigen::Index i = 0; i < p.jobs(); ++i) {
    most.push_back(std::min(1.0, p.target[i] / p.throughput(i, 0)));
    idle -= p.weight[i] * p.target[i];
  }
  return idle + greedy_value(p, most);
}

/// sum_i w_i log(a_i x_i) at x_i = min(1, w_i / lambda) with sum_i x_i = R (or every x_i = 1),
/// lambda found by bisection in log space.
double log_optimum(const popalloc::dense_problem<double>& p) {
  const auto time = [&p](double lambda, Eigen::Index i) {
    return std::min(1.0, p.weight[i] / lambda);
  };
  const auto used = [&](double lambda) {
    double sum = 0.0;
    for (Eigen::Index i = 0; i < p.jobs(); ++i) sum += time(lambda, i);
    return sum;
  };
  double lambda = 0.0;
  if (used(1e-300) > p.capacity[0]) {
    double lo = std::log(1e-30), hi = std::log(1e30);
    for (int k = 0; k < 200; ++k) {
      const double mid = 0.5 * (lo + hi);
      (used(std::exp(mid)) > p.capacity[0] ? lo : hi) = mid;
    }
    lambda = std::exp(hi);
  }
  double total = 0.0;
  for (Eigen::Index i = 0; i < p.jobs(); ++i)
    total += p.weight[i] * std::log(p.throughput(i, 0) * (lambda > 0.0 ? time(lambda, i) : 1.0));
  return total;
}

/// Converged, feasible, and the certificate brackets the exact optimum: objective within the
/// solve's own tolerance of it, bound not below it (up to rounding).
template <class Utility>
void check_against(const popalloc::dense_problem<double>& p, const Utility& utility, double optimum,
                   const std::string& name, double reference_error = 1e-9) {
  popalloc::solver_options o;
  o.relative_gap = 1e-4;
  o.threads = 1;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, utility, o);
  const std::string status = popalloc::to_string(r.status);
  CAPTURE(name);
  CAPTURE(status);
  CAPTURE(optimum);
  CAPTURE(r.primal_objective);
  CAPTURE(r.dual_bound);
  CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
  const double rounding = reference_error * std::max(std::abs(optimum), r.gap_scale);
  CHECK(r.primal_objective <= optimum + rounding);
  CHECK(r.dual_bound >= optimum - rounding);
  CHECK(r.status == popalloc::solve_status::converged);
  CHECK(r.primal_objective >= optimum - 1.01e-4 * r.gap_scale - rounding);
  CHECK(popalloc_test::recomputed_objective(p, utility, r) ==
        doctest::Approx(r.primal_objective).epsilon(1e-12).scale(r.gap_scale));
}

}  // namespace

TEST_CASE("[scaling] one resource across the capacity and weight grid: the exact optimum") {
  // Every capacity of the grid, every pair and triple of weights, throughputs and targets of
  // different sizes: converged, feasible and within the tolerance of the closed-form optimum.
  std::mt19937_64 rng(11);
  int cases = 0;
  for (const double capacity : wide_capacities) {
    for (const double w0 : wide_weights) {
      for (const double w1 : wide_weights) {
        for (const int n : {1, 2, 3}) {
          std::vector<double> a, w, target;
          for (int i = 0; i < n; ++i) {
            a.push_back(popalloc_test::uniform(rng, 0.1, 2.0));
            w.push_back(i == 0 ? w0 : (i == 1 ? w1 : wide_weights[rng() % 3]));
            target.push_back(wide_capacities[rng() % 6] * popalloc_test::uniform(rng, 0.1, 2.0));
          }
          const auto p = one_resource(capacity, a, w, target);
          CAPTURE(capacity);
          CAPTURE(w0);
          CAPTURE(w1);
          CAPTURE(n);
          check_against(p, popalloc::utility::linear{}, linear_optimum(p), "linear");
          check_against(p, popalloc::utility::target_priority{}, target_priority_optimum(p),
                        "target priority");
          check_against(p, popalloc::utility::log{}, log_optimum(p), "log");
          ++cases;
        }
      }
    }
  }
  CHECK(cases == 6 * 3 * 3 * 3);
}

TEST_CASE("[scaling] results are in the caller's units: prices, fractions and the bound") {
  // One job, weight 1e3, on a resource of capacity 1e-12: it takes all of it, the price is
  // w a per unit (the job is indifferent there), the objective w a R.
  auto p = one_resource(1e-12, {0.75}, {1e3}, {1.0});
  popalloc::solver_options o;
  o.threads = 1;
  std::vector<double> reported_bounds;
  const auto r = popalloc::solve<popalloc_test::test_backend>(
      p, popalloc::utility::linear{}, o, [&](const popalloc::progress& step) {
        reported_bounds.push_back(step.dual_bound);
        return popalloc::callback_action::proceed;
      });
  REQUIRE(r.status == popalloc::solve_status::converged);
  CHECK(r.primal_objective == doctest::Approx(750e-12).epsilon(1e-4));
  CHECK(r.dual_bound == doctest::Approx(750e-12).epsilon(1e-4));
  CHECK(r.prices[0] == doctest::Approx(750.0).epsilon(1e-4));
  REQUIRE(r.allocation.fraction.size() == 1);
  CHECK(r.allocation.fraction[0] == doctest::Approx(1e-12).epsilon(1e-4));
  CHECK(r.usage[0] <= 1e-12);
  REQUIRE(!reported_bounds.empty());
  CHECK(reported_bounds.back() == doctest::Approx(r.dual_bound));
}

TEST_CASE("[scaling] data of order 1 is solved exactly as given") {
  const auto p = popalloc_test::random_problem(50, 4, 3);
  popalloc::dense_problem<double> scaled;
  CHECK(popalloc::detail::scale_problem(p, popalloc::utility::linear{}, scaled).identity());
  CHECK(popalloc::detail::scale_problem(p, popalloc::utility::log{}, scaled).identity());
  CHECK(
      popalloc::detail::scale_problem(p, popalloc::utility::target_priority{}, scaled).identity());
}

TEST_CASE("[scaling] the scales are powers of two and exact") {
  // Weights 1e3 and capacities 1e-9: both scales apply; throughputs of the scaled problem are
  // the caller's times the job's time unit exactly.
  const auto p = one_resource(1e-9, {0.5, 1.5}, {1e3, 1e3}, {1.0, 1.0});
  popalloc::dense_problem<double> scaled;
  const auto s = popalloc::detail::scale_problem(p, popalloc::utility::linear{}, scaled);
  REQUIRE(!s.identity());
  REQUIRE(s.job_time.size() == 2);
  for (Eigen::Index i = 0; i < 2; ++i) {
    int e = 0;
    CHECK(std::frexp(s.job_time[i], &e) == 0.5);
    CHECK(s.job_time[i] >= 1e-9);
    CHECK(s.job_time[i] < 2e-9);
    CHECK(scaled.throughput(i, 0) == p.throughput(i, 0) * s.job_time[i]);
  }
  int e = 0;
  CHECK(std::frexp(s.objective, &e) == 0.5);
}

TEST_CASE("[scaling] the objective's unit alone scales the weights the solver reads, not a copy") {
  // Weights of order 1e3 and capacities of order 1: only the objective's unit changes, so the
  // solve reads the caller's throughputs; its answer is the solve of the problem with its weights
  // scaled by hand (the same numbers the solver reads), mapped back exactly.
  auto p = popalloc_test::random_problem(20000, 4, 11);
  p.weight = Eigen::VectorXd::Constant(p.jobs(), 1e3);
  p.weight.head(10).setConstant(3e3);
  popalloc::dense_problem<double> scaled;
  const auto s = popalloc::detail::scale_problem(p, popalloc::utility::log{}, scaled);
  REQUIRE(!s.identity());
  CHECK(!s.copies());
  CHECK(scaled.jobs() == 0);
  CHECK(s.weight_factor() == s.objective);
  auto by_hand = p;
  popalloc::detail::scale_weights(by_hand, s.objective);
  popalloc::solver_options options;
  options.threads = 2;
  const auto r = popalloc::solve(p, popalloc::utility::log{}, options);
  const auto h = popalloc::solve(by_hand, popalloc::utility::log{}, options);
  REQUIRE(r.status == popalloc::solve_status::converged);
  CHECK(r.sample_iterations > 0);  // the sample reads scaled weights too
  CHECK(r.iterations == h.iterations);
  CHECK(r.sample_iterations == h.sample_iterations);
  CHECK(r.primal_objective == h.primal_objective / s.objective);
  CHECK(r.dual_bound == h.dual_bound / s.objective);
  CHECK(r.relative_gap == h.relative_gap);
  CHECK(r.allocation.fraction == h.allocation.fraction);
  CHECK(r.prices == h.prices / s.objective);
}

#if POPALLOC_TEST_HAVE_CLP
TEST_CASE("[scaling] linear across the range of capacities and weights: the LP optimum") {
  // popalloc_test::wide_range_problem, as benchmarks/robustness_sweep.cpp draws them.
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 150; ++trial) {
    const auto p = popalloc_test::wide_range_problem(rng);
    const auto n = p.jobs(), m = p.resources();
    CAPTURE(trial);
    // CLP's tolerances are absolute: its LP gets rows of capacity 1 (demands 1 / R_j) and
    // weights scaled to a largest objective coefficient of 1, and its optimum is scaled back.
    Eigen::MatrixXd demand(n, m);
    for (int j = 0; j < m; ++j) demand.col(j).setConstant(1.0 / p.capacity[j]);
    double largest = 0.0;
    for (int i = 0; i < n; ++i)
      largest = std::max(
          largest, p.weight[i] * p.throughput.row(i).maxCoeff() * std::min(1.0, p.capacity.sum()));
    const Eigen::VectorXd weight = p.weight / largest, target = p.target;
    const auto lp = popalloc_test::solve_lp(
        popalloc_test::make_dense_lp(p.throughput, Eigen::VectorXd::Ones(m), weight, &target,
                                     popalloc_test::lp_utility::linear, &demand));
    REQUIRE(lp.optimal);
    check_against(p, popalloc::utility::linear{}, lp.objective * largest, "linear", 1e-7);
  }
}
#endif
