// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief POP (partition, solve, coalesce): a generic driver that solves the sub-problems of a
/// partition in parallel with any sub-problem solver, and the dense-problem overload that applies
/// it to popalloc's own solver and certifies the coalesced allocation with a dual bound of the
/// full problem.
///
/// Why the dual bound is valid: the full problem's dual g(p) = sum_i h_i(p) + p.R is an upper
/// bound on its optimum at every p >= 0. A sub-problem's prices are per unit of resource, exactly
/// like the full problem's, so they are candidates as they stand (a sub-problem with 1/k of the
/// capacity and about 1/k of the clients has about the same market-clearing prices); so is their
/// average, which smooths out the sampling noise of each part. pop_solve evaluates g at every
/// candidate (one pass over all jobs each) and reports the smallest.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <functional>
#include <limits>
#include <queue>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/backend/cpu.hpp"
#include "popalloc/config.hpp"
#include "popalloc/dense_problem.hpp"
#include "popalloc/detail/engine.hpp"
#include "popalloc/detail/relative_gap.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/dual_solver.hpp"
#include "popalloc/error.hpp"
#include "popalloc/options.hpp"
#include "popalloc/pop/partition.hpp"
#include "popalloc/pop/split.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"
#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::pop {

/// \brief Makespan of a longest-processing-time-first list schedule of `seconds` on `cores`
/// cores: what the sub-problems would take with that many cores (POP's TE accounting).
inline double lpt_makespan(std::vector<double> seconds, int cores) {
  if (cores < 1) cores = 1;
  std::sort(seconds.begin(), seconds.end(), std::greater<double>());
  std::priority_queue<double, std::vector<double>, std::greater<double>> load;
  for (int c = 0; c < cores; ++c) load.push(0.0);
  double makespan = 0.0;
  for (const double s : seconds) {
    const double start = load.top();
    load.pop();
    load.push(start + s);
    makespan = std::max(makespan, start + s);
  }
  return makespan;
}

/// \brief What the generic driver returns: one outcome and one wall time per part.
template <class Outcome>
struct parts_outcome {
  std::vector<Outcome> results;  ///< results[s]: the sub-solver's answer for part s
  std::vector<double> seconds;   ///< wall time of each part's sub-solve
  double wall_seconds = 0.0;     ///< wall time of all parts together
  int threads = 1;               ///< parts solved at once

  double seconds_sum() const {
    double total = 0.0;
    for (const double s : seconds) total += s;
    return total;
  }
  double seconds_max() const {
    return seconds.empty() ? 0.0 : *std::max_element(seconds.begin(), seconds.end());
  }
};

/// \brief Solves every part of `assignment` with `solve_part(part, clients)` (clients in increasing
/// order), the parts in parallel on up to `threads` OpenMP threads (0: the OpenMP default; 1 or a
/// build without OpenMP: one after the other, in part order). `solve_part` must be safe to call
/// concurrently for different parts; its result type must be default-constructible. An exception
/// thrown by a part is rethrown (the first part's in part order) once every part has finished.
template <class SolvePart>
auto pop_solve(const partition& assignment, SolvePart&& solve_part, int threads = 0)
    -> parts_outcome<
        std::decay_t<std::invoke_result_t<SolvePart&, int, const std::vector<std::int64_t>&>>> {
  using outcome =
      std::decay_t<std::invoke_result_t<SolvePart&, int, const std::vector<std::int64_t>&>>;
  const auto members = assignment.members();
  const int k = assignment.parts;
  parts_outcome<outcome> out;
  out.results.resize(static_cast<std::size_t>(k));
  out.seconds.assign(static_cast<std::size_t>(k), 0.0);
  std::vector<std::exception_ptr> failures(static_cast<std::size_t>(k));
  int team = popalloc::detail::host_executor(threads).threads();
  team = std::max(1, std::min(team, k));
  out.threads = team;
  const popalloc::detail::stopwatch wall_clock;
  // One part per iteration, handed out dynamically: part times vary with their clients.
  POPALLOC_PRAGMA_OMP(omp parallel for schedule(dynamic, 1) num_threads(team) if (team > 1))
  for (int s = 0; s < k; ++s) {
    const auto index = static_cast<std::size_t>(s);
    const popalloc::detail::stopwatch part_clock;
    try {
      out.results[index] = solve_part(s, members[index]);
    } catch (...) {
      // Exceptions must not leave an OpenMP region; keep them for after the join.
      failures[index] = std::current_exception();
    }
    out.seconds[index] = part_clock.seconds();
  }
  out.wall_seconds = wall_clock.seconds();
  for (const auto& failure : failures)
    if (failure) std::rethrow_exception(failure);
  return out;
}

