// SPDX-License-Identifier: Apache-2.0
// Room made on over-used resources by the time worth least there (detail/give_way.hpp): the
// selection of the cheapest offers against a full sort, and hand-computed cuts of kept and placed
// target-priority jobs.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/detail/engine.hpp>
#include <popalloc/detail/give_way.hpp>
#include <popalloc/utility/target_priority.hpp>

namespace {

using popalloc::detail::cut_offer;

TEST_CASE("cheapest_covering: the first k offers are the cheapest that reach the need") {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const std::size_t count : std::vector<std::size_t>{0, 1, 7, 64, 65, 1000, 20000}) {
    std::vector<cut_offer> offers(count);
    double total = 0.0;
    for (auto& o : offers) {
      o.cost = std::floor(unit(rng) * 50.0);  // ties, as at degenerate prices
      o.amount = unit(rng);
      total += o.amount;
    }
    for (const double share : {0.0, 0.01, 0.5, 0.999, 1.5}) {
      std::vector<cut_offer> picked = offers;
      const std::size_t k = popalloc::detail::cheapest_covering(picked, share * total);
      CAPTURE(count);
      CAPTURE(share);
      std::vector<double> costs;
      for (const auto& o : offers) costs.push_back(o.cost);
      std::sort(costs.begin(), costs.end());
      double reached = 0.0, dearest = -1.0;
      for (std::size_t q = 0; q < k; ++q) {
        reached += picked[q].amount;
        dearest = std::max(dearest, picked[q].cost);
      }
      if (share * total >= total) {
        CHECK(k == count);
        continue;
      }
      // Enough, and not more than needed: without the last one picked the need is not reached.
      CHECK(reached >= share * total);
      if (k > 0) CHECK(reached - picked[k - 1].amount < share * total);
      if (k > 0) CHECK(dearest == costs[k - 1]);  // the k cheapest, ties aside
      for (std::size_t q = k; q < count; ++q) CHECK(picked[q].cost >= dearest);
    }
  }
}

/// One resource; jobs 0 and 1 kept with rows in `last`, job 2 placed with `placed_fraction`.
/// Job 0: weight 1, served to its target (a unit of the resource is worth 1 to it); job 1:
/// weight 0.5, half served (worth 0.5); job 2: weight 2, placed at its target (worth 2).
struct one_resource_case {
  popalloc::dense_problem<double> problem;
  popalloc::allocation last;
  std::vector<std::int64_t> origin{0, 1, -1};
  popalloc::detail::carried_rows rows;

  explicit one_resource_case(double capacity) {
    problem.throughput = popalloc::dense_problem<double>::matrix::Ones(3, 1);
    problem.capacity = Eigen::VectorXd::Constant(1, capacity);
    problem.weight.resize(3);
    problem.weight << 1.0, 0.5, 2.0;
    problem.target = Eigen::VectorXd::Ones(3);
    last.job_offset = {0, 1, 2};
    last.option = {0, 0};
    last.fraction = {1.0, 0.5};
    rows.usage = Eigen::VectorXd::Constant(1, 2.5);
    rows.throughput = Eigen::Vector3d(1.0, 0.5, 1.0);
    rows.to_place = {2};
    rows.placed = {{{0, 1.0}}};
  }

  /// give_way on this case's rows, over `room` (the capacity itself where not given).
  bool give_way(bool from_kept, popalloc::detail::given_way& given,
                const Eigen::VectorXd* room = nullptr) {
    popalloc::detail::host_executor host(1);
    const popalloc::detail::problem_storage<popalloc::detail::host_executor,
                                            popalloc::dense_problem<double>>
        storage(host, problem);
    return popalloc::detail::give_way(storage.view, popalloc::utility::target_priority{},
                                      problem.capacity, room ? *room : problem.capacity, last,
                                      origin, from_kept, rows, given);
  }
};

