// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Problem data in a backend's memory and the dual-evaluation primitives the solver uses.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/bundle_problem.hpp"
#include "popalloc/dense_problem.hpp"
#include "popalloc/detail/bundle_view.hpp"
#include "popalloc/detail/dense_view.hpp"
#include "popalloc/detail/host_executor.hpp"
#include "popalloc/detail/passes.hpp"
#include "popalloc/result.hpp"

namespace popalloc::detail {

template <class Executor, class Problem>
class problem_storage;

/// Host executors read the caller's arrays in place; device executors copy them once per solve.
/// `weight_factor` != 1 multiplies every weight (the objective's unit of problem_scaling) in a
/// copy of the weights only.
template <class Executor, class Scalar>
class problem_storage<Executor, dense_problem<Scalar>> {
 public:
  using view_type = dense_view<Scalar>;

  problem_storage(Executor& exec, const dense_problem<Scalar>& p, double weight_factor = 1.0)
      : total_options(p.jobs() * p.resources()) {
    view.n = p.jobs();
    view.m = static_cast<std::int32_t>(p.resources());
    std::vector<unsigned char> closed(static_cast<std::size_t>(p.resources()), 0);
    bool any_closed = false;
    for (Eigen::Index j = 0; j < p.resources(); ++j)
      if (p.capacity[j] == 0) closed[static_cast<std::size_t>(j)] = 1, any_closed = true;
    view.throughput = place(exec, p.throughput.data(), p.throughput.size(), throughput_);
    view.demand = place(exec, p.demand.data(), p.demand.size(), demand_);
    view.job_demand = place(exec, p.job_demand.data(), p.job_demand.size(), job_demand_);
    if (weight_factor != 1.0) {
      const auto factor = static_cast<Scalar>(weight_factor);
      scaled_weight_ = p.weight.size() != 0
                           ? typename dense_problem<Scalar>::vector(p.weight * factor)
                           : dense_problem<Scalar>::vector::Constant(p.jobs(), factor);
      view.weight = place(exec, scaled_weight_.data(), scaled_weight_.size(), weight_);
    } else {
      view.weight = place(exec, p.weight.data(), p.weight.size(), weight_);
    }
    view.target = place(exec, p.target.data(), p.target.size(), target_);
    if (any_closed) {
      exec.upload(closed.data(), closed.size(), closed_);
      view.closed = Executor::data(closed_);
    }
  }

  view_type view;
  std::int64_t total_options;

 private:
  using scalars = typename Executor::template vector<Scalar>;
  static const Scalar* place(Executor& exec, const Scalar* source, Eigen::Index count,
                             scalars& copy) {
    if (count == 0) return nullptr;
    if constexpr (Executor::is_host) {
      return source;
    } else {
      exec.upload(source, static_cast<std::size_t>(count), copy);
      return Executor::data(copy);
    }
  }
  scalars throughput_, demand_, job_demand_, weight_, target_;
  typename dense_problem<Scalar>::vector scaled_weight_;  // host memory, read in place on hosts
  typename Executor::template vector<unsigned char> closed_;
};

/// The storage of `p`, with its weights times `weight_factor` (dense problems only).
template <class Executor, class Problem>
problem_storage<Executor, Problem> make_problem_storage(Executor& exec, const Problem& p,
                                                        double weight_factor) {
  if constexpr (std::is_same_v<Problem, dense_problem<typename Problem::scalar_type>>) {
    return problem_storage<Executor, Problem>(exec, p, weight_factor);
  } else {
    if (weight_factor != 1.0) throw std::logic_error("weights scaled on a problem without a copy");
    return problem_storage<Executor, Problem>(exec, p);
  }
}

template <class Executor, class Scalar>
class problem_storage<Executor, bundle_problem<Scalar>> {
 public:
  using view_type = bundle_view<Scalar>;

