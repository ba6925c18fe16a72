// SPDX-License-Identifier: Apache-2.0
// A user's traffic matrix as CSV (te::read_demands_csv) and plan files (te::append_plan_json,
// te::read_plan_json): what they read, what they refuse, and re-plans started from a plan.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "square_topology.hpp"
#include "support/input_refusal.hpp"
#include "te_fixtures.hpp"

namespace te = popalloc::te;

namespace {

using popalloc_test::refusal;

std::string plan_of(const te::instance& inst, te::te_objective o, const te::result& r) {
  std::string text;
  te::append_plan_json(text, inst, o, r);
  return text;
}

}  // namespace

TEST_CASE("demands: a CSV gives the commodities of the same matrix, in POP's order") {
  const te::topology g = te_test::square_topology();
  // Columns in another order, blanks, a zero demand, CRLF, rows out of order.
  const std::string text =
      "target, source ,demand\r\nc,a,3\r\n\r\nb,d,0\na,b,1.5\nd,c,2e-3\nb,a,7\n";
  const std::vector<te::commodity> read = te::read_demands_csv(text, "m.csv", g);
  std::vector<double> matrix(16, 0.0);
  matrix[0 * 4 + 1] = 7;     // a -> b
  matrix[0 * 4 + 2] = 3;     // a -> c
  matrix[1 * 4 + 0] = 1.5;   // b -> a
  matrix[2 * 4 + 3] = 2e-3;  // c -> d
  const std::vector<te::commodity> expected = te::commodities_of(matrix, 4);
  REQUIRE(read.size() == expected.size());
  for (std::size_t k = 0; k < read.size(); ++k) {
    CHECK(read[k].source == expected[k].source);
    CHECK(read[k].target == expected[k].target);
    CHECK(read[k].demand == expected[k].demand);
  }
}

TEST_CASE("demands: a malformed CSV is refused with its line") {
  const te::topology g = te_test::square_topology();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "m.csv:1: file is empty"},
      {"source,target\na,b\n", "m.csv:1: missing column 'demand'"},
      {"source,target,demand,source\n", "m.csv:1: duplicate column 'source'"},
      {"source,target,weight\n", "m.csv:1: unknown column 'weight'"},
      {"source,target,demand\na,b\n", "m.csv:2: expected 3 fields"},
      {"source,target,demand\na,e,1\n", "m.csv:2: node 'e' is not in topology 'square'"},
      {"source,target,demand\na,a,1\n", "m.csv:2: source and target are the same node 'a'"},
      {"source,target,demand\na,b,-1\n", "m.csv:2: '-1' in column 'demand' is negative"},
      {"source,target,demand\na,b,inf\n", "m.csv:2: 'inf' in column 'demand' is not finite"},
      {"source,target,demand\na,b,1e99\n", "m.csv:2: '1e99' in column 'demand' is outside"},
      {"source,target,demand\na,b,x\n", "m.csv:2: 'x' in column 'demand' is not a number"},
      {"source,target,demand\na,b,1\nc,d,1\na,b,0\n",
       "m.csv:4: the pair a -> b was already given on line 2"},
  };
  for (const auto& [text, message] : cases) {
    INFO(text);
    CHECK(refusal([&] { te::read_demands_csv(text, "m.csv", g); }).rfind(message, 0) == 0);
  }
  // A label that two nodes carry cannot name either.
  const te::topology twice = te::make_topology(
      "twice", {"x", "x", "y"},
      {{0, 1, 1.0}, {1, 0, 1.0}, {1, 2, 1.0}, {2, 1, 1.0}, {0, 2, 1.0}, {2, 0, 1.0}});
  CHECK(refusal([&] {
          te::read_demands_csv("source,target,demand\nx,y,1\n", "m.csv", twice);
        }).rfind("m.csv:2: node name 'x' names more than one node", 0) == 0);
}

TEST_CASE("plan: reads back exactly and re-plans the same matrix with no core solve") {
  for (const auto o : {te::te_objective::concurrent_flow, te::te_objective::min_max_utilization}) {
    INFO(te::to_string(o));
    const te::instance inst = te_test::gravity_instance("Uninett2010.graphml", 64.0, 1);
    te::price_options options;
    options.solver.threads = 2;
    const te::result answer = te::solve_price(inst, o, options);
    REQUIRE(answer.status == te::solve_status::converged);
    const te::result read = te::read_plan_json(plan_of(inst, o, answer), "p.json", inst);
    CHECK(read.path_flow == answer.path_flow);
    CHECK(read.prices == answer.prices);
    CHECK(read.iterations == answer.iterations);
    CHECK(read.solves == answer.solves);
    const te::result replan = te::replan_price(inst, o, read, options);
    CHECK(replan.status == te::solve_status::converged);
    CHECK(replan.solves == 0);
    CHECK(replan.objective == doctest::Approx(answer.objective).epsilon(1e-12));
  }
}