/// \brief Scatters per-part allocations (compressed rows, rows in the order of `members[s]`) into
/// one allocation of all `clients` clients. Parts hold disjoint clients, so this is a union; a
/// client in no part gets an empty row.
inline allocation coalesce_allocations(std::int64_t clients,
                                       const std::vector<std::vector<std::int64_t>>& members,
                                       const std::vector<const allocation*>& parts) {
  std::vector<std::int32_t> part_of(static_cast<std::size_t>(clients), -1);
  std::vector<std::int64_t> row_of(static_cast<std::size_t>(clients), 0);
  for (std::size_t s = 0; s < members.size(); ++s) {
    if (parts[s] == nullptr) continue;
    if (parts[s]->jobs() != members[s].size())
      throw invalid_problem("coalesce_allocations: part allocation and member list differ");
    for (std::size_t r = 0; r < members[s].size(); ++r) {
      part_of[static_cast<std::size_t>(members[s][r])] = static_cast<std::int32_t>(s);
      row_of[static_cast<std::size_t>(members[s][r])] = static_cast<std::int64_t>(r);
    }
  }
  allocation out;
  out.job_offset.reserve(static_cast<std::size_t>(clients) + 1);
  for (std::size_t i = 0; i < static_cast<std::size_t>(clients); ++i) {
    if (part_of[i] >= 0) {
      const allocation& a = *parts[static_cast<std::size_t>(part_of[i])];
      const auto r = static_cast<std::size_t>(row_of[i]);
      for (auto q = a.job_offset[r]; q < a.job_offset[r + 1]; ++q) {
        out.option.push_back(a.option[static_cast<std::size_t>(q)]);
        out.fraction.push_back(a.fraction[static_cast<std::size_t>(q)]);
      }
    }
    out.job_offset.push_back(static_cast<std::int64_t>(out.option.size()));
  }
  return out;
}

/// \brief Options of the dense-problem POP solve.
struct pop_options {
  int parts = 1;  ///< k; 1 solves the whole problem (exactly popalloc::solve)
  partition_strategy strategy = partition_strategy::shuffled;
  std::uint64_t seed = 0;  ///< seed of the random strategies
  /// Options of every sub-solve (and of k = 1). When parts are solved in parallel each sub-solve
  /// runs on one thread, whatever `solver.threads` says.
  solver_options solver;
  /// Parts solved at once (OpenMP threads); 0: the OpenMP default.
  int threads = 0;
  /// Evaluate the full dual at every part's prices as well as at their average (k + 1 passes over
  /// all jobs); false evaluates only the average (one pass), which gave the smallest bound in
  /// every measured case (docs/pop.md) but is not guaranteed to.
  bool bound_at_every_part = true;
  /// Passed to every sub-solve (progress.iteration etc. are the part's). Parts run concurrently,
  /// so it must be thread-safe; returning stop ends that part with solve_status::interrupted.
  progress_callback callback;
};

/// \brief Statistics of one sub-problem.
struct pop_part_statistics {
  std::int64_t jobs = 0;
  solve_status status = solve_status::not_solved;  ///< not_solved for an empty part
  int iterations = 0;
  double primal_objective = 0.0;  ///< of the sub-problem (its jobs, its capacity share)
  double dual_bound = 0.0;        ///< of the sub-problem
  double relative_gap = 0.0;      ///< of the sub-problem
  double seconds = 0.0;           ///< wall time of its solve
};

