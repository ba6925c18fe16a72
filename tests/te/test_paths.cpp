// SPDX-License-Identifier: Apache-2.0
// Candidate paths: edge-disjoint (max-flow) and Yen's k shortest, against hand-computed and
// brute-force answers.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <set>
#include <vector>

#include <doctest/doctest.h>

#include "te_fixtures.hpp"

namespace te = popalloc::te;

namespace {

using pair_list = std::vector<std::pair<std::int32_t, std::int32_t>>;

std::vector<std::vector<std::int32_t>> paths_of(const te::path_set& s, std::int64_t q) {
  std::vector<std::vector<std::int32_t>> out;
  for (auto p = s.pair_offset[static_cast<std::size_t>(q)];
       p < s.pair_offset[static_cast<std::size_t>(q) + 1]; ++p)
    out.emplace_back(s.arcs.begin() + s.path_offset[static_cast<std::size_t>(p)],
                     s.arcs.begin() + s.path_offset[static_cast<std::size_t>(p) + 1]);
  return out;
}

/// True if `arcs` is a simple path from s to t.
bool simple_path(const te::topology& g, const std::vector<std::int32_t>& arcs, std::int32_t s,
                 std::int32_t t) {
  std::set<std::int32_t> seen{s};
  std::int32_t u = s;
  for (const auto e : arcs) {
    const auto& a = g.arcs[static_cast<std::size_t>(e)];
    if (a.from != u) return false;
    u = a.to;
    if (!seen.insert(u).second) return false;
  }
  return u == t && !arcs.empty();
}

/// Every simple s -> t path's length, sorted (brute force).
std::vector<double> all_path_lengths(const te::topology& g, const std::vector<double>& w,
                                     std::int32_t s, std::int32_t t) {
  std::vector<double> lengths;
  std::vector<char> on(static_cast<std::size_t>(g.nodes), 0);
  std::function<void(std::int32_t, double)> walk = [&](std::int32_t u, double length) {
    if (u == t) {
      lengths.push_back(length);
      return;
    }
    on[static_cast<std::size_t>(u)] = 1;
    for (auto p = g.out_offset[static_cast<std::size_t>(u)];
         p < g.out_offset[static_cast<std::size_t>(u) + 1]; ++p) {
      const auto e = g.out_arc[static_cast<std::size_t>(p)];
      const auto v = g.arcs[static_cast<std::size_t>(e)].to;
      if (!on[static_cast<std::size_t>(v)]) walk(v, length + w[static_cast<std::size_t>(e)]);
    }
    on[static_cast<std::size_t>(u)] = 0;
  };
  walk(s, 0.0);
  std::sort(lengths.begin(), lengths.end());
  return lengths;
}

}  // namespace

TEST_CASE("paths: edge-disjoint set of a hand-made graph, shortest first") {
  // 0 -> 3 directly, via 1, via 2 -> 1 -> 3 is not disjoint with via 1; via 2 -> 3.
  std::vector<te::arc> arcs;
  auto link = [&](std::int32_t u, std::int32_t v) {
    arcs.push_back({u, v, 10.0});
    arcs.push_back({v, u, 10.0});
  };
  link(0, 3);
  link(0, 1);
  link(1, 3);
  link(0, 2);
  link(2, 4);
  link(4, 3);
  link(2, 1);
  const te::topology g = te_test::graph_of(5, arcs);
  te::path_options o;
  o.k = 4;
  const auto s = te::compute_paths(g, pair_list{{0, 3}}, o);
  const auto paths = paths_of(s, 0);
  REQUIRE(paths.size() == 3);  // out-degree of 0 is 3
  CHECK(paths[0] == std::vector<std::int32_t>{te_test::arc_of(g, 0, 3)});
  CHECK(paths[1] == std::vector<std::int32_t>{te_test::arc_of(g, 0, 1), te_test::arc_of(g, 1, 3)});
  CHECK(paths[2].size() == 3);  // 0-2-4-3
  o.k = 2;
  CHECK(te::compute_paths(g, pair_list{{0, 3}}, o).paths() == 2);
}

