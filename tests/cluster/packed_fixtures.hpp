// SPDX-License-Identifier: Apache-2.0
// Shared instances of the space-sharing tests: Gavel's table (parsed once) and random workloads
// drawn from its job types.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <popalloc/cluster/cluster_spec.hpp>
#include <popalloc/cluster/job.hpp>
#include <popalloc/cluster/packed_policies.hpp>
#include <popalloc/cluster/throughputs.hpp>

namespace packed_test {

namespace pc = popalloc::cluster;

inline const pc::throughput_table& gavel_table() {
  static const pc::throughput_table table =
      pc::load_throughputs(std::string(POPALLOC_CLUSTER_DATA_DIR) + "/simulation_throughputs.json");
  return table;
}

/// n jobs over `types` job types of Gavel's table (so classes have several members and
/// same-class pairs occur), scale factor 2 with probability `multi`, weight 5 w.p. 0.2.
inline std::vector<pc::job> gavel_jobs(int n, int types, const pc::gpu_cluster& cluster,
                                       std::uint32_t seed, double multi = 0.25) {
  const auto& table = gavel_table();
  std::vector<std::string> names;
  for (const auto& key : table.keys())
    if (key.scale_factor == 2) names.push_back(key.job_type);
  std::mt19937 rng(seed);
  std::shuffle(names.begin(), names.end(), rng);
  names.resize(static_cast<std::size_t>(types));
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<pc::job> jobs;
  for (int i = 0; i < n; ++i) {
    const std::string& name = names[static_cast<std::size_t>(u(rng) * types) % names.size()];
    const int s = u(rng) < multi ? 2 : 1;
    pc::job j = pc::make_job(i, name, s, 1000.0, table, cluster);
    j.priority_weight = u(rng) < 0.2 ? 5.0 : 1.0;
    jobs.push_back(std::move(j));
  }
  return jobs;
}

/// Job time (alone + shared) and GPU use of a packed allocation.
inline void check_packed_feasible(const std::vector<pc::job>& jobs, const pc::gpu_cluster& cluster,
                                  const pc::cluster_allocation& a) {
  std::vector<double> time(jobs.size(), 0.0), used(cluster.size(), 0.0);
  for (std::size_t i = 0; i < jobs.size(); ++i)
    for (std::size_t w = 0; w < cluster.size(); ++w) {
      const double x = a.fraction(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(w));
      CHECK(x >= 0.0);
      time[i] += x;
      used[w] += jobs[i].scale_factor * x;
    }
  for (const pc::pair_share& p : a.pairs) {
    REQUIRE(p.first < p.second);
    CHECK(p.fraction > 0.0);
    CHECK(jobs[static_cast<std::size_t>(p.first)].scale_factor ==
          jobs[static_cast<std::size_t>(p.second)].scale_factor);
    time[static_cast<std::size_t>(p.first)] += p.fraction;
    time[static_cast<std::size_t>(p.second)] += p.fraction;
    used[static_cast<std::size_t>(p.gpu)] +=
        jobs[static_cast<std::size_t>(p.first)].scale_factor * p.fraction;
  }
  for (const double t : time) CHECK(t <= 1.0);
  for (std::size_t w = 0; w < cluster.size(); ++w)
    CHECK(used[w] <= static_cast<double>(cluster.counts[w]));
}

}  // namespace packed_test
