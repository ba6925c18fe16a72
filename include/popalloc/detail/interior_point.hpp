// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The interior-point finish: a barrier method on a small dense problem's exact
/// formulation, for when the price iterations end without meeting the tolerance.
///
/// The price method smooths each job at one scale; a problem that mixes, within one job or one
/// resource, quantities many orders of magnitude apart (a job's time on a resource of capacity
/// 1e-6 beside one of 1e-3, weights a million apart on one resource) can leave it short of the
/// tolerance. An interior-point method has no such scale: its barrier treats every variable at
/// its own distance from its bound. On a small problem its dense Newton system costs little, so
/// popalloc::solve runs it there and keeps whichever certificate is better (docs/method.md,
/// "Interior-point finish").
///
/// The formulation, in scaled variables u = x / sigma (sigma_io = min(1, R_o / d_io), the most
/// of its time job i can spend on option o) and capacity rows divided by R:
///   minimise phi(u, z) = -sum_i f_i(t_i) / F,  t_i = sum_o a_io sigma_io u_io,
///   subject to u >= 0, sum_o sigma_io u_io <= 1 (each job), sum_i (d_io sigma_io / R_o) u_io <= 1
///   (each open resource). A piecewise-linear f_i = f_i(0) + s0 min(t, T) + sT max(t - T, 0) is
///   linear in (t_i, z_i) with z_i <= t_i, z_i <= T (z in the unit of the job's fastest option).
/// F is the largest entry of phi's gradient at the starting point. The method is the barrier
/// method of Boyd & Vandenberghe (Convex Optimization, 11.3) from a strictly feasible start.
///
/// Each centre is certified like every other answer: the allocation's objective (any rounding
/// overshoot of a capacity or a job's time scaled away), and the dual function g evaluated
/// exactly (walk_hull at mu = 0) at the capacity rows' multipliers, in the problem's units.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "popalloc/dense_problem.hpp"
#include "popalloc/detail/best_response.hpp"
#include "popalloc/detail/dense_view.hpp"
#include "popalloc/detail/relative_gap.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"