  problem_storage(Executor& exec, const bundle_problem<Scalar>& p) : total_options(p.options()) {
    view.n = p.jobs();
    view.m = static_cast<std::int32_t>(p.resources());
    std::vector<unsigned char> closed(static_cast<std::size_t>(p.options()), 0);
    bool any_closed = false;
    const auto& offsets = p.option_consumption_offset();
    for (std::size_t o = 0; o + 1 < offsets.size(); ++o)
      for (auto k = offsets[o]; k < offsets[o + 1]; ++k)
        if (p.consumption_amount()[static_cast<std::size_t>(k)] > 0 &&
            p.capacity()[p.consumption_resource()[static_cast<std::size_t>(k)]] == 0)
          closed[o] = 1, any_closed = true;
    view.job_option_offset = place(exec, p.job_option_offset(), job_option_offset_);
    view.option_value = place(exec, p.option_value(), option_value_);
    view.option_consumption_offset =
        place(exec, p.option_consumption_offset(), option_consumption_offset_);
    view.resource_of = place(exec, p.consumption_resource(), consumption_resource_);
    view.amount_of = place(exec, p.consumption_amount(), consumption_amount_);
    view.weight = place(exec, p.weight(), weight_);
    view.target = place(exec, p.target(), target_);
    if (any_closed) {
      exec.upload(closed.data(), closed.size(), closed_);
      view.option_closed = Executor::data(closed_);
    }
  }

  view_type view;
  std::int64_t total_options;

 private:
  template <class T>
  static const T* place(Executor& exec, const std::vector<T>& source,
                        typename Executor::template vector<T>& copy) {
    if (source.empty()) return nullptr;
    if constexpr (Executor::is_host) {
      return source.data();
    } else {
      exec.upload(source.data(), source.size(), copy);
      return Executor::data(copy);
    }
  }
  typename Executor::template vector<std::int64_t> job_option_offset_, option_consumption_offset_;
  typename Executor::template vector<Scalar> option_value_, consumption_amount_, weight_, target_;
  typename Executor::template vector<std::int32_t> consumption_resource_;
  typename Executor::template vector<unsigned char> closed_;
};

/// Per-job starting points of the regularised responses' searches (evaluate_pass::slope_memory,
/// slack_memory). An engine keeps its own; incremental_solver keeps one across the solves of a
/// changing problem, so that unchanged jobs start their first evaluation where they ended.
template <class Executor>
struct job_memory {
  typename Executor::template vector<double> slope;
  typename Executor::template vector<std::int32_t> slack;  ///< piecewise-linear utilities only
};

/// Sums of one dual evaluation (host memory).
struct evaluation {
  Eigen::VectorXd usage;     ///< resource usage of the smoothed best responses
  Eigen::MatrixXd hessian;   ///< generalized Hessian of the smoothed dual (if requested)
  bool has_hessian = false;  ///< whether `hessian` was requested (else it is empty)
  double excess_smooth = 0, excess_exact = 0, utility_exact = 0, utility_smooth = 0;
  bool finite = true;
  /// Folded repair (evaluate_pass::fold_repair): value_j, quad_j, base and the number of jobs
  /// it could not cover. Empty vectors when the pass did not fold.
  Eigen::VectorXd repair_value, repair_quad;
  double fold_base = 0, unfolded = 0;
};

/// A feasible allocation's utility and usage after scaling over-used resources down.
struct repaired_primal {
  Eigen::VectorXd usage;
  double utility = 0;
  double utility_smooth = 0;  ///< under the smoothed utilities of the evaluation
  bool finite = true;
};

/// Dual evaluations, primal repair and export over a backend. Keeps two per-job allocation
/// states: `scratch` (the last evaluation) and `kept` (the best feasible allocation so far), each
/// with the prices and smoothing level it was computed at.
template <class Executor, class Problem, class Utility>
class engine {
 public:
  /// `memory`: the per-job search starts to use and update, or null for the engine's own. One
  /// whose size is not the job count is reset. `weight_factor`: problem_scaling::weight_factor.
  engine(const Problem& problem, const Utility& utility, Executor exec,
         job_memory<Executor>* memory = nullptr, double weight_factor = 1.0)
      : exec_(std::move(exec)),
        storage_(make_problem_storage(exec_, problem, weight_factor)),
        utility_(utility),
        n_(problem.jobs()),
        m_(static_cast<std::int32_t>(problem.resources())),
        shared_memory_(memory) {
    const auto n = static_cast<std::size_t>(n_);
    for (auto& s : state_) {
      exec_.fill(n, std::int32_t{-1}, s.left);
      exec_.fill(n, std::int32_t{-1}, s.right);
      exec_.fill(n, 0.0, s.theta);
      exec_.fill(n, 0.0, s.extra);
      s.host_prices = Eigen::VectorXd::Zero(m_);
      exec_.upload(s.host_prices.data(), static_cast<std::size_t>(m_), s.prices);
    }
    kept_factors_ = Eigen::VectorXd::Ones(m_);
    job_memory<Executor>& starts = search_starts();
    if (starts.slope.size() != n) exec_.fill(n, 0.0, starts.slope);
    if constexpr (Utility::piecewise_linear)
      if (starts.slack.size() != n) exec_.fill(n, std::int32_t{1}, starts.slack);
    exec_.allocate(n, kappa_scale_);  // written by marginal_prices
  }

