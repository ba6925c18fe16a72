// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Traffic-matrix models of POP's TE benchmark (gravity, uniform, bimodal, Poisson with
/// hop decay) with POP's per-topology parameters, a scale factor and an explicit seed.
///
/// Random draws use popalloc::random_source (random.hpp: mt19937_64 with popalloc's own uniform,
/// normal and Poisson transforms), so a seed gives the same matrix with every standard library.
/// POP's published matrices were drawn by numpy: these are matrices of the same models, not the
/// same draws.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "popalloc/error.hpp"
#include "popalloc/random.hpp"
#include "popalloc/te/topology.hpp"

namespace popalloc::te {

enum class traffic_model : std::uint8_t {
  gravity = 0,
  uniform = 1,
  bimodal = 2,
  poisson_high_intra = 3,
  poisson_high_inter = 4,
};

/// \brief "gravity", "uniform", "bimodal", "poisson-high-intra", "poisson-high-inter".
inline const char* to_string(traffic_model m) {
  switch (m) {
    case traffic_model::gravity:
      return "gravity";
    case traffic_model::uniform:
      return "uniform";
    case traffic_model::bimodal:
      return "bimodal";
    case traffic_model::poisson_high_intra:
      return "poisson-high-intra";
    case traffic_model::poisson_high_inter:
      return "poisson-high-inter";
  }
  return "unknown";
}

/// \brief Parses a model name; \throws invalid_options naming the accepted ones.
inline traffic_model parse_traffic_model(const std::string& name) {
  for (const auto m : {traffic_model::gravity, traffic_model::uniform, traffic_model::bimodal,
                       traffic_model::poisson_high_intra, traffic_model::poisson_high_inter})
    if (name == to_string(m)) return m;
  throw invalid_options("unknown traffic model '" + name +
                        "' (gravity, uniform, bimodal, poisson-high-intra, poisson-high-inter)");
}

/// \brief Parameters of every model (POP `lib/problems.py`, PROBLEM_ARGS).
struct traffic_parameters {
  double gravity_total_demand = 1000.0;
  double uniform_max_demand = 0.1;
  double bimodal_fraction = 0.2;
  double bimodal_low_min = 0.0, bimodal_low_max = 0.05;
  double bimodal_high_min = 0.1, bimodal_high_max = 0.2;
  double intra_decay = 0.1, intra_lambda = 1e9, intra_const = 5.5e-7;
  double inter_decay = 0.9, inter_lambda = 1e3, inter_const = 1.8e-4;
  bool known_topology = false;  ///< false: the generic defaults above were used
};

/// \brief POP's parameters for `topology_name` (its scripts); other names get the generic
/// defaults of traffic_parameters (known_topology = false).
inline traffic_parameters default_traffic_parameters(const std::string& topology_name) {
  struct row {
    const char* name;
    double gravity, uniform, low_min, low_max, high_min, high_max, a_decay, a_lambda, a_const,
        e_decay, e_lambda, e_const;
  };
  static constexpr row known_topologies[] = {
      {"Cogentco", 1200, 0.06, 0, 0.03, 0.06, 0.12, 0.1, 8e9, 5.75e-8, 0.9, 1e2, 1.05e-3},
      {"Colt", 750, 0.065, 0, 0.0325, 0.065, 0.13, 0.1, 1.35e8, 2.4e-6, 0.9, 1e3, 9.5e-5},
      {"Deltacom", 1500, 0.25, 0, 0.125, 0.25, 0.5, 0.1, 2.05e6, 2.5e-4, 0.9, 1e3, 2.85e-4},
      {"DialtelecomCz", 1150, 0.125, 0, 0.06, 0.12, 0.24, 0.1, 2e12, 3.0e-10, 0.9, 1e3, 2.75e-4},
      {"GtsCe", 500, 0.05, 0, 0.025, 0.05, 0.1, 0.1, 2e8, 2.25e-6, 0.9, 1e3, 8.5e-5},
      {"Interoute", 1320, 0.22, 0, 0.11, 0.22, 0.44, 0.1, 2.5e7, 2.30e-5, 0.9, 1e3, 2.7e-4},
      {"Ion", 1200, 0.15, 0, 0.075, 0.15, 0.30, 0.1, 7e9, 9.0e-8, 0.9, 1e3, 2.6e-4},
      {"Kdl", 1500, 0.005, 0, 0.00275, 0.0055, 0.011, 0.35, 8e9, 4.3e-9, 0.9, 1e4, 3.3e-6},
      {"TataNld", 1000, 0.1, 0.02, 0.04, 0.08, 0.16, 0.1, 1e9, 5.5e-7, 0.9, 1e3, 1.8e-4},
      {"Uninett2010", 1250, 0.46, 0.1, 0.2, 0.4, 0.8, 1e-3, 2e14, 5.0e-10, 0.9, 1e3, 4.15e-4},
      {"UsCarrier", 666, 0.05, 0.01, 0.02, 0.04, 0.08, 0.25, 3.5e6, 3.0e-5, 0.9, 1e3, 1.25e-4},
      {"erdos-renyi-1260231677", 500000, 1.0, 0, 0.5, 1, 2, 1e-3, 5e13, 2e-9, 0.75, 1e3, 1.75e-3},
  };
  traffic_parameters p;
  for (const row& r : known_topologies) {
    if (topology_name != r.name) continue;
    p.gravity_total_demand = r.gravity;
    p.uniform_max_demand = r.uniform;
    p.bimodal_fraction = 0.2;
    p.bimodal_low_min = r.low_min;
    p.bimodal_low_max = r.low_max;
    p.bimodal_high_min = r.high_min;
    p.bimodal_high_max = r.high_max;
    p.intra_decay = r.a_decay;
    p.intra_lambda = r.a_lambda;
    p.intra_const = r.a_const;
    p.inter_decay = r.e_decay;
    p.inter_lambda = r.e_lambda;
    p.inter_const = r.e_const;
    p.known_topology = true;
  }
  return p;
}

namespace detail {

/// Hop counts between all pairs (BFS per source), row-major n x n; -1 if unreachable.
inline std::vector<std::int32_t> hop_counts(const topology& g) {
  const auto n = static_cast<std::size_t>(g.nodes);
  std::vector<std::int32_t> hops(n * n, -1), queue(n);
  for (std::size_t s = 0; s < n; ++s) {
    std::int32_t* row = hops.data() + s * n;
    std::size_t head = 0, tail = 0;
    row[s] = 0;
    queue[tail++] = static_cast<std::int32_t>(s);
    while (head < tail) {
      const auto u = static_cast<std::size_t>(queue[head++]);
      for (auto p = g.out_offset[u]; p < g.out_offset[u + 1]; ++p) {
        const auto v = static_cast<std::size_t>(
            g.arcs[static_cast<std::size_t>(g.out_arc[static_cast<std::size_t>(p)])].to);
        if (row[v] < 0) {
          row[v] = row[u] + 1;
          queue[tail++] = static_cast<std::int32_t>(v);
        }
      }
    }
  }
  return hops;
}

}  // namespace detail

/// \brief Generates a traffic matrix (row-major n x n, zero diagonal, entries >= 0) of `model`,
/// multiplied by `scale`. \throws invalid_options for a scale or parameters that are not finite
/// and >= 0.
inline std::vector<double> generate_traffic(const topology& g, traffic_model model,
                                            const traffic_parameters& p, double scale,
                                            std::uint64_t seed) {
  g.validate();
  if (!std::isfinite(scale) || scale < 0.0)
    throw invalid_options("traffic scale factor must be finite and >= 0");
  for (const double v :
       {p.gravity_total_demand, p.uniform_max_demand, p.bimodal_fraction, p.bimodal_low_min,
        p.bimodal_low_max, p.bimodal_high_min, p.bimodal_high_max, p.intra_decay, p.intra_lambda,
        p.intra_const, p.inter_decay, p.inter_lambda, p.inter_const})
    if (!std::isfinite(v) || v < 0.0)
      throw invalid_options("traffic-matrix parameters must be finite and >= 0");
  if (p.bimodal_fraction > 1.0) throw invalid_options("bimodal fraction must be <= 1");
  const auto n = static_cast<std::size_t>(g.nodes);
  std::vector<double> d(n * n, 0.0);
  random_source rng(seed);
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * rng.unit(); };
  switch (model) {
    case traffic_model::gravity: {
      std::vector<double> out(n, 0.0), in(n, 0.0);
      for (const arc& a : g.arcs) {
        out[static_cast<std::size_t>(a.from)] += a.capacity;
        in[static_cast<std::size_t>(a.to)] += a.capacity;
      }
      double total_out = 0.0, total_in = 0.0;
      for (std::size_t u = 0; u < n; ++u) {
        total_out += out[u];
        total_in += in[u];
      }
      for (std::size_t u = 0; u < n; ++u)
        for (std::size_t v = 0; v < n; ++v) {
          if (u == v) continue;
          const double rest = total_in - in[u];
          const double frac =
              total_out > 0.0 && rest > 0.0 ? (out[u] / total_out) * in[v] / rest : 0.0;
          const double draw = frac + frac / 4.0 * standard_normal(rng);
          d[u * n + v] = std::max(draw, 0.0) * p.gravity_total_demand;
        }
      break;
    }
    case traffic_model::uniform:
      for (std::size_t u = 0; u < n; ++u)
        for (std::size_t v = 0; v < n; ++v)
          if (u != v) d[u * n + v] = uniform(0.0, p.uniform_max_demand);
      break;
    case traffic_model::bimodal:
      for (std::size_t u = 0; u < n; ++u)
        for (std::size_t v = 0; v < n; ++v) {
          if (u == v) continue;
          const bool high = rng.unit() < p.bimodal_fraction;
          d[u * n + v] = high ? uniform(p.bimodal_high_min, p.bimodal_high_max)
                              : uniform(p.bimodal_low_min, p.bimodal_low_max);
        }
      break;
    case traffic_model::poisson_high_intra:
    case traffic_model::poisson_high_inter: {
      const bool intra = model == traffic_model::poisson_high_intra;
      const double decay = intra ? p.intra_decay : p.inter_decay;
      const double lambda = intra ? p.intra_lambda : p.inter_lambda;
      const double factor = intra ? p.intra_const : p.inter_const;
      const auto hops = detail::hop_counts(g);
      for (std::size_t u = 0; u < n; ++u)
        for (std::size_t v = 0; v < n; ++v) {
          if (u == v || hops[u * n + v] < 0) continue;
          d[u * n + v] = poisson(rng, lambda * std::pow(decay, hops[u * n + v])) * factor;
        }
      break;
    }
  }
  for (double& x : d) x *= scale;
  return d;
}

}  // namespace popalloc::te
