// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Instance families: deterministic synthetic problems of several shapes (one generator
/// for popalloc-solve, popalloc-compare, the benchmarks and the tests). docs/instance-families.md
/// describes every family.
///
/// A family spec is NAME[:CAPACITY][:TARGETS] in any order after the name, e.g. "classes",
/// "classes:tight", "paper:loose:reachable", "sparse:far":
///
///   NAME      generations (default: popalloc-solve's original generator, bit for bit), uniform,
///             classes, gavel, paper, sparse
///   CAPACITY  standard (the family's own) | tight (x 0.3) | loose (x 3)
///   TARGETS   standard (the family's own) | reachable (0.8 x what the job gets in an equal-share
///             allocation that respects the capacities: the target-priority optimum is 0) | far
///             (4 x that: the optimum lies far below 0)
///
/// The same (spec, size, seed) gives the same instance everywhere: the capacities come from
/// std::mt19937_64 (fully specified by the standard) seeded with the seed, each job from its own
/// SplitMix64 stream keyed by (seed, job index); doubles are made from 53 random bits, never with
/// std::*_distribution (whose algorithms differ between standard libraries). Only std::exp, log,
/// pow, sqrt, cos may differ in the last bit between libms.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <popalloc/dense_problem.hpp>

namespace popalloc_solve {

enum class capacity_level { standard, tight, loose };
enum class target_level { standard, reachable, far };

struct family_spec {
  std::string family = "generations";  ///< one of family_names()
  capacity_level capacity = capacity_level::standard;
  target_level targets = target_level::standard;
};

/// \brief "classes", "classes:tight", "paper:loose:reachable", "sparse:far" ...
/// \throws std::invalid_argument whose message names the bad part and lists the valid names.
family_spec parse_family(const std::string& text);

/// \brief The spec as text: the name, then ":tight"/":loose" and ":reachable"/":far" when not
/// standard. Round-trips through parse_family.
std::string to_string(const family_spec& spec);

/// \brief generations, uniform, classes, gavel, paper, sparse.
const std::vector<std::string>& family_names();

/// \brief One line for --help. \throws std::invalid_argument for an unknown family.
std::string describe_family(const std::string& family);

/// \brief The resource names of a family's instance: r0..r{m-1}, gavel's k80, p100, v100.
/// \throws std::invalid_argument like generate_family for sizes the family cannot make.
std::vector<std::string> family_resource_names(const family_spec& spec, std::int64_t resources);

/// \brief The instance of `jobs` jobs on `resources` resources. Always sets throughput,
/// capacity, weight and target (and job_demand for gavel).
/// \throws std::invalid_argument for sizes the family cannot make (gavel needs resources == 3),
/// jobs < 1, resources < 1, jobs or resources >= 2^31, or an unknown family.
popalloc::dense_problem<double> generate_family(const family_spec& spec, std::int64_t jobs,
                                                std::int64_t resources, std::uint64_t seed);

/// \brief Rows first .. first + count - 1 of the same instance (identical rows, same
/// capacities), without generating the others (an MPI rank's shard): every job draws from its
/// own stream keyed by (seed, job index). \throws std::invalid_argument as above, and when the
/// rows are not within 0 .. jobs - 1 (count 0 is allowed).
popalloc::dense_problem<double> generate_family(const family_spec& spec, std::int64_t jobs,
                                                std::int64_t resources, std::uint64_t seed,
                                                std::int64_t first, std::int64_t count);

}  // namespace popalloc_solve
