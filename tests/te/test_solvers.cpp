// SPDX-License-Identifier: Apache-2.0
// TE solvers: hand-computed optima, feasibility of every solver and objective, the price solver
// against CLP, MPS export read back by CLP, POP.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/io/atomic_file.hpp>

#include "lp_clp.hpp"
#include "te_fixtures.hpp"

namespace te = popalloc::te;

namespace {

const te::te_objective kObjectives[] = {te::te_objective::total_flow,
                                        te::te_objective::concurrent_flow,
                                        te::te_objective::min_max_utilization};

/// Three nodes: 0 -> 2 directly (capacity 5) or via 1 (capacity 10 per hop).
/// Commodities (0,2): 20 on both paths, (0,1): 4, (1,2): 8.
te::instance triangle() {
  const te::topology g = te_test::graph_of(
      3, {{0, 1, 10.0}, {1, 2, 10.0}, {0, 2, 5.0}, {1, 0, 10.0}, {2, 1, 10.0}, {2, 0, 5.0}});
  return te_test::explicit_instance(g, {{0, 2, 20.0}, {0, 1, 4.0}, {1, 2, 8.0}},
                                    {{{0, 2}, {0, 1, 2}}, {{0, 1}}, {{1, 2}}});
}

/// Capacity and demand feasibility of `r` for its objective (min-max-utilization: every demand
/// routed and loads within objective * c).
void check_feasible(const te::instance& inst, const te::result& r, const char* what) {
  INFO(what);
  const te::flow_summary s = te::summarize(inst, r.path_flow);
  CHECK(s.min_path_flow >= 0.0);
  const double scale = inst.total_demand();
  if (r.kind == te::te_objective::min_max_utilization) {
    CHECK(s.max_demand_shortfall <= 1e-7 * scale);
    CHECK(s.max_demand_excess <= 1e-7 * scale);
    for (std::size_t e = 0; e < s.load.size(); ++e)
      CHECK(s.load[e] <= r.objective * inst.graph.arcs[e].capacity * (1 + 1e-9) + 1e-9);
    CHECK(r.objective == doctest::Approx(s.max_link_utilization).epsilon(1e-9));
  } else {
    CHECK(s.max_capacity_excess <= 1e-6);
    CHECK(s.max_demand_excess <= 1e-7 * scale);
    CHECK(r.objective == doctest::Approx(te::objective_value(s, r.kind)).epsilon(1e-9));
  }
}

te::result price(const te::instance& inst, te::te_objective o, double gap = 1e-4) {
  te::price_options options;
  options.solver.relative_gap = gap;
  return te::solve_price(inst, o, options);
}

}  // namespace

TEST_CASE("solvers: hand-computed optima of a triangle (19, 15/28, 28/15)") {
  const auto inst = triangle();
  const double expected[] = {19.0, 15.0 / 28.0, 28.0 / 15.0};
  for (int q = 0; q < 3; ++q) {
    const auto r = price(inst, kObjectives[q], 1e-6);
    INFO(te::to_string(kObjectives[q]));
    check_feasible(inst, r, "price");
    CHECK(r.objective == doctest::Approx(expected[q]).epsilon(2e-5));
    // The certificate brackets the optimum.
    if (kObjectives[q] == te::te_objective::min_max_utilization)
      CHECK(r.bound <= expected[q] * (1 + 1e-12));
    else
      CHECK(r.bound >= expected[q] * (1 - 1e-12));
    if (popalloc_te::lp_solver_available()) {
      const auto lp = popalloc_te::solve_lp(inst, kObjectives[q]);
      check_feasible(inst, lp, "lp");
      CHECK(lp.objective == doctest::Approx(expected[q]).epsilon(1e-9));
    }
  }
}