  /// Dense options consume one resource each, so scaling resources scales options and the
  /// evaluation pass can fold a bound on the scaled objective (evaluate_pass): certify() then
  /// needs no second pass.
  static constexpr bool fold_repair =
      std::is_same_v<typename problem_storage<Executor, Problem>::view_type,
                     dense_view<typename Problem::scalar_type>>;
  /// The folded bound is base + sum_j log(g_j) value_j (log utility), else base + g.value.
  static constexpr bool log_fold =
      evaluate_pass<typename problem_storage<Executor, Problem>::view_type, Utility>::log_fold;

  std::int64_t jobs() const { return n_; }
  std::int32_t resources() const { return m_; }
  static constexpr bool piecewise_linear = Utility::piecewise_linear;

  /// Dual evaluation at `prices` with relative smoothing `level`; the allocation goes to scratch.
  void evaluate(const Eigen::VectorXd& prices, double level, bool with_hessian, evaluation& out,
                bool exact_dual = true) {
    auto& s = state_[scratch_];
    s.host_prices = prices;
    s.level = level;
    exec_.upload(prices.data(), static_cast<std::size_t>(m_), s.prices);
    evaluate_pass<view_type, Utility> pass;
    pass.view = storage_.view;
    pass.utility = utility_;
    pass.prices = Executor::data(s.prices);
    pass.kappa_scale = kappa_scale_for(level);
    pass.level = level;
    pass.m = m_;
    pass.hessian = with_hessian;
    pass.exact_dual = exact_dual;
    pass.state = pointers(s);
    pass.slope_memory = Executor::data(search_starts().slope);
    if constexpr (Utility::piecewise_linear)
      pass.slack_memory = Executor::data(search_starts().slack);
    pass.fold_repair = fold_repair;
    sums_.resize(static_cast<std::size_t>(pass.width()));
    exec_.reduce(n_, pass, sums_.data());
    out.usage = Eigen::Map<const Eigen::VectorXd>(sums_.data(), m_);
    out.has_hessian = with_hessian;
    if (with_hessian) {
      symmetric_part(sums_.data() + m_, out.hessian);
    } else {
      out.hessian.resize(0, 0);
    }
    if (fold_repair) {
      out.repair_value = Eigen::Map<const Eigen::VectorXd>(sums_.data() + pass.fold_offset(), m_);
      out.repair_quad =
          Eigen::Map<const Eigen::VectorXd>(sums_.data() + pass.fold_offset() + m_, m_);
    } else {
      out.repair_value.resize(0);
      out.repair_quad.resize(0);
    }
    const double* sc = sums_.data() + pass.scalar_offset();
    using p = evaluate_pass<view_type, Utility>;
    out.fold_base = sc[p::fold_base];
    out.unfolded = sc[p::unfolded];
    out.excess_smooth = sc[p::excess_smooth];
    out.excess_exact = sc[p::excess_exact];
    out.utility_exact = sc[p::utility_exact];
    out.utility_smooth = sc[p::utility_smooth];
    out.finite = sc[p::non_finite] == 0.0;
  }

  /// Utility and usage of the scratch allocation scaled by `factors`.
  repaired_primal repair(const Eigen::VectorXd& factors) {
    exec_.upload(factors.data(), static_cast<std::size_t>(m_), factors_);
    return repair_uploaded({}, -1);
  }

