// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief POP: partitioning, resource and client splitting, the generic parallel driver and the
/// dense-problem POP solve (feasibility, k = 1, dual bound of the full problem).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <stdexcept>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/pop.hpp>
#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

#if POPALLOC_TEST_HAVE_CLP
#include "support/lp_reference.hpp"
#endif

namespace pop = popalloc::pop;

namespace {

pop::partition make(pop::partition_strategy s, std::int64_t n, int k, std::uint64_t seed) {
  switch (s) {
    case pop::partition_strategy::uniform_random:
      return pop::partition_uniform_random(n, k, seed);
    case pop::partition_strategy::round_robin:
      return pop::partition_round_robin(n, k);
    case pop::partition_strategy::two_choices: {
      const auto p = popalloc_test::random_problem(static_cast<int>(n), 3, static_cast<int>(seed));
      return pop::partition_two_choices(p.throughput, k, seed);
    }
    case pop::partition_strategy::shuffled:
      break;
  }
  return pop::partition_shuffled(n, k, seed);
}

const pop::partition_strategy all_strategies[] = {
    pop::partition_strategy::shuffled, pop::partition_strategy::uniform_random,
    pop::partition_strategy::round_robin, pop::partition_strategy::two_choices};

}  // namespace

TEST_CASE("[popalloc] pop partitions assign every client exactly once, deterministically") {
  for (const auto strategy : all_strategies) {
    for (const int k : {1, 2, 3, 7}) {
      for (const std::uint64_t seed : {0u, 1u, 42u}) {
        CAPTURE(pop::to_string(strategy));
        CAPTURE(k);
        CAPTURE(seed);
        const std::int64_t n = 503;
        const auto a = make(strategy, n, k, seed);
        const auto b = make(strategy, n, k, seed);
        CHECK(a.part_of == b.part_of);  // same seed, same partition
        REQUIRE(a.clients() == static_cast<std::size_t>(n));
        CHECK(a.parts == k);
        std::vector<int> seen(static_cast<std::size_t>(n), 0);
        const auto members = a.members();
        REQUIRE(members.size() == static_cast<std::size_t>(k));
        for (std::size_t s = 0; s < members.size(); ++s) {
          CHECK(std::is_sorted(members[s].begin(), members[s].end()));
          for (const auto i : members[s]) {
            ++seen[static_cast<std::size_t>(i)];
            CHECK(a.part_of[static_cast<std::size_t>(i)] == static_cast<std::int32_t>(s));
          }
        }
        CHECK(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
        const auto sizes = a.sizes();
        const auto [lo, hi] = std::minmax_element(sizes.begin(), sizes.end());
        if (strategy == pop::partition_strategy::shuffled ||
            strategy == pop::partition_strategy::round_robin)
          CHECK(*hi - *lo <= 1);
        if (strategy == pop::partition_strategy::two_choices)
          CHECK(*hi <= static_cast<std::int64_t>(std::floor(1.01 * n / k)) + 1);
      }
    }
  }
  // Different seeds give different random partitions (503 clients, k = 3: a collision would be
  // astronomically unlikely).
  CHECK(pop::partition_shuffled(503, 3, 1).part_of != pop::partition_shuffled(503, 3, 2).part_of);
  CHECK(pop::partition_uniform_random(503, 3, 1).part_of !=
        pop::partition_uniform_random(503, 3, 2).part_of);
  // Round-robin is i mod k.
  const auto rr = pop::partition_round_robin(10, 4);
  for (std::size_t i = 0; i < 10; ++i) CHECK(rr.part_of[i] == static_cast<std::int32_t>(i % 4));
  CHECK_THROWS_AS(pop::partition_shuffled(10, 0, 0), popalloc::invalid_options);
}

TEST_CASE("[popalloc] pop two-choices balances feature sums better than chance") {
  // One heavy feature on 5% of the clients: two-choices spreads it evenly.
  const std::int64_t n = 4000;
  const int k = 8;
  Eigen::MatrixXd f = Eigen::MatrixXd::Zero(n, 2);
  for (std::int64_t i = 0; i < n; ++i) {
    f(i, 0) = 1.0;
    f(i, 1) = i % 20 == 0 ? 100.0 : 0.0;
  }
  auto spread = [&](const pop::partition& a) {
    std::vector<double> heavy(static_cast<std::size_t>(k), 0.0);
    for (std::size_t i = 0; i < a.part_of.size(); ++i)
      heavy[static_cast<std::size_t>(a.part_of[i])] += f(static_cast<Eigen::Index>(i), 1);
    const auto [lo, hi] = std::minmax_element(heavy.begin(), heavy.end());
    return *hi - *lo;
  };
  double balanced = 0.0, random = 0.0;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    balanced += spread(pop::partition_two_choices(f, k, seed));
    random += spread(pop::partition_uniform_random(n, k, seed));
  }
  CHECK(balanced < random);
}

