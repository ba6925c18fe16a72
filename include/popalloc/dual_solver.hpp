// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief popalloc::solve: the price-discovery dual solver (detail/price_discovery.hpp has the
/// method) on a dense or bundle problem, on the CPU backend or one named by its tag.
#pragma once

#include <cstdint>
#include <functional>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include <Eigen/Core>

#include "popalloc/backend/cpu.hpp"
#include "popalloc/detail/engine.hpp"
#include "popalloc/detail/interior_point.hpp"
#include "popalloc/detail/price_discovery.hpp"
#include "popalloc/detail/problem_scaling.hpp"
#include "popalloc/detail/sample_start.hpp"
#include "popalloc/detail/solve_steps.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/detail/traits.hpp"
#include "popalloc/error.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"
#include "popalloc/utility/concept.hpp"

namespace popalloc {

/// \brief Solves `problem` (dense_problem or bundle_problem) for `utility` with the
/// price-discovery dual method on `Backend` (backend::cpu, or backend::thrust from
/// popalloc/backend/thrust.hpp).
/// \throws invalid_problem, invalid_options before any work; backend_error if the backend fails.
/// Numerical outcomes (limits, stalls, NaN) are reported in solve_result::status.
template <class Backend = backend::cpu, class Problem, class Utility>
solve_result solve(const Problem& problem, const Utility& utility,
                   const solver_options& options = {}, const progress_callback& callback = {});

namespace detail {

/// `start`: the first smoothing level of a warm start (options.warm_start_prices) whose prices
/// come from a solve of the same problem, or of one close to it; `memory`: the jobs' search
/// starts from that solve (incremental_solver); `scale`: a dense problem far from order 1 is
/// solved in scaled units (detail/problem_scaling.hpp; popalloc::solve).
template <class Backend, class Problem, class Utility>
solve_result solve_as(solve_role role, const Problem& problem, const Utility& utility,
                      const solver_options& options, const progress_callback& callback,
                      sample_start_level start = {},
                      job_memory<typename executor_for<Backend>::type>* memory = nullptr,
                      bool scale = false);

/// solve_as once the options and the problem are validated (`clock` started before that):
/// `weight_factor` multiplies the weights of a dense_problem as the solver reads them
/// (problem_scaling::weight_factor), 1 for every other problem.
template <class Backend, class Problem, class Utility>
solve_result solve_validated(solve_role role, const Problem& problem, const Utility& utility,
                             const solver_options& options, const progress_callback& callback,
                             sample_start_level start,
                             job_memory<typename executor_for<Backend>::type>* memory,
                             const stopwatch& clock, double weight_factor = 1.0) {
  const Eigen::VectorXd& capacity = capacity_of(problem);
  check_warm_start_size(options, capacity);
  using executor = typename executor_for<Backend>::type;
  solve_result result;
  solver_options run_options = options;  // the sample start may add starting prices
  sample_start_level start_level = start;
  sample_continuation continue_sample;
  if constexpr (is_dense_problem<Problem>::value) {
    const std::int64_t stride = sample_stride(problem, Utility::piecewise_linear);
    if (options.sample_start && options.warm_start_prices.size() == 0 && stride > 1) {
      // The sample is a dense_problem, whatever dense type `problem` is.
      const auto solve_sample = [&utility](solve_role sample_role, const auto& sample,
                                           const solver_options& sample_run_options,
                                           sample_start_level first) {
        return solve_as<Backend>(sample_role, sample, utility, sample_run_options, {}, first);
      };
      auto sample = sample_jobs(problem, stride);
      if (weight_factor != 1.0) scale_weights(sample, weight_factor);
      start_level = start_with_sample<Utility>(
          std::move(sample), stride, options, solve_sample, clock,
          [&clock] { return clock.seconds(); }, result, run_options, continue_sample);
    }
  }
  try {
    detail::engine<executor, Problem, Utility> engine(problem, utility, executor(options.threads),
                                                      memory, weight_factor);
    price_discovery<decltype(engine)> method(engine, capacity, run_options, callback, clock);
    run_as(role, method, options, start_level, std::move(continue_sample), result);
  } catch (const error&) {
    throw;
  } catch (const std::bad_alloc& e) {
    throw backend_error(std::string("out of memory: ") + e.what());
  } catch (const std::runtime_error& e) {
    throw backend_error(e.what());
  }
  return result;
}

template <class Backend, class Problem, class Utility>
solve_result solve_as(solve_role role, const Problem& problem, const Utility& utility,
                      const solver_options& options, const progress_callback& callback,
                      sample_start_level start,
                      job_memory<typename executor_for<Backend>::type>* memory, bool scale) {
  static_assert(check_utility<Utility>());
  const stopwatch clock;
  options.validate();
  if constexpr (is_scalable_problem<Problem>::value) {
    if (scale) {
      problem.check_shape(utility);
      Problem scaled;
      const problem_scaling scaling = scale_problem(problem, utility, scaled);  // checks entries
      if (scaling.identity())
        return solve_validated<Backend>(role, problem, utility, options, callback, start, memory,
                                        clock);
      progress_callback report;
      Eigen::VectorXd prices;
      if (callback)
        report = [&](const progress& p) { return callback(scaling.unscale(p, prices)); };
      solve_result result = solve_validated<Backend>(role, scaling.copies() ? scaled : problem,
                                                     utility, scaling.scaled(options), report,
                                                     start, memory, clock, scaling.weight_factor());
      scaling.unscale(result);
      return result;
    }
  }
  problem.validate(utility);
  return solve_validated<Backend>(role, problem, utility, options, callback, start, memory, clock);
}

}  // namespace detail

template <class Backend, class Problem, class Utility>
solve_result solve(const Problem& problem, const Utility& utility, const solver_options& options,
                   const progress_callback& callback) {
  solve_result result = detail::solve_as<Backend>(detail::solve_role::full, problem, utility,
                                                  options, callback, {}, nullptr, true);
  // A dense_problem itself: other dense types (views of a caller's buffers) call the finish on a
  // copy where it applies (detail/interior_point.hpp).
  if constexpr (detail::is_dense_problem<Problem>::value &&
                std::is_same_v<Problem, dense_problem<typename Problem::scalar_type>>) {
    if (options.interior_point_finish)
      detail::finish_with_interior_point(problem, utility, options, result);
  }
  return result;
}

}  // namespace popalloc
