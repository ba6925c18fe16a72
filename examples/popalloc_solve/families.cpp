// SPDX-License-Identifier: Apache-2.0
// The instance families of families.hpp; docs/instance-families.md documents each distribution.
//
// Every family builds its instance in the same three steps:
//   1. standard capacities from a std::mt19937_64 seeded with the seed (the header stream),
//      then the capacity variant (tight x 0.3, loose x 3);
//   2. each job from its own job_stream(seed, job index): its throughput row, weight, demand
//      (gavel) and standard target (computed from the *standard* capacities, so :tight and
//      :loose change the contention, not the targets);
//   3. the target variant: reachable / far targets from the job's throughput in an equal-share
//      allocation that respects the actual capacities.
// No step looks at another job, so any slice of the jobs is generated on its own.
#include "families.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "../popalloc_schedule/embedded_throughputs.hpp"

namespace popalloc_solve {
namespace {

/// Uniform in [0, 1) from the top 53 bits: exactly the same on every platform.
template <class Engine>
double uniform(Engine& engine) {
  return static_cast<double>(engine() >> 11) * 0x1.0p-53;
}

template <class Engine>
double uniform(Engine& engine, double lo, double hi) {
  return lo + (hi - lo) * uniform(engine);
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

/// Standard normal from two uniforms (Box-Muller), 1 - u keeps the logarithm finite.
double standard_normal(job_stream& engine) {
  const double radius = std::sqrt(-2.0 * std::log(1.0 - uniform(engine)));
  return radius * std::cos(6.283185307179586 * uniform(engine));
}

/// Weights 1, 2, 4 with probabilities 0.6, 0.3, 0.1.
double draw_weight_124(job_stream& engine) {
  const double u = uniform(engine);
  return u < 0.6 ? 1.0 : (u < 0.9 ? 2.0 : 4.0);
}

/// Multiplicative noise in [1/limit, limit], denser near 1 (log is triangular): lognormal-ish.
double draw_noise(job_stream& engine, double limit) {
  const double spread = uniform(engine) + uniform(engine) - 1.0;
  return std::exp(std::log(limit) * spread);
}

double capacity_factor(capacity_level level) {
  switch (level) {
    case capacity_level::tight:
      return 0.3;
    case capacity_level::loose:
      return 3.0;
    case capacity_level::standard:
      break;
  }
  return 1.0;
}

/// Position of generation j of m in [0, 1] (0 with a single generation).
double position(Eigen::Index j, Eigen::Index m) {
  return m > 1 ? static_cast<double>(j) / static_cast<double>(m - 1) : 0.0;
}

/// Capacities of m generations that shrink geometrically (decay^j), summing to about
/// `total`, rounded to whole units (machines), at least one each.
Eigen::VectorXd geometric_capacities(Eigen::Index m, double total, double decay,
                                     const std::vector<double>& jitter) {
  double share_sum = 0.0;
  for (Eigen::Index j = 0; j < m; ++j)
    share_sum += std::pow(decay, static_cast<double>(j)) * jitter[static_cast<std::size_t>(j)];
  Eigen::VectorXd capacity(m);
  for (Eigen::Index j = 0; j < m; ++j) {
    const double share =
        std::pow(decay, static_cast<double>(j)) * jitter[static_cast<std::size_t>(j)] / share_sum;
    capacity[j] = std::max(1.0, std::round(total * share));
  }
  return capacity;
}

// ---- generations: popalloc-solve's original generator (bit for bit) ------------------------

struct generation_class {
  double share;           ///< fraction of the jobs in this class
  double base_speed;      ///< throughput on generation 0
  double newest_speedup;  ///< throughput ratio newest / oldest generation
};

// Compute-bound jobs profit a lot from new hardware, memory-bound ones less, legacy jobs hardly
// at all, and a small class (new kernels) is built for the newest generation.
constexpr generation_class kGenerationClasses[] = {
    {0.35, 1.0, 8.0},
    {0.30, 1.2, 3.0},
    {0.20, 0.8, 1.3},
    {0.15, 0.5, 20.0},
};
constexpr double kZeroProbability = 0.03;
constexpr double kNoiseLimit = 1.2;
constexpr double kCapacityDecay = 0.7;  // each generation has 0.7x the capacity of the previous

const generation_class& draw_generation_class(job_stream& engine) {
  double u = uniform(engine);
  for (const generation_class& candidate : kGenerationClasses) {
    if (u < candidate.share) return candidate;
    u -= candidate.share;
  }
  return kGenerationClasses[std::size(kGenerationClasses) - 1];
}

// ---- classes and sparse: six job classes with crossing speed-up profiles --------------------

/// Speed of a class on the generation at position u in [0, 1] (0 oldest, 1 newest).
struct speed_profile {
  double share;  ///< fraction of the jobs
  double (*speed)(double u);
};

// The profiles cross: which generation is best, and by how much, depends on the class.
constexpr speed_profile kClassProfiles[] = {
    // legacy code: hardly gains (1.0 -> 1.3)
    {0.20, [](double u) { return 1.0 + 0.3 * u; }},
    // compute-bound: 10x from the oldest to the newest generation, geometric
    {0.25, [](double u) { return std::pow(10.0, u); }},
    // memory-bound: best on a middle generation (2.5x), newest no better than the oldest
    {0.15, [](double u) { return 1.0 + 6.0 * u * (1.0 - u); }},
    // new kernels: slow until the newest generation, then 16x
    {0.10, [](double u) { return 0.5 + 15.5 * std::pow(u, 6.0); }},
    // tuned for the old type: fastest on the oldest generation, 0.4x on the newest
    {0.10, [](double u) { return 2.0 - 1.2 * u; }},
    // balanced: linear 3x
    {0.20, [](double u) { return 1.0 + 2.0 * u; }},
};

const speed_profile& draw_profile(job_stream& engine) {
  double u = uniform(engine);
  for (const speed_profile& candidate : kClassProfiles) {
    if (u < candidate.share) return candidate;
    u -= candidate.share;
  }
  return kClassProfiles[std::size(kClassProfiles) - 1];
}

/// Contended capacities for classes and sparse: about 0.4-0.6 n in all, each newer generation
/// 0.7x the previous, +-20% per generation.
Eigen::VectorXd class_capacities(std::mt19937_64& header, Eigen::Index n, Eigen::Index m) {
  const double total = static_cast<double>(n) * (0.4 + 0.2 * uniform(header));
  std::vector<double> jitter(static_cast<std::size_t>(m));
  for (double& factor : jitter) factor = uniform(header, 0.8, 1.2);
  return geometric_capacities(m, total, kCapacityDecay, jitter);
}

// ---- gavel: Gavel's measured isolated throughputs --------------------------------------------

/// Rows of popalloc_schedule::kEmbeddedThroughputs (examples/popalloc_schedule/
/// embedded_throughputs.cpp: the "null" entries of data/gavel/simulation_throughputs.json for
/// k80, p100, v100, all scale factors 1, 2, 4, 8; tests/cluster checks them against the file).
double gavel_demand_prefix(std::int64_t rows) {
  double total = 0.0;
  for (std::int64_t r = 0; r < rows; ++r)
    total += popalloc_schedule::kEmbeddedThroughputs[r].scale_factor;
  return total;
}

/// Sum of the demands (scale factors) of jobs 0 .. n - 1: job i is table row i mod rows.
double gavel_total_demand(std::int64_t n) {
  const auto rows = static_cast<std::int64_t>(popalloc_schedule::kEmbeddedThroughputCount);
  return static_cast<double>(n / rows) * gavel_demand_prefix(rows) + gavel_demand_prefix(n % rows);
}

// ---- common ----------------------------------------------------------------------------------

/// Standard targets of classes, sparse, gavel and paper: U(1, 3) x the job's throughput in the
/// equal-share allocation with the standard capacities (generations keeps its original
/// 0.5-1.5x, uniform the test generator's).
constexpr double kTargetLow = 1.0, kTargetHigh = 3.0;

/// What step 2 tells step 3 about one job.
struct job_values {
  double weight = 1.0;
  double demand = 1.0;
  double target = 0.0;  ///< standard target
};

/// Throughput of job `row` of `p` in the equal-share allocation x_ij = R_j / max(n d_i, S),
/// S = sum_j R_j: every job's time sums to S / max(n d_i, S) <= 1 and resource j carries
/// sum_i d_i x_ij <= sum_i R_j / n = R_j, so the allocation is feasible for every instance.
double equal_share_throughput(const popalloc::dense_problem<double>& p, Eigen::Index row,
                              const Eigen::VectorXd& capacity, double n, double demand) {
  const double denominator = std::max(n * demand, capacity.sum());
  double total = 0.0;
  for (Eigen::Index j = 0; j < capacity.size(); ++j)
    total += p.throughput(row, j) * capacity[j] / denominator;
  return total;
}

[[noreturn]] void bad_spec(const std::string& what) {
  std::string names;
  for (const std::string& name : family_names()) names += (names.empty() ? "" : ", ") + name;
  throw std::invalid_argument(what + " (a family spec is NAME[:tight|:loose][:reachable|:far], " +
                              "NAME one of " + names + ")");
}

void check_family(const std::string& family) {
  const auto& names = family_names();
  if (std::find(names.begin(), names.end(), family) == names.end())
    bad_spec("unknown instance family '" + family + "'");
}

void check_sizes(const family_spec& spec, std::int64_t jobs, std::int64_t resources) {
  check_family(spec.family);
  constexpr std::int64_t limit = std::int64_t{1} << 31;
  if (jobs < 1) throw std::invalid_argument("instance family: the number of jobs must be >= 1");
  if (resources < 1)
    throw std::invalid_argument("instance family: the number of resources must be >= 1");
  if (jobs >= limit || resources >= limit)
    throw std::invalid_argument(
        "instance family: the numbers of jobs and resources must be below 2^31");
  if (spec.family == "gavel" && resources != 3)
    throw std::invalid_argument(
        "instance family 'gavel' has exactly 3 resources (k80, p100, v100), got " +
        std::to_string(resources));
}

}  // namespace

const std::vector<std::string>& family_names() {
  static const std::vector<std::string> names = {"generations", "uniform", "classes",
                                                 "gavel",       "paper",   "sparse"};
  return names;
}

std::string describe_family(const std::string& family) {
  if (family == "generations")
    return "4 job classes on M hardware generations, speed-up with the generation, noise, 3% "
           "zeros (the default)";
  if (family == "uniform")
    return "A_ij = U(0.1,1)*(j+1): every job prefers the same resources (the tests' generator)";
  if (family == "classes")
    return "6 job classes with crossing speed-up profiles, lognormal job sizes";
  if (family == "gavel")
    return "Gavel's measured throughputs on k80, p100, v100, scale factors 1-8 as demand (M = 3)";
  if (family == "paper")
    return "the price-discovery paper's benchmark: R_j = U(0.1,1) n / 1.5^j, A_ij = U(0.1,mid_j)";
  if (family == "sparse") return "each job can use only 1-3 resources, chosen at random";
  check_family(family);
  return {};
}

family_spec parse_family(const std::string& text) {
  family_spec spec;
  std::vector<std::string> parts;
  std::size_t begin = 0;
  for (;;) {
    const std::size_t colon = text.find(':', begin);
    parts.push_back(text.substr(begin, colon == std::string::npos ? colon : colon - begin));
    if (colon == std::string::npos) break;
    begin = colon + 1;
  }
  if (parts[0].empty()) bad_spec("empty instance family name in '" + text + "'");
  check_family(parts[0]);
  spec.family = parts[0];
  bool capacity_given = false, targets_given = false;
  for (std::size_t k = 1; k < parts.size(); ++k) {
    const std::string& part = parts[k];
    if (part == "tight" || part == "loose") {
      if (capacity_given) bad_spec("two capacity variants in '" + text + "'");
      capacity_given = true;
      spec.capacity = part == "tight" ? capacity_level::tight : capacity_level::loose;
    } else if (part == "reachable" || part == "far") {
      if (targets_given) bad_spec("two target variants in '" + text + "'");
      targets_given = true;
      spec.targets = part == "reachable" ? target_level::reachable : target_level::far;
    } else {
      bad_spec("unknown variant '" + part + "' in '" + text +
               "' (capacity: tight, loose; targets: reachable, far)");
    }
  }
  return spec;
}

std::string to_string(const family_spec& spec) {
  std::string text = spec.family;
  if (spec.capacity == capacity_level::tight) text += ":tight";
  if (spec.capacity == capacity_level::loose) text += ":loose";
  if (spec.targets == target_level::reachable) text += ":reachable";
  if (spec.targets == target_level::far) text += ":far";
  return text;
}

std::vector<std::string> family_resource_names(const family_spec& spec, std::int64_t resources) {
  check_sizes(spec, 1, resources);
  if (spec.family == "gavel") return {"k80", "p100", "v100"};
  std::vector<std::string> names;
  names.reserve(static_cast<std::size_t>(resources));
  for (std::int64_t j = 0; j < resources; ++j) names.push_back("r" + std::to_string(j));
  return names;
}

popalloc::dense_problem<double> generate_family(const family_spec& spec, std::int64_t jobs,
                                                std::int64_t resources, std::uint64_t seed) {
  return generate_family(spec, jobs, resources, seed, 0, jobs);
}

popalloc::dense_problem<double> generate_family(const family_spec& spec, std::int64_t jobs,
                                                std::int64_t resources, std::uint64_t seed,
                                                std::int64_t first, std::int64_t count) {
  check_sizes(spec, jobs, resources);
  if (first < 0 || count < 0 || first > jobs - count)
    throw std::invalid_argument("instance family: rows " + std::to_string(first) + " .. " +
                                std::to_string(first + count - 1) + " are not within 0 .. " +
                                std::to_string(jobs - 1));
  const std::string& family = spec.family;
  const Eigen::Index n = jobs, m = resources;
  const double n_double = static_cast<double>(n);
  const double factor = capacity_factor(spec.capacity);

  // Step 1: standard capacities from the header stream, then the capacity variant.
  std::mt19937_64 header(seed);
  Eigen::VectorXd standard(m), capacity(m);
  if (family == "generations") {
    // Exactly the original: whole units, at least one, 0.7x per generation, 0.4-0.6 n in all.
    const std::vector<double> no_jitter(static_cast<std::size_t>(m), 1.0);
    const double total_capacity = n_double * (0.4 + 0.2 * uniform(header));
    standard = geometric_capacities(m, total_capacity, kCapacityDecay, no_jitter);
    capacity = factor == 1.0
                   ? standard
                   : geometric_capacities(m, total_capacity * factor, kCapacityDecay, no_jitter);
  } else if (family == "uniform") {
    for (Eigen::Index j = 0; j < m; ++j)
      standard[j] = uniform(header, 0.1, 1.0) * n_double / static_cast<double>(m) * 0.5;
    capacity = standard * factor;
  } else if (family == "classes" || family == "sparse") {
    standard = class_capacities(header, n, m);
    capacity = standard * factor;
  } else if (family == "gavel") {
    // GPUs: one third of the total demand, split about equally between the three types.
    const double total = gavel_total_demand(jobs) / 3.0;
    for (Eigen::Index j = 0; j < m; ++j)
      standard[j] = std::max(1.0, std::round(total / 3.0 * uniform(header, 0.8, 1.2)));
    capacity = standard * factor;
  } else {  // paper
    for (Eigen::Index j = 0; j < m; ++j)
      standard[j] = uniform(header, 0.1, 1.0) * n_double / std::pow(1.5, static_cast<double>(j));
    capacity = standard * factor;
  }

  popalloc::dense_problem<double> problem;
  problem.capacity = capacity;
  problem.throughput.setZero(count, m);
  problem.weight.resize(count);
  problem.target.resize(count);
  if (family == "gavel") problem.job_demand.resize(count);

  // Step 2: every job from its own stream.
  std::vector<Eigen::Index> order(static_cast<std::size_t>(m));
  for (Eigen::Index i = 0; i < count; ++i) {
    const std::int64_t global = first + i;
    job_stream engine(seed, static_cast<std::uint64_t>(global));
    auto row = problem.throughput.row(i);
    job_values job;
    if (family == "generations") {
      const double newest = m > 1 ? static_cast<double>(m - 1) : 1.0;
      const generation_class& kind = draw_generation_class(engine);
      job.weight = draw_weight_124(engine);
      bool usable = false;
      for (Eigen::Index j = 0; j < m; ++j) {
        const double speed = kind.base_speed *
                             std::pow(kind.newest_speedup, static_cast<double>(j) / newest) *
                             draw_noise(engine, kNoiseLimit);
        const bool excluded = uniform(engine) < kZeroProbability;
        row[j] = excluded ? 0.0 : speed;
        usable = usable || !excluded;
      }
      if (!usable) {  // reopen one resource so the log utility stays finite for this job
        const auto j = static_cast<Eigen::Index>(uniform(engine) * static_cast<double>(m));
        row[j] = kind.base_speed * std::pow(kind.newest_speedup, static_cast<double>(j) / newest);
      }
      const double equal_share = row.dot(standard.transpose()) / n_double;
      job.target = equal_share * (0.5 + uniform(engine));
    } else if (family == "uniform") {
      for (Eigen::Index j = 0; j < m; ++j)
        row[j] = uniform(engine, 0.1, 1.0) * static_cast<double>(j + 1);
      job.weight = uniform(engine) < 0.5 ? 1.0 : 2.0;
      job.target = 0.5 * uniform(engine, 0.1, 1.0) * static_cast<double>(m);
    } else if (family == "classes" || family == "sparse") {
      const speed_profile& kind = draw_profile(engine);
      job.weight = draw_weight_124(engine);
      if (family == "classes") {
        for (Eigen::Index j = 0; j < m; ++j)
          row[j] = kind.speed(position(j, m)) * draw_noise(engine, kNoiseLimit);
        row *= std::exp(standard_normal(engine));  // the job's size, lognormal(0, 1)
      } else {
        // 1, 2 or 3 distinct resources (a partial Fisher-Yates shuffle), the rest 0.
        const auto usable =
            std::min<Eigen::Index>(m, 1 + static_cast<Eigen::Index>(uniform(engine) * 3.0));
        for (Eigen::Index j = 0; j < m; ++j) order[static_cast<std::size_t>(j)] = j;
        for (Eigen::Index k = 0; k < usable; ++k) {
          const Eigen::Index pick =
              k + std::min<Eigen::Index>(
                      m - k - 1,
                      static_cast<Eigen::Index>(uniform(engine) * static_cast<double>(m - k)));
          std::swap(order[static_cast<std::size_t>(k)], order[static_cast<std::size_t>(pick)]);
          const Eigen::Index j = order[static_cast<std::size_t>(k)];
          row[j] = kind.speed(position(j, m)) * draw_noise(engine, kNoiseLimit);
        }
      }
      // sparse: as if the job's equal share of all m resources went to the few it can use.
      const double concentration =
          family == "sparse"
              ? static_cast<double>(m) / static_cast<double>((row.array() > 0.0).count())
              : 1.0;
      job.target = equal_share_throughput(problem, i, standard, n_double, 1.0) * concentration *
                   uniform(engine, kTargetLow, kTargetHigh);
    } else if (family == "gavel") {
      const auto rows = static_cast<std::int64_t>(popalloc_schedule::kEmbeddedThroughputCount);
      const popalloc_schedule::embedded_row& measured =
          popalloc_schedule::kEmbeddedThroughputs[global % rows];
      const double values[] = {measured.k80, measured.p100, measured.v100};
      for (Eigen::Index j = 0; j < m; ++j)
        row[j] = values[j] * uniform(engine, 0.9, 1.1);  // 0 stays 0: cannot run there
      job.demand = measured.scale_factor;
      job.weight = draw_weight_124(engine);
      job.target = equal_share_throughput(problem, i, standard, n_double, job.demand) *
                   uniform(engine, kTargetLow, kTargetHigh);
    } else {  // paper
      for (Eigen::Index j = 0; j < m; ++j) {
        const double mid = 0.3 + 0.7 * position(j, m);
        row[j] = uniform(engine, 0.1, mid);
      }
      job.weight = 1.0;
      job.target = equal_share_throughput(problem, i, standard, n_double, 1.0) *
                   uniform(engine, kTargetLow, kTargetHigh);
    }
    problem.weight[i] = job.weight;
    if (family == "gavel") problem.job_demand[i] = job.demand;

    // Step 3: the target variant, from the actual capacities.
    switch (spec.targets) {
      case target_level::standard:
        problem.target[i] = job.target;
        break;
      case target_level::reachable:
        problem.target[i] =
            0.8 * equal_share_throughput(problem, i, capacity, n_double, job.demand);
        break;
      case target_level::far:
        problem.target[i] =
            4.0 * equal_share_throughput(problem, i, capacity, n_double, job.demand);
        break;
    }
  }
  return problem;
}

}  // namespace popalloc_solve