  /// repair(factors) with every job that the scaling took throughput from topped up on
  /// resources with `spare` capacity (> 0; choose_topup, topup_tiers), each resource's top-ups
  /// scaled to fit into the capacity it has to spare. Up to six passes, each the repair with
  /// the last round's top-ups at fill ratio 1, which is the answer when they fit; when they do
  /// not, the next round re-chooses them:
  ///   1. every job tops up on its fastest spare resource (the objective of this pass is an
  ///      upper bound on any top-ups': below `acceptable` the result is not finite);
  ///   2. each resource weighed by the share of the first round's top-ups it could take, so that
  ///      the jobs with a good alternative move from a fast resource with little room;
  ///   3. the part of the second round's top-ups that does not fit goes to each job's fastest
  ///      resource among those where they fit with room left, each weighed by the share of the
  ///      overflow its room could take (second tier);
  ///   4. the second tier at its fill ratios (when the third pass still meets `acceptable`);
  ///   5. when that misses `acceptable` and some jobs whose first tier was cut have no
  ///      second-tier option (confined: nowhere else to go), the third pass again with those
  ///      jobs taking their first-tier resources' room first and the others what is left
  ///      (give_room_to_confined), who take more of their second tier instead;
  ///   6. its second tier at its fill ratios.
  /// The tiers stay with the scratch allocation until the next call (keep_scratch).
  /// With `to_saturation` the jobs also top up toward their saturation throughput
  /// (topup_tiers::to_saturation).
  template <class Acceptable>
  repaired_primal repair_with_topups(const Eigen::VectorXd& factors, const Eigen::VectorXd& spare,
                                     bool to_saturation, const Acceptable& acceptable) {
    exec_.upload(factors.data(), static_cast<std::size_t>(m_), factors_);
    scratch_to_saturation_ = to_saturation;
    topup_passes_ = 0;
    const Eigen::VectorXd ones = Eigen::VectorXd::Ones(m_), zeros = Eigen::VectorXd::Zero(m_);
    auto fits = [](const Eigen::VectorXd& usage, const Eigen::VectorXd& room) {
      return (usage.array() <= room.array()).all();
    };
    Eigen::VectorXd usage;
    // 1.
    tier_table tiers{ones, (spare.array() > 0.0).cast<double>().matrix(), zeros, zeros, ones};
    repaired_primal round = topup_pass(tiers, 0, usage);
    if (!acceptable(round.utility)) return not_acceptable(std::move(round));
    if (fits(usage, spare)) return round;  // topup_pass kept its tiers
    // 2.
    tiers.first_preference = fit(usage, spare);
    round = topup_pass(tiers, 0, usage);
    if (fits(usage, spare)) return round;
    const Eigen::VectorXd first_usage = usage;
    tiers.first_fill = tiers.confined_fill = fit(first_usage, spare);
    // 3. A resource can take at most its room of the overflow: weighed by that share, a fast
    //    resource with little room left draws few of the jobs that overflow elsewhere.
    const Eigen::VectorXd left = (spare - usage).cwiseMax(0.0);
    const double overflow = (usage - spare).cwiseMax(0.0).sum();
    tiers.second_preference =
        (usage.array() <= spare.array()).select((left / overflow).cwiseMin(1.0), 0.0).matrix();
    tiers.second_fill = ones;
    round = topup_pass(tiers, 1, usage);
    const Eigen::VectorXd confined_usage =
        Eigen::Map<const Eigen::VectorXd>(sums_.data() + 2 * m_ + 3, m_);
    if (acceptable(round.utility)) {
      if (fits(usage, left)) return round;
      // 4.
      tiers.second_fill = fit(usage, left);
      ++topup_passes_;
      round = repair_uploaded(upload_tiers(tiers), -1);
      if (acceptable(round.utility)) return round;
    }
    // 5. The confined jobs first.
    if (!give_room_to_confined(tiers, first_usage, confined_usage, spare))
      return not_acceptable(std::move(round));
    tiers.second_fill = ones;
    round = topup_pass(tiers, 1, usage);
    if (!acceptable(round.utility)) return not_acceptable(std::move(round));
    if (fits(usage, left)) return round;
    // 6.
    tiers.second_fill = fit(usage, left);
    ++topup_passes_;
    return repair_uploaded(upload_tiers(tiers), -1);
  }

  /// Passes over the jobs the last repair_with_topups made (1-6).
  int topup_passes() const { return topup_passes_; }

  /// Makes the scratch allocation the kept one (with its scale factors, and its top-up tiers
  /// when `topped_up`).
  void keep_scratch(const Eigen::VectorXd& factors, bool topped_up = false) {
    scratch_ = 1 - scratch_;
    kept_factors_ = factors;
    kept_fill_ = topped_up ? scratch_fill_ : Eigen::VectorXd();
    kept_to_saturation_ = topped_up && scratch_to_saturation_;
  }

