// SPDX-License-Identifier: Apache-2.0
// Room made on over-used resources by the time worth least there (detail/give_way.hpp): the
// selection of the cheapest offers against a full sort, and hand-computed cuts of kept and placed
// target-priority jobs. The carried answer's passes over row chunks (detail/carried_allocation.hpp,
// detail/priced_carry.hpp) against row-by-row references on any number of threads.
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/detail/engine.hpp>
#include <popalloc/detail/give_way.hpp>
#include <popalloc/detail/priced_carry.hpp>
#include <popalloc/utility/linear.hpp>
#include <popalloc/utility/log.hpp>
#include <popalloc/utility/target_priority.hpp>

#include "support/instances.hpp"

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

namespace {

/// A carried allocation over `n` rows spanning several row_chunks: the last allocation had
/// n + 50 rows of 1-3 entries over 4 resources; 50 rows were removed (the last row moved into
/// each hole) and every 97th row changed (to be placed, with rows of its own).
struct many_rows {
  popalloc::allocation last;
  std::vector<std::int64_t> origin;
  popalloc::detail::carried_rows rows;

  explicit many_rows(std::size_t n) {
    std::mt19937_64 rng(17);
    const std::size_t n_last = n + 50;
    last.job_offset.assign(1, 0);
    for (std::size_t i = 0; i < n_last; ++i) {
      const int entries = 1 + static_cast<int>(rng() % 3);
      for (int e = 0; e < entries; ++e) {
        last.option.push_back(e);
        last.fraction.push_back(static_cast<double>(rng() % 1000) / 4000.0);
      }
      last.job_offset.push_back(static_cast<std::int64_t>(last.option.size()));
    }
    std::vector<std::int64_t> at(n_last);
    for (std::size_t i = 0; i < n_last; ++i) at[i] = static_cast<std::int64_t>(i);
    for (int k = 0; k < 50; ++k) {  // removals: the last row moves into the hole
      const std::size_t hole = rng() % at.size();
      at[hole] = at.back();
      at.pop_back();
    }
    origin = at;
    for (std::size_t i = 0; i < n; i += 97) {
      origin[i] = -1;
      rows.to_place.push_back(static_cast<Eigen::Index>(i));
      rows.placed.push_back({{1, 0.25}, {3, 0.5}});
    }
  }

