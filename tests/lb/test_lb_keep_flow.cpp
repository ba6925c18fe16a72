// SPDX-License-Identifier: Apache-2.0
// The keep LP of load balancing: the exact greedy flow on hand cases, against the price-discovery
// core on random instances, and inside solve_price against the core's relaxation.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/dense_problem.hpp>
#include <popalloc/dual_solver.hpp>
#include <popalloc/lb.hpp>
#include <popalloc/utility/linear.hpp>

namespace lb = popalloc::lb;
using lb::detail::keep_lp;
using lb::detail::keep_solution;

namespace {

/// Shard r of `holders` lists its columns.
keep_lp make_keep_lp(std::vector<double> load,
                     const std::vector<std::vector<std::int32_t>>& holders,
                     std::vector<double> room) {
  keep_lp lp;
  lp.load = std::move(load);
  lp.room = std::move(room);
  lp.edge_offset.push_back(0);
  for (const auto& h : holders) {
    for (const std::int32_t c : h) lp.edge_column.push_back(c);
    lp.edge_offset.push_back(lp.edge_column.size());
  }
  return lp;
}

/// Every shard keeps at most its load, every column at most its room; returns the objective.
double check_feasible(const keep_lp& lp, const keep_solution& sol) {
  std::vector<double> used(lp.room.size(), 0.0);
  double objective = 0.0;
  for (std::size_t r = 0; r + 1 < lp.edge_offset.size(); ++r) {
    double kept = 0.0;
    for (std::size_t e = lp.edge_offset[r]; e < lp.edge_offset[r + 1]; ++e) {
      CHECK(sol.kept[e] >= 0.0);
      kept += sol.kept[e];
      used[static_cast<std::size_t>(lp.edge_column[e])] += sol.kept[e];
    }
    CHECK(kept <= lp.load[r] * (1.0 + 1e-12));
    objective += kept / lp.load[r];
  }
  for (std::size_t c = 0; c < used.size(); ++c) CHECK(used[c] <= lp.room[c] + 1e-9);
  for (const double p : sol.price) CHECK(p >= 0.0);
  CHECK(objective == doctest::Approx(sol.objective).epsilon(1e-12));
  return objective;
}

}  // namespace

TEST_CASE("keep flow: a later shard re-routes an earlier one through its second replica") {
  // Shard 0 (load 2) lives on columns 0 and 1 and goes to 0 first; shard 1 (load 3, column 0
  // only) then needs 1 more than column 0's room of 4 leaves, which shard 0 gives up by moving 1
  // to column 1; shard 2 (load 3, column 1) fits in the 3 left there. Everything is kept.
  const keep_lp lp = make_keep_lp({2.0, 3.0, 3.0}, {{0, 1}, {0}, {1}}, {4.0, 4.0});
  const keep_solution sol = lb::detail::solve_keep_lp(lp);
  check_feasible(lp, sol);
  CHECK(sol.objective == doctest::Approx(3.0));
  CHECK(sol.bound == doctest::Approx(3.0));
  CHECK(sol.kept[0] == doctest::Approx(1.0));  // shard 0 on column 0
  CHECK(sol.kept[1] == doctest::Approx(1.0));  // shard 0 on column 1
  CHECK(sol.kept[2] == doctest::Approx(3.0));
  CHECK(sol.kept[3] == doctest::Approx(3.0));
  CHECK(sol.price == std::vector<double>{0.0, 0.0});
}

TEST_CASE("keep flow: a full server's price is the weight of the shard it could not keep") {
  // Column 0 (room 3) holds two shards of load 2: one is kept whole, the other half. Column 1
  // (room 10) keeps its shard of load 4 and stays open at price 0. The optimum 2.5 equals the
  // dual value 3 x 1/2 + (1 - 2 x 1/2) x 2 + (1 - 0) = 2.5.
  const keep_lp lp = make_keep_lp({2.0, 2.0, 4.0}, {{0}, {0}, {1}}, {3.0, 10.0});
  const keep_solution sol = lb::detail::solve_keep_lp(lp);
  CHECK(check_feasible(lp, sol) == doctest::Approx(2.5));
  CHECK(sol.bound == doctest::Approx(2.5));
  CHECK(sol.price[0] == doctest::Approx(0.5));
  CHECK(sol.price[1] == 0.0);
  // Smaller shards first: with loads 1 and 3 on room 3, the small one is kept whole.
  const keep_lp small_first = make_keep_lp({3.0, 1.0}, {{0}, {0}}, {3.0});
  const keep_solution s2 = lb::detail::solve_keep_lp(small_first);
  CHECK(s2.kept[1] == doctest::Approx(1.0));
  CHECK(s2.kept[0] == doctest::Approx(2.0));
  CHECK(s2.objective == doctest::Approx(1.0 + 2.0 / 3.0));
  CHECK(s2.bound == doctest::Approx(s2.objective));
}