namespace popalloc::detail {

/// The finish runs on problems with at most this many scaled variables (options plus the
/// piecewise-linear jobs' kink variables), where its dense Newton systems stay cheap beside the
/// price iterations that came before.
constexpr Eigen::Index interior_point_max_variables = 256;

/// Views of other dense types are copied into a dense_problem for the finish up to this many
/// entries (a problem with more has more options than the finish takes unless nearly all its
/// throughputs are 0).
constexpr Eigen::Index interior_point_copy_limit = 64 * interior_point_max_variables;

/// The statuses after which popalloc::solve tries the finish.
inline bool interior_point_may_help(solve_status status) {
  return status == solve_status::stalled || status == solve_status::iteration_limit ||
         status == solve_status::numerical_error;
}

/// One linear inequality sum_k coefficient_k v_k <= bound.
struct sparse_row {
  std::vector<std::pair<Eigen::Index, double>> terms;
  double bound = 0.0;
};

/// The scaled problem: the variables, their rows and the linear part of phi (before / F).
struct interior_point_model {
  std::vector<Eigen::Index> option_job, option_resource;
  std::vector<double> option_scale;        ///< sigma: x = sigma u
  std::vector<double> option_rate;         ///< a sigma: throughput per unit of u
  std::vector<Eigen::Index> job_first{0};  ///< job i's options are job_first[i] .. [i+1]-1
  std::vector<Eigen::Index> capacity_row;  ///< per resource: its row, or -1 (none)
  Eigen::VectorXd linear_cost;             ///< phi's linear part (piecewise-linear utilities)
  std::vector<sparse_row> rows;
  Eigen::Index variables = 0;
};

/// The slopes of a piecewise-linear utility: below and beyond its kink at `kink` (> 0, finite),
/// or one slope `below` everywhere when kink is 0.
struct piecewise_slopes {
  double below = 0.0, beyond = 0.0, kink = 0.0;
};

template <class Utility>
piecewise_slopes slopes_of(const Utility& utility, const job_parameters& job) {
  piecewise_slopes s;
  if constexpr (Utility::piecewise_linear) {
    const double saturation = utility.saturation(job);
    if (saturation > 0.0 && saturation < HUGE_VAL) {
      s.below = utility.marginal(0.0, job);
      s.beyond = utility.marginal(saturation, job);
      s.kink = s.below > s.beyond ? saturation : 0.0;
    } else {
      s.below = utility.marginal(std::max(saturation, 0.0), job);
    }
  }
  return s;
}

template <class Scalar>
job_parameters parameters_of(const dense_problem<Scalar>& p, Eigen::Index i) {
  job_parameters job;
  if (p.weight.size() != 0) job.weight = static_cast<double>(p.weight[i]);
  if (p.target.size() != 0) job.target = static_cast<double>(p.target[i]);
  return job;
}

/// The model: an option per open resource that job i has a positive throughput on, a kink
/// variable per piecewise-linear job with a kink, and their rows; false when it would exceed the
/// variable limit.
template <class Scalar, class Utility>
bool build_interior_point_model(const dense_problem<Scalar>& p, const Utility& utility,
                                interior_point_model& model) {
  const Eigen::Index n = p.jobs(), m = p.resources();
  Eigen::Index kinks = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < m; ++j) {
      if (!(p.throughput(i, j) > 0 && p.capacity[j] > 0.0)) continue;
      if (static_cast<Eigen::Index>(model.option_job.size()) + kinks >=
          interior_point_max_variables)
        return false;
      const double amount = p.amount(i, j);
      const double sigma = amount > p.capacity[j] ? p.capacity[j] / amount : 1.0;
      model.option_job.push_back(i);
      model.option_resource.push_back(j);
      model.option_scale.push_back(sigma);
      model.option_rate.push_back(static_cast<double>(p.throughput(i, j)) * sigma);
    }
    model.job_first.push_back(static_cast<Eigen::Index>(model.option_job.size()));
    kinks += slopes_of(utility, parameters_of(p, i)).kink > 0.0 ? 1 : 0;
  }
  const Eigen::Index options = static_cast<Eigen::Index>(model.option_job.size());
  if (options == 0) return false;
  model.variables = options + kinks;
  model.linear_cost = Eigen::VectorXd::Zero(model.variables);
  for (Eigen::Index k = 0; k < options; ++k) model.rows.push_back({{{k, -1.0}}, 0.0});
  Eigen::Index kink_variable = options;
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::Index first = model.job_first[static_cast<std::size_t>(i)];
    const Eigen::Index last = model.job_first[static_cast<std::size_t>(i) + 1];
    if (first == last) continue;
    sparse_row time{{}, 1.0};
    double fastest = 0.0;
    for (Eigen::Index k = first; k < last; ++k) {
      time.terms.emplace_back(k, model.option_scale[static_cast<std::size_t>(k)]);
      fastest = std::max(fastest, model.option_rate[static_cast<std::size_t>(k)]);
    }
    model.rows.push_back(std::move(time));
    // Linear cost per unit of u: the slope beyond the kink (the part below it goes to z), the
    // one slope of a piecewise-linear f without a kink, none for a strictly concave f.
    const piecewise_slopes s = slopes_of(utility, parameters_of(p, i));
    const double slope = s.kink > 0.0 ? s.beyond : s.below;
    for (Eigen::Index k = first; k < last; ++k)
      model.linear_cost[k] = -slope * model.option_rate[static_cast<std::size_t>(k)];
    if (s.kink > 0.0) {
      const Eigen::Index z = kink_variable++;
      model.linear_cost[z] = -(s.below - s.beyond) * fastest;
      sparse_row below_throughput{{{z, 1.0}}, 0.0};
      for (Eigen::Index k = first; k < last; ++k)
        below_throughput.terms.emplace_back(
            k, -model.option_rate[static_cast<std::size_t>(k)] / fastest);
      model.rows.push_back(std::move(below_throughput));
      model.rows.push_back({{{z, 1.0}}, s.kink / fastest});
    }
  }
  model.capacity_row.assign(static_cast<std::size_t>(m), -1);
  for (Eigen::Index j = 0; j < m; ++j) {
    sparse_row capacity{{}, 1.0};
    for (Eigen::Index k = 0; k < options; ++k) {
      if (model.option_resource[static_cast<std::size_t>(k)] != j) continue;
      const Eigen::Index i = model.option_job[static_cast<std::size_t>(k)];
      const double amount = p.amount(i, j);
      if (amount > 0.0)
        capacity.terms.emplace_back(
            k, amount * model.option_scale[static_cast<std::size_t>(k)] / p.capacity[j]);
    }
    if (capacity.terms.empty()) continue;
    model.capacity_row[static_cast<std::size_t>(j)] = static_cast<Eigen::Index>(model.rows.size());
    model.rows.push_back(std::move(capacity));
  }
  return true;
}

