// SPDX-License-Identifier: Apache-2.0
// The discrete-event simulator, driven by simple policies written here: exact completion times
// of small cases, job conservation, no GPU used twice in a round, idle gaps, the reset rule,
// early stops, and rejected inputs.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/cluster/simulator.hpp>
#include <popalloc/random.hpp>

namespace pc = popalloc::cluster;

namespace {

/// Everything on the fastest type (column 0), as much as the capacity allows: each job gets
/// min(1, n_0 / sum_j s_j). Feasible for the base constraints.
Eigen::MatrixXd all_on_first_type(const pc::policy_request& request) {
  const auto m = static_cast<Eigen::Index>(request.active.size());
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(m, static_cast<Eigen::Index>(request.gpus->size()));
  double demand = 0.0;
  for (const std::int64_t id : request.active)
    demand += (*request.jobs)[static_cast<std::size_t>(id)].scale_factor;
  for (Eigen::Index i = 0; i < m; ++i) x(i, 0) = std::min(1.0, (*request.gpus)[0] / demand);
  return x;
}

/// Equal time share of every type: X_iw = min(1/W, n_w / sum_j s_j) (W types).
Eigen::MatrixXd equal_share(const pc::policy_request& request) {
  const auto m = static_cast<Eigen::Index>(request.active.size());
  const auto types = static_cast<Eigen::Index>(request.gpus->size());
  double demand = 0.0;
  for (const std::int64_t id : request.active)
    demand += (*request.jobs)[static_cast<std::size_t>(id)].scale_factor;
  Eigen::MatrixXd x(m, types);
  for (Eigen::Index w = 0; w < types; ++w)
    for (Eigen::Index i = 0; i < m; ++i)
      x(i, w) = std::min(1.0 / static_cast<double>(types),
                         (*request.gpus)[static_cast<std::size_t>(w)] / demand);
  return x;
}

pc::sim_job job_at(double arrival, double steps, std::vector<double> throughput, int s = 1) {
  pc::sim_job j;
  j.arrival_seconds = arrival;
  j.total_steps = steps;
  j.scale_factor = s;
  j.throughput = std::move(throughput);
  return j;
}

/// A random workload: Poisson arrivals, s in {1, 2, 4}, throughputs with a fast type 0.
std::vector<pc::sim_job> random_workload(int n, std::uint64_t seed, double jobs_per_hour) {
  popalloc::random_source random(seed);
  std::vector<pc::sim_job> jobs;
  double clock = 0.0;
  for (int i = 0; i < n; ++i) {
    const double r = random.unit();
    const int s = r < 0.7 ? 1 : (r < 0.85 ? 2 : 4);
    const double fast = 1.0 + 9.0 * random.unit();
    std::vector<double> t = {fast, fast * (0.2 + 0.8 * random.unit()), fast * 0.3};
    if (random.unit() < 0.1) t[2] = 0.0;  // some jobs cannot use the slow type
    jobs.push_back(job_at(clock, std::round(fast * 3600.0 * (0.2 + 4.0 * random.unit())), t, s));
    clock += -std::log(1.0 - random.unit()) * 3600.0 / jobs_per_hour;
  }
  return jobs;
}

}  // namespace

TEST_CASE("one job alone finishes at steps / throughput of the fastest type") {
  // T = 1.003 steps/s: a round runs floor(361.08) = 361 steps in 359.92 s; 1000 steps take
  // rounds of 361, 361 and 278 steps, all back to back, so the job ends at 1000 / 1.003 s.
  const std::vector<pc::sim_job> jobs = {job_at(0.0, 1000.0, {1.003, 0.5})};
  const pc::sim_result r = pc::simulate(jobs, {1, 1}, all_on_first_type);
  REQUIRE(r.jobs[0].status == pc::sim_job_status::finished);
  CHECK(r.jobs[0].finish_seconds == doctest::Approx(1000.0 / 1.003).epsilon(1e-12));
  CHECK(r.jobs[0].rounds_run == 3);
  CHECK(r.jobs[0].seconds_on_type[1] == 0.0);
  CHECK(r.summary.jobs_finished == 1);
  CHECK(r.summary.avg_jct_hours == doctest::Approx(1000.0 / 1.003 / 3600.0));
  CHECK(r.summary.makespan_hours == doctest::Approx(1000.0 / 1.003 / 3600.0));
  CHECK(r.summary.policy_calls == 1);
  // One of two GPUs busy the whole time.
  CHECK(r.summary.gpu_utilization == doctest::Approx(0.5));
}

