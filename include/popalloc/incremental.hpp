// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief incremental_solver: a dense problem kept across solves while jobs arrive, leave and
/// change and capacities move, each solve starting where the last one ended.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/backend/cpu.hpp"
#include "popalloc/dense_problem.hpp"
#include "popalloc/detail/carried_allocation.hpp"
#include "popalloc/detail/price_ledger.hpp"
#include "popalloc/detail/priced_carry.hpp"
#include "popalloc/detail/sample_start.hpp"
#include "popalloc/detail/unlimited_carry.hpp"
#include "popalloc/dual_solver.hpp"
#include "popalloc/error.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"
#include "popalloc/value_range.hpp"

namespace popalloc {

namespace detail {

/// Where the next solve of a slightly changed problem starts, from the last solve's result.
struct warm_state {
  Eigen::VectorXd prices;  ///< empty: start cold
  sample_start_level level;
};

/// The last solve's prices and smoothing level when it ended with a certificate worth starting
/// from; otherwise a cold start.
/// - With the bound at g(0) the smoothed minimiser's prices are proportional to the smoothing,
///   so they are kept only with their level, and only when they price nothing but resources the
///   allocation fills (prices_complementary), as after a sample solve.
/// - Otherwise the last prices, at the last level; piecewise-linear utilities at no less than
///   the usual warm-start level: below it a Newton step from prices that a larger change moved
///   off the optimum costs more evaluations than walking down the levels again (measured on the
///   random changes of tests/test_incremental.cpp, a third of the jobs per round).
template <class Utility>
warm_state next_warm_start(const solve_result& last, const Eigen::VectorXd& capacity) {
  if (last.status != solve_status::converged || !last.final_prices.allFinite() ||
      last.final_prices.size() != capacity.size())
    return {};
  if (!(last.dual_bound < last.trivial_bound)) {
    if (!prices_complementary(last, capacity)) return {};
    // As after such a sample, the first evaluation there usually ends the solve.
    return {last.final_prices, sample_start_level::at_g0_minimiser(last.smoothing)};
  }
  const double level = Utility::piecewise_linear
                           ? std::max(last.smoothing, method_constants::warm_smoothing)
                           : last.smoothing;
  return {last.final_prices, sample_start_level::at(level, true)};
}

}  // namespace detail

/// \brief A dense problem (one throughput per job and resource) that changes between solves:
/// a scheduler's rounds, where a few jobs arrive, finish or are re-profiled and capacities
/// change, and every round re-plans.
///
/// Jobs are named by the id add_job() returns (ids are never reused). Row i of the problem and of
/// a solve's result (solve_result::throughput, allocation) is job job_ids()[i], until the next
/// change: removing a job moves the last row into its place. Each solve after the first starts
/// from the prices and the smoothing level the last one ended with and skips the sample start;
/// its result carries the same certificate as solve() of the changed problem (which is what
/// solve_cold() returns). A warm solve that stalls or ends in a numerical error is repeated
/// cold, within what is left of options().max_iterations and time_limit_seconds (which bound
/// the whole call), and the better certified answer returned.
///
/// Piecewise-linear utilities: when the last answer reached the unlimited-capacity objective
/// g(0) (every target met), the next solve first carries that allocation over: unchanged jobs
/// keep their rows, arrived and changed ones are placed on their fastest resources with room.
/// When that allocation meets the tolerance against g(0) it is returned with no dual evaluation
/// (iterations 0, prices 0: the certificate is g(0) itself); otherwise the solve runs as above.
///
/// solve() returns the solver's own copy of the answer (the next re-plan starts from it), valid
/// until the next solve() or until the solver is destroyed or moved: at a million jobs a copy
/// of the allocation costs more than a re-plan after a few changes. Copy it to keep it longer.
/// The solver also holds the arrays of the answer before it, for the next re-plan to fill.
///
/// Per-option demands (dense_problem::demand) are not supported; job_demand is.
/// Not thread-safe: one thread changes and solves at a time.
template <class Utility, class Scalar = double, class Backend = backend::cpu>
class incremental_solver {
 public:
  using job_id = std::int64_t;
  using row = Eigen::Matrix<double, 1, Eigen::Dynamic>;

