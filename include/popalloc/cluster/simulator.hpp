// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A discrete-event simulator of a GPU cluster run by Gavel's round-based mechanism: jobs
/// arrive, a policy (any callable) turns the active jobs into a fluid allocation, the mechanism
/// (round_mechanism.hpp) turns it into rounds of GPU leases, jobs run their rounds' steps and
/// leave. Reports per-job completion times and the summary metrics of Gavel's evaluation.
///
/// The event loop never loses a job: every job ends either finished or reported unfinished with
/// the reason (still running when the simulation stopped, never arrived, or unable to run on the
/// cluster at all), and an idle cluster simply jumps to the next arrival.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/cluster/round_mechanism.hpp"
#include "popalloc/error.hpp"
#include "popalloc/random.hpp"

namespace popalloc::cluster {

/// \brief A job as the simulator sees it.
struct sim_job {
  double arrival_seconds = 0.0;  ///< when the job enters the queue (>= 0)
  double total_steps = 0.0;      ///< work, in training steps (>= 0; 0 finishes on arrival)
  int scale_factor = 1;          ///< GPUs it holds at once, all of one type
  double priority_weight = 1.0;  ///< w_i, passed to the policy
  /// Steps/s of the whole job (all scale_factor GPUs) on each GPU type; 0 = cannot run there.
  std::vector<double> throughput;
};

/// \brief What the policy is asked to allocate: the jobs that have arrived and not finished.
struct policy_request {
  double now_seconds = 0.0;
  const std::vector<sim_job>* jobs = nullptr;  ///< the whole workload, indexed by job id
  std::vector<std::int64_t> active;            ///< ids of the jobs to allocate, increasing
  std::vector<double> remaining_steps;         ///< per active job
  std::vector<double> seconds_since_arrival;   ///< per active job
  const std::vector<int>* gpus = nullptr;      ///< GPUs of each type
};

/// \brief A policy: returns X, one row per active job (request order), one column per GPU type,
/// X_jw = fraction of time job j should spend on type w. Entries are clipped to [0, 1]; NaN or
/// inf, or the wrong shape, is an error. A stateful policy (warm-started prices, finish-time
/// fairness history) keeps its state inside the callable.
using sim_policy = std::function<Eigen::MatrixXd(const policy_request&)>;

/// \brief Two active jobs sharing GPUs (space sharing), as a packed policy asks for them.
struct sim_pair {
  std::int64_t first = 0, second = 0;  ///< job ids (different, same scale factor)
  std::vector<double> allocation;      ///< fraction of time the pair shares type w
  /// Steps/s of each job while they share type w (0: they cannot share there).
  std::vector<double> first_throughput, second_throughput;
};

/// \brief A packed policy's answer: X of the jobs alone (as sim_policy's) and the pairs.
struct sim_allocation {
  Eigen::MatrixXd singles;
  std::vector<sim_pair> pairs;
};

/// \brief A space-sharing policy (simulate_packed()).
using sim_packed_policy = std::function<sim_allocation(const policy_request&)>;

/// \brief Progress reported while a simulation runs.
struct sim_progress {
  double simulated_seconds = 0.0;
  std::int64_t jobs_total = 0, jobs_arrived = 0, jobs_finished = 0, jobs_active = 0;
  std::int64_t rounds = 0, policy_calls = 0;
  double wall_seconds = 0.0;
};

/// \brief One executed round, for inspection (tests check every GPU is used at most once).
struct sim_round {
  double start_seconds = 0.0, end_seconds = 0.0;
  std::size_t active_jobs = 0;
  const round_plan* plan = nullptr;
  bool allocation_recomputed = false;
};

struct simulator_options {
  double round_seconds = 360.0;  ///< tau (Gavel: 360 s)
  /// The allocation is recomputed on an arrival or completion only if this long has passed
  /// since the last recomputation (Gavel: 1920 s); the first one, and the first after an idle
  /// cluster, happen at once. 0 recomputes at every round that follows an arrival/completion.
  double min_seconds_between_resets = 1920.0;
  /// GPUs per server for each type (empty: 4 everywhere). Only placement depends on it.
  std::vector<int> gpus_per_server;
  /// Order in which types are served in a round (empty: 0, 1, ...). Gavel serves the fastest
  /// type first.
  std::vector<int> type_order;
  /// Heterogeneity-agnostic policies: shuffle the type order every round (seeded), as Gavel.
  bool shuffle_type_order = false;
  std::uint64_t seed = 0;
  /// Stop at this simulated time; jobs not finished by then are reported unfinished.
  double max_simulated_seconds = std::numeric_limits<double>::infinity();
  /// Measurement window of job ids [window_first, window_last): JCT statistics cover these jobs
  /// only, and the simulation stops once they are all done (Gavel measures jobs 4000-5000 of a
  /// continuous stream). window_last <= window_first (the default): every job, run to the end.
  std::int64_t window_first = 0, window_last = 0;
  std::function<void(const sim_progress&)> progress;  ///< called every progress_seconds (wall)
  double progress_seconds = 1.0;
  std::function<void(const sim_round&)> on_round;  ///< called after every round
};

/// \brief How a job ended.
enum class sim_job_status : std::uint8_t {
  finished,     ///< completed all its steps
  running,      ///< arrived, not finished when the simulation stopped
  not_arrived,  ///< its arrival time lies after the end of the simulation
  unrunnable,   ///< no GPU type with throughput > 0 has at least scale_factor GPUs
};

inline const char* to_string(sim_job_status status) {
  switch (status) {
    case sim_job_status::finished:
      return "finished";
    case sim_job_status::running:
      return "unfinished";
    case sim_job_status::not_arrived:
      return "not_arrived";
    case sim_job_status::unrunnable:
      return "unrunnable";
  }
  return "unknown";
}

struct sim_job_result {
  sim_job_status status = sim_job_status::not_arrived;
  double arrival_seconds = 0.0;
  double first_run_seconds = std::numeric_limits<double>::quiet_NaN();  ///< NaN: never ran
  double finish_seconds = std::numeric_limits<double>::quiet_NaN();     ///< NaN: not finished
  double steps_done = 0.0;
  std::int64_t rounds_run = 0;
  std::vector<double> seconds_on_type;  ///< run time on each GPU type

