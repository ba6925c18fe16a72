// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Checks a placement against every constraint of the shard placement MILP and measures it
/// (new replicas, load deviation).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "popalloc/lb/problem.hpp"

namespace popalloc::lb {

/// \brief Tolerances of check(): loads are compared to the band with `load_tolerance * mean`
/// slack, fraction sums to 1 within `fraction_tolerance`.
struct check_tolerance {
  double load_tolerance = 1e-6;
  double fraction_tolerance = 1e-6;
};

/// \brief The verdict and the measurements of one placement.
struct check_report {
  bool feasible = false;
  std::string violation;          ///< the first violated constraint, in words (empty when feasible)
  std::int64_t new_replicas = 0;  ///< sum_ij (1 - a_ij) x_ij: "shards moved" in POP's benchmark
  std::int64_t replicas = 0;      ///< sum_ij x_ij
  /// max_i |load_i - mean| / mean: POP's "max load deviation".
  double max_load_deviation = 0.0;
  double min_server_load = 0.0;
  double max_server_load = 0.0;
  std::vector<double> server_load;    ///< sum_j l_j r_ij
  std::vector<double> server_memory;  ///< sum_j mu_j x_ij
};

/// \brief Checks `p` for `prob`: one entry per shard, valid distinct servers, fractions >= 0
/// summing to 1, at least min(R, N) replicas (and no idle replica when R > 1, POP's
/// x <= r + 0.9999), memory and the load band. Always measures; `feasible` says whether all hold.
inline check_report check(const problem& prob, const placement& p,
                          const check_tolerance& tol = {}) {
  check_report out;
  const std::size_t n = prob.server_count();
  out.server_load.assign(n, 0.0);
  out.server_memory.assign(n, 0.0);
  auto fail = [&](const std::string& what) {
    if (out.violation.empty()) out.violation = what;
  };
  if (p.shards.size() != prob.shards()) {
    fail("placement has " + std::to_string(p.shards.size()) + " shards, problem has " +
         std::to_string(prob.shards()));
    return out;
  }
  const bool have_current = !prob.current.shards.empty();
  std::vector<std::int64_t> seen(n, -1);
  for (std::size_t j = 0; j < p.shards.size(); ++j) {
    double sum = 0.0;
    std::int32_t count = 0;
    for (const route& r : p.shards[j]) {
      if (r.server < 0 || r.server >= prob.servers) {
        fail("shard " + std::to_string(j) + " is on unknown server " + std::to_string(r.server));
        continue;
      }
      const auto i = static_cast<std::size_t>(r.server);
      if (seen[i] == static_cast<std::int64_t>(j)) {
        fail("shard " + std::to_string(j) + " lists server " + std::to_string(i) + " twice");
        continue;
      }
      seen[i] = static_cast<std::int64_t>(j);
      if (!std::isfinite(r.fraction) || r.fraction < 0.0 ||
          r.fraction > 1.0 + tol.fraction_tolerance)
        fail("shard " + std::to_string(j) + " has routing fraction " + std::to_string(r.fraction) +
             " on server " + std::to_string(i));
      if (prob.required_replicas() > 1 && r.fraction <= 0.0)
        fail("shard " + std::to_string(j) + " has an idle replica on server " + std::to_string(i) +
             " (replication > 1 forbids idle replicas)");
      sum += r.fraction;
      ++count;
      out.server_load[i] += prob.load[j] * r.fraction;
      out.server_memory[i] += prob.memory[j];
      if (!(have_current && prob.current.holds(j, r.server))) ++out.new_replicas;
    }
    out.replicas += count;
    if (std::abs(sum - 1.0) > tol.fraction_tolerance)
      fail("routing fractions of shard " + std::to_string(j) + " sum to " + std::to_string(sum));
    if (count < prob.required_replicas())
      fail("shard " + std::to_string(j) + " has " + std::to_string(count) + " replicas, needs " +
           std::to_string(prob.required_replicas()));
  }
  const double mean = prob.mean_load();
  const double lo = prob.lower(), hi = prob.upper();
  const double slack = tol.load_tolerance * mean;
  out.min_server_load = out.server_load.empty() ? 0.0 : out.server_load[0];
  out.max_server_load = out.min_server_load;
  for (std::size_t i = 0; i < n; ++i) {
    const double l = out.server_load[i];
    out.min_server_load = std::min(out.min_server_load, l);
    out.max_server_load = std::max(out.max_server_load, l);
    out.max_load_deviation = std::max(out.max_load_deviation, std::abs(l - mean) / mean);
    if (l < lo - slack || l > hi + slack)
      fail("server " + std::to_string(i) + " load " + std::to_string(l) + " outside [" +
           std::to_string(lo) + ", " + std::to_string(hi) + "]");
    if (out.server_memory[i] > prob.max_memory * (1.0 + 1e-12))
      fail("server " + std::to_string(i) + " memory " + std::to_string(out.server_memory[i]) +
           " exceeds " + std::to_string(prob.max_memory));
  }
  out.feasible = out.violation.empty();
  return out;
}

/// \brief The current placement as the answer when check() finds it feasible: it is then
/// optimal (no new replica). Loads read back from a file can lie a rounding error above the
/// band's edge, and a solver that looked for moves there would create replicas for nothing.
inline std::optional<lb_result> keep_balanced_current(const problem& prob, double seconds) {
  if (prob.current.shards.empty() || !check(prob, prob.current).feasible) return std::nullopt;
  lb_result out;
  out.status = lb_status::balanced;
  out.result = prob.current;
  out.seconds = seconds;
  return out;
}

/// \brief Number of replicas in `p` that are not in `current` (shards moved).
inline std::int64_t count_new_replicas(const placement& current, const placement& p) {
  std::int64_t moved = 0;
  for (std::size_t j = 0; j < p.shards.size(); ++j)
    for (const route& r : p.shards[j])
      if (!(j < current.shards.size() && current.holds(j, r.server))) ++moved;
  return moved;
}

}  // namespace popalloc::lb