/// \brief Wall times of a POP solve, in seconds.
struct pop_timings {
  double partition_seconds = 0.0;   ///< partitioning and building the sub-problems
  double parts_wall_seconds = 0.0;  ///< all sub-solves together (parallel wall time)
  double parts_seconds_sum = 0.0;   ///< sum of the sub-solve times (one core's cost)
  double parts_seconds_max = 0.0;   ///< slowest sub-solve (perfect-parallelism cost)
  double coalesce_seconds = 0.0;    ///< merging allocations and recomputing the objective
  double bound_seconds = 0.0;       ///< dual evaluations of the full problem
  double total_seconds = 0.0;
};

/// \brief A POP solve of a dense problem.
struct pop_solve_result {
  /// The coalesced allocation as a result of the ORIGINAL problem: feasible allocation, its
  /// objective sum_i f_i(t_i), a dual bound of the full problem (so relative_gap measures how far
  /// POP is from the full optimum at most), the prices attaining it, usage and throughputs.
  /// status: converged when every part converged and the merged allocation meets the tolerance
  /// against the whole problem's dual bound; parts_converged when the parts converged but the
  /// whole does not; otherwise the most serious part status (numerical_error, then interrupted,
  /// stalled, a limit).
  /// iterations: the most any part used.
  solve_result result;
  std::vector<pop_part_statistics> parts;
  partition assignment;  ///< which part each job went to
  /// Which candidate gave dual_bound: s for part s's prices, -1 for their average, -2 when none
  /// had a finite dual (dual_bound is then +inf).
  int bound_candidate = -2;
  pop_timings timings;
};

namespace detail {

template <class Scalar>
dense_problem<Scalar> extract_jobs(const dense_problem<Scalar>& p,
                                   const std::vector<std::int64_t>& jobs,
                                   const Eigen::VectorXd& capacity) {
  dense_problem<Scalar> sub;
  const auto n = static_cast<Eigen::Index>(jobs.size());
  const Eigen::Index m = p.resources();
  sub.capacity = capacity;
  sub.throughput.resize(n, m);
  if (p.demand.size() != 0) sub.demand.resize(n, m);
  if (p.weight.size() != 0) sub.weight.resize(n);
  if (p.target.size() != 0) sub.target.resize(n);
  if (p.job_demand.size() != 0) sub.job_demand.resize(n);
  for (Eigen::Index r = 0; r < n; ++r) {
    const auto i = static_cast<Eigen::Index>(jobs[static_cast<std::size_t>(r)]);
    sub.throughput.row(r) = p.throughput.row(i);
    if (p.demand.size() != 0) sub.demand.row(r) = p.demand.row(i);
    if (p.weight.size() != 0) sub.weight[r] = p.weight[i];
    if (p.target.size() != 0) sub.target[r] = p.target[i];
    if (p.job_demand.size() != 0) sub.job_demand[r] = p.job_demand[i];
  }
  return sub;
}

template <class Scalar>
Eigen::VectorXd usage_of(const dense_problem<Scalar>& p, const allocation& a) {
  Eigen::VectorXd usage = Eigen::VectorXd::Zero(p.resources());
  for (std::size_t i = 0; i < a.jobs(); ++i)
    for (auto q = a.job_offset[i]; q < a.job_offset[i + 1]; ++q) {
      const Eigen::Index j = a.option[static_cast<std::size_t>(q)];
      usage[j] +=
          p.amount(static_cast<Eigen::Index>(i), j) * a.fraction[static_cast<std::size_t>(q)];
    }
  return usage;
}

inline partition make_partition(const pop_options& options, std::int64_t n,
                                const std::function<Eigen::MatrixXd()>& features) {
  switch (options.strategy) {
    case partition_strategy::uniform_random:
      return partition_uniform_random(n, options.parts, options.seed);
    case partition_strategy::round_robin:
      return partition_round_robin(n, options.parts);
    case partition_strategy::two_choices:
      return partition_two_choices(features(), options.parts, options.seed);
    case partition_strategy::shuffled:
      break;
  }
  return partition_shuffled(n, options.parts, options.seed);
}

}  // namespace detail

