// SPDX-License-Identifier: Apache-2.0
// Space sharing: co-location entries of the throughput table, combinations and their pruning,
// the packed policies on hand-computed instances, against the unpacked policies, POP and bad
// inputs.
#include <cmath>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/cluster/combinations.hpp>
#include <popalloc/cluster/packed_policies.hpp>
#include <popalloc/cluster/policies.hpp>

#include "packed_fixtures.hpp"

namespace pc = popalloc::cluster;
using packed_test::check_packed_feasible;
using packed_test::gavel_jobs;
using packed_test::gavel_table;

namespace {

/// One GPU type; jobs "a" (T = 1) and "b" (T = 2); a with b share at (ta, tb); a with a at
/// (aa, aa).
pc::throughput_table toy_table(double ta, double tb, double aa = 0.0) {
  pc::throughput_table t;
  t.add_gpu_type("v100");
  t.set({"a", 1}, "v100", 1.0);
  t.set({"b", 1}, "v100", 2.0);
  t.set_pair({"a", 1}, {"b", 1}, "v100", ta, tb);
  t.set_pair({"b", 1}, {"a", 1}, "v100", tb, ta);
  if (aa > 0.0) t.set_pair({"a", 1}, {"a", 1}, "v100", aa, aa);
  return t;
}

std::vector<pc::job> toy_jobs(const pc::throughput_table& t, const pc::gpu_cluster& c,
                              const std::vector<std::string>& types) {
  std::vector<pc::job> jobs;
  for (const auto& name : types)
    jobs.push_back(pc::make_job(static_cast<std::int64_t>(jobs.size()), name, 1, 100.0, t, c));
  return jobs;
}

pc::policy_options max_min() {
  pc::policy_options o;
  o.policy = pc::policy_kind::max_min_fairness;
  o.water_filling = false;
  return o;
}

}  // namespace

TEST_CASE("packed: Gavel's table keeps its co-location entries") {
  const auto& t = gavel_table();
  const pc::job_key a{"ResNet-18 (batch size 64)", 1}, b{"ResNet-18 (batch size 16)", 1};
  const auto ab = t.get_pair(b, a, "v100");
  CHECK(ab.first == doctest::Approx(32.353384328946916).epsilon(1e-15));
  CHECK(ab.second == doctest::Approx(24.093231895382736).epsilon(1e-15));
  const auto ba = t.get_pair(a, b, "v100");  // the reversed entry holds the same numbers
  CHECK(ba.first == ab.second);
  CHECK(ba.second == ab.first);
  CHECK(t.pair_count() == 658);  // ordered key pairs with a non-zero entry somewhere
  CHECK(t.get_pair(a, {"ResNet-18 (batch size 64)", 2}, "v100").first == 0.0);
}

TEST_CASE("packed: co-location entries with bad values are rejected with their line") {
  const std::string text =
      "{\"v100\": {\"('a', 1)\": {\"null\": 1.0,\n \"('b', 1)\": [1.0, -2.0]}}}";
  std::string message;
  try {
    pc::parse_throughputs(text, "t.json");
  } catch (const std::exception& e) {
    message = e.what();
  }
  CHECK(message.find("t.json:2") != std::string::npos);
  CHECK(message.find("co-located") != std::string::npos);
  pc::throughput_table t;
  t.add_gpu_type("v100");
  CHECK_THROWS_AS(t.set_pair({"a", 1}, {"b", 1}, "v100", std::nan(""), 1.0),
                  popalloc::invalid_problem);
  CHECK_THROWS_AS(t.set_pair({"a", 1}, {"b", 1}, "k80", 1.0, 1.0), popalloc::invalid_problem);
}