/// The barrier method on `model` (phi's nonlinear part from `utility` where it is strictly
/// concave): minimises t phi(v) - sum_r log(slack_r(v)) by damped Newton steps for t growing by
/// `growth` from 1 until rows / t, the gap of the central point, is below `final_gap` (phi is
/// in units of F), or until its caller has what it needs.
template <class Scalar, class Utility>
class interior_point_method {
 public:
  interior_point_method(const dense_problem<Scalar>& p, const Utility& utility,
                        const interior_point_model& model)
      : p_(p), utility_(utility), model_(model) {}

  /// Calls visit(v, lambda) at the end of each centring, with the scaled variables and the rows'
  /// multipliers 1 / (t slack) in the objective's units, until it returns true. Returns the
  /// Newton steps taken.
  template <class Visit>
  int run(Visit&& visit) {
    const double rows = static_cast<double>(model_.rows.size());
    Eigen::VectorXd v = starting_point();
    scale_ = 1.0;
    Eigen::VectorXd gradient;
    Eigen::MatrixXd hessian;
    objective_derivatives(v, gradient, hessian, false);
    scale_ = gradient.cwiseAbs().maxCoeff();
    if (!(scale_ > 0.0) || !std::isfinite(scale_)) scale_ = 1.0;
    int steps = 0;
    for (double t = 1.0;; t *= growth) {
      // A centre that double precision cannot settle (a Newton decrement that its rounding
      // keeps up) ends the path: a larger t would not centre any better.
      const bool settled = center(v, t, std::min(max_center_steps, max_steps - steps), steps);
      const bool enough = visit(v, Eigen::VectorXd(slacks(v).cwiseInverse() * (scale_ / t)));
      if (enough || !settled || rows / t <= final_gap || steps >= max_steps) break;
    }
    return steps;
  }

 private:
  static constexpr int max_steps = 1000;
  static constexpr int max_center_steps = 200;
  static constexpr double growth = 20.0;
  /// The central point's gap, relative to F (a gradient entry of phi is at most 1 at the start).
  static constexpr double final_gap = 1e-22;

  /// Damped Newton steps on t phi - sum log slack from v (at most `budget`, counted in
  /// `steps`); true when the Newton decrement fell below its threshold.
  bool center(Eigen::VectorXd& v, double t, int budget, int& steps) const {
    Eigen::VectorXd gradient, direction;
    Eigen::MatrixXd hessian;
    for (int taken = 0; taken < budget; ++taken) {
      if (!objective_derivatives(v, gradient, hessian, true)) break;
      gradient *= t;
      hessian *= t;
      const Eigen::VectorXd s = slacks(v);
      for (std::size_t r = 0; r < model_.rows.size(); ++r) {
        const double inverse = 1.0 / s[static_cast<Eigen::Index>(r)];
        const auto& terms = model_.rows[r].terms;
        for (const auto& [k, c] : terms) {
          gradient[k] += c * inverse;
          for (const auto& [l, d] : terms) hessian(k, l) += c * d * inverse * inverse;
        }
      }
      if (!solve_newton(hessian, gradient, direction)) return false;
      const double decrement = -gradient.dot(direction);  // Newton decrement squared
      ++steps;
      if (!(decrement > 1e-10)) return true;
      const Eigen::VectorXd row_change = row_times(direction);
      double alpha = 1.0;
      bool moved = false;
      for (; alpha > 1e-12; alpha *= 0.5) {
        const double change = barrier_change(v, s, direction, row_change, alpha, t);
        if (change <= -0.25 * alpha * decrement) {
          v += alpha * direction;
          moved = true;
          break;
        }
      }
      if (!moved) return false;
    }
    return false;
  }

