// SPDX-License-Identifier: Apache-2.0
// Space sharing in the mechanism and the simulator: a pair entry takes both of its jobs and one
// set of GPUs; two jobs that lose nothing by sharing finish together in exactly the time each
// needs alone; a generated stream on Gavel's table finishes every job with exactly its steps,
// no job in two places in a round, no type over capacity; finish-time fairness keeps the jobs'
// isolated times across calls; bad pair answers are rejected.
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/cluster/job_generator.hpp>
#include <popalloc/cluster/round_mechanism.hpp>
#include <popalloc/cluster/sim_policy.hpp>
#include <popalloc/cluster/simulator.hpp>

namespace pc = popalloc::cluster;

namespace {

pc::round_job single(std::int64_t id, std::vector<double> x) {
  pc::round_job j;
  j.id = id;
  j.allocation = std::move(x);
  j.throughput.assign(j.allocation.size(), 1.0);
  j.time_received.assign(j.allocation.size(), 180.0);
  j.deficit.assign(j.allocation.size(), 0.0);
  return j;
}

/// One V100; "a" runs at 1 step/s, "b" at 2, and sharing costs neither anything.
pc::throughput_table lossless_table() {
  pc::throughput_table t;
  t.add_gpu_type("v100");
  t.set({"a", 1}, "v100", 1.0);
  t.set({"b", 1}, "v100", 2.0);
  t.set_pair({"a", 1}, {"b", 1}, "v100", 1.0, 2.0);
  return t;
}

const pc::throughput_table& gavel_table() {
  static const pc::throughput_table table =
      pc::load_throughputs(std::string(POPALLOC_SIM_DATA_DIR) + "/simulation_throughputs.json");
  return table;
}

/// n generated jobs on Gavel's table with their steps scaled by `shrink` (short jobs: quick
/// tests).
std::vector<pc::job> short_stream(const pc::gpu_cluster& cluster, int n, std::uint64_t seed,
                                  bool multi_gpu, double jobs_per_hour, double shrink) {
  pc::generator_options g;
  g.seed = seed;
  g.multi_gpu = multi_gpu;
  g.jobs_per_hour = jobs_per_hour;
  auto rows = pc::generate_jobs(n, gavel_table(), g);
  for (auto& row : rows) row.total_steps *= shrink;
  return pc::jobs_from_generated(rows, gavel_table(), cluster);
}

pc::policy_options plain_max_min() {
  pc::policy_options o;
  o.water_filling = false;
  o.tolerance = 1e-4;
  return o;
}

}  // namespace

TEST_CASE("space sharing: a pair entry takes both jobs and one GPU") {
  const pc::worker_layout layout({2}, {2});
  std::vector<pc::round_job> jobs = {single(0, {0.2}), single(1, {0.2}), single(2, {0.5})};
  pc::round_job pair = single(-1, {0.8});  // highest priority
  pair.first = 0;
  pair.second = 1;
  jobs.push_back(pair);
  const pc::round_plan plan = pc::plan_round(jobs, {720.0}, layout, {0});
  REQUIRE(plan.assignments.size() == 2);
  CHECK(plan.assignments[0].id == -1);  // placement order: the pair was taken first
  CHECK(plan.assignments[1].id == 2);
  CHECK(plan.free_gpus[0] == 0);
  // With job 2 busy elsewhere the pair's members cannot also run alone.
  jobs[3].allocation = {0.01};
  const pc::round_plan other = pc::plan_round(jobs, {720.0}, layout, {0});
  std::set<std::int64_t> ids;
  for (const auto& a : other.assignments) ids.insert(a.id);
  CHECK(ids == std::set<std::int64_t>{0, 2});
}

TEST_CASE("space sharing: two jobs that share losslessly finish together in exactly 1 h") {
  // Packed max-min gives the pair the whole GPU (level 1 for both); a needs 3600 steps at 1/s,
  // b 7200 at 2/s: ten rounds of 360 s each. Time slicing (unpacked) takes 2 h for the last.
  const auto table = lossless_table();
  const auto cluster = pc::parse_cluster("v100:1");
  std::vector<pc::job> jobs = {pc::make_job(0, "a", 1, 3600.0, table, cluster),
                               pc::make_job(1, "b", 1, 7200.0, table, cluster)};
  const pc::packed_policy_adapter packed(jobs, cluster, table, plain_max_min());
  const pc::sim_result r =
      pc::simulate_packed(pc::to_sim_jobs(jobs), pc::sim_gpus(cluster), packed, {});
  REQUIRE(r.summary.jobs_finished == 2);
  CHECK(r.jobs[0].finish_seconds == doctest::Approx(3600.0));
  CHECK(r.jobs[1].finish_seconds == doctest::Approx(3600.0));
  CHECK(r.summary.rounds == 10);
  CHECK(packed.stats().pairs >= 1);
  const pc::policy_adapter alone(jobs, cluster, plain_max_min());
  const pc::sim_result u = pc::simulate(pc::to_sim_jobs(jobs), pc::sim_gpus(cluster), alone, {});
  CHECK(u.summary.avg_jct_hours > 1.4);
}

