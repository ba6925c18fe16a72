// SPDX-License-Identifier: Apache-2.0
// Gavel's round-based mechanism: priorities, greedy selection per GPU type and placement, on
// cases small enough to compute by hand.
#include <cstdint>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/cluster/round_mechanism.hpp>

namespace pc = popalloc::cluster;

namespace {

constexpr double kTau = 360.0;

pc::round_job make(std::int64_t id, int s, std::vector<double> x, std::vector<double> t,
                   std::vector<double> time_received) {
  pc::round_job j;
  j.id = id;
  j.scale_factor = s;
  j.allocation = std::move(x);
  j.throughput = std::move(t);
  j.time_received = std::move(time_received);
  j.deficit.assign(j.allocation.size(), 0.0);
  return j;
}

const pc::round_assignment* find(const pc::round_plan& plan, std::int64_t id) {
  for (const auto& a : plan.assignments)
    if (a.id == id) return &a;
  return nullptr;
}

}  // namespace

TEST_CASE("priority is allocation over the share of time received, 0 without allocation") {
  CHECK(pc::round_priority(0.5, 1.0, 180.0, 720.0) == doctest::Approx(2.0));
  CHECK(pc::round_priority(0.0, 1.0, 180.0, 720.0) == 0.0);
  CHECK(pc::round_priority(0.5, 0.0, 180.0, 720.0) == 0.0);  // cannot run there
  CHECK(pc::round_priority(0.5, 1.0, 0.0, 720.0) == doctest::Approx(0.5e9));
}

TEST_CASE("hand-computed round: per-type greedy by priority, lease extension, fresh packing") {
  // Two types with 2 GPUs each (one server each). time_received is tau/2 = 180 everywhere
  // except job A, which ran a full extra round on type 0 (540).
  //   type 0, worker_time 1080: A 0.5/(540/1080) = 1, B 1/(180/1080) = 6, C 0, D 0.2/(1/6) = 1.2
  //   type 1, worker_time  720: A 0.5/(1/4) = 2, B 0, C 1/(1/4) = 4, D 0.3/(1/4) = 1.2
  // Type 0 takes B (6) and D (1.2); type 1 takes C (4) and A (2); D is already scheduled.
  const pc::worker_layout layout({2, 2}, {2, 2});
  std::vector<pc::round_job> jobs = {
      make(10, 1, {0.5, 0.5}, {2, 1}, {540, 180}),  // A
      make(11, 1, {1.0, 0.0}, {2, 1}, {180, 180}),  // B
      make(12, 1, {0.0, 1.0}, {2, 1}, {180, 180}),  // C
      make(13, 1, {0.2, 0.3}, {2, 1}, {180, 180}),  // D
  };
  jobs[0].previous_type = 1;  // A ran on worker 3 (type 1's second GPU) last round
  jobs[0].previous_workers = {3};
  const pc::round_plan plan = pc::plan_round(jobs, {1080, 720}, layout, {0, 1});
  REQUIRE(plan.assignments.size() == 4);
  CHECK(find(plan, 11)->type == 0);
  CHECK(find(plan, 11)->workers == std::vector<int>{0});
  CHECK(find(plan, 13)->type == 0);
  CHECK(find(plan, 13)->workers == std::vector<int>{1});
  CHECK(find(plan, 10)->type == 1);
  CHECK(find(plan, 10)->workers == std::vector<int>{3});  // kept
  CHECK(find(plan, 10)->kept);
  CHECK(find(plan, 12)->type == 1);
  CHECK(find(plan, 12)->workers == std::vector<int>{2});
  CHECK(plan.free_gpus == std::vector<int>{0, 0});

  // The order in which types are served matters when a job ranks first on both: with one GPU
  // per type, E has priorities {1.2, 2.0} and F {0.8, 0.4} (worker_time 360, time 180).
  const pc::worker_layout small({1, 1}, {1, 1});
  const std::vector<pc::round_job> pair = {make(1, 1, {0.6, 1.0}, {1, 1}, {180, 180}),
                                           make(2, 1, {0.4, 0.2}, {1, 1}, {180, 180})};
  const pc::round_plan fast_first = pc::plan_round(pair, {360, 360}, small, {0, 1});
  CHECK(find(fast_first, 1)->type == 0);
  CHECK(find(fast_first, 2)->type == 1);
  const pc::round_plan slow_first = pc::plan_round(pair, {360, 360}, small, {1, 0});
  CHECK(find(slow_first, 1)->type == 1);
  CHECK(find(slow_first, 2)->type == 0);
}

TEST_CASE("work conservation: jobs without allocation fill idle GPUs, zero throughput never") {
  // One type, 3 GPUs. Job 1 has the allocation; job 2 has none (arrived since the last reset)
  // but runs on a leftover GPU; job 3 cannot run on the type at all.
  const pc::worker_layout layout({3}, {4});
  std::vector<pc::round_job> jobs = {make(1, 1, {1.0}, {1.0}, {180}),
                                     make(2, 1, {0.0}, {1.0}, {180}),
                                     make(3, 1, {1.0}, {0.0}, {180})};
  const pc::round_plan plan = pc::plan_round(jobs, {540}, layout, {0});
  REQUIRE(plan.assignments.size() == 2);
  CHECK(plan.assignments[0].id == 1);
  CHECK(plan.assignments[1].id == 2);
  CHECK(find(plan, 3) == nullptr);
  CHECK(plan.free_gpus == std::vector<int>{1});
}

