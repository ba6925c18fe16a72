// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Gavel's round-based mechanism: turns a fluid allocation X (fraction of time each job
/// should spend on each GPU type) into the placement of one round (which job runs on which GPUs).
///
/// Per round, every (job, type) entry gets priority = X_jw / f_jw, where f_jw is the share of
/// type-w time the job received since the last allocation reset; types are served one after the
/// other, each walking its entries by decreasing (priority, deficit, allocation) and taking every
/// job that still fits; the jobs taken on a type are then placed on workers largest scale factor
/// first, keeping a job on last round's workers when they are all still free (a lease extension)
/// and otherwise on as few servers as possible. See docs/simulator.md.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "popalloc/error.hpp"

namespace popalloc::cluster {

/// \brief The GPUs of a cluster, numbered 0..N-1: type 0's GPUs first, then type 1's, ...; each
/// type's GPUs are grouped into servers of `gpus_per_server` (the last server of a type may be
/// smaller). A job placed on one server communicates faster than one spread over several, which
/// is why the mechanism packs multi-GPU jobs onto as few servers as it can.
class worker_layout {
 public:
  worker_layout() = default;
  /// \throws invalid_problem for mismatched sizes, negative counts or servers of < 1 GPU.
  worker_layout(std::vector<int> gpus, std::vector<int> gpus_per_server)
      : gpus_(std::move(gpus)), gpus_per_server_(std::move(gpus_per_server)) {
    if (gpus_per_server_.size() != gpus_.size())
      throw invalid_problem("worker_layout: one server size per GPU type is needed");
    first_.assign(gpus_.size() + 1, 0);
    for (std::size_t w = 0; w < gpus_.size(); ++w) {
      if (gpus_[w] < 0) throw invalid_problem("worker_layout: negative GPU count");
      if (gpus_per_server_[w] < 1)
        throw invalid_problem("worker_layout: a server holds at least one GPU");
      first_[w + 1] = first_[w] + gpus_[w];
    }
  }

  int types() const { return static_cast<int>(gpus_.size()); }
  int gpus(int type) const { return gpus_[static_cast<std::size_t>(type)]; }
  int total_gpus() const { return first_.back(); }
  int gpus_per_server(int type) const { return gpus_per_server_[static_cast<std::size_t>(type)]; }
  /// \brief Global id of the first GPU of `type`.
  int first_worker(int type) const { return first_[static_cast<std::size_t>(type)]; }
  /// \brief Servers of `type` (the last one may be partial).
  int servers(int type) const {
    const int per = gpus_per_server(type);
    return (gpus(type) + per - 1) / per;
  }
  /// \brief The GPU type a global worker id belongs to, or -1 when out of range.
  int type_of(int worker) const {
    for (int w = 0; w < types(); ++w)
      if (worker >= first_worker(w) && worker < first_worker(w) + gpus(w)) return w;
    return -1;
  }
  /// \brief Server index (within its type) of a global worker id of type `type`.
  int server_of(int type, int worker) const {
    return (worker - first_worker(type)) / gpus_per_server(type);
  }