  /// Writes the kept allocation into `result` (allocation and throughput); returns its objective.
  double export_kept(solve_result& result) {
    exec_.upload(kept_factors_.data(), static_cast<std::size_t>(m_), factors_);
    const std::int32_t fill_entries = topup_tiers::rows * m_;
    const bool topped_up = kept_fill_.size() == fill_entries;
    if (topped_up) exec_.upload(kept_fill_.data(), static_cast<std::size_t>(fill_entries), fill_);
    auto& s = state_[1 - scratch_];
    const auto n = static_cast<std::size_t>(n_);
    typename Executor::template vector<std::int32_t> counts, options;
    typename Executor::template vector<double> throughput, fractions;
    typename Executor::template vector<std::int64_t> offsets;
    export_count_pass<view_type, Utility> count;
    count.utility = utility_;
    count.view = storage_.view;
    count.factors = Executor::data(factors_);
    if (topped_up) count.topups = {Executor::data(fill_), m_, kept_to_saturation_};
    count.prices = Executor::data(s.prices);
    count.kappa_scale = kappa_scale_for(s.level);
    count.level = s.level;
    count.state = pointers(s);
    if constexpr (std::is_same_v<Executor, host_executor>) {
      return export_in_one_pass(count, result);
    }
    exec_.allocate(n, counts);
    exec_.allocate(n, throughput);
    count.count_out = Executor::data(counts);
    count.throughput_out = Executor::data(throughput);
    double objective = 0.0;
    exec_.reduce(n_, count, &objective);
    result.throughput.resize(n_);
    exec_.download(throughput, result.throughput.data());
    // Row offsets on the host (a sequential scan), then the rows in parallel.
    std::vector<std::int32_t> host_counts(n);
    exec_.download(counts, host_counts.data());
    auto& a = result.allocation;
    a.job_offset.resize(n + 1);
    a.job_offset[0] = 0;
    for (std::size_t i = 0; i < n; ++i) a.job_offset[i + 1] = a.job_offset[i] + host_counts[i];
    const auto entries = static_cast<std::size_t>(a.job_offset[n]);
    exec_.upload(a.job_offset.data(), n + 1, offsets);
    exec_.allocate(entries, options);
    exec_.allocate(entries, fractions);
    export_write_pass<view_type, Utility> write;
    static_cast<export_pass_base<view_type, Utility>&>(write) = count;
    write.row_offset = Executor::data(offsets);
    write.option_out = Executor::data(options);
    write.fraction_out = Executor::data(fractions);
    exec_.for_each(n_, write);
    a.option.resize(entries);
    a.fraction.resize(entries);
    exec_.download(options, a.option.data());
    exec_.download(fractions, a.fraction.data());
    return objective;
  }

  /// Marginal value of each resource at an equal-share allocation and at zero throughput.
  struct marginal_values {
    Eigen::VectorXd equal_share, at_zero;
  };

  /// One pass over the jobs: both marginal-value estimates, idle_utility() and the jobs'
  /// regularisation scales, which every smoothed evaluation needs: call it first.
  marginal_values marginal_prices(const Eigen::VectorXd& capacity) {
    // The equal share needs the total job count; a reduction gives it for sharded backends too.
    double n = 0.0;
    exec_.reduce(n_, job_count_pass{}, &n);
    Eigen::VectorXd capacity_and_share(2 * m_);
    capacity_and_share << capacity, capacity / n;
    exec_.upload(capacity_and_share.data(), static_cast<std::size_t>(2 * m_), factors_);
    initial_price_pass<view_type, Utility> pass{
        storage_.view, utility_, Executor::data(factors_), m_, n, Executor::data(kappa_scale_)};
    sums_.resize(static_cast<std::size_t>(pass.width()));
    exec_.reduce(n_, pass, sums_.data());
    const auto idle = static_cast<std::size_t>(2 * m_);
    idle_utility_ = sums_[idle + 1] == 0.0 ? sums_[idle] : -std::numeric_limits<double>::infinity();
    elasticity_ = sums_[idle + 2];
    unlimited_utility_ = sums_[idle + 3];
    kappa_scale_ready_ = true;
    return {Eigen::Map<const Eigen::VectorXd>(sums_.data(), m_) / n,
            Eigen::Map<const Eigen::VectorXd>(sums_.data() + m_, m_) / n};
  }

