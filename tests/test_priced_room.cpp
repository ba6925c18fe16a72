// SPDX-License-Identifier: Apache-2.0
// Room left on priced resources goes to the kept jobs that value it most
// (detail/priced_room.hpp).
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/detail/engine.hpp>
#include <popalloc/detail/priced_room.hpp>
#include <popalloc/utility/target_priority.hpp>

#include "support/instances.hpp"

namespace {

using popalloc::detail::placed_row;
using target_priority = popalloc::utility::target_priority;

/// Kept rows of `last` (every job kept, in order) and the room given at `prices`.
struct room_case {
  popalloc::dense_problem<double> problem;
  popalloc::allocation last;
  std::vector<double> throughput;
  popalloc::detail::carried_rows rows;
  popalloc::detail::given_way given;

  void give(const Eigen::VectorXd& prices, const Eigen::VectorXd& room, int threads = 1) {
    const Eigen::Index n = problem.jobs(), m = problem.resources();
    std::vector<std::int64_t> origin(static_cast<std::size_t>(n));
    rows.usage = Eigen::VectorXd::Zero(m);
    rows.throughput.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      origin[static_cast<std::size_t>(i)] = i;
      rows.throughput[i] = throughput[static_cast<std::size_t>(i)];
      for (auto k = last.job_offset[static_cast<std::size_t>(i)];
           k < last.job_offset[static_cast<std::size_t>(i) + 1]; ++k)
        rows.usage[last.option[static_cast<std::size_t>(k)]] +=
            last.fraction[static_cast<std::size_t>(k)];
    }
    popalloc::detail::host_executor host(1);
    const popalloc::detail::problem_storage<popalloc::detail::host_executor,
                                            popalloc::dense_problem<double>>
        storage(host, problem);
    popalloc::detail::give_priced_room(storage.view, target_priority{}, prices, room, last, origin,
                                       threads, rows, given);
  }

  void add_row(const placed_row& row) {
    double t = 0.0;
    const auto i = static_cast<Eigen::Index>(last.jobs());
    for (const auto& [j, x] : row) {
      last.option.push_back(j);
      last.fraction.push_back(x);
      t += x * problem.throughput(i, j);
    }
    last.job_offset.push_back(static_cast<std::int64_t>(last.option.size()));
    throughput.push_back(t);
  }
};

/// The room on each priced resource went to the jobs that value it most: no job left out
/// offered (on the open resource it values most, at least 1/takers_per_resource of the room)
/// more per unit than the least-valued job that took some. Target priority with unit amounts:
/// a job below its target values a unit of j at weight * A_ij.
void check_valued_most(const room_case& c, const std::vector<double>& before,
                       const Eigen::VectorXd& used, const Eigen::VectorXd& prices) {
  const Eigen::Index n = c.problem.jobs(), m = c.problem.resources();
  const Eigen::VectorXd left = (c.problem.capacity - used).cwiseMax(0.0);
  Eigen::VectorXd least_taken = Eigen::VectorXd::Constant(m, HUGE_VAL);
  std::vector<bool> took(static_cast<std::size_t>(n), false);
  for (std::size_t q = 0; q < c.rows.to_place.size(); ++q) {
    const Eigen::Index i = c.rows.to_place[q];
    took[static_cast<std::size_t>(i)] = true;
    const std::int32_t had = c.last.option[static_cast<std::size_t>(i)];
    const double had_x = c.last.fraction[static_cast<std::size_t>(i)];
    for (const auto& [j, x] : c.rows.placed[q])
      if (j != had || x > had_x)
        least_taken[j] = std::min(least_taken[j], c.problem.weight[i] * c.problem.throughput(i, j));
  }
  std::size_t offered = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double t = before[static_cast<std::size_t>(i)];
    const double free_time = 1.0 - c.last.fraction[static_cast<std::size_t>(i)];
    if (took[static_cast<std::size_t>(i)] || !(t < c.problem.target[i]) || !(free_time > 0.0))
      continue;
    Eigen::Index best = -1;
    for (Eigen::Index j = 0; j < m; ++j)
      if (prices[j] > 0.0 &&
          (best < 0 || c.problem.throughput(i, j) > c.problem.throughput(i, best)))
        best = j;
    const double speed = c.problem.throughput(i, best);
    const double amount = std::min(free_time, (c.problem.target[i] - t) / speed);
    if (amount < left[best] / static_cast<double>(popalloc::detail::takers_per_resource)) continue;
    ++offered;
    CHECK(c.problem.weight[i] * speed <= least_taken[best] * (1.0 + 1e-12));
  }
  // More offers than the three chunks could keep on the three priced resources unpruned.
  CHECK(offered > 3 * 3 * 2 * popalloc::detail::takers_per_resource);
}

