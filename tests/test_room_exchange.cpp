// SPDX-License-Identifier: Apache-2.0
// A re-plan at g(0): placed jobs short of their targets take room that kept jobs make by moving
// to other resources without losing throughput (detail/room_exchange.hpp), and the carried answer
// through incremental_solver.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/detail/engine.hpp>
#include <popalloc/detail/room_exchange.hpp>
#include <popalloc/incremental.hpp>
#include <popalloc/utility/target_priority.hpp>

#include "support/instances.hpp"

namespace {

using popalloc::detail::placed_row;
using target_priority = popalloc::utility::target_priority;
using popalloc_test::test_backend;

/// The carried rows of `problem` after the placed jobs took their free time (fill_free_time),
/// the kept ones holding their rows of `last` (origin[i]: the row in `last`, -1 when placed).
struct carried_case {
  popalloc::dense_problem<double> problem;
  popalloc::solve_result last;
  std::vector<std::int64_t> origin;
  popalloc::detail::answer_buffers buffers;
  popalloc::detail::carried_rows rows;

  double exchange() {
    popalloc::detail::host_executor host(1);
    const popalloc::detail::problem_storage<popalloc::detail::host_executor,
                                            popalloc::dense_problem<double>>
        storage(host, problem);
    const Eigen::Index m = problem.resources();
    Eigen::VectorXd kept_usage = Eigen::VectorXd::Zero(m);
    for (std::size_t i = 0; i < origin.size(); ++i) {
      if (origin[i] < 0) continue;
      const auto row = static_cast<std::size_t>(origin[i]);
      for (auto k = last.allocation.job_offset[row]; k < last.allocation.job_offset[row + 1]; ++k)
        kept_usage[last.allocation.option[static_cast<std::size_t>(k)]] +=
            last.allocation.fraction[static_cast<std::size_t>(k)];
    }
    rows = popalloc::detail::gather_kept_rows(kept_usage, last, origin, 1, buffers);
    for (std::size_t q = 0; q < rows.to_place.size(); ++q)
      popalloc::detail::fill_free_time(storage.view, target_priority{}, q, 1.0, problem.capacity,
                                       rows);
    return popalloc::detail::exchange_room(storage.view, target_priority{}, problem.capacity,
                                           last.allocation, origin, 1, rows);
  }

