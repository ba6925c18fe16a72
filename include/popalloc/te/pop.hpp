// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief POP for traffic engineering (POP's recipe): optionally split heavy commodities,
/// deal the commodities (pieces) randomly over k sub-problems that each see the whole graph with
/// capacities c/k, solve every sub-problem with any TE solver, and add the flows up.
///
/// The merged flow is feasible for the full problem: every part's loads fit c/k and the parts'
/// capacities add up to c; a commodity's pieces carry at most their shares of its demand.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <queue>
#include <tuple>
#include <utility>
#include <vector>

#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/error.hpp"
#include "popalloc/pop/partition.hpp"
#include "popalloc/pop/pop_solver.hpp"
#include "popalloc/pop/split.hpp"
#include "popalloc/te/flow.hpp"
#include "popalloc/te/instance.hpp"

namespace popalloc::te {

struct pop_options {
  int parts = 4;                ///< k
  double split_fraction = 0.0;  ///< POP's f: N + round(N f) pieces after halving heavy ones
  std::uint64_t seed = 0;       ///< partition seed
  int threads = 0;              ///< parts solved at once (0: the OpenMP default)
};

/// \brief POP's split_entities: repeatedly halve the piece with the largest demand until there
/// are N + round(N f) pieces (ties: the lower commodity, then the earlier piece). Returns the
/// pieces per commodity with their shares of its demand.
inline pop::client_split split_commodities(const std::vector<double>& demands, double fraction) {
  if (!std::isfinite(fraction) || fraction < 0.0)
    throw invalid_options("split fraction must be finite and >= 0");
  const auto n = static_cast<std::int64_t>(demands.size());
  const auto target =
      n + static_cast<std::int64_t>(std::llround(static_cast<double>(n) * fraction));
  // (demand, -commodity, -serial): the largest demand first, ties to the lower commodity.
  using entry = std::tuple<double, std::int64_t, std::int64_t>;
  std::priority_queue<entry> heap;
  std::int64_t serial = 0;
  for (std::int64_t k = 0; k < n; ++k)
    heap.emplace(demands[static_cast<std::size_t>(k)], -k, -serial++);
  std::int64_t count = n;
  while (count < target && !heap.empty()) {
    const auto [d, neg_k, neg_serial] = heap.top();
    heap.pop();
    (void)neg_serial;
    heap.emplace(d / 2.0, neg_k, -serial++);
    heap.emplace(d / 2.0, neg_k, -serial++);
    ++count;
  }
  std::vector<std::vector<double>> piece_demand(demands.size());
  while (!heap.empty()) {
    const auto [d, neg_k, neg_serial] = heap.top();
    heap.pop();
    (void)neg_serial;
    piece_demand[static_cast<std::size_t>(-neg_k)].push_back(d);
  }
  pop::client_split split;
  for (std::size_t k = 0; k < demands.size(); ++k) {
    for (const double d : piece_demand[k]) {
      split.client.push_back(static_cast<std::int64_t>(k));
      split.share.push_back(demands[k] > 0.0 ? d / demands[k] : 1.0);
    }
    split.piece_offset.push_back(static_cast<std::int64_t>(split.client.size()));
  }
  return split;
}

/// \brief Sub-instance of `inst` with the given pieces (commodity and share) and capacities
/// divided by `parts`; paths of a piece are its commodity's.
inline instance pop_sub_instance(const instance& inst, const pop::client_split& split,
                                 const std::vector<std::int64_t>& pieces, int parts) {
  instance sub;
  sub.graph = inst.graph;
  for (arc& a : sub.graph.arcs) a.capacity /= static_cast<double>(parts);
  for (const auto q : pieces) {
    const auto k = static_cast<std::size_t>(split.client[static_cast<std::size_t>(q)]);
    commodity c = inst.commodities[k];
    c.demand *= split.share[static_cast<std::size_t>(q)];
    sub.commodities.push_back(c);
    for (auto p = inst.paths.pair_offset[k]; p < inst.paths.pair_offset[k + 1]; ++p) {
      sub.paths.arcs.insert(
          sub.paths.arcs.end(),
          inst.paths.arcs.begin() + inst.paths.path_offset[static_cast<std::size_t>(p)],
          inst.paths.arcs.begin() + inst.paths.path_offset[static_cast<std::size_t>(p) + 1]);
      sub.paths.path_offset.push_back(static_cast<std::int64_t>(sub.paths.arcs.size()));
    }
    sub.paths.pair_offset.push_back(sub.paths.paths());
  }
  return sub;
}

/// \brief POP over `solve_part(const instance&) -> result` (must be safe to call
/// concurrently when options.threads != 1). Returns the merged flow of the full instance with
/// its objective value; `bound` is NaN (the parts' bounds do not bound the full problem).
template <class SolvePart>
result solve_pop(const instance& inst, te_objective objective, const pop_options& options,
                 SolvePart&& solve_part) {
  inst.validate();
  if (options.parts < 1) throw invalid_options("POP needs k >= 1 sub-problems");
  const popalloc::detail::stopwatch clock;
  std::vector<double> demands;
  demands.reserve(inst.commodities.size());
  for (const auto& c : inst.commodities) demands.push_back(c.demand);
  const pop::client_split split = split_commodities(demands, options.split_fraction);
  const pop::partition assignment = pop::assign_pieces(split, options.parts, options.seed);
  auto outcome = pop::pop_solve(
      assignment,
      [&](int /*part*/, const std::vector<std::int64_t>& pieces) {
        std::pair<result, std::vector<std::int64_t>> r;
        if (pieces.empty()) return r;
        r.first = solve_part(pop_sub_instance(inst, split, pieces, options.parts));
        r.second = pieces;
        return r;
      },
      options.threads);
  result out;
  out.kind = objective;
  out.pop_parts = options.parts;
  out.path_flow.assign(static_cast<std::size_t>(inst.path_count()), 0.0);
  out.status = solve_status::converged;
  for (std::size_t s = 0; s < outcome.results.size(); ++s) {
    const auto& [part, pieces] = outcome.results[s];
    std::int64_t local = 0;
    for (const auto q : pieces) {
      const auto k = static_cast<std::size_t>(split.client[static_cast<std::size_t>(q)]);
      for (auto p = inst.paths.pair_offset[k]; p < inst.paths.pair_offset[k + 1]; ++p)
        out.path_flow[static_cast<std::size_t>(p)] +=
            part.path_flow[static_cast<std::size_t>(local++)];
    }
    out.iterations += part.iterations;
    out.solves += part.solves;
    if (!pieces.empty()) out.status = worse(out.status, part.status);
  }
  out.part_seconds = outcome.seconds;
  out.objective = objective_value(summarize(inst, out.path_flow), objective);
  out.seconds = clock.seconds();
  return out;
}

}  // namespace popalloc::te