TEST_CASE("[popalloc] pop resource splitting never loses capacity") {
  const Eigen::VectorXd capacity = (Eigen::VectorXd(4) << 1.0, 3.3, 0.0, 1e6 / 7.0).finished();
  for (const int k : {1, 2, 3, 7, 16}) {
    const Eigen::MatrixXd shares = pop::split_capacity(capacity, k);
    REQUIRE(shares.cols() == k);
    for (Eigen::Index j = 0; j < capacity.size(); ++j) {
      CHECK(shares.row(j).sum() == doctest::Approx(capacity[j]).epsilon(1e-14));
      CHECK(shares.row(j).minCoeff() == shares.row(j).maxCoeff());
    }
  }
  // The domain pitfall: {k80: 3, p100: 2, v100: 1} with k = 2 must keep the only V100.
  const auto split = pop::split_units({3, 2, 1}, 2);
  CHECK(split.remainder == std::vector<std::int64_t>{1, 0, 1});
  CHECK(split.shares[2][0] + split.shares[2][1] == 1);
  // The extras rotate: the k80 extra and the v100 go to different parts.
  CHECK(split.shares[0] == std::vector<std::int64_t>{2, 1});
  CHECK(split.shares[2] == std::vector<std::int64_t>{0, 1});
  for (const int k : {1, 2, 3, 5, 8, 13}) {
    const std::vector<std::int64_t> units = {0, 1, 7, 32, 36, 1000003};
    const auto s = pop::split_units(units, k);
    std::vector<std::int64_t> extra_per_part(static_cast<std::size_t>(k), 0);
    for (std::size_t j = 0; j < units.size(); ++j) {
      CHECK(std::accumulate(s.shares[j].begin(), s.shares[j].end(), std::int64_t{0}) == units[j]);
      CHECK(s.remainder[j] == units[j] % k);
      for (std::size_t p = 0; p < s.shares[j].size(); ++p) {
        CHECK(s.shares[j][p] >= units[j] / k);
        CHECK(s.shares[j][p] <= units[j] / k + 1);
        extra_per_part[p] += s.shares[j][p] - units[j] / k;
      }
    }
    const auto [lo, hi] = std::minmax_element(extra_per_part.begin(), extra_per_part.end());
    CHECK(*hi - *lo <= 1);  // remainders spread over the parts
  }
}

