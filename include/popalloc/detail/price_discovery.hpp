// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The price-discovery method: damped Newton on a regularised dual in price space, with
/// an exact dual bound and a feasible primal allocation at every evaluation. Backends run it
/// over their engine; popalloc::solve (dual_solver.hpp) is the public entry.
///
/// Method (docs/method.md has the derivation and the measurements):
/// - The dual g(p) = sum_i h_i(p) + p.R has one variable per resource; each h_i is a job's best
///   response (detail/best_response.hpp), so one evaluation is one pass over the jobs.
/// - Newton-type methods stall at the kinks of g (everywhere for piecewise-linear utilities,
///   where a job's options are collinear for the others), and best responses at the optimal
///   prices need not meet the capacities. The solver therefore minimises a regularised dual: each
///   job's problem carries -(kappa_i/2)|x_i|^2 (detail/regularized_response.hpp). Its best
///   response is unique and Lipschitz in p, ties are split continuously, and at its minimiser the
///   allocation meets every priced capacity. kappa_i shrinks geometrically (continuation) once
///   the regularised problem's own gap is small against the true gap.
/// - Each step minimises a quadratic model (exact generalized Hessian + damped-BFGS secant
///   correction, Levenberg-Marquardt damping) in a box intersected with p >= 0
///   (detail/box_qp.hpp), followed by an Armijo backtracking search.
/// - Every evaluation also yields the exact dual value g(p) (a valid upper bound) and a feasible
///   allocation (the regularised best responses, scaled down on over-used resources, and
///   topped up where capacity is left when that ends a solve whose bound is g(0)): the reported
///   gap is a certificate, not an estimate.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>

#include <Eigen/Core>

#include "popalloc/detail/box_qp.hpp"
#include "popalloc/detail/engine.hpp"
#include "popalloc/detail/relative_gap.hpp"
#include "popalloc/detail/sample_start.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/error.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"

namespace popalloc::detail {

/// Tuning constants of the method (see docs/method.md for how they were chosen).
struct method_constants {
  static constexpr double cold_smoothing = 1e-1;          ///< first level, piecewise linear
  static constexpr double cold_smoothing_concave = 1e-2;  ///< first level, strictly concave
  static constexpr double warm_smoothing = 1e-3;     ///< first level, warm start (piecewise lin.)
  static constexpr double smoothing_floor = 1e-11;   ///< smallest level before "stalled"
  static constexpr double smoothing_decrease = 0.1;  ///< a stage's level factor: tenfold fall
  static constexpr double least_decrease = 0.5;      ///< the largest factor stage_decrease gives
  /// A full solve's next level aims at this share of the gap its tolerance allows.
  static constexpr double stage_gap_share = 0.5;
  static constexpr double stage_ratio = 0.05;  ///< next stage when smoothed gap < ratio * true gap
  static constexpr double capacity_margin = 1e-11;  ///< repaired usage <= (1 - margin) R
  static constexpr double max_step = 0.5;           ///< per step, in units of the price scale
  static constexpr int max_backtracks = 12;
  static constexpr int residual_backtracks = 3;  ///< when judged by the gradient (see run())
  /// With solver_options::expand_steps, an undamped full step whose decrease is at least this
  /// share of |slope| (a quadratic model's own prediction is half of it), and whose model slope
  /// kept expansion_slope_ratio of the previous one's, doubles the next step's length, up to
  /// max_expansion times the model's step (see next_expansion()).
  static constexpr double expansion_trigger = 0.9;
  static constexpr double expansion_slope_ratio = 0.5;
  static constexpr double expansion_damping = 1e-6;  ///< "undamped": LM damping at most this
  static constexpr double max_expansion = 1024.0;
  /// dual - primal below -this x |objective|: the certificate is inconsistent (see finish()).
  static constexpr double inconsistent_gap = 1e-9;
};

template <class Engine>
class price_discovery {
 public:
  price_discovery(Engine& engine, const Eigen::VectorXd& capacity, const solver_options& options,
                  const progress_callback& callback, const stopwatch& clock)
      : engine_(engine),
        capacity_(capacity),
        options_(options),
        callback_(callback),
        clock_(clock),
        m_(capacity.size()) {}

