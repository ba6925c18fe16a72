// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Certified upper ends of a level search from one probe's prices, at any level.
///
/// A probe at level L' solves the target-priority problem with every job's deficit weighted
/// by w_i = 1 / tau_i(L'). For fixed prices p and those fixed weights, the Lagrangian dual of
/// the weighted-deficit problem at another level L,
///     D(L) = sum_w p_w n_w + sum_i max_{x_i} [ w_i min(A_i x_i - tau_i(L), 0) - p s_i x_i ],
/// bounds its optimum from above, and that optimum is 0 exactly when L is feasible. So D(L) < 0
/// proves L infeasible, for any p >= 0 and any positive weights. D is nonincreasing in L (the
/// requirements tau_i are), so the smallest level it proves infeasible is found by bisection,
/// each step one pass over the jobs. Prices that are optimal for the probe's level stay
/// optimal for the nearby levels (in the deficit form the level only moves the right-hand
/// side), so the prices of probes close to the optimum prove levels close to it, also where
/// those probes themselves stalled before proving or reaching their own level.
///
/// Each job's inner maximum is a linear program over {x >= 0, sum_w x_w <= 1,
/// sum_w (A_w / tau) x_w <= 1} (beyond the target the deficit term is flat and the prices only
/// cost), so it is attained at a vertex: nothing, one type up to the target or full time, or
/// two types mixed to meet the target exactly at full time.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "popalloc/cluster/level_problem.hpp"

namespace popalloc::cluster {

namespace detail {

/// An upper bound on max over the job's vertices of  W min(a.x - 1, 0) - c.x  (a = A / tau,
/// W = w tau), with the types `open` leaves out: each vertex's value plus a bound on its
/// rounding (and on that of a), so that a negative dual stays a proof.
inline double job_dual_term(const double* a, const double* c, const char* open, Eigen::Index m,
                            double big_w) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  double best = -big_w;  // x = 0
  for (Eigen::Index j = 0; j < m; ++j) {
    if (!open[j] || !(a[j] > 0.0)) continue;
    // One type, up to the target or at full time: (W a_j - c_j) x_j - W, every part at most
    // W + c_j x_j in size.
    const double xj = std::min(1.0, 1.0 / a[j]);
    const double single = (big_w * a[j] - c[j]) * xj - big_w;
    best = std::max(best, single + 8.0 * eps * (2.0 * big_w + c[j] * xj));
    if (!(a[j] > 1.0)) continue;
    for (Eigen::Index k = 0; k < m; ++k) {
      if (!open[k] || !(a[k] < 1.0)) continue;
      // Two types meeting the target at full time: -(c_j x_j + c_k x_k) with x_j + x_k = 1;
      // an error d in x_j moves it by |c_j - c_k| d.
      const double span = a[j] - a[k];
      const double xj_mix = (1.0 - a[k]) / span;
      const double mix = -(c[j] * xj_mix + c[k] * (1.0 - xj_mix));
      const double xj_error = 8.0 * eps * (1.0 + a[j] + a[k]) / span;
      best = std::max(best, mix + std::abs(c[j] - c[k]) * xj_error + 8.0 * eps * (c[j] + c[k]));
    }
  }
  return best;
}

}  // namespace detail

/// \brief D(level) above (each job's term rounded up, the sum compensated), with the sum of
/// its terms' magnitudes: the scale of the sum's remaining rounding.
struct level_dual {
  double value = 0.0;
  double magnitude = 0.0;
  /// value < 0 beyond the rounding of the sum: the level is infeasible.
  bool proves_infeasible() const {
    return value < -4.0 * std::numeric_limits<double>::epsilon() * magnitude;
  }
};

/// \brief D(level) above for fixed `prices` (one per type, >= 0) and weights
/// 1 / tau_i(weight_level), evaluated at any level: what does not depend on the level (the
/// weights, the open types, the capacity terms) is computed once. Jobs that need nothing at
/// `weight_level` are left out, which only relaxes the problem.
class fixed_price_dual {
 public:
  fixed_price_dual(const level_problem& p, const Eigen::VectorXd& prices, double weight_level)
      : p_(p),
        prices_(prices),
        open_(static_cast<std::size_t>(p.throughput.cols())),
        all_open_(open_.size(), 1),
        tau_weight_(static_cast<std::size_t>(p.throughput.rows())) {
    for (Eigen::Index j = 0; j < p.throughput.cols(); ++j) {
      open_[static_cast<std::size_t>(j)] = p.capacity[j] > 0.0;
      // Rounded up, as every term is, so that the sum stays an upper bound.
      if (p.capacity[j] > 0.0) {
        const double cost = prices[j] * p.capacity[j];
        capacity_terms_.push_back(cost + std::numeric_limits<double>::epsilon() * cost);
      }
    }
    for (Eigen::Index i = 0; i < p.throughput.rows(); ++i)
      tau_weight_[static_cast<std::size_t>(i)] = p.target(i, std::min(weight_level, cap(i)));
  }

