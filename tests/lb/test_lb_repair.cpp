// SPDX-License-Identifier: Apache-2.0
// The repair of solve_price: which spare replicas consolidation frees, how a full server below
// the lower bound makes room, and the effect of keeping spare replicas over POP's rounds.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/lb.hpp>

#include "lb_check.hpp"

namespace lb = popalloc::lb;
using lb::detail::load_routing;

namespace {

/// A problem with an explicit band and unit memory per shard.
lb::problem banded(std::vector<double> load, std::int32_t servers, double max_memory, double lo,
                   double hi) {
  lb::problem p;
  p.load = std::move(load);
  p.memory.assign(p.load.size(), 1.0);
  p.servers = servers;
  p.max_memory = max_memory;
  p.lower_bound = lo;
  p.upper_bound = hi;
  return p;
}

/// An empty routing for `p`; parts are added with load_routing::add.
load_routing empty_routing(const lb::problem& p) {
  load_routing st;
  st.parts.resize(p.shards());
  st.server_load.assign(p.server_count(), 0.0);
  st.server_memory.assign(p.server_count(), 0.0);
  return st;
}

}  // namespace

TEST_CASE("consolidate frees a loaded spare replica only where memory is tight") {
  // Shard 0 (load 4) lives on servers 0 (3) and 1 (1); shard 1 (5) on server 1, shard 2 (5) on
  // server 2; shard 3 (load 0) on server 1 only when `crowded`. Band [0, 10], memory 4.
  for (const bool crowded : {false, true}) {
    for (const double fraction : {0.0, 0.75}) {
      CAPTURE(crowded);
      CAPTURE(fraction);
      const lb::problem p = banded({4.0, 5.0, 5.0, 0.0}, 3, 4.0, 0.0, 10.0);
      load_routing st = empty_routing(p);
      st.add(p, 0, 0, 3.0);
      st.add(p, 0, 1, 1.0);
      st.add(p, 1, 1, 5.0);
      st.add(p, 2, 2, 5.0);
      st.add(p, 3, crowded ? 1 : 2, 0.0);
      lb::detail::consolidate(p, st, fraction);
      // Server 1 holds 2 (or 3 when crowded) of 4 memory: freed at 0, and at 0.75 only at 3.
      const bool freed = fraction == 0.0 || crowded;
      CHECK(st.holds(0, 1) == !freed);
      CHECK(st.part_on(0, 0) == doctest::Approx(freed ? 4.0 : 3.0));
      CHECK(st.server_load[1] == doctest::Approx(freed ? 5.0 : 6.0));
      CHECK(st.server_memory[1] == doctest::Approx((crowded ? 3.0 : 2.0) - (freed ? 1.0 : 0.0)));
    }
  }
}

TEST_CASE("consolidate always frees a replica without load") {
  const lb::problem p = banded({4.0, 5.0}, 2, 8.0, 0.0, 10.0);
  load_routing st = empty_routing(p);
  st.add(p, 0, 0, 4.0);
  st.add(p, 0, 1, 0.0);
  st.add(p, 1, 1, 5.0);
  lb::detail::consolidate(p, st, 0.75);
  CHECK_FALSE(st.holds(0, 1));
  CHECK(st.server_memory[1] == doctest::Approx(1.0));
}

TEST_CASE("a full server below the lower bound frees memory before it pulls load") {
  // Band [5, 7], memory 2. Server 0 holds shards 0 and 1 (load 1 each: memory full, load 2
  // against the lower bound 5), server 1 shard 2 (10), server 2 shard 3 (5.5).
  // Shard 0 has a second replica on server 2 when `spare`: its part there shifts for free.
  for (const bool spare : {false, true}) {
    CAPTURE(spare);
    const lb::problem p = banded({1.0, 1.0, 10.0, 5.5}, 3, 2.0, 5.0, 7.0);
    load_routing st = empty_routing(p);
    st.add(p, 0, 0, spare ? 0.5 : 1.0);
    if (spare) st.add(p, 0, 2, 0.5);
    st.add(p, 1, 0, 1.0);
    st.add(p, 2, 1, 10.0);
    st.add(p, 3, 2, 5.5);
    std::string why;
    const std::int64_t added = lb::detail::raise_to_lower_bound(p, st, why);
    INFO(why);
    // Without a spare replica shard 0's part moves to server 2 (a new replica); with one it
    // moves there for free. Either way shard 2 then sends part of its load to server 0.
    CHECK(added == (spare ? 1 : 2));
    CHECK_FALSE(st.holds(0, 0));
    CHECK(st.part_on(0, 2) == doctest::Approx(1.0));
    CHECK(st.holds(2, 0));
    for (std::size_t i = 0; i < 3; ++i) {
      CAPTURE(i);
      CHECK(st.server_load[i] >= 5.0 - 1e-9);
      CHECK(st.server_load[i] <= 7.0 + 1e-9);
      CHECK(st.server_memory[i] <= 2.0);
    }
  }
}