  /// A warm start whose prices come from a solve that ended at smoothing `start.level` starts
  /// there (`exactly`: even above the usual warm-start level); a cold one tries
  /// `start.probe_prices` first when it has them.
  void start_from(const sample_start_level& start) { start_ = start; }

  /// A sample solve is there for its prices: top-ups would end it at prices far from the
  /// smoothed minimiser, where the full solve then needs more evaluations.
  void allow_topups(bool allowed) { topups_allowed_ = allowed; }

  /// A sample continued past its probe prices (solve_role::sample_to_minimiser) converges only
  /// near its smoothed minimiser, where the full solve can continue the Newton iteration.
  void end_at_minimiser(bool at_minimiser) { end_at_minimiser_ = at_minimiser; }

  /// A full solve picks each next smoothing level from its gap (stage_decrease); a sample's
  /// solve keeps the tenfold steps, since its last level is where the full solve starts.
  void levels_from_gap(bool from_gap) { levels_from_gap_ = from_gap; }

  /// Where a cold solve whose probe did not close the gap starts: `next` returns the level and
  /// sets the prices (none: the usual cold start).
  void after_failed_probe(std::function<sample_start_level(Eigen::VectorXd& prices)> next) {
    after_failed_probe_ = std::move(next);
  }

  void run(solve_result& result) {
    using k = method_constants;
    const Eigen::VectorXd equal_share = prepare_scales();
    result.timings.setup_seconds = clock_.seconds();
    Eigen::VectorXd prices = options_.warm_start_prices;
    if (prices.size() == 0 && start_.probe_prices.size() == m_) {
      if (probe_closes_gap()) {
        result.final_prices = start_.probe_prices;
        finish(result, solve_status::converged);
        return;
      }
      if (after_failed_probe_) start_ = after_failed_probe_(prices);
    }
    double damping = start_at(prices, equal_share);
    double expansion = 1.0;  // the next step's length in multiples of the model's step
    double last_model_slope = 0.0;

    evaluation current;
    double current_gap = 0.0;  // smoothed duality gap at `prices`
    if (!evaluate(prices, current, current_gap, !start_.likely_final)) {
      finish(result, solve_status::numerical_error);
      return;
    }
    solve_status status = solve_status::not_solved;
    for (;;) {
      if (converged() && (!end_at_minimiser_ || near_minimiser(prices, current.usage))) {
        status = solve_status::converged;
        break;
      }
      if ((status = limit_status()) != solve_status::not_solved) break;
      if (level_ > k::smoothing_floor && current_gap <= k::stage_ratio * gap()) {
        next_stage(prices, current, current_gap, damping);
        expansion = 1.0;
        continue;
      }
      if (!current.has_hessian) {
        add_model(prices, current);
        continue;
      }
      newton_step step = newton_direction(prices, current, damping);
      const bool slope_kept =
          std::abs(step.slope) >= k::expansion_slope_ratio * std::abs(last_model_slope);
      last_model_slope = step.slope;
      step.direction *= expansion;
      step.slope *= expansion;
      const double value = current.excess_smooth + prices.dot(capacity_);
      const double negligible = 1e-15 * (std::abs(value) + 1.0);
      // When the bound is g(0) no dual value can improve it and only the allocation is left to
      // find. The dual decreases to second order in the allocation's overuse, the shortfall the
      // repair leaves grows to first order: near the smoothed minimiser a decrease can drown in
      // the rounding of the dual's value while the gradient still shows the overuse (target
      // priority with every target reachable). Such a step is judged by the projected gradient.
      const bool by_value = step.slope < -negligible;
      const double residual =
          by_value || !bound_is_trivial() ? 0.0 : projected_gradient_norm(prices, current.usage);
      if (by_value || (step.slope < 0.0 && residual > 0.0)) {
        const search_end end =
            line_search(step, by_value, value, residual, prices, current, current_gap);
        const double t = end.step_length;
        const double damping_before = damping;
        damping = t == 1.0 && end.accepted ? std::max(damping * 0.25, 1e-9)
                                           : std::min(damping * 2.0 / t, 1e9);
        const bool undamped = damping_before <= k::expansion_damping;
        expansion = options_.expand_steps && by_value && undamped && slope_kept
                        ? next_expansion(expansion, end, value, step.slope, prices, current)
                        : 1.0;
        if (end.accepted || limit_status() != solve_status::not_solved) continue;
      }
      expansion = 1.0;
      if (level_ > k::smoothing_floor) {
        next_stage(prices, current, current_gap, damping);
        continue;
      }
      status = solve_status::stalled;
      break;
    }
    result.final_prices = prices;
    finish(result, status);
  }

