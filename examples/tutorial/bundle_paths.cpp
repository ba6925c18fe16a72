// SPDX-License-Identifier: Apache-2.0
// A bundle problem: flows choose among network paths, and an option (a path) uses every link on
// it at once, which a dense problem (one resource per option) cannot express. Flow i sends
// demand_i on path p for a fraction x_ip of the time; the utility is log of the routed rate.
#include <cmath>
#include <cstdio>
#include <vector>

#include <popalloc/popalloc.hpp>

#include "tutorial_checks.hpp"

struct flow {
  const char* name;
  double demand;
  std::vector<std::vector<std::int32_t>> paths;  // each path: the links it crosses
};

int main() {
  // Links A-B, B-C, A-D, D-C, B-D and their capacities.
  const Eigen::VectorXd link_capacity = (Eigen::VectorXd(5) << 10, 10, 6, 6, 4).finished();
  const std::vector<flow> flows = {
      {"A->C", 12.0, {{0, 1}, {2, 3}}}, {"B->C", 8.0, {{1}, {4, 3}}}, {"A->D", 5.0, {{2}, {0, 4}}}};

  popalloc::bundle_problem<double> problem(link_capacity);
  for (const flow& f : flows) {
    problem.add_job();  // weight 1: proportional fairness between flows
    for (const auto& path : f.paths) {
      std::vector<popalloc::consumption> uses;
      for (const std::int32_t link : path) uses.push_back({link, f.demand});
      problem.add_option(f.demand, uses);  // all of its time on this path routes the demand
    }
  }
  popalloc::solver_options options;
  options.relative_gap = 1e-6;
  const popalloc::solve_result result = popalloc::solve(problem, popalloc::utility::log{}, options);
  tutorial::print_certificate(result);

  // Rebuild every link's load from the allocation: it must fit, and the objective must match.
  Eigen::VectorXd load = Eigen::VectorXd::Zero(link_capacity.size());
  double objective = 0.0;
  const popalloc::allocation& x = result.allocation;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    double time = 0.0, rate = 0.0;
    for (auto k = x.job_offset[i]; k < x.job_offset[i + 1]; ++k) {
      const auto path = static_cast<std::size_t>(x.option[static_cast<std::size_t>(k)]);
      const double fraction = x.fraction[static_cast<std::size_t>(k)];
      time += fraction;
      rate += fraction * flows[i].demand;
      for (const std::int32_t link : flows[i].paths[path]) load[link] += fraction * flows[i].demand;
      std::printf("%s: %.4f on path %zu\n", flows[i].name, fraction * flows[i].demand, path);
    }
    tutorial::check(time <= 1.0 + 1e-12, "no flow routes more than its demand");
    objective += std::log(rate);
  }
  for (Eigen::Index l = 0; l < load.size(); ++l) {
    std::printf("link %ld: load %.4f of %.4f, price %.4g\n", static_cast<long>(l), load[l],
                link_capacity[l], result.prices[l]);
    tutorial::check(load[l] <= link_capacity[l] * (1.0 + 1e-12), "every link fits its load");
  }
  tutorial::check(std::abs(objective - result.primal_objective) <= 1e-9,
                  "the objective is the utility of the allocation");
  tutorial::check(result.dual_bound >= result.primal_objective - 1e-9, "the bound is a bound");
  tutorial::check_converged(result, options.relative_gap);
  return tutorial::failures() == 0 ? 0 : 1;
}
