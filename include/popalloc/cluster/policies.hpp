// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Gavel's heterogeneity-aware scheduling policies on popalloc's price-discovery core,
/// with POP: `allocate(jobs, cluster, options)`.
///
/// STABLE (used by the round-based simulator): allocate(), policy_kind and its names,
/// policy_options, cluster_allocation and the job / gpu_cluster / throughput_table / trace /
/// generator headers. Fields may be added; existing ones keep their meaning. The detail::
/// functions and instance / level_bisection internals may change.
///
/// How each policy maps to the core solver (docs/cluster-scheduling.md has the derivations):
///   max-throughput         linear utility on A_iw = T_iw / cost_w, job demand s_i; with SLO
///                          floors the exact penalty linear_with_floor (solve_with_slo_floors)
///   proportional fairness  log utility, weight w_i, on A_iw = T_iw / P_i
///   max-min fairness       bisection on the level L; each step a target-priority solve
///                          (level_bisection.hpp); then water filling: bottleneck jobs are frozen
///                          and the others raised level by level
///   min makespan           the same bisection on u = 1 / makespan, targets u r_i
///   finish-time fairness   the same bisection on 1 / rho, targets r_i / (rho D_i - t_i)
///   isolated, fifo         closed-form baselines
/// A job with scale factor s_i consumes s_i GPUs of its type per unit time (dense_problem's
/// job_demand); POP splits GPUs with pop::split_units, so no GPU is lost to integer division.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "popalloc/cluster/class_policies.hpp"
#include "popalloc/cluster/cluster_spec.hpp"
#include "popalloc/cluster/instance.hpp"
#include "popalloc/cluster/job.hpp"
#include "popalloc/cluster/level_bisection.hpp"
#include "popalloc/cluster/level_policies.hpp"
#include "popalloc/cluster/policy.hpp"
#include "popalloc/cluster/policy_support.hpp"
#include "popalloc/cluster/separable_policies.hpp"
#include "popalloc/dense_problem.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/dual_solver.hpp"
#include "popalloc/error.hpp"
#include "popalloc/options.hpp"
#include "popalloc/pop/partition.hpp"
#include "popalloc/pop/pop_solver.hpp"
#include "popalloc/pop/split.hpp"

