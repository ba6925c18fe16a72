// SPDX-License-Identifier: Apache-2.0
// te::replan_price: a drifted traffic matrix re-planned from the last answer, against a cold
// solve and CLP; what a previous answer must be to start a re-plan.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include <doctest/doctest.h>

#include <popalloc/random.hpp>

#include "lp_clp.hpp"
#include "te_fixtures.hpp"

namespace te = popalloc::te;

namespace {

/// Every demand times its own factor, uniform in [0.95, 1.05].
te::instance drifted(te::instance inst, std::uint64_t seed) {
  popalloc::random_source rng(seed);
  for (te::commodity& c : inst.commodities) c.demand *= 0.95 + 0.1 * rng.unit();
  return inst;
}

te::price_options options_at(double gap) {
  te::price_options options;
  options.solver.relative_gap = gap;
  options.solver.threads = 2;
  return options;
}

/// The certificate of `r` holds against the exact optimum `best` (to the tolerance and to
/// rounding) and the flow routes what the objective says.
void check_certified(const te::instance& inst, const te::result& r, double best, double tol) {
  CHECK(r.status == te::solve_status::converged);
  CHECK(r.relative_gap <= tol);
  const te::flow_summary s = te::summarize(inst, r.path_flow);
  CHECK(s.min_path_flow >= 0.0);
  if (r.kind == te::te_objective::min_max_utilization) {
    CHECK(s.max_demand_shortfall <= 1e-7 * inst.total_demand());
    CHECK(r.objective == doctest::Approx(s.max_link_utilization).epsilon(1e-9));
    CHECK(r.bound <= best * (1 + 1e-9));
    CHECK(r.objective >= best * (1 - 1e-9));
    CHECK(r.objective <= best * (1 + 2 * tol));
  } else {
    CHECK(s.max_capacity_excess <= 1e-6);
    CHECK(r.objective == doctest::Approx(s.concurrent_flow).epsilon(1e-9));
    CHECK(r.bound >= best * (1 - 1e-9));
    CHECK(r.objective <= best * (1 + 1e-9));
    CHECK(r.objective >= best * (1 - 2 * tol));
  }
}

}  // namespace

TEST_CASE("replan: drifted matrices re-planned from the last answer match CLP, in fewer solves") {
  const double tol = 1e-5;
  const auto options = options_at(tol);
  for (const char* file : {"b4-teavar.json", "Uninett2010.graphml"}) {
    for (const auto o :
         {te::te_objective::concurrent_flow, te::te_objective::min_max_utilization}) {
      INFO(file << " " << te::to_string(o));
      te::instance inst = te_test::gravity_instance(file, 64.0, 1);
      te::result last = te::solve_price(inst, o, options);
      REQUIRE(last.status == te::solve_status::converged);
      CHECK(last.prices.size() == static_cast<std::size_t>(inst.graph.arc_count()));
      int cold_solves = 0, replan_solves = 0;
      for (std::uint64_t round = 1; round <= 3; ++round) {
        INFO("round " << round);
        inst = drifted(std::move(inst), round);
        const te::result cold = te::solve_price(inst, o, options);
        const te::result replan = te::replan_price(inst, o, last, options);
        // The exact optimum: CLP's where it is built in, else the cold solve's certified pair.
        double best = 0.5 * (cold.objective + cold.bound);
        if (popalloc_te::lp_solver_available()) best = popalloc_te::solve_lp(inst, o).objective;
        check_certified(inst, cold, best, tol);
        check_certified(inst, replan, best, tol);
        cold_solves += cold.solves;
        replan_solves += replan.solves;
        last = replan;
      }
      // The carried routing and prices bracket a* from the start: fewer core solves in all.
      CHECK(replan_solves < cold_solves);
    }
  }
}

