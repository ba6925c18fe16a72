// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the public dense-problem constructor path and the solver. The input chooses the
// sizes (n <= 12 jobs, m <= 6 resources), every number (NaN, infinities, negatives, subnormals,
// 1e-300..1e300 included) and the utility. Invalid data must raise invalid_problem; valid data
// must give a finite, feasible allocation and no NaN anywhere in the result, whatever the status,
// and a dual bound not below the primal objective unless the status is numerical_error.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <popalloc/popalloc.hpp>

#include "fuzz_input.hpp"

namespace {

/// Stops the run with the reason, so a finding explains itself.
[[noreturn]] void finding(const char* what, const popalloc::solve_result& r) {
  std::fprintf(stderr, "fuzz_dense_problem: %s (status %s, primal %.17g, dual %.17g)\n", what,
               popalloc::to_string(r.status), r.primal_objective, r.dual_bound);
  std::abort();
}

template <class Utility>
void solve_and_check(const popalloc::dense_problem<double>& p, const Utility& utility) {
  popalloc::solver_options options;
  options.max_iterations = 60;
  options.threads = 1;
  popalloc::solve_result r;
  try {
    r = popalloc::solve(p, utility, options);
  } catch (const popalloc::invalid_problem&) {
    return;
  }
  if (std::isnan(r.primal_objective)) finding("NaN primal objective", r);
  if (std::isnan(r.dual_bound)) finding("NaN dual bound", r);
  if (!r.prices.allFinite() || (r.prices.array() < 0.0).any()) finding("bad prices", r);
  // numerical_error is the solver saying its numbers cannot be trusted; anything else certifies.
  if (r.status != popalloc::solve_status::numerical_error &&
      r.dual_bound < r.primal_objective - 1e-9 * (1.0 + std::abs(r.primal_objective)))
    finding("dual bound below the primal objective", r);
  // Feasibility of what is returned, regardless of the status.
  Eigen::VectorXd usage = Eigen::VectorXd::Zero(p.resources());
  const auto& a = r.allocation;
  if (a.jobs() != static_cast<std::size_t>(p.jobs())) finding("allocation has the wrong size", r);
  for (Eigen::Index i = 0; i < p.jobs(); ++i) {
    double total = 0.0;
    for (auto k = a.job_offset[static_cast<std::size_t>(i)];
         k < a.job_offset[static_cast<std::size_t>(i) + 1]; ++k) {
      const double x = a.fraction[static_cast<std::size_t>(k)];
      const auto j = static_cast<Eigen::Index>(a.option[static_cast<std::size_t>(k)]);
      if (!std::isfinite(x) || x < 0.0 || j < 0 || j >= p.resources())
        finding("bad allocation entry", r);
      total += x;
      const double per_unit = p.job_demand.size() != 0 ? p.job_demand[i] : 1.0;
      usage[j] += x * per_unit;
    }
    if (total > 1.0 + 1e-9) finding("a job is allocated more than all of its time", r);
  }
  for (Eigen::Index j = 0; j < p.resources(); ++j)
    if (usage[j] > p.capacity[j] * (1.0 + 1e-9) + 1e-300) finding("capacity exceeded", r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  popalloc_fuzz::byte_reader in(data, size);
  const int n = in.byte() % 13;  // 0 is allowed: an empty problem must be rejected cleanly
  const int m = in.byte() % 7;
  const std::uint8_t flags = in.byte();
  popalloc::dense_problem<double> p;
  p.throughput.resize(n, m);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j) p.throughput(i, j) = in.interesting_double();
  p.capacity.resize(m);
  for (int j = 0; j < m; ++j) p.capacity[j] = in.interesting_double();
  if ((flags & 1) != 0) {
    p.weight.resize(n);
    for (int i = 0; i < n; ++i) p.weight[i] = in.interesting_double();
  }
  if ((flags & 2) != 0) {
    p.target.resize(n);
    for (int i = 0; i < n; ++i) p.target[i] = in.interesting_double();
  }
  if ((flags & 4) != 0) {
    p.job_demand.resize(n);
    for (int i = 0; i < n; ++i) p.job_demand[i] = in.interesting_double();
  }
  switch ((flags >> 4) % 4) {
    case 0:
      solve_and_check(p, popalloc::utility::linear{});
      break;
    case 1:
      solve_and_check(p, popalloc::utility::target_priority{});
      break;
    case 2:
      solve_and_check(p, popalloc::utility::log{});
      break;
    default:
      solve_and_check(p, popalloc::utility::power{0.5});
      break;
  }
  return 0;
}