  const placed_row& row_of(Eigen::Index i) const {
    const auto at = std::lower_bound(rows.to_place.begin(), rows.to_place.end(), i);
    REQUIRE((at != rows.to_place.end() && *at == i));
    return rows.placed[static_cast<std::size_t>(at - rows.to_place.begin())];
  }
};

/// A last allocation of one row per job: `rows[k]` of job k.
popalloc::solve_result last_answer(const std::vector<placed_row>& rows,
                                   const std::vector<double>& throughput) {
  popalloc::solve_result r;  // its allocation starts with job_offset {0}
  for (const placed_row& row : rows) {
    for (const auto& [j, x] : row) {
      r.allocation.option.push_back(j);
      r.allocation.fraction.push_back(x);
    }
    r.allocation.job_offset.push_back(static_cast<std::int64_t>(r.allocation.option.size()));
  }
  r.throughput = Eigen::Map<const Eigen::VectorXd>(throughput.data(),
                                                   static_cast<Eigen::Index>(throughput.size()));
  return r;
}

TEST_CASE(
    "room exchange: a kept job moves to the slow resource for an arrival that needs the "
    "fast one (hand-computed)") {
  // Resource 0 (fast for the arrival) holds 0.5 units, all the kept job's; resource 1 has 10.
  // Kept job 0 runs at 1 on both and needs 0.5 (its target); arrival 1 runs at 1 on resource 0
  // and 0.1 on resource 1, and needs 0.5. Placed alone on resource 1 it reaches 0.1. Moving w
  // of its time to resource 0 gains 0.9 w, so w = 0.4 / 0.9, which the kept job frees by moving
  // the same time to resource 1 at the same speed.
  carried_case c;
  c.problem.throughput.resize(2, 2);
  c.problem.throughput << 1.0, 1.0, 1.0, 0.1;
  c.problem.weight = Eigen::VectorXd::Ones(2);
  c.problem.target = Eigen::VectorXd::Constant(2, 0.5);
  c.problem.capacity = Eigen::Vector2d(0.5, 10.0);
  c.last = last_answer({{{0, 0.5}}}, {0.5});
  c.origin = {0, -1};
  const double moved_objective = c.exchange();
  CHECK(moved_objective == doctest::Approx(0.0));  // the kept job met its target
  REQUIRE(c.rows.to_place == std::vector<Eigen::Index>{0, 1});
  const double w = 0.4 / 0.9;
  const placed_row& arrival = c.row_of(1);
  REQUIRE(arrival.size() == 2);
  CHECK(arrival[0].first == 0);
  CHECK(arrival[0].second == doctest::Approx(w).epsilon(1e-12));
  CHECK(arrival[1].second == doctest::Approx(1.0 - w).epsilon(1e-12));
  CHECK(c.rows.throughput[1] == doctest::Approx(0.5).epsilon(1e-12));
  const placed_row& kept = c.row_of(0);
  REQUIRE(kept.size() == 2);
  CHECK(kept[0].second == doctest::Approx(0.5 - w).epsilon(1e-12));
  CHECK(kept[1].second == doctest::Approx(w).epsilon(1e-12));
  CHECK(c.rows.throughput[0] == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(c.rows.usage[0] <= 0.5);
  CHECK(c.rows.usage[0] == doctest::Approx(0.5).epsilon(1e-12));
  CHECK(c.rows.usage[1] == doctest::Approx(1.0 - w + w).epsilon(1e-12));
}

TEST_CASE("room exchange: a kept job with no time to spare, or nowhere to go, stays") {
  // The kept job runs at 1 on resource 0 and 0.5 on resource 1 and uses all of its time: moving
  // any of it would cost throughput. With resource 1 closed to it instead, it has nowhere to go.
  for (const double slow_speed : {0.5, 0.0}) {
    CAPTURE(slow_speed);
    carried_case c;
    c.problem.throughput.resize(2, 2);
    c.problem.throughput << 1.0, slow_speed, 1.0, 0.1;
    c.problem.weight = Eigen::VectorXd::Ones(2);
    c.problem.target = Eigen::Vector2d(1.0, 0.5);
    c.problem.capacity = Eigen::Vector2d(1.0, 10.0);
    c.last = last_answer({{{0, 1.0}}}, {1.0});
    c.origin = {0, -1};
    CHECK(c.exchange() == 0.0);
    CHECK(c.rows.to_place == std::vector<Eigen::Index>{1});
    CHECK(c.rows.throughput[1] == doctest::Approx(0.1));
    CHECK(c.rows.usage[0] == 1.0);
  }
}

TEST_CASE("room exchange: every move keeps the kept jobs' throughputs, the time and the room") {
  // Kept jobs fill the resources fast for everyone with time to spare; arrivals are fast there.
  std::mt19937_64 rng(11);
  constexpr Eigen::Index n = 3000, m = 5;
  for (const int placed_every : {10, 50, 100}) {
    CAPTURE(placed_every);
    carried_case c;
    c.problem.throughput.resize(n, m);
    c.problem.weight.resize(n);
    c.problem.target.resize(n);
    std::vector<placed_row> last_rows;
    std::vector<double> last_throughput;
    Eigen::VectorXd used = Eigen::VectorXd::Zero(m);
    for (Eigen::Index i = 0; i < n; ++i) {
      for (Eigen::Index j = 0; j < m; ++j)
        c.problem.throughput(i, j) = popalloc_test::uniform(rng, 0.2, 1.0) * (j < 2 ? 3.0 : 1.0);
      c.problem.weight[i] = popalloc_test::uniform(rng, 1.0, 2.0);
      c.problem.target[i] = 0.4 * std::min(c.problem.throughput(i, 0), c.problem.throughput(i, 1));
      if (i % placed_every == 0) {
        c.origin.push_back(-1);
        continue;
      }
      const auto j = static_cast<std::int32_t>(i % 2);
      const double x = c.problem.target[i] / c.problem.throughput(i, j);
      last_rows.push_back({{j, x}});
      last_throughput.push_back(x * c.problem.throughput(i, j));
      used[j] += x;
      c.origin.push_back(static_cast<std::int64_t>(last_rows.size()) - 1);
    }
    c.problem.capacity = used;
    c.problem.capacity.tail(m - 2).setConstant(static_cast<double>(n));
    c.last = last_answer(last_rows, last_throughput);
    const double moved_objective = c.exchange();
    CHECK(moved_objective == doctest::Approx(0.0).epsilon(1e-12));

    double shortfall = 0.0;
    Eigen::VectorXd usage = Eigen::VectorXd::Zero(m);
    for (Eigen::Index i = 0; i < n; ++i) {
      const auto at = std::lower_bound(c.rows.to_place.begin(), c.rows.to_place.end(), i);
      placed_row row;
      if (at != c.rows.to_place.end() && *at == i) {
        row = c.rows.placed[static_cast<std::size_t>(at - c.rows.to_place.begin())];
      } else {
        row = last_rows[static_cast<std::size_t>(c.origin[static_cast<std::size_t>(i)])];
      }
      double t = 0.0, busy = 0.0;
      for (const auto& [j, x] : row) {
        CHECK(x > 0.0);
        t += x * c.problem.throughput(i, j);
        busy += x;
        usage[j] += x;
      }
      CHECK(busy <= 1.0);
      CHECK(c.rows.throughput[i] == doctest::Approx(t).epsilon(1e-12));
      if (c.origin[static_cast<std::size_t>(i)] >= 0) {
        CHECK(t == doctest::Approx(c.problem.target[i]).epsilon(1e-12));  // kept: unchanged
      } else {
        shortfall += std::max(0.0, c.problem.target[i] - t);
      }
    }
    for (Eigen::Index j = 0; j < m; ++j) {
      CHECK(usage[j] <= c.problem.capacity[j] * (1.0 + 1e-12));
      CHECK(usage[j] == doctest::Approx(c.rows.usage[j]).epsilon(1e-9));
    }
    // The kept jobs have time to spare (each uses 0.4 of it), and room is left on the slow
    // resources: every arrival meets its target.
    CHECK(shortfall == doctest::Approx(0.0).scale(1.0).epsilon(1e-9));
    // An arrival slower than its target on every slow resource needed room that kept jobs made.
    bool needed_room = false;
    for (Eigen::Index i = 0; i < n; i += placed_every)
      needed_room =
          needed_room || c.problem.throughput.row(i).tail(m - 2).maxCoeff() < c.problem.target[i];
    CHECK(needed_room);
    CHECK(c.rows.to_place.size() > static_cast<std::size_t>(n / placed_every));
  }
}

TEST_CASE(
    "incremental_solver: at g(0), arrivals short of their targets re-plan without a dual "
    "evaluation") {
  // Two fast resources that the first answer fills, three slow ones with room; every target is
  // reachable, but most jobs need some time on a fast resource. Arrivals and re-profiled jobs
  // are placed where the kept jobs left no room: they reach their targets only where kept jobs
  // move to the slow resources.
  using solver = popalloc::incremental_solver<target_priority, double, popalloc_test::test_backend>;
  constexpr int m = 5, n = 2000;
  std::mt19937_64 rng(3);
  popalloc::solver_options options;
  options.relative_gap = 1e-4;
  Eigen::VectorXd capacity(m);
  capacity << 0.1 * n, 0.1 * n, 0.4 * n, 0.4 * n, 0.4 * n;
  solver inc(capacity, options);
  const auto draw = [&] {
    Eigen::RowVectorXd a(m);
    for (int j = 0; j < m; ++j) a[j] = popalloc_test::uniform(rng, 0.5, 1.0) * (j < 2 ? 3.0 : 1.0);
    return a;
  };
  std::vector<solver::job_id> ids;
  const auto add = [&] {
    const Eigen::RowVectorXd a = draw();
    ids.push_back(inc.add_job(a, popalloc_test::uniform(rng, 1.0, 2.0), 0.38 * a.maxCoeff()));
  };
  for (int k = 0; k < n; ++k) add();
  const popalloc::solve_result first = inc.solve();
  REQUIRE(first.status == popalloc::solve_status::converged);
  REQUIRE(first.dual_bound >= first.trivial_bound);  // the bound is g(0)

  int carried = 0;
  for (int round = 0; round < 6; ++round) {
    CAPTURE(round);
    for (int k = 0; k < 10; ++k) {
      const std::size_t pick = static_cast<std::size_t>(rng() % ids.size());
      inc.remove_job(ids[pick]);
      ids.erase(ids.begin() + static_cast<std::ptrdiff_t>(pick));
    }
    for (int k = 0; k < 10; ++k) add();
    for (int k = 0; k < 10; ++k) inc.update_throughput(ids[rng() % ids.size()], draw());
    const popalloc::solve_result& warm = inc.solve();
    REQUIRE(warm.status == popalloc::solve_status::converged);
    if (warm.iterations == 0) ++carried;
    const auto& p = inc.problem();
    CHECK(warm.relative_gap <= options.relative_gap);
    CHECK(popalloc_test::allocation_violation(p, warm) <= 1e-9);
    CHECK(popalloc_test::recomputed_objective(p, target_priority{}, warm) ==
          doctest::Approx(warm.primal_objective).epsilon(1e-12));
    // The bound the carried answer claims is g(0) of the changed problem, summed afresh.
    double unlimited = 0.0;
    for (Eigen::Index i = 0; i < p.jobs(); ++i)
      unlimited += target_priority{}.value(p.throughput.row(i).maxCoeff(),
                                           popalloc::detail::parameters_of(p, i));
    if (warm.iterations == 0) CHECK(warm.dual_bound == doctest::Approx(unlimited).scale(1.0));
    const popalloc::solve_result cold = inc.solve_cold();
    REQUIRE(cold.status == popalloc::solve_status::converged);
    CHECK(warm.primal_objective <= cold.dual_bound + 1e-9);
    CHECK(cold.primal_objective <= warm.dual_bound + 1e-9);
  }
  CHECK(carried == 6);
}

}  // namespace
