// SPDX-License-Identifier: Apache-2.0
// Shared instances of the cluster-scheduling tests.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <popalloc/cluster/cluster_spec.hpp>
#include <popalloc/cluster/job.hpp>

namespace cluster_test {

namespace pc = popalloc::cluster;

/// Gavel's test_max_min_fairness_with_perf instance, types in Gavel's
/// alphabetical order.
inline pc::gpu_cluster golden_cluster() { return pc::parse_cluster("k80:3,p100:2,v100:1"); }

inline std::vector<pc::job> golden_jobs() {
  std::vector<pc::job> jobs(2);
  jobs[0].id = 0;
  jobs[0].throughput = {0.5, 1.0, 2.0};
  jobs[0].total_steps = 300;
  jobs[1].id = 1;
  jobs[1].throughput = {1.0, 2.0, 3.0};
  jobs[1].total_steps = 500;
  return jobs;
}

/// Random jobs: throughputs in [0.1, 10] with some zeros, scale factors 1/2/4, weights 1 or 5,
/// remaining steps, FTF state.
inline std::vector<pc::job> random_jobs(int n, const pc::gpu_cluster& cluster, std::uint32_t seed,
                                        bool multi_gpu = true) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<pc::job> jobs(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    pc::job& j = jobs[static_cast<std::size_t>(i)];
    j.id = i;
    j.throughput.resize(cluster.size());
    for (double& t : j.throughput) t = u(rng) < 0.1 ? 0.0 : 0.1 + 9.9 * u(rng);
    if (j.throughput[0] == 0.0) j.throughput[0] = 1.0;  // every job can run somewhere
    const double r = u(rng);
    j.scale_factor = !multi_gpu ? 1 : (r < 0.7 ? 1 : (r < 0.85 ? 2 : 4));
    j.priority_weight = u(rng) < 0.2 ? 5.0 : 1.0;
    j.total_steps = 1000.0 + 1e5 * u(rng);
    j.remaining_steps = j.total_steps * (0.2 + 0.8 * u(rng));
    j.elapsed_time = 1000.0 * u(rng);
    j.isolated_time = 0.5 * j.elapsed_time * u(rng);
  }
  return jobs;
}

}  // namespace cluster_test
