// SPDX-License-Identifier: Apache-2.0
// All-pairs path computation time: edge-disjoint (max-flow) and Yen's k shortest, on a topology
// file or on a generated Kdl-sized network (754 nodes, ~900 links, sparse like Kdl).
//   bench_te_paths [FILE.graphml|FILE.json] [--nodes N] [--links L] [--k K] [--threads T]
// Prints one line per method: pairs, paths, mean arcs per path, seconds.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <popalloc/random.hpp>
#include <popalloc/te.hpp>

namespace te = popalloc::te;

namespace {

/// A random connected sparse network: a random tree (each node links to an earlier one, biased
/// to recent nodes so the diameter is large, as in Kdl's long chains) plus extra random links.
te::topology generated(std::int32_t n, std::int32_t links, std::uint64_t seed) {
  popalloc::random_source rng(seed);
  std::vector<te::arc> arcs;
  auto link = [&](std::int32_t u, std::int32_t v) {
    arcs.push_back({u, v, 1000.0});
    arcs.push_back({v, u, 1000.0});
  };
  for (std::int32_t v = 1; v < n; ++v) {
    const auto window = static_cast<std::uint64_t>(std::min(v, 8));
    link(v, v - 1 - static_cast<std::int32_t>(rng.below(window)));
  }
  for (std::int32_t q = n - 1; q < links; ++q) {
    const auto u = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(n)));
    const auto v = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(n)));
    if (u != v) link(u, v);
  }
  std::vector<std::string> names;
  for (std::int32_t u = 0; u < n; ++u) names.push_back(std::to_string(u));
  return te::make_topology("generated", std::move(names), arcs);
}

}  // namespace

int main(int argc, char** argv) {
  std::string file;
  std::int32_t nodes = 754, links = 899;
  int k = 4, threads = 0;
  for (int a = 1; a < argc; ++a) {
    const std::string s = argv[a];
    if (s == "--nodes" && a + 1 < argc)
      nodes = std::stoi(argv[++a]);
    else if (s == "--links" && a + 1 < argc)
      links = std::stoi(argv[++a]);
    else if (s == "--k" && a + 1 < argc)
      k = std::stoi(argv[++a]);
    else if (s == "--threads" && a + 1 < argc)
      threads = std::stoi(argv[++a]);
    else
      file = s;
  }
  const te::topology g = file.empty() ? generated(nodes, links, 1) : te::load_topology(file);
  std::vector<std::pair<std::int32_t, std::int32_t>> pairs;
  for (std::int32_t s = 0; s < g.nodes; ++s)
    for (std::int32_t t = 0; t < g.nodes; ++t)
      if (s != t) pairs.emplace_back(s, t);
  std::printf("%s: %d nodes, %d arcs, %zu pairs, k = %d, threads = %d\n", g.name.c_str(), g.nodes,
              g.arc_count(), pairs.size(), k, threads);
  for (const auto method : {te::path_method::edge_disjoint, te::path_method::k_shortest}) {
    te::path_options o;
    o.k = k;
    o.method = method;
    o.threads = threads;
    const auto start = std::chrono::steady_clock::now();
    const te::path_set set = te::compute_paths(g, pairs, o);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("  %-13s %lld paths, %.2f arcs per path, %.2f s\n",
                method == te::path_method::edge_disjoint ? "edge-disjoint" : "yen",
                static_cast<long long>(set.paths()),
                static_cast<double>(set.arcs.size()) / static_cast<double>(set.paths()), seconds);
  }
  return 0;
}
