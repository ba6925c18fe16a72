// SPDX-License-Identifier: Apache-2.0
// Load balancing: checker, greedy, price + repair, POP split/merge, the benchmark workload.
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/lb.hpp>

#include "lb/lb_check.hpp"

namespace lb = popalloc::lb;

namespace {

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

/// Random instance: S shards on N servers, heavy-tailed loads, 0-2 current replicas per shard.
lb::problem random_instance(std::uint64_t seed, std::size_t S, std::int32_t N) {
  std::mt19937_64 rng(seed);
  lb::problem p;
  p.servers = N;
  p.load.resize(S);
  p.memory.resize(S);
  for (std::size_t j = 0; j < S; ++j) {
    p.load[j] = std::floor(1000.0 / std::pow(uniform(rng, 0.02, 1.0), 1.2));
    p.memory[j] = static_cast<double>(1 + rng() % 2);
  }
  p.max_memory = 4.0 * 2.0 * static_cast<double>(S) / static_cast<double>(N) + 4.0;
  p.current.shards.resize(S);
  for (std::size_t j = 0; j < S; ++j) {
    const std::uint64_t copies = rng() % 7 == 0 ? 0 : (rng() % 5 == 0 ? 2 : 1);
    for (std::uint64_t c = 0; c < copies; ++c) {
      const auto i = static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(N));
      if (!p.current.holds(j, i)) p.current.shards[j].push_back({i, uniform(rng, 0.1, 1.0)});
    }
  }
  return p;
}

/// The library checker and the independent one must agree; returns the verdict.
bool consistent(const lb::problem& p, const lb::lb_result& r) {
  const auto mine = lb::check(p, r.result);
  const auto theirs = lb_test::independent_check(p, r.result);
  CHECK(mine.feasible == theirs.ok);
  CHECK(mine.new_replicas == theirs.moved);
  CHECK(mine.max_load_deviation == doctest::Approx(theirs.deviation).epsilon(1e-12));
  // A solver may only say balanced when the placement is.
  CHECK((r.status == lb::lb_status::balanced) == theirs.ok);
  if (r.status == lb::lb_status::balanced && !theirs.ok) MESSAGE(theirs.why);
  if (r.status != lb::lb_status::balanced) CHECK(!r.message.empty());
  return theirs.ok;
}

}  // namespace

TEST_CASE("java_random reproduces java.util.Random(42).nextDouble()") {
  lb::java_random r(42);
  // Values printed by OpenJDK: new Random(42).nextDouble() twice.
  CHECK(r.next_double() == 0.7275636800328681);
  CHECK(r.next_double() == 0.6832234717598454);
}

TEST_CASE("zipf loads and round-robin start follow POP's harness") {
  const auto l = lb::zipf_loads(4, 0.5);
  CHECK(l[0] == 1e6);
  CHECK(l[1] == 707107.0);  // round(1e6 / sqrt 2)
  CHECK(l[3] == 500000.0);
  const auto p = lb::round_robin_placement(5, 2);
  CHECK(p.shards[4].size() == 1);
  CHECK(p.shards[4][0].server == 0);
  CHECK(p.shards[3][0].server == 1);
}

TEST_CASE("checker: hand-made placements") {
  lb::problem p;
  p.servers = 2;
  p.load = {30.0, 10.0, 20.0};
  p.memory = {1.0, 1.0, 1.0};
  p.max_memory = 2.0;
  p.current = lb::placement{{{{0, 1.0}}, {{0, 1.0}}, {{1, 1.0}}}};
  // mean 30, band [28.5, 31.5]: shard 0 alone on server 0, shards 1 and 2 on server 1.
  lb::placement q{{{{0, 1.0}}, {{1, 1.0}}, {{1, 1.0}}}};
  auto c = lb::check(p, q);
  CHECK(c.feasible);
  CHECK(c.new_replicas == 1);
  CHECK(c.max_load_deviation == 0.0);
  // The current placement: 40 / 20, deviation 1/3.
  c = lb::check(p, p.current);
  CHECK(!c.feasible);
  CHECK(c.max_load_deviation == doctest::Approx(1.0 / 3.0));
  // Fractions not summing to 1, a memory violation, an unknown server.
  CHECK(!lb::check(p, lb::placement{{{{0, 0.5}}, {{1, 1.0}}, {{1, 1.0}}}}).feasible);
  CHECK(!lb::check(p, lb::placement{{{{0, 1.0}}, {{0, 0.0}, {1, 1.0}}, {{0, 0.0}, {1, 1.0}}}})
             .feasible);
  CHECK(!lb::check(p, lb::placement{{{{2, 1.0}}, {{1, 1.0}}, {{1, 1.0}}}}).feasible);
  CHECK(!lb_test::independent_check(p, p.current).ok);
  CHECK(lb_test::independent_check(p, q).ok);
}

