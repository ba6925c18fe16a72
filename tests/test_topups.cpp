// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The repair's top-ups (detail/passes.hpp, choose_topup): jobs that the scaling of an
/// over-used resource took throughput from win it back on resources with capacity to spare,
/// within their own time and the spare capacity. Hand-solved cases of each round (the first,
/// the second, a swap, the second tier) and the invariants on a random instance, through the
/// engine the solver uses.
#include <algorithm>
#include <cmath>
#include <cstdint>
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

/// One job with throughputs (3, 2, 1) on three resources, for the hand-solved per-job cases.
popalloc::detail::dense_view<double> one_job_view() {
  static const double throughput[3] = {3.0, 2.0, 1.0};
  popalloc::detail::dense_view<double> view;
  view.throughput = throughput;
  view.n = 1;
  view.m = 3;
  return view;
}

/// Two jobs with throughput 1 on both of two resources and target 0.5 (target priority).
popalloc::dense_problem<double> two_unit_jobs(const Eigen::Vector2d& capacity) {
  popalloc::dense_problem<double> p;
  p.throughput = popalloc::dense_problem<double>::matrix::Ones(2, 2);
  p.capacity = capacity;
  p.target = Eigen::Vector2d(0.5, 0.5);
  p.validate(popalloc::utility::target_priority{});
  return p;
}

}  // namespace