namespace popalloc::cluster {
namespace detail {

inline policy_outcome solve_baseline(const instance& in, const policy_options& o) {
  policy_outcome out;
  out.solves = 0;
  if (o.policy == policy_kind::isolated) {
    out.x = isolated_allocation(in.model_throughput, in.scale, in.capacity);
  } else {
    // FIFO: arrival order (ties: input order), whole GPUs, each job on one type for all its time.
    out.x = Eigen::MatrixXd::Zero(in.jobs(), in.types());
    std::vector<Eigen::Index> order(static_cast<std::size_t>(in.jobs()));
    std::iota(order.begin(), order.end(), Eigen::Index{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](Eigen::Index a, Eigen::Index b) { return in.arrival[a] < in.arrival[b]; });
    Eigen::VectorXd free = in.capacity;
    random_source rng(o.fifo_seed);
    for (const Eigen::Index i : order) {
      std::vector<Eigen::Index> fits;
      for (Eigen::Index w = 0; w < in.types(); ++w)
        if (in.model_throughput(i, w) > 0.0 && free[w] >= in.scale[i]) fits.push_back(w);
      if (fits.empty()) continue;
      Eigen::Index pick = fits[0];
      if (o.heterogeneity_agnostic) {
        pick = fits[static_cast<std::size_t>(rng.below(fits.size()))];
      } else {
        for (const Eigen::Index w : fits)
          if (in.true_throughput(i, w) > in.true_throughput(i, pick)) pick = w;
      }
      out.x(i, pick) = 1.0;
      free[pick] -= in.scale[i];
    }
  }
  out.objective = policy_objective(in, o, out.x);
  return out;
}

inline policy_outcome solve_policy(const instance& in, const policy_options& o, int threads,
                                   double deadline) {
  switch (o.policy) {
    case policy_kind::max_min_fairness:
    case policy_kind::min_makespan:
    case policy_kind::finish_time_fairness:
      return solve_level_policy(in, o, threads, deadline);
    case policy_kind::proportional_fairness:
    case policy_kind::max_throughput:
      return solve_separable_policy(in, o, threads);
    case policy_kind::isolated:
    case policy_kind::fifo:
      break;
  }
  return solve_baseline(in, o);
}

inline void validate_options(const policy_options& o, const gpu_cluster& cluster) {
  if (!(o.tolerance > 0.0) || !(o.tolerance < 0.1))
    throw invalid_options("tolerance must be in (0, 0.1)");
  if (o.pop_parts < 1) throw invalid_options("POP needs k >= 1 parts");
  if (o.pop_parts > cluster.total())
    throw invalid_options("POP with " + std::to_string(o.pop_parts) +
                          " parts needs at least one GPU per part; the cluster has " +
                          std::to_string(cluster.total()));
  if (o.threads < 0) throw invalid_options("threads must be >= 0");
  if (o.class_lp_max_classes < 0) throw invalid_options("class_lp_max_classes must be >= 0");
  if (o.max_water_filling_levels < 1)
    throw invalid_options("max_water_filling_levels must be >= 1");
  if (!(o.water_filling_threshold > 0.0) || !(o.water_filling_threshold < 0.5))
    throw invalid_options("water_filling_threshold must be in (0, 0.5)");
  if (!(o.time_limit_seconds > 0.0)) throw invalid_options("time_limit_seconds must be > 0");
  if (!o.gpu_cost.empty()) {
    if (o.gpu_cost.size() != cluster.size())
      throw invalid_options("gpu_cost needs one price per GPU type (" +
                            std::to_string(cluster.size()) + ")");
    for (const double c : o.gpu_cost)
      if (!(std::isfinite(c) && c > 0.0)) throw invalid_options("GPU costs must be finite and > 0");
  }
  for (Eigen::Index w = 0; w < o.warm_start_prices.size(); ++w)
    if (!(std::isfinite(o.warm_start_prices[w]) && o.warm_start_prices[w] >= 0.0))
      throw invalid_options("warm_start_prices must be finite and >= 0");
}

}  // namespace detail

/// \brief Allocates the cluster's GPUs to `jobs` with `options.policy`: the fraction of time
/// every job should spend on every GPU type. Call it whenever jobs arrive or finish, with each
/// job's remaining_steps (and elapsed_time / isolated_time for finish-time fairness);
/// cluster_allocation::prices can warm-start the next call.
/// \throws invalid_problem for invalid jobs or cluster, invalid_options for bad options.
inline cluster_allocation allocate(const std::vector<job>& jobs, const gpu_cluster& cluster,
                                   const policy_options& options = {}) {
  const popalloc::detail::stopwatch clock;
  detail::validate_options(options, cluster);
  const instance in = prepare_instance(jobs, cluster, options);
  const bool slo_floors = options.policy == policy_kind::max_throughput && options.slo_floors &&
                          (in.slo_floor.array() > 0.0).any();
  if (slo_floors && !options.gpu_cost.empty())
    throw invalid_options(
        "SLO floors are on throughput and cannot be combined with GPU costs (throughput per "
        "cost); set slo_floors = false or give no costs");
  cluster_allocation out;
  out.policy = options.policy;
  out.heterogeneity_agnostic = options.heterogeneity_agnostic;
  out.schedulable = in.schedulable;
  out.pop_parts = options.pop_parts;
  detail::policy_outcome result;
  if (options.pop_parts == 1) {
    result = detail::solve_policy(in, options, options.threads, options.time_limit_seconds);
  } else {
    const int k = options.pop_parts;
    const auto n = static_cast<std::int64_t>(jobs.size());
    pop::partition assignment;
    switch (options.pop_strategy) {
      case pop::partition_strategy::round_robin:
        assignment = pop::partition_round_robin(n, k);
        break;
      case pop::partition_strategy::shuffled:
        assignment = pop::partition_shuffled(n, k, options.pop_seed);
        break;
      case pop::partition_strategy::uniform_random:
      case pop::partition_strategy::two_choices:
        assignment = pop::partition_uniform_random(n, k, options.pop_seed);
        break;
    }
    const pop::unit_split units = pop::split_units(cluster.counts, k);
    policy_options part_options = options;
    part_options.pop_parts = 1;
    const auto parts = pop::pop_solve(
        assignment,
        [&](int s, const std::vector<std::int64_t>& members) {
          Eigen::VectorXd share(static_cast<Eigen::Index>(cluster.size()));
          for (std::size_t w = 0; w < cluster.size(); ++w)
            share[static_cast<Eigen::Index>(w)] =
                static_cast<double>(units.shares[w][static_cast<std::size_t>(s)]);
          detail::policy_outcome o;
          if (members.empty()) return o;
          const instance sub = in.subset(members, share);
          policy_options this_part = part_options;
          if (options.progress)
            this_part.progress = [&options, s](const policy_progress& p) {
              policy_progress tagged = p;
              tagged.pop_part = s;
              options.progress(tagged);
            };
          o = detail::solve_policy(sub, this_part, 1, options.time_limit_seconds);
          return o;
        },
        options.threads);
    result.x = Eigen::MatrixXd::Zero(in.jobs(), in.types());
    const auto members = assignment.members();
    for (int s = 0; s < k; ++s) {
      const auto& part = parts.results[static_cast<std::size_t>(s)];
      const auto& rows = members[static_cast<std::size_t>(s)];
      if (rows.empty()) continue;
      for (std::size_t r = 0; r < rows.size(); ++r)
        result.x.row(static_cast<Eigen::Index>(rows[r])) = part.x.row(static_cast<Eigen::Index>(r));
      result.status = worse(result.status, part.status);
      result.solves += part.solves;
      result.classes += part.classes;
      result.simplex_runs += part.simplex_runs;
      result.levels = std::max(result.levels, part.levels);
      result.slo_floors_dropped = result.slo_floors_dropped || part.slo_floors_dropped;
      if (part.prices.size() != 0) result.prices = part.prices;
    }
    result.objective = detail::policy_objective(in, options, result.x);
    out.pop_parts_seconds_max = parts.seconds_max();
    out.pop_parts_seconds_sum = parts.seconds_sum();
  }
  out.fraction = result.x;
  out.objective = result.objective;
  out.bound = result.bound;
  out.status = options.policy == policy_kind::isolated || options.policy == policy_kind::fifo
                   ? solve_status::converged
                   : result.status;
  out.core_solves = result.solves;
  out.classes = result.classes;
  out.simplex_runs = result.simplex_runs;
  out.water_filling_levels = result.levels;
  out.prices = result.prices;
  out.slo_floors_dropped = result.slo_floors_dropped;
  const Eigen::Index n = in.jobs();
  if (slo_floors)
    out.slo_worst_shortfall = detail::applied_floor_shortfall(
        in, detail::effective_throughput(in, out.fraction), out.slo_jobs);
  out.effective_throughput.resize(n);
  out.normalized_throughput.resize(n);
  out.proportional_throughput = in.proportional_true;
  for (Eigen::Index i = 0; i < n; ++i) {
    out.effective_throughput[i] = in.true_throughput.row(i).dot(out.fraction.row(i));
    out.normalized_throughput[i] =
        in.proportional_true[i] > 0.0
            ? in.scale[i] * out.effective_throughput[i] / (in.weight[i] * in.proportional_true[i])
            : 0.0;
  }
  out.seconds = clock.seconds();
  return out;
}

}  // namespace popalloc::cluster