TEST_CASE("packed: one GPU, two jobs sharing it beats time slicing (hand-computed)") {
  // Alone: a gets T = 1, b T = 2 on the one GPU; P = T (one type), so normalised levels are
  // x_a and x_b with x_a + x_b <= 1: unpacked optimum 1/2. Sharing at (0.8, 1.2) gives levels
  // 0.8 and 0.6 at full time; mixing in time alone: max min(0.8 y + u, 0.6 y + v), y + u <= 1,
  // y + v <= 1, y + u + v <= 1 (one GPU) -> y = 1: 0.6... plus nothing. The LP optimum is
  // 2/3 at y = 5/6, v = 1/6 (0.8 * 5/6 = 2/3 = 0.6 * 5/6 + 1/6).
  const auto t = toy_table(0.8, 1.2);
  const auto c = pc::parse_cluster("v100:1");
  const auto jobs = toy_jobs(t, c, {"a", "b"});
  const auto packed = pc::allocate_packed(jobs, c, t, max_min());
  CHECK(packed.status == popalloc::solve_status::converged);
  CHECK(packed.objective == doctest::Approx(2.0 / 3.0).epsilon(1e-10));
  CHECK(packed.bound == doctest::Approx(2.0 / 3.0).epsilon(1e-10));
  CHECK(packed.bound >= packed.objective);
  REQUIRE(packed.pairs.size() == 1);
  CHECK(packed.pairs[0].fraction == doctest::Approx(5.0 / 6.0).epsilon(1e-10));
  CHECK(packed.effective_throughput[1] == doctest::Approx(4.0 / 3.0).epsilon(1e-10));
  check_packed_feasible(jobs, c, packed);
  const auto unpacked = pc::allocate(jobs, c, max_min());
  CHECK(unpacked.objective == doctest::Approx(0.5).epsilon(1e-6));
}

TEST_CASE("packed: a pair below the combined-throughput threshold is pruned, losslessly at 1") {
  // (0.3, 0.6): combined 0.6 < 1, dominated by time slicing: optimum stays 1/2, pair unused.
  const auto t = toy_table(0.3, 0.6);
  const auto c = pc::parse_cluster("v100:1");
  const auto jobs = toy_jobs(t, c, {"a", "b"});
  pc::policy_options o = max_min();
  o.pairing.min_combined_throughput = 0.0;  // offered anyway
  const auto offered = pc::allocate_packed(jobs, c, t, o);
  CHECK(offered.objective == doctest::Approx(0.5).epsilon(1e-10));
  o.pairing.min_combined_throughput = 1.0;
  const auto pruned = pc::allocate_packed(jobs, c, t, o);
  CHECK(pruned.objective == doctest::Approx(0.5).epsilon(1e-10));
  CHECK(pruned.pairs.empty());
  const pc::instance in = pc::prepare_instance(jobs, c, o);
  CHECK(pc::make_combinations(in, jobs, c, t, o.pairing).pruned == 1);
  o.pairing.min_combined_throughput = 0.0;
  CHECK(pc::make_combinations(in, jobs, c, t, o.pairing).pairs.size() == 1);
}

TEST_CASE("packed: jobs of one class share through a cycle and all reach the level") {
  // Five "a" jobs (T = 1) on two GPUs; a-with-a pairs at 0.7 each. Alone: level 2/5. Pairs:
  // one GPU-unit of pair time serves two jobs at 0.7: 5 jobs x L = 0.7 x 2 x 2 GPUs -> L =
  // 0.56, and the cycle m0-m1-...-m4 must give each job exactly that.
  const auto t = toy_table(0.8, 1.2, 0.7);
  const auto c = pc::parse_cluster("v100:2");
  const auto jobs = toy_jobs(t, c, {"a", "a", "a", "a", "a"});
  const auto packed = pc::allocate_packed(jobs, c, t, max_min());
  CHECK(packed.objective == doctest::Approx(0.56).epsilon(1e-10));
  CHECK(packed.bound == doctest::Approx(0.56).epsilon(1e-10));
  for (Eigen::Index i = 0; i < 5; ++i)
    CHECK(packed.normalized_throughput[i] == doctest::Approx(0.56).epsilon(1e-10));
  CHECK(packed.pairs.size() == 5);
  check_packed_feasible(jobs, c, packed);
}