TEST_CASE("[topups] hand-solved: the scaled resource's loss moves to the spare one") {
  // Two jobs with throughput 1 on both resources and target 0.5: at prices 0 each job's smoothed
  // response meets its target with the least |x|^2, x = (0.25, 0.25), so resource 0 (capacity
  // 0.1) is used 0.5. Scaling it by 0.2 leaves each job x = (0.05, 0.25), throughput 0.3 and
  // objective 2 x (0.3 - 0.5) = -0.4; the top-up puts 0.2 more on resource 1 (capacity 10) and
  // every target is met again: x = (0.05, 0.45), objective 0.
  const popalloc::dense_problem<double> p = two_unit_jobs(Eigen::Vector2d(0.1, 10.0));
  const popalloc::utility::target_priority u;
  engine_type<popalloc::utility::target_priority> engine(p, u, executor(1));
  engine.marginal_prices(p.capacity);  // sets the regularisation scales
  popalloc::detail::evaluation e;
  engine.evaluate(Eigen::Vector2d::Zero(), 0.1, false, e);
  REQUIRE(e.usage[0] == doctest::Approx(0.5).epsilon(1e-12));
  REQUIRE(e.usage[1] == doctest::Approx(0.5).epsilon(1e-12));

  Eigen::VectorXd factors, spare;
  scale_and_spare(p.capacity, e.usage, factors, spare);
  const auto scaled = engine.repair(factors);
  CHECK(scaled.utility == doctest::Approx(-0.4).epsilon(1e-9));
  // Nothing can do better than meeting every target: asking for more skips the last passes.
  CHECK_FALSE(engine
                  .repair_with_topups(factors, spare, false,
                                      [](double objective) { return objective > 0.0; })
                  .finite);
  const auto topped = engine.repair_with_topups(factors, spare, false,
                                                [](double objective) { return objective >= 0.0; });
  CHECK(topped.finite);
  CHECK(engine.topup_passes() == 1);  // the first round's top-ups fit
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

TEST_CASE("[topups] hand-solved: an allocation that fits tops up toward the targets") {
  // Two jobs with throughput 1 on both resources and target 0.5, priced at their weight: each
  // job's smoothed response is idle (objective 2 x (0 - 0.5) = -1) and nothing is over-used, so
  // no scaling takes anything. Top-ups toward saturation give each job 0.5 on resource 0 (the
  // first of the equally fast resources with room): every target met, objective 0. Without
  // them there is nothing to win back.
  const popalloc::dense_problem<double> p = two_unit_jobs(Eigen::Vector2d(10.0, 10.0));
  const popalloc::utility::target_priority u;
  engine_type<popalloc::utility::target_priority> engine(p, u, executor(1));
  engine.marginal_prices(p.capacity);
  popalloc::detail::evaluation e;
  engine.evaluate(Eigen::Vector2d::Ones(), 0.1, false, e);
  REQUIRE(e.usage.isZero());
  REQUIRE(e.utility_exact == doctest::Approx(-1.0).epsilon(1e-12));

  Eigen::VectorXd factors, spare;
  scale_and_spare(p.capacity, e.usage, factors, spare);
  REQUIRE(factors == Eigen::Vector2d::Ones());
  auto meets_targets = [](double objective) { return objective >= 0.0; };
  CHECK_FALSE(engine.repair_with_topups(factors, spare, false, meets_targets).finite);
  const auto topped = engine.repair_with_topups(factors, spare, true, meets_targets);
  REQUIRE(topped.finite);
  CHECK(engine.topup_passes() == 1);
  CHECK(std::abs(topped.utility) < 1e-12);
  CHECK(topped.usage[0] == doctest::Approx(1.0).epsilon(1e-12));
  CHECK(topped.usage[1] == 0.0);

  // The export rebuilds the same top-ups.
  engine.keep_scratch(factors, true);
  popalloc::solve_result r;
  CHECK(std::abs(engine.export_kept(r)) < 1e-12);
  REQUIRE(r.allocation.jobs() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto begin = static_cast<std::size_t>(r.allocation.job_offset[i]);
    REQUIRE(r.allocation.job_offset[i + 1] - r.allocation.job_offset[i] == 1);
    CHECK(r.allocation.option[begin] == 0);
    CHECK(r.allocation.fraction[begin] == doctest::Approx(0.5).epsilon(1e-12));
    CHECK(r.throughput[static_cast<Eigen::Index>(i)] == doctest::Approx(0.5).epsilon(1e-12));
  }
}

TEST_CASE("[topups] hand-solved: the second round moves top-ups to a slower resource with room") {
  // Ten jobs with throughputs (1, 2, 1.5) and target 1: at prices 0 each job's smoothed response
  // is x = a / 7.25, usage (1.379, 2.759, 2.069). Resource 0 (capacity 0.5) is scaled by
  // 0.3625: each job loses 0.1379 (1 - 0.3625) = 0.08793 of throughput, objective -0.8793.
  // The first round tops up on the fastest spare resource, 1, but its 0.44 of time does not fit
  // into the 0.24 left there (fill ratio 0.55); weighed by that, resource 2 (1.5 > 2 x 0.55)
  // takes every top-up, 10 x 0.08793 / 1.5 = 0.5862 of time, and every target is met again.
  popalloc::dense_problem<double> p;
  p.throughput.resize(10, 3);
  for (Eigen::Index i = 0; i < 10; ++i) p.throughput.row(i) << 1.0, 2.0, 1.5;
  p.capacity = Eigen::Vector3d(0.5, 3.0, 100.0);
  p.target = Eigen::VectorXd::Ones(10);
  const popalloc::utility::target_priority u;
  p.validate(u);
  engine_type<popalloc::utility::target_priority> engine(p, u, executor(1));
  engine.marginal_prices(p.capacity);  // sets the regularisation scales
  popalloc::detail::evaluation e;
  engine.evaluate(Eigen::Vector3d::Zero(), 0.1, false, e);
  REQUIRE(e.usage[1] == doctest::Approx(20.0 / 7.25).epsilon(1e-12));
  Eigen::VectorXd factors, spare;
  scale_and_spare(p.capacity, e.usage, factors, spare);
  const auto scaled = engine.repair(factors);
  const double lost = 10.0 * (1.0 / 7.25) * (1.0 - factors[0]);
  CHECK(scaled.utility == doctest::Approx(-lost).epsilon(1e-12));
  const auto topped = engine.repair_with_topups(factors, spare, false, [](double) { return true; });
  CHECK(engine.topup_passes() == 2);
  CHECK(std::abs(topped.utility) < 1e-12);
  CHECK(topped.usage[1] == doctest::Approx(scaled.usage[1]).epsilon(1e-12));  // none on 1
  CHECK(topped.usage[2] == doctest::Approx(scaled.usage[2] + lost / 1.5).epsilon(1e-12));
}

TEST_CASE("[topups] hand-solved: a job without the free time for its loss swaps slow time") {
  // Throughputs (3, 2, 1); before the scaling x = (0.4, 0, 0.6), throughput 1.8; resource 0
  // scaled by 1/2 leaves x = (0.2, 0, 0.6): throughput 1.2, lost 0.6, free time 0.2. Resources 1
  // and 2 have room, so the job tops up on the faster, resource 1: its free time buys back 0.4;
  // the other 0.2 comes from moving a third of its time on the slower resource 2 (each unit
  // moved gains 2 - 1): x = (0.2, 0.4, 0.4), throughput 1.8 again, time 1.
  const popalloc::detail::dense_view<double> view = one_job_view();
  popalloc::detail::scaled_job job;
  job.throughput = 1.8;
  job.scaled_throughput = 1.2;
  job.scaled_time = 0.8;
  job.options = 2.0;
  job.recorded = true;
  job.scaled[1] = 0.0;
  job.scaled[0] = 0.2;
  job.scaled[2] = 0.6;
  const double preference[3] = {0.0, 1.0, 1.0};
  const popalloc::detail::topup t = popalloc::detail::choose_topup(view, 0, preference, job);
  REQUIRE(t.option == 1);
  // The free time is 0.2 less a rounding margin of a few ulps.
  CHECK(t.cut == doctest::Approx(1.0 / 3.0).epsilon(1e-12));
  CHECK(t.time == doctest::Approx(0.4).epsilon(1e-12));
  CHECK(t.gain == doctest::Approx(0.6).epsilon(1e-12));
  CHECK(t.time - t.cut * 0.6 <= 0.2);                          // the job's time stays below 1
  CHECK_FALSE(popalloc::detail::swapped_from(view, 0, 0, t));  // faster than the top-up's
  CHECK_FALSE(popalloc::detail::swapped_from(view, 0, 1, t));  // the top-up's own option
  CHECK(popalloc::detail::swapped_from(view, 0, 2, t));

  // With free time enough for the loss there is no swap; with no slower option, no swap either.
  popalloc::detail::scaled_job roomy = job;  // x = (0.1, 0, 0.4) from throughput 1.5
  roomy.throughput = 1.5;
  roomy.scaled_throughput = 0.7;
  roomy.scaled_time = 0.5;
  roomy.scaled[0] = 0.1;
  roomy.scaled[2] = 0.4;
  const popalloc::detail::topup plain = popalloc::detail::choose_topup(view, 0, preference, roomy);
  CHECK(plain.option == 1);
  CHECK(plain.cut == 0.0);
  CHECK(plain.time == doctest::Approx(0.4).epsilon(1e-12));  // lost 0.8 at speed 2
  const double only_slow[3] = {0.0, 0.0, 1.0};  // resource 1 has no room: top up on 2 (a = 1)
  const popalloc::detail::topup slow = popalloc::detail::choose_topup(view, 0, only_slow, job);
  CHECK(slow.option == 2);
  CHECK(slow.cut == 0.0);
  CHECK(slow.gain == doctest::Approx(0.2).epsilon(1e-12));
}

TEST_CASE("[topups] hand-solved: what the first tier cannot fit goes to the second") {
  // One job, throughputs (3, 2, 1), stored state x = nu a with nu = 0.1 at prices 0 and kappa 1:
  // x = (0.3, 0.2, 0.1), throughput 1.4. Resource 0 scaled by 1/2 leaves x = (0.15, 0.2, 0.1):
  // lost 0.45, free time 0.55. First tier on resource 1 (a = 2, time 0.225) at fill ratio 1/4,
  // second tier on resource 2 (a = 1, time 0.45) for the other 3/4 at fill ratio 1:
  // x = (0.15, 0.2 + 0.225 / 4, 0.1 + 0.45 * 3 / 4), throughput 1.4 again.
  const popalloc::detail::dense_view<double> view = one_job_view();
  std::int32_t left = popalloc::detail::regularized_marker, right = 0;
  double lambda = 0.0, nu = 0.1;
  const popalloc::detail::state_pointers state{&left, &right, &lambda, &nu};
  const double prices[3] = {0.0, 0.0, 0.0}, factors[3] = {0.5, 1.0, 1.0};
  const double table[15] = {0.0, 0.25, 1.0, 0.0, 1.0, 1.0,  // first tier: fill, preference
                            0.0, 0.0,  1.0, 0.0, 0.0, 1.0,  // second tier
                            0.0, 0.25, 1.0};                // confined jobs' first-tier fill
  const popalloc::detail::topup_tiers tiers{table, 3, false};
  double x[3] = {0.0, 0.0, 0.0};
  const auto t = popalloc::detail::visit_repaired_fractions(
      view, 0, prices, 1.0, state, factors, tiers, popalloc::utility::target_priority{},
      [&](std::int32_t o, double f) { x[o] += f; });
  REQUIRE(t.tier[0].option == 1);
  REQUIRE(t.tier[1].option == 2);
  CHECK(t.weight[0] == doctest::Approx(0.25).epsilon(1e-12));
  CHECK(t.weight[1] == doctest::Approx(0.75).epsilon(1e-12));
  CHECK(x[0] == doctest::Approx(0.15).epsilon(1e-12));
  CHECK(x[1] == doctest::Approx(0.25625).epsilon(1e-12));
  CHECK(x[2] == doctest::Approx(0.4375).epsilon(1e-12));
  CHECK(3.0 * x[0] + 2.0 * x[1] + x[2] == doctest::Approx(1.4).epsilon(1e-12));

  // The repair pass tracks the second tier's usage before its fill ratio: 3/4 of 0.45.
  popalloc::detail::repair_pass<popalloc::detail::dense_view<double>,
                                popalloc::utility::target_priority>
      pass;
  pass.view = view;
  pass.factors = factors;
  pass.topups = tiers;
  pass.prices = prices;
  pass.state = state;
  pass.m = 3;
  pass.tracked_tier = 1;
  double kappa_scale = 1.0;
  pass.kappa_scale = &kappa_scale;
  pass.level = 1.0;
  std::vector<double> sums(static_cast<std::size_t>(pass.width()), 0.0);
  pass(0, sums.data());
  CHECK(sums[0] == doctest::Approx(0.15).epsilon(1e-12));
  CHECK(sums[2] == doctest::Approx(0.4375).epsilon(1e-12));
  CHECK(sums[6] == 0.0);
  CHECK(sums[7] == 0.0);
  CHECK(sums[8] == doctest::Approx(0.3375).epsilon(1e-12));
  CHECK(sums[9] + sums[10] + sums[11] == 0.0);  // the job is not confined: it has a second tier
}

TEST_CASE("[topups] hand-solved: confined jobs take the room first") {
  // Five flexible jobs with throughputs (2, 4, 1) and five confined ones with (2, 4, 0), target
  // 1. At prices 0 each smoothed response meets its target with the least |x|^2, x = a / |a|^2:
  // (2, 4, 1) / 21 and (2, 4, 0) / 20. Resource 0 is scaled by 1/2: a flexible job loses 2/21,
  // a confined one 1/10 of throughput, which each wins back on resource 1 (fastest), 1/42 and
  // 1/40 of time: 5/42 + 5/40 = 0.244 in all, against 0.15 of room. Weighed by that room
  // (0.615), resource 1 still beats resource 2 for the flexible jobs (4 x 0.615 > 1), so the
  // first tier overflows and every job gets 0.615 of its top-up there; the flexible jobs take
  // the rest on resource 2 (second tier), the confined ones have nowhere to go and stay 0.385 x
  // 1/10 short each. Given the room first, the confined jobs take 0.125 of it (fill ratio 1) and
  // the flexible ones the other 0.025 (fill ratio 0.21) and the rest on resource 2: every target
  // is met.
  popalloc::dense_problem<double> p;
  p.throughput.resize(10, 3);
  for (Eigen::Index i = 0; i < 10; ++i) p.throughput.row(i) << 2.0, 4.0, (i < 5 ? 1.0 : 0.0);
  const double usage0 = 5.0 * 2.0 / 21.0 + 5.0 * 2.0 / 20.0;
  const double usage1 = 5.0 * 4.0 / 21.0 + 5.0 * 4.0 / 20.0;
  const double room = 0.15;
  p.capacity = Eigen::Vector3d(0.5 * usage0, usage1 + room, 100.0) / (1.0 - margin);
  p.target = Eigen::VectorXd::Ones(10);
  const popalloc::utility::target_priority u;
  p.validate(u);
  engine_type<popalloc::utility::target_priority> engine(p, u, executor(1));
  engine.marginal_prices(p.capacity);
  popalloc::detail::evaluation e;
  engine.evaluate(Eigen::Vector3d::Zero(), 0.1, false, e);
  REQUIRE(e.usage[0] == doctest::Approx(usage0).epsilon(1e-12));
  REQUIRE(e.usage[1] == doctest::Approx(usage1).epsilon(1e-12));
  Eigen::VectorXd factors, spare;
  scale_and_spare(p.capacity, e.usage, factors, spare);
  REQUIRE(factors[0] == doctest::Approx(0.5).epsilon(1e-12));
  REQUIRE(spare[1] == doctest::Approx(room).epsilon(1e-9));

  // Accepting the shared fill ratios ends after the third pass, 5 x 0.385 x 1/10 short.
  const double shared_fill = room / (5.0 / 42.0 + 5.0 / 40.0);
  const auto shared = engine.repair_with_topups(factors, spare, false, [](double) { return true; });
  CHECK(engine.topup_passes() == 3);
  CHECK(shared.utility == doctest::Approx(-5.0 * (1.0 - shared_fill) / 10.0).epsilon(1e-9));
  // Asking for every target gives the confined jobs the room first.
  const auto topped = engine.repair_with_topups(
      factors, spare, false, [](double objective) { return objective >= -1e-12; });
  REQUIRE(topped.finite);
  CHECK(engine.topup_passes() == 4);
  CHECK(std::abs(topped.utility) < 1e-12);
  for (Eigen::Index j = 0; j < 3; ++j) CHECK(topped.usage[j] <= p.capacity[j]);
  CHECK(topped.usage[1] == doctest::Approx(usage1 + room).epsilon(1e-9));
  // The flexible jobs' rest on resource 2: 5 x (1 - 0.025 / (5 / 42)) x (2 / 21) / 1.
  const double flexible_fill = (room - 5.0 / 40.0) / (5.0 / 42.0);
  CHECK(topped.usage[2] ==
        doctest::Approx(5.0 / 21.0 + 5.0 * (1.0 - flexible_fill) * 2.0 / 21.0).epsilon(1e-9));

  // The export rebuilds the same allocation: every job at its target, within its time.
  engine.keep_scratch(factors, true);
  popalloc::solve_result r;
  CHECK(std::abs(engine.export_kept(r)) < 1e-12);
  CHECK(popalloc_test::allocation_violation(p, r) <= 0.0);
  const job_totals t = totals(p, r);
  for (std::size_t i = 0; i < 10; ++i) {
    CAPTURE(i);
    CHECK(t.throughput[i] == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(t.time[i] <= 1.0);
  }
}

TEST_CASE("[topups] never exceed a capacity or a job's time, never lower the objective") {
  // Prices below the optimum's leave some resources over-used and others with room; every
  // utility, at two smoothing levels, with the room there is and with a hundredth of it (the
  // top-ups then overflow their first choices and the later rounds and tiers take over).
  const auto p = popalloc_test::random_problem(3000, 6, 11);
  std::vector<int> passes_seen;
  auto check = [&](const auto& u, double level, double room, bool to_saturation = false) {
    using utility_type = std::decay_t<decltype(u)>;
    CAPTURE(level);
    CAPTURE(room);
    CAPTURE(to_saturation);
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
    spare *= room;
    const auto scaled = engine.repair(factors);
    const auto topped =
        engine.repair_with_topups(factors, spare, to_saturation, [](double) { return true; });
    REQUIRE(topped.finite);
    passes_seen.push_back(engine.topup_passes());
    CHECK(topped.utility >= scaled.utility);
    // Winning back what the scaling took never beats the unscaled allocation; toward the
    // targets it can.
    if (!to_saturation) CHECK(topped.utility <= e.utility_exact + 1e-9 * std::abs(e.utility_exact));
    for (Eigen::Index j = 0; j < p.resources(); ++j) {
      CAPTURE(j);
      CHECK(topped.usage[j] <= p.capacity[j]);
      if (factors[j] == 1.0) CHECK(topped.usage[j] - scaled.usage[j] <= spare[j] * (1.0 + 1e-12));
      // Top-ups go to resources with room; a swap only takes time from the scaled ones.
      if (factors[j] < 1.0) CHECK(topped.usage[j] <= scaled.usage[j] * (1.0 + 1e-12));
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
  for (const double room : {1.0, 1e-2})
    for (const double level : {1e-1, 1e-3}) {
      check(popalloc::utility::target_priority{}, level, room);
      check(popalloc::utility::target_priority{}, level, room, true);
      check(popalloc::utility::linear{}, level, room);
      check(popalloc::utility::log{}, level, room);
    }
  // The rounds after the second were needed somewhere (the hand-solved cases above end after
  // one and two passes).
  for (const int passes : {3, 4}) {
    CAPTURE(passes);
    CHECK(std::find(passes_seen.begin(), passes_seen.end(), passes) != passes_seen.end());
  }
}