 private:
  /// A Newton step in units of the price scale, the box it was found in (its lower side, where
  /// p + step >= 0 binds) and the smoothed dual's directional derivative along it.
  struct newton_step {
    Eigen::VectorXd direction, lower;
    double slope = 0.0;
  };

  /// Where a line search ended: the last step length tried, and whether it was accepted.
  struct search_end {
    double step_length = 1.0;
    bool accepted = false;
  };

  /// The generalized Hessian counts the curvature of every job near a kink of its response,
  /// also of the many whose kink the step does not reach: where the smoothed dual is nearly
  /// linear along the step the undamped model's steps are far too short and the solve crawls
  /// (a quadratic's full Newton step decreases it by half of |slope|, these by nearly all of it,
  /// and the slope stays while a converging Newton sequence's shrinks). Such a step doubles the
  /// next one's length; a shortened or rejected step resets it.
  double next_expansion(double expansion, const search_end& end, double value, double slope,
                        const Eigen::VectorXd& prices, const evaluation& current) const {
    using k = method_constants;
    if (!end.accepted || end.step_length != 1.0) return 1.0;
    const double decrease = value - (current.excess_smooth + prices.dot(capacity_));
    return decrease >= -k::expansion_trigger * slope ? std::min(2.0 * expansion, k::max_expansion)
                                                     : expansion;
  }

  /// Sets the first smoothing level for a start at `prices` (the equal-share prices when there
  /// are none) and returns the first Levenberg-Marquardt damping.
  double start_at(Eigen::VectorXd& prices, const Eigen::VectorXd& equal_share) {
    using k = method_constants;
    const bool warm = prices.size() != 0;
    if (!warm) prices = equal_share;
    if (warm) scale_ = scale_.cwiseMax(prices);
    // Strictly concave utilities need less smoothing (their dual is differentiable except where
    // a job's options are collinear), piecewise-linear ones more.
    level_ = Engine::piecewise_linear ? (warm ? k::warm_smoothing : k::cold_smoothing)
                                      : k::cold_smoothing_concave;
    if (warm && start_.level > 0.0)
      level_ = start_.exactly ? start_.level : std::min(level_, start_.level);
    return warm ? 1e-2 : 1.0;  // relative to the model's diagonal
  }

  /// Damped Newton step on the smoothed dual in units of the price scale, inside a box (at most
  /// max_step of the scale per resource, and p + step >= 0). `damping` is relative to the
  /// model's diagonal (Levenberg-Marquardt).
  newton_step newton_direction(const Eigen::VectorXd& prices, const evaluation& current,
                               double damping) {
    using k = method_constants;
    const Eigen::VectorXd gradient = (capacity_ - current.usage).cwiseProduct(scale_);
    Eigen::MatrixXd& hessian = model_;
    hessian = scale_.asDiagonal() * current.hessian * scale_.asDiagonal();
    if (correction_.size() != 0) hessian += correction_;
    const double mean_diagonal = hessian.diagonal().mean();
    const double floor =
        mean_diagonal > 0.0 ? 1e-3 * mean_diagonal : gradient.cwiseAbs().maxCoeff() / k::max_step;
    hessian.diagonal() += damping * (hessian.diagonal().array() + floor).matrix();
    newton_step step;
    step.lower.resize(m_);
    Eigen::VectorXd upper(m_);
    for (Eigen::Index j = 0; j < m_; ++j) {
      step.lower[j] = std::max(-prices[j] / scale_[j], -k::max_step);
      upper[j] = k::max_step;
    }
    step.direction = solve_box_qp(gradient, hessian, step.lower, upper);
    step.slope = gradient.dot(step.direction);
    return step;
  }