  /// \throws invalid_problem when `capacity` is empty or has an entry outside [0, 1e60];
  /// invalid_options from solver_options::validate.
  explicit incremental_solver(const Eigen::VectorXd& capacity, const solver_options& options = {},
                              const Utility& utility = {})
      : utility_(utility), options_(options) {
    detail::check_utility<Utility>();
    if (capacity.size() == 0) throw invalid_problem("an incremental problem needs a resource");
    problem_.throughput.resize(0, capacity.size());
    set_capacities(capacity);
    options_.validate();
  }

  Eigen::Index jobs() const { return static_cast<Eigen::Index>(ids_.size()); }
  Eigen::Index resources() const { return problem_.resources(); }

  /// Job ids in row order of the problem and of the last result (until the next change).
  const std::vector<job_id>& job_ids() const { return ids_; }

  /// The row of job `id`. \throws invalid_problem for an unknown id.
  Eigen::Index row_of(job_id id) const { return find(id); }

  bool contains(job_id id) const { return rows_.count(id) != 0; }

  /// The problem as it stands (what solve_cold() solves), row i being job job_ids()[i].
  const dense_problem<Scalar>& problem() {
    settle();
    return problem_;
  }

  solver_options& options() { return options_; }
  const solver_options& options() const { return options_; }

  /// Adds a job: its throughput on every resource, its weight, its target (target-priority
  /// utilities only) and its job_demand (units of any resource it holds at once). Amortised
  /// O(m): arrivals are kept aside and join the problem's arrays in one step at the next solve.
  /// \throws invalid_problem, naming the bad value, with nothing changed.
  job_id add_job(const Eigen::Ref<const row>& throughput, double weight = 1.0, double target = 0.0,
                 double demand = 1.0) {
    check_job(throughput, weight, target, demand, "a new job");
    const job_id id = next_id_;
    const auto i = static_cast<Eigen::Index>(ids_.size());
    ids_.push_back(id);
    try {
      origin_.push_back(-1);
      rows_.emplace(id, i);
      if (i < problem_.jobs()) {  // a row a removal left
        write_row(i, throughput, weight, target, demand);
        ++live_;
      } else {
        arrivals_.add(throughput, weight, target, demand);
      }
    } catch (...) {
      rows_.erase(id);
      origin_.resize(ids_.size() - 1);
      ids_.pop_back();
      throw;
    }
    ++next_id_;
    return id;
  }

  /// Adds every job of `batch` (its capacity is not used), in row order; returns their ids.
  /// \throws invalid_problem, naming the bad value, with nothing changed.
  std::vector<job_id> add_jobs(const dense_problem<Scalar>& batch) {
    if (batch.resources() != resources())
      throw invalid_problem("the jobs have " + std::to_string(batch.resources()) +
                            " throughputs each, the problem has " + std::to_string(resources()) +
                            " resources");
    if (batch.demand.size() != 0)
      throw invalid_problem("incremental_solver takes job_demand, not per-option demand");
    const Eigen::Index n = batch.jobs();
    auto entry = [&](const auto& v, Eigen::Index i, double otherwise) {
      if (v.size() == 0) return otherwise;
      if (v.size() != n)
        throw invalid_problem("the jobs' weight, target and job_demand need one entry per job");
      return static_cast<double>(v[i]);
    };
    for (Eigen::Index i = 0; i < n; ++i)
      check_job(batch.throughput.row(i).template cast<double>(), entry(batch.weight, i, 1.0),
                entry(batch.target, i, 0.0), entry(batch.job_demand, i, 1.0),
                "job " + std::to_string(i) + " of the batch");
    std::vector<job_id> added;
    added.reserve(static_cast<std::size_t>(n));
    rows_.reserve(rows_.size() + static_cast<std::size_t>(n));
    for (Eigen::Index i = 0; i < n; ++i)
      added.push_back(add_job(batch.throughput.row(i).template cast<double>(),
                              entry(batch.weight, i, 1.0), entry(batch.target, i, 0.0),
                              entry(batch.job_demand, i, 1.0)));
    return added;
  }