TEST_CASE("[popalloc] pop heavy-client split and merge round trip") {
  const std::vector<double> sizes = {1.0, 10.0, 0.5, 25.0, 3.0, 100.0, 0.0};
  const int k = 4;
  const auto split = pop::split_heavy_clients(sizes, 3.0, k);
  REQUIRE(split.clients() == sizes.size());
  CHECK(split.pieces_of(0) == 1);
  CHECK(split.pieces_of(1) == 4);  // ceil(10 / 3) = 4
  CHECK(split.pieces_of(2) == 1);
  CHECK(split.pieces_of(3) == 4);  // ceil(25 / 3) = 9, capped at k
  CHECK(split.pieces_of(4) == 1);  // 3.0 is not above the threshold
  CHECK(split.pieces_of(6) == 1);
  const auto pieces = pop::piece_sizes(split, sizes);
  const auto merged = pop::merge_pieces(split, pieces);
  for (std::size_t i = 0; i < sizes.size(); ++i)
    CHECK(merged[i] == doctest::Approx(sizes[i]).epsilon(1e-15));
  for (const std::uint64_t seed : {0u, 5u, 9u}) {
    const auto where = pop::assign_pieces(split, k, seed);
    CHECK(where.part_of == pop::assign_pieces(split, k, seed).part_of);
    for (std::size_t i = 0; i < split.clients(); ++i) {
      std::vector<std::int32_t> parts;
      for (auto q = split.piece_offset[i]; q < split.piece_offset[i + 1]; ++q)
        parts.push_back(where.part_of[static_cast<std::size_t>(q)]);
      std::sort(parts.begin(), parts.end());
      CHECK(std::adjacent_find(parts.begin(), parts.end()) == parts.end());  // distinct parts
    }
  }
  // More pieces than parts wrap around but still cover every part once per round.
  const auto many = pop::split_heavy_clients({10.0}, 1.0, 10);
  const auto wrapped = pop::assign_pieces(many, 3, 0);
  std::vector<int> count(3, 0);
  for (const auto s : wrapped.part_of) ++count[static_cast<std::size_t>(s)];
  CHECK(*std::max_element(count.begin(), count.end()) -
            *std::min_element(count.begin(), count.end()) <=
        1);
  CHECK_THROWS_AS(pop::merge_pieces(split, {1.0}), popalloc::invalid_problem);
}

TEST_CASE("[popalloc] pop generic driver: every part once, parallel, exceptions rethrown") {
  const auto assignment = pop::partition_shuffled(1000, 6, 3);
  const auto out = pop::pop_solve(assignment, [](int part, const std::vector<std::int64_t>& c) {
    return std::make_pair(part, std::accumulate(c.begin(), c.end(), std::int64_t{0}));
  });
  REQUIRE(out.results.size() == 6);
  std::int64_t total = 0;
  for (std::size_t s = 0; s < 6; ++s) {
    CHECK(out.results[s].first == static_cast<int>(s));
    total += out.results[s].second;
  }
  CHECK(total == 999 * 1000 / 2);
  CHECK(out.seconds.size() == 6);
  CHECK(out.seconds_max() <= out.seconds_sum());
  CHECK_THROWS_AS(pop::pop_solve(assignment,
                                 [](int part, const std::vector<std::int64_t>&) {
                                   if (part == 4) throw std::runtime_error("part 4");
                                   return part;
                                 }),
                  std::runtime_error);
  CHECK(pop::lpt_makespan({3.0, 3.0, 2.0, 2.0, 2.0}, 2) == 7.0);
  CHECK(pop::lpt_makespan({1.0, 2.0}, 8) == 2.0);
}

TEST_CASE("[popalloc] pop coalesced allocations are feasible for every strategy, k and seed") {
  popalloc::solver_options solver;
  solver.relative_gap = 1e-4;
  auto check = [&](const auto& utility, const char* name) {
    for (const auto strategy : all_strategies) {
      for (const int k : {2, 3, 5}) {
        for (const std::uint64_t seed : {0u, 1u}) {
          CAPTURE(name);
          CAPTURE(pop::to_string(strategy));
          CAPTURE(k);
          CAPTURE(seed);
          const auto p = popalloc_test::random_problem(240, 4, 10 + static_cast<int>(seed));
          pop::pop_options o;
          o.parts = k;
          o.strategy = strategy;
          o.seed = seed;
          o.solver = solver;
          const auto r = pop::pop_solve(p, utility, o);
          CHECK(popalloc_test::allocation_violation(p, r.result) <= 0.0);
          CHECK(r.result.max_capacity_violation <= 0.0);
          CHECK(r.result.primal_objective ==
                doctest::Approx(popalloc_test::recomputed_objective(p, utility, r.result))
                    .epsilon(1e-12));
          CHECK(r.result.dual_bound >= r.result.primal_objective);
          CHECK(r.result.relative_gap >= 0.0);
          REQUIRE(r.parts.size() == static_cast<std::size_t>(k));
          std::int64_t jobs = 0;
          for (const auto& part : r.parts) jobs += part.jobs;
          CHECK(jobs == p.jobs());
          CHECK(r.assignment.part_of == pop::pop_solve(p, utility, o).assignment.part_of);
          CHECK(r.bound_candidate >= -1);
        }
      }
    }
  };
  check(popalloc::utility::linear{}, "linear");
  check(popalloc::utility::log{}, "log");
  check(popalloc::utility::target_priority{}, "target-priority");
}