  /// Backtracking along `step` with quadratic interpolation: Armijo's condition on the smoothed
  /// dual (`value` at the current prices) when `by_value`, otherwise a decrease of the projected
  /// gradient below `residual`. An accepted trial becomes `prices`, `current` and
  /// `current_gap` (and updates the secant correction).
  search_end line_search(const newton_step& step, bool by_value, double value, double residual,
                         Eigen::VectorXd& prices, evaluation& current, double& current_gap) {
    using k = method_constants;
    double t = 1.0;
    for (int attempt = 0; attempt < (by_value ? k::max_backtracks : k::residual_backtracks);
         ++attempt) {
      Eigen::VectorXd trial = prices + t * step.direction.cwiseProduct(scale_);
      for (Eigen::Index j = 0; j < m_; ++j)
        if (trial[j] < 0.0 || (t == 1.0 && step.direction[j] == step.lower[j] &&
                               step.lower[j] * scale_[j] == -prices[j]))
          trial[j] = 0.0;  // land exactly on p_j = 0
      evaluation& candidate = candidate_;
      double candidate_gap = 0.0;
      const bool finite = evaluate(trial, candidate, candidate_gap);
      const double trial_value = candidate.excess_smooth + trial.dot(capacity_);
      const bool decreased =
          by_value ? trial_value <= value + 1e-4 * t * step.slope
                   : projected_gradient_norm(trial, candidate.usage) < (1.0 - 1e-4 * t) * residual;
      if (finite && decreased) {
        update_correction(prices, current, trial, candidate);
        prices = std::move(trial);
        std::swap(current, candidate);  // the old buffers take the next candidate
        current_gap = candidate_gap;
        return {t, true};
      }
      if (limit_status() != solve_status::not_solved) return {t, false};
      const double curvature = finite && by_value ? trial_value - value - t * step.slope : 0.0;
      const double t_model = curvature > 0.0 ? -step.slope * t * t / (2.0 * curvature) : 0.1 * t;
      t = std::clamp(t_model, 0.1 * t, 0.5 * t);
    }
    return {t, false};
  }

  /// The initial price estimates, the gap references, the trivial bound and the price scale per
  /// resource (the trust region is a box in these units); returns the equal-share prices.
  Eigen::VectorXd prepare_scales() {
    auto marginals = engine_.marginal_prices(capacity_);
    Eigen::VectorXd& equal_share = marginals.equal_share;
    const Eigen::VectorXd& at_zero = marginals.at_zero;
    references_ = {engine_.idle_utility(), engine_.elasticity()};
    trivial_bound_ = engine_.unlimited_utility();
    scale_.resize(m_);
    for (Eigen::Index j = 0; j < m_; ++j) {
      const double a = std::isfinite(equal_share[j]) ? equal_share[j] : 0.0;
      const double b = std::isfinite(at_zero[j]) ? at_zero[j] : 0.0;
      scale_[j] = std::max(a, 0.1 * b);
      if (!std::isfinite(equal_share[j])) equal_share[j] = 0.0;
    }
    const double largest = scale_.maxCoeff();
    for (Eigen::Index j = 0; j < m_; ++j)
      if (!(scale_[j] > 0.0)) scale_[j] = largest > 0.0 ? 1e-3 * largest : 1.0;
    return std::move(marginals.equal_share);
  }

