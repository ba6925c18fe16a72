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
#include "popalloc/detail/stopwatch.hpp"
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

/// One run of the simulator (simulate_impl): the event loop's state and its steps.
class simulation {
 public:
  simulation(const std::vector<sim_job>& jobs, const std::vector<int>& gpus,
             const sim_packed_policy& policy, const simulator_options& options)
      : jobs_(jobs),
        gpus_(gpus),
        policy_(policy),
        options_(options),
        types_(validated_types(jobs, gpus, options)),
        tau_(options.round_seconds),
        mechanism_(worker_layout(gpus, servers(options, types_)), tau_),
        type_order_(checked_type_order(options, types_)),
        random_(options.seed),
        n_(static_cast<std::int64_t>(jobs.size())) {
    const bool windowed = options.window_last > options.window_first;
    windowed_ = windowed;
    window_first_ = windowed ? std::max<std::int64_t>(options.window_first, 0) : 0;
    window_last_ = windowed ? std::min(options.window_last, n_) : n_;
    window_open_ = std::max<std::int64_t>(window_last_ - window_first_, 0);
    result_.jobs.resize(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      result_.jobs[i].arrival_seconds = jobs[i].arrival_seconds;
      result_.jobs[i].seconds_on_type.assign(types_, 0.0);
    }
    arrival_order_.resize(jobs.size());
    std::iota(arrival_order_.begin(), arrival_order_.end(), 0);
    std::stable_sort(arrival_order_.begin(), arrival_order_.end(),
                     [&](std::int64_t a, std::int64_t b) {
                       return job(a).arrival_seconds < job(b).arrival_seconds;
                     });
    remaining_.resize(jobs.size());
    for (std::size_t i = 0; i < jobs.size(); ++i) remaining_[i] = jobs[i].total_steps;
    result_.summary.jobs_total = n_;
    next_progress_ = options.progress_seconds;
  }

  sim_result run() {
    for (;;) {
      if (window_closed()) break;
      if (admit_arrivals()) need_reset_ = true;
      if (window_closed()) break;
      if (active_.empty()) {
        if (next_arrival_ == arrival_order_.size()) break;
        // Idle gap: nothing to run until the next arrival; the next reset may happen at once.
        now_ = std::max(now_, job(arrival_order_[next_arrival_]).arrival_seconds);
        reset_allowed_now_ = true;
        if (now_ >= options_.max_simulated_seconds) break;
        continue;
      }
      if (now_ >= options_.max_simulated_seconds) break;
      bool recomputed = false;
      if (need_reset_ &&
          (reset_allowed_now_ || now_ - last_reset_ >= options_.min_seconds_between_resets)) {
        recompute_allocation();
        recomputed = true;
      }
      run_round(recomputed);
      if (options_.progress && wall_seconds() >= next_progress_) {
        report();
        next_progress_ = wall_seconds() + options_.progress_seconds;
      }
    }
    report();
    summarize();
    return std::move(result_);
  }

 private:
  /// Validates the input (before any work) and returns the number of GPU types.
  static std::size_t validated_types(const std::vector<sim_job>& jobs, const std::vector<int>& gpus,
                                     const simulator_options& options) {
    validate_sim_input(jobs, gpus, options);
    return gpus.size();
  }

  static std::vector<int> servers(const simulator_options& options, std::size_t types) {
    std::vector<int> per_server = options.gpus_per_server;
    if (per_server.empty()) per_server.assign(types, 4);
    return per_server;
  }