TEST_CASE("problem validation names the bad entry") {
  lb::problem p;
  p.servers = 2;
  p.load = {1.0, 2.0};
  p.memory = {1.0, 1.0};
  p.max_memory = 4.0;
  CHECK_NOTHROW(p.validate());
  auto q = p;
  q.load[1] = std::nan("");
  CHECK_THROWS_WITH_AS(q.validate(), doctest::Contains("load[1]"), popalloc::invalid_problem);
  q = p;
  q.memory.pop_back();
  CHECK_THROWS_AS(q.validate(), popalloc::invalid_problem);
  q = p;
  q.servers = 0;
  CHECK_THROWS_AS(q.validate(), popalloc::invalid_problem);
  q = p;
  q.current.shards = {{{5, 1.0}}, {}};
  CHECK_THROWS_WITH_AS(q.validate(), doctest::Contains("server 5"), popalloc::invalid_problem);
  q = p;
  q.load = {0.0, 0.0};
  CHECK_THROWS_AS(q.validate(), popalloc::invalid_problem);
  q = p;
  q.max_memory = -1.0;
  CHECK_THROWS_AS(lb::solve_price(q), popalloc::invalid_problem);
  CHECK_THROWS_AS(lb::solve_greedy(q), popalloc::invalid_problem);
  CHECK_THROWS_AS(lb::pop_split(p, 3), popalloc::invalid_problem);  // k > servers
}

TEST_CASE("greedy: POP's heuristic on a hand case") {
  // mean 25, band [23.75, 26.25]. Server 0: 30 + 12 + 8 = 50, server 1: 0.
  // Largest shard (30) does not fit under 26.25 on server 1; 12 does, then 8 does not
  // (server 1 would reach 20 <= 26.25: it does) -> loads 30 / 20: unbalanced, 2 moves.
  lb::problem p;
  p.servers = 2;
  p.load = {30.0, 12.0, 8.0};
  p.memory = {1.0, 1.0, 1.0};
  p.max_memory = 3.0;
  p.current = lb::placement{{{{0, 1.0}}, {{0, 1.0}}, {{0, 1.0}}}};
  const auto r = lb::solve_greedy(p);
  CHECK(r.status == lb::lb_status::unbalanced);
  const auto c = lb::check(p, r.result);
  CHECK(c.new_replicas == 2);
  CHECK(c.server_load[0] == 30.0);
  CHECK(c.server_load[1] == 20.0);
  consistent(p, r);
}

TEST_CASE(
    "price and greedy keep a balanced placement whose loads sit a rounding error above the band") {
  // Band [2, 2] (epsilon 0): server 0 carries 2 + 4e-12, within the checker's slack but above
  // the upper bound, as loads read back from a file can be. Moving anything cannot help.
  lb::problem p;
  p.servers = 2;
  p.epsilon = 0.0;
  p.load = {1.0, 1.0 + 4e-12, 1.0, 1.0 - 4e-12};
  p.memory = {1.0, 1.0, 1.0, 1.0};
  p.max_memory = 4.0;
  p.current = lb::placement{{{{0, 1.0}}, {{0, 1.0}}, {{1, 1.0}}, {{1, 1.0}}}};
  REQUIRE(lb::check(p, p.current).feasible);
  for (const auto& r : {lb::solve_price(p), lb::solve_greedy(p)}) {
    CHECK(r.status == lb::lb_status::balanced);
    CHECK(lb::check(p, r.result).new_replicas == 0);
    CHECK(consistent(p, r));
  }
}

TEST_CASE("price: a case where a shard must be split") {
  // One shard holds 3/4 of the load on 2 servers: it must be split (2 replicas).
  lb::problem p;
  p.servers = 2;
  p.load = {75.0, 10.0, 10.0, 5.0};
  p.memory = {1.0, 1.0, 1.0, 1.0};
  p.max_memory = 4.0;
  p.current = lb::placement{{{{0, 1.0}}, {{0, 1.0}}, {{1, 1.0}}, {{1, 1.0}}}};
  const auto r = lb::solve_price(p);
  const lb::price_report& rep = r.price;
  CHECK(r.status == lb::lb_status::balanced);
  CHECK(consistent(p, r));
  // The optimum is 1 move: shard 0 gets a second replica on server 1 (band [47.5, 52.5]).
  CHECK(lb::check(p, r.result).new_replicas == 1);
  CHECK(rep.lp_shards >= 1);
}