  double jct_seconds() const { return finish_seconds - arrival_seconds; }
};

struct sim_summary {
  std::int64_t jobs_total = 0, jobs_finished = 0, jobs_unfinished = 0;
  std::int64_t jobs_measured = 0;  ///< finished jobs of the window, the JCT sample
  double avg_jct_hours = std::numeric_limits<double>::quiet_NaN();
  double p50_jct_hours = std::numeric_limits<double>::quiet_NaN();
  double p99_jct_hours = std::numeric_limits<double>::quiet_NaN();
  /// Time of the last completion (or of the stop, if jobs were left unfinished), from t = 0.
  double makespan_hours = 0.0;
  /// Busy GPU-seconds / (GPUs x simulated time).
  double gpu_utilization = 0.0;
  double avg_policy_seconds = 0.0;  ///< mean wall time of one allocation computation
  double max_policy_seconds = 0.0;
  double total_policy_seconds = 0.0;
  std::int64_t policy_calls = 0;
  std::int64_t rounds = 0;
  double simulated_hours = 0.0;
  double wall_seconds = 0.0;
};

struct sim_result {
  std::vector<sim_job_result> jobs;  ///< by job id
  sim_summary summary;
};

/// \brief Percentile q in [0, 100] of `values` by linear interpolation between order statistics
/// (numpy's default), NaN for an empty sample.
inline double percentile(std::vector<double> values, double q) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const double rank = q / 100.0 * static_cast<double>(values.size() - 1);
  const auto lower = static_cast<std::size_t>(std::floor(rank));
  const std::size_t upper = std::min(lower + 1, values.size() - 1);
  return values[lower] + (rank - static_cast<double>(lower)) * (values[upper] - values[lower]);
}