namespace detail {

/// One part's figures for pop_solve_result::parts.
inline pop_part_statistics part_statistics(const solve_result& part, std::int64_t jobs,
                                           double seconds) {
  pop_part_statistics stats;
  stats.jobs = jobs;
  stats.seconds = seconds;
  stats.status = part.status;
  stats.iterations = part.iterations;
  stats.primal_objective = part.primal_objective;
  stats.dual_bound = part.dual_bound;
  stats.relative_gap = part.relative_gap;
  return stats;
}

/// POP with one part: the unchanged problem, same data, same options, so the same answer bit
/// for bit as popalloc::solve.
template <class Backend, class Scalar, class Utility>
pop_solve_result solve_unpartitioned(const dense_problem<Scalar>& problem, const Utility& utility,
                                     const pop_options& options,
                                     const popalloc::detail::stopwatch& clock) {
  pop_solve_result out;
  out.assignment = partition_round_robin(problem.jobs(), 1);
  out.timings.partition_seconds = clock.seconds();
  const popalloc::detail::stopwatch solve_clock;
  out.result = popalloc::solve<Backend>(problem, utility, options.solver, options.callback);
  const double seconds = solve_clock.seconds();
  out.parts.push_back(part_statistics(out.result, problem.jobs(), seconds));
  out.bound_candidate = 0;
  out.timings.parts_wall_seconds = out.timings.parts_seconds_sum = out.timings.parts_seconds_max =
      seconds;
  out.timings.total_seconds = clock.seconds();
  return out;
}

/// Solves every non-empty part with its equal share of the capacities. Parallel parts each get
/// one thread (nested OpenMP is off by default, and k single-threaded solves use the cores with
/// no synchronisation between them).
template <class Backend, class Scalar, class Utility>
parts_outcome<solve_result> solve_parts(const dense_problem<Scalar>& problem,
                                        const Utility& utility, const pop_options& options,
                                        const partition& assignment, const Eigen::VectorXd& share) {
  const bool host = std::is_same_v<Backend, backend::cpu>;
  const int team = host ? options.threads : 1;
  solver_options sub_options = options.solver;
  if (host && popalloc::detail::host_executor(team).threads() > 1) sub_options.threads = 1;
  return pop_solve(
      assignment,
      [&](int /*part*/, const std::vector<std::int64_t>& jobs) {
        solve_result r;
        if (jobs.empty()) return r;
        const dense_problem<Scalar> sub = extract_jobs(problem, jobs, share);
        return popalloc::solve<Backend>(sub, utility, sub_options, options.callback);
      },
      team);
}

/// Shares sum to R only up to rounding, and each part meets its share with a relative margin
/// (method_constants::capacity_margin), so this almost never changes anything; a resource over
/// by an ulp anyway gets its fractions scaled down so the allocation is feasible as reported.
/// Sets r.usage and r.max_capacity_violation.
template <class Scalar>
void make_feasible(const dense_problem<Scalar>& problem, solve_result& r) {
  r.usage = usage_of(problem, r.allocation);
  bool repaired = false;
  for (Eigen::Index j = 0; j < problem.resources(); ++j) {
    if (!(r.usage[j] > problem.capacity[j])) continue;
    const double factor = problem.capacity[j] / r.usage[j] * (1.0 - 1e-12);
    for (std::size_t q = 0; q < r.allocation.option.size(); ++q)
      if (r.allocation.option[q] == j) r.allocation.fraction[q] *= factor;
    repaired = true;
  }
  if (repaired) r.usage = usage_of(problem, r.allocation);
  r.max_capacity_violation = (r.usage - problem.capacity).cwiseMax(0.0).maxCoeff();
}

/// Sets r.throughput and r.primal_objective: the original problem's, from r.allocation.
template <class Scalar, class Utility>
void measure_objective(const dense_problem<Scalar>& problem, const Utility& utility,
                       solve_result& r) {
  const std::int64_t n = problem.jobs();
  r.throughput = Eigen::VectorXd::Zero(n);
  double objective = 0.0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto row = static_cast<Eigen::Index>(i);
    double t = 0.0;
    for (auto q = r.allocation.job_offset[static_cast<std::size_t>(i)];
         q < r.allocation.job_offset[static_cast<std::size_t>(i) + 1]; ++q)
      t += r.allocation.fraction[static_cast<std::size_t>(q)] *
           static_cast<double>(
               problem.throughput(row, r.allocation.option[static_cast<std::size_t>(q)]));
    r.throughput[row] = t;
    job_parameters job;
    if (problem.weight.size() != 0) job.weight = static_cast<double>(problem.weight[row]);
    if (problem.target.size() != 0) job.target = static_cast<double>(problem.target[row]);
    objective += utility.value(t, job);
  }
  r.primal_objective = objective;
}