  /// Removes job `id`; the last row moves into its place. \throws invalid_problem for an
  /// unknown id.
  void remove_job(job_id id) {
    merge_arrivals();
    const Eigen::Index i = find(id), last = live_ - 1;
    retire(i);
    if (i != last) {
      problem_.throughput.row(i) = problem_.throughput.row(last);
      problem_.weight[i] = problem_.weight[last];
      if (problem_.target.size() != 0) problem_.target[i] = problem_.target[last];
      if (problem_.job_demand.size() != 0) problem_.job_demand[i] = problem_.job_demand[last];
      ids_[static_cast<std::size_t>(i)] = ids_.back();
      origin_[static_cast<std::size_t>(i)] = origin_.back();
      rows_[ids_.back()] = i;
    }
    ids_.pop_back();
    origin_.pop_back();
    rows_.erase(id);
    --live_;
  }

  /// \throws invalid_problem for an unknown id or a bad value, with nothing changed.
  void update_throughput(job_id id, const Eigen::Ref<const row>& throughput) {
    merge_arrivals();
    const Eigen::Index i = find(id);
    check_job(throughput, weight_of(i), target_of(i), demand_of(i), "job " + std::to_string(id));
    retire(i);
    problem_.throughput.row(i) = throughput.template cast<Scalar>();
    changed(i);
  }
  void update_weight(job_id id, double weight) {
    merge_arrivals();
    const Eigen::Index i = find(id);
    check_job(problem_.throughput.row(i).template cast<double>(), weight, target_of(i),
              demand_of(i), "job " + std::to_string(id));
    retire(i);
    problem_.weight[i] = static_cast<Scalar>(weight);
    changed(i);
  }
  void update_target(job_id id, double target) {
    merge_arrivals();
    const Eigen::Index i = find(id);
    check_job(problem_.throughput.row(i).template cast<double>(), weight_of(i), target,
              demand_of(i), "job " + std::to_string(id));
    retire(i);
    if (Utility::uses_target) problem_.target[i] = static_cast<Scalar>(target);
    changed(i);
  }
  void update_demand(job_id id, double demand) {
    merge_arrivals();
    const Eigen::Index i = find(id);
    check_job(problem_.throughput.row(i).template cast<double>(), weight_of(i), target_of(i),
              demand, "job " + std::to_string(id));
    retire(i);
    write_demand(i, demand);
    changed(i);
  }

  /// \throws invalid_problem for an index outside [0, resources()) or a capacity outside
  /// [0, 1e60], with nothing changed.
  void set_capacity(Eigen::Index resource, double capacity) {
    if (resource < 0 || resource >= resources())
      throw invalid_problem("resource " + std::to_string(resource) + " does not exist (there are " +
                            std::to_string(resources()) + ")");
    check_capacity(capacity, resource);
    if ((capacity == 0) != (problem_.capacity[resource] == 0)) ledger_.active = false;
    problem_.capacity[resource] = capacity;
  }
  void set_capacities(const Eigen::VectorXd& capacity) {
    if (capacity.size() != resources())
      throw invalid_problem("capacity has " + std::to_string(capacity.size()) +
                            " entries, the problem has " + std::to_string(resources()) +
                            " resources");
    for (Eigen::Index j = 0; j < capacity.size(); ++j) check_capacity(capacity[j], j);
    // Opening or closing a resource changes every job's options, so the ledger's sums go.
    if (problem_.capacity.size() == capacity.size())
      for (Eigen::Index j = 0; j < capacity.size(); ++j)
        if ((capacity[j] == 0) != (problem_.capacity[j] == 0)) ledger_.active = false;
    problem_.capacity = capacity;
  }

  /// The next solve starts cold (as solve() would), as after a change that invalidates the
  /// last prices.
  void forget_prices() {
    warm_ = {};
    forget_allocation();
  }