TEST_CASE("[popalloc] pop with k = 1 is exactly the full solve") {
  const auto p = popalloc_test::random_problem(500, 5, 77);
  pop::pop_options o;
  o.parts = 1;
  o.solver.relative_gap = 1e-5;
  auto check = [&](const auto& utility) {
    const auto full = popalloc::solve(p, utility, o.solver);
    const auto r = pop::pop_solve(p, utility, o);
    CHECK(r.result.primal_objective == full.primal_objective);  // bit for bit
    CHECK(r.result.dual_bound == full.dual_bound);
    CHECK(r.result.allocation.option == full.allocation.option);
    CHECK(r.result.allocation.fraction == full.allocation.fraction);
    CHECK(r.parts.size() == 1);
  };
  check(popalloc::utility::log{});
  check(popalloc::utility::linear{});
}

TEST_CASE("[popalloc] pop objective is close to the full solve and the bound covers it") {
  // Granular instance: many small jobs, so POP should lose little.
  const auto p = popalloc_test::random_problem(20000, 6, 5);
  popalloc::solver_options solver;
  solver.relative_gap = 1e-5;
  const auto full = popalloc::solve(p, popalloc::utility::log{}, solver);
  for (const int k : {2, 4}) {
    pop::pop_options o;
    o.parts = k;
    o.solver = solver;
    const auto r = pop::pop_solve(p, popalloc::utility::log{}, o);
    CAPTURE(k);
    CHECK(popalloc_test::allocation_violation(p, r.result) <= 0.0);
    // Within 1% of the full solve (relative to the objective's range above idle, as the
    // solver's own gap is; log objectives can be near 0).
    const double scale = std::max(1.0, std::abs(full.primal_objective));
    CHECK(r.result.primal_objective >= full.primal_objective - 0.01 * scale);
    // The bound is a bound of the full problem: above the full solve's feasible objective.
    CHECK(r.result.dual_bound >= full.primal_objective);
    CHECK(r.result.relative_gap < 0.01);
    // The average-only bound is one of the candidates of the full set, so it is never smaller.
    o.bound_at_every_part = false;
    const auto average_only = pop::pop_solve(p, popalloc::utility::log{}, o);
    CHECK(average_only.bound_candidate == -1);
    CHECK(average_only.result.primal_objective == r.result.primal_objective);
    CHECK(average_only.result.dual_bound >= r.result.dual_bound);
  }
}

#if POPALLOC_TEST_HAVE_CLP
TEST_CASE("[popalloc] pop dual bound is at least the exact LP optimum") {
  for (int seed = 0; seed < 4; ++seed) {
    CAPTURE(seed);
    const auto p = popalloc_test::random_problem(150, 1 + seed, 300 + seed);
    auto check = [&](const auto& utility, popalloc_test::lp_utility kind) {
      const Eigen::VectorXd weight = p.weight, target = p.target;
      const auto lp = popalloc_test::solve_lp(
          popalloc_test::make_dense_lp(p.throughput, p.capacity, weight, &target, kind));
      REQUIRE(lp.optimal);
      const double tol = 1e-9 * std::max(1.0, std::abs(lp.objective));
      for (const int k : {2, 4}) {
        pop::pop_options o;
        o.parts = k;
        o.seed = static_cast<std::uint64_t>(seed);
        const auto r = pop::pop_solve(p, utility, o);
        CHECK(r.result.dual_bound >= lp.objective - tol);
        CHECK(r.result.primal_objective <= lp.objective + tol);
      }
    };
    check(popalloc::utility::linear{}, popalloc_test::lp_utility::linear);
    check(popalloc::utility::target_priority{}, popalloc_test::lp_utility::target_priority);
  }
}
#endif