  /// The carried allocation row by row.
  popalloc::allocation reference() const {
    popalloc::allocation a;
    std::size_t q = 0;
    for (std::size_t i = 0; i < origin.size(); ++i) {
      if (q < rows.to_place.size() && rows.to_place[q] == static_cast<Eigen::Index>(i)) {
        for (const auto& [j, x] : rows.placed[q]) {
          a.option.push_back(j);
          a.fraction.push_back(x);
        }
        ++q;
      } else {
        const auto from = static_cast<std::size_t>(origin[i]);
        for (auto k = last.job_offset[from]; k < last.job_offset[from + 1]; ++k) {
          a.option.push_back(last.option[static_cast<std::size_t>(k)]);
          a.fraction.push_back(last.fraction[static_cast<std::size_t>(k)]);
        }
      }
      a.job_offset.push_back(static_cast<std::int64_t>(a.option.size()));
    }
    return a;
  }
};

template <class Array>
bool same_array(const Array& a, const Array& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace

TEST_CASE("assemble_rows: the carried allocation over many chunks, on any number of threads") {
  for (const std::size_t n : {std::size_t{1}, std::size_t{1000}, std::size_t{70001}}) {
    CAPTURE(n);
    const many_rows c(n);
    const popalloc::allocation expected = c.reference();
    for (const int threads : {1, 2, 3}) {
      CAPTURE(threads);
      popalloc::allocation a;
      a.option.resize(10);  // a buffer of another answer: replaced
      popalloc::detail::assemble_rows(c.rows, c.last, c.origin, a, threads);
      CHECK(same_array(a.job_offset, expected.job_offset));
      CHECK(same_array(a.option, expected.option));
      CHECK(same_array(a.fraction, expected.fraction));
    }
  }
}

TEST_CASE("answer_buffers::map_like: an answer's sizes, zeroed, and the next assembly in them") {
  const many_rows c(70001);
  const popalloc::allocation expected = c.reference();
  for (const std::size_t other_jobs : {std::size_t{1000}, std::size_t{140001}}) {
    CAPTURE(other_jobs);
    popalloc::solve_result other;
    other.allocation = many_rows(other_jobs).reference();
    other.throughput = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(other_jobs), 2.0);
    for (const int threads : {1, 2, 3}) {
      CAPTURE(threads);
      popalloc::detail::answer_buffers buffers;
      buffers.map_like(other, threads);
      CHECK(buffers.rows.job_offset.size() == other.allocation.job_offset.size());
      CHECK(buffers.rows.option.size() == other.allocation.option.size());
      CHECK(buffers.rows.fraction.size() == other.allocation.fraction.size());
      CHECK(buffers.throughput.size() == other.throughput.size());
      CHECK(std::all_of(buffers.rows.fraction.begin(), buffers.rows.fraction.end(),
                        [](double x) { return x == 0.0; }));
      CHECK(buffers.throughput.isZero(0.0));
      popalloc::detail::assemble_rows(c.rows, c.last, c.origin, buffers.rows, threads);
      CHECK(same_array(buffers.rows.job_offset, expected.job_offset));
      CHECK(same_array(buffers.rows.option, expected.option));
      CHECK(same_array(buffers.rows.fraction, expected.fraction));
    }
  }
}

TEST_CASE("add_kept_offers: every kept row's cheap time, in job order, on any number of threads") {
  // 50,000 jobs on one resource (several row_chunks), kept at their targets with weights from
  // 1 to 2; every 7th job is placed and offers nothing here. Offers cost the weight (a unit of
  // the resource is worth w to a served target-priority job) and are taken below 1.5.
  constexpr Eigen::Index n = 50000;
  popalloc::dense_problem<double> problem;
  problem.throughput = popalloc::dense_problem<double>::matrix::Ones(n, 1);
  problem.capacity = Eigen::VectorXd::Constant(1, 1000.0);
  problem.weight.resize(n);
  problem.target = Eigen::VectorXd::Ones(n);
  popalloc::allocation last;
  std::vector<std::int64_t> origin(static_cast<std::size_t>(n));
  popalloc::detail::carried_rows rows;
  rows.throughput = Eigen::VectorXd::Ones(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    problem.weight[i] = 1.0 + static_cast<double>((i * 7919) % 1000) / 1000.0;
    origin[static_cast<std::size_t>(i)] = i;
    last.option.push_back(0);
    last.fraction.push_back(1.0);
    last.job_offset.push_back(static_cast<std::int64_t>(last.option.size()));
    if (i % 7 == 0) {
      rows.to_place.push_back(i);
      rows.placed.push_back({{0, 1.0}});
    }
  }
  popalloc::detail::host_executor host(1);
  const popalloc::detail::problem_storage<popalloc::detail::host_executor,
                                          popalloc::dense_problem<double>>
      storage(host, problem);
  const std::vector<unsigned char> over{1};
  const Eigen::VectorXd below = Eigen::VectorXd::Constant(1, 1.5);
  std::vector<Eigen::Index> expected;
  for (Eigen::Index i = 0; i < n; ++i)
    if (i % 7 != 0 && problem.weight[i] < 1.5) expected.push_back(i);
  for (const int threads : {1, 2, 3}) {
    CAPTURE(threads);
    std::vector<std::vector<cut_offer>> offers(1);
    popalloc::detail::add_kept_offers(storage.view, popalloc::utility::target_priority{}, over,
                                      below, last, origin, rows, threads, offers);
    REQUIRE(offers[0].size() == expected.size());
    bool in_order = true, priced = true;
    for (std::size_t k = 0; k < expected.size(); ++k) {
      const cut_offer& o = offers[0][k];
      in_order = in_order && o.job == expected[k] && o.placed_row == -1 && o.amount == 1.0;
      priced = priced && o.cost == doctest::Approx(problem.weight[o.job]);
    }
    CHECK(in_order);
    CHECK(priced);
  }
}

TEST_CASE("follow_row_map: each row's entry follows its job through removals and changes") {
  // Each job carries the map entry it should have: its row when the map was made, -1 once it
  // arrived or changed. The solver's moves: a removal moves the last row into the hole.
  std::mt19937_64 rng(17);
  for (const int threads : {1, 2, 3}) {
    CAPTURE(threads);
    std::vector<std::int64_t> tag(40000), map(tag.size());
    for (std::size_t i = 0; i < tag.size(); ++i) tag[i] = map[i] = static_cast<std::int64_t>(i);
    for (int round = 0; round < 6; ++round) {
      CAPTURE(round);
      std::vector<std::int64_t> origin(tag.size());
      for (std::size_t i = 0; i < origin.size(); ++i) origin[i] = static_cast<std::int64_t>(i);
      const auto pick = [&] { return static_cast<std::size_t>(rng() % origin.size()); };
      const int changes = round == 5 ? 30000 : 50 * (round + 1);  // the last: most rows
      for (int k = 0; k < changes; ++k) {
        switch (k % 3) {
          case 0: {  // removal
            const std::size_t i = pick();
            origin[i] = origin.back();
            tag[i] = tag.back();
            origin.pop_back();
            tag.pop_back();
            break;
          }
          case 1:  // arrival
            origin.push_back(-1);
            tag.push_back(-1);
            break;
          default: {  // changed data
            const std::size_t i = pick();
            origin[i] = -1;
            tag[i] = -1;
          }
        }
      }
      if (round == 2)  // arrivals past the map's end
        for (int k = 0; k < 20000; ++k) origin.push_back(-1), tag.push_back(-1);
      popalloc::detail::follow_row_map(map, origin, threads);
      REQUIRE(map.size() == tag.size());
      CHECK(map == tag);
    }
  }
}

TEST_CASE(
    "carry_gap_references: the set-up pass's sums, over row chunks on any number of threads") {
  for (const int n : {1, 1000, 70001}) {
    CAPTURE(n);
    popalloc::dense_problem<double> p = popalloc_test::random_problem(n, 4, 3);
    const auto reference = [&](const auto& utility) {
      return popalloc::detail::gap_references_of(p, utility);
    };
    const popalloc::detail::gap_references target = reference(popalloc::utility::target_priority{});
    REQUIRE(target.idle < 0.0);
    p.capacity[1] = 0.0;  // a closed resource: log's elasticity is summed, not the weights
    const popalloc::detail::gap_references log = reference(popalloc::utility::log{});
    REQUIRE(std::isinf(log.idle));
    const double serial_idle =
        popalloc::detail::carry_gap_references(p, popalloc::utility::target_priority{}, 1).idle;
    for (const int threads : {1, 2, 3}) {
      CAPTURE(threads);
      const auto carried = [&](const auto& utility) {
        return popalloc::detail::carry_gap_references(p, utility, threads);
      };
      const auto tp = carried(popalloc::utility::target_priority{});
      CHECK(tp.idle == doctest::Approx(target.idle).epsilon(1e-12));
      CHECK(tp.elasticity == 0.0);
      const auto lg = carried(popalloc::utility::log{});
      CHECK(std::isinf(lg.idle));
      CHECK(lg.elasticity == doctest::Approx(log.elasticity).epsilon(1e-12));
      const auto lin = carried(popalloc::utility::linear{});
      CHECK(lin.idle == reference(popalloc::utility::linear{}).idle);
      CHECK(lin.elasticity == 0.0);
      // The same sums whatever the thread count: the chunks are joined in order.
      CHECK(tp.idle == serial_idle);
    }
  }
}