TEST_CASE("keep flow: shards without a holding server and servers without room") {
  const keep_lp lp = make_keep_lp({5.0, 1.0}, {{}, {0}}, {0.0});
  const keep_solution sol = lb::detail::solve_keep_lp(lp);
  CHECK(check_feasible(lp, sol) == 0.0);
  CHECK(sol.bound == doctest::Approx(0.0));  // price 1 on a column of room 0
  const keep_lp none = make_keep_lp({}, {}, {});
  CHECK(lb::detail::solve_keep_lp(none).objective == 0.0);
}

TEST_CASE("keep flow: malformed keep LPs are refused") {
  CHECK_THROWS_AS(lb::detail::solve_keep_lp(make_keep_lp({0.0}, {{0}}, {1.0})),
                  std::invalid_argument);
  CHECK_THROWS_AS(lb::detail::solve_keep_lp(make_keep_lp({NAN}, {{0}}, {1.0})),
                  std::invalid_argument);
  CHECK_THROWS_AS(lb::detail::solve_keep_lp(make_keep_lp({1.0}, {{1}}, {1.0})),
                  std::invalid_argument);
  CHECK_THROWS_AS(lb::detail::solve_keep_lp(make_keep_lp({1.0}, {{0}}, {-1.0})),
                  std::invalid_argument);
  keep_lp bad = make_keep_lp({1.0}, {{0}}, {1.0});
  bad.edge_offset.pop_back();
  CHECK_THROWS_AS(lb::detail::solve_keep_lp(bad), std::invalid_argument);
}

TEST_CASE("keep flow: exact against the price-discovery core's certified bounds") {
  // Random keep LPs with 1-3 holding servers per shard and contended rooms; the same LP as a
  // dense problem (value 1 on holding columns, 0 elsewhere; demand = load) for popalloc::solve.
  // Each side's objective must lie under the other's bound, and the flow's own gap must be 0.
  int tested = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    std::mt19937_64 rng(seed);
    const std::size_t shards = 20 + rng() % 60, columns = 3 + rng() % 8;
    std::vector<double> load(shards), room(columns);
    std::vector<std::vector<std::int32_t>> holders(shards);
    double total = 0.0;
    for (std::size_t r = 0; r < shards; ++r) {
      load[r] = 1.0 + static_cast<double>(rng() % 1000) / 50.0;
      total += load[r];
      const std::size_t copies = 1 + rng() % 3;
      for (std::size_t k = 0; k < copies; ++k) {
        const auto c = static_cast<std::int32_t>(rng() % columns);
        if (std::find(holders[r].begin(), holders[r].end(), c) == holders[r].end())
          holders[r].push_back(c);
      }
    }
    for (auto& c : room)
      c = total / static_cast<double>(columns) * (0.3 + static_cast<double>(rng() % 100) / 100.0);
    const keep_lp lp = make_keep_lp(load, holders, room);
    const keep_solution sol = lb::detail::solve_keep_lp(lp);
    const double flow = check_feasible(lp, sol);
    CHECK(sol.bound - flow <= 1e-9 * static_cast<double>(shards));

    popalloc::dense_problem<double> dense;
    dense.throughput.setZero(static_cast<Eigen::Index>(shards), static_cast<Eigen::Index>(columns));
    dense.job_demand.resize(static_cast<Eigen::Index>(shards));
    dense.capacity.resize(static_cast<Eigen::Index>(columns));
    for (std::size_t r = 0; r < shards; ++r) {
      dense.job_demand[static_cast<Eigen::Index>(r)] = load[r];
      for (const std::int32_t c : holders[r])
        dense.throughput(static_cast<Eigen::Index>(r), c) = 1.0;
    }
    for (std::size_t c = 0; c < columns; ++c)
      dense.capacity[static_cast<Eigen::Index>(c)] = room[c];
    popalloc::solver_options o;
    o.relative_gap = 1e-7;
    const auto core = popalloc::solve(dense, popalloc::utility::linear{}, o);
    if (core.status != popalloc::solve_status::converged) continue;
    ++tested;
    CHECK(flow <= core.dual_bound + 1e-9 * static_cast<double>(shards));
    CHECK(core.primal_objective <= sol.bound + 1e-9 * static_cast<double>(shards));
    CHECK(flow == doctest::Approx(core.primal_objective).epsilon(1e-6));
  }
  CHECK(tested >= 10);
}

