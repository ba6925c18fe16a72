// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Deterministic synthetic instances with job ids and resource names: the instance
/// families of families.hpp (default: heterogeneous jobs on M generations of a resource).
#pragma once

#include <cstdint>

#include "families.hpp"
#include "instance.hpp"

namespace popalloc_solve {

struct generator_settings {
  std::int64_t jobs = 1'000'000;
  std::int64_t resources = 8;
  std::uint64_t seed = 1;
  family_spec family;  ///< default: "generations", the generator described below
};

/// \brief The instance generate_family(settings.family, jobs, resources, seed) makes, with job
/// ids "0", "1", ... and the family's resource names (r0..r{M-1}; gavel: k80, p100, v100).
///
/// The default family, generations, is a contended instance with weights in {1,2,4} and targets
/// (so it serves every utility). Resource j is "generation j": newer generations are faster and
/// scarcer. Each job belongs to one of four classes with its own base speed and speed-up over
/// the generations, so the best resource differs between jobs and prices matter. Throughput =
/// base * speedup^j * noise with noise in [1/1.2, 1.2]; about 3% of the entries are 0 (job
/// cannot use that resource), but every job can use at least one. Capacities sum to 0.4-0.6 n,
/// shrinking geometrically with the generation. Targets are 0.5-1.5x what the job would get from
/// an equal share of every resource. The same seed gives the same instance everywhere: the
/// capacities come from std::mt19937_64, each job from its own SplitMix64 stream seeded by
/// (seed, job index), turned into doubles by this program, never std::uniform_real_distribution
/// (whose algorithm differs between standard libraries); only std::exp/std::pow may differ in
/// the last bit between libms. \throws std::invalid_argument for sizes the family cannot make.
instance generate_instance(const generator_settings& settings);

/// \brief Jobs first .. first + count - 1 of the instance generate_instance(settings) makes
/// (ids, rows and capacities identical), without generating the others: an MPI rank's shard.
instance generate_instance(const generator_settings& settings, std::int64_t first,
                           std::int64_t count);

}  // namespace popalloc_solve