  /// sum_i f_i(0): the objective of leaving every job idle (-inf for log utilities). Set by
  /// marginal_prices().
  double idle_utility() const { return idle_utility_; }

  /// sum of t_i f_i'(t_i) at the equal share over the jobs with f_i(0) = -inf (sum of the
  /// weights for log): what the objective gains to first order when every such job's
  /// throughput grows by a factor e. Set by marginal_prices().
  double elasticity() const { return elasticity_; }

  /// sum_i max_x f_i(t_i(x)), the objective when no capacity binds: g(0), so a dual bound that
  /// never needs to be exceeded. Set by marginal_prices().
  double unlimited_utility() const { return unlimited_utility_; }

 private:
  using view_type = typename problem_storage<Executor, Problem>::view_type;

  /// Fill ratio, preference, fill ratio and preference of the two tiers, and the confined jobs'
  /// first-tier fill ratio (topup_tiers).
  struct tier_table {
    Eigen::VectorXd first_fill, first_preference, second_fill, second_preference, confined_fill;
  };

  /// Where the confined jobs' first-tier top-ups (`confined_usage`, part of `first_usage`) were
  /// cut, gives them each resource's `spare` room first (fill ratio up to 1) and the other jobs
  /// what is left, who take more of their second tier instead. False when no confined job was
  /// cut (nothing changes).
  static bool give_room_to_confined(tier_table& tiers, const Eigen::VectorXd& first_usage,
                                    const Eigen::VectorXd& confined_usage,
                                    const Eigen::VectorXd& spare) {
    bool changed = false;
    for (Eigen::Index j = 0; j < spare.size(); ++j) {
      if (!(tiers.first_fill[j] < 1.0 && confined_usage[j] > 0.0)) continue;
      const double confined = std::min(confined_usage[j], first_usage[j]);
      const double confined_fill = std::min(1.0, spare[j] / confined);
      const double others = first_usage[j] - confined;
      const double rest = std::max(0.0, spare[j] - confined_fill * confined);
      tiers.confined_fill[j] = confined_fill;
      tiers.first_fill[j] = others > 0.0 ? std::min(1.0, rest / others) : 0.0;
      changed = true;
    }
    return changed;
  }

  /// `tiers` become the scratch allocation's top-ups (keep_scratch) and the table in the
  /// backend's memory.
  topup_tiers upload_tiers(const tier_table& tiers) {
    scratch_fill_.resize(topup_tiers::rows * m_);
    scratch_fill_ << tiers.first_fill, tiers.first_preference, tiers.second_fill,
        tiers.second_preference, tiers.confined_fill;
    exec_.upload(scratch_fill_.data(), static_cast<std::size_t>(topup_tiers::rows * m_), fill_);
    return {Executor::data(fill_), m_, scratch_to_saturation_};
  }

  /// The repair under `tiers`, with the usage of tier `tracked`'s top-ups (repair_pass).
  repaired_primal topup_pass(const tier_table& tiers, int tracked, Eigen::VectorXd& tier_usage) {
    ++topup_passes_;
    repaired_primal out = repair_uploaded(upload_tiers(tiers), tracked);
    tier_usage = Eigen::Map<const Eigen::VectorXd>(sums_.data() + m_ + 3, m_);
    return out;
  }

  /// A top-up round whose objective at fill ratio 1 misses the tolerance: no result.
  static repaired_primal not_acceptable(repaired_primal round) {
    round.finite = false;
    return round;
  }

  /// Fill ratios that fit top-ups of `usage` into `room`: 1 where they fit, else room / usage;
  /// 0 where there is no room.
  static Eigen::VectorXd fit(const Eigen::VectorXd& usage, const Eigen::VectorXd& room) {
    Eigen::VectorXd fill = Eigen::VectorXd::Zero(room.size());
    for (Eigen::Index j = 0; j < room.size(); ++j)
      if (room[j] > 0.0) fill[j] = usage[j] > room[j] ? room[j] / usage[j] : 1.0;
    return fill;
  }