  /// How t phi - sum log slack changes from v to v + alpha direction (+inf outside the domain),
  /// computed from the changes themselves: at large t the values are too large to subtract.
  double barrier_change(const Eigen::VectorXd& v, const Eigen::VectorXd& s,
                        const Eigen::VectorXd& direction, const Eigen::VectorXd& row_change,
                        double alpha, double t) const {
    double log_slack = 0.0;
    for (Eigen::Index r = 0; r < s.size(); ++r) {
      const double ratio = alpha * row_change[r] / s[r];
      if (!(ratio < 1.0)) return HUGE_VAL;
      log_slack += std::log1p(-ratio);
    }
    double phi = alpha * model_.linear_cost.dot(direction);
    if constexpr (!Utility::piecewise_linear) {
      for (Eigen::Index i = 0; i < p_.jobs(); ++i) {
        const Eigen::Index first = model_.job_first[static_cast<std::size_t>(i)];
        const Eigen::Index last = model_.job_first[static_cast<std::size_t>(i) + 1];
        if (first == last) continue;
        const double gain =
            utility_change(throughput(v, first, last), alpha * throughput(direction, first, last),
                           parameters_of(p_, i));
        if (std::isnan(gain)) return HUGE_VAL;
        phi -= gain;
      }
    }
    const double change = t * phi / scale_ - log_slack;
    return std::isnan(change) ? HUGE_VAL : change;
  }

  /// f(tau + delta) - f(tau): by Simpson's rule on the marginal where delta is small beside tau
  /// (a difference of values would lose the change to rounding), else by the values.
  double utility_change(double tau, double delta, const job_parameters& job) const {
    if (delta == 0.0) return 0.0;
    if (tau > 0.0 && std::abs(delta) <= 1e-2 * tau)
      return delta / 6.0 *
             (utility_.marginal(tau, job) + 4.0 * utility_.marginal(tau + 0.5 * delta, job) +
              utility_.marginal(tau + delta, job));
    const double after = utility_.value(tau + delta, job);
    return std::isfinite(after) ? after - utility_.value(tau, job)
                                : std::numeric_limits<double>::quiet_NaN();
  }

  Eigen::VectorXd row_times(const Eigen::VectorXd& direction) const {
    Eigen::VectorXd out(static_cast<Eigen::Index>(model_.rows.size()));
    for (std::size_t r = 0; r < model_.rows.size(); ++r) {
      double sum = 0.0;
      for (const auto& [k, c] : model_.rows[r].terms) sum += c * direction[k];
      out[static_cast<Eigen::Index>(r)] = sum;
    }
    return out;
  }

  /// Every variable at a fraction of what its rows allow: u at 1/(2 (count + 1)) where count is
  /// the most terms in one of its rows, and each kink variable one unit below its bounds.
  Eigen::VectorXd starting_point() const {
    Eigen::VectorXd v = Eigen::VectorXd::Zero(model_.variables);
    std::vector<double> crowd(static_cast<std::size_t>(model_.variables), 1.0);
    for (const sparse_row& row : model_.rows)
      for (const auto& [k, c] : row.terms)
        crowd[static_cast<std::size_t>(k)] =
            std::max(crowd[static_cast<std::size_t>(k)], static_cast<double>(row.terms.size()));
    const Eigen::Index options = static_cast<Eigen::Index>(model_.option_job.size());
    for (Eigen::Index k = 0; k < options; ++k)
      v[k] = 0.5 / (crowd[static_cast<std::size_t>(k)] + 1.0);
    for (Eigen::Index k = options; k < model_.variables; ++k) v[k] = HUGE_VAL;
    for (const sparse_row& row : model_.rows) {
      // Kink rows start with the kink variable; it goes one unit below the tightest of them.
      const Eigen::Index z = row.terms.front().first;
      if (z < options) continue;
      double others = 0.0;
      for (std::size_t q = 1; q < row.terms.size(); ++q)
        others += row.terms[q].second * v[row.terms[q].first];
      v[z] = std::min(v[z], row.bound - others - 1.0);
    }
    return v;
  }