 private:
  std::vector<int> gpus_;
  std::vector<int> gpus_per_server_;
  std::vector<int> first_;
};

/// \brief What the mechanism needs to know about one job, or one pair of jobs sharing GPUs
/// (space sharing), for one round.
struct round_job {
  std::int64_t id = 0;  ///< caller's stable job id (placements are reported by id)
  /// A pair entry: the ids of the two jobs that share its GPUs (neither may run elsewhere in the
  /// same round); -1 for a single job. `throughput` is then > 0 where both can run.
  std::int64_t first = -1, second = -1;
  int scale_factor = 1;               ///< GPUs the job needs at once, all of one type
  std::vector<double> allocation;     ///< X_jw, fraction of time on type w (one per type)
  std::vector<double> throughput;     ///< steps/s on type w; 0 = cannot run there
  std::vector<double> time_received;  ///< seconds run on type w since the last reset
  std::vector<double> deficit;        ///< time owed on w at the last reset (tie-breaker)
  int previous_type = -1;             ///< type of last round's placement, -1 if it did not run
  std::vector<int> previous_workers;  ///< global worker ids of last round's placement
};

/// \brief One job's placement in a round.
struct round_assignment {
  std::int64_t id = 0;
  int type = -1;
  std::vector<int> workers;  ///< global worker ids, scale_factor of them, increasing
  bool kept = false;         ///< on exactly last round's workers (lease extension)
};

/// \brief The placement of one round, in placement order (type by type, larger jobs first).
struct round_plan {
  std::vector<round_assignment> assignments;
  std::vector<int> free_gpus;  ///< GPUs of each type left idle this round
};

/// \brief Gavel's priority of a (job, type) entry: 0 when the job has no allocation or cannot run
/// there; allocation * 1e9 when it has received no time on the type (f = 0); allocation / f
/// otherwise, with f = time_received / worker_time.
inline double round_priority(double allocation, double throughput, double time_received,
                             double worker_time) {
  if (!(allocation > 0.0) || !(throughput > 0.0)) return 0.0;
  if (!(time_received > 0.0) || !(worker_time > 0.0)) return allocation * 1e9;
  return allocation / (time_received / worker_time);
}

namespace detail {

/// Free GPUs of one type, by server; takes GPUs lowest id first.
class server_pool {
 public:
  server_pool(const worker_layout& layout, int type) : layout_(&layout), type_(type) {
    const int first = layout.first_worker(type), per = layout.gpus_per_server(type);
    free_.resize(static_cast<std::size_t>(layout.servers(type)));
    for (int g = 0; g < layout.gpus(type); ++g)
      free_[static_cast<std::size_t>(g / per)].push_back(first + g);
  }

  bool is_free(int worker) const {
    if (layout_->type_of(worker) != type_) return false;
    const auto& server = free_[static_cast<std::size_t>(layout_->server_of(type_, worker))];
    return std::find(server.begin(), server.end(), worker) != server.end();
  }

  void take(int worker) {
    auto& server = free_[static_cast<std::size_t>(layout_->server_of(type_, worker))];
    server.erase(std::find(server.begin(), server.end(), worker));
  }

  /// s GPUs on as few servers as possible: the fullest-fitting single server when one has room
  /// (the one with the fewest free GPUs that still fits, so large holes stay open for large
  /// jobs), otherwise the servers with the most free GPUs first. Empty if fewer than s are free.
  std::vector<int> take_packed(int s) {
    std::vector<int> taken;
    int best = -1;
    for (std::size_t k = 0; k < free_.size(); ++k) {
      const int room = static_cast<int>(free_[k].size());
      if (room >= s &&
          (best < 0 || room < static_cast<int>(free_[static_cast<std::size_t>(best)].size())))
        best = static_cast<int>(k);
    }
    if (best >= 0) {
      auto& server = free_[static_cast<std::size_t>(best)];
      taken.assign(server.begin(), server.begin() + s);
      server.erase(server.begin(), server.begin() + s);
      return taken;
    }
    std::vector<std::size_t> order(free_.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return free_[a].size() > free_[b].size();
    });
    int available = 0;
    for (const auto& server : free_) available += static_cast<int>(server.size());
    if (available < s) return taken;
    for (const std::size_t k : order) {
      auto& server = free_[k];
      while (!server.empty() && static_cast<int>(taken.size()) < s) {
        taken.push_back(server.front());
        server.erase(server.begin());
      }
      if (static_cast<int>(taken.size()) == s) break;
    }
    std::sort(taken.begin(), taken.end());
    return taken;
  }

 private:
  const worker_layout* layout_;
  int type_;
  std::vector<std::vector<int>> free_;
};

inline void check_round_job(const round_job& job, std::size_t types) {
  if (job.scale_factor < 1)
    throw invalid_problem("job " + std::to_string(job.id) + ": scale factor must be >= 1");
  if (job.allocation.size() != types || job.throughput.size() != types ||
      job.time_received.size() != types || job.deficit.size() != types)
    throw invalid_problem("job " + std::to_string(job.id) +
                          ": allocation, throughput, time_received and deficit need one "
                          "entry per GPU type");
}

}  // namespace detail