TEST_CASE("solvers: every solver and objective gives a feasible flow (b4, toy, Uninett2010)") {
  struct setup {
    const char* file;
    double scale;
  };
  for (const setup& s : {setup{"b4-teavar.json", 64.0}, setup{"toy-network.json", 2.0},
                         setup{"Uninett2010.graphml", 8.0}}) {
    INFO(s.file);
    const auto inst = te_test::gravity_instance(s.file, s.scale, 1, 100.0);
    for (const auto o : kObjectives) {
      INFO(te::to_string(o));
      check_feasible(inst, price(inst, o), "price");
      te::pop_options pop;
      pop.parts = 4;
      pop.seed = 3;
      pop.split_fraction = 0.5;
      check_feasible(inst,
                     te::solve_pop(inst, o, pop,
                                   [&](const te::instance& part) {
                                     te::price_options options;
                                     options.solver.threads = 1;
                                     return te::solve_price(part, o, options);
                                   }),
                     "pop price");
      if (popalloc_te::lp_solver_available()) {
        check_feasible(inst, popalloc_te::solve_lp(inst, o), "lp");
        pop.threads = 1;
        check_feasible(
            inst,
            te::solve_pop(inst, o, pop,
                          [&](const te::instance& part) { return popalloc_te::solve_lp(part, o); }),
            "pop lp");
      }
    }
  }
}

TEST_CASE("solvers: the price solver is within 1e-3 of CLP on small topologies") {
  if (!popalloc_te::lp_solver_available()) {
    MESSAGE("built without CLP: no LP reference");
    return;
  }
  struct setup {
    const char* file;
    double scale;
    std::uint64_t seed;
  };
  for (const setup& s : {setup{"b4-teavar.json", 64.0, 1}, setup{"b4-teavar.json", 16.0, 2},
                         setup{"toy-network.json", 1.0, 1}, setup{"Uninett2010.graphml", 8.0, 2}}) {
    const auto inst = te_test::gravity_instance(s.file, s.scale, s.seed, 100.0);
    for (const auto o : kObjectives) {
      INFO(s.file << " scale " << s.scale << " " << te::to_string(o));
      const auto lp = popalloc_te::solve_lp(inst, o);
      const auto r = price(inst, o);
      CHECK(std::abs(r.objective - lp.objective) <= 1e-3 * std::abs(lp.objective));
      // The price solver's certified bound is on the right side of the LP optimum.
      if (o == te::te_objective::min_max_utilization)
        CHECK(r.bound <= lp.objective * (1 + 1e-7));
      else
        CHECK(r.bound >= lp.objective * (1 - 1e-7));
      // POP with k = 1 is the plain solver.
      te::pop_options one;
      one.parts = 1;
      const auto pop1 = te::solve_pop(
          inst, o, one, [&](const te::instance& part) { return popalloc_te::solve_lp(part, o); });
      CHECK(pop1.objective == doctest::Approx(lp.objective).epsilon(1e-7));
      // POP with k = 4 cannot beat the optimum.
      te::pop_options four;
      four.parts = 4;
      four.threads = 1;
      const auto pop4 = te::solve_pop(
          inst, o, four, [&](const te::instance& part) { return popalloc_te::solve_lp(part, o); });
      if (o == te::te_objective::min_max_utilization)
        CHECK(pop4.objective >= lp.objective * (1 - 1e-7));
      else
        CHECK(pop4.objective <= lp.objective * (1 + 1e-7));
    }
  }
}

TEST_CASE("solvers: the exported MPS file read back by CLP gives the LP optimum") {
  if (!popalloc_te::lp_solver_available()) {
    MESSAGE("built without CLP: cannot read MPS files back");
    return;
  }
  for (const char* file : {"b4-teavar.json", "Uninett2010.graphml"}) {
    const auto inst = te_test::gravity_instance(file, 32.0, 5, 100.0);
    for (const auto o : kObjectives) {
      INFO(file << " " << te::to_string(o));
      const te::lp_model model = te::build_lp(inst, o);
      std::string text;
      te::append_mps(text, model, "test");
      const std::string path = std::string("te_export_test_") + te::to_string(o) + ".mps";
      {
        popalloc::io::atomic_output_file out(path);
        out.buffer() = text;
        out.commit();
      }
      const double minimised = popalloc_te::solve_mps_file(path);
      std::remove(path.c_str());
      const auto lp = popalloc_te::solve_lp(inst, o);
      CHECK(model.sign * minimised == doctest::Approx(lp.objective).epsilon(1e-9));
    }
  }
}