/// Merges the parts into out.result (the worst part status, the most iterations and smoothing
/// stages, the union of the allocations, made feasible, with the original problem's objective)
/// and out.parts.
template <class Scalar, class Utility>
void coalesce_parts(const dense_problem<Scalar>& problem, const Utility& utility,
                    const std::vector<std::vector<std::int64_t>>& members,
                    const parts_outcome<solve_result>& parts, pop_solve_result& out) {
  solve_result& r = out.result;
  r.status = solve_status::converged;
  std::vector<const allocation*> allocations(members.size(), nullptr);
  for (std::size_t s = 0; s < members.size(); ++s) {
    const solve_result& part = parts.results[s];
    const auto jobs = static_cast<std::int64_t>(members[s].size());
    if (members[s].empty()) {
      pop_part_statistics stats;
      stats.jobs = jobs;
      stats.seconds = parts.seconds[s];
      out.parts.push_back(stats);
      continue;
    }
    out.parts.push_back(part_statistics(part, jobs, parts.seconds[s]));
    allocations[s] = &part.allocation;
    r.status = popalloc::worse(r.status, part.status);
    r.iterations = std::max(r.iterations, part.iterations);
    r.smoothing_stages = std::max(r.smoothing_stages, part.smoothing_stages);
  }
  r.allocation = coalesce_allocations(problem.jobs(), members, allocations);
  make_feasible(problem, r);
  measure_objective(problem, utility, r);
}

/// The candidates for the full problem's dual bound: each part's prices (when
/// options.bound_at_every_part) and their average, labelled as pop_solve_result::bound_candidate.
inline std::vector<std::pair<int, Eigen::VectorXd>> bound_candidates(
    const pop_options& options, const std::vector<std::vector<std::int64_t>>& members,
    const parts_outcome<solve_result>& parts, Eigen::Index m) {
  std::vector<std::pair<int, Eigen::VectorXd>> candidates;
  Eigen::VectorXd average = Eigen::VectorXd::Zero(m);
  int priced = 0;
  for (std::size_t s = 0; s < members.size(); ++s) {
    const solve_result& part = parts.results[s];
    if (members[s].empty() || part.prices.size() != m) continue;
    if (options.bound_at_every_part) candidates.emplace_back(static_cast<int>(s), part.prices);
    average += part.prices;
    ++priced;
  }
  if (priced > 1 || (priced == 1 && !options.bound_at_every_part))
    candidates.emplace_back(-1, average / static_cast<double>(priced));
  return candidates;
}

/// The full problem's dual bound at the best candidate, never above g(0), the gap it gives the
/// merged allocation, and the status that gap earns: the parts met the tolerance against their
/// own bounds, and the merged allocation is "converged" only if it meets it against the whole
/// problem's bound too.
template <class Scalar, class Utility>
void certify_whole(const dense_problem<Scalar>& problem, const Utility& utility,
                   const pop_options& options,
                   const std::vector<std::pair<int, Eigen::VectorXd>>& candidates,
                   pop_solve_result& out) {
  using host_engine =
      popalloc::detail::engine<popalloc::detail::host_executor, dense_problem<Scalar>, Utility>;
  host_engine engine(problem, utility, popalloc::detail::host_executor(options.solver.threads));
  engine.marginal_prices(problem.capacity);  // sets the gap references and g(0)
  solve_result& r = out.result;
  r.dual_bound = std::numeric_limits<double>::infinity();
  r.prices = Eigen::VectorXd::Zero(problem.resources());
  popalloc::detail::evaluation e;
  for (const auto& [label, prices] : candidates) {
    engine.evaluate(prices, 0.0, false, e);
    const double g = e.excess_exact + prices.dot(problem.capacity);
    if (!e.finite || !std::isfinite(g)) continue;
    if (g < r.dual_bound) {
      r.dual_bound = g;
      r.prices = prices;
      out.bound_candidate = label;
    }
  }
  r.trivial_bound = engine.unlimited_utility();
  if (r.trivial_bound < r.dual_bound) r.dual_bound = r.trivial_bound;
  r.duality_gap = r.dual_bound - r.primal_objective;
  const popalloc::detail::measured_gap relative =
      popalloc::detail::measure_gap(r.dual_bound, r.primal_objective, options.solver.gap,
                                    {engine.idle_utility(), engine.elasticity()});
  r.relative_gap = relative.relative;
  r.gap_scale = relative.scale;
  r.gap_scale_name = relative.scale_name;
  r.gap_measure = relative.measure;
  const bool whole_within =
      std::isfinite(r.dual_bound) && std::isfinite(r.primal_objective) &&
      popalloc::detail::within_tolerance(r.duality_gap, relative, options.solver);
  if (r.status == solve_status::converged && !whole_within)
    r.status = solve_status::parts_converged;
}

}  // namespace detail