  Eigen::VectorXd slacks(const Eigen::VectorXd& v) const {
    Eigen::VectorXd s = -row_times(v);
    for (std::size_t r = 0; r < model_.rows.size(); ++r)
      s[static_cast<Eigen::Index>(r)] += model_.rows[r].bound;
    return s;
  }

  double throughput(const Eigen::VectorXd& v, Eigen::Index first, Eigen::Index last) const {
    double t = 0.0;
    for (Eigen::Index k = first; k < last; ++k)
      t += model_.option_rate[static_cast<std::size_t>(k)] * v[k];
    return t;
  }

  /// phi's gradient (and Hessian) at v, in units of F; false where they are not finite.
  bool objective_derivatives(const Eigen::VectorXd& v, Eigen::VectorXd& gradient,
                             Eigen::MatrixXd& hessian, bool with_hessian) const {
    gradient = model_.linear_cost / scale_;
    if (with_hessian) hessian = Eigen::MatrixXd::Zero(model_.variables, model_.variables);
    if constexpr (!Utility::piecewise_linear) {
      for (Eigen::Index i = 0; i < p_.jobs(); ++i) {
        const Eigen::Index first = model_.job_first[static_cast<std::size_t>(i)];
        const Eigen::Index last = model_.job_first[static_cast<std::size_t>(i) + 1];
        if (first == last) continue;
        const double t = throughput(v, first, last);
        const job_parameters job = parameters_of(p_, i);
        const double slope = utility_.marginal(t, job) / scale_;
        const double curvature = utility_.curvature(t, job) / scale_;
        if (!std::isfinite(slope) || !std::isfinite(curvature)) return false;
        for (Eigen::Index k = first; k < last; ++k) {
          const double rate = model_.option_rate[static_cast<std::size_t>(k)];
          gradient[k] -= slope * rate;
          if (!with_hessian) continue;
          for (Eigen::Index l = first; l < last; ++l)
            hessian(k, l) += curvature * rate * model_.option_rate[static_cast<std::size_t>(l)];
        }
      }
    }
    return true;
  }

  /// direction = -hessian^-1 gradient, with a growing diagonal shift where the factorisation
  /// fails (the Hessian is positive definite in exact arithmetic).
  static bool solve_newton(Eigen::MatrixXd& hessian, const Eigen::VectorXd& gradient,
                           Eigen::VectorXd& direction) {
    double shift = 0.0;
    const double diagonal = hessian.diagonal().cwiseAbs().maxCoeff();
    for (int attempt = 0; attempt < 4; ++attempt) {
      const Eigen::LLT<Eigen::MatrixXd> factor(hessian);
      if (factor.info() == Eigen::Success) {
        direction = -factor.solve(gradient);
        if (direction.allFinite()) return true;
      }
      const double next = attempt == 0 ? 1e-14 * diagonal : 1e3 * shift;
      hessian.diagonal().array() += next - shift;
      shift = next;
    }
    return false;
  }

  const dense_problem<Scalar>& p_;
  const Utility& utility_;
  const interior_point_model& model_;
  double scale_ = 1.0;  ///< F
};