TEST_CASE("price + repair and greedy on random instances: balanced only when feasible") {
  int balanced = 0, total = 0;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    const std::size_t S = 5 + seed * 7 % 150;
    const auto N = static_cast<std::int32_t>(2 + seed % 17);
    const lb::problem p = random_instance(seed, S, N);
    const auto price = lb::solve_price(p);
    if (consistent(p, price)) ++balanced;
    ++total;
    consistent(p, lb::solve_greedy(p));
    for (const int k : {2, 3}) {
      if (k > N) continue;
      consistent(p, lb::pop_solve(p, k, [](const lb::problem& q) { return lb::solve_price(q); }));
      consistent(p, lb::pop_solve(p, k, [](const lb::problem& q) { return lb::solve_greedy(q); }));
    }
  }
  // The repair is not allowed to give up on ordinary instances (memory is ample here).
  CHECK(balanced >= total * 9 / 10);
  MESSAGE("price + repair balanced " << balanced << " of " << total << " random instances");
}

TEST_CASE("price + repair balances every round of POP's benchmark (256 x 32, 12 rounds)") {
  lb::zipf_workload w(256, 32, 42);
  lb::placement cur = lb::round_robin_placement(256, 32);
  for (int round = 0; round < 12; ++round) {
    const lb::problem p = w.next_round(cur);
    const auto r = lb::solve_price(p);
    REQUIRE(consistent(p, r));
    // Shard 0 (1e6) is far above the band's upper bound: it must live on several servers.
    CHECK(r.result.shards[0].size() >= 2);
    cur = r.result;
  }
}

TEST_CASE("drift workload: zipf at 0.5, then log-normal steps, reproducible, balanced by price") {
  constexpr std::size_t S = 20000;
  lb::drift_workload w(S, 128, 11, 0.1, 1000.0);
  const lb::placement none = lb::round_robin_placement(S, 128);
  double exponent = 0.0;
  const lb::problem p0 = w.next_round(none, &exponent);
  CHECK(std::isnan(exponent));
  CHECK(p0.load == lb::zipf_loads(S, 0.5));  // round 0: no drift
  CHECK(p0.memory == std::vector<double>(S, 1.0));
  CHECK(p0.max_memory == 1000.0);
  CHECK(p0.servers == 128);
  const lb::problem p1 = w.next_round(none);
  double sum = 0.0, sum2 = 0.0;
  for (std::size_t j = 0; j < S; ++j) {
    const double step = std::log(p1.load[j] / p0.load[j]);
    sum += step;
    sum2 += step * step;
  }
  const double mean = sum / static_cast<double>(S);
  const double sd = std::sqrt(sum2 / static_cast<double>(S) - mean * mean);
  CHECK(std::abs(mean) <= 0.005);
  CHECK(std::abs(sd - 0.1) <= 0.005);

  // The same seed gives the same rounds; another seed other ones.
  lb::drift_workload again(S, 128, 11, 0.1, 1000.0), other(S, 128, 12, 0.1, 1000.0);
  CHECK(again.next_round(none).load == p0.load);
  CHECK(again.next_round(none).load == p1.load);
  other.next_round(none);
  CHECK(other.next_round(none).load != p1.load);

  for (const double sigma : {-0.1, 1.5, std::nan("")})
    CHECK_THROWS_AS(lb::drift_workload(S, 128, 11, sigma), popalloc::invalid_problem);
  CHECK_NOTHROW(lb::drift_workload(S, 128, 11, 0.0));
  CHECK_NOTHROW(lb::drift_workload(S, 128, 11, 1.0));

  lb::drift_workload rounds(1024, 128, 42, 0.1);
  lb::placement cur = lb::round_robin_placement(1024, 128);
  for (int round = 0; round < 20; ++round) {
    CAPTURE(round);
    const lb::problem p = rounds.next_round(cur);
    const auto r = lb::solve_price(p);
    CHECK(r.status == lb::lb_status::balanced);
    CHECK(lb::check(p, r.result).feasible);
    cur = r.result;
  }
}