TEST_CASE("packed: max-throughput with pairs (hand-computed)") {
  // One GPU: alone the best is b at 2; the pair gives 0.8 + 1.5 = 2.3.
  const auto t = toy_table(0.8, 1.5);
  const auto c = pc::parse_cluster("v100:1");
  const auto jobs = toy_jobs(t, c, {"a", "b"});
  pc::policy_options o;
  o.policy = pc::policy_kind::max_throughput;
  const auto packed = pc::allocate_packed(jobs, c, t, o);
  CHECK(packed.objective == doctest::Approx(2.3).epsilon(1e-10));
  CHECK(packed.bound == doctest::Approx(2.3).epsilon(1e-10));
  CHECK(packed.status == popalloc::solve_status::converged);
}

TEST_CASE("packed: max-throughput with SLO floors (hand-computed, dropped when unreachable)") {
  // As above, with a floor of 0.9 on a (100 steps, SLO 1/0.9 of its 100 s on the V100): the pair
  // gives a only 0.8, so a runs alone for x and shares for 1 - x: 0.8 + 0.2 x >= 0.9 gives
  // x = 1/2 and a total of 1/2 + 2.3 / 2 = 1.65.
  const auto t = toy_table(0.8, 1.5);
  const auto c = pc::parse_cluster("v100:1");
  auto jobs = toy_jobs(t, c, {"a", "b"});
  jobs[0].slo = 1.0 / 0.9;
  pc::policy_options o;
  o.policy = pc::policy_kind::max_throughput;
  const auto packed = pc::allocate_packed(jobs, c, t, o);
  CHECK(packed.status == popalloc::solve_status::converged);
  CHECK(packed.objective == doctest::Approx(1.65).epsilon(1e-9));
  CHECK(packed.bound == doctest::Approx(1.65).epsilon(1e-9));
  CHECK(packed.bound >= packed.objective * (1.0 - 1e-12));
  CHECK(packed.slo_jobs == 1);
  CHECK_FALSE(packed.slo_floors_dropped);
  CHECK(packed.slo_worst_shortfall <= 1e-9);
  CHECK(packed.effective_throughput[0] == doctest::Approx(0.9).epsilon(1e-9));
  check_packed_feasible(jobs, c, packed);
  // slo_floors = false ignores the floor.
  o.slo_floors = false;
  CHECK(pc::allocate_packed(jobs, c, t, o).objective == doctest::Approx(2.3).epsilon(1e-10));
  // A floor of 1.1 is above what a gets alone: the floors are dropped, as in Gavel.
  o.slo_floors = true;
  jobs[0].slo = 1.0 / 1.1;
  const auto dropped = pc::allocate_packed(jobs, c, t, o);
  CHECK(dropped.slo_floors_dropped);
  CHECK(dropped.objective == doctest::Approx(2.3).epsilon(1e-10));
  CHECK(dropped.slo_worst_shortfall > 0.2);
  // A deadline already passed (an infinite floor) too.
  jobs[0].slo = 0.5;
  jobs[0].elapsed_time = 60.0;
  const auto passed = pc::allocate_packed(jobs, c, t, o);
  CHECK(passed.slo_floors_dropped);
  CHECK(passed.slo_worst_shortfall == 1.0);
  CHECK(pc::allocate(jobs, c, o).slo_worst_shortfall == 1.0);
}