namespace detail {

inline void validate_sim_input(const std::vector<sim_job>& jobs, const std::vector<int>& gpus,
                               const simulator_options& options) {
  if (gpus.empty()) throw invalid_problem("simulate: the cluster has no GPU types");
  for (const int g : gpus)
    if (g < 0) throw invalid_problem("simulate: negative GPU count");
  if (!(options.round_seconds > 0.0) || !std::isfinite(options.round_seconds))
    throw invalid_problem("simulate: round_seconds must be finite and > 0");
  if (!(options.min_seconds_between_resets >= 0.0) ||
      !std::isfinite(options.min_seconds_between_resets))
    throw invalid_problem("simulate: min_seconds_between_resets must be finite and >= 0");
  if (!(options.max_simulated_seconds > 0.0))
    throw invalid_problem("simulate: max_simulated_seconds must be > 0");
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const sim_job& job = jobs[i];
    const std::string name = "simulate: job " + std::to_string(i);
    if (!std::isfinite(job.arrival_seconds) || job.arrival_seconds < 0.0)
      throw invalid_problem(name + ": arrival time must be finite and >= 0");
    if (!std::isfinite(job.total_steps) || job.total_steps < 0.0)
      throw invalid_problem(name + ": total steps must be finite and >= 0");
    if (job.scale_factor < 1) throw invalid_problem(name + ": scale factor must be >= 1");
    if (!std::isfinite(job.priority_weight) || !(job.priority_weight > 0.0))
      throw invalid_problem(name + ": priority weight must be finite and > 0");
    if (job.throughput.size() != gpus.size())
      throw invalid_problem(name + ": needs one throughput per GPU type");
    for (const double t : job.throughput)
      if (!std::isfinite(t) || t < 0.0)
        throw invalid_problem(name + ": throughputs must be finite and >= 0");
  }
}

}  // namespace detail

namespace detail {

/// Checks a packed policy's pairs and turns them into the mechanism's requests; `throughputs`
/// gets each pair's member throughputs keyed by (smaller id, larger id).
inline std::vector<pair_request> pair_requests(
    const std::vector<sim_pair>& pairs, const std::vector<sim_job>& jobs,
    const std::vector<std::int64_t>& active, std::size_t types,
    std::map<std::pair<std::int64_t, std::int64_t>,
             std::pair<std::vector<double>, std::vector<double>>>& throughputs) {
  std::vector<pair_request> out;
  throughputs.clear();
  for (const sim_pair& p : pairs) {
    const std::string who =
        "simulate: pair (" + std::to_string(p.first) + ", " + std::to_string(p.second) + ")";
    for (const std::int64_t id : {p.first, p.second})
      if (!std::binary_search(active.begin(), active.end(), id))
        throw invalid_problem(who + " names a job that is not active");
    if (p.allocation.size() != types || p.first_throughput.size() != types ||
        p.second_throughput.size() != types)
      throw invalid_problem(who + ": allocation and throughputs need one entry per GPU type");
    pair_request r;
    r.first = p.first;
    r.second = p.second;
    r.allocation = p.allocation;
    r.throughput.resize(types);
    for (std::size_t w = 0; w < types; ++w) {
      const double a = p.first_throughput[w], b = p.second_throughput[w];
      if (!std::isfinite(a) || !std::isfinite(b) || a < 0.0 || b < 0.0 ||
          !std::isfinite(p.allocation[w]))
        throw invalid_problem(who + ": allocation and throughputs must be finite, >= 0");
      r.throughput[w] = std::min(a, b);
    }
    if (jobs[static_cast<std::size_t>(p.first)].scale_factor !=
        jobs[static_cast<std::size_t>(p.second)].scale_factor)
      throw invalid_problem(who + ": different scale factors cannot share GPUs");
    const bool swapped = p.first > p.second;
    throughputs[std::minmax(p.first, p.second)] =
        swapped ? std::make_pair(p.second_throughput, p.first_throughput)
                : std::make_pair(p.first_throughput, p.second_throughput);
    out.push_back(std::move(r));
  }
  return out;
}

inline sim_result simulate_impl(const std::vector<sim_job>& jobs, const std::vector<int>& gpus,
                                const sim_packed_policy& policy, const simulator_options& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  auto wall_seconds = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  };
  validate_sim_input(jobs, gpus, options);
  const std::size_t types = gpus.size();
  const double tau = options.round_seconds;

  std::vector<int> per_server = options.gpus_per_server;
  if (per_server.empty()) per_server.assign(types, 4);
  round_mechanism mechanism(worker_layout(gpus, per_server), tau);