  /// plan_round validates the order too, but a bad option should fail before any work.
  static std::vector<int> checked_type_order(const simulator_options& options, std::size_t types) {
    std::vector<int> order = options.type_order;
    if (order.empty()) {
      order.resize(types);
      std::iota(order.begin(), order.end(), 0);
    }
    std::vector<int> sorted = order;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t w = 0; w < types; ++w)
      if (sorted.size() != types || sorted[w] != static_cast<int>(w))
        throw invalid_problem("simulate: type_order must list every GPU type once");
    return order;
  }

  const sim_job& job(std::int64_t id) const { return jobs_[static_cast<std::size_t>(id)]; }
  sim_job_result& outcome(std::int64_t id) { return result_.jobs[static_cast<std::size_t>(id)]; }

  double wall_seconds() const { return wall_clock_.seconds(); }

  bool in_window(std::int64_t id) const { return id >= window_first_ && id < window_last_; }
  bool window_closed() const { return windowed_ && window_open_ == 0; }

  bool runnable(const sim_job& j) const {
    for (std::size_t w = 0; w < types_; ++w)
      if (j.throughput[w] > 0.0 && gpus_[w] >= j.scale_factor) return true;
    return false;
  }

  /// Admits the jobs that have arrived by now; whether any became active.
  bool admit_arrivals() {
    bool admitted = false;
    while (next_arrival_ < arrival_order_.size() &&
           job(arrival_order_[next_arrival_]).arrival_seconds <= now_) {
      const std::int64_t id = arrival_order_[next_arrival_++];
      const sim_job& j = job(id);
      ++arrived_;
      if (j.total_steps == 0.0) {  // nothing to do: done on arrival
        sim_job_result& r = outcome(id);
        r.status = sim_job_status::finished;
        r.finish_seconds = j.arrival_seconds;
        last_completion_ = std::max(last_completion_, r.finish_seconds);
        ++finished_;
        if (in_window(id)) --window_open_;
        continue;
      }
      if (!runnable(j)) {
        outcome(id).status = sim_job_status::unrunnable;
        if (in_window(id)) --window_open_;
        continue;
      }
      outcome(id).status = sim_job_status::running;
      active_.insert(std::lower_bound(active_.begin(), active_.end(), id), id);
      mechanism_.add_job(id, j.scale_factor, j.throughput);
      admitted = true;
    }
    return admitted;
  }

  policy_request request() const {
    policy_request r;
    r.now_seconds = now_;
    r.jobs = &jobs_;
    r.active = active_;
    r.gpus = &gpus_;
    r.remaining_steps.reserve(active_.size());
    r.seconds_since_arrival.reserve(active_.size());
    for (const std::int64_t id : active_) {
      r.remaining_steps.push_back(remaining_[static_cast<std::size_t>(id)]);
      r.seconds_since_arrival.push_back(now_ - job(id).arrival_seconds);
    }
    return r;
  }

  /// Asks the policy for the active jobs' allocation (timed) and resets the mechanism to it.
  void recompute_allocation() {
    const policy_request asked = request();
    const popalloc::detail::stopwatch policy_clock;
    const sim_allocation answer = policy_(asked);
    const Eigen::MatrixXd& x = answer.singles;
    const double seconds = policy_clock.seconds();
    sim_summary& summary = result_.summary;
    ++summary.policy_calls;
    summary.total_policy_seconds += seconds;
    summary.max_policy_seconds = std::max(summary.max_policy_seconds, seconds);
    if (x.rows() != static_cast<Eigen::Index>(active_.size()) ||
        x.cols() != static_cast<Eigen::Index>(types_))
      throw invalid_problem("simulate: the policy returned a " + std::to_string(x.rows()) + " x " +
                            std::to_string(x.cols()) + " allocation for " +
                            std::to_string(active_.size()) + " jobs and " + std::to_string(types_) +
                            " GPU types");
    if (!x.allFinite()) throw invalid_problem("simulate: the policy returned a non-finite value");
    const std::vector<pair_request> requested =
        pair_requests(answer.pairs, jobs_, active_, types_, pair_throughput_);
    mechanism_.reset(
        now_,
        [&](std::int64_t id) {
          const auto row = static_cast<Eigen::Index>(
              std::lower_bound(active_.begin(), active_.end(), id) - active_.begin());
          std::vector<double> fractions(types_);
          for (std::size_t w = 0; w < types_; ++w)
            fractions[w] = x(row, static_cast<Eigen::Index>(w));
          return fractions;
        },
        requested);
    need_reset_ = false;
    reset_allowed_now_ = false;
    last_reset_ = now_;
  }

  /// Job `job_id` runs at t steps/s on type w for up to one round; returns its run time. A job
  /// that runs out of steps finishes then and joins `done`.
  double run_job(std::int64_t job_id, std::size_t w, double t, std::vector<std::int64_t>& done) {
    const auto id = static_cast<std::size_t>(job_id);
    double steps = std::floor(t * tau_);
    if (steps < 1.0) steps = t * tau_;
    steps = std::min(steps, remaining_[id]);
    const double seconds = steps / t;
    remaining_[id] -= steps;
    sim_job_result& r = result_.jobs[id];
    if (std::isnan(r.first_run_seconds)) r.first_run_seconds = now_;
    r.steps_done += steps;
    ++r.rounds_run;
    r.seconds_on_type[w] += seconds;
    if (remaining_[id] <= 0.0) {
      r.status = sim_job_status::finished;
      r.finish_seconds = now_ + seconds;
      last_completion_ = std::max(last_completion_, r.finish_seconds);
      done.push_back(job_id);
    }
    return seconds;
  }

  /// Plans the round, runs it, retires the jobs that finished and moves the clock to its end.
  void run_round(bool recomputed) {
    if (options_.shuffle_type_order) {
      for (std::size_t k = types_; k > 1; --k)
        std::swap(type_order_[k - 1], type_order_[static_cast<std::size_t>(random_.below(k))]);
    }
    const round_plan plan = mechanism_.plan(type_order_);
    double round_end = now_;
    std::vector<std::int64_t> done;
    for (const round_assignment& a : plan.assignments) {
      const auto w = static_cast<std::size_t>(a.type);
      double seconds = 0.0;
      int scale = 0;
      if (a.id >= 0) {
        seconds = run_job(a.id, w, job(a.id).throughput[w], done);
        scale = job(a.id).scale_factor;
      } else {
        // A pair: both jobs run on the same GPUs at their co-located throughputs; the lease
        // lasts as long as the longer of the two.
        const round_job& entry = mechanism_.job(a.id);
        const auto& tp = pair_throughput_.at({entry.first, entry.second});
        seconds = std::max(run_job(entry.first, w, tp.first[w], done),
                           run_job(entry.second, w, tp.second[w], done));
        scale = entry.scale_factor;
      }
      busy_gpu_seconds_ += seconds * scale;
      mechanism_.record(a.id, a.type, seconds);
      round_end = std::max(round_end, now_ + seconds);
    }
    // A round where nothing could run cannot happen (every active job fits an empty cluster),
    // but time must advance regardless.
    if (plan.assignments.empty()) round_end = now_ + tau_;
    ++result_.summary.rounds;
    if (options_.on_round) {
      sim_round info;
      info.start_seconds = now_;
      info.end_seconds = round_end;
      info.active_jobs = active_.size();
      info.plan = &plan;
      info.allocation_recomputed = recomputed;
      options_.on_round(info);
    }
    for (const std::int64_t id : done) {
      mechanism_.remove_job(id);
      active_.erase(std::lower_bound(active_.begin(), active_.end(), id));
      ++finished_;
      if (in_window(id)) --window_open_;
    }
    if (!done.empty()) need_reset_ = true;
    now_ = round_end;
  }

  void report() const {
    if (!options_.progress) return;
    sim_progress p;
    p.simulated_seconds = now_;
    p.jobs_total = n_;
    p.jobs_arrived = arrived_;
    p.jobs_finished = finished_;
    p.jobs_active = static_cast<std::int64_t>(active_.size());
    p.rounds = result_.summary.rounds;
    p.policy_calls = result_.summary.policy_calls;
    p.wall_seconds = wall_seconds();
    options_.progress(p);
  }

  /// The summary metrics of Gavel's evaluation, JCTs over the window's finished jobs.
  void summarize() {
    sim_summary& summary = result_.summary;
    std::vector<double> jct_hours;
    for (std::size_t i = 0; i < jobs_.size(); ++i) {
      const sim_job_result& r = result_.jobs[i];
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
        summary.jobs_unfinished == 0 ? last_completion_ : std::max(now_, last_completion_);
    summary.makespan_hours = end / 3600.0;
    summary.simulated_hours = now_ / 3600.0;
    const double total_gpus = std::accumulate(gpus_.begin(), gpus_.end(), 0.0);
    summary.gpu_utilization = end > 0.0 ? busy_gpu_seconds_ / (total_gpus * end) : 0.0;
    summary.avg_policy_seconds =
        summary.policy_calls > 0
            ? summary.total_policy_seconds / static_cast<double>(summary.policy_calls)
            : 0.0;
    summary.wall_seconds = wall_seconds();
  }

  const std::vector<sim_job>& jobs_;
  const std::vector<int>& gpus_;
  const sim_packed_policy& policy_;
  const simulator_options& options_;
  popalloc::detail::stopwatch wall_clock_;  // started on construction
  std::size_t types_;
  double tau_;
  round_mechanism mechanism_;
  std::vector<int> type_order_;
  random_source random_;
  std::int64_t n_;
  bool windowed_ = false;
  std::int64_t window_first_ = 0, window_last_ = 0, window_open_ = 0;
  sim_result result_;
  std::vector<std::int64_t> arrival_order_;
  std::vector<std::int64_t> active_;  ///< kept increasing
  /// The current allocation's pairs: (first, second) -> their throughputs.
  std::map<std::pair<std::int64_t, std::int64_t>,
           std::pair<std::vector<double>, std::vector<double>>>
      pair_throughput_;
  std::vector<double> remaining_;
  double now_ = 0.0;
  std::size_t next_arrival_ = 0;
  bool need_reset_ = false, reset_allowed_now_ = true;
  double last_reset_ = 0.0;
  double busy_gpu_seconds_ = 0.0, last_completion_ = 0.0;
  std::int64_t arrived_ = 0, finished_ = 0;
  double next_progress_ = 0.0;
};

inline sim_result simulate_impl(const std::vector<sim_job>& jobs, const std::vector<int>& gpus,
                                const sim_packed_policy& policy, const simulator_options& options) {
  return simulation(jobs, gpus, policy, options).run();
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