/// \brief Selects and places the jobs of one round (a pure function of its arguments).
///
/// \param jobs         the active jobs, with their current allocation and time accounting
/// \param worker_time  per type: the total of time_received over jobs since the last reset
///                     (f_jw = time_received_jw / worker_time_w)
/// \param layout       the cluster's GPUs and servers
/// \param type_order   the order in which types are served (Gavel: fastest first, shuffled
///                     every round for heterogeneity-agnostic policies); each type once
/// \throws invalid_problem on mismatched sizes; std::logic_error if the placement it built
/// would use a GPU twice (an internal check that cannot fire unless the code is wrong).
inline round_plan plan_round(const std::vector<round_job>& jobs,
                             const std::vector<double>& worker_time, const worker_layout& layout,
                             const std::vector<int>& type_order) {
  const auto types = static_cast<std::size_t>(layout.types());
  if (worker_time.size() != types)
    throw invalid_problem("plan_round: worker_time needs one entry per GPU type");
  {
    std::vector<char> seen(types, 0);
    if (type_order.size() != types)
      throw invalid_problem("plan_round: type_order must list every GPU type once");
    for (const int w : type_order) {
      if (w < 0 || static_cast<std::size_t>(w) >= types || seen[static_cast<std::size_t>(w)])
        throw invalid_problem("plan_round: type_order must list every GPU type once");
      seen[static_cast<std::size_t>(w)] = 1;
    }
  }
  for (const round_job& job : jobs) detail::check_round_job(job, types);

  round_plan plan;
  plan.free_gpus.resize(types);
  for (std::size_t w = 0; w < types; ++w) plan.free_gpus[w] = layout.gpus(static_cast<int>(w));

  // ---- Selection: per type, greedy by (priority, deficit, allocation), descending. ----
  // A job is taken once per round, alone or in one pair: tracked by job id.
  std::unordered_set<std::int64_t> busy;
  auto is_busy = [&](std::int64_t id) { return busy.count(id) != 0; };
  auto taken = [&](const round_job& job) {
    return job.first < 0 ? is_busy(job.id) : is_busy(job.first) || is_busy(job.second);
  };
  std::vector<std::vector<std::size_t>> chosen(types);  // job indices taken on each type
  struct entry {
    double priority, deficit, allocation;
    std::size_t job;
  };
  std::vector<entry> entries;
  entries.reserve(jobs.size());
  for (const int w_int : type_order) {
    const auto w = static_cast<std::size_t>(w_int);
    entries.clear();
    for (std::size_t j = 0; j < jobs.size(); ++j) {
      const round_job& job = jobs[j];
      entries.push_back({round_priority(job.allocation[w], job.throughput[w], job.time_received[w],
                                        worker_time[w]),
                         job.deficit[w], job.allocation[w], j});
    }
    // Ties beyond Gavel's key go to the lower id, so a plan is reproducible.
    std::sort(entries.begin(), entries.end(), [&](const entry& a, const entry& b) {
      if (a.priority != b.priority) return a.priority > b.priority;
      if (a.deficit != b.deficit) return a.deficit > b.deficit;
      if (a.allocation != b.allocation) return a.allocation > b.allocation;
      return jobs[a.job].id < jobs[b.job].id;
    });
    for (const entry& e : entries) {
      const round_job& job = jobs[e.job];
      if (!(job.throughput[w] > 0.0) || job.scale_factor > plan.free_gpus[w] || taken(job))
        continue;
      if (job.first < 0) {
        busy.insert(job.id);
      } else {
        busy.insert(job.first);
        busy.insert(job.second);
      }
      plan.free_gpus[w] -= job.scale_factor;
      chosen[w].push_back(e.job);
    }
  }

  // ---- Placement: per type, larger jobs first; lease extensions before fresh placements. ----
  for (const int w_int : type_order) {
    const auto w = static_cast<std::size_t>(w_int);
    std::vector<std::size_t>& members = chosen[w];
    std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      return jobs[a].scale_factor > jobs[b].scale_factor;
    });
    detail::server_pool pool(layout, w_int);
    std::vector<char> placed(members.size(), 0);
    for (std::size_t k = 0; k < members.size(); ++k) {
      const round_job& job = jobs[members[k]];
      if (job.previous_type != w_int ||
          job.previous_workers.size() != static_cast<std::size_t>(job.scale_factor))
        continue;
      bool all_free = true;
      for (const int worker : job.previous_workers) all_free = all_free && pool.is_free(worker);
      if (!all_free) continue;
      for (const int worker : job.previous_workers) pool.take(worker);
      round_assignment a{job.id, w_int, job.previous_workers, true};
      std::sort(a.workers.begin(), a.workers.end());
      plan.assignments.push_back(std::move(a));
      placed[k] = 1;
    }
    for (std::size_t k = 0; k < members.size(); ++k) {
      if (placed[k]) continue;
      const round_job& job = jobs[members[k]];
      std::vector<int> workers = pool.take_packed(job.scale_factor);
      if (static_cast<int>(workers.size()) != job.scale_factor)
        throw std::logic_error("plan_round: selection left too few GPUs for placement");
      plan.assignments.push_back({job.id, w_int, std::move(workers), false});
    }
  }

  // ---- Every GPU at most once (cheap insurance; the simulator relies on it). ----
  std::vector<char> used(static_cast<std::size_t>(layout.total_gpus()), 0);
  for (const round_assignment& a : plan.assignments)
    for (const int worker : a.workers) {
      if (worker < 0 || worker >= layout.total_gpus() || layout.type_of(worker) != a.type ||
          used[static_cast<std::size_t>(worker)])
        throw std::logic_error("plan_round: GPU " + std::to_string(worker) + " assigned twice");
      used[static_cast<std::size_t>(worker)] = 1;
    }
  return plan;
}

