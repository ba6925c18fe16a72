// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Seeded random draws that every module shares (POP's partitions, the cluster job
/// generator and simulator, TE's traffic matrices): std::mt19937_64 with popalloc's own integer,
/// real, normal and Poisson conversions, so a seed gives the same draws with every standard
/// library (std::uniform_*_distribution and std::poisson_distribution are implementation-defined).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace popalloc {

/// \brief Portable random numbers: the same sequence for a seed with every standard library.
class random_source {
 public:
  explicit random_source(std::uint64_t seed) : engine_(seed) {}

  /// \brief Uniform integer in [0, bound), bound >= 1, by rejection (no modulo bias).
  std::uint64_t below(std::uint64_t bound) {
    if (bound <= 1) return 0;
    // Reject the top partial block so every residue is equally likely.
    const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() -
                                std::numeric_limits<std::uint64_t>::max() % bound;
    std::uint64_t x = engine_();
    while (x >= limit) x = engine_();
    return x % bound;
  }

  /// \brief Uniform double in [0, 1) from 53 random bits.
  double unit() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  std::mt19937_64& engine() { return engine_; }

 private:
  std::mt19937_64 engine_;
};

/// \brief Standard normal by Box-Muller (one value per call: simple and reproducible).
inline double standard_normal(random_source& rng) {
  double u = rng.unit();
  while (u <= 0.0) u = rng.unit();
  const double v = rng.unit();
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * 3.14159265358979323846 * v);
}

/// \brief Poisson(lambda): multiplication method below 30, Hormann's PTRS (transformed rejection
/// with squeeze) above; exact in distribution for every lambda a double can hold.
inline double poisson(random_source& rng, double lambda) {
  if (!(lambda > 0.0)) return 0.0;
  if (lambda < 30.0) {
    const double limit = std::exp(-lambda);
    double product = rng.unit();
    double k = 0.0;
    while (product > limit) {
      product *= rng.unit();
      k += 1.0;
    }
    return k;
  }
  const double slam = std::sqrt(lambda), loglam = std::log(lambda);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4), v_r = 0.9277 - 3.6224 / (b - 2.0);
  for (;;) {
    const double u = rng.unit() - 0.5, v = rng.unit();
    const double us = 0.5 - std::abs(u);
    const double k = std::floor((2.0 * a / us + b) * u + lambda + 0.43);
    if (us >= 0.07 && v <= v_r) return k;
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <=
        -lambda + k * loglam - std::lgamma(k + 1.0))
      return k;
  }
}

}  // namespace popalloc
