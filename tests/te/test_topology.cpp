// SPDX-License-Identifier: Apache-2.0
// Topology loading (GraphML, node-link JSON), the strict XML reader, traffic matrices.
#include <cmath>
#include <numeric>
#include <string>

#include <doctest/doctest.h>

#include "te_fixtures.hpp"

namespace te = popalloc::te;
using te_test::data_file;

namespace {

/// The message of the input_error `f` throws ("" if none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const popalloc::io::input_error& e) {
    return e.what();
  }
  return "";
}

te::topology graphml(const std::string& text) { return te::parse_graphml(text, "t.graphml", "t"); }

const char* kHeader =
    "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n"
    "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\">\n"
    "  <key attr.name=\"label\" attr.type=\"string\" for=\"node\" id=\"d0\" />\n";

}  // namespace

TEST_CASE("graphml: Uninett2010 loads with POP's rules (74 nodes, 202 arcs, capacity 1000)") {
  const te::topology g = te::load_topology(data_file("Uninett2010.graphml"));
  CHECK(g.name == "Uninett2010");
  CHECK(g.nodes == 74);
  CHECK(g.arc_count() == 202);
  for (const auto& a : g.arcs) CHECK(a.capacity == 1000.0);
  // Every arc has its reverse (undirected links).
  for (const auto& a : g.arcs) CHECK(te_test::arc_of(g, a.to, a.from) >= 0);
}

TEST_CASE("graphml: parallel links collapse, the largest strongly connected component is kept") {
  const std::string text = std::string(kHeader) +
                           "  <graph edgedefault=\"undirected\">\n"
                           "    <node id=\"a\"><data key=\"d0\">A &amp; B</data></node>\n"
                           "    <node id=\"b\" />\n    <node id=\"c\" />\n    <node id=\"d\"/>\n"
                           "    <node id=\"lonely\"/>\n"
                           "    <!-- a comment -->\n"
                           "    <edge source=\"a\" target=\"b\" />\n"
                           "    <edge source=\"b\" target=\"a\"><data key=\"d0\">x</data></edge>\n"
                           "    <edge source=\"b\" target=\"c\" />\n"
                           "    <edge source=\"c\" target=\"d\" directed=\"true\" />\n"
                           "  </graph>\n</graphml>\n";
  const te::topology g = graphml(text);
  CHECK(g.nodes == 3);  // d is reachable but cannot come back; lonely has no link
  CHECK(g.arc_count() == 4);
  CHECK(g.node_names == std::vector<std::string>{"a", "b", "c"});
  CHECK(te_test::arc_of(g, 0, 1) >= 0);
  CHECK(te_test::arc_of(g, 2, 1) >= 0);
}

TEST_CASE("graphml: malformed files name the file and line") {
  auto body = [](const std::string& graph) {
    return std::string(kHeader) + graph + "</graphml>\n";
  };
  CHECK(error_of([&] {
          graphml(body("  <graph>\n    <node id=\"0\">\n  </graph>\n"));
        }).find("t.graphml:6: end tag </graph> does not match <node> opened on line 5") !=
        std::string::npos);
  CHECK(error_of([&] {
          graphml(
              body("  <graph>\n <node id=\"0\"/><node id=\"1\"/>\n"
                   "<edge source=\"0\" target=\"7\"/>\n  </graph>\n"));
        }).find("t.graphml:6: edge target '7' is not a declared node") != std::string::npos);
  CHECK(error_of([&] {
          graphml(body("  <graph>\n <node id=\"0\" id=\"1\"/>\n</graph>\n"));
        }).find("t.graphml:5: attribute 'id' repeated") != std::string::npos);
  CHECK(error_of([&] {
          graphml(body("  <graph>\n <node id=\"&nbsp;\"/>\n</graph>\n"));
        }).find("t.graphml:5: unknown entity '&nbsp;'") != std::string::npos);
  CHECK(error_of([&] {
          graphml(std::string(kHeader) + "  <graph>\n");
        }).find("t.graphml:4: element <graph> is never closed") != std::string::npos);
  CHECK(error_of([&] { graphml(body("")); }).find("no <graph> element") != std::string::npos);
  CHECK(error_of([&] {
          graphml(body("  <graph>\n <node id=\"0\"/><node id=\"0\"/>\n</graph>\n"));
        }).find("t.graphml:5: node id '0' appears twice") != std::string::npos);
  CHECK(error_of([&] {
          graphml("<graphml></graphml> trailing");
        }).find("t.graphml:1: content after the root element") != std::string::npos);
  CHECK(error_of([&] { graphml("<!DOCTYPE x><graphml/>"); }).find("DOCTYPE") != std::string::npos);
  CHECK(error_of([&] {
          graphml(body("  <graph>\n <node id=\"0\"/>\n</graph>\n"));
        }).find("fewer than 2 nodes") != std::string::npos);
  CHECK(error_of([&] { te::load_topology("/nonexistent/x.graphml"); }).find("cannot open") !=
        std::string::npos);
  CHECK(error_of([&] { te::load_topology("topology.txt"); }).find("unknown topology format") !=
        std::string::npos);
}

TEST_CASE("xml: entities, character references, CDATA and comments") {
  const auto e = te::xml::parse(
      "<?xml version='1.0'?><r a='x&lt;y' b=\"&#65;&#x42;\">t&gt;<!-- c --><![CDATA[<raw>]]>"
      "<k/></r>",
      "x.xml");
  CHECK(e.name == "r");
  CHECK(*e.attribute("a") == "x<y");
  CHECK(*e.attribute("b") == "AB");
  CHECK(e.text == "t><raw>");
  CHECK(e.children.size() == 1);
}