TEST_CASE("price: the keep flow and the core's relaxation bound the same moves") {
  // POP's benchmark, 512 x 64, 4 rounds along the flow's own trajectory: the core's relaxation
  // over every server (lp_exact) must certify the same fractional moves, and both placements
  // are balanced.
  lb::zipf_workload w(512, 64, 42);
  lb::placement cur = lb::round_robin_placement(512, 64);
  for (int round = 0; round < 4; ++round) {
    const lb::problem p = w.next_round(cur);
    lb::price_options core;
    core.relaxation = lb::relaxation_method::core;
    core.solver.relative_gap = 1e-7;
    core.solver.max_iterations = 4000;
    core.min_receivers = 1u << 30;
    std::vector<lb::stage> stages;
    lb::price_options flow;
    flow.callback = [&](const lb::progress& q) {
      stages.push_back(q.stage);
      CHECK(q.lp_iterations == 0);
      return popalloc::callback_action::proceed;
    };
    const auto a = lb::solve_price(p, flow);
    const auto b = lb::solve_price(p, core);
    REQUIRE(a.status == lb::lb_status::balanced);
    CHECK(b.status == lb::lb_status::balanced);
    CHECK(a.price.lp_exact);
    CHECK(a.price.lp_status == popalloc::solve_status::converged);
    CHECK(a.price.lp_relative_gap <= 1e-12);
    CHECK(a.price.lp_shards == b.price.lp_shards);
    if (a.price.lp_shards > 0) {
      CHECK(stages == std::vector<lb::stage>{lb::stage::lp, lb::stage::repair});
      // The core's bound is certified to 1e-7 of an objective of about 2 x lp_shards.
      CHECK(std::abs(a.price.lp_moves_bound - b.price.lp_moves_bound) <=
            1e-6 * 2.0 * static_cast<double>(a.price.lp_shards) + 1e-9);
    }
    cur = a.result;
  }
}

TEST_CASE("price: the plan's fill level changes the placement, never the reported relaxation") {
  lb::zipf_workload w(512, 64, 7);
  const lb::problem p = w.next_round(lb::round_robin_placement(512, 64));
  lb::price_options to_mean, to_upper;
  to_upper.keep_fill = 1.0;
  const auto a = lb::solve_price(p, to_mean);
  const auto b = lb::solve_price(p, to_upper);
  REQUIRE(a.price.lp_shards > 0);
  CHECK(a.status == lb::lb_status::balanced);
  CHECK(b.status == lb::lb_status::balanced);
  CHECK(a.price.lp_moves_bound == b.price.lp_moves_bound);
  CHECK(a.price.lp_servers == b.price.lp_servers);
  // Planned to the mean, the servers that shed load end no higher than planned to the bound.
  const auto ca = lb::check(p, a.result), cb = lb::check(p, b.result);
  double highest_a = 0.0, highest_b = 0.0;
  for (std::size_t i = 0; i < ca.server_load.size(); ++i) {
    highest_a = std::max(highest_a, ca.server_load[i]);
    highest_b = std::max(highest_b, cb.server_load[i]);
  }
  CHECK(highest_a <= highest_b + 1e-9 * p.mean_load());
  for (const double bad : {-0.1, 1.5, static_cast<double>(NAN)}) {
    lb::price_options o;
    o.keep_fill = bad;
    CHECK_THROWS_AS(lb::solve_price(p, o), popalloc::invalid_options);
  }
}