  /// Solves the problem as it stands, starting from where the last solve ended. The answer is
  /// valid until the next solve() (class comment).
  /// \throws like popalloc::solve (invalid_problem names rows: job_ids() maps them to ids).
  const solve_result& solve(const progress_callback& callback = {}) {
    if (jobs() == 0) {
      forget_allocation();
      last_ = solve_empty();
      return last_;
    }
    settle();
    if constexpr (Utility::piecewise_linear)
      if (auto carried = carry_over()) return keep(std::move(*carried));
    if (auto carried = carry_at_prices()) return keep(std::move(*carried));
    if (warm_.prices.size() != resources()) return remember(solve_fresh(callback, options_));
    const detail::stopwatch clock;
    solver_options warm_options = options_;
    warm_options.warm_start_prices = warm_.prices;
    carry_memory();
    solve_result warm = detail::solve_as<Backend>(detail::solve_role::full, problem_, utility_,
                                                  warm_options, callback, warm_.level, &memory_);
    // The retry gets what is left of the call's evaluation and time budgets.
    solver_options retry = options_;
    retry.max_iterations = options_.max_iterations - warm.iterations;
    retry.time_limit_seconds = options_.time_limit_seconds - clock.seconds();
    if (!worth_a_cold_retry(warm.status) || retry.max_iterations < 1 ||
        !(retry.time_limit_seconds > 0.0))
      return remember(std::move(warm));
    solve_result cold = solve_fresh(callback, retry);
    cold.iterations += warm.iterations;
    cold.timings.setup_seconds += warm.timings.setup_seconds;
    cold.timings.solve_seconds += warm.timings.solve_seconds;
    cold.timings.evaluate_seconds += warm.timings.evaluate_seconds;
    return remember(better(std::move(warm), std::move(cold)));
  }

  /// solve() of the problem as it stands, from no previous prices (the reference a warm solve
  /// must match to the tolerance). Does not change where the next solve() starts.
  solve_result solve_cold(const progress_callback& callback = {}) {
    if (jobs() == 0) return solve_empty();
    settle();
    return popalloc::solve<Backend>(problem_, utility_, options_, callback);
  }

 private:
  /// A cold solve whose jobs' search starts are kept for the next warm one.
  solve_result solve_fresh(const progress_callback& callback, const solver_options& options) {
    memory_ = {};
    solve_result fresh = detail::solve_as<Backend>(detail::solve_role::full, problem_, utility_,
                                                   options, callback, {}, &memory_);
    reset_memory_rows();
    return fresh;
  }

  static bool worth_a_cold_retry(solve_status status) {
    return status == solve_status::stalled || status == solve_status::numerical_error;
  }

  /// The converged one, else the one with the smaller certified gap.
  static solve_result better(solve_result warm, solve_result cold) {
    if (cold.status == solve_status::converged) return cold;
    if (warm.status == solve_status::converged) return warm;
    return cold.duality_gap <= warm.duality_gap ? cold : warm;
  }

  /// A solved answer: the next warm solve starts where it ended.
  const solve_result& remember(solve_result result) {
    warm_ = detail::next_warm_start<Utility>(result, problem_.capacity);
    return keep(std::move(result));
  }

  /// The answer the next re-plan carries over (remember_allocation) and solve() returns.
  const solve_result& keep(solve_result result) {
    spare_.take(last_);
    last_ = std::move(result);
    if (spare_.rows.fraction.empty())
      spare_.map_like(last_, detail::host_executor(options_.threads).threads());
    remember_allocation();
    return last_;
  }

  /// Takes row i out of the price ledger before its data changes or it leaves (once: its origin
  /// is -1 after).
  void retire(Eigen::Index i) {
    if (!ledger_.active) return;
    detail::host_executor host(1);
    const detail::problem_storage<detail::host_executor, dense_problem<Scalar>> storage(host,
                                                                                        problem_);
    ledger_.retire(storage.view, i, origin_[static_cast<std::size_t>(i)], last_, utility_);
  }