TEST_CASE("give_priced_room: the job that values the room most takes it (hand-computed)") {
  // Resource 0 (price 1) has 0.3 units left; resource 1 is free. Both jobs run at 1 everywhere
  // and have time to spare: job 0 (weight 1) values a unit of resource 0 at 1, job 1 (weight 2)
  // at 2, so job 1 takes the 0.3 units and job 0 none.
  room_case c;
  c.problem.throughput = Eigen::MatrixXd::Ones(2, 2);
  c.problem.weight = Eigen::Vector2d(1.0, 2.0);
  c.problem.target = Eigen::Vector2d(2.0, 1.0);
  c.problem.capacity = Eigen::Vector2d(1.0, 10.0);
  c.add_row({{0, 0.5}});
  c.add_row({{0, 0.2}});
  c.give(Eigen::Vector2d(1.0, 0.0), c.problem.capacity);
  REQUIRE(c.rows.to_place == std::vector<Eigen::Index>{1});
  REQUIRE(c.rows.placed[0].size() == 1);
  CHECK(c.rows.placed[0][0].first == 0);
  CHECK(c.rows.placed[0][0].second == doctest::Approx(0.5));
  CHECK(c.rows.throughput[1] == doctest::Approx(0.5));
  CHECK(c.rows.throughput[0] == 0.5);
  CHECK(c.rows.usage[0] == doctest::Approx(1.0));
  CHECK(c.given.kept_objective == doctest::Approx(2.0 * (0.2 - 1.0)));

  // Priced at 0, the room stays where it is.
  room_case free_room;
  free_room.problem = c.problem;
  free_room.add_row({{0, 0.5}});
  free_room.add_row({{0, 0.2}});
  free_room.give(Eigen::Vector2d(0.0, 0.0), free_room.problem.capacity);
  CHECK(free_room.rows.to_place.empty());
  CHECK(free_room.rows.usage[0] == doctest::Approx(0.7));
}

TEST_CASE("give_priced_room: the jobs only gain, within their time, their goals and the room") {
  std::mt19937_64 rng(17);
  constexpr Eigen::Index n = 40000, m = 4;  // three row chunks
  for (const int threads : {1, 2, 3}) {
    CAPTURE(threads);
    room_case c;
    c.problem.throughput.resize(n, m);
    c.problem.weight.resize(n);
    c.problem.target.resize(n);
    for (Eigen::Index i = 0; i < n; ++i) {
      for (Eigen::Index j = 0; j < m; ++j)
        c.problem.throughput(i, j) = popalloc_test::uniform(rng, 0.1, 1.0);
      c.problem.weight[i] = popalloc_test::uniform(rng, 0.5, 2.0);
      c.problem.target[i] = popalloc_test::uniform(rng, 0.1, 0.8);
      const auto j = static_cast<std::int32_t>(i % m);
      c.add_row({{j, popalloc_test::uniform(rng, 0.0, 0.9)}});
    }
    const std::vector<double> before = c.throughput;
    Eigen::VectorXd used = Eigen::VectorXd::Zero(m);
    for (std::size_t k = 0; k < c.last.option.size(); ++k)
      used[c.last.option[k]] += c.last.fraction[k];
    c.problem.capacity = used * 1.05;
    const Eigen::VectorXd prices(Eigen::Vector4d(1.0, 0.5, 0.0, 2.0));
    c.give(prices, c.problem.capacity, threads);

    CHECK(!c.rows.to_place.empty());
    CHECK(c.rows.to_place.size() <= 3 * popalloc::detail::takers_per_resource);
    CHECK(std::is_sorted(c.rows.to_place.begin(), c.rows.to_place.end()));
    Eigen::VectorXd usage = used;
    double kept_objective = 0.0;
    for (std::size_t q = 0; q < c.rows.to_place.size(); ++q) {
      const Eigen::Index i = c.rows.to_place[q];
      const popalloc::job_parameters job = popalloc::detail::parameters_of(c.problem, i);
      kept_objective += target_priority{}.value(before[static_cast<std::size_t>(i)], job);
      double t = 0.0, busy = 0.0;
      for (const auto& [j, x] : c.rows.placed[q]) {
        t += x * c.problem.throughput(i, j);
        busy += x;
      }
      const double old_x = c.last.fraction[static_cast<std::size_t>(i)];
      usage[c.last.option[static_cast<std::size_t>(i)]] -= old_x;
      for (const auto& [j, x] : c.rows.placed[q]) usage[j] += x;
      CHECK(busy <= 1.0 + 1e-12);
      CHECK(t == doctest::Approx(c.rows.throughput[i]).epsilon(1e-12));
      CHECK(t > before[static_cast<std::size_t>(i)]);
      CHECK(t <= c.problem.target[i] * (1.0 + 1e-12));  // nothing past the goal
    }
    CHECK(kept_objective == doctest::Approx(c.given.kept_objective).epsilon(1e-12));
    for (Eigen::Index j = 0; j < m; ++j) {
      CHECK(usage[j] == doctest::Approx(c.rows.usage[j]).epsilon(1e-12));
      CHECK(usage[j] <= c.problem.capacity[j] * (1.0 + 1e-12));
      if (prices[j] == 0.0) CHECK(usage[j] == doctest::Approx(used[j]).epsilon(1e-12));
    }
    // The priced resources are full: the offers (each job's time to spare) far exceed the room.
    for (const Eigen::Index j : {0, 1, 3})
      CHECK(c.rows.usage[j] == doctest::Approx(c.problem.capacity[j]).epsilon(1e-9));
    check_valued_most(c, before, used, prices);
  }
}

}  // namespace