TEST_CASE("a job that does not fit is skipped and the walk goes on to smaller jobs") {
  // One type, 3 GPUs. Priorities: A (s=2) 4, B (s=2) 3, C (s=1) 2. A takes 2 GPUs, B needs 2
  // but only 1 is left, so C gets it.
  const pc::worker_layout layout({3}, {4});
  std::vector<pc::round_job> jobs = {make(1, 2, {1.0}, {1.0}, {180}),
                                     make(2, 2, {0.75}, {1.0}, {180}),
                                     make(3, 1, {0.5}, {1.0}, {180})};
  const pc::round_plan plan = pc::plan_round(jobs, {720}, layout, {0});
  REQUIRE(plan.assignments.size() == 2);
  CHECK(find(plan, 1)->workers == std::vector<int>{0, 1});
  CHECK(find(plan, 2) == nullptr);
  CHECK(find(plan, 3)->workers == std::vector<int>{2});
}

TEST_CASE("equal priorities are broken by deficit, then allocation, then id") {
  const pc::worker_layout layout({1}, {1});
  std::vector<pc::round_job> jobs = {make(1, 1, {0.5}, {1.0}, {180}),
                                     make(2, 1, {0.5}, {1.0}, {180})};
  CHECK(pc::plan_round(jobs, {360}, layout, {0}).assignments[0].id == 1);
  jobs[1].deficit = {100.0};  // job 2 is owed time
  CHECK(pc::plan_round(jobs, {360}, layout, {0}).assignments[0].id == 2);
}

TEST_CASE("multi-GPU placement: largest first, each job on as few servers as possible") {
  // 8 GPUs of one type in two servers of 4: {0,1,2,3} {4,5,6,7}.
  const pc::worker_layout layout({8}, {4});
  std::vector<pc::round_job> jobs = {
      make(1, 2, {1.0}, {1.0}, {180}), make(2, 4, {0.9}, {1.0}, {180}),
      make(3, 1, {0.8}, {1.0}, {180}), make(4, 1, {0.7}, {1.0}, {180})};
  SUBCASE("fresh placement") {
    // s=4 first: both servers fit exactly, the first is taken; s=2 then best-fits server 1.
    const pc::round_plan plan = pc::plan_round(jobs, {720}, layout, {0});
    REQUIRE(plan.assignments.size() == 4);
    CHECK(plan.assignments[0].id == 2);
    CHECK(find(plan, 2)->workers == std::vector<int>{0, 1, 2, 3});
    CHECK(find(plan, 1)->workers == std::vector<int>{4, 5});
    CHECK(find(plan, 3)->workers == std::vector<int>{6});
    CHECK(find(plan, 4)->workers == std::vector<int>{7});
  }
  SUBCASE("lease extension first, then the 4-GPU job still gets a whole server") {
    jobs[0].previous_type = 0;
    jobs[0].previous_workers = {1, 2};
    const pc::round_plan plan = pc::plan_round(jobs, {720}, layout, {0});
    CHECK(find(plan, 1)->workers == std::vector<int>{1, 2});
    CHECK(find(plan, 1)->kept);
    CHECK(find(plan, 2)->workers == std::vector<int>{4, 5, 6, 7});
    CHECK(find(plan, 3)->workers == std::vector<int>{0});
    CHECK(find(plan, 4)->workers == std::vector<int>{3});
  }
  SUBCASE("no server has room: the job spans the two emptiest servers") {
    // Jobs 3 and 4 keep GPUs 1 and 5, so each server has 3 free; job 2 (s=4) must span two.
    jobs[2].previous_type = 0;
    jobs[2].previous_workers = {1};
    jobs[3].previous_type = 0;
    jobs[3].previous_workers = {5};
    jobs[0].allocation = {0.0};  // job 1 (s=2) drops to the end; 8 - 4 - 1 - 1 = 2 left for it
    const pc::round_plan plan = pc::plan_round(jobs, {720}, layout, {0});
    CHECK(find(plan, 3)->workers == std::vector<int>{1});
    CHECK(find(plan, 4)->workers == std::vector<int>{5});
    CHECK(find(plan, 2)->workers == std::vector<int>{0, 2, 3, 4});
    CHECK(find(plan, 1)->workers == std::vector<int>{6, 7});
  }
  SUBCASE("a previous placement on a taken GPU is not kept") {
    jobs[3].previous_type = 0;  // job 4 (s=1) had GPU 0; job 2 (s=4) extends onto 0..3 first
    jobs[3].previous_workers = {0};
    jobs[1].previous_type = 0;
    jobs[1].previous_workers = {0, 1, 2, 3};
    const pc::round_plan plan = pc::plan_round(jobs, {720}, layout, {0});
    CHECK(find(plan, 2)->kept);
    CHECK_FALSE(find(plan, 4)->kept);
    CHECK(find(plan, 4)->workers.front() >= 4);
  }
}

