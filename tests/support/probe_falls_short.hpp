// SPDX-License-Identifier: Apache-2.0
// The instance on which a sample start's probe falls short, and the sample solve it continues:
// shared by the tests of the continued sample (tests/test_families.cpp, tests/mpi/).
// Needs popalloc-solve's instance families (POPALLOC_TEST_HAVE_FAMILIES).
#pragma once

#include <cstdint>

#include <popalloc/popalloc.hpp>

#include "families.hpp"

namespace popalloc_test {

/// generations n x 8 with every 200th job's throughputs halved (re-profiled jobs; a few targets
/// are out of reach): the sample still meets its targets before reaching its smoothed minimiser,
/// but the full problem at those prices does not.
inline popalloc::dense_problem<double> probe_falls_short(std::int64_t n, std::uint64_t seed) {
  auto p = popalloc_solve::generate_family(popalloc_solve::parse_family("generations"), n, 8, seed);
  for (Eigen::Index i = 0; i < p.jobs(); i += 200) p.throughput.row(i) *= 0.5;
  return p;
}

/// The sample start's own solve of `problem` (CPU backend), without its continuation.
template <class Utility>
popalloc::solve_result plain_sample_solve(const popalloc::dense_problem<double>& problem,
                                          const Utility& utility,
                                          const popalloc::solver_options& options) {
  namespace d = popalloc::detail;
  const std::int64_t stride = d::sample_stride(problem, Utility::piecewise_linear);
  return d::solve_as<popalloc::backend::cpu>(d::solve_role::sample, d::sample_jobs(problem, stride),
                                             utility, d::sample_options(options, stride), {});
}

}  // namespace popalloc_test