  std::vector<int> type_order = options.type_order;
  if (type_order.empty()) {
    type_order.resize(types);
    std::iota(type_order.begin(), type_order.end(), 0);
  }
  {
    // plan_round validates the order too, but a bad option should fail before any work.
    std::vector<int> sorted = type_order;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t w = 0; w < types; ++w)
      if (sorted.size() != types || sorted[w] != static_cast<int>(w))
        throw invalid_problem("simulate: type_order must list every GPU type once");
  }
  random_source random(options.seed);

  const auto n = static_cast<std::int64_t>(jobs.size());
  const bool windowed = options.window_last > options.window_first;
  const std::int64_t window_first = windowed ? std::max<std::int64_t>(options.window_first, 0) : 0;
  const std::int64_t window_last = windowed ? std::min(options.window_last, n) : n;
  auto in_window = [&](std::int64_t id) { return id >= window_first && id < window_last; };
  std::int64_t window_open = std::max<std::int64_t>(window_last - window_first, 0);

  sim_result result;
  result.jobs.resize(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    result.jobs[i].arrival_seconds = jobs[i].arrival_seconds;
    result.jobs[i].seconds_on_type.assign(types, 0.0);
  }
  std::vector<std::int64_t> arrival_order(jobs.size());
  std::iota(arrival_order.begin(), arrival_order.end(), 0);
  std::stable_sort(arrival_order.begin(), arrival_order.end(), [&](std::int64_t a, std::int64_t b) {
    return jobs[static_cast<std::size_t>(a)].arrival_seconds <
           jobs[static_cast<std::size_t>(b)].arrival_seconds;
  });

  std::vector<std::int64_t> active;  // kept increasing
  std::map<std::pair<std::int64_t, std::int64_t>,
           std::pair<std::vector<double>, std::vector<double>>>
      pair_throughput;  // the current allocation's pairs: (first, second) -> their throughputs
  std::vector<double> remaining(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) remaining[i] = jobs[i].total_steps;

  sim_summary& summary = result.summary;
  summary.jobs_total = n;
  double now = 0.0;
  std::size_t next_arrival = 0;
  bool need_reset = false, reset_allowed_now = true;
  double last_reset = 0.0;
  double busy_gpu_seconds = 0.0, last_completion = 0.0;
  std::int64_t arrived = 0, finished = 0;
  double next_progress = options.progress_seconds;
  auto report = [&] {
    if (!options.progress) return;
    sim_progress p;
    p.simulated_seconds = now;
    p.jobs_total = n;
    p.jobs_arrived = arrived;
    p.jobs_finished = finished;
    p.jobs_active = static_cast<std::int64_t>(active.size());
    p.rounds = summary.rounds;
    p.policy_calls = summary.policy_calls;
    p.wall_seconds = wall_seconds();
    options.progress(p);
  };
  auto runnable = [&](const sim_job& job) {
    for (std::size_t w = 0; w < types; ++w)
      if (job.throughput[w] > 0.0 && gpus[w] >= job.scale_factor) return true;
    return false;
  };

  for (;;) {
    if (windowed && window_open == 0) break;
    // Admit arrivals.
    bool admitted = false;
    while (next_arrival < arrival_order.size() &&
           jobs[static_cast<std::size_t>(arrival_order[next_arrival])].arrival_seconds <= now) {
      const std::int64_t id = arrival_order[next_arrival++];
      const sim_job& job = jobs[static_cast<std::size_t>(id)];
      ++arrived;
      if (job.total_steps == 0.0) {  // nothing to do: done on arrival
        sim_job_result& r = result.jobs[static_cast<std::size_t>(id)];
        r.status = sim_job_status::finished;
        r.finish_seconds = job.arrival_seconds;
        last_completion = std::max(last_completion, r.finish_seconds);
        ++finished;
        if (in_window(id)) --window_open;
        continue;
      }
      if (!runnable(job)) {
        result.jobs[static_cast<std::size_t>(id)].status = sim_job_status::unrunnable;
        if (in_window(id)) --window_open;
        continue;
      }
      result.jobs[static_cast<std::size_t>(id)].status = sim_job_status::running;
      active.insert(std::lower_bound(active.begin(), active.end(), id), id);
      mechanism.add_job(id, job.scale_factor, job.throughput);
      admitted = true;
    }
    if (admitted) need_reset = true;
    if (windowed && window_open == 0) break;
    if (active.empty()) {
      if (next_arrival == arrival_order.size()) break;
      // Idle gap: nothing to run until the next arrival; the next reset may happen at once.
      now = std::max(now,
                     jobs[static_cast<std::size_t>(arrival_order[next_arrival])].arrival_seconds);
      reset_allowed_now = true;
      if (now >= options.max_simulated_seconds) break;
      continue;
    }
    if (now >= options.max_simulated_seconds) break;

    bool recomputed = false;
    if (need_reset &&
        (reset_allowed_now || now - last_reset >= options.min_seconds_between_resets)) {
      policy_request request;
      request.now_seconds = now;
      request.jobs = &jobs;
      request.active = active;
      request.gpus = &gpus;
      request.remaining_steps.reserve(active.size());
      request.seconds_since_arrival.reserve(active.size());
      for (const std::int64_t id : active) {
        request.remaining_steps.push_back(remaining[static_cast<std::size_t>(id)]);
        request.seconds_since_arrival.push_back(now -
                                                jobs[static_cast<std::size_t>(id)].arrival_seconds);
      }
      const auto policy_start = std::chrono::steady_clock::now();
      const sim_allocation answer = policy(request);
      const Eigen::MatrixXd& x = answer.singles;
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - policy_start).count();
      ++summary.policy_calls;
      summary.total_policy_seconds += seconds;
      summary.max_policy_seconds = std::max(summary.max_policy_seconds, seconds);
      if (x.rows() != static_cast<Eigen::Index>(active.size()) ||
          x.cols() != static_cast<Eigen::Index>(types))
        throw invalid_problem("simulate: the policy returned a " + std::to_string(x.rows()) +
                              " x " + std::to_string(x.cols()) + " allocation for " +
                              std::to_string(active.size()) + " jobs and " + std::to_string(types) +
                              " GPU types");
      if (!x.allFinite()) throw invalid_problem("simulate: the policy returned a non-finite value");
      const std::vector<pair_request> requested =
          pair_requests(answer.pairs, jobs, active, types, pair_throughput);
      mechanism.reset(
          now,
          [&](std::int64_t id) {
            const auto row = static_cast<Eigen::Index>(
                std::lower_bound(active.begin(), active.end(), id) - active.begin());
            std::vector<double> fractions(types);
            for (std::size_t w = 0; w < types; ++w)
              fractions[w] = x(row, static_cast<Eigen::Index>(w));
            return fractions;
          },
          requested);
      need_reset = false;
      reset_allowed_now = false;
      last_reset = now;
      recomputed = true;
    }

    if (options.shuffle_type_order) {
      for (std::size_t k = types; k > 1; --k)
        std::swap(type_order[k - 1], type_order[static_cast<std::size_t>(random.below(k))]);
    }
    const round_plan plan = mechanism.plan(type_order);

    // Execute the round.
    double round_end = now;
    std::vector<std::int64_t> done;
    // Job `id` runs at t steps/s on type w for up to one round; returns its run time.
    auto run = [&](std::int64_t job_id, std::size_t w, double t) {
      const auto id = static_cast<std::size_t>(job_id);
      double steps = std::floor(t * tau);
      if (steps < 1.0) steps = t * tau;
      steps = std::min(steps, remaining[id]);
      const double seconds = steps / t;
      remaining[id] -= steps;
      sim_job_result& r = result.jobs[id];
      if (std::isnan(r.first_run_seconds)) r.first_run_seconds = now;
      r.steps_done += steps;
      ++r.rounds_run;
      r.seconds_on_type[w] += seconds;
      if (remaining[id] <= 0.0) {
        r.status = sim_job_status::finished;
        r.finish_seconds = now + seconds;
        last_completion = std::max(last_completion, r.finish_seconds);
        done.push_back(job_id);
      }
      return seconds;
    };
    for (const round_assignment& a : plan.assignments) {
      const auto w = static_cast<std::size_t>(a.type);
      double seconds = 0.0;
      int scale = 0;
      if (a.id >= 0) {
        seconds = run(a.id, w, jobs[static_cast<std::size_t>(a.id)].throughput[w]);
        scale = jobs[static_cast<std::size_t>(a.id)].scale_factor;
      } else {
        // A pair: both jobs run on the same GPUs at their co-located throughputs; the lease
        // lasts as long as the longer of the two.
        const round_job& entry = mechanism.job(a.id);
        const auto& tp = pair_throughput.at({entry.first, entry.second});
        seconds = std::max(run(entry.first, w, tp.first[w]), run(entry.second, w, tp.second[w]));
        scale = entry.scale_factor;
      }
      busy_gpu_seconds += seconds * scale;
      mechanism.record(a.id, a.type, seconds);
      round_end = std::max(round_end, now + seconds);
    }
    // A round where nothing could run cannot happen (every active job fits an empty cluster),
    // but time must advance regardless.
    if (plan.assignments.empty()) round_end = now + tau;
    ++summary.rounds;
    if (options.on_round) {
      sim_round info;
      info.start_seconds = now;
      info.end_seconds = round_end;
      info.active_jobs = active.size();
      info.plan = &plan;
      info.allocation_recomputed = recomputed;
      options.on_round(info);
    }
    for (const std::int64_t id : done) {
      mechanism.remove_job(id);
      active.erase(std::lower_bound(active.begin(), active.end(), id));
      ++finished;
      if (in_window(id)) --window_open;
    }
    if (!done.empty()) need_reset = true;
    now = round_end;
    if (options.progress && wall_seconds() >= next_progress) {
      report();
      next_progress = wall_seconds() + options.progress_seconds;
    }
  }
  report();

  // ---- Summary. ----
  std::vector<double> jct_hours;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const sim_job_result& r = result.jobs[i];
    if (r.status == sim_job_status::finished) {
      ++summary.jobs_finished;
      if (in_window(static_cast<std::int64_t>(i))) jct_hours.push_back(r.jct_seconds() / 3600.0);
    }
  }
  summary.jobs_unfinished = summary.jobs_total - summary.jobs_finished;
  summary.jobs_measured = static_cast<std::int64_t>(jct_hours.size());
  if (!jct_hours.empty()) {
    summary.avg_jct_hours = std::accumulate(jct_hours.begin(), jct_hours.end(), 0.0) /
                            static_cast<double>(jct_hours.size());
    summary.p50_jct_hours = percentile(jct_hours, 50.0);
    summary.p99_jct_hours = percentile(jct_hours, 99.0);
  }
  const double end =
      summary.jobs_unfinished == 0 ? last_completion : std::max(now, last_completion);
  summary.makespan_hours = end / 3600.0;
  summary.simulated_hours = now / 3600.0;
  const double total_gpus = std::accumulate(gpus.begin(), gpus.end(), 0.0);
  summary.gpu_utilization = end > 0.0 ? busy_gpu_seconds / (total_gpus * end) : 0.0;
  summary.avg_policy_seconds =
      summary.policy_calls > 0
          ? summary.total_policy_seconds / static_cast<double>(summary.policy_calls)
          : 0.0;
  summary.wall_seconds = wall_seconds();
  return result;
}

}  // namespace detail