  /// D(level); -inf when some job cannot reach `level` at all.
  level_dual at(double level) const {
    const Eigen::Index m = p_.throughput.cols();
    level_dual out;
    double sum = 0.0, compensation = 0.0;  // Neumaier's summation
    const auto add = [&](double term) {
      const double t = sum + term;
      compensation += std::abs(sum) >= std::abs(term) ? (sum - t) + term : (term - t) + sum;
      sum = t;
      out.magnitude += std::abs(term);
    };
    for (const double term : capacity_terms_) add(term);
    std::vector<double> a(static_cast<std::size_t>(m)), c(static_cast<std::size_t>(m));
    for (Eigen::Index i = 0; i < p_.throughput.rows(); ++i) {
      const double tau_weight = tau_weight_[static_cast<std::size_t>(i)];
      if (!(tau_weight > 0.0) || !std::isfinite(tau_weight)) continue;
      const double tau = p_.target(i, std::min(level, cap(i)));
      if (!(tau > 0.0)) continue;
      if (!std::isfinite(tau)) {
        out.value = -std::numeric_limits<double>::infinity();
        return out;
      }
      for (Eigen::Index j = 0; j < m; ++j) {
        a[static_cast<std::size_t>(j)] = p_.throughput(i, j) / tau;
        c[static_cast<std::size_t>(j)] = prices_[j] * p_.scale[i];
      }
      // A closed type is out of reach only for a job that holds GPUs.
      const char* usable = p_.scale[i] > 0.0 ? open_.data() : all_open_.data();
      add(detail::job_dual_term(a.data(), c.data(), usable, m, tau / tau_weight));
    }
    out.value = sum + compensation;
    return out;
  }

 private:
  double cap(Eigen::Index i) const {
    return p_.cap.empty() ? std::numeric_limits<double>::infinity()
                          : p_.cap[static_cast<std::size_t>(i)];
  }

  const level_problem& p_;
  const Eigen::VectorXd& prices_;
  std::vector<char> open_, all_open_;
  std::vector<double> capacity_terms_;
  std::vector<double> tau_weight_;
};

/// \brief D(level) of fixed_price_dual, once.
inline level_dual level_dual_value(const level_problem& p, const Eigen::VectorXd& prices,
                                   double weight_level, double level) {
  return fixed_price_dual(p, prices, weight_level).at(level);
}

/// \brief For a linear level problem (tau_i(L) = k_i L, p.linear_coefficient), the level that
/// `prices` bound directly: a feasible L pays at least s_i k_i L min_w p_w / A_iw for job i
/// (open types only), and the GPUs are worth p.n, so
///     L <= p.n / sum_i s_i k_i min_w (p_w / A_iw).
/// Exact at the optimal prices when no job's time binds. Rounded up; +inf when it proves
/// nothing (no linear coefficients, or prices that no job pays).
inline double linear_level_bound(const level_problem& p, const Eigen::VectorXd& prices) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  const Eigen::Index n = p.throughput.rows(), m = p.throughput.cols();
  if (p.linear_coefficient.size() != n || prices.size() != m || !prices.allFinite() ||
      (prices.array() < 0.0).any())
    return inf;
  double paid = 0.0;
  for (Eigen::Index i = 0; i < n; ++i) {
    const double need = p.scale[i] * p.linear_coefficient[i];
    if (!(need > 0.0)) continue;
    double cheapest = inf;
    for (Eigen::Index w = 0; w < m; ++w)
      if (p.throughput(i, w) > 0.0 && p.capacity[w] > 0.0)
        cheapest = std::min(cheapest, prices[w] / p.throughput(i, w));
    if (!std::isfinite(cheapest)) return 0.0;  // holds GPUs but has no open type: level 0
    paid += need * cheapest;
  }
  if (!(paid > 0.0)) return inf;
  // Every term and the sums carry a relative rounding of at most (n + m + 4) eps.
  const double rounding =
      4.0 * static_cast<double>(n + m + 4) * std::numeric_limits<double>::epsilon();
  return prices.dot(p.capacity) / paid * (1.0 + rounding);
}

/// \brief `prices` scaled so that at `level` every job's marginal cost, p_w s_i tau_i / A_iw on
/// any type it can use, is at most half a unit of relative deficit: with weights from a level
/// at or below `level` (each at least 1 there), D(level) then counts every job as meeting its
/// requirement wherever it can, at its cheapest (time included), and D < 0 says exactly that the
/// requirements cost more than the GPUs are worth at these prices.
inline Eigen::VectorXd below_deficit_weights(const level_problem& p, const Eigen::VectorXd& prices,
                                             double level) {
  double dearest = 0.0;
  for (Eigen::Index i = 0; i < p.throughput.rows(); ++i) {
    const double cap = p.cap.empty() ? std::numeric_limits<double>::infinity()
                                     : p.cap[static_cast<std::size_t>(i)];
    const double tau = p.target(i, std::min(level, cap));
    if (!(tau > 0.0) || !std::isfinite(tau)) continue;
    for (Eigen::Index w = 0; w < p.throughput.cols(); ++w)
      if (p.throughput(i, w) > 0.0)
        dearest = std::max(dearest, prices[w] * p.scale[i] * tau / p.throughput(i, w));
  }
  return dearest > 0.0 && std::isfinite(dearest) ? Eigen::VectorXd(prices * (0.5 / dearest))
                                                 : prices;
}

/// \brief The smallest level in [lower, upper] that `prices` (from a probe at `weight_level`)
/// prove infeasible, to a relative width `tolerance`; `upper` itself when they prove nothing
/// below it (or are not a price vector of p).
inline double price_level_bound(const level_problem& p, const Eigen::VectorXd& prices,
                                double weight_level, double lower, double upper, double tolerance) {
  if (prices.size() != p.throughput.cols() || !prices.allFinite() || (prices.array() < 0.0).any())
    return upper;
  const fixed_price_dual dual(p, prices, weight_level);
  const auto infeasible = [&](double level) { return dual.at(level).proves_infeasible(); };
  double hi = upper, lo = std::max(lower, 0.0);
  if (!(hi > lo) || !std::isfinite(hi) || !infeasible(hi)) return upper;
  for (int step = 0; step < 200 && hi - lo > tolerance * hi; ++step) {
    const double mid = 0.5 * (lo + hi);
    (infeasible(mid) ? hi : lo) = mid;
  }
  return hi;
}

}  // namespace popalloc::cluster