TEST_CASE("a job waits for the next round: arrivals mid-round start at the round boundary") {
  // Job 0 (T = 1, 3600 steps) runs full rounds on the single GPU; job 1 arrives at t = 100 and
  // has no allocation until the next reset, which the 1920 s rule puts at t = 2160 (round 7).
  // Before that job 0 has priority > 0 and job 1 priority 0, so job 0 keeps the GPU; after it,
  // both have X = 1/2. Job 0 needs 10 rounds in all.
  const std::vector<pc::sim_job> jobs = {job_at(0.0, 3600.0, {1.0}), job_at(100.0, 360.0, {1.0})};
  std::vector<double> recompute_times;
  pc::simulator_options options;
  options.on_round = [&](const pc::sim_round& round) {
    if (round.allocation_recomputed) recompute_times.push_back(round.start_seconds);
  };
  const pc::sim_result r = pc::simulate(jobs, {1}, all_on_first_type, options);
  REQUIRE(recompute_times.size() >= 2);
  CHECK(recompute_times[0] == 0.0);
  CHECK(recompute_times[1] == 2160.0);
  CHECK(r.jobs[1].first_run_seconds >= 2160.0);
  CHECK(std::fmod(r.jobs[1].first_run_seconds, 360.0) == 0.0);
  // Job 1 needs exactly one round; job 0's 10 rounds plus job 1's 1 take 11 x 360 s.
  CHECK(r.summary.makespan_hours * 3600.0 == doctest::Approx(11 * 360.0));
  CHECK(r.summary.gpu_utilization == doctest::Approx(1.0));
}

TEST_CASE("min_seconds_between_resets = 0 recomputes after every arrival and completion") {
  const std::vector<pc::sim_job> jobs = {job_at(0.0, 3600.0, {1.0}), job_at(100.0, 360.0, {1.0})};
  pc::simulator_options options;
  options.min_seconds_between_resets = 0.0;
  const pc::sim_result r = pc::simulate(jobs, {1}, all_on_first_type, options);
  // At t = 0, at t = 360 (job 1 arrived) and after job 1 finishes.
  CHECK(r.summary.policy_calls == 3);
  // At t = 360 both jobs have X = 1/2, equal time and zero deficit: the tie goes to job 0 (as in
  // Gavel's stable sort); after that round job 0 has priority 0.5 / (540/720) = 2/3 against job
  // 1's 0.5 / (180/720) = 2, so job 1 runs from 720 to 1080.
  CHECK(r.jobs[1].first_run_seconds == 720.0);
  CHECK(r.jobs[1].finish_seconds == doctest::Approx(1080.0));
}

TEST_CASE("an idle gap between arrivals: the clock jumps and nothing is lost") {
  const std::vector<pc::sim_job> jobs = {job_at(0.0, 500.0, {2.0, 1.0}),
                                         job_at(50000.0, 720.0, {2.0, 1.0})};
  int rounds = 0;
  pc::simulator_options options;
  options.on_round = [&](const pc::sim_round&) { ++rounds; };
  const pc::sim_result r = pc::simulate(jobs, {1, 1}, all_on_first_type, options);
  CHECK(r.summary.jobs_finished == 2);
  CHECK(r.jobs[0].finish_seconds == doctest::Approx(250.0));
  CHECK(r.jobs[1].first_run_seconds == 50000.0);
  CHECK(r.jobs[1].finish_seconds == doctest::Approx(50360.0));
  CHECK(rounds == 2);                  // no empty rounds during the gap
  CHECK(r.summary.policy_calls == 2);  // the reset after the gap is not delayed by 1920 s
  CHECK(r.summary.avg_jct_hours == doctest::Approx((250.0 + 360.0) / 2 / 3600.0));
}