  /// The scratch allocation scaled by the uploaded factors, topped up by `topups` (or not: no
  /// table); tier `tracked_tier`'s top-up usage follows in sums_ when >= 0 (repair_pass).
  repaired_primal repair_uploaded(const topup_tiers& topups, int tracked_tier) {
    auto& s = state_[scratch_];
    repair_pass<view_type, Utility> pass;
    pass.view = storage_.view;
    pass.utility = utility_;
    pass.factors = Executor::data(factors_);
    pass.topups = topups;
    pass.prices = Executor::data(s.prices);
    pass.kappa_scale = kappa_scale_for(s.level);
    pass.level = s.level;
    pass.state = pointers(s);
    pass.m = m_;
    pass.tracked_tier = tracked_tier;
    sums_.resize(static_cast<std::size_t>(pass.width()));
    exec_.reduce(n_, pass, sums_.data());
    repaired_primal out;
    out.usage = Eigen::Map<const Eigen::VectorXd>(sums_.data(), m_);
    out.utility = sums_[static_cast<std::size_t>(m_)];
    out.utility_smooth = sums_[static_cast<std::size_t>(m_) + 1];
    out.finite = sums_[static_cast<std::size_t>(m_) + 2] == 0.0;
    return out;
  }

  /// export_kept on host memory: each chunk of jobs computes its fractions once into a buffer of
  /// its own, then the buffers are copied into place (the device path computes them twice, to
  /// count and to write, to avoid per-thread buffers). The objective is summed in the chunks of
  /// host_executor::reduce, so it is the same number either way.
  double export_in_one_pass(const export_count_pass<view_type, Utility>& pass,
                            solve_result& result) {
    const std::int64_t n = n_;
    const std::int64_t chunks =
        chunk_count(n, 1, host_executor::max_chunks, host_executor::min_chunk_jobs);
    const std::int64_t per_chunk = (n + chunks - 1) / chunks;
    const auto chunk_count_size = static_cast<std::size_t>(chunks);
    // Uninitialised: a chunk's buffers are sized for its largest possible rows, and only the
    // entries written touch memory.
    std::vector<host_executor::vector<std::int32_t>> chunk_options(chunk_count_size);
    std::vector<host_executor::vector<double>> chunk_fractions(chunk_count_size);
    std::vector<double> chunk_objective(chunk_count_size, 0.0);
    auto& a = result.allocation;
    a.job_offset.resize(static_cast<std::size_t>(n) + 1);
    a.job_offset[0] = 0;
    result.throughput.resize(n);
    std::int64_t* row_end = a.job_offset.data() + 1;  // row counts first, then offsets
    double* throughput = result.throughput.data();
    [[maybe_unused]] const int threads = exec_.threads();  // unused without OpenMP
    int out_of_memory = 0;  // an exception must not leave an OpenMP region
    POPALLOC_PRAGMA_OMP(omp parallel for schedule(dynamic, 1) num_threads(threads) if (chunks > 1))
    for (std::int64_t c = 0; c < chunks; ++c) {
      // The chunk's rows grow in vectors local to the thread and move into place at the end:
      // growing chunk_options[c] in place made neighbouring chunks' threads write one cache line
      // (the vectors' headers) for every job, which left the export no faster on 2 threads.
      host_executor::vector<std::int32_t> options;
      host_executor::vector<double> fractions;
      const std::int64_t begin = c * per_chunk, end = std::min(n, begin + per_chunk);
      double objective = 0.0;
      try {
        // A job's row has at most one entry per option: sized once, the rows are written in
        // place (growing the buffers copied every entry about twice where jobs use many options).
        std::int64_t most = 0;
        for (std::int64_t i = begin; i < end; ++i) most += pass.view.option_count(i);
        options.resize(static_cast<std::size_t>(most));
        fractions.resize(static_cast<std::size_t>(most));
        std::size_t used = 0;
        for (std::int64_t i = begin; i < end; ++i) {
          row_buffer row{options.data() + used, fractions.data() + used, 0};
          pass.fractions(i, row);
          double tau = 0.0;
          for (std::int32_t k = 0; k < row.count; ++k)
            tau += row.fraction[k] * pass.view.value(i, row.option[k]);
          used += static_cast<std::size_t>(row.count);
          row_end[i] = row.count;
          throughput[i] = tau;
          objective += pass.utility.value(tau, pass.view.parameters(i));
        }
        options.resize(used);
        fractions.resize(used);
        chunk_options[static_cast<std::size_t>(c)] = std::move(options);
        chunk_fractions[static_cast<std::size_t>(c)] = std::move(fractions);
      } catch (const std::bad_alloc&) {
        POPALLOC_PRAGMA_OMP(omp atomic write)
        out_of_memory = 1;
      }
      chunk_objective[static_cast<std::size_t>(c)] = objective;
    }
    if (out_of_memory != 0) throw std::bad_alloc();
    std::vector<std::int64_t> chunk_start(chunk_count_size + 1, 0);
    double objective = 0.0;
    for (std::size_t c = 0; c < chunk_count_size; ++c) {
      chunk_start[c + 1] = chunk_start[c] + static_cast<std::int64_t>(chunk_options[c].size());
      objective += chunk_objective[c];
    }
    const auto entries = static_cast<std::size_t>(chunk_start[chunk_count_size]);
    a.option.resize(entries);
    a.fraction.resize(entries);
    POPALLOC_PRAGMA_OMP(omp parallel for schedule(dynamic, 1) num_threads(threads) if (chunks > 1))
    for (std::int64_t c = 0; c < chunks; ++c) {
      const auto k = static_cast<std::size_t>(c);
      std::int64_t offset = chunk_start[k];
      const std::int64_t begin = c * per_chunk, end = std::min(n, begin + per_chunk);
      for (std::int64_t i = begin; i < end; ++i) {
        offset += row_end[i];
        row_end[i] = offset;
      }
      std::copy(chunk_options[k].begin(), chunk_options[k].end(),
                a.option.begin() + chunk_start[k]);
      std::copy(chunk_fractions[k].begin(), chunk_fractions[k].end(),
                a.fraction.begin() + chunk_start[k]);
    }
    return objective;
  }
  /// (S + S^T) / 2 of the m x m column-major matrix at `s`, in tiles: the transposed reads of
  /// the plain expression missed the cache on every element once m reached the thousands.
  void symmetric_part(const double* s, Eigen::MatrixXd& out) const {
    const Eigen::Index m = m_, tile = 64;
    out.resize(m, m);
    for (Eigen::Index c0 = 0; c0 < m; c0 += tile)
      for (Eigen::Index r0 = 0; r0 <= c0; r0 += tile) {
        const Eigen::Index c1 = std::min(m, c0 + tile), r1 = std::min(m, r0 + tile);
        for (Eigen::Index c = c0; c < c1; ++c)
          for (Eigen::Index r = r0; r < std::min(r1, c + 1); ++r) {
            const double value = 0.5 * (s[c * m + r] + s[r * m + c]);
            out(r, c) = value;
            out(c, r) = value;
          }
      }
  }
  struct allocation_state {
    typename Executor::template vector<std::int32_t> left, right;
    typename Executor::template vector<double> theta, extra, prices;
    Eigen::VectorXd host_prices;
    double level = 0.0;
  };