TEST_CASE("give_way: the time worth least gives way first, kept or placed") {
  SUBCASE("half a unit over: the half-served kept job gives all of it") {
    one_resource_case c(2.0);
    popalloc::detail::given_way given;
    REQUIRE(c.give_way(true, given));
    CHECK(c.rows.usage[0] == doctest::Approx(2.0));
    CHECK(given.cut == std::vector<Eigen::Index>{1});
    CHECK(given.kept_objective == doctest::Approx(-0.25));  // f_1(0.5) = 0.5 (0.5 - 1)
    CHECK(given.loss == doctest::Approx(0.25));             // f_1(0.5) - f_1(0)
    CHECK(c.rows.to_place == std::vector<Eigen::Index>{1, 2});
    CHECK(std::abs(c.rows.throughput[1]) <= 1e-15);
    CHECK(c.rows.throughput[2] == 1.0);
    REQUIRE(c.rows.placed.size() == 2);
    CHECK(std::abs(c.rows.placed[0][0].second) <= 1e-15);
    CHECK(c.rows.placed[1][0].second == 1.0);
  }
  SUBCASE("a unit over: then the served kept job gives half, the placed one keeps its time") {
    one_resource_case c(1.5);
    popalloc::detail::given_way given;
    REQUIRE(c.give_way(true, given));
    CHECK(c.rows.usage[0] == doctest::Approx(1.5));
    CHECK(given.cut == std::vector<Eigen::Index>{0, 1});
    CHECK(given.kept_objective == doctest::Approx(-0.25));  // f_0(1) = 0, f_1(0.5) = -0.25
    CHECK(given.loss == doctest::Approx(0.75));  // 0.25 from job 1, f_0(1) - f_0(0.5) = 0.5
    CHECK(c.rows.to_place == std::vector<Eigen::Index>{0, 1, 2});
    CHECK(c.rows.throughput[0] == doctest::Approx(0.5));
    CHECK(c.rows.throughput[2] == 1.0);
  }
  SUBCASE("the placed rows alone: the placed job gives the half unit") {
    one_resource_case c(2.0);
    popalloc::detail::given_way given;
    REQUIRE(c.give_way(false, given));
    CHECK(c.rows.usage[0] == doctest::Approx(2.0));
    CHECK(given.cut == std::vector<Eigen::Index>{2});
    CHECK(given.kept_objective == 0.0);
    CHECK(given.loss == doctest::Approx(1.0));  // f_2(1) - f_2(0.5) = 2 x 0.5
    CHECK(c.rows.to_place == std::vector<Eigen::Index>{2});
    CHECK(c.rows.throughput[2] == doctest::Approx(0.5));
    CHECK(c.rows.throughput[1] == 0.5);
  }
  SUBCASE("kept rows within rounding above the room: the placed job gives all of its time") {
    one_resource_case c(1.5);
    popalloc::detail::given_way given;
    const Eigen::VectorXd room = Eigen::VectorXd::Constant(1, 1.5 * (1.0 - 1e-11));
    REQUIRE(c.give_way(false, given, &room));
    CHECK(c.rows.usage[0] == doctest::Approx(1.5));
    CHECK(c.rows.usage[0] <= 1.5);
    CHECK(std::abs(c.rows.throughput[2]) <= 1e-15);
    CHECK(given.cut == std::vector<Eigen::Index>{2});
  }
  SUBCASE("more over than every job's time: no room can be made") {
    one_resource_case c(1.0);
    c.rows.usage[0] = 3.0;  // beyond what the rows use (2.5)
    c.problem.capacity.setZero();
    popalloc::detail::given_way given;
    CHECK_FALSE(c.give_way(true, given));
  }
  SUBCASE("within the room: nothing changes") {
    one_resource_case c(3.0);
    popalloc::detail::given_way given;
    REQUIRE(c.give_way(true, given));
    CHECK(given.cut.empty());
    CHECK(c.rows.to_place == std::vector<Eigen::Index>{2});
    CHECK(c.rows.usage[0] == 2.5);
  }
}

}  // namespace