TEST_CASE("random workloads: every job accounted for, no GPU used twice, no work invented") {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    const std::vector<pc::sim_job> jobs = random_workload(150, seed, 6.0);
    const std::vector<int> gpus = {4, 4, 8};
    pc::simulator_options options;
    options.gpus_per_server = {2, 4, 4};
    options.shuffle_type_order = seed == 2;
    options.seed = seed;
    bool oversubscribed = false, ran_before_arrival = false, ran_after_finish = false;
    std::vector<char> finished(jobs.size(), 0);
    options.on_round = [&](const pc::sim_round& round) {
      std::vector<int> used(16, 0);
      std::vector<int> per_type(3, 0);
      for (const auto& a : round.plan->assignments) {
        const pc::sim_job& job = jobs[static_cast<std::size_t>(a.id)];
        if (static_cast<int>(a.workers.size()) != job.scale_factor) oversubscribed = true;
        per_type[static_cast<std::size_t>(a.type)] += job.scale_factor;
        for (const int worker : a.workers) ++used[static_cast<std::size_t>(worker)];
        if (job.arrival_seconds > round.start_seconds) ran_before_arrival = true;
        if (finished[static_cast<std::size_t>(a.id)]) ran_after_finish = true;
        if (!(job.throughput[static_cast<std::size_t>(a.type)] > 0.0)) oversubscribed = true;
      }
      for (const int u : used) oversubscribed = oversubscribed || u > 1;
      for (std::size_t w = 0; w < 3; ++w) oversubscribed = oversubscribed || per_type[w] > gpus[w];
      CHECK(round.end_seconds <= round.start_seconds + 360.0 + 1e-9);
      CHECK(round.end_seconds > round.start_seconds);
    };
    const pc::sim_result r = pc::simulate(jobs, gpus, equal_share, options);
    CHECK_FALSE(oversubscribed);
    CHECK_FALSE(ran_before_arrival);
    CHECK_FALSE(ran_after_finish);
    CHECK(r.summary.jobs_total == 150);
    CHECK(r.summary.jobs_finished == 150);
    CHECK(r.summary.jobs_unfinished == 0);
    double busy = 0.0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const pc::sim_job_result& j = r.jobs[i];
      CHECK(j.status == pc::sim_job_status::finished);
      CHECK(j.steps_done == doctest::Approx(jobs[i].total_steps));
      CHECK(j.finish_seconds >= jobs[i].arrival_seconds);
      // Time to run the steps at the throughputs actually used, no faster than the best type.
      double seconds = 0.0, steps = 0.0;
      for (std::size_t w = 0; w < 3; ++w) {
        seconds += j.seconds_on_type[w];
        steps += j.seconds_on_type[w] * jobs[i].throughput[w];
        busy += j.seconds_on_type[w] * jobs[i].scale_factor;
      }
      CHECK(steps == doctest::Approx(jobs[i].total_steps));
      CHECK(j.jct_seconds() >= jobs[i].total_steps / jobs[i].throughput[0] * (1 - 1e-12));
      CHECK(j.jct_seconds() >= seconds * (1 - 1e-12));
    }
    CHECK(r.summary.gpu_utilization ==
          doctest::Approx(busy / (16.0 * r.summary.makespan_hours * 3600.0)));
    CHECK(r.summary.gpu_utilization <= 1.0);
    // The same seed gives the same simulation.
    const pc::sim_result again = pc::simulate(jobs, gpus, equal_share, options);
    CHECK(again.summary.avg_jct_hours == r.summary.avg_jct_hours);
    CHECK(again.summary.rounds == r.summary.rounds);
  }
}

TEST_CASE("a time limit or a measurement window leaves jobs reported unfinished, never lost") {
  const std::vector<pc::sim_job> jobs = random_workload(60, 7, 20.0);
  SUBCASE("time limit") {
    pc::simulator_options options;
    options.max_simulated_seconds = 4 * 3600.0;
    const pc::sim_result r = pc::simulate(jobs, {4, 4, 4}, equal_share, options);
    std::int64_t finished = 0, running = 0, not_arrived = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const auto status = r.jobs[i].status;
      finished += status == pc::sim_job_status::finished;
      running += status == pc::sim_job_status::running;
      not_arrived += status == pc::sim_job_status::not_arrived;
      if (status == pc::sim_job_status::not_arrived)
        CHECK(jobs[i].arrival_seconds > r.summary.simulated_hours * 3600.0);
      if (status == pc::sim_job_status::running) {
        CHECK(r.jobs[i].steps_done < jobs[i].total_steps);
        CHECK(std::isnan(r.jobs[i].finish_seconds));
      }
    }
    CHECK(finished + running + not_arrived == 60);
    CHECK(running > 0);
    CHECK(finished > 0);
    CHECK(r.summary.jobs_finished == finished);
    CHECK(r.summary.jobs_unfinished == running + not_arrived);
    CHECK(r.summary.simulated_hours >= 4.0);
    CHECK(r.summary.simulated_hours * 3600.0 < 4 * 3600.0 + 360.0 + 1e-9);
  }
  SUBCASE("window") {
    pc::simulator_options options;
    options.window_first = 10;
    options.window_last = 20;
    const pc::sim_result r = pc::simulate(jobs, {4, 4, 4}, equal_share, options);
    for (std::int64_t i = 10; i < 20; ++i)
      CHECK(r.jobs[static_cast<std::size_t>(i)].status == pc::sim_job_status::finished);
    CHECK(r.summary.jobs_measured == 10);
    std::vector<double> window;
    for (std::size_t i = 10; i < 20; ++i) window.push_back(r.jobs[i].jct_seconds() / 3600.0);
    double sum = 0.0;
    for (const double v : window) sum += v;
    CHECK(r.summary.avg_jct_hours == doctest::Approx(sum / 10.0));
    CHECK(r.summary.p50_jct_hours == doctest::Approx(pc::percentile(window, 50.0)));
    CHECK(r.summary.jobs_finished + r.summary.jobs_unfinished == 60);
  }
}