TEST_CASE("json: b4-teavar and toy-network load by node id with capacities") {
  const te::topology b4 = te::load_topology(data_file("b4-teavar.json"));
  CHECK(b4.nodes == 12);
  CHECK(b4.arc_count() == 38);
  for (const auto& a : b4.arcs) CHECK(a.capacity == 5000.0);
  // Ids, not positions: the file lists node 4 before node 3.
  for (std::int32_t u = 0; u < b4.nodes; ++u)
    CHECK(b4.node_names[static_cast<std::size_t>(u)] == std::to_string(u));
  CHECK(te_test::arc_of(b4, 1, 4) >= 0);
  const te::topology toy = te::load_topology(data_file("toy-network.json"), 7.0);
  CHECK(toy.nodes == 6);
  CHECK(toy.arc_count() == 14);
  for (const auto& a : toy.arcs) CHECK(a.capacity == 7.0);
}

TEST_CASE("json: malformed node-link files name the line") {
  auto parse = [](const std::string& text) {
    return te::parse_node_link_json(text, "n.json", "n");
  };
  CHECK(error_of([&] {
          parse(
              "{\"nodes\": [{\"id\": 0}, {\"id\": 1}],\n \"links\": [\n{\"source\": 0, "
              "\"target\": 1, \"capacity\": -3}]}");
        }).find("n.json:3: \"capacity\" must be a finite number >= 0") != std::string::npos);
  CHECK(error_of([&] {
          parse(
              "{\"nodes\": [{\"id\": 0}, {\"id\": 1}],\n \"links\": [\n{\"source\": 0, "
              "\"target\": 5}]}");
        }).find("n.json:3: link target is not a listed node") != std::string::npos);
  CHECK(error_of([&] {
          parse("{\"nodes\": [{\"id\": 0}, {\"id\": 0}], \"links\": []}");
        }).find("appears twice") != std::string::npos);
  CHECK(error_of([&] { parse("{\"nodes\": [}"); }).find("n.json:1:") != std::string::npos);
  CHECK(error_of([&] { parse("{\"links\": []}"); }).find("\"nodes\"") != std::string::npos);
}

TEST_CASE("traffic: gravity is seeded, zero on the diagonal and sums to about total_demand") {
  const te::topology g = te::load_topology(data_file("Uninett2010.graphml"));
  const auto p = te::default_traffic_parameters("Uninett2010");
  CHECK(p.known_topology);
  CHECK(p.gravity_total_demand == 1250.0);
  const auto a = te::generate_traffic(g, te::traffic_model::gravity, p, 2.0, 7);
  const auto b = te::generate_traffic(g, te::traffic_model::gravity, p, 2.0, 7);
  const auto c = te::generate_traffic(g, te::traffic_model::gravity, p, 2.0, 8);
  CHECK(a == b);
  CHECK(a != c);
  const auto n = static_cast<std::size_t>(g.nodes);
  for (std::size_t u = 0; u < n; ++u) CHECK(a[u * n + u] == 0.0);
  const double total = std::accumulate(a.begin(), a.end(), 0.0);
  // frac sums to 1 over all pairs up to the diagonal correction; noise sd frac/4 averages out.
  CHECK(total == doctest::Approx(2.0 * 1250.0).epsilon(0.05));
  CHECK(te::commodities_of(a, g.nodes).size() == 74u * 73u);
}

TEST_CASE("traffic: uniform, bimodal and Poisson respect their ranges and means") {
  const te::topology g = te::load_topology(data_file("Uninett2010.graphml"));
  auto p = te::default_traffic_parameters("Uninett2010");
  const auto u = te::generate_traffic(g, te::traffic_model::uniform, p, 1.0, 3);
  for (const double x : u) CHECK((x >= 0.0 && x <= 0.46));
  const auto bm = te::generate_traffic(g, te::traffic_model::bimodal, p, 1.0, 3);
  std::size_t high = 0, off_diagonal = 0;
  for (std::size_t q = 0; q < bm.size(); ++q) {
    if (q % 75 == 0) continue;  // diagonal of a 74 x 74 row-major matrix
    ++off_diagonal;
    CHECK(((bm[q] >= 0.1 && bm[q] <= 0.2) || (bm[q] >= 0.4 && bm[q] <= 0.8)));
    if (bm[q] >= 0.4) ++high;
  }
  CHECK(static_cast<double>(high) / static_cast<double>(off_diagonal) ==
        doctest::Approx(0.2).epsilon(0.15));
  // Poisson: sample means of small and huge lambdas.
  popalloc::random_source rng(11);
  for (const double lambda : {3.0, 50.0, 1e6, 2e11}) {
    double sum = 0.0;
    const int draws = 20000;
    for (int q = 0; q < draws; ++q) sum += popalloc::poisson(rng, lambda);
    CHECK(sum / draws == doctest::Approx(lambda).epsilon(4.0 / std::sqrt(lambda * draws) + 1e-9));
  }
  const auto intra = te::generate_traffic(g, te::traffic_model::poisson_high_intra, p, 1.0, 3);
  const auto inter = te::generate_traffic(g, te::traffic_model::poisson_high_inter, p, 1.0, 3);
  for (const double x : intra) CHECK(x >= 0.0);
  CHECK(std::accumulate(inter.begin(), inter.end(), 0.0) > 0.0);
  CHECK_THROWS_AS(te::generate_traffic(g, te::traffic_model::gravity, p, -1.0, 3),
                  popalloc::invalid_options);
  CHECK_THROWS_AS(te::parse_traffic_model("zipf"), popalloc::invalid_options);
}