  /// The smoothed dual's optimality residual (projected_gradient_norm) is a small share of the
  /// capacities (sample_minimiser_residual, in the same scaled units).
  bool near_minimiser(const Eigen::VectorXd& prices, const Eigen::VectorXd& usage) const {
    return projected_gradient_norm(prices, usage) <=
           sample_minimiser_residual * capacity_.cwiseProduct(scale_).norm();
  }

  /// Structured secant update: the generalized Hessian misses the curvature of jobs that switch
  /// between hull vertices or utility kinks (it is exact only inside pieces). A damped BFGS
  /// update of a PSD correction matrix makes generalized Hessian + correction satisfy the
  /// secant equation along the last step (scaled coordinates).
  void update_correction(const Eigen::VectorXd& p0, const evaluation& e0, const Eigen::VectorXd& p1,
                         const evaluation& e1) {
    const Eigen::VectorXd s = (p1 - p0).cwiseQuotient(scale_);
    const Eigen::VectorXd y = (e0.usage - e1.usage).cwiseProduct(scale_);
    Eigen::MatrixXd& h1 = model_;  // the step's model is no longer needed
    h1 = scale_.asDiagonal() * e1.hessian * scale_.asDiagonal();
    const Eigen::VectorXd missing = y - h1 * s;
    const double ss = s.squaredNorm();
    if (!(ss > 0.0) || !missing.allFinite()) return;
    if (correction_.size() == 0) {
      const double sy = s.dot(missing);
      if (!(sy > 0.0)) return;
      correction_ = Eigen::MatrixXd::Identity(m_, m_) * (sy / ss);
      return;
    }
    const Eigen::VectorXd as = correction_ * s;
    const double sas = s.dot(as);
    if (!(sas > 0.0)) return;
    double sy = s.dot(missing);
    Eigen::VectorXd r = missing;
    if (sy < 0.2 * sas) {  // Powell damping keeps the correction positive definite
      const double theta = 0.8 * sas / (sas - sy);
      r = theta * missing + (1.0 - theta) * as;
      sy = s.dot(r);
    }
    if (!(sy > 0.0)) return;
    // In place: the expression's two outer-product temporaries cost more than the update.
    for (Eigen::Index j = 0; j < m_; ++j)
      for (Eigen::Index i = 0; i < m_; ++i)
        correction_(i, j) += r[i] * r[j] / sy - as[i] * as[j] / sas;
  }

  /// Norm of the dual's gradient R - usage in scaled units, without the components that p >= 0
  /// blocks (price 0, resource not fully used).
  double projected_gradient_norm(const Eigen::VectorXd& prices,
                                 const Eigen::VectorXd& usage) const {
    double sum = 0.0;
    for (Eigen::Index j = 0; j < m_; ++j) {
      const double g = (capacity_[j] - usage[j]) * scale_[j];
      if (prices[j] > 0.0 || g < 0.0) sum += g * g;
    }
    return std::sqrt(sum);
  }

  /// The Newton model of an evaluation made without it (sample_start_level::likely_final): the
  /// same pass again at the same prices, now with the Hessian, counted as an evaluation. Its
  /// allocation is the one certified already, so it is not certified again.
  void add_model(const Eigen::VectorXd& prices, evaluation& current) {
    const stopwatch timer;
    engine_.evaluate(prices, level_, true, current);
    ++iterations_;
    evaluate_seconds_ += timer.seconds();
    if (!current.finite) interrupted_by_nan_ = true;
  }

  /// One evaluation at the probe prices (sample_start_level), at their level; true when its
  /// certificate meets the tolerance (the solve ends at that level). Otherwise the solve goes on
  /// from its own start, keeping the probe's bound and allocation where they are the best so far.
  bool probe_closes_gap() {
    if (start_.probe_prices.size() != m_) return false;
    const double level = level_;
    level_ = start_.probe_level;
    evaluation probe;
    double probe_gap = 0.0;
    // A failed probe hands the solve back to its own start, so no step uses the probe's model.
    if (evaluate(start_.probe_prices, probe, probe_gap, false) && converged()) return true;
    level_ = level;
    return false;
  }

