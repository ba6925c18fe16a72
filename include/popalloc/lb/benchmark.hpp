// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief POP's load-balancing benchmark workload (LoadBalancerExecutable): zipf shard loads with
/// a new exponent every round, drawn by java.util.Random so seed 42 gives POP's exponents; and
/// drift_workload, shard popularity drifting round to round.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "popalloc/lb/problem.hpp"

namespace popalloc::lb {

/// \brief java.util.Random (48-bit LCG), enough of it for nextDouble(): the same seed gives the
/// same sequence as POP's Java harness.
class java_random {
 public:
  explicit java_random(std::int64_t seed)
      : state_((static_cast<std::uint64_t>(seed) ^ multiplier) & mask) {}

  /// \brief Uniform double in [0, 1) exactly as Java's nextDouble().
  double next_double() {
    const std::uint64_t hi = next(26), lo = next(27);
    return static_cast<double>((hi << 27) + lo) * 0x1.0p-53;
  }

 private:
  static constexpr std::uint64_t multiplier = 0x5DEECE66DULL;
  static constexpr std::uint64_t mask = (std::uint64_t{1} << 48) - 1;
  std::uint64_t next(int bits) {
    state_ = (state_ * multiplier + 0xBULL) & mask;
    return state_ >> (48 - bits);
  }
  std::uint64_t state_;
};

/// \brief Shard loads of one round: load_j = round(1e6 / (j + 1)^z) (Java Math.round).
inline std::vector<double> zipf_loads(std::size_t shards, double exponent) {
  std::vector<double> load(shards);
  for (std::size_t j = 0; j < shards; ++j)
    load[j] = std::floor(1e6 / std::pow(static_cast<double>(j + 1), exponent) + 0.5);
  return load;
}

/// \brief POP's initial placement for the base benchmark: shard j on server j mod N.
inline placement round_robin_placement(std::size_t shards, std::int32_t servers) {
  placement p;
  p.shards.resize(shards);
  for (std::size_t j = 0; j < shards; ++j)
    p.shards[j].push_back({static_cast<std::int32_t>(j % static_cast<std::size_t>(servers)), 1.0});
  return p;
}

/// \brief The rounds of POP's benchmark: each round draws z ~ U(0.25, 0.75) from the Java
/// generator and sets the loads; memory 1 per shard, `max_memory` per server.
class zipf_workload {
 public:
  zipf_workload(std::size_t shards, std::int32_t servers, std::int64_t seed,
                double max_memory = 16.0)
      : shards_(shards), servers_(servers), max_memory_(max_memory), random_(seed) {}

  /// \brief The next round's problem with `current` as the current placement; `exponent`
  /// receives z.
  problem next_round(const placement& current, double* exponent = nullptr) {
    const double z = 0.25 + random_.next_double() * 0.5;
    if (exponent != nullptr) *exponent = z;
    problem p;
    p.load = zipf_loads(shards_, z);
    p.memory.assign(shards_, 1.0);
    p.servers = servers_;
    p.max_memory = max_memory_;
    p.current = current;
    return p;
  }

 private:
  std::size_t shards_;
  std::int32_t servers_;
  double max_memory_;
  java_random random_;
};

/// \brief Shard popularity drifting round to round (a multiplicative random walk): round 0 has
/// zipf_loads(shards, 0.5), and every later round multiplies each shard's load by
/// exp(N(0, sigma^2)), independently per shard, so shards change rank over time (in
/// zipf_workload every shard keeps its rank and only the skew changes). Memory 1 per shard,
/// `max_memory` per server. The normal deviates come from std::mt19937_64(seed) by Box-Muller
/// (not std::normal_distribution, which differs between standard libraries), so a seed gives
/// the same rounds with every compiler.
class drift_workload {
 public:
  /// \throws invalid_problem unless 0 <= sigma <= 1.
  drift_workload(std::size_t shards, std::int32_t servers, std::int64_t seed, double sigma,
                 double max_memory = 16.0)
      : servers_(servers),
        sigma_(sigma),
        max_memory_(max_memory),
        load_(zipf_loads(shards, 0.5)),
        random_(static_cast<std::uint64_t>(seed)) {
    if (!(sigma >= 0.0 && sigma <= 1.0))
      throw invalid_problem("load balancing: drift sigma must be in [0, 1] (got " +
                            std::to_string(sigma) + ")");
  }

  /// \brief The next round's problem with `current` as the current placement; `exponent`
  /// receives NaN (the loads have no zipf exponent).
  problem next_round(const placement& current, double* exponent = nullptr) {
    if (exponent != nullptr) *exponent = std::numeric_limits<double>::quiet_NaN();
    if (!first_) {
      for (std::size_t j = 0; j < load_.size(); j += 2) {
        // Box-Muller: two independent N(0, 1) deviates from two uniforms in (0, 1).
        const double radius = std::sqrt(-2.0 * std::log(uniform()));
        const double angle = 2.0 * 3.14159265358979323846 * uniform();
        load_[j] *= std::exp(sigma_ * radius * std::cos(angle));
        if (j + 1 < load_.size()) load_[j + 1] *= std::exp(sigma_ * radius * std::sin(angle));
      }
    }
    first_ = false;
    problem p;
    p.load = load_;
    p.memory.assign(load_.size(), 1.0);
    p.servers = servers_;
    p.max_memory = max_memory_;
    p.current = current;
    return p;
  }

 private:
  /// Uniform in (0, 1): the top 53 bits, offset by half a step.
  double uniform() { return (static_cast<double>(random_() >> 11) + 0.5) * 0x1.0p-53; }

  std::int32_t servers_;
  double sigma_;
  double max_memory_;
  std::vector<double> load_;
  std::mt19937_64 random_;
  bool first_ = true;
};

}  // namespace popalloc::lb
