// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A job's best response under quadratic regularisation of its allocation.
///
/// maximise f(a.x) - k.x - (kappa/2) |x|^2 over x >= 0, sum x <= 1 (k_o: option costs). The
/// regulariser makes the maximiser unique and Lipschitz in the prices, so the smoothed dual is
/// C^{1,1}: jobs that are indifferent between options (ties, which is where linear programs put
/// their optima) split their time continuously instead of jumping, and the allocation at the
/// smoothed optimum meets every capacity. For a fixed slope nu the maximiser is the projection of
/// (nu a - k)/kappa onto the capped simplex; when the unsaturated answer overshoots T the slope
/// nu in [0, w] that lands exactly on t = T is found by a safeguarded Newton iteration on the
/// piecewise-linear, nondecreasing map nu -> t(nu) (piecewise-linear utilities: slope w up to a
/// saturation throughput T, flat beyond); for strictly concave utilities the slope solves
/// nu = f'(t(nu)) (smooth_regularized_response).
#pragma once

#include <cmath>
#include <cstdint>

#include "popalloc/config.hpp"
#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::detail {

/// x_o = max(0, (nu a_o - k_o) / kappa - lambda). `saturated`: t = T holds with slope nu < w.
struct regularized_state {
  double nu = 0.0;
  double lambda = 0.0;  ///< > 0 when the job's time constraint sum x <= 1 binds
  bool saturated = false;
};

/// One job's options as seen by the regularised response: `value(o)`, `cost(o)`, `count()`.
template <class View>
struct job_options {
  const View& view;
  std::int64_t i;
  const double* prices;
  POPALLOC_HD std::int32_t count() const { return view.option_count(i); }
  POPALLOC_HD double value(std::int32_t o) const { return view.value(i, o); }
  POPALLOC_HD double cost(std::int32_t o) const { return view.cost(i, o, prices); }
};

/// The same job copied into registers/stack (small option counts): every scan of the iterative
/// projection then reads local memory instead of the problem arrays.
struct local_options {
  static constexpr std::int32_t capacity = 16;
  double a[capacity];
  double k[capacity];
  std::int32_t n = 0;
  POPALLOC_HD std::int32_t count() const { return n; }
  POPALLOC_HD double value(std::int32_t o) const { return a[o]; }
  POPALLOC_HD double cost(std::int32_t o) const { return k[o]; }
};

template <class Job>
POPALLOC_HD inline double regularized_fraction(const Job& job, std::int32_t o, double kappa,
                                               const regularized_state& s) {
  const double y = (s.nu * job.value(o) - job.cost(o)) * (1.0 / kappa) - s.lambda;
  return y > 0.0 ? y : 0.0;
}

template <class View>
POPALLOC_HD inline double regularized_fraction(const View& view, std::int64_t i, std::int32_t o,
                                               const double* prices, double kappa,
                                               const regularized_state& s) {
  return regularized_fraction(job_options<View>{view, i, prices}, o, kappa, s);
}

/// Sums over the active options for a given slope nu (lambda chosen by Michelot's algorithm).
struct projection_sums {
  double lambda = 0.0;
  double tau = 0.0;     ///< sum a_o x_o
  double count = 0.0;   ///< |S|
  double sum_a = 0.0;   ///< sum over S of a_o
  double sum_a2 = 0.0;  ///< sum over S of a_o^2
};