  /// Next continuation stage: less smoothing, re-evaluated at the same prices.
  void next_stage(Eigen::VectorXd& prices, evaluation& current, double& current_gap,
                  double& damping) {
    const double previous = level_;
    level_ = std::max(level_ * stage_decrease(), 0.5 * method_constants::smoothing_floor);
    ++stages_;
    damping = std::max(damping, 1e-3);
    // With the bound at g(0) the optimal prices are 0 as far as the solve can tell, and the
    // smoothed minimiser's prices are proportional to the smoothing (p = kappa q: the saturated
    // jobs' responses depend on p / kappa only), so the new level's minimiser is predicted.
    if (bound_is_trivial()) {
      prices *= level_ / previous;
      correction_.resize(0, 0);
    }
    if (!evaluate(prices, current, current_gap)) interrupted_by_nan_ = true;
  }

  /// The factor by which the next stage lowers the smoothing. The smoothed responses lose
  /// objective in proportion to the level, so where the gap is a few times what the tolerance
  /// allows, a level that brings it to stage_gap_share of that ends the solve in fewer Newton
  /// steps than a tenfold decrease (the smoothed minimiser moves less); tenfold otherwise.
  double stage_decrease() const {
    using k = method_constants;
    const double allowed = allowed_gap(measured(), options_);
    const double left = gap();
    if (!levels_from_gap_ || !(allowed > 0.0) || !std::isfinite(left) || !(left > allowed))
      return k::smoothing_decrease;
    return std::clamp(k::stage_gap_share * allowed / left, k::smoothing_decrease,
                      k::least_decrease);
  }

  /// One pass over the jobs at `prices`; updates the certificate and sets `smooth_gap` to the
  /// duality gap of the smoothed problem at `prices`. False if not finite. `with_hessian`: the
  /// Newton model needs it; an evaluation no step starts from does not (the m^2 sums per job
  /// are the largest part of a pass where the smoothing spreads the jobs over many options).
  bool evaluate(const Eigen::VectorXd& prices, evaluation& out, double& smooth_gap,
                bool with_hessian = true) {
    const stopwatch timer;
    engine_.evaluate(prices, level_, with_hessian, out);
    ++iterations_;
    if (out.finite) smooth_gap = certify(prices, out);
    evaluate_seconds_ += timer.seconds();
    report(prices);
    return out.finite && std::isfinite(smooth_gap);
  }