/// \brief A pair of jobs the allocation wants to share GPUs (space sharing).
struct pair_request {
  std::int64_t first = 0, second = 0;  ///< ids of two jobs already added, first != second
  std::vector<double> allocation;      ///< X per type: fraction of time the pair shares type w
  std::vector<double> throughput;      ///< > 0 where both jobs can run while sharing
};

/// \brief The mechanism's state across rounds: per-job time accounting since the last reset,
/// deficits, the current allocation and last round's placement. Gavel's rules:
/// - a job enters with time_received = tau/2 on every type (a prior that keeps f > 0);
/// - reset(X, now) (when the allocation is recomputed): deficit_jw += X_jw (now - t_reset) -
///   (time_received_jw - tau/2) with the old X, then time_received := tau/2 and the new X;
/// - record(id, type, seconds) after a round adds the run time to the job's and the type's
///   accounts (worker_time_w is the sum of time_received_jw over the jobs).
class round_mechanism {
 public:
  /// \param layout         the cluster's GPUs and servers
  /// \param round_seconds  tau, the round length (Gavel: 360 s)
  round_mechanism(worker_layout layout, double round_seconds)
      : layout_(std::move(layout)), round_seconds_(round_seconds) {
    if (!(round_seconds > 0.0) || !std::isfinite(round_seconds))
      throw invalid_problem("round_mechanism: round length must be finite and > 0");
    worker_time_.assign(static_cast<std::size_t>(layout_.types()), 0.0);
  }

  const worker_layout& layout() const { return layout_; }
  double round_seconds() const { return round_seconds_; }
  std::size_t jobs() const { return jobs_.size(); }
  const std::vector<double>& worker_time() const { return worker_time_; }