/// The gap references (relative_gap.hpp) of rows [begin, end) of `p`: their sums.
template <class Scalar, class Utility>
gap_references gap_references_of_rows(const dense_problem<Scalar>& p, const Utility& utility,
                                      Eigen::Index begin, Eigen::Index end) {
  gap_references refs;
  const Eigen::Index n = p.jobs(), m = p.resources();
  for (Eigen::Index i = begin; i < end; ++i) {
    const job_parameters job = parameters_of(p, i);
    const double idle = utility.value(0.0, job);
    refs.idle += idle;
    if (std::isfinite(idle)) continue;
    double tau = 0.0;
    for (Eigen::Index j = 0; j < m; ++j) {
      const double a = static_cast<double>(p.throughput(i, j));
      if (!(a > 0.0 && p.capacity[j] > 0.0)) continue;
      const double amount = p.amount(i, j);
      const double share =
          amount > 0.0 ? std::min(1.0, p.capacity[j] / (static_cast<double>(n) * amount)) : 1.0;
      tau += share * a;
    }
    refs.elasticity += tau * utility.marginal(tau, job);
  }
  return refs;
}

/// The gap references of `p` (relative_gap.hpp), as the price solver's set-up pass computes them.
template <class Scalar, class Utility>
gap_references gap_references_of(const dense_problem<Scalar>& p, const Utility& utility) {
  return gap_references_of_rows(p, utility, 0, p.jobs());
}

/// The allocation x = sigma u with any rounding overshoot of a capacity or a job's time scaled
/// away, into `candidate` (allocation, throughput, usage, objective).
template <class Scalar, class Utility>
double export_interior_point(const dense_problem<Scalar>& p, const Utility& utility,
                             const interior_point_model& model, const Eigen::VectorXd& v,
                             solve_result& candidate) {
  const Eigen::Index n = p.jobs(), m = p.resources();
  const std::size_t options = model.option_job.size();
  std::vector<double> x(options);
  for (std::size_t k = 0; k < options; ++k)
    x[k] = std::max(0.0, model.option_scale[k] * v[static_cast<Eigen::Index>(k)]);
  Eigen::VectorXd usage = Eigen::VectorXd::Zero(m);
  for (std::size_t k = 0; k < options; ++k)
    usage[model.option_resource[k]] +=
        p.amount(model.option_job[k], model.option_resource[k]) * x[k];
  for (std::size_t k = 0; k < options; ++k) {
    const Eigen::Index j = model.option_resource[k];
    if (usage[j] > p.capacity[j]) x[k] *= p.capacity[j] / usage[j] * (1.0 - 1e-15);
  }
  candidate.allocation = {};
  candidate.throughput = Eigen::VectorXd::Zero(n);
  candidate.usage = Eigen::VectorXd::Zero(m);
  double objective = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const std::size_t first =
        static_cast<std::size_t>(model.job_first[static_cast<std::size_t>(i)]);
    const std::size_t last =
        static_cast<std::size_t>(model.job_first[static_cast<std::size_t>(i) + 1]);
    double time = 0.0;
    for (std::size_t k = first; k < last; ++k) time += x[k];
    const double shrink = time > 1.0 ? (1.0 - 1e-15) / time : 1.0;
    double tau = 0.0;
    for (std::size_t k = first; k < last; ++k) {
      const double fraction = x[k] * shrink;
      if (!(fraction > 0.0)) continue;
      const Eigen::Index j = model.option_resource[k];
      candidate.allocation.option.push_back(static_cast<std::int32_t>(j));
      candidate.allocation.fraction.push_back(fraction);
      candidate.usage[j] += p.amount(i, j) * fraction;
      tau += static_cast<double>(p.throughput(i, j)) * fraction;
    }
    candidate.allocation.job_offset.push_back(
        static_cast<std::int64_t>(candidate.allocation.option.size()));
    candidate.throughput[i] = tau;
    objective += utility.value(tau, parameters_of(p, i));
  }
  return objective;
}