  static state_pointers pointers(allocation_state& s) {
    return {Executor::data(s.left), Executor::data(s.right), Executor::data(s.theta),
            Executor::data(s.extra)};
  }
  job_memory<Executor>& search_starts() {
    return shared_memory_ != nullptr ? *shared_memory_ : own_memory_;
  }
  const double* kappa_scale_for(double level) {
    if (level > 0.0 && !kappa_scale_ready_)
      throw std::logic_error("popalloc engine: marginal_prices() must precede smoothed passes");
    return level > 0.0 ? Executor::data(kappa_scale_) : nullptr;
  }
  Executor exec_;
  problem_storage<Executor, Problem> storage_;
  Utility utility_;
  std::int64_t n_;
  std::int32_t m_;
  allocation_state state_[2];
  int scratch_ = 0;
  Eigen::VectorXd kept_factors_;
  /// Top-up tiers (topup_tiers) of the scratch and the kept allocation (empty: none).
  Eigen::VectorXd scratch_fill_, kept_fill_;
  bool scratch_to_saturation_ = false, kept_to_saturation_ = false;
  int topup_passes_ = 0;
  typename Executor::template vector<double> kappa_scale_, factors_, fill_;
  bool kappa_scale_ready_ = false;
  job_memory<Executor> own_memory_;
  job_memory<Executor>* shared_memory_;
  std::vector<double> sums_;
  double idle_utility_ = 0.0;
  double elasticity_ = 0.0;
  double unlimited_utility_ = std::numeric_limits<double>::infinity();
};

}  // namespace popalloc::detail