  /// \brief Adds a job with no allocation yet (priority 0 everywhere until the next reset, so it
  /// runs only on GPUs nobody with an allocation wants). \throws invalid_problem for a
  /// duplicate id or bad sizes.
  void add_job(std::int64_t id, int scale_factor, std::vector<double> throughput) {
    const auto types = static_cast<std::size_t>(layout_.types());
    if (index_.count(id) != 0)
      throw invalid_problem("round_mechanism: job " + std::to_string(id) + " added twice");
    round_job job;
    job.id = id;
    job.scale_factor = scale_factor;
    job.throughput = std::move(throughput);
    job.allocation.assign(types, 0.0);
    job.time_received.assign(types, round_seconds_ / 2);
    job.deficit.assign(types, 0.0);
    detail::check_round_job(job, types);
    for (std::size_t w = 0; w < types; ++w) worker_time_[w] += round_seconds_ / 2;
    index_.emplace(id, jobs_.size());
    jobs_.push_back(std::move(job));
  }

  /// \brief Removes a job (finished or dropped), and the pairs it was in. \throws
  /// invalid_problem if unknown.
  void remove_job(std::int64_t id) {
    index_of(id);
    std::vector<std::int64_t> pairs;
    for (const round_job& job : jobs_)
      if (job.first == id || job.second == id) pairs.push_back(job.id);
    for (const std::int64_t pair : pairs) remove_entry(pair);
    remove_entry(id);
  }

  /// \brief Installs a new allocation at time `now` (a reset). `allocation(id)` returns X_j
  /// (one fraction per type) for every current job.
  template <class AllocationOf>
  void reset(double now, AllocationOf&& allocation) {
    reset(now, std::forward<AllocationOf>(allocation), std::vector<pair_request>{});
  }

  /// \brief A reset with space sharing: as reset(now, allocation), and the pairs become entries
  /// of their own (priorities, time accounting and deficits per pair, as Gavel keys them by
  /// the job pair). A pair already present keeps its deficit; pairs not requested are dropped.
  /// Placements of a pair are reported under its entry id (negative; job(id).first/second
  /// name the jobs). \throws invalid_problem for unknown jobs, a job paired with itself,
  /// different scale factors, bad sizes or non-finite values.
  template <class AllocationOf>
  void reset(double now, AllocationOf&& allocation, const std::vector<pair_request>& pairs) {
    const double elapsed = has_reset_ ? now - last_reset_ : 0.0;
    const auto types = worker_time_.size();
    for (round_job& job : jobs_)
      for (std::size_t w = 0; w < types; ++w)
        job.deficit[w] += job.allocation[w] * elapsed - (job.time_received[w] - round_seconds_ / 2);
    std::vector<std::int64_t> wanted;
    for (const pair_request& p : pairs) wanted.push_back(install_pair(p));
    std::vector<std::int64_t> stale;
    for (const round_job& job : jobs_)
      if (job.first >= 0 && std::find(wanted.begin(), wanted.end(), job.id) == wanted.end())
        stale.push_back(job.id);
    for (const std::int64_t id : stale) remove_entry(id);
    for (round_job& job : jobs_) {
      if (job.first < 0) {
        std::vector<double> x = allocation(job.id);
        set_allocation(job, x);
      }
      std::fill(job.time_received.begin(), job.time_received.end(), round_seconds_ / 2);
    }
    for (std::size_t w = 0; w < types; ++w)
      worker_time_[w] = static_cast<double>(jobs_.size()) * round_seconds_ / 2;
    last_reset_ = now;
    has_reset_ = true;
  }

 private:
  void set_allocation(round_job& job, const std::vector<double>& x) {
    if (x.size() != worker_time_.size())
      throw invalid_problem("round_mechanism::reset: job " + std::to_string(job.id) +
                            ": allocation needs one entry per GPU type");
    for (std::size_t w = 0; w < x.size(); ++w) {
      if (!std::isfinite(x[w]))
        throw invalid_problem("round_mechanism::reset: job " + std::to_string(job.id) +
                              ": allocation is not finite");
      job.allocation[w] = std::clamp(x[w], 0.0, 1.0);
    }
  }