TEST_CASE("plan: re-plans a matrix whose pairs changed") {
  // The plan routes a -> c and b -> d; the new matrix drops b -> d and adds d -> b.
  const te::topology g = te_test::square_topology();
  te::path_options paths;
  const te::instance before = te::make_instance(
      g, te::read_demands_csv("source,target,demand\na,c,12\nb,d,6\n", "m", g), paths);
  const te::instance after = te::make_instance(
      g, te::read_demands_csv("source,target,demand\na,c,13\nd,b,6\n", "m", g), paths);
  const auto o = te::te_objective::min_max_utilization;
  const te::result answer = te::solve_price(before, o);
  REQUIRE(answer.status == te::solve_status::converged);
  const te::result read = te::read_plan_json(plan_of(before, o, answer), "p.json", after);
  REQUIRE(read.path_flow.size() == static_cast<std::size_t>(after.path_count()));
  // a -> c keeps its flows path by path; d -> b (commodity 1 of `after`) starts with none.
  double carried = 0.0, new_pair = 0.0;
  for (auto p = after.paths.pair_offset[0]; p < after.paths.pair_offset[1]; ++p)
    carried += read.path_flow[static_cast<std::size_t>(p)];
  for (auto p = after.paths.pair_offset[1]; p < after.paths.pair_offset[2]; ++p)
    new_pair += read.path_flow[static_cast<std::size_t>(p)];
  CHECK(carried == doctest::Approx(12.0).epsilon(1e-12));
  CHECK(new_pair == 0.0);
  const te::result replan = te::replan_price(after, o, read);
  const te::result cold = te::solve_price(after, o);
  REQUIRE(replan.status == te::solve_status::converged);
  REQUIRE(cold.status == te::solve_status::converged);
  // Both certified: each one's objective is no better than the other's bound.
  CHECK(replan.objective >= cold.bound * (1 - 1e-12));
  CHECK(cold.objective >= replan.bound * (1 - 1e-12));
  CHECK(te::summarize(after, replan.path_flow).max_demand_shortfall <= 1e-9);
}

TEST_CASE("plan: a plan of another topology, with other paths, or malformed is refused") {
  const te::topology g = te_test::square_topology();
  const te::instance inst = te::make_instance(
      g, te::read_demands_csv("source,target,demand\na,c,12\nb,d,6\n", "m", g), {});
  const auto o = te::te_objective::min_max_utilization;
  const std::string plan = plan_of(inst, o, te::solve_price(inst, o));
  auto refused = [&](const std::string& text, const te::instance& onto) {
    return refusal([&] { te::read_plan_json(text, "p.json", onto); });
  };
  CHECK(refused(plan, te_test::gravity_instance("b4-teavar.json", 1.0))
            .find("a re-plan needs the same topology") != std::string::npos);
  te::path_options one_path;
  one_path.k = 1;
  const te::instance fewer_paths = te::make_instance(g, inst.commodities, one_path);
  CHECK(refused(plan, fewer_paths).find("is not one of this run's paths") != std::string::npos);

  auto edited = [&](const std::string& from, const std::string& to) {
    std::string text = plan;
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
  };
  // Each edit is refused with a message that names what is wrong.
  auto expect_refusal = [&](const std::string& text, const std::string& names) {
    const std::string message = refused(text, inst);
    CAPTURE(message);
    CHECK(message.find(names) != std::string::npos);
  };
  CHECK(refused("[]", inst).find("p.json:1: expected a JSON object") == 0);
  expect_refusal("{\"schema_version\": 1}", "not a popalloc-te plan");
  expect_refusal(edited("\"schema_version\": 1", "\"schema_version\": 2"),
                 "unsupported schema_version");
  expect_refusal(edited("\"solves\": ", "\"solves\": -"), "\"solves\" must be an integer >= 0");
  expect_refusal(edited("\"flow\": ", "\"flow\": -"), "\"flow\" must be a finite number >= 0");
  expect_refusal(edited("\"price\": ", "\"price\": null, \"x\": "),
                 "either every arc has a price or none has");
  expect_refusal(edited("{\"nodes\": [\"a\"", "{\"nodes\": [\"q\""),
                 "node 'q' is not in topology 'square'");
  expect_refusal(edited("{\"from\": \"a\", \"to\": \"b\"", "{\"from\": \"a\", \"to\": \"a\""),
                 "arc a -> a is not in topology 'square'");
}