TEST_CASE("space sharing: a generated stream on Gavel's table finishes every job exactly") {
  const auto cluster = pc::parse_cluster("v100:8,p100:8,k80:8");
  const auto jobs = short_stream(cluster, 60, 5, true, 40.0, 0.05);
  const auto sim_jobs = pc::to_sim_jobs(jobs);
  const pc::packed_policy_adapter policy(jobs, cluster, gavel_table(), plain_max_min());
  pc::simulator_options o;
  o.type_order = {0, 1, 2};
  int pair_rounds = 0;
  o.on_round = [&](const pc::sim_round& round) {
    std::set<int> gpus;
    std::vector<int> used(3, 0);
    for (const auto& a : round.plan->assignments) {
      if (a.id < 0) ++pair_rounds;
      for (const int w : a.workers) CHECK(gpus.insert(w).second);
      used[static_cast<std::size_t>(a.type)] += static_cast<int>(a.workers.size());
    }
    for (int w = 0; w < 3; ++w) CHECK(used[static_cast<std::size_t>(w)] <= 8);
  };
  const pc::sim_result r = pc::simulate_packed(sim_jobs, pc::sim_gpus(cluster), policy, o);
  CHECK(r.summary.jobs_finished == 60);
  CHECK(r.summary.jobs_unfinished == 0);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    CAPTURE(i);
    CHECK(r.jobs[i].steps_done == doctest::Approx(sim_jobs[i].total_steps));
    CHECK(r.jobs[i].finish_seconds >= sim_jobs[i].arrival_seconds);
  }
  CHECK(pair_rounds > 0);
  CHECK(policy.stats().not_converged == 0);
}

TEST_CASE("space sharing: finish-time fairness over a stream, with the jobs' history") {
  const auto cluster = pc::parse_cluster("v100:3,p100:3,k80:3");
  const auto jobs = short_stream(cluster, 16, 9, false, 120.0, 0.02);
  const auto sim_jobs = pc::to_sim_jobs(jobs);
  pc::policy_options f;
  f.policy = pc::policy_kind::finish_time_fairness;
  f.tolerance = 1e-6;
  const pc::packed_policy_adapter policy(jobs, cluster, gavel_table(), f);
  pc::simulator_options o;
  o.type_order = {0, 1, 2};
  o.min_seconds_between_resets = 0.0;
  const pc::sim_result r = pc::simulate_packed(sim_jobs, pc::sim_gpus(cluster), policy, o);
  CHECK(r.summary.jobs_finished == 16);
  CHECK(r.summary.jobs_unfinished == 0);
  for (std::size_t i = 0; i < jobs.size(); ++i)
    CHECK(r.jobs[i].steps_done == doctest::Approx(sim_jobs[i].total_steps));
  CHECK(policy.stats().calls > 5);
  CHECK(policy.stats().not_converged == 0);
  CHECK(policy.stats().pairs > 0);

  // The history: one V100 and two jobs of throughput 1 and 2 have ET_iso 1/2 and 1 (half the
  // GPU each); 20 and 30 steps later C = 20 / (1/2) = 40 and 30 / 1 = 30.
  pc::throughput_table t;
  t.add_gpu_type("v100");
  t.set({"a", 1}, "v100", 1.0);
  t.set({"b", 1}, "v100", 2.0);
  const auto one = pc::parse_cluster("v100:1");
  std::vector<pc::job> pair = {pc::make_job(7, "a", 1, 100.0, t, one),
                               pc::make_job(9, "b", 1, 100.0, t, one)};
  pc::detail::finish_time_history history;
  for (auto& j : pair) history.update(j);
  CHECK(pair[0].isolated_time == 0.0);
  history.remember(pair, one);
  pair[0].remaining_steps = 80.0;
  pair[1].remaining_steps = 70.0;
  for (auto& j : pair) history.update(j);
  CHECK(pair[0].isolated_time == doctest::Approx(40.0));
  CHECK(pair[1].isolated_time == doctest::Approx(30.0));
}

TEST_CASE("space sharing: bad pair answers are rejected") {
  const auto table = lossless_table();
  const auto cluster = pc::parse_cluster("v100:1");
  std::vector<pc::job> jobs = {pc::make_job(0, "a", 1, 3600.0, table, cluster),
                               pc::make_job(1, "b", 1, 7200.0, table, cluster)};
  const auto sim_jobs = pc::to_sim_jobs(jobs);
  auto answer = [](pc::sim_pair p) {
    return [p](const pc::policy_request& r) {
      pc::sim_allocation a;
      a.singles = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(r.active.size()), 1);
      a.pairs.push_back(p);
      return a;
    };
  };
  pc::sim_pair good{0, 1, {1.0}, {1.0}, {2.0}};
  CHECK(pc::simulate_packed(sim_jobs, {1}, answer(good)).summary.jobs_finished == 2);
  pc::sim_pair p = good;
  p.second = 7;
  CHECK_THROWS_AS(pc::simulate_packed(sim_jobs, {1}, answer(p)), popalloc::invalid_problem);
  p = good;
  p.first_throughput = {std::nan("")};
  CHECK_THROWS_AS(pc::simulate_packed(sim_jobs, {1}, answer(p)), popalloc::invalid_problem);
  p = good;
  p.second = 0;
  CHECK_THROWS_AS(pc::simulate_packed(sim_jobs, {1}, answer(p)), popalloc::invalid_problem);
  p = good;
  p.allocation = {1.0, 0.0};
  CHECK_THROWS_AS(pc::simulate_packed(sim_jobs, {1}, answer(p)), popalloc::invalid_problem);
  auto multi = sim_jobs;
  multi[1].scale_factor = 2;
  CHECK_THROWS_AS(pc::simulate_packed(multi, {2}, answer(good)), popalloc::invalid_problem);
}