  /// Opens the price ledger on last_, at its prices or, where it reached g(0), at prices 0 (the
  /// next solve may then carry its allocation over), with every row's origin its own.
  void remember_allocation() {
    ledger_.open(last_, problem_.capacity);
    detail::host_executor(options_.threads)
        .for_each(static_cast<std::int64_t>(origin_.size()),
                  [this](std::int64_t i) { origin_[static_cast<std::size_t>(i)] = i; });
  }

  void forget_allocation() { ledger_.active = ledger_.at_unlimited = false; }

  /// The last allocation carried over to the problem as it stands, when that certifies it
  /// (detail::carry_allocation_over). The next warm solve still starts from the last solve's
  /// prices and level; the jobs' search starts follow their rows (follow_memory).
  std::optional<solve_result> carry_over() {
    if (!ledger_.at_unlimited || last_.allocation.jobs() == 0) return {};
    const detail::stopwatch clock;
    detail::host_executor host(1);
    const detail::problem_storage<detail::host_executor, dense_problem<Scalar>> storage(host,
                                                                                        problem_);
    std::optional<solve_result> carried =
        detail::carry_allocation_over(storage.view, problem_, utility_, options_, last_, origin_,
                                      ledger_, detail::method_constants::capacity_margin, spare_);
    if (!carried) return {};
    follow_memory();
    carried->timings.setup_seconds = clock.seconds();
    return carried;
  }

  /// The kept rows and the changed jobs' best responses at the last prices, when they certify
  /// the problem as it stands (detail::carry_at_prices). The next warm solve starts where the
  /// last one did.
  std::optional<solve_result> carry_at_prices() {
    if (!ledger_.active || last_.allocation.jobs() == 0) return {};
    // An attempt that fails costs its hull walks (and a pass over the kept rows) for nothing.
    // After one failed with k changed jobs it is not repeated with k or more until one
    // certifies: a skipped attempt that would have certified costs a warm solve, several failed
    // ones, and how the gap grows with the change depends on the instance.
    const auto changed_rows = static_cast<std::size_t>(
        std::count_if(origin_.begin(), origin_.end(), [](std::int64_t from) { return from < 0; }));
    if (changed_rows >= carry_limit_) return {};
    const detail::stopwatch clock;
    detail::host_executor host(1);
    const detail::problem_storage<detail::host_executor, dense_problem<Scalar>> storage(host,
                                                                                        problem_);
    std::optional<solve_result> carried =
        detail::carry_at_prices(storage.view, problem_, utility_, options_, last_, origin_, ledger_,
                                detail::method_constants::capacity_margin, spare_);
    if (!carried) {
      carry_limit_ = changed_rows;
      return {};
    }
    carry_limit_ = std::numeric_limits<std::size_t>::max();
    follow_memory();
    carried->timings.setup_seconds = clock.seconds();
    return carried;
  }

  /// A job whose data changed starts its searches afresh.
  void changed(Eigen::Index i) { origin_[static_cast<std::size_t>(i)] = -1; }

  /// After an answer that evaluated nothing: the memory stays where it is and only the map from
  /// rows to its rows follows the rows (detail::follow_row_map: rows moved by removals take their
  /// search starts along, arrivals and changed jobs start afresh). A copy of the memory per
  /// re-plan would cost more than the re-plan's own work at a million jobs.
  void follow_memory() {
    detail::follow_row_map(memory_row_, origin_, detail::host_executor(options_.threads).threads());
  }

  /// Every row's memory is its own (after a solve that evaluated), in the map's buffer: a fresh
  /// one would cost its page faults at the next re-plan.
  void reset_memory_rows() {
    memory_row_.resize(origin_.size());
    detail::host_executor(options_.threads)
        .for_each(static_cast<std::int64_t>(memory_row_.size()),
                  [this](std::int64_t i) { memory_row_[static_cast<std::size_t>(i)] = i; });
  }