  /// Updates the best dual bound and the best feasible allocation; returns the smoothed gap.
  double certify(const Eigen::VectorXd& prices, const evaluation& e) {
    const double dual = e.excess_exact + prices.dot(capacity_);
    if (dual < best_dual_) {
      best_dual_ = dual;
      best_prices_ = prices;
    }
    Eigen::VectorXd factors = Eigen::VectorXd::Ones(m_);
    bool scaled = false;
    // Scale every resource used beyond (1 - margin) of its capacity back to that level: the
    // margin absorbs the rounding of sums over millions of jobs, so the returned allocation
    // never exceeds a capacity, whoever adds it up.
    for (Eigen::Index j = 0; j < m_; ++j) {
      const double limit = capacity_[j] * (1.0 - method_constants::capacity_margin);
      if (e.usage[j] > limit) {
        factors[j] = limit / e.usage[j];
        scaled = true;
      }
    }
    repaired_primal primal;
    if (scaled && e.repair_value.size() == m_ && e.unfolded == 0.0) {
      // A lower bound on the scaled allocation's objective from the evaluation's own sums
      // (evaluate_pass, fold_repair); finish() reports the exact objective of the one returned.
      primal.usage = e.usage.cwiseProduct(factors);
      if constexpr (Engine::log_fold) {
        primal.utility = e.fold_base + factors.array().log().matrix().dot(e.repair_value);
      } else {
        primal.utility = e.fold_base + factors.dot(e.repair_value);
      }
      primal.utility_smooth = primal.utility - 0.5 * factors.cwiseAbs2().dot(e.repair_quad);
    } else if (scaled) {
      primal = engine_.repair(factors);
      if (!primal.finite) return std::numeric_limits<double>::infinity();
    } else {
      primal.usage = e.usage;
      primal.utility = e.utility_exact;
      primal.utility_smooth = e.utility_smooth;
    }
    bool topped_up = false;
    // Jobs on the scaled resources may win their lost throughput back where capacity is left.
    // Tried when the bound is g(0) (no price beats 0: only the allocation is left to find, and
    // the smoothed responses over-use the resources the smoothing prices while others have
    // room) and the unscaled allocation would meet the tolerance; kept only when the topped-up
    // one does, which ends the solve. An attempt costs one pass when even top-ups that all fit
    // could not meet it (jobs without time to spare), three otherwise; elsewhere a failed one
    // would cost about an evaluation and a successful one rarely saves more. A solve that ends
    // short of the tolerance keeps the scaled allocation, whose shortfall is spread over the jobs
    // in proportion to their use of the scarce resources; a topped-up one puts it all on the jobs
    // that could not be topped up.
    const bool scaled_topup = scaled && e.utility_exact > primal.utility &&
                              e.utility_exact > best_primal_ && meets_tolerance(e.utility_exact);
    // An allocation that fits but leaves jobs short of their saturation throughput (targets)
    // while resources have room: the jobs top up toward it. Tried when no top-up of this kind
    // has failed at this smoothing level yet: a failure says the jobs short of their targets
    // have no time or no room left, which the next evaluations at the level rarely change.
    const bool saturation_topup =
        !scaled && Engine::piecewise_linear && primal.utility > best_primal_ &&
        !meets_tolerance(primal.utility) && saturation_topup_failed_at_ != level_;
    if (topups_allowed_ && bound_is_trivial() && (scaled_topup || saturation_topup)) {
      Eigen::VectorXd spare(m_);
      for (Eigen::Index j = 0; j < m_; ++j)
        spare[j] = factors[j] < 1.0
                       ? 0.0
                       : capacity_[j] * (1.0 - method_constants::capacity_margin) - e.usage[j];
      if ((spare.array() > 0.0).any()) {
        repaired_primal topped = engine_.repair_with_topups(
            factors, spare, saturation_topup,
            [this](double objective) { return meets_tolerance(objective); });
        if (topped.finite && topped.utility > primal.utility && meets_tolerance(topped.utility)) {
          primal = std::move(topped);
          topped_up = true;
        } else if (saturation_topup) {
          saturation_topup_failed_at_ = level_;
        }
      }
    }
    if (primal.utility > best_primal_) {
      best_primal_ = primal.utility;
      best_usage_ = primal.usage;
      engine_.keep_scratch(factors, topped_up);
    }
    return e.excess_smooth + prices.dot(capacity_) - primal.utility_smooth;
  }

  /// The best dual value, never above g(0): far from the optimal prices (an optimum with slack
  /// everywhere, a start in the wrong region) g(p) can exceed the unlimited-capacity objective.
  double bound() const { return std::min(best_dual_, trivial_bound_); }

  /// No evaluated price vector beats p = 0: the optimal prices are 0 as far as the solve knows.
  bool bound_is_trivial() const { return trivial_bound_ <= best_dual_; }

  double gap() const { return bound() - best_primal_; }

  measured_gap measured() const {
    return measure_gap(bound(), best_primal_, options_.gap, references_);
  }
  double relative_gap() const { return measured().relative; }

  bool converged() const { return meets_tolerance(best_primal_); }

  /// Whether a feasible allocation with objective `primal` would end the solve.
  bool meets_tolerance(double primal) const {
    if (!std::isfinite(primal) || !std::isfinite(bound())) return false;
    return within_tolerance(bound() - primal,
                            measure_gap(bound(), primal, options_.gap, references_), options_);
  }

