// SPDX-License-Identifier: Apache-2.0
// A utility of your own: f(t) = w log(1 + t), which unlike utility::log is finite at t = 0, so
// a job may be left idle. The solver needs f, its right derivative, its curvature and the
// maximiser of f(t) - mu t^2 / 2 - slope t on an interval (utility/concept.hpp,
// docs/utilities.md); a missing operation is a static_assert that names it.
#include <cmath>
#include <cstdio>
#include <random>

#include <popalloc/popalloc.hpp>

#include "tutorial_checks.hpp"

struct log_one_plus {
  static constexpr bool piecewise_linear = false;  // strictly concave: no smoothing needed
  static constexpr bool uses_target = false;
  static constexpr bool requires_positive_weight = true;
  static constexpr bool requires_positive_throughput = false;  // f(0) = 0 is finite

  double value(double t, const popalloc::job_parameters& job) const {
    return job.weight * std::log1p(t);
  }
  double marginal(double t, const popalloc::job_parameters& job) const {
    return job.weight / (1.0 + t);
  }
  double curvature(double t, const popalloc::job_parameters& job) const {
    return job.weight / ((1.0 + t) * (1.0 + t));
  }
  // f'(t) = mu t + slope with u = 1 + t: mu u^2 + (slope - mu) u - w = 0. Each branch picks the
  // form of the positive root that does not cancel, so mu -> 0 stays accurate.
  double maximize(double slope, double mu, double lo, double hi,
                  const popalloc::job_parameters& job) const {
    const double b = slope - mu, root = std::sqrt(b * b + 4.0 * mu * job.weight);
    double u = HUGE_VAL;  // f' - mu t - slope > 0 everywhere: the upper end
    if (b >= 0.0 && b + root > 0.0) u = 2.0 * job.weight / (b + root);
    if (b < 0.0 && mu > 0.0) u = (root - b) / (2.0 * mu);
    const double t = u - 1.0;
    return t < lo ? lo : (t > hi ? hi : t);
  }
};

int main() {
  // Ten identical jobs on one resource of capacity 4: by symmetry each gets 0.4 of its time.
  popalloc::dense_problem<double> identical;
  identical.throughput = Eigen::MatrixXd::Constant(10, 1, 3.0);
  identical.capacity = Eigen::VectorXd::Constant(1, 4.0);
  popalloc::solver_options options;
  // Near the optimum the objective is flat to second order: a relative gap eps leaves the
  // throughputs off by about sqrt(eps), so a tight gap is needed to check them to 1e-5.
  options.relative_gap = 1e-10;
  const auto symmetric = popalloc::solve(identical, log_one_plus{}, options);
  std::printf("identical jobs: throughput %.9f each (exact %.9f)\n", symmetric.throughput[0], 1.2);
  tutorial::check(std::abs(symmetric.throughput[0] - 1.2) <= 1e-5, "the symmetric optimum");

  // A random instance in which the resources are scarce enough that some jobs stay idle.
  constexpr Eigen::Index jobs = 1000, resources = 3;
  std::mt19937_64 random(11);
  std::uniform_real_distribution<double> speed(0.1, 5.0);
  popalloc::dense_problem<double> problem;
  problem.throughput = Eigen::MatrixXd::NullaryExpr(jobs, resources, [&] { return speed(random); });
  problem.capacity = Eigen::Vector3d(50.0, 80.0, 20.0);
  options.relative_gap = 1e-6;
  const auto result = popalloc::solve(problem, log_one_plus{}, options);
  tutorial::print_certificate(result);
  std::printf("%ld of %ld jobs idle\n", static_cast<long>((result.throughput.array() == 0).count()),
              static_cast<long>(jobs));
  tutorial::check_dense_certificate(problem, log_one_plus{}, result);
  tutorial::check_converged(result, options.relative_gap);
  return tutorial::failures() == 0 ? 0 : 1;
}