template <class Job>
POPALLOC_HD inline projection_sums project_capped(const Job& job, double kappa, double nu) {
  const double inv_kappa = 1.0 / kappa;
  const std::int32_t count = job.count();
  projection_sums out;
  double positive_sum = 0.0, positive_count = 0.0;
  for (std::int32_t o = 0; o < count; ++o) {
    const double y = (nu * job.value(o) - job.cost(o)) * inv_kappa;
    if (y > 0.0) {
      positive_sum += y;
      positive_count += 1.0;
    }
  }
  double lambda = 0.0;
  if (positive_sum > 1.0) {
    // Michelot: lambda decreases monotonically to the projection's threshold in <= m rounds.
    lambda = (positive_sum - 1.0) / positive_count;
    for (std::int32_t round = 0; round <= count; ++round) {
      double sum = 0.0, active = 0.0;
      for (std::int32_t o = 0; o < count; ++o) {
        const double y = (nu * job.value(o) - job.cost(o)) * inv_kappa;
        if (y > lambda) {
          sum += y;
          active += 1.0;
        }
      }
      const double next = (sum - 1.0) / active;
      if (!(next > lambda)) break;
      lambda = next;
    }
  }
  out.lambda = lambda;
  for (std::int32_t o = 0; o < count; ++o) {
    const double a = job.value(o);
    const double x = (nu * a - job.cost(o)) * inv_kappa - lambda;
    if (x > 0.0) {
      out.tau += a * x;
      out.count += 1.0;
      out.sum_a += a;
      out.sum_a2 += a * a;
    }
  }
  return out;
}

/// The same projection for a job held in local memory: y is computed once and Michelot's rounds
/// scan the local copy.
POPALLOC_HD inline projection_sums project_capped(const local_options& job, double kappa,
                                                  double nu) {
  const double inv_kappa = 1.0 / kappa;
  double y[local_options::capacity];
  double positive_sum = 0.0, positive_count = 0.0;
  double first = -HUGE_VAL, second = 0.0;  // largest y, and the larger of 0 and the runner-up
  std::int32_t best = -1;
  for (std::int32_t o = 0; o < job.n; ++o) {
    y[o] = (nu * job.a[o] - job.k[o]) * inv_kappa;
    if (y[o] > 0.0) {
      positive_sum += y[o];
      positive_count += 1.0;
    }
    if (y[o] > first) {
      if (first > second) second = first;
      first = y[o];
      best = o;
    } else if (y[o] > second) {
      second = y[o];
    }
  }
  projection_sums out;
  if (best >= 0 && first - second >= 1.0) {
    // One option beats all others by a full unit: the whole time goes there (the common case
    // once the smoothing is small), no threshold search needed.
    const double a = job.a[best];
    out.lambda = first - 1.0;
    out.tau = a;
    out.count = 1.0;
    out.sum_a = a;
    out.sum_a2 = a * a;
    return out;
  }
  double lambda = 0.0;
  if (positive_sum > 1.0) {
    lambda = (positive_sum - 1.0) / positive_count;
    for (std::int32_t round = 0; round <= job.n; ++round) {
      double sum = 0.0, active = 0.0;
      for (std::int32_t o = 0; o < job.n; ++o) {
        if (y[o] > lambda) {
          sum += y[o];
          active += 1.0;
        }
      }
      const double next = (sum - 1.0) / active;
      if (!(next > lambda)) break;
      lambda = next;
    }
  }
  out.lambda = lambda;
  for (std::int32_t o = 0; o < job.n; ++o) {
    const double x = y[o] - lambda;
    if (x > 0.0) {
      const double a = job.a[o];
      out.tau += a * x;
      out.count += 1.0;
      out.sum_a += a;
      out.sum_a2 += a * a;
    }
  }
  return out;
}

/// d t / d nu on the current piece: (sum_S a^2 - [capped] (sum_S a)^2 / |S|) / kappa.
POPALLOC_HD inline double tau_slope(const projection_sums& p, double kappa) {
  double s = p.sum_a2;
  if (p.lambda > 0.0 && p.count > 0.0) s -= p.sum_a * p.sum_a / p.count;
  return s / kappa;
}

