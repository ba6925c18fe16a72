// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Scheduling policy names, options and the allocation they produce.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>

#include "popalloc/error.hpp"
#include "popalloc/pop/partition.hpp"
#include "popalloc/status.hpp"

namespace popalloc::cluster {

/// \brief Gavel's policies (OSDI 2020). Values are stable.
enum class policy_kind : std::uint8_t {
  max_min_fairness = 0,       ///< LAS: max min_i s_i ET_i / (w_i P_i), with water filling
  proportional_fairness = 1,  ///< max sum_i w_i log(ET_i / P_i)
  max_throughput = 2,         ///< max sum_i ET_i (/ cost of the GPU type when costs are given)
  min_makespan = 3,           ///< min max_i r_i / ET_i
  finish_time_fairness = 4,   ///< min max_i rho_i (Themis)
  isolated = 5,               ///< baseline: the isolated share (n_w / m) / s_i of every type
  fifo = 6,                   ///< baseline: arrival order, whole GPUs, no time sharing
};

/// \brief The command-line name, e.g. "max-min-fairness".
inline const char* to_string(policy_kind p) {
  switch (p) {
    case policy_kind::max_min_fairness:
      return "max-min-fairness";
    case policy_kind::proportional_fairness:
      return "proportional-fairness";
    case policy_kind::max_throughput:
      return "max-throughput";
    case policy_kind::min_makespan:
      return "min-makespan";
    case policy_kind::finish_time_fairness:
      return "finish-time-fairness";
    case policy_kind::isolated:
      return "isolated";
    case policy_kind::fifo:
      return "fifo";
  }
  return "unknown";
}

/// \brief Parses a policy name (as printed by to_string; '_' is accepted for '-').
/// \throws invalid_options listing the valid names.
inline policy_kind parse_policy(std::string_view name) {
  std::string n(name);
  for (char& c : n)
    if (c == '_') c = '-';
  for (int k = 0; k <= static_cast<int>(policy_kind::fifo); ++k) {
    const auto p = static_cast<policy_kind>(k);
    if (n == to_string(p)) return p;
  }
  throw invalid_options("unknown policy '" + std::string(name) +
                        "' (max-min-fairness, proportional-fairness, max-throughput, "
                        "min-makespan, finish-time-fairness, isolated, fifo)");
}

/// \brief Which co-located pairs a packed (space-sharing) policy is offered
/// (allocate_packed()).
struct pairing_options {
  /// A pair (a, b) is offered on GPU type w only if T^pair_a / T_aw + T^pair_b / T_bw (its
  /// normalised combined throughput) is at least this. Below 1 a pair is dominated by running
  /// the two jobs alone one after the other on the same GPU (same GPU time, less of each job's
  /// time, at least the same throughput for both), so 1 loses nothing; Gavel's packed FIFO
  /// uses 1.5.
  double min_combined_throughput = 1.0;
  /// Packed FIFO: a queued job joins a running one only where their normalised combined
  /// throughput (as above) exceeds this (Gavel's packing threshold).
  double fifo_threshold = 1.5;
  bool enabled = true;  ///< false: singles only (the packed policy is then the unpacked one)
};

/// \brief What allocate() should compute.
/// \brief A report from a running policy (policy_options::progress).
struct policy_progress {
  /// "level search": max-min, makespan and finish-time fairness bisect on their level, one core
  /// solve per step. "water filling": max-min raising the jobs that are not bottlenecks, level
  /// by level. "solve": max-throughput and proportional fairness, reported every iteration of
  /// their core solve.
  const char* stage = "";
  int pop_part = -1;             ///< the POP part reporting; -1 without POP
  int core_solves = 0;           ///< core solves finished so far (in this part)
  int water_filling_levels = 0;  ///< water-filling levels done so far
  /// Level search and water filling: the certified bracket on the level being raised (max-min:
  /// the normalised throughput; makespan and finish-time fairness: 1 / makespan and 1 / rho).
  /// "solve": the core solve's objective and dual bound (its scale: docs/cluster-scheduling.md).
  /// NaN while not known.
  double lower = std::numeric_limits<double>::quiet_NaN();
  double upper = std::numeric_limits<double>::quiet_NaN();
  /// (upper - lower) / upper for the level stages, the core solve's relative gap for "solve".
  double relative_gap = std::numeric_limits<double>::quiet_NaN();
};

struct policy_options {
  policy_kind policy = policy_kind::max_min_fairness;
  /// Gavel's heterogeneity-agnostic variant: max-min and proportional fairness see every
  /// throughput as 1 (pure time shares), the others see T_iw := T_i,reference on every type.
  /// effective_throughput is always reported with the true throughputs.
  bool heterogeneity_agnostic = false;
  std::string reference_gpu = "v100";  ///< for the agnostic variants (max over types if absent)
  /// Max-min only: keep raising the other jobs after the minimum is fixed (Gavel's
  /// max_min_fairness_water_filling); false: plain max-min (Gavel's max_min_fairness).
  bool water_filling = true;
  int max_water_filling_levels = 64;  ///< levels before the remaining jobs are frozen
  /// Water filling: a job counts as a bottleneck when it cannot rise by this relative amount
  /// above the current level (Gavel's MILP uses 1.0001 L, i.e. 1e-4).
  double water_filling_threshold = 1e-4;
  /// Max-throughput only: price per GPU of each type (cluster order); empty: all 1.
  std::vector<double> gpu_cost;
  /// Max-throughput only: a job with an SLO (job::slo > 0) must run at least at the throughput
  /// that finishes its remaining steps by its deadline, arrival + slo * duration with
  /// duration = total_steps / T_i,reference (Gavel's max_sum_throughput_perf_SLOs). When the
  /// floors cannot all be met the policy is solved without them, as Gavel does
  /// (cluster_allocation::slo_floors_dropped). Floors are on throughput, so they cannot be
  /// combined with gpu_cost (invalid_options).
  bool slo_floors = true;
  /// Accuracy: relative width of the certified bracket [objective, bound] for the level
  /// policies (max-min, makespan, finish-time fairness), relative duality gap for the others.
  double tolerance = 1e-6;
  int threads = 0;  ///< OpenMP threads (0: default); POP parts run one per thread
  double time_limit_seconds = std::numeric_limits<double>::infinity();
  /// Prices per GPU type to start the core solver from (e.g. cluster_allocation::prices of the
  /// previous call); empty: cold start.
  Eigen::VectorXd warm_start_prices;
  /// POP: k parts (1 = solve the whole problem). Jobs are partitioned with pop_strategy and
  /// pop_seed; GPUs are split with pop::split_units (no GPU lost to integer division).
  int pop_parts = 1;
  std::uint64_t pop_seed = 0;
  pop::partition_strategy pop_strategy = pop::partition_strategy::uniform_random;
  std::uint64_t fifo_seed = 0;  ///< agnostic FIFO picks a random feasible type
  /// Space sharing only (allocate_packed()): which pairs are offered.
  pairing_options pairing;
  /// Max-min fairness (plain and water filling), min makespan and proportional fairness: when
  /// the jobs form at most this many classes of identical jobs (same model throughputs, scale
  /// factor and weight or remaining steps), the policy is solved exactly over the classes
  /// (class_policies.hpp) instead of on the price-discovery core; 0: always the core. The
  /// level policies also need at most 64 classes or two jobs per class on average (the dense
  /// class LP grows like k^3, the core like n).
  int class_lp_max_classes = 256;
  /// Called after every core solve of the level policies and every iteration of a separable
  /// policy's core solve, on the thread that runs it: with pop_parts > 1 from several threads at
  /// once, so it must be thread-safe. It can be called thousands of times a second on small
  /// problems: keep it cheap (store the report; print from elsewhere). Empty: no reports.
  std::function<void(const policy_progress&)> progress;
};

/// \brief Time two jobs (rows of the input, first < second) share s GPUs of one type.
struct pair_share {
  std::int64_t first = 0, second = 0;
  int gpu = 0;
  double fraction = 0.0;  ///< of wall-clock time, counted in both jobs' time
  double first_throughput = 0.0, second_throughput = 0.0;  ///< steps/s of each while sharing
};

/// \brief Result of allocate(): per job (in input order) the time fraction on every GPU type.
struct cluster_allocation {
  policy_kind policy = policy_kind::max_min_fairness;
  bool heterogeneity_agnostic = false;
  /// X_iw, jobs x GPU types (cluster order): fraction of wall-clock time job i runs on s_i GPUs
  /// of type w. Rows sum to <= 1; sum_i s_i X_iw <= n_w.
  Eigen::MatrixXd fraction;
  Eigen::VectorXd effective_throughput;     ///< ET_i = sum_w T_iw X_iw, true throughputs (steps/s)
  Eigen::VectorXd normalized_throughput;    ///< s_i ET_i / (w_i P_i), Gavel's max-min measure
  Eigen::VectorXd proportional_throughput;  ///< P_i = sum_w T_iw n_w / N (true throughputs)
  /// 0 for a job with no usable GPU type (T = 0 everywhere, or s_i > n_w where T > 0): it gets
  /// nothing and is left out of the objective.
  std::vector<char> schedulable;
  /// The policy's objective (see docs/cluster-scheduling.md): max-min: min_i normalized
  /// throughput (over schedulable jobs, policy's own throughput model); makespan: seconds;
  /// finish-time fairness: max_i rho_i; proportional: sum_i w_i log(ET_i / P_i); max-throughput:
  /// sum_i ET_i (/ cost). Always the value of the returned allocation.
  double objective = std::numeric_limits<double>::quiet_NaN();
  /// A certified bound on the optimum on the other side of `objective` (an upper bound when
  /// maximising, a lower bound for makespan and rho); NaN when none (baselines, POP).
  double bound = std::numeric_limits<double>::quiet_NaN();
  solve_status status = solve_status::not_solved;  ///< worst core-solver status seen
  int core_solves = 0;                             ///< popalloc::solve calls
  /// Classes of identical jobs the exact class solve used (0: the core path on every job);
  /// under POP the sum over parts.
  std::int64_t classes = 0;
  int simplex_runs = 0;          ///< dense-simplex runs of the class LP (max-min, makespan)
  int water_filling_levels = 0;  ///< max-min with water filling: levels solved
  /// Max-throughput with SLO floors: jobs with a floor; whether the floors could not all be met
  /// and were dropped (in any POP part); the largest relative shortfall (floor - ET) / floor
  /// over those jobs (<= 0: every floor met; NaN: no floors).
  std::int64_t slo_jobs = 0;
  bool slo_floors_dropped = false;
  double slo_worst_shortfall = std::numeric_limits<double>::quiet_NaN();
  double seconds = 0.0;  ///< wall time of allocate()
  /// Last core-solver prices per GPU type (for warm starts); after a class-LP solve (classes >
  /// 0, max-min or makespan) the LP's GPU duals in the same units.
  Eigen::VectorXd prices;
  /// Space sharing (allocate_packed()): `fraction` holds the jobs' time alone and `pairs` the
  /// time shared; job i's time is its row sum plus its pairs' fractions, and
  /// effective_throughput includes the pairs. Empty for the unpacked policies.
  std::vector<pair_share> pairs;
  bool space_sharing = false;
  // POP accounting (pop_parts > 1): per-part wall times.
  int pop_parts = 1;
  double pop_parts_seconds_max = 0.0;
  double pop_parts_seconds_sum = 0.0;
};

}  // namespace popalloc::cluster