TEST_CASE("a full server that can free nothing stops the repair with a reason") {
  // Server 0 holds shards 0 and 1 (memory full, load 2); the only other server has no room.
  const lb::problem p = banded({1.0, 1.0, 10.0}, 2, 2.0, 5.0, 7.0);
  load_routing st = empty_routing(p);
  st.add(p, 0, 0, 1.0);
  st.add(p, 1, 0, 1.0);
  st.add(p, 2, 1, 10.0);
  std::string why;
  CHECK(lb::detail::raise_to_lower_bound(p, st, why) == -1);
  CHECK(why.find("cannot raise server 0") != std::string::npos);
}

TEST_CASE("price: consolidate_memory out of [0, 1] is refused") {
  lb::zipf_workload workload(64, 8, 42);
  const lb::problem p = workload.next_round(lb::round_robin_placement(64, 8));
  for (const double bad : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    lb::price_options opt;
    opt.consolidate_memory = bad;
    CHECK_THROWS_AS(lb::solve_price(p, opt), popalloc::invalid_options);
  }
}

TEST_CASE("price: spare replicas kept until memory is tight save moves over POP's rounds") {
  // 1024 shards x 128 servers, seed 42, rounds 0-39 on each setting's own trajectory.
  long moved[2] = {0, 0};
  const double fractions[2] = {0.0, 0.75};
  for (int setting = 0; setting < 2; ++setting) {
    lb::zipf_workload workload(1024, 128, 42);
    lb::placement current = lb::round_robin_placement(1024, 128);
    for (int round = 0; round < 40; ++round) {
      CAPTURE(setting);
      CAPTURE(round);
      const lb::problem p = workload.next_round(current);
      lb::price_options opt;
      opt.consolidate_memory = fractions[setting];
      lb::lb_result r = lb::solve_price(p, opt);
      const lb_test::verdict v = lb_test::independent_check(p, r.result);
      INFO(v.why);
      REQUIRE(v.ok);
      CHECK(r.status == lb::lb_status::balanced);
      moved[setting] += v.moved;
      current = std::move(r.result);
    }
  }
  MESSAGE("moves over 40 rounds: consolidate everywhere ", moved[0], ", above 3/4 memory ",
          moved[1]);
  CHECK(moved[1] < moved[0]);
}

TEST_CASE("price: a repair that spare replicas block runs again consolidating everywhere") {
  // POP k = 16 over the core's relaxation at 1024 x 128 (64 shards x 8 servers per part): with
  // the spare replicas kept, a part's residual load can find memory only on servers without load
  // room (rounds 41, 43 and 56); the second repair balances those parts.
  lb::zipf_workload workload(1024, 128, 42);
  lb::placement current = lb::round_robin_placement(1024, 128);
  lb::price_options opt;
  opt.relaxation = lb::relaxation_method::core;
  opt.solver.threads = 1;
  for (int round = 0; round < 60; ++round) {
    CAPTURE(round);
    const lb::problem p = workload.next_round(current);
    lb::lb_result r =
        lb::pop_solve(p, 16, [&](const lb::problem& part) { return lb::solve_price(part, opt); });
    const lb_test::verdict v = lb_test::independent_check(p, r.result);
    INFO(v.why);
    REQUIRE(v.ok);
    CHECK(r.status == lb::lb_status::balanced);
    current = std::move(r.result);
  }
}