TEST_CASE("servers of a type that does not divide evenly, and global worker ids per type") {
  const pc::worker_layout layout({5, 3}, {2, 4});
  CHECK(layout.total_gpus() == 8);
  CHECK(layout.servers(0) == 3);
  CHECK(layout.servers(1) == 1);
  CHECK(layout.first_worker(1) == 5);
  CHECK(layout.type_of(4) == 0);
  CHECK(layout.type_of(5) == 1);
  CHECK(layout.type_of(8) == -1);
  CHECK(layout.server_of(0, 4) == 2);
  // A 3-GPU job on type 1 (one server of 3) and a 2-GPU job on type 0.
  std::vector<pc::round_job> jobs = {make(1, 3, {0.0, 1.0}, {1.0, 1.0}, {180, 180}),
                                     make(2, 2, {1.0, 0.0}, {1.0, 1.0}, {180, 180})};
  const pc::round_plan plan = pc::plan_round(jobs, {360, 360}, layout, {1, 0});
  CHECK(find(plan, 1)->workers == std::vector<int>{5, 6, 7});
  CHECK(find(plan, 2)->workers == std::vector<int>{0, 1});
}

TEST_CASE("the stateful mechanism: prior of tau/2, deficits and accounting across a reset") {
  pc::round_mechanism m(pc::worker_layout({1, 1}, {1, 1}), kTau);
  m.add_job(7, 1, {2.0, 1.0});
  m.add_job(8, 1, {2.0, 1.0});
  CHECK(m.worker_time() == std::vector<double>{360.0, 360.0});
  CHECK(m.job(7).time_received == std::vector<double>{180.0, 180.0});
  m.reset(0.0, [](std::int64_t id) {
    return id == 7 ? std::vector<double>{0.75, 0.25} : std::vector<double>{0.25, 0.75};
  });
  // Job 7: priority 0.75/(180/360) = 1.5 on type 0; job 8: 0.75/0.5 = 1.5 on type 1.
  pc::round_plan plan = m.plan({0, 1});
  REQUIRE(plan.assignments.size() == 2);
  CHECK(m.job(7).previous_type == 0);
  CHECK(m.job(8).previous_type == 1);
  m.record(7, 0, 360.0);
  m.record(8, 1, 300.0);
  CHECK(m.worker_time()[0] == doctest::Approx(720.0));
  CHECK(m.job(7).time_received[0] == doctest::Approx(540.0));
  // Reset at t = 360: deficit += X (360 - 0) - (time - 180).
  m.reset(360.0, [](std::int64_t) { return std::vector<double>{0.5, 0.5}; });
  CHECK(m.job(7).deficit[0] == doctest::Approx(0.75 * 360 - 360));
  CHECK(m.job(7).deficit[1] == doctest::Approx(0.25 * 360 - 0));
  CHECK(m.job(8).deficit[1] == doctest::Approx(0.75 * 360 - 300));
  CHECK(m.job(7).time_received == std::vector<double>{180.0, 180.0});
  CHECK(m.worker_time() == std::vector<double>{360.0, 360.0});
  CHECK(m.job(7).allocation == std::vector<double>{0.5, 0.5});
  // Removing a job takes its time out of the type totals.
  m.remove_job(7);
  CHECK(m.jobs() == 1);
  CHECK(m.worker_time() == std::vector<double>{180.0, 180.0});
  CHECK_THROWS_AS(m.remove_job(7), popalloc::invalid_problem);
  CHECK_THROWS_AS(m.add_job(8, 1, {1.0, 1.0}), popalloc::invalid_problem);
}

TEST_CASE("invalid inputs are rejected with invalid_problem") {
  const pc::worker_layout layout({2}, {2});
  std::vector<pc::round_job> jobs = {make(1, 1, {1.0}, {1.0}, {180})};
  CHECK_THROWS_AS(pc::plan_round(jobs, {360}, layout, {1}), popalloc::invalid_problem);
  CHECK_THROWS_AS(pc::plan_round(jobs, {360}, layout, {}), popalloc::invalid_problem);
  CHECK_THROWS_AS(pc::plan_round(jobs, {360, 1}, layout, {0}), popalloc::invalid_problem);
  jobs[0].throughput = {1.0, 2.0};
  CHECK_THROWS_AS(pc::plan_round(jobs, {360}, layout, {0}), popalloc::invalid_problem);
  CHECK_THROWS_AS(pc::worker_layout({2}, {0}), popalloc::invalid_problem);
  CHECK_THROWS_AS(pc::worker_layout({2, 2}, {1}), popalloc::invalid_problem);
  CHECK_THROWS_AS(pc::round_mechanism(layout, 0.0), popalloc::invalid_problem);
  pc::round_mechanism m(layout, kTau);
  m.add_job(1, 1, {1.0});
  CHECK_THROWS_AS(m.reset(0.0, [](std::int64_t) { return std::vector<double>{std::nan("")}; }),
                  popalloc::invalid_problem);
}