TEST_CASE("packed: SLO floors on Gavel jobs: met, never below the unpacked optimum, POP") {
  const auto c = pc::parse_cluster("k80:4,p100:4,v100:4");
  int binding = 0;
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    auto jobs = gavel_jobs(14 + static_cast<int>(seed), 4, c, seed);
    for (std::size_t i = 0; i < jobs.size(); i += 3) jobs[i].slo = 6.0;  // reachable floors
    pc::policy_options o;
    o.policy = pc::policy_kind::max_throughput;
    o.tolerance = 1e-6;
    const auto unpacked = pc::allocate(jobs, c, o);
    REQUIRE_FALSE(unpacked.slo_floors_dropped);
    const auto packed = pc::allocate_packed(jobs, c, gavel_table(), o);
    CHECK(packed.status == popalloc::solve_status::converged);
    CHECK_FALSE(packed.slo_floors_dropped);
    CHECK(packed.slo_jobs == unpacked.slo_jobs);
    CHECK(packed.slo_worst_shortfall <= 1e-9);
    CHECK(packed.objective >= unpacked.objective * (1.0 - 1e-6));
    CHECK(packed.bound - packed.objective <= 1e-9 * packed.bound);
    check_packed_feasible(jobs, c, packed);
    // Without pairs the packed LP is the unpacked one.
    pc::policy_options singles = o;
    singles.pairing.enabled = false;
    const auto alone = pc::allocate_packed(jobs, c, gavel_table(), singles);
    CHECK(alone.objective == doctest::Approx(unpacked.objective).epsilon(1e-5));
    CHECK(alone.slo_worst_shortfall <= 1e-9);
    // The floors cost throughput against plain packed max-throughput (on most seeds).
    o.slo_floors = false;
    const auto free = pc::allocate_packed(jobs, c, gavel_table(), o);
    CHECK(free.objective >= packed.objective * (1.0 - 1e-12));
    if (free.objective > packed.objective * (1.0 + 1e-6)) ++binding;
    o.slo_floors = true;
    o.pop_parts = 2;
    const auto pop = pc::allocate_packed(jobs, c, gavel_table(), o);
    check_packed_feasible(jobs, c, pop);
    if (!pop.slo_floors_dropped) CHECK(pop.slo_worst_shortfall <= 1e-9);
    CHECK(pop.objective <= packed.bound * (1.0 + 1e-9));
  }
  CHECK(binding >= 2);
}

TEST_CASE("packed: FIFO packs queued jobs onto running ones above the threshold, in order") {
  // One V100: a runs (it arrived first); b joins it where 0.8 / 1 + 1.5 / 2 = 1.55 > 1.5.
  const auto c = pc::parse_cluster("v100:1");
  pc::policy_options o;
  o.policy = pc::policy_kind::fifo;
  {
    const auto t = toy_table(0.8, 1.5);
    const auto jobs = toy_jobs(t, c, {"a", "b"});
    const auto packed = pc::allocate_packed(jobs, c, t, o);
    REQUIRE(packed.pairs.size() == 1);
    CHECK(packed.pairs[0].first == 0);
    CHECK(packed.pairs[0].second == 1);
    CHECK(packed.pairs[0].fraction == 1.0);
    CHECK(packed.fraction.sum() == 0.0);
    CHECK(packed.effective_throughput[0] == doctest::Approx(0.8));
    CHECK(packed.effective_throughput[1] == doctest::Approx(1.5));
    check_packed_feasible(jobs, c, packed);
    // Above Gavel's threshold only: at 1.6 b waits, and a runs alone.
    o.pairing.fifo_threshold = 1.6;
    const auto waiting = pc::allocate_packed(jobs, c, t, o);
    CHECK(waiting.pairs.empty());
    CHECK(waiting.fraction(0, 0) == 1.0);
    CHECK(waiting.fraction(1, 0) == 0.0);
    o.pairing.fifo_threshold = 1.5;
  }
  // 1.4 < 1.5: no pair. And a queued job that finds no partner stops the packing, so c (which
  // would pack with a at 1.8) does not overtake b.
  pc::throughput_table t;
  t.add_gpu_type("v100");
  for (const char* name : {"a", "b", "c"}) t.set({name, 1}, "v100", 1.0);
  t.set_pair({"a", 1}, {"b", 1}, "v100", 0.7, 0.7);
  t.set_pair({"a", 1}, {"c", 1}, "v100", 0.9, 0.9);
  const auto jobs = toy_jobs(t, c, {"a", "b", "c"});
  CHECK(pc::allocate_packed(jobs, c, t, o).pairs.empty());
  auto late_b = jobs;
  late_b[1].arrival_time = 10.0;  // now c queues first and packs; b still waits
  const auto packed = pc::allocate_packed(late_b, c, t, o);
  REQUIRE(packed.pairs.size() == 1);
  CHECK(packed.pairs[0].first == 0);
  CHECK(packed.pairs[0].second == 2);
  o.pairing.fifo_threshold = -1.0;
  CHECK_THROWS_AS(pc::allocate_packed(jobs, c, t, o), popalloc::invalid_options);
}

