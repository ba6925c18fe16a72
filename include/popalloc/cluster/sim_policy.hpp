// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Connects the cluster policies (policies.hpp: allocate()) to the simulator: the jobs of
/// a workload as simulator jobs, and a stateful sim_policy that re-solves on every call with
/// the previous call's prices as warm start and keeps the finish-time-fairness history.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/cluster/cluster_spec.hpp"
#include "popalloc/cluster/instance.hpp"
#include "popalloc/cluster/job.hpp"
#include "popalloc/cluster/packed_policies.hpp"
#include "popalloc/cluster/policies.hpp"
#include "popalloc/cluster/policy.hpp"
#include "popalloc/cluster/simulator.hpp"
#include "popalloc/cluster/throughputs.hpp"
#include "popalloc/error.hpp"

namespace popalloc::cluster {

/// \brief The simulator's view of `jobs` (same order: simulator id i is jobs[i]).
inline std::vector<sim_job> to_sim_jobs(const std::vector<job>& jobs) {
  std::vector<sim_job> out;
  out.reserve(jobs.size());
  for (const job& j : jobs) {
    sim_job s;
    s.arrival_seconds = j.arrival_time;
    s.total_steps = j.total_steps;
    s.scale_factor = j.scale_factor;
    s.priority_weight = j.priority_weight;
    s.throughput = j.throughput;
    out.push_back(std::move(s));
  }
  return out;
}

/// \brief GPU counts of a cluster as the simulator takes them. \throws invalid_problem for a
/// count that does not fit an int.
inline std::vector<int> sim_gpus(const gpu_cluster& cluster) {
  std::vector<int> gpus;
  for (const std::int64_t c : cluster.counts) {
    if (c > 1'000'000'000) throw invalid_problem("simulate: too many GPUs of one type");
    gpus.push_back(static_cast<int>(c));
  }
  return gpus;
}

/// \brief Statistics of the policy calls a policy_adapter made.
struct policy_call_stats {
  std::int64_t calls = 0;
  std::int64_t warm_started = 0;   ///< calls that started from the previous call's prices
  std::int64_t core_solves = 0;    ///< popalloc::solve calls in all
  std::int64_t not_converged = 0;  ///< calls whose status was not solve_status::converged
  /// POP: sum over calls of the slowest part's time (POP's accounting, parts in parallel).
  double pop_parts_seconds_max_total = 0.0;
  std::int64_t pairs = 0;  ///< space sharing: pairs allocated, summed over calls
};

namespace detail {

/// Finish-time fairness's per-job history across policy calls: C_i grows by the steps a job
/// made since the last call at that call's isolated throughput, C_i += (r_prev - r_now) /
/// ET_iso_prev (Gavel's bookkeeping).
class finish_time_history {
 public:
  /// Sets j.isolated_time from the history of j.id (j.remaining_steps already current).
  void update(job& j) {
    entry& h = entries_[j.id];
    if (h.seen && h.isolated_throughput > 0.0)
      h.isolated_time += std::max(0.0, h.remaining - j.remaining_steps) / h.isolated_throughput;
    j.isolated_time = h.isolated_time;
  }

  /// Records every active job's remaining steps and ET_iso at this call (Gavel's isolated share
  /// with m = the active jobs).
  void remember(const std::vector<job>& active, const gpu_cluster& cluster) {
    const auto n = static_cast<Eigen::Index>(active.size());
    const auto m = static_cast<Eigen::Index>(cluster.size());
    Eigen::MatrixXd usable = Eigen::MatrixXd::Zero(n, m);
    Eigen::VectorXd scale(n), capacity(m);
    for (Eigen::Index w = 0; w < m; ++w)
      capacity[w] = static_cast<double>(cluster.counts[static_cast<std::size_t>(w)]);
    for (Eigen::Index i = 0; i < n; ++i) {
      const job& j = active[static_cast<std::size_t>(i)];
      scale[i] = j.scale_factor;
      for (Eigen::Index w = 0; w < m; ++w)
        if (j.scale_factor <= capacity[w]) usable(i, w) = j.throughput[static_cast<std::size_t>(w)];
    }
    const Eigen::MatrixXd x = isolated_allocation(usable, scale, capacity);
    for (Eigen::Index i = 0; i < n; ++i) {
      const job& j = active[static_cast<std::size_t>(i)];
      entry& h = entries_[j.id];
      h.seen = true;
      h.remaining = j.remaining();
      h.isolated_throughput = usable.row(i).dot(x.row(i));
    }
  }

 private:
  struct entry {
    bool seen = false;
    double remaining = 0.0;
    double isolated_throughput = 0.0;
    double isolated_time = 0.0;
  };
  std::unordered_map<std::int64_t, entry> entries_;
};

}  // namespace detail

/// \brief A sim_policy running allocate(): copies the active jobs (with remaining steps, and
/// for finish-time fairness the elapsed time t_i and cumulative isolated time C_i, updated as
/// C_i += (r_prev - r_now) / ET_iso_prev), passes the last call's prices as warm start (unless
/// `warm_start` is false: every call then starts cold, to measure what the warm start saves), and
/// returns allocate()'s time fractions. Copyable; copies share the state (std::function copies
/// its target).
class policy_adapter {
 public:
  policy_adapter(std::vector<job> jobs, gpu_cluster cluster, policy_options options,
                 bool warm_start = true)
      : state_(std::make_shared<state>()) {
    state_->jobs = std::move(jobs);
    state_->cluster = std::move(cluster);
    state_->options = std::move(options);
    state_->warm_start = warm_start;
  }

  Eigen::MatrixXd operator()(const policy_request& request) const {
    state& s = *state_;
    std::vector<job> active;
    active.reserve(request.active.size());
    for (std::size_t k = 0; k < request.active.size(); ++k) {
      const auto id = request.active[k];
      job j = s.jobs.at(static_cast<std::size_t>(id));
      j.id = id;
      j.remaining_steps = request.remaining_steps[k];
      j.elapsed_time = request.seconds_since_arrival[k];
      s.history.update(j);
      active.push_back(std::move(j));
    }
    policy_options options = s.options;
    if (s.warm_start && s.prices.size() == static_cast<Eigen::Index>(s.cluster.size())) {
      options.warm_start_prices = s.prices;
      ++s.stats.warm_started;
    }
    const cluster_allocation result = allocate(active, s.cluster, options);
    ++s.stats.calls;
    s.stats.core_solves += result.core_solves;
    if (result.status != solve_status::converged) ++s.stats.not_converged;
    s.stats.pop_parts_seconds_max_total += result.pop_parts_seconds_max;
    if (result.prices.size() == static_cast<Eigen::Index>(s.cluster.size()) &&
        result.prices.allFinite())
      s.prices = result.prices;
    if (s.options.policy == policy_kind::finish_time_fairness)
      s.history.remember(active, s.cluster);
    return result.fraction;
  }

  const policy_call_stats& stats() const { return state_->stats; }

 private:
  struct state {
    std::vector<job> jobs;
    gpu_cluster cluster;
    policy_options options;
    bool warm_start = true;
    Eigen::VectorXd prices;
    detail::finish_time_history history;
    policy_call_stats stats;
  };

  std::shared_ptr<state> state_;
};

/// \brief A sim_packed_policy running allocate_packed() (space sharing) on the active jobs:
/// the jobs' time alone as sim_policy's X, and every pair the allocation shares, with its
/// co-located throughputs on every type both jobs can use (from `table`, so that an idle GPU
/// may also go to a pair without allocation there). For finish-time fairness it keeps the same
/// history as policy_adapter. Copyable; copies share the state.
class packed_policy_adapter {
 public:
  /// \throws invalid_options / invalid_problem as allocate_packed() would, at the first call.
  packed_policy_adapter(std::vector<job> jobs, gpu_cluster cluster, throughput_table table,
                        policy_options options)
      : state_(std::make_shared<state>()) {
    state_->jobs = std::move(jobs);
    state_->cluster = std::move(cluster);
    state_->table = std::move(table);
    state_->options = std::move(options);
  }

  sim_allocation operator()(const policy_request& request) const {
    state& s = *state_;
    std::vector<job> active;
    active.reserve(request.active.size());
    for (std::size_t k = 0; k < request.active.size(); ++k) {
      job j = s.jobs.at(static_cast<std::size_t>(request.active[k]));
      j.id = request.active[k];
      j.remaining_steps = request.remaining_steps[k];
      j.elapsed_time = request.seconds_since_arrival[k];
      s.history.update(j);
      active.push_back(std::move(j));
    }
    const cluster_allocation result = allocate_packed(active, s.cluster, s.table, s.options);
    if (s.options.policy == policy_kind::finish_time_fairness)
      s.history.remember(active, s.cluster);
    ++s.stats.calls;
    if (result.status != solve_status::converged) ++s.stats.not_converged;
    s.stats.pop_parts_seconds_max_total += result.pop_parts_seconds_max;
    sim_allocation out;
    out.singles = result.fraction;
    std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> index;
    for (const pair_share& p : result.pairs) {
      const auto key = std::make_pair(p.first, p.second);
      auto found = index.find(key);
      if (found == index.end()) {
        found = index.emplace(key, out.pairs.size()).first;
        out.pairs.push_back(pair_of(active, p));
      }
      out.pairs[found->second].allocation[static_cast<std::size_t>(p.gpu)] += p.fraction;
    }
    s.stats.pairs += static_cast<std::int64_t>(out.pairs.size());
    return out;
  }

  const policy_call_stats& stats() const { return state_->stats; }

 private:
  struct state {
    std::vector<job> jobs;
    gpu_cluster cluster;
    throughput_table table;
    policy_options options;
    detail::finish_time_history history;
    policy_call_stats stats;
  };

  // The pair of rows p.first, p.second as simulator ids, with its throughputs on every type.
  sim_pair pair_of(const std::vector<job>& active, const pair_share& p) const {
    const state& s = *state_;
    const job& a = active[static_cast<std::size_t>(p.first)];
    const job& b = active[static_cast<std::size_t>(p.second)];
    const std::size_t types = s.cluster.size();
    sim_pair out;
    out.first = a.id;
    out.second = b.id;
    out.allocation.assign(types, 0.0);
    out.first_throughput.assign(types, 0.0);
    out.second_throughput.assign(types, 0.0);
    for (std::size_t w = 0; w < types; ++w) {
      if (!(a.throughput[w] > 0.0) || !(b.throughput[w] > 0.0) ||
          a.scale_factor > s.cluster.counts[w])
        continue;
      const auto t = s.table.get_pair({a.job_type, a.scale_factor}, {b.job_type, b.scale_factor},
                                      s.cluster.types[w]);
      out.first_throughput[w] = t.first;
      out.second_throughput[w] = t.second;
    }
    // The allocation's own numbers on its type (identical unless the table was lopsided for
    // two jobs of one class, where the policy counted the smaller side).
    out.first_throughput[static_cast<std::size_t>(p.gpu)] = p.first_throughput;
    out.second_throughput[static_cast<std::size_t>(p.gpu)] = p.second_throughput;
    return out;
  }

  std::shared_ptr<state> state_;
};

}  // namespace popalloc::cluster
