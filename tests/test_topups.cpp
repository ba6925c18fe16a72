// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The repair's top-ups (detail/passes.hpp, choose_topup): jobs that the scaling of an
/// over-used resource took throughput from win it back on resources with capacity to spare,
/// within their own time and the spare capacity. A hand-solved case and the invariants on a
/// random instance, through the engine the solver uses.
#include <algorithm>
#include <cmath>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

namespace {

using executor = popalloc::detail::executor_for<popalloc_test::test_backend>::type;
template <class Utility>
using engine_type = popalloc::detail::engine<executor, popalloc::dense_problem<double>, Utility>;
constexpr double margin = popalloc::detail::method_constants::capacity_margin;

/// Scale factors that bring every over-used resource back to (1 - margin) of its capacity, and
/// the capacity the others have left (0 for the scaled ones), as the solver's certify() does.
void scale_and_spare(const Eigen::VectorXd& capacity, const Eigen::VectorXd& usage,
                     Eigen::VectorXd& factors, Eigen::VectorXd& spare) {
  const Eigen::Index m = capacity.size();
  factors = Eigen::VectorXd::Ones(m);
  spare = Eigen::VectorXd::Zero(m);
  for (Eigen::Index j = 0; j < m; ++j) {
    const double limit = capacity[j] * (1.0 - margin);
    if (usage[j] > limit) {
      factors[j] = limit / usage[j];
    } else {
      spare[j] = limit - usage[j];
    }
  }
}

/// Per job: time used and throughput of an exported allocation.
struct job_totals {
  std::vector<double> time, throughput;
};

job_totals totals(const popalloc::dense_problem<double>& p, const popalloc::solve_result& r) {
  job_totals out;
  const auto& a = r.allocation;
  for (std::size_t i = 0; i < a.jobs(); ++i) {
    double time = 0.0, throughput = 0.0;
    for (auto k = a.job_offset[i]; k < a.job_offset[i + 1]; ++k) {
      const auto o = static_cast<std::size_t>(k);
      time += a.fraction[o];
      throughput += a.fraction[o] * p.throughput(static_cast<Eigen::Index>(i), a.option[o]);
    }
    out.time.push_back(time);
    out.throughput.push_back(throughput);
  }
  return out;
}

}  // namespace

TEST_CASE("[topups] hand-solved: the scaled resource's loss moves to the spare one") {
  // Two jobs with throughput 1 on both resources and target 0.5: at prices 0 each job's smoothed
  // response meets its target with the least |x|^2, x = (0.25, 0.25), so resource 0 (capacity
  // 0.1) is used 0.5. Scaling it by 0.2 leaves each job x = (0.05, 0.25), throughput 0.3 and
  // objective 2 x (0.3 - 0.5) = -0.4; the top-up puts 0.2 more on resource 1 (capacity 10) and
  // every target is met again: x = (0.05, 0.45), objective 0.
  popalloc::dense_problem<double> p;
  p.throughput = popalloc::dense_problem<double>::matrix::Ones(2, 2);
  p.capacity = Eigen::Vector2d(0.1, 10.0);
  p.target = Eigen::Vector2d(0.5, 0.5);
  const popalloc::utility::target_priority u;
  p.validate(u);
  engine_type<popalloc::utility::target_priority> engine(p, u, executor(1));
  popalloc::detail::evaluation e;
  engine.evaluate(Eigen::Vector2d::Zero(), 0.1, false, e);
  REQUIRE(e.usage[0] == doctest::Approx(0.5).epsilon(1e-12));
  REQUIRE(e.usage[1] == doctest::Approx(0.5).epsilon(1e-12));

  Eigen::VectorXd factors, spare;
  scale_and_spare(p.capacity, e.usage, factors, spare);
  const auto scaled = engine.repair(factors);
  CHECK(scaled.utility == doctest::Approx(-0.4).epsilon(1e-9));
  // Nothing can do better than meeting every target: asking for more skips the last passes.
  CHECK_FALSE(
      engine.repair_with_topups(factors, spare, [](double objective) { return objective > 0.0; })
          .finite);
  const auto topped =
      engine.repair_with_topups(factors, spare, [](double objective) { return objective >= 0.0; });
  CHECK(topped.finite);
  CHECK(std::abs(topped.utility) < 1e-12);
  CHECK(topped.usage[0] == doctest::Approx(0.1).epsilon(1e-9));
  CHECK(topped.usage[1] == doctest::Approx(0.9).epsilon(1e-9));
  CHECK(topped.usage[0] <= p.capacity[0]);

  engine.keep_scratch(factors, true);
  popalloc::solve_result r;
  const double objective = engine.export_kept(r);
  CHECK(std::abs(objective) < 1e-12);
  REQUIRE(r.allocation.jobs() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto begin = static_cast<std::size_t>(r.allocation.job_offset[i]);
    REQUIRE(r.allocation.job_offset[i + 1] - r.allocation.job_offset[i] == 2);
    CHECK(r.allocation.option[begin] == 0);
    CHECK(r.allocation.option[begin + 1] == 1);
    CHECK(r.allocation.fraction[begin] == doctest::Approx(0.05).epsilon(1e-9));
    CHECK(r.allocation.fraction[begin + 1] == doctest::Approx(0.45).epsilon(1e-9));
  }
}

TEST_CASE("[topups] never exceed a capacity or a job's time, never lower the objective") {
  // Prices below the optimum's leave some resources over-used and others with room; every
  // utility, at two smoothing levels.
  const auto p = popalloc_test::random_problem(3000, 6, 11);
  auto check = [&](const auto& u, double level) {
    using utility_type = std::decay_t<decltype(u)>;
    CAPTURE(level);
    engine_type<utility_type> engine(p, u, executor(2));
    const auto marginals = engine.marginal_prices(p.capacity);
    Eigen::VectorXd prices = 0.3 * marginals.equal_share;
    prices[0] = 0.0;
    prices[3] *= 3.0;
    popalloc::detail::evaluation e;
    engine.evaluate(prices, level, false, e);
    Eigen::VectorXd factors, spare;
    scale_and_spare(p.capacity, e.usage, factors, spare);
    REQUIRE((factors.array() < 1.0).any());
    REQUIRE((spare.array() > 0.0).any());
    const auto scaled = engine.repair(factors);
    const auto topped = engine.repair_with_topups(factors, spare, [](double) { return true; });
    REQUIRE(topped.finite);
    CHECK(topped.utility >= scaled.utility);
    CHECK(topped.utility <= e.utility_exact + 1e-9 * std::abs(e.utility_exact));
    for (Eigen::Index j = 0; j < p.resources(); ++j) {
      CAPTURE(j);
      CHECK(topped.usage[j] <= p.capacity[j]);
      CHECK(topped.usage[j] >= scaled.usage[j] * (1.0 - 1e-12));
    }

    engine.keep_scratch(factors, true);
    popalloc::solve_result r;
    const double objective = engine.export_kept(r);
    CHECK(objective == doctest::Approx(topped.utility).epsilon(1e-12));
    CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
    CHECK(popalloc_test::recomputed_objective(p, u, r) ==
          doctest::Approx(objective).epsilon(1e-12));
    const job_totals t = totals(p, r);
    CHECK(*std::max_element(t.time.begin(), t.time.end()) <= 1.0);
  };
  for (const double level : {1e-1, 1e-3}) {
    check(popalloc::utility::target_priority{}, level);
    check(popalloc::utility::linear{}, level);
    check(popalloc::utility::log{}, level);
  }
}