  /// Moves each job's search start to its row now, before a warm solve. The memory is empty
  /// before the first warm solve and after a cold one.
  void carry_memory() {
    follow_memory();
    const std::size_t n = origin_.size();
    auto& exec = executor_;
    auto gather = [&](auto& memory, auto fresh) {
      using value = decltype(fresh);
      if (memory.size() == 0) return;
      std::vector<value> old(memory.size()), now(n);
      exec.download(memory, old.data());
      for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t from = memory_row_[i];
        now[i] = from >= 0 && static_cast<std::size_t>(from) < old.size()
                     ? old[static_cast<std::size_t>(from)]
                     : fresh;
      }
      exec.upload(now.data(), n, memory);
    };
    gather(memory_.slope, 0.0);
    gather(memory_.slack, std::int32_t{1});
    reset_memory_rows();
  }

  /// No jobs: the empty allocation, certified by prices 0 (g(0) = 0 = the objective).
  solve_result solve_empty() const {
    solve_result r;
    const Eigen::Index m = resources();
    r.status = solve_status::converged;
    r.primal_objective = r.dual_bound = r.trivial_bound = 0.0;
    r.duality_gap = r.relative_gap = 0.0;
    r.gap_scale = 0.0;
    r.max_capacity_violation = 0.0;
    r.prices = r.final_prices = r.usage = Eigen::VectorXd::Zero(m);
    r.throughput.resize(0);
    return r;
  }

  Eigen::Index find(job_id id) const {
    const auto it = rows_.find(id);
    if (it == rows_.end()) throw invalid_problem("no job has id " + std::to_string(id));
    return it->second;
  }

  double weight_of(Eigen::Index i) const { return static_cast<double>(problem_.weight[i]); }
  double target_of(Eigen::Index i) const {
    return Utility::uses_target ? static_cast<double>(problem_.target[i]) : 0.0;
  }
  double demand_of(Eigen::Index i) const {
    return problem_.job_demand.size() != 0 ? static_cast<double>(problem_.job_demand[i]) : 1.0;
  }

  /// What dense_problem::validate checks of one job, before the job is stored.
  void check_job(const Eigen::Ref<const row>& throughput, double weight, double target,
                 double demand, const std::string& who) const {
    const Eigen::Index m = resources();
    if (throughput.size() != m)
      throw invalid_problem(who + ": " + std::to_string(throughput.size()) +
                            " throughputs, the problem has " + std::to_string(m) + " resources");
    bool usable = false;
    for (Eigen::Index j = 0; j < m; ++j) {
      const double a = throughput[j];
      if (!detail::in_value_range(a) || a < 0)
        throw invalid_problem(who + ": throughput on resource " + std::to_string(j) +
                              " must be >= 0 and " + detail::value_range_text());
      usable = usable || a > 0;
    }
    if (Utility::requires_positive_throughput && !usable)
      throw invalid_problem(who + " has no positive throughput, so its utility is -infinity");
    if (!detail::in_value_range(weight) || weight < 0 ||
        (Utility::requires_positive_weight && weight == 0))
      throw invalid_problem(who + ": weight must be " +
                            (Utility::requires_positive_weight ? "> 0" : ">= 0") + " and " +
                            detail::value_range_text());
    if (Utility::uses_target && !(std::abs(target) <= value_max))
      throw invalid_problem(who + ": target must be finite and within [-1e60, 1e60]");
    if (!Utility::uses_target && target != 0.0)
      throw invalid_problem(who + ": this utility takes no target (give 0)");
    if (!detail::in_value_range(demand) || demand < 0)
      throw invalid_problem(who + ": demand must be >= 0 and " + detail::value_range_text());
  }

  static void check_capacity(double capacity, Eigen::Index j) {
    if (!detail::in_value_range(capacity) || capacity < 0)
      throw invalid_problem("capacity[" + std::to_string(j) + "] must be >= 0 and " +
                            detail::value_range_text());
  }