  // The entry of pair p (created with a fresh negative id when new); returns its id.
  std::int64_t install_pair(const pair_request& p) {
    const std::string who = "round_mechanism::reset: pair (" + std::to_string(p.first) + ", " +
                            std::to_string(p.second) + ")";
    if (p.first == p.second || p.first < 0 || p.second < 0)
      throw invalid_problem(who + ": needs two different jobs");
    const round_job& a = job(p.first);
    const round_job& b = job(p.second);
    if (a.first >= 0 || b.first >= 0) throw invalid_problem(who + ": names a pair entry");
    if (a.scale_factor != b.scale_factor)
      throw invalid_problem(who + ": jobs with different scale factors cannot share GPUs");
    if (p.throughput.size() != worker_time_.size())
      throw invalid_problem(who + ": throughput needs one entry per GPU type");
    for (const double t : p.throughput)
      if (!std::isfinite(t) || t < 0.0)
        throw invalid_problem(who + ": throughputs must be finite and >= 0");
    const auto key = std::minmax(p.first, p.second);
    auto found = pair_ids_.find(key);
    if (found == pair_ids_.end()) {
      round_job entry;
      entry.id = next_pair_id_--;
      entry.first = key.first;
      entry.second = key.second;
      entry.scale_factor = a.scale_factor;
      entry.allocation.assign(worker_time_.size(), 0.0);
      entry.time_received.assign(worker_time_.size(), round_seconds_ / 2);
      entry.deficit.assign(worker_time_.size(), 0.0);
      index_.emplace(entry.id, jobs_.size());
      found = pair_ids_.emplace(key, entry.id).first;
      jobs_.push_back(std::move(entry));
    }
    round_job& entry = jobs_[index_of(found->second)];
    entry.throughput = p.throughput;
    set_allocation(entry, p.allocation);
    return entry.id;
  }

  void remove_entry(std::int64_t id) {
    const std::size_t k = index_of(id);
    for (std::size_t w = 0; w < worker_time_.size(); ++w)
      worker_time_[w] -= jobs_[k].time_received[w];
    if (k + 1 != jobs_.size()) {
      jobs_[k] = std::move(jobs_.back());
      index_[jobs_[k].id] = k;
    }
    jobs_.pop_back();
    index_.erase(id);
    for (auto it = pair_ids_.begin(); it != pair_ids_.end(); ++it)
      if (it->second == id) {
        pair_ids_.erase(it);
        break;
      }
  }

 public:
  /// \brief The placement of the next round, types served in `type_order`. Remembers it as
  /// "last round's" placement for the next lease extensions.
  round_plan plan(const std::vector<int>& type_order) {
    round_plan result = plan_round(jobs_, worker_time_, layout_, type_order);
    for (round_job& job : jobs_) {
      job.previous_type = -1;
      job.previous_workers.clear();
    }
    for (const round_assignment& a : result.assignments) {
      round_job& job = jobs_[index_of(a.id)];
      job.previous_type = a.type;
      job.previous_workers = a.workers;
    }
    return result;
  }

  /// \brief Accounts `seconds` of run time of job `id` on `type` in the round just executed.
  void record(std::int64_t id, int type, double seconds) {
    round_job& job = jobs_[index_of(id)];
    job.time_received[static_cast<std::size_t>(type)] += seconds;
    worker_time_[static_cast<std::size_t>(type)] += seconds;
  }

  /// \brief The mechanism's view of job `id`. \throws invalid_problem if unknown.
  const round_job& job(std::int64_t id) const { return jobs_[index_of(id)]; }

 private:
  std::size_t index_of(std::int64_t id) const {
    const auto found = index_.find(id);
    if (found == index_.end())
      throw invalid_problem("round_mechanism: unknown job " + std::to_string(id));
    return found->second;
  }

  worker_layout layout_;
  double round_seconds_;
  std::vector<round_job> jobs_;
  std::unordered_map<std::int64_t, std::size_t> index_;
  std::vector<double> worker_time_;
  std::map<std::pair<std::int64_t, std::int64_t>, std::int64_t> pair_ids_;
  std::int64_t next_pair_id_ = -1;
  double last_reset_ = 0.0;
  bool has_reset_ = false;
};

}  // namespace popalloc::cluster
