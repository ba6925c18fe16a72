// SPDX-License-Identifier: Apache-2.0
#include "generator.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

namespace popalloc_solve {
namespace {

/// Uniform in [0, 1) from the top 53 bits: exactly the same on every platform.
template <class Engine>
double uniform(Engine& engine) {
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

/// SplitMix64 (Steele, Lea, Flood 2014) started at a hash of (seed, job): every job has its own
/// stream, so any slice of the jobs is generated without the jobs before it (MPI ranks generate
/// only their shard) and the instance does not depend on how it is sliced.
class job_stream {
 public:
  job_stream(std::uint64_t seed, std::uint64_t job)
      : state_(mix(mix(seed + 0x5bd1e9955bd1e995u) + job * 0x9e3779b97f4a7c15u)) {}
  std::uint64_t operator()() { return mix(state_ += 0x9e3779b97f4a7c15u); }

 private:
  static std::uint64_t mix(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }
  std::uint64_t state_;
};

struct job_class {
  double share;           ///< fraction of the jobs in this class
  double base_speed;      ///< throughput on generation 0
  double newest_speedup;  ///< throughput ratio newest / oldest generation
};

// Compute-bound jobs profit a lot from new hardware, memory-bound ones less, legacy jobs hardly
// at all, and a small class (new kernels) is built for the newest generation.
constexpr job_class kClasses[] = {
    {0.35, 1.0, 8.0},
    {0.30, 1.2, 3.0},
    {0.20, 0.8, 1.3},
    {0.15, 0.5, 20.0},
};
constexpr double kZeroProbability = 0.03;
constexpr double kNoiseLimit = 1.2;
constexpr double kCapacityDecay = 0.7;  // each generation has 0.7x the capacity of the previous

const job_class& draw_class(job_stream& engine) {
  double u = uniform(engine);
  for (const job_class& candidate : kClasses) {
    if (u < candidate.share) return candidate;
    u -= candidate.share;
  }
  return kClasses[std::size(kClasses) - 1];
}

double draw_weight(job_stream& engine) {
  const double u = uniform(engine);
  return u < 0.6 ? 1.0 : (u < 0.9 ? 2.0 : 4.0);
}

/// Multiplicative noise in [1/limit, limit], denser near 1 (log is triangular): lognormal-ish.
double draw_noise(job_stream& engine) {
  const double spread = uniform(engine) + uniform(engine) - 1.0;
  return std::exp(std::log(kNoiseLimit) * spread);
}

}  // namespace

instance generate_instance(const generator_settings& settings) {
  return generate_instance(settings, 0, settings.jobs);
}

instance generate_instance(const generator_settings& settings, std::int64_t first,
                           std::int64_t count) {
  // The capacities come from the seed alone, each job from its own stream (job_stream).
  std::mt19937_64 header(settings.seed);
  const Eigen::Index n = settings.jobs, m = settings.resources;
  instance result;
  auto& problem = result.problem;

  result.resource_names.reserve(static_cast<std::size_t>(m));
  for (Eigen::Index j = 0; j < m; ++j) result.resource_names.push_back("r" + std::to_string(j));
  double share_sum = 0.0;
  for (Eigen::Index j = 0; j < m; ++j)
    share_sum += std::pow(kCapacityDecay, static_cast<double>(j));
  const double total_capacity = static_cast<double>(n) * (0.4 + 0.2 * uniform(header));
  problem.capacity.resize(m);
  for (Eigen::Index j = 0; j < m; ++j) {
    const double share = std::pow(kCapacityDecay, static_cast<double>(j)) / share_sum;
    // Whole units, like machines; at least one so every generation is open.
    problem.capacity[j] = std::max(1.0, std::round(total_capacity * share));
  }

  problem.throughput.resize(count, m);
  problem.weight.resize(count);
  problem.target.resize(count);
  result.job_ids.reserve(static_cast<std::size_t>(count));
  const double newest = m > 1 ? static_cast<double>(m - 1) : 1.0;
  for (Eigen::Index i = 0; i < count; ++i) {
    result.job_ids.push_back(std::to_string(first + i));
    job_stream engine(settings.seed, static_cast<std::uint64_t>(first + i));
    const job_class& kind = draw_class(engine);
    problem.weight[i] = draw_weight(engine);
    bool usable = false;
    for (Eigen::Index j = 0; j < m; ++j) {
      const double speed = kind.base_speed *
                           std::pow(kind.newest_speedup, static_cast<double>(j) / newest) *
                           draw_noise(engine);
      const bool excluded = uniform(engine) < kZeroProbability;
      problem.throughput(i, j) = excluded ? 0.0 : speed;
      usable = usable || !excluded;
    }
    if (!usable) {  // reopen one resource so the log utility stays finite for this job
      const auto j = static_cast<Eigen::Index>(uniform(engine) * static_cast<double>(m));
      problem.throughput(i, j) =
          kind.base_speed * std::pow(kind.newest_speedup, static_cast<double>(j) / newest);
    }
    const double equal_share =
        problem.throughput.row(i).dot(problem.capacity.transpose()) / static_cast<double>(n);
    problem.target[i] = equal_share * (0.5 + uniform(engine));
  }
  return result;
}

}  // namespace popalloc_solve