TEST_CASE("packed: FIFO on Gavel jobs: the unpacked FIFO's jobs keep running, pairs add jobs") {
  const auto c = pc::parse_cluster("k80:2,p100:2,v100:2");
  std::size_t pairs = 0;
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    const auto jobs = gavel_jobs(16, 6, c, seed, 0.0);
    pc::policy_options o;
    o.policy = pc::policy_kind::fifo;
    o.pairing.fifo_threshold = seed % 2 == 1 ? 1.5 : 1.1;
    const auto unpacked = pc::allocate(jobs, c, o);
    const auto packed = pc::allocate_packed(jobs, c, gavel_table(), o);
    check_packed_feasible(jobs, c, packed);
    std::vector<int> running(jobs.size(), 0);
    for (std::size_t i = 0; i < jobs.size(); ++i)
      running[i] = packed.fraction.row(static_cast<Eigen::Index>(i)).sum() > 0.0;
    for (const auto& p : packed.pairs) {
      CHECK(p.fraction == 1.0);
      running[static_cast<std::size_t>(p.first)] += 1;
      running[static_cast<std::size_t>(p.second)] += 1;
      const double combined =
          p.first_throughput / jobs[static_cast<std::size_t>(p.first)].throughput[p.gpu] +
          p.second_throughput / jobs[static_cast<std::size_t>(p.second)].throughput[p.gpu];
      CHECK(combined > o.pairing.fifo_threshold);
    }
    std::size_t ran_alone = 0, ran_packed = 0;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      CHECK(running[i] <= 1);  // every job in one place
      const bool was_running = unpacked.fraction.row(static_cast<Eigen::Index>(i)).sum() > 0.0;
      if (was_running) CHECK(running[i] == 1);
      ran_alone += was_running;
      ran_packed += static_cast<std::size_t>(running[i]);
    }
    CHECK(ran_packed == ran_alone + packed.pairs.size());
    pairs += packed.pairs.size();
  }
  CHECK(pairs >= 4);
}

TEST_CASE("packed: max-min is never below the unpacked policy (Gavel jobs, several seeds)") {
  const auto c = pc::parse_cluster("k80:3,p100:4,v100:2");
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    const auto jobs = gavel_jobs(12 + static_cast<int>(seed), 4, c, seed);
    pc::policy_options o = max_min();
    o.tolerance = 1e-7;
    const auto unpacked = pc::allocate(jobs, c, o);
    const auto packed = pc::allocate_packed(jobs, c, gavel_table(), o);
    CHECK(packed.status == popalloc::solve_status::converged);
    CHECK(packed.objective >= unpacked.objective * (1.0 - 1e-9));
    CHECK(packed.bound >= packed.objective * (1.0 - 1e-12));
    CHECK(packed.bound - packed.objective <= 1e-10 * packed.bound);
    // Without pairs the packed LP is the unpacked one.
    pc::policy_options singles = o;
    singles.pairing.enabled = false;
    const auto alone = pc::allocate_packed(jobs, c, gavel_table(), singles);
    CHECK(alone.pairs.empty());
    CHECK(alone.objective == doctest::Approx(unpacked.objective).epsilon(1e-6));
    check_packed_feasible(jobs, c, packed);
  }
}

