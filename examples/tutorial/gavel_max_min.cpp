// SPDX-License-Identifier: Apache-2.0
// Gavel's heterogeneity-aware max-min fairness (least attained service): every job should get
// the largest possible normalised throughput s_i ET_i / (w_i P_i), the worst-off first, then
// the others raised by water filling. cluster::allocate returns the fraction of time each job
// spends on each GPU type, with a certified bound on the best possible minimum. A few distinct
// kinds of jobs, as here, are solved exactly over the kinds; many are solved by bisection on
// the price-discovery core (docs/cluster-scheduling.md).
#include <cstdio>
#include <vector>

#include <popalloc/cluster/policies.hpp>

#include "tutorial_checks.hpp"

namespace cluster = popalloc::cluster;

int main() {
  const cluster::gpu_cluster gpus = cluster::parse_cluster("v100:4,p100:4,k80:4");
  // Steps/s of each job on v100, p100 and k80 (cluster order); s = GPUs it holds at once.
  struct spec {
    const char* type;
    int scale_factor;
    std::vector<double> throughput;
  };
  const std::vector<spec> specs = {{"ResNet-18", 1, {11.0, 7.0, 2.5}},
                                   {"ResNet-50", 1, {3.0, 1.5, 0.4}},
                                   {"Transformer", 2, {16.0, 9.0, 3.0}},
                                   {"LM", 1, {6.0, 4.5, 2.8}},
                                   {"A3C", 1, {1.0, 0.9, 0.8}},
                                   {"CycleGAN", 4, {24.0, 14.0, 0.0}}};  // cannot run on k80
  std::vector<cluster::job> jobs(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    jobs[i].id = static_cast<std::int64_t>(i);
    jobs[i].job_type = specs[i].type;
    jobs[i].scale_factor = specs[i].scale_factor;
    jobs[i].total_steps = 1e6;
    jobs[i].throughput = specs[i].throughput;  // the whole s-GPU job's steps/s on each type
  }

  cluster::policy_options options;  // max-min fairness with water filling is the default
  options.tolerance = 1e-6;
  const cluster::cluster_allocation fair = cluster::allocate(jobs, gpus, options);
  std::printf("%-12s %6s %6s %6s  normalised\n", "job", "v100", "p100", "k80");
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto row = static_cast<Eigen::Index>(i);
    std::printf("%-12s %6.3f %6.3f %6.3f  %.4f\n", specs[i].type, fair.fraction(row, 0),
                fair.fraction(row, 1), fair.fraction(row, 2), fair.normalized_throughput[row]);
  }
  std::printf("min normalised throughput %.6f, certified upper bound %.6f, %s (%d core solves)\n",
              fair.objective, fair.bound, popalloc::to_string(fair.status), fair.core_solves);

  // Each job's time adds up to at most 1 and no GPU type runs more GPUs than it has.
  for (Eigen::Index i = 0; i < fair.fraction.rows(); ++i)
    tutorial::check(fair.fraction.row(i).sum() <= 1.0 + 1e-9, "no job runs more than full time");
  for (std::size_t w = 0; w < gpus.size(); ++w) {
    double busy = 0.0;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      busy += jobs[i].scale_factor *
              fair.fraction(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(w));
    tutorial::check(busy <= static_cast<double>(gpus.counts[w]) * (1.0 + 1e-9), "GPUs suffice");
  }
  tutorial::check(fair.status == popalloc::solve_status::converged, "the policy converged");
  tutorial::check(fair.objective <= fair.bound &&
                      fair.bound - fair.objective <= 4.0 * options.tolerance * fair.bound,
                  "the objective is certified to the tolerance");
  tutorial::check(std::abs(fair.objective - fair.normalized_throughput.minCoeff()) <= 1e-12,
                  "the objective is the worst job's normalised throughput");
  // Gavel's isolated baseline (1/m of every type per job) is feasible, so it cannot beat it.
  options.policy = cluster::policy_kind::isolated;
  const cluster::cluster_allocation isolated = cluster::allocate(jobs, gpus, options);
  std::printf("isolated baseline: min normalised throughput %.6f\n", isolated.objective);
  tutorial::check(fair.objective >= isolated.objective, "max-min beats the isolated share");
  return tutorial::failures() == 0 ? 0 : 1;
}