/// \brief POP on a dense problem: partitions the jobs into options.parts parts with
/// options.strategy, gives each non-empty part an equal share of every capacity (R / number of
/// non-empty parts, so capacity is never lost to an empty part), solves the parts with
/// popalloc::solve<Backend> in parallel, and coalesces the allocations (a union: the parts hold
/// disjoint jobs, and their shares sum to R). The result is a feasible allocation of the original
/// problem with its objective and a dual bound of the FULL problem (see the file comment).
/// With options.parts == 1 it returns popalloc::solve's result unchanged.
/// two_choices balances each part's sum of (throughput row, weight) features.
/// \throws invalid_problem, invalid_options as popalloc::solve does.
template <class Backend = backend::cpu, class Scalar, class Utility>
pop_solve_result pop_solve(const dense_problem<Scalar>& problem, const Utility& utility,
                           const pop_options& options = {}) {
  const popalloc::detail::stopwatch clock;
  if (options.parts < 1) throw invalid_options("pop_options::parts must be >= 1");
  if (options.threads < 0) throw invalid_options("pop_options::threads must be >= 0");
  options.solver.validate();
  problem.validate(utility);
  if (options.parts == 1)
    return detail::solve_unpartitioned<Backend>(problem, utility, options, clock);

  pop_solve_result out;
  const std::int64_t n = problem.jobs();
  const Eigen::Index m = problem.resources();
  out.assignment = detail::make_partition(options, n, [&] {
    Eigen::MatrixXd f(n, m + 1);
    f.leftCols(m) = problem.throughput.template cast<double>();
    f.col(m) = problem.weight.size() != 0 ? problem.weight.template cast<double>().eval()
                                          : Eigen::VectorXd::Ones(n).eval();
    return f;
  });
  const auto members = out.assignment.members();
  int non_empty = 0;
  for (const auto& list : members) non_empty += list.empty() ? 0 : 1;
  const Eigen::VectorXd share = problem.capacity / static_cast<double>(non_empty);
  out.timings.partition_seconds = clock.seconds();

  const auto parts = detail::solve_parts<Backend>(problem, utility, options, out.assignment, share);
  out.timings.parts_wall_seconds = parts.wall_seconds;
  out.timings.parts_seconds_sum = parts.seconds_sum();
  out.timings.parts_seconds_max = parts.seconds_max();

  const popalloc::detail::stopwatch coalesce_clock;
  detail::coalesce_parts(problem, utility, members, parts, out);
  out.timings.coalesce_seconds = coalesce_clock.seconds();

  const popalloc::detail::stopwatch bound_clock;
  detail::certify_whole(problem, utility, options,
                        detail::bound_candidates(options, members, parts, m), out);
  out.timings.bound_seconds = bound_clock.seconds();
  solve_result& r = out.result;
  r.timings.setup_seconds = out.timings.partition_seconds;
  r.timings.solve_seconds = out.timings.parts_wall_seconds + out.timings.coalesce_seconds;
  r.timings.evaluate_seconds = out.timings.bound_seconds;
  out.timings.total_seconds = clock.seconds();
  return out;
}

}  // namespace popalloc::pop
