// SPDX-License-Identifier: Apache-2.0
// An independent placement checker for the load-balancing tests: it rebuilds the MILP's dense
// r and x matrices from a placement and evaluates every constraint of the MILP directly,
// sharing no code with popalloc/lb/checker.hpp.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <popalloc/lb/problem.hpp>

namespace lb_test {

struct verdict {
  bool ok = true;
  std::string why;
  long moved = 0;          // sum (1 - a) x
  double deviation = 0.0;  // max |load - mean| / mean
};

/// Every constraint of the MILP, on dense matrices. `tol` is relative to the mean load.
inline verdict independent_check(const popalloc::lb::problem& p, const popalloc::lb::placement& q,
                                 double tol = 1e-6) {
  verdict v;
  auto bad = [&](const std::string& what) {
    if (v.ok) v.why = what;
    v.ok = false;
  };
  const std::size_t S = p.load.size();
  const auto N = static_cast<std::size_t>(p.servers);
  if (q.shards.size() != S) {
    bad("wrong shard count");
    return v;
  }
  std::vector<std::vector<double>> r(N, std::vector<double>(S, 0.0));
  std::vector<std::vector<int>> x(N, std::vector<int>(S, 0)), a(N, std::vector<int>(S, 0));
  for (std::size_t j = 0; j < S; ++j) {
    for (const auto& e : q.shards[j]) {
      if (e.server < 0 || static_cast<std::size_t>(e.server) >= N) {
        bad("server out of range");
        continue;
      }
      const auto i = static_cast<std::size_t>(e.server);
      if (x[i][j]) bad("duplicate replica");
      x[i][j] = 1;
      r[i][j] += e.fraction;
    }
    if (!p.current.shards.empty())
      for (const auto& e : p.current.shards[j]) a[static_cast<std::size_t>(e.server)][j] = 1;
  }
  double total = 0.0;
  for (const double l : p.load) total += l;
  const double mean = total / static_cast<double>(N);
  const double lo = p.lower_bound >= 0 ? p.lower_bound : mean - mean * p.epsilon;
  const double hi = p.upper_bound >= 0 ? p.upper_bound : mean + mean * p.epsilon;
  const long R = std::min<long>(p.replication, static_cast<long>(N));
  for (std::size_t j = 0; j < S; ++j) {
    double routed = 0.0;
    long copies = 0;
    for (std::size_t i = 0; i < N; ++i) {
      if (r[i][j] < 0.0 || r[i][j] > 1.0 + 1e-9) bad("r out of [0, 1]");
      if (r[i][j] > x[i][j] + 1e-12) bad("r > x");
      if (R > 1 && x[i][j] > r[i][j] + 0.9999) bad("idle replica with R > 1");
      routed += r[i][j];
      copies += x[i][j];
      v.moved += (1 - a[i][j]) * x[i][j];
    }
    if (std::abs(routed - 1.0) > 1e-6)
      bad("shard " + std::to_string(j) + " routed " + std::to_string(routed));
    if (copies < R) bad("too few replicas");
  }
  for (std::size_t i = 0; i < N; ++i) {
    double load = 0.0, mem = 0.0;
    for (std::size_t j = 0; j < S; ++j) {
      load += p.load[j] * r[i][j];
      mem += p.memory[j] * x[i][j];
    }
    v.deviation = std::max(v.deviation, std::abs(load - mean) / mean);
    if (load < lo - tol * mean || load > hi + tol * mean)
      bad("server " + std::to_string(i) + " load " + std::to_string(load) + " outside band");
    if (mem > p.max_memory + 1e-9) bad("server " + std::to_string(i) + " memory");
  }
  return v;
}

}  // namespace lb_test