TEST_CASE("solvers: concurrent flow is capped at 1 and closed arcs are handled") {
  // Plenty of capacity: every demand fits, mcf = 1 and the total flow is the total demand.
  const te::topology g = te_test::graph_of(
      3, {{0, 1, 100.0}, {1, 2, 100.0}, {2, 0, 100.0}, {1, 0, 100.0}, {2, 1, 100.0}, {0, 2, 0.0}});
  const auto inst =
      te_test::explicit_instance(g, {{0, 2, 3.0}, {2, 0, 1.0}}, {{{0, 2}, {0, 1, 2}}, {{2, 0}}});
  const auto mcf = price(inst, te::te_objective::concurrent_flow);
  check_feasible(inst, mcf, "mcf");
  CHECK(mcf.objective == doctest::Approx(1.0));
  const auto total = price(inst, te::te_objective::total_flow);
  check_feasible(inst, total, "total");
  CHECK(total.objective == doctest::Approx(4.0).epsilon(1e-5));
  const auto mlu = price(inst, te::te_objective::min_max_utilization);
  check_feasible(inst, mlu, "mlu");
  CHECK(mlu.objective == doctest::Approx(0.03).epsilon(1e-5));  // 3 on 0-1-2 over 100
  // A commodity whose only path is closed: mcf 0, mlu impossible.
  const auto blocked =
      te_test::explicit_instance(g, {{0, 2, 3.0}, {2, 0, 1.0}}, {{{0, 2}}, {{2, 0}}});
  CHECK(price(blocked, te::te_objective::concurrent_flow).objective == 0.0);
  CHECK_THROWS_AS(price(blocked, te::te_objective::min_max_utilization), popalloc::invalid_problem);
}

TEST_CASE("pop: POP's split_entities halves the heaviest commodities") {
  const auto split = te::split_commodities({8.0, 1.0, 2.0, 4.0}, 0.5);
  CHECK(split.pieces() == 6);  // 4 + round(2)
  // 8 -> 4 + 4, then the heaviest is a 4: commodity 0's first half (lower commodity id first).
  CHECK(split.pieces_of(0) == 3);
  CHECK(split.pieces_of(3) == 1);
  for (std::size_t k = 0; k < split.clients(); ++k) {
    double total = 0.0;
    for (auto q = split.piece_offset[k]; q < split.piece_offset[k + 1]; ++q)
      total += split.share[static_cast<std::size_t>(q)];
    CHECK(total == doctest::Approx(1.0));
  }
  CHECK_THROWS_AS(te::split_commodities({1.0}, -0.5), popalloc::invalid_options);
}

TEST_CASE("status: the core's names and order, and optimal") {
  for (int v = 0; v <= 7; ++v) {
    const auto core = static_cast<popalloc::solve_status>(v);
    CHECK(std::string(te::to_string(te::from_core(core))) == popalloc::to_string(core));
  }
  CHECK(std::string(te::to_string(te::solve_status::optimal)) == "optimal");
  using s = te::solve_status;
  CHECK(te::worse(s::converged, s::optimal) == s::converged);
  CHECK(te::worse(s::optimal, s::converged) == s::optimal);
  CHECK(te::worse(s::optimal, s::stalled) == s::stalled);
  CHECK(te::worse(s::time_limit, s::optimal) == s::time_limit);
  CHECK(te::worse(s::stalled, s::iteration_limit) == s::stalled);
  CHECK(te::worse(s::interrupted, s::numerical_error) == s::numerical_error);
  CHECK(popalloc::worse(popalloc::solve_status::converged, popalloc::solve_status::stalled) ==
        popalloc::solve_status::stalled);
}