TEST_CASE("packed: finish-time fairness with a hand-computed pair, and against unpacked") {
  // One GPU; a (T = 1) and b (T = 2) each 100 steps, nothing elapsed: ET_iso = 1/2 and 1 (half
  // the GPU each), D = 200 and 100, so rho_a = 1 / (2 ET_a) and rho_b = 1 / ET_b. Sharing at
  // (0.8, 1.2) all the time gives rho = max(0.625, 0.833). The optimum shares for time y and
  // runs b alone for the rest.
  const auto t = toy_table(0.8, 1.2);
  const auto c = pc::parse_cluster("v100:1");
  const auto jobs = toy_jobs(t, c, {"a", "b"});
  pc::policy_options o;
  o.policy = pc::policy_kind::finish_time_fairness;
  o.tolerance = 1e-9;
  const auto packed = pc::allocate_packed(jobs, c, t, o);
  CHECK(packed.status == popalloc::solve_status::converged);
  // rho_a = 1 / (1.6 y), rho_b = 1 / (1.2 y + 2 (1 - y)) = 1 / (2 - 0.8 y): equal at y = 5/6,
  // rho = 0.75 (the LP dual (1/3, 2/3) on the two jobs' rows certifies it).
  CHECK(packed.objective == doctest::Approx(0.75).epsilon(1e-8));
  CHECK(packed.bound <= 0.75 * (1.0 + 1e-9));
  check_packed_feasible(jobs, c, packed);
  const auto unpacked = pc::allocate(jobs, c, o);
  // Without sharing: rho_a = 1 / (2 x_a), rho_b = 1 / (2 (1 - x_a)): 1 at x_a = 1/2.
  CHECK(unpacked.objective == doctest::Approx(1.0).epsilon(1e-6));

  const auto gc = pc::parse_cluster("k80:3,p100:4,v100:2");
  for (std::uint32_t seed = 1; seed <= 4; ++seed) {
    CAPTURE(seed);
    auto many = gavel_jobs(12 + static_cast<int>(seed), 4, gc, seed);
    for (std::size_t i = 0; i < many.size(); ++i) {
      many[i].elapsed_time = 30.0 * static_cast<double>(i % 3);
      many[i].isolated_time = 10.0 * static_cast<double>(i % 2);
    }
    pc::policy_options f;
    f.policy = pc::policy_kind::finish_time_fairness;
    f.tolerance = 1e-7;
    const auto alone = pc::allocate(many, gc, f);
    const auto shared = pc::allocate_packed(many, gc, gavel_table(), f);
    CHECK(shared.status == popalloc::solve_status::converged);
    CHECK(shared.objective <= alone.objective * (1.0 + 1e-6));
    CHECK(shared.bound <= shared.objective);
    CHECK(shared.objective - shared.bound <= 1e-7 * shared.bound * 1.01);
    check_packed_feasible(many, gc, shared);
    // Without pairs the packed policy is the unpacked one.
    pc::policy_options singles = f;
    singles.pairing.enabled = false;
    const auto no_pairs = pc::allocate_packed(many, gc, gavel_table(), singles);
    CHECK(no_pairs.pairs.empty());
    CHECK(no_pairs.objective == doctest::Approx(alone.objective).epsilon(1e-6));
    // POP: pairs inside parts, feasible, never better than the exact optimum.
    f.pop_parts = 2;
    const auto pop = pc::allocate_packed(many, gc, gavel_table(), f);
    check_packed_feasible(many, gc, pop);
    CHECK(pop.objective >= shared.bound * (1.0 - 1e-9));
    CHECK(std::isfinite(pop.objective));
  }
}

