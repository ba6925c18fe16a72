// SPDX-License-Identifier: Apache-2.0
// The simulator driven by the real cluster policies (allocate() through policy_adapter): a
// hand-made heterogeneous cluster where the heterogeneity-aware outcome is known exactly and the
// agnostic variant can only be slower, warm starts, and every policy keeping every job.
#include <cstdint>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/cluster/sim_policy.hpp>

namespace pc = popalloc::cluster;

namespace {

/// Two job kinds on v100:2,k80:2: "fast" runs 10x faster on a V100 (10 vs 1 steps/s), "flat"
/// runs at 1 step/s everywhere. Two of each, all at t = 0; every job needs 3600 s on its best
/// type (36000 and 3600 steps).
std::vector<pc::job> two_kinds() {
  std::vector<pc::job> jobs;
  for (int i = 0; i < 4; ++i) {
    pc::job j;
    j.id = i;
    const bool fast = i % 2 == 0;
    j.job_type = fast ? "fast" : "flat";
    j.throughput = fast ? std::vector<double>{10.0, 1.0} : std::vector<double>{1.0, 1.0};
    j.total_steps = fast ? 36000.0 : 3600.0;
    jobs.push_back(j);
  }
  return jobs;
}

pc::gpu_cluster v100_k80(std::int64_t each) { return {{"v100", "k80"}, {each, each}}; }

pc::sim_result run(const std::vector<pc::job>& jobs, const pc::gpu_cluster& cluster,
                   pc::policy_options options, pc::policy_call_stats* stats = nullptr) {
  pc::simulator_options sim;
  sim.shuffle_type_order = options.heterogeneity_agnostic;
  sim.seed = 1;
  const pc::policy_adapter adapter(jobs, cluster, options);
  pc::sim_result r = pc::simulate(pc::to_sim_jobs(jobs), pc::sim_gpus(cluster), adapter, sim);
  if (stats != nullptr) *stats = adapter.stats();
  return r;
}

}  // namespace

TEST_CASE("max-min fairness, aware: each kind on its best type, every job done in exactly 1 h") {
  // Fast jobs have P = (10 * 2 + 1 * 2) / 4 = 5.5, flat jobs P = 1; a flat job can never exceed
  // normalized throughput 1, so the optimum gives fast jobs the V100s; the mechanism serves the
  // V100s first and keeps each job on its workers: 10 full rounds each.
  const pc::sim_result r = run(two_kinds(), v100_k80(2), {});
  REQUIRE(r.summary.jobs_finished == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(r.jobs[i].finish_seconds == doctest::Approx(3600.0));
    CHECK(r.jobs[i].seconds_on_type[i % 2 == 0 ? 1 : 0] == 0.0);
  }
  CHECK(r.summary.avg_jct_hours == doctest::Approx(1.0));
  CHECK(r.summary.gpu_utilization == doctest::Approx(1.0));
}

TEST_CASE("max-min fairness, agnostic: fast jobs lose time on K80s, never gain") {
  pc::policy_options options;
  options.heterogeneity_agnostic = true;
  const pc::sim_result agnostic = run(two_kinds(), v100_k80(2), options);
  const pc::sim_result aware = run(two_kinds(), v100_k80(2), {});
  REQUIRE(agnostic.summary.jobs_finished == 4);
  for (std::size_t i = 0; i < 4; ++i) CHECK(agnostic.jobs[i].jct_seconds() >= 3600.0 - 1e-6);
  CHECK(agnostic.summary.avg_jct_hours > 1.05 * aware.summary.avg_jct_hours);
}

TEST_CASE("the adapter warm-starts every call after the first and keeps every job") {
  // A stream on a 3-type cluster: later arrivals force recomputations.
  std::vector<pc::job> jobs;
  for (int i = 0; i < 12; ++i) {
    pc::job j;
    j.id = i;
    j.job_type = "j" + std::to_string(i % 3);
    j.throughput = {1.0 + i % 3, 1.0, 0.5 + 0.25 * (i % 4)};
    j.total_steps = 2000.0 * (1 + i % 5);
    j.arrival_time = 900.0 * i;
    j.scale_factor = i % 4 == 3 ? 2 : 1;
    jobs.push_back(j);
  }
  const pc::gpu_cluster cluster{{"v100", "p100", "k80"}, {2, 2, 2}};
  for (const pc::policy_kind policy :
       {pc::policy_kind::max_min_fairness, pc::policy_kind::proportional_fairness,
        pc::policy_kind::max_throughput, pc::policy_kind::min_makespan,
        pc::policy_kind::finish_time_fairness, pc::policy_kind::isolated, pc::policy_kind::fifo}) {
    CAPTURE(pc::to_string(policy));
    pc::policy_options options;
    options.policy = policy;
    pc::policy_call_stats stats;
    const pc::sim_result r = run(jobs, cluster, options, &stats);
    CHECK(r.summary.jobs_finished == 12);
    CHECK(stats.calls == r.summary.policy_calls);
    CHECK(stats.calls >= 2);
    if (policy != pc::policy_kind::isolated && policy != pc::policy_kind::fifo)
      CHECK(stats.warm_started == stats.calls - 1);
    for (std::size_t i = 0; i < jobs.size(); ++i)
      CHECK(r.jobs[i].steps_done == doctest::Approx(jobs[i].total_steps));
  }
}