TEST_CASE("jobs that cannot run anywhere are reported unrunnable, the others still finish") {
  std::vector<pc::sim_job> jobs = {job_at(0.0, 100.0, {1.0, 1.0}),
                                   job_at(0.0, 100.0, {1.0, 1.0}, 8),  // 8 GPUs > 4 per type
                                   job_at(10.0, 100.0, {0.0, 0.0}),    // no usable type
                                   job_at(20.0, 0.0, {1.0, 1.0})};     // nothing to do
  const pc::sim_result r = pc::simulate(jobs, {4, 4}, equal_share);
  CHECK(r.jobs[0].status == pc::sim_job_status::finished);
  CHECK(r.jobs[1].status == pc::sim_job_status::unrunnable);
  CHECK(r.jobs[2].status == pc::sim_job_status::unrunnable);
  CHECK(r.jobs[3].status == pc::sim_job_status::finished);
  CHECK(r.jobs[3].jct_seconds() == 0.0);
  CHECK(r.summary.jobs_finished == 2);
  CHECK(r.summary.jobs_unfinished == 2);
}

TEST_CASE("percentile interpolates like numpy") {
  CHECK(pc::percentile({1, 2, 3, 4}, 50.0) == doctest::Approx(2.5));
  CHECK(pc::percentile({1, 2, 3, 4}, 99.0) == doctest::Approx(3.97));
  CHECK(pc::percentile({5}, 99.0) == 5.0);
  CHECK(std::isnan(pc::percentile({}, 50.0)));
}

TEST_CASE("invalid workloads, options and policy answers are rejected") {
  const std::vector<pc::sim_job> good = {job_at(0.0, 100.0, {1.0, 1.0})};
  CHECK_THROWS_AS(pc::simulate({job_at(-1.0, 100.0, {1.0, 1.0})}, {1, 1}, equal_share),
                  popalloc::invalid_problem);
  CHECK_THROWS_AS(pc::simulate({job_at(0.0, std::nan(""), {1.0, 1.0})}, {1, 1}, equal_share),
                  popalloc::invalid_problem);
  CHECK_THROWS_AS(pc::simulate({job_at(0.0, 10.0, {1.0})}, {1, 1}, equal_share),
                  popalloc::invalid_problem);
  CHECK_THROWS_AS(pc::simulate({job_at(0.0, 10.0, {1.0, -1.0})}, {1, 1}, equal_share),
                  popalloc::invalid_problem);
  CHECK_THROWS_AS(pc::simulate(good, {1, -1}, equal_share), popalloc::invalid_problem);
  CHECK_THROWS_AS(pc::simulate(good, {1, 1}, pc::sim_policy{}), popalloc::invalid_problem);
  pc::simulator_options options;
  options.round_seconds = 0.0;
  CHECK_THROWS_AS(pc::simulate(good, {1, 1}, equal_share, options), popalloc::invalid_problem);
  options = {};
  options.type_order = {0, 0};
  CHECK_THROWS_AS(pc::simulate(good, {1, 1}, equal_share, options), popalloc::invalid_problem);
  const pc::sim_policy wrong_shape = [](const pc::policy_request&) {
    return Eigen::MatrixXd::Zero(1, 1).eval();
  };
  CHECK_THROWS_AS(pc::simulate(good, {1, 1}, wrong_shape), popalloc::invalid_problem);
  const pc::sim_policy not_finite = [](const pc::policy_request&) {
    return Eigen::MatrixXd::Constant(1, 2, std::numeric_limits<double>::infinity()).eval();
  };
  CHECK_THROWS_AS(pc::simulate(good, {1, 1}, not_finite), popalloc::invalid_problem);
}