  /// Arrivals waiting to join the problem's arrays (add_job).
  struct arrival_rows {
    std::vector<double> throughput, weight, target, demand;
    void add(const Eigen::Ref<const row>& a, double w, double t, double d) {
      const std::size_t n = weight.size();
      try {
        throughput.insert(throughput.end(), a.data(), a.data() + a.size());
        weight.push_back(w);
        target.push_back(t);
        demand.push_back(d);
      } catch (...) {
        throughput.resize(n * static_cast<std::size_t>(a.size()));
        weight.resize(n), target.resize(n), demand.resize(n);
        throw;
      }
    }
    std::size_t size() const { return weight.size(); }
  };

  /// Moves the arrivals into the problem's arrays (one resize for all of them).
  void merge_arrivals() {
    if (arrivals_.size() == 0) return;
    const Eigen::Index first = live_, m = resources();
    resize_rows(live_ + static_cast<Eigen::Index>(arrivals_.size()));
    for (std::size_t k = 0; k < arrivals_.size(); ++k) {
      const Eigen::Map<const row> a(arrivals_.throughput.data() + k * static_cast<std::size_t>(m),
                                    m);
      write_row(first + static_cast<Eigen::Index>(k), a, arrivals_.weight[k], arrivals_.target[k],
                arrivals_.demand[k]);
    }
    live_ += static_cast<Eigen::Index>(arrivals_.size());
    arrivals_ = {};
  }

  /// The problem's arrays hold exactly the jobs (arrivals merged, rows removals left dropped).
  void settle() {
    merge_arrivals();
    if (live_ != problem_.jobs()) resize_rows(live_);
  }

  /// Resizes every per-job array to `n` rows, keeping the first rows. Row-major storage keeps
  /// the rows contiguous, so Eigen grows and shrinks it by reallocation, not by a copy per row.
  void resize_rows(Eigen::Index n) {
    problem_.throughput.conservativeResize(n, resources());
    problem_.weight.conservativeResize(n);
    if (Utility::uses_target) problem_.target.conservativeResize(n);
    if (problem_.job_demand.size() != 0) problem_.job_demand.conservativeResize(n);
  }

  void write_row(Eigen::Index i, const Eigen::Ref<const row>& throughput, double weight,
                 double target, double demand) {
    problem_.throughput.row(i) = throughput.template cast<Scalar>();
    problem_.weight[i] = static_cast<Scalar>(weight);
    if (Utility::uses_target) problem_.target[i] = static_cast<Scalar>(target);
    write_demand(i, demand);
  }

  /// job_demand stays empty (every job 1) until some job holds another amount.
  void write_demand(Eigen::Index i, double demand) {
    if (problem_.job_demand.size() == 0) {
      if (demand == 1.0) return;
      problem_.job_demand = dense_problem<Scalar>::vector::Ones(problem_.jobs());
    }
    problem_.job_demand[i] = static_cast<Scalar>(demand);
  }

  Utility utility_;
  solver_options options_;
  dense_problem<Scalar> problem_;
  std::vector<job_id> ids_;
  std::unordered_map<job_id, Eigen::Index> rows_;
  Eigen::Index live_ = 0;  ///< rows of problem_ in use; removals leave the rest until settle()
  arrival_rows arrivals_;
  job_id next_id_ = 0;
  /// Per row: the job's row at the last solve, -1 when it arrived or changed since.
  std::vector<std::int64_t> origin_;
  using executor = typename detail::executor_for<Backend>::type;
  executor executor_{1};
  detail::job_memory<executor> memory_;
  /// Per row of the last answer: the row of memory_ with its search start, -1 for none (the
  /// identity after a solve that evaluated; follow_memory). Empty before the first solve.
  std::vector<std::int64_t> memory_row_;
  detail::warm_state warm_;
  solve_result last_;             ///< the last answer (solve() returns it)
  detail::answer_buffers spare_;  ///< the arrays of the answer before it, for the next to reuse
  detail::price_ledger ledger_;   ///< the last answer's sums at its prices (price_ledger.hpp)
  /// carry_at_prices is tried with fewer changed jobs than this only (its last failure's count).
  std::size_t carry_limit_ = std::numeric_limits<std::size_t>::max();
};

}  // namespace popalloc