TEST_CASE(
    "paths: edge-disjoint on Uninett2010 are simple, disjoint and as many as the cut allows") {
  const te::topology g = te::load_topology(te_test::data_file("Uninett2010.graphml"));
  pair_list pairs;
  for (std::int32_t s = 0; s < g.nodes; ++s)
    for (std::int32_t t = 0; t < g.nodes; ++t)
      if (s != t) pairs.emplace_back(s, t);
  te::path_options o;
  o.threads = 2;
  const auto set = te::compute_paths(g, pairs, o);
  o.threads = 1;
  const auto serial = te::compute_paths(g, pairs, o);
  CHECK(set.arcs == serial.arcs);  // thread count does not change the answer
  CHECK(set.path_offset == serial.path_offset);
  for (std::size_t q = 0; q < pairs.size(); ++q) {
    const auto [s, t] = pairs[q];
    const auto paths = paths_of(set, static_cast<std::int64_t>(q));
    REQUIRE(!paths.empty());
    CHECK(paths.size() <= 4u);
    const auto degree = std::min(
        g.out_offset[static_cast<std::size_t>(s) + 1] - g.out_offset[static_cast<std::size_t>(s)],
        g.in_offset[static_cast<std::size_t>(t) + 1] - g.in_offset[static_cast<std::size_t>(t)]);
    CHECK(paths.size() <= static_cast<std::size_t>(degree));
    std::set<std::int32_t> used;
    for (const auto& p : paths) {
      CHECK(simple_path(g, p, s, t));
      for (const auto e : p) CHECK(used.insert(e).second);
    }
    for (std::size_t r = 1; r < paths.size(); ++r) CHECK(paths[r - 1].size() <= paths[r].size());
  }
}

TEST_CASE("paths: Yen's k shortest match brute-force enumeration") {
  // A small strongly connected graph with distinct capacities (lengths 1/c).
  std::vector<te::arc> arcs;
  const double caps[] = {1.0, 2.0, 4.0, 8.0, 3.0, 5.0, 7.0};
  int q = 0;
  auto link = [&](std::int32_t u, std::int32_t v) {
    arcs.push_back({u, v, caps[q++ % 7]});
    arcs.push_back({v, u, caps[q++ % 7]});
  };
  link(0, 1);
  link(1, 2);
  link(2, 3);
  link(3, 0);
  link(0, 2);
  link(1, 4);
  link(4, 3);
  link(4, 5);
  link(5, 2);
  const te::topology g = te_test::graph_of(6, arcs);
  const auto w = te::arc_lengths(g, te::distance_metric::inverse_capacity);
  pair_list pairs;
  for (std::int32_t s = 0; s < g.nodes; ++s)
    for (std::int32_t t = 0; t < g.nodes; ++t)
      if (s != t) pairs.emplace_back(s, t);
  te::path_options o;
  o.method = te::path_method::k_shortest;
  o.k = 6;
  const auto set = te::compute_paths(g, pairs, o);
  for (std::size_t r = 0; r < pairs.size(); ++r) {
    const auto [s, t] = pairs[r];
    const auto expected = all_path_lengths(g, w, s, t);
    const auto paths = paths_of(set, static_cast<std::int64_t>(r));
    REQUIRE(paths.size() == std::min<std::size_t>(6, expected.size()));
    std::set<std::vector<std::int32_t>> distinct;
    for (std::size_t k = 0; k < paths.size(); ++k) {
      CHECK(simple_path(g, paths[k], s, t));
      CHECK(distinct.insert(paths[k]).second);
      double length = 0.0;
      for (const auto e : paths[k]) length += w[static_cast<std::size_t>(e)];
      CHECK(length == doctest::Approx(expected[k]).epsilon(1e-12));
    }
  }
}

TEST_CASE("paths: bad requests are rejected") {
  const te::topology g = te_test::graph_of(2, {{0, 1, 1.0}, {1, 0, 1.0}});
  CHECK_THROWS_AS(te::compute_paths(g, pair_list{{0, 0}}, te::path_options{}),
                  popalloc::invalid_problem);
  CHECK_THROWS_AS(te::compute_paths(g, pair_list{{0, 5}}, te::path_options{}),
                  popalloc::invalid_problem);
  te::path_options o;
  o.k = 0;
  CHECK_THROWS_AS(te::compute_paths(g, pair_list{{0, 1}}, o), popalloc::invalid_options);
}