TEST_CASE("packed: POP keeps pairs inside parts, allocations feasible, k = 1 equals exact") {
  const auto c = pc::parse_cluster("k80:8,p100:8,v100:8");
  const auto jobs = gavel_jobs(64, 6, c, 7, 0.0);
  const auto parts = popalloc::pop::partition_uniform_random(64, 4, 3).members();
  std::vector<int> part_of(64);
  for (int s = 0; s < 4; ++s)
    for (const auto i : parts[static_cast<std::size_t>(s)])
      part_of[static_cast<std::size_t>(i)] = s;
  for (const bool water_filling : {false, true}) {
    CAPTURE(water_filling);
    pc::policy_options o = max_min();
    o.water_filling = water_filling;
    const auto exact = pc::allocate_packed(jobs, c, gavel_table(), o);
    CHECK(exact.status == popalloc::solve_status::converged);
    CHECK((exact.water_filling_levels > 0) == water_filling);
    o.pop_parts = 4;
    o.pop_seed = 3;
    const auto pop = pc::allocate_packed(jobs, c, gavel_table(), o);
    check_packed_feasible(jobs, c, pop);
    CHECK(std::isnan(pop.bound));
    CHECK(pop.objective <= exact.bound);
    CHECK(pop.objective > 0.0);
    CHECK((pop.water_filling_levels > 0) == water_filling);
    for (const auto& p : pop.pairs)
      CHECK(part_of[static_cast<std::size_t>(p.first)] ==
            part_of[static_cast<std::size_t>(p.second)]);
  }
}

TEST_CASE("packed: bad input is rejected with a clear error") {
  const auto t = toy_table(0.8, 1.2);
  const auto c = pc::parse_cluster("v100:1");
  auto jobs = toy_jobs(t, c, {"a", "b"});
  pc::policy_options o = max_min();
  o.policy = pc::policy_kind::proportional_fairness;
  CHECK_THROWS_AS(pc::allocate_packed(jobs, c, t, o), popalloc::invalid_options);
  o = max_min();
  o.heterogeneity_agnostic = true;
  CHECK_THROWS_AS(pc::allocate_packed(jobs, c, t, o), popalloc::invalid_options);
  o = max_min();
  o.pairing.min_combined_throughput = std::nan("");
  CHECK_THROWS_AS(pc::allocate_packed(jobs, c, t, o), popalloc::invalid_options);
  o = max_min();
  auto unknown = jobs;
  unknown[1].job_type = "nope";
  CHECK_THROWS_AS(pc::allocate_packed(unknown, c, t, o), popalloc::invalid_problem);
  auto bad = jobs;
  bad[0].throughput[0] = -1.0;
  CHECK_THROWS_AS(pc::allocate_packed(bad, c, t, o), popalloc::invalid_problem);
  bad = jobs;
  bad[0].throughput[0] = std::nan("");
  CHECK_THROWS_AS(pc::allocate_packed(bad, c, t, o), popalloc::invalid_problem);
  CHECK_THROWS_AS(pc::allocate_packed({}, c, t, o), popalloc::invalid_problem);
  pc::gpu_cluster empty;
  CHECK_THROWS(pc::allocate_packed(jobs, empty, t, o));
}

TEST_CASE(
    "packed: min makespan with a class per job is refused past the dense LP's size, POP splits "
    "it") {
  const auto c = pc::parse_cluster("k80:64,p100:64,v100:64");
  auto jobs = gavel_jobs(300, 8, c, 5);
  for (std::size_t i = 0; i < jobs.size(); ++i)
    jobs[i].total_steps = 1000.0 + static_cast<double>(i);  // every job its own class
  pc::policy_options o = max_min();
  o.policy = pc::policy_kind::min_makespan;
  CHECK_THROWS_WITH_AS(pc::allocate_packed(jobs, c, gavel_table(), o),
                       doctest::Contains("split the jobs with POP"), popalloc::invalid_problem);
  o.pop_parts = 8;
  const auto pop = pc::allocate_packed(jobs, c, gavel_table(), o);
  CHECK(pop.status == popalloc::solve_status::converged);
  CHECK(pop.classes == 300);
  CHECK(std::isfinite(pop.objective));
  check_packed_feasible(jobs, c, pop);
}