/// \brief Simulates `jobs` (ids = positions) on a cluster with `gpus[w]` GPUs of type w under
/// `policy` and Gavel's round-based mechanism.
///
/// Loop, at simulated time t (a round start): admit the jobs that have arrived by t; if none is
/// active, jump to the next arrival (an idle gap) or stop; recompute the allocation if jobs
/// arrived or finished since the last computation and the reset rule allows it; plan the round;
/// run each placed job for min(floor(T tau), remaining) steps (fractional steps when T tau < 1,
/// where Gavel would never progress), which takes steps / T seconds; a job that runs out of steps
/// finishes at that moment; the next round starts when the last job of this one stops.
/// \throws invalid_problem for invalid jobs, cluster or options, or a policy answer of the
/// wrong shape or with non-finite entries; whatever the policy throws.
inline sim_result simulate(const std::vector<sim_job>& jobs, const std::vector<int>& gpus,
                           const sim_policy& policy, const simulator_options& options = {}) {
  if (!policy) throw invalid_problem("simulate: no policy");
  return detail::simulate_impl(
      jobs, gpus,
      [&](const policy_request& r) {
        return sim_allocation{policy(r), {}};
      },
      options);
}

/// \brief simulate() with space sharing: the policy also returns pairs of jobs that share GPUs
/// (sim_allocation::pairs). A pair is an entry of the mechanism of its own (priority, time
/// accounting, deficit); when placed, both jobs run on the same GPUs for the round at their
/// co-located throughputs and neither runs elsewhere in that round. A pair ends with the
/// next recomputation or when one of its jobs finishes.
/// \throws as simulate(), and for pairs of inactive jobs, of different scale factors, or with
/// non-finite or negative entries.
inline sim_result simulate_packed(const std::vector<sim_job>& jobs, const std::vector<int>& gpus,
                                  const sim_packed_policy& policy,
                                  const simulator_options& options = {}) {
  if (!policy) throw invalid_problem("simulate: no policy");
  return detail::simulate_impl(jobs, gpus, policy, options);
}

}  // namespace popalloc::cluster