TEST_CASE("POP split: partial loads add up, groups meet their targets") {
  lb::zipf_workload w(96, 12, 7);
  const lb::problem p = w.next_round(lb::round_robin_placement(96, 12));
  for (const int k : {1, 2, 3, 4, 5}) {
    const auto parts = lb::pop_split(p, k);
    REQUIRE(parts.size() == static_cast<std::size_t>(k));
    std::vector<double> sum(p.shards(), 0.0);
    std::int32_t servers = 0;
    for (const auto& part : parts) {
      CHECK(part.first_server == servers);
      servers += part.sub.servers;
      double group = 0.0;
      for (std::size_t l = 0; l < part.shards.size(); ++l) {
        sum[part.shards[l]] += part.partial_load[l];
        group += part.partial_load[l];
      }
      CHECK(group == doctest::Approx(p.total_load() * part.sub.servers / p.servers));
      CHECK(part.sub.lower() == p.lower());
      CHECK(part.sub.upper() == p.upper());
    }
    CHECK(servers == p.servers);
    for (std::size_t j = 0; j < p.shards(); ++j) CHECK(sum[j] == doctest::Approx(p.load[j]));
  }
}

TEST_CASE("POP merge scales routing fractions by partial load (hand-checked)") {
  // 4 servers, k = 2 (servers {0,1} and {2,3}); total 200, target 100 per group.
  // Shard 0 (load 120) lives on server 0, shard 1 (60) on server 1, shard 2 (20) on server 2.
  // Group 0 holds shards 1, 0 (lightest first): 60 + 40 of shard 0 (its remaining 80 stays).
  // Group 1 holds shard 2 (20), then tops up with 80 of shard 0.
  lb::problem p;
  p.servers = 4;
  p.load = {120.0, 60.0, 20.0};
  p.memory = {1.0, 1.0, 1.0};
  p.max_memory = 3.0;
  p.current = lb::placement{{{{0, 1.0}}, {{1, 1.0}}, {{2, 1.0}}}};
  const auto parts = lb::pop_split(p, 2);
  REQUIRE(parts[0].shards == std::vector<std::size_t>{1, 0});
  CHECK(parts[0].partial_load == std::vector<double>{60.0, 40.0});
  REQUIRE(parts[1].shards == std::vector<std::size_t>{2, 0});
  CHECK(parts[1].partial_load == std::vector<double>{20.0, 80.0});
  // Sub-placements: group 0: shard 1 on local 1, shard 0 on local 0; group 1: shard 2 50/50 on
  // local 0/1, shard 0 30/70 on local 0/1.
  std::vector<lb::placement> sub(2);
  sub[0].shards = {{{1, 1.0}}, {{0, 1.0}}};
  sub[1].shards = {{{0, 0.5}, {1, 0.5}}, {{0, 0.3}, {1, 0.7}}};
  const auto merged = lb::pop_merge(p, parts, sub);
  // Shard 0: 40/120 on server 0, 80/120 * 0.3 on server 2, 80/120 * 0.7 on server 3.
  REQUIRE(merged.shards[0].size() == 3);
  CHECK(merged.shards[0][0].server == 0);
  CHECK(merged.shards[0][0].fraction == doctest::Approx(1.0 / 3.0));
  CHECK(merged.shards[0][1].server == 2);
  CHECK(merged.shards[0][1].fraction == doctest::Approx(0.2));
  CHECK(merged.shards[0][2].server == 3);
  CHECK(merged.shards[0][2].fraction == doctest::Approx(7.0 / 15.0));
  // Loads: server 0: 40, server 1: 60, server 2: 10 + 24 = 34, server 3: 10 + 56 = 66.
  const auto c = lb::check(p, merged);
  CHECK(c.server_load[0] == doctest::Approx(40.0));
  CHECK(c.server_load[1] == doctest::Approx(60.0));
  CHECK(c.server_load[2] == doctest::Approx(34.0));
  CHECK(c.server_load[3] == doctest::Approx(66.0));
  double routed = 0.0;
  for (const auto& e : merged.shards[0]) routed += e.fraction;
  CHECK(routed == doctest::Approx(1.0));  // POP's unscaled merge would give 2
}