TEST_CASE("replan: the unchanged matrix needs no core solve; total flow and POP answers") {
  const auto options = options_at(1e-5);
  const te::instance inst = te_test::gravity_instance("Uninett2010.graphml", 64.0, 2);
  for (const auto o : {te::te_objective::concurrent_flow, te::te_objective::min_max_utilization}) {
    INFO(te::to_string(o));
    const te::result first = te::solve_price(inst, o, options);
    const te::result again = te::replan_price(inst, o, first, options);
    CHECK(again.solves == 0);
    CHECK(again.status == te::solve_status::converged);
    CHECK(again.objective == first.objective);
    CHECK(again.bound == first.bound);
  }
  // Total flow re-plans solve cold: the same answer as solve_price.
  const te::instance next = drifted(inst, 7);
  const te::result total = te::solve_price(inst, te::te_objective::total_flow, options);
  const te::result cold = te::solve_price(next, te::te_objective::total_flow, options);
  const te::result replan = te::replan_price(next, te::te_objective::total_flow, total, options);
  CHECK(replan.objective == cold.objective);
  CHECK(replan.bound == cold.bound);
  CHECK(replan.iterations == cold.iterations);
  // A POP answer carries no prices: its routing alone starts the re-plan.
  te::pop_options pop;
  pop.parts = 4;
  const auto mlu = te::te_objective::min_max_utilization;
  const te::result merged = te::solve_pop(inst, mlu, pop, [&](const te::instance& part) {
    return te::solve_price(part, mlu, options);
  });
  CHECK(merged.prices.empty());
  const te::result from_pop = te::replan_price(next, mlu, merged, options);
  const te::result reference = te::solve_price(next, mlu, options);
  CHECK(from_pop.status == te::solve_status::converged);
  CHECK(from_pop.objective >= reference.bound * (1 - 1e-9));
  CHECK(reference.objective >= from_pop.bound * (1 - 1e-9));
}

TEST_CASE("replan: a re-plan whose core solves run out gives way to a cold solve") {
  const te::instance inst = te_test::gravity_instance("Uninett2010.graphml", 64.0, 1);
  const auto mlu = te::te_objective::min_max_utilization;
  const te::result first = te::solve_price(inst, mlu, options_at(1e-5));
  const te::instance next = drifted(inst, 11);
  // Three evaluations per core solve: the re-plan's first probe runs out, the cold solve after
  // it cannot converge either, and the answer keeps the best bounds both proved.
  auto starved = options_at(1e-5);
  starved.solver.max_iterations = 3;
  const te::result cold = te::solve_price(next, mlu, starved);
  const te::result replan = te::replan_price(next, mlu, first, starved);
  CHECK(replan.solves > cold.solves);  // the re-plan's probe, then the whole cold bisection
  CHECK(replan.bound >= cold.bound);
  CHECK(replan.objective <= cold.objective);
  double best = 0.5 * (replan.objective + replan.bound);
  if (popalloc_te::lp_solver_available()) best = popalloc_te::solve_lp(next, mlu).objective;
  CHECK(replan.bound <= best * (1 + 1e-9));
  CHECK(replan.objective >= best * (1 - 1e-9));
  const te::flow_summary s = te::summarize(next, replan.path_flow);
  CHECK(s.max_demand_shortfall <= 1e-7 * next.total_demand());
  CHECK(replan.objective == doctest::Approx(s.max_link_utilization).epsilon(1e-9));
}

TEST_CASE("replan: a previous answer that does not fit the instance is refused") {
  const te::instance inst = te_test::gravity_instance("b4-teavar.json", 64.0, 1);
  const auto mlu = te::te_objective::min_max_utilization;
  const te::result good = te::solve_price(inst, mlu, options_at(1e-4));
  auto refused = [&](te::result previous) {
    CHECK_THROWS_AS(te::replan_price(inst, mlu, previous), popalloc::invalid_problem);
  };
  te::result r = good;
  r.path_flow.pop_back();  // another path set
  refused(r);
  r = good;
  r.prices.push_back(1.0);  // another topology
  refused(r);
  r = good;
  r.path_flow[0] = std::numeric_limits<double>::quiet_NaN();
  refused(r);
  r = good;
  r.path_flow[1] = -1.0;
  refused(r);
  r = good;
  r.prices[0] = std::numeric_limits<double>::infinity();
  refused(r);
  r = good;
  r.prices[2] = -0.5;
  refused(r);
  // An answer with no flow at all: every commodity starts on its shortest path.
  r = good;
  std::fill(r.path_flow.begin(), r.path_flow.end(), 0.0);
  r.prices.clear();
  const te::result from_nothing = te::replan_price(inst, mlu, r, options_at(1e-4));
  CHECK(from_nothing.status == te::solve_status::converged);
  CHECK(from_nothing.objective == doctest::Approx(good.objective).epsilon(2e-4));
}