/// Solves the regularised best response for slope w and saturation throughput `saturation`.
template <class Job>
POPALLOC_HD inline regularized_state regularized_response(const Job& job, double kappa, double w,
                                                          double saturation,
                                                          double nu_guess = 0.0) {
  regularized_state s;
  s.nu = w;
  projection_sums p = project_capped(job, kappa, w);
  s.lambda = p.lambda;
  if (!(p.tau > saturation)) return s;
  // Overshoot: find nu in [0, w) with t(nu) = T. t(0) = 0 <= T since costs are >= 0.
  s.saturated = true;
  double lo = 0.0, hi = w;
  // The slope this job saturated at last time is usually within one piece of the new root.
  double nu = (nu_guess > 0.0 && nu_guess < w) ? nu_guess : w * saturation / p.tau;
  for (int iteration = 0; iteration < 100; ++iteration) {
    p = project_capped(job, kappa, nu);
    const double gap = p.tau - saturation;
    // t(nu) is piecewise linear, so Newton lands on the root once it is on the right piece. t is
    // a difference of terms of size nu * dt/dnu (x = y - lambda cancels digits when kappa is
    // small): below that rounding level no step can improve it.
    const double tolerance = 1e-13 * saturation + 1e-14 * nu * tau_slope(p, kappa);
    if (!(gap > tolerance || gap < -tolerance) || hi - lo <= 1e-15 * w) break;
    if (gap < 0.0) {
      lo = nu;
    } else {
      hi = nu;
    }
    const double slope = tau_slope(p, kappa);
    double next = slope > 0.0 ? nu - gap / slope : 0.5 * (lo + hi);
    if (!(next > lo && next < hi)) next = 0.5 * (lo + hi);
    if (next == nu) break;
    nu = next;
  }
  s.nu = nu;
  s.lambda = p.lambda;
  return s;
}

/// Regularised best response for a strictly concave utility: the slope nu of the linearised
/// problem must equal f'(t(nu)). phi(nu) = nu - f'(t(nu)) is increasing (t is nondecreasing and
/// f' decreasing), so a Newton iteration safeguarded by a bracket finds its root; `nu_guess` is
/// usually the previous evaluation's slope, which makes one or two steps enough.
template <class Job, class Utility>
POPALLOC_HD inline regularized_state smooth_regularized_response(const Job& job, double kappa,
                                                                 const Utility& utility,
                                                                 const job_parameters& params,
                                                                 double nu_guess) {
  regularized_state s;
  double lo = 0.0, hi = HUGE_VAL;
  double nu = nu_guess > 0.0 ? nu_guess : 1.0;
  projection_sums p;
  for (int iteration = 0; iteration < 200; ++iteration) {
    p = project_capped(job, kappa, nu);
    const double phi = nu - utility.marginal(p.tau, params);
    // t carries rounding of about 1e-14 nu dt/dnu (x = y - lambda cancels digits when kappa is
    // small); accept a residual of that size, but only once t itself is resolved to 1e-6
    // (near t = 0 the curvature of log-like utilities would excuse any residual).
    const double t_rounding = 1e-14 * nu * tau_slope(p, kappa);
    double tolerance = 1e-11 * nu;
    if (t_rounding <= 1e-6 * p.tau) {
      const double rounding = utility.curvature(p.tau, params) * t_rounding;
      if (rounding > tolerance && rounding < HUGE_VAL) tolerance = rounding;
    }
    if (!(phi > tolerance || phi < -tolerance)) break;
    if (phi < 0.0) {
      lo = nu;
    } else {
      hi = nu;
    }
    // phi'(nu) = 1 + (-f''(t)) dt/dnu
    const double derivative = 1.0 + utility.curvature(p.tau, params) * tau_slope(p, kappa);
    double next = (p.tau > 0.0 && derivative > 0.0 && derivative < HUGE_VAL)
                      ? nu - phi / derivative
                      : (phi < 0.0 ? 16.0 * nu : 0.0625 * nu);
    if (!(next > lo && next < hi)) next = hi < HUGE_VAL ? 0.5 * (lo + hi) : 16.0 * nu;
    if (next == nu || (hi < HUGE_VAL && hi - lo <= 1e-14 * hi)) break;
    nu = next;
  }
  s.nu = nu;
  s.lambda = p.lambda;
  return s;
}

}  // namespace popalloc::detail