/// g(prices) computed exactly: sum_j R_j p_j plus each job's best response at mu = 0.
template <class Scalar, class Utility>
double exact_dual_value(const dense_problem<Scalar>& p, const Utility& utility,
                        const Eigen::VectorXd& prices) {
  const Eigen::Index n = p.jobs(), m = p.resources();
  std::vector<unsigned char> closed(static_cast<std::size_t>(m));
  for (Eigen::Index j = 0; j < m; ++j)
    closed[static_cast<std::size_t>(j)] = p.capacity[j] > 0.0 ? 0 : 1;
  dense_view<Scalar> view;
  view.throughput = p.throughput.data();
  view.demand = p.demand.size() != 0 ? p.demand.data() : nullptr;
  view.job_demand = p.job_demand.size() != 0 ? p.job_demand.data() : nullptr;
  view.weight = p.weight.size() != 0 ? p.weight.data() : nullptr;
  view.target = p.target.size() != 0 ? p.target.data() : nullptr;
  view.closed = closed.data();
  view.n = n;
  view.m = static_cast<std::int32_t>(m);
  double value = p.capacity.dot(prices);
  for (Eigen::Index i = 0; i < n; ++i)
    value += walk_hull(view, i, prices.data(), utility, view.parameters(i), 0.0, -1).excess;
  return value;
}

/// Sets the gap of `result` from its bound and objective; true, with the status converged, when
/// it meets the options' tolerance.
inline bool measure(solve_result& result, const solver_options& options,
                    const gap_references& references) {
  result.duality_gap = result.dual_bound - result.primal_objective;
  const measured_gap gap =
      measure_gap(result.dual_bound, result.primal_objective, options.gap, references);
  result.relative_gap = gap.relative;
  result.gap_scale = gap.scale;
  result.gap_scale_name = gap.scale_name;
  result.gap_measure = gap.measure;
  const bool met = std::isfinite(result.duality_gap) && result.duality_gap >= -1e-12 * gap.scale &&
                   within_tolerance(result.duality_gap, gap, options);
  if (met) result.status = solve_status::converged;
  return met;
}

/// Runs the interior-point finish on `p` where `result` did not converge and the problem is
/// small; replaces the allocation and the bound in `result` by the finish's where they are
/// better, and sets the status to converged when the combined certificate meets the tolerance.
template <class Scalar, class Utility>
void finish_with_interior_point(const dense_problem<Scalar>& p, const Utility& utility,
                                const solver_options& options, solve_result& result) {
  if (!interior_point_may_help(result.status)) return;
  const stopwatch clock;
  interior_point_model model;
  if (!build_interior_point_model(p, utility, model)) return;
  // Each point of the path is certified exactly; far along it the centring loses digits to
  // the barrier's conditioning, so the best bound and the best allocation may come from
  // different points.
  const Eigen::Index m = p.resources();
  const gap_references references = gap_references_of(p, utility);
  const auto certify = [&](const Eigen::VectorXd& v, const Eigen::VectorXd& lambda) {
    Eigen::VectorXd prices = Eigen::VectorXd::Zero(m);
    for (Eigen::Index j = 0; j < m; ++j) {
      const Eigen::Index row = model.capacity_row[static_cast<std::size_t>(j)];
      if (row >= 0) prices[j] = std::max(0.0, lambda[row]) / p.capacity[j];
    }
    // Both certificates are exact up to rounding, so a bound below the best objective (or an
    // objective above the best bound) can only be rounding: such a point is not taken.
    const auto rounding = [](double value) { return 1e-12 * (1.0 + std::abs(value)); };
    const double dual = exact_dual_value(p, utility, prices);
    if (std::isfinite(dual) && !(dual >= result.dual_bound) &&
        !(dual < result.primal_objective - rounding(result.primal_objective))) {
      result.dual_bound = std::min(dual, result.trivial_bound);
      result.prices = prices;
      result.final_prices = prices;
    }
    solve_result candidate;
    const double objective = export_interior_point(p, utility, model, v, candidate);
    if (!std::isnan(objective) && !(objective <= result.primal_objective) &&
        !(objective > result.dual_bound + rounding(objective))) {
      result.primal_objective = objective;
      result.allocation = std::move(candidate.allocation);
      result.throughput = std::move(candidate.throughput);
      result.usage = std::move(candidate.usage);
      result.max_capacity_violation = (result.usage - p.capacity).cwiseMax(0.0).maxCoeff();
    }
    return measure(result, options, references);
  };
  interior_point_method<Scalar, Utility> method(p, utility, model);
  result.interior_point_steps = method.run(certify);
  result.timings.solve_seconds += clock.seconds();
}

}  // namespace popalloc::detail