TEST_CASE("price: the progress callback sees every step and can stop the solve") {
  const auto inst = triangle();
  for (const auto o : kObjectives) {
    INFO(std::string(te::to_string(o)));
    te::price_options options;
    options.solver.relative_gap = 1e-9;
    int calls = 0, last_solves = 0;
    options.callback = [&](const te::progress& p) {
      ++calls;
      CHECK(p.solves >= last_solves);
      CHECK(p.elapsed_seconds >= 0.0);
      last_solves = p.solves;
      return popalloc::callback_action::proceed;
    };
    const auto plain = [&] {
      te::price_options quiet = options;
      quiet.callback = nullptr;
      return te::solve_price(inst, o, quiet);
    }();
    const auto r = te::solve_price(inst, o, options);
    CHECK(calls >= 1);
    // Reporting changes nothing.
    CHECK(r.objective == plain.objective);
    CHECK(r.bound == plain.bound);
    CHECK(r.status == plain.status);
    CHECK(r.path_flow == plain.path_flow);
    if (o != te::te_objective::total_flow) CHECK(last_solves == r.solves);

    options.callback = [](const te::progress&) { return popalloc::callback_action::stop; };
    const auto stopped = te::solve_price(inst, o, options);
    INFO(std::string(te::to_string(stopped.status)));
    if (r.solves > 1 || (o == te::te_objective::total_flow && r.iterations > 1)) {
      CHECK(stopped.status == te::solve_status::interrupted);
      if (o != te::te_objective::total_flow) CHECK(stopped.solves == 1);
    }
    check_feasible(inst, stopped, "stopped");
  }
}

TEST_CASE("price: the status of the limits") {
  const auto inst = triangle();
  te::price_options options;
  options.solver.relative_gap = 1e-12;
  options.max_solves = 1;
  const auto r = te::solve_price(inst, te::te_objective::min_max_utilization, options);
  CHECK(r.status == te::solve_status::iteration_limit);
  CHECK(r.solves == 1);
  options.max_solves = 80;
  options.solver.time_limit_seconds = 1e-12;
  CHECK(te::solve_price(inst, te::te_objective::concurrent_flow, options).status ==
        te::solve_status::time_limit);
}

TEST_CASE("price: the bisection's probes just above a* converge with expand_steps") {
  // The core problem of a probe at a* (1 + delta): a bundle problem barely over capacity, where
  // the plain Newton loop's steps crawl (Uninett2010 x 8, delta 0.01: it reaches the default
  // 500 evaluations). With the expansion each probe converges, its certificate holds, and its
  // objective agrees with the plain loop's to the tolerance.
  const auto inst = te_test::gravity_instance("Uninett2010.graphml", 8.0);
  const auto mlu = te::solve_price(inst, te::te_objective::min_max_utilization);
  REQUIRE(mlu.status == te::solve_status::converged);
  const double a_star = 1.0 / mlu.objective;
  for (const double delta : {0.1, 0.01}) {
    auto problem = te::detail::bundle(inst, true);
    problem.capacity() /= a_star * (1.0 + delta);
    popalloc::solver_options o;
    o.relative_gap = 1e-5;
    const auto plain = popalloc::solve(problem, popalloc::utility::target_priority{}, o);
    o.expand_steps = true;
    const auto expanded = popalloc::solve(problem, popalloc::utility::target_priority{}, o);
    INFO("delta " << delta << ": plain " << popalloc::to_string(plain.status) << " after "
                  << plain.iterations << ", expanded after " << expanded.iterations);
    CHECK(expanded.status == popalloc::solve_status::converged);
    CHECK(expanded.dual_bound >= expanded.primal_objective);
    CHECK(expanded.max_capacity_violation <= 0.0);
    // Infeasible level: some demand is left unrouted, and the bound proves it.
    CHECK(expanded.dual_bound < 0.0);
    CHECK(std::abs(expanded.primal_objective - plain.primal_objective) <=
          2e-5 * std::abs(plain.primal_objective));
  }
}