  /// A dual bound below a feasible objective by more than rounding means the arithmetic lost
  /// precision (data spanning most of the double range): neither number can be trusted.
  bool certificate_inconsistent() const {
    if (!std::isfinite(best_primal_) || !std::isfinite(bound())) return false;
    const double scale = std::max(std::abs(bound()), std::abs(best_primal_));
    return gap() < -method_constants::inconsistent_gap * scale && gap() < -options_.absolute_gap;
  }

  solve_status limit_status() const {
    if (interrupted_by_nan_) return solve_status::numerical_error;
    if (interrupted_) return solve_status::interrupted;
    if (iterations_ >= options_.max_iterations) return solve_status::iteration_limit;
    if (clock_.seconds() >= options_.time_limit_seconds) return solve_status::time_limit;
    return solve_status::not_solved;
  }

  void report(const Eigen::VectorXd& prices) {
    if (!callback_ || iterations_ % options_.callback_every != 0) return;
    progress info;
    info.iteration = iterations_;
    info.elapsed_seconds = clock_.seconds();
    info.primal_objective = best_primal_;
    info.dual_bound = bound();
    info.relative_gap = relative_gap();
    info.smoothing = level_;
    info.prices = prices.data();
    info.n_resources = m_;
    if (callback_(info) == callback_action::stop) interrupted_ = true;
  }

  void finish(solve_result& result, solve_status status) {
    // The kept allocation's exact objective (certify() may have scored it by a lower bound).
    const double objective = engine_.export_kept(result);
    if (std::isfinite(best_primal_)) best_primal_ = objective;
    if (certificate_inconsistent()) status = solve_status::numerical_error;
    result.status = status;
    result.iterations = iterations_;
    result.smoothing_stages = stages_;
    result.smoothing = level_;
    result.dual_bound = bound();
    result.trivial_bound = trivial_bound_;
    result.primal_objective = best_primal_;
    result.duality_gap = gap();
    const measured_gap relative = measured();
    result.relative_gap = relative.relative;
    result.gap_scale = relative.scale;
    result.gap_scale_name = relative.scale_name;
    result.gap_measure = relative.measure;
    result.prices = best_prices_.size() == m_ ? best_prices_ : Eigen::VectorXd::Zero(m_);
    result.usage = best_usage_.size() == m_ ? best_usage_ : Eigen::VectorXd::Zero(m_);
    result.max_capacity_violation = (result.usage - capacity_).cwiseMax(0.0).maxCoeff();
    result.timings.evaluate_seconds = evaluate_seconds_;
    result.timings.solve_seconds = clock_.seconds() - result.timings.setup_seconds;
  }

  Engine& engine_;
  const Eigen::VectorXd& capacity_;
  const solver_options& options_;
  const progress_callback& callback_;
  const stopwatch& clock_;
  Eigen::Index m_;
  Eigen::VectorXd scale_, best_prices_, best_usage_;
  Eigen::MatrixXd correction_;  ///< secant correction to the generalized Hessian (scaled)
  /// Buffers kept across steps: at thousands of resources every fresh m x m matrix cost a
  /// page fault per 4 KiB (a quarter of a load-balancing solve's time was in the kernel).
  Eigen::MatrixXd model_;
  evaluation candidate_;
  double level_ = 0.0;
  sample_start_level start_;  ///< where a sample start says to begin
  bool topups_allowed_ = true;
  bool end_at_minimiser_ = false;
  bool levels_from_gap_ = false;
  std::function<sample_start_level(Eigen::VectorXd&)> after_failed_probe_;
  double saturation_topup_failed_at_ = -1.0;  ///< smoothing level of the last failed one
  gap_references references_;
  double trivial_bound_ = std::numeric_limits<double>::infinity();
  double best_dual_ = std::numeric_limits<double>::infinity();
  double best_primal_ = -std::numeric_limits<double>::infinity();
  double evaluate_seconds_ = 0.0;
  int iterations_ = 0;
  int stages_ = 0;
  bool interrupted_ = false;
  bool interrupted_by_nan_ = false;
};

}  // namespace popalloc::detail
