// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The steps that every backend's solve shares around the price-discovery method: the
/// warm-start check, the sample start with its continuation, and the method's configuration by
/// the solve's role. The single-process solve (dual_solver.hpp) and the collective one
/// (backend/mpi.hpp) differ only in how they validate, agree and map exceptions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include <Eigen/Core>

#include "popalloc/dense_problem.hpp"
#include "popalloc/detail/price_discovery.hpp"
#include "popalloc/detail/sample_start.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/error.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"

namespace popalloc::detail {

/// A sample start's solve is there for its prices; the full solve also for its allocation. A
/// sample continued past its probe prices (after_failed_probe) is there for its smoothed
/// minimiser.
enum class solve_role { full, sample, sample_to_minimiser };

/// Where the sample goes on to its smoothed minimiser after the full solve's probe fell short.
using sample_continuation = std::function<sample_start_level(Eigen::VectorXd& prices)>;

inline void check_warm_start_size(const solver_options& options, const Eigen::VectorXd& capacity) {
  if (options.warm_start_prices.size() != 0 && options.warm_start_prices.size() != capacity.size())
    throw invalid_options(
        "warm_start_prices has " + std::to_string(options.warm_start_prices.size()) +
        " entries, the problem has " + std::to_string(capacity.size()) + " resources");
}

/// The sample start of a full solve whose sample (of stride `stride`) is `sample`:
/// `solve_sample(role, sample, options, start)` solves it (collectively under MPI) and
/// `agreed_seconds()` is the solve's clock (the slowest rank's under MPI, so that every rank
/// passes the same options). Records the sample's iterations and seconds in `result`, starts
/// `run_options` from its prices and returns the level to start at; sets `continue_sample` when
/// the start is a probe. `result` and `clock` must outlive `continue_sample`.
template <class Utility, class Scalar, class SolveSample, class AgreedSeconds>
sample_start_level start_with_sample(dense_problem<Scalar> sample, std::int64_t stride,
                                     const solver_options& options, SolveSample solve_sample,
                                     const stopwatch& clock, AgreedSeconds agreed_seconds,
                                     solve_result& result, solver_options& run_options,
                                     sample_continuation& continue_sample) {
  const solve_result s =
      solve_sample(solve_role::sample, sample, sample_options(options, stride), {});
  result.sample_iterations = s.iterations;
  result.timings.sample_seconds = clock.seconds();
  const sample_start_level start = start_from_sample<Utility>(s, sample.capacity, run_options);
  if (start.probe_prices.size() == 0) return start;
  // Every rank's probe fails at the same evaluation (its certificate is a reduction), so under
  // MPI every rank enters the continuation's collective solve together.
  continue_sample = [&result, solve_sample, agreed_seconds, sample = std::move(sample),
                     continued = continuation_options(options, stride, start.probe_prices),
                     level = start.probe_level](Eigen::VectorXd& prices) mutable {
    // The continuation spends the solve's time limit, not a fresh one.
    continued.time_limit_seconds -= agreed_seconds();
    if (!(continued.time_limit_seconds > 0.0)) return sample_start_level{};
    const stopwatch timer;
    const solve_result c = solve_sample(solve_role::sample_to_minimiser, sample, continued,
                                        sample_start_level::at(level, true));
    result.sample_iterations += c.iterations;
    result.timings.sample_seconds += timer.seconds();
    return start_from_continuation(c, prices);
  };
  return start;
}

/// Runs the method as `role` asks: top-ups only in a full solve that allows them, ending at the
/// smoothed minimiser for a continued sample.
template <class Method>
void run_as(solve_role role, Method& method, const solver_options& options,
            const sample_start_level& start, sample_continuation continue_sample,
            solve_result& result) {
  method.start_from(start);
  method.allow_topups(role == solve_role::full && options.topups);
  method.end_at_minimiser(role == solve_role::sample_to_minimiser);
  method.levels_from_gap(role == solve_role::full);
  method.after_failed_probe(std::move(continue_sample));
  method.run(result);
}

}  // namespace popalloc::detail