TEST_CASE("price, core: restricting the LP to receivers keeps the LP relaxation's optimum") {
  // POP's benchmark, 512 x 64, 3 rounds: the LP bound (fractional moves) with the default
  // receiver set must equal the bound with every server a column whenever lp_exact says so.
  lb::zipf_workload w(512, 64, 42);
  lb::placement cur = lb::round_robin_placement(512, 64);
  int exact = 0;
  for (int round = 0; round < 3; ++round) {
    const lb::problem p = w.next_round(cur);
    lb::price_options restricted, full;
    restricted.relaxation = full.relaxation = lb::relaxation_method::core;
    restricted.solver.relative_gap = full.solver.relative_gap = 1e-6;
    restricted.solver.max_iterations = full.solver.max_iterations = 2000;
    full.min_receivers = 1u << 30;
    const auto a = lb::solve_price(p, restricted);
    const lb::price_report rr = a.price;
    const lb::price_report rf = lb::solve_price(p, full).price;
    CHECK(rf.lp_exact);
    CHECK(rf.lp_servers == 64);
    CHECK(rr.lp_servers <= rf.lp_servers);
    if (rr.lp_exact) {
      ++exact;
      // Both bounds are certified to 1e-6 of an objective of about 2 x lp_shards.
      CHECK(std::abs(rr.lp_moves_bound - rf.lp_moves_bound) <=
            1e-5 * 2.0 * static_cast<double>(rr.lp_shards) + 1e-9);
    }
    REQUIRE(a.status == lb::lb_status::balanced);
    cur = a.result;
  }
  CHECK(exact >= 2);
}

TEST_CASE("price, core: progress, stopping and the time limit of the LP relaxation") {
  lb::zipf_workload w(512, 64, 42);
  const lb::problem p = w.next_round(lb::round_robin_placement(512, 64));
  lb::price_options o;
  o.relaxation = lb::relaxation_method::core;
  const auto plain = lb::solve_price(p, o);
  REQUIRE(plain.price.lp_shards > 0);
  CHECK(plain.price.lp_status != popalloc::solve_status::not_solved);
  CHECK(plain.price.lp_iterations > 0);

  std::vector<lb::stage> stages;
  int last_iteration = 0;
  o.callback = [&](const lb::progress& q) {
    if (q.stage == lb::stage::lp) {
      CHECK(q.lp_iterations > last_iteration);
      last_iteration = q.lp_iterations;
    }
    CHECK(q.lp_shards == plain.price.lp_shards);
    CHECK(q.lp_servers == plain.price.lp_servers);
    if (stages.empty() || stages.back() != q.stage) stages.push_back(q.stage);
    return popalloc::callback_action::proceed;
  };
  const auto reported = lb::solve_price(p, o);
  CHECK(stages == std::vector<lb::stage>{lb::stage::lp, lb::stage::repair});
  CHECK(last_iteration == plain.price.lp_iterations);
  // Reporting changes nothing.
  CHECK(reported.status == plain.status);
  CHECK(lb::check(p, reported.result).new_replicas == lb::check(p, plain.result).new_replicas);
  CHECK(reported.price.lp_moves_bound == plain.price.lp_moves_bound);

  if (plain.price.lp_iterations > 1) {
    o.callback = [](const lb::progress&) { return popalloc::callback_action::stop; };
    const auto stopped = lb::solve_price(p, o);
    CHECK(stopped.price.lp_status == popalloc::solve_status::interrupted);
    CHECK(stopped.price.lp_iterations == 1);
    CHECK(stopped.result.shards.size() == p.shards());  // rounding and repair still ran
    CHECK(consistent(p, stopped));
  }
  lb::price_options limited;
  limited.relaxation = lb::relaxation_method::core;
  limited.solver.time_limit_seconds = 1e-9;
  const auto timed = lb::solve_price(p, limited);
  CHECK(timed.price.lp_status == popalloc::solve_status::time_limit);
  CHECK(timed.result.shards.size() == p.shards());
  CHECK(consistent(p, timed));
  CHECK(std::string(lb::to_string(lb::stage::lp)) == "lp");
  CHECK(std::string(lb::to_string(lb::stage::repair)) == "repair");
}

TEST_CASE("pop: the result carries the parts' report") {
  lb::zipf_workload w(256, 32, 7);
  const lb::problem p = w.next_round(lb::round_robin_placement(256, 32));
  const auto r = lb::pop_solve(p, 4, [](const lb::problem& q) { return lb::solve_price(q); });
  CHECK(r.pop.part_seconds.size() == 4);
  REQUIRE(r.pop.part_status.size() == 4);
  for (const auto s : r.pop.part_status) CHECK(s == lb::lb_status::balanced);
  CHECK(lb::solve_price(p).pop.part_seconds.empty());
  CHECK(lb::solve_greedy(p).price.lp_status == popalloc::solve_status::not_solved);
}
