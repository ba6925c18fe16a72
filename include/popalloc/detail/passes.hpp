// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The per-job work of each pass over the jobs, written once for every backend.
///
/// Each pass is a functor called as `pass(i)` (independent per job) or `pass(i, partial)`, where
/// `partial` is a chunk's accumulator of `width()` doubles. Backends run the functors over all
/// jobs and add up the chunk accumulators in a fixed order, so results do not depend on the
/// number of threads. Members are raw pointers valid in the backend's memory space.
#pragma once

#include <cstdint>

#include "popalloc/config.hpp"
#include "popalloc/detail/best_response.hpp"

namespace popalloc::detail {

POPALLOC_HD inline bool is_finite(double x) { return x - x == 0.0; }

/// Smallest capacity scale factor over the resources option o consumes (1 for the slack).
template <class View>
POPALLOC_HD inline double option_factor(const View& view, std::int64_t i, std::int32_t o,
                                        const double* factors) {
  if (o < 0) return 1.0;
  double f = 1.0;
  const std::int32_t count = view.consumption_count(i, o);
  for (std::int32_t k = 0; k < count; ++k) {
    if (view.consumption_amount(i, o, k) > 0.0) {
      const double g = factors[view.consumption_resource(i, o, k)];
      if (g < f) f = g;
    }
  }
  return f;
}

template <class View>
POPALLOC_HD inline void add_usage(const View& view, std::int64_t i, std::int32_t o, double x,
                                  double* usage) {
  if (o < 0 || x == 0.0) return;
  const std::int32_t count = view.consumption_count(i, o);
  for (std::int32_t k = 0; k < count; ++k)
    usage[view.consumption_resource(i, o, k)] += x * view.consumption_amount(i, o, k);
}

/// Evaluates the smoothed and exact dual terms, resource usage and the generalized Hessian.
/// Layout of `partial`: usage[m], hessian[m*m] (if requested), then the scalars below.
template <class View, class Utility>
struct evaluate_pass {
  enum scalar : std::int32_t {
    excess_smooth = 0,
    excess_exact = 1,
    utility_exact = 2,
    utility_smooth = 3,
    non_finite = 4,
    scalar_count = 5
  };

  View view;
  Utility utility;
  const double* prices = nullptr;
  const double* mu_scale = nullptr;  ///< per job, null when not smoothing
  double level = 0.0;
  std::int32_t m = 0;
  bool hessian = true;
  std::int32_t* left = nullptr;
  std::int32_t* right = nullptr;
  double* theta = nullptr;

  POPALLOC_HD std::int32_t scalar_offset() const { return m + (hessian ? m * m : 0); }
  POPALLOC_HD std::int32_t width() const { return scalar_offset() + scalar_count; }

  POPALLOC_HD void operator()(std::int64_t i, double* partial) const {
    const double mu = mu_scale != nullptr ? level * mu_scale[i] : 0.0;
    const job_outcome r = evaluate_job(view, i, prices, utility, mu);
    const segment& s = r.smooth;
    left[i] = s.left;
    right[i] = s.right;
    theta[i] = s.theta;
    add_usage(view, i, s.left, 1.0 - s.theta, partial);
    add_usage(view, i, s.right, s.theta, partial);
    if (hessian && r.hessian_weight > 0.0) {
      // Hessian of g += w v v^T with v = consumption(right) - consumption(left).
      double* h = partial + m;
      const std::int32_t options[2] = {s.right, s.left};
      const double signs[2] = {1.0, -1.0};
      for (int a = 0; a < 2; ++a) {
        if (options[a] < 0) continue;
        const std::int32_t ca = view.consumption_count(i, options[a]);
        for (std::int32_t ka = 0; ka < ca; ++ka) {
          const std::int32_t ra = view.consumption_resource(i, options[a], ka);
          const double va = signs[a] * view.consumption_amount(i, options[a], ka);
          for (int b = 0; b < 2; ++b) {
            if (options[b] < 0) continue;
            const std::int32_t cb = view.consumption_count(i, options[b]);
            for (std::int32_t kb = 0; kb < cb; ++kb) {
              const std::int32_t rb = view.consumption_resource(i, options[b], kb);
              const double vb = signs[b] * view.consumption_amount(i, options[b], kb);
              h[ra * m + rb] += r.hessian_weight * va * vb;
            }
          }
        }
      }
    }
    double* sc = partial + scalar_offset();
    const double smooth_utility = r.utility_exact - 0.5 * mu * s.tau * s.tau;
    sc[excess_smooth] += s.excess;
    sc[excess_exact] += r.excess_exact;
    sc[utility_exact] += r.utility_exact;
    sc[utility_smooth] += smooth_utility;
    if (!is_finite(s.excess) || !is_finite(r.excess_exact) || !is_finite(r.utility_exact))
      sc[non_finite] += 1.0;
  }
};

/// Utility and usage of the stored allocation after scaling each resource by `factors`
/// (a job on an over-used resource gives up the same fraction of its time there).
/// Layout: usage[m], utility, smoothed utility, non_finite.
template <class View, class Utility>
struct repair_pass {
  View view;
  Utility utility;
  const double* factors = nullptr;
  const std::int32_t* left = nullptr;
  const std::int32_t* right = nullptr;
  const double* theta = nullptr;
  const double* mu_scale = nullptr;  ///< per job, null when not smoothing
  double level = 0.0;
  std::int32_t m = 0;

  POPALLOC_HD std::int32_t width() const { return m + 3; }

  POPALLOC_HD void operator()(std::int64_t i, double* partial) const {
    const std::int32_t l = left[i], r = right[i];
    const double xl = (1.0 - theta[i]) * option_factor(view, i, l, factors);
    const double xr = theta[i] * option_factor(view, i, r, factors);
    double tau = 0.0;
    if (l >= 0) tau += xl * view.value(i, l);
    if (r >= 0) tau += xr * view.value(i, r);
    add_usage(view, i, l, xl, partial);
    add_usage(view, i, r, xr, partial);
    const double u = utility.value(tau, view.parameters(i));
    const double mu = mu_scale != nullptr ? level * mu_scale[i] : 0.0;
    partial[m] += u;
    partial[m + 1] += u - 0.5 * mu * tau * tau;
    if (!is_finite(u)) partial[m + 2] += 1.0;
  }
};

/// Writes the scaled allocation of every job: two (option, fraction) pairs and its throughput.
template <class View>
struct export_pass {
  View view;
  const double* factors = nullptr;
  const std::int32_t* left = nullptr;
  const std::int32_t* right = nullptr;
  const double* theta = nullptr;
  std::int32_t* option_out = nullptr;  ///< 2 per job
  double* fraction_out = nullptr;      ///< 2 per job
  double* throughput_out = nullptr;    ///< 1 per job

  POPALLOC_HD void operator()(std::int64_t i) const {
    const std::int32_t o[2] = {left[i], right[i]};
    const double x[2] = {(1.0 - theta[i]) * option_factor(view, i, o[0], factors),
                         theta[i] * option_factor(view, i, o[1], factors)};
    double tau = 0.0;
    for (int k = 0; k < 2; ++k) {
      const bool used = o[k] >= 0 && x[k] > 0.0;
      option_out[2 * i + k] = used ? view.option_id(i, o[k]) : -1;
      fraction_out[2 * i + k] = used ? x[k] : 0.0;
      if (used) tau += x[k] * view.value(i, o[k]);
    }
    throughput_out[i] = tau;
  }
};

/// Per-job smoothing scale f'(0+) / max_o a_o (see smoothing_scale).
template <class View, class Utility>
struct smoothing_scale_pass {
  View view;
  Utility utility;
  double* out = nullptr;
  POPALLOC_HD void operator()(std::int64_t i) const { out[i] = smoothing_scale(view, i, utility); }
};

/// Marginal value of each resource at an equal-share allocation (resalloc's initial prices,
/// generalised to bundles: an option's marginal value is split over the units it consumes).
/// Layout: value[m]; the caller divides by n.
template <class View, class Utility>
struct initial_price_pass {
  View view;
  Utility utility;
  const double* capacity = nullptr;
  std::int32_t m = 0;
  bool at_zero = false;  ///< marginal values at zero throughput instead of the equal share

  POPALLOC_HD std::int32_t width() const { return m; }

  POPALLOC_HD void operator()(std::int64_t i, double* partial) const {
    const std::int32_t count = view.option_count(i);
    const double n = static_cast<double>(view.n);
    double share_sum = 0.0, tau = 0.0;
    for (std::int32_t o = 0; o < count; ++o) {
      const double a = view.value(i, o);
      if (!(a > 0.0)) continue;
      double share = 1.0;  // each job gets 1/n of its option's bottleneck resource
      const std::int32_t c = view.consumption_count(i, o);
      for (std::int32_t k = 0; k < c; ++k) {
        const double amount = view.consumption_amount(i, o, k);
        if (amount > 0.0) {
          const double s = capacity[view.consumption_resource(i, o, k)] / (n * amount);
          if (s < share) share = s;
        }
      }
      share_sum += share;
      tau += share * a;
    }
    if (share_sum > 1.0) tau /= share_sum;
    if (at_zero) tau = 0.0;
    const double marginal = utility.marginal(tau, view.parameters(i));
    if (!is_finite(marginal)) return;
    for (std::int32_t o = 0; o < count; ++o) {
      const double a = view.value(i, o);
      if (!(a > 0.0)) continue;
      const std::int32_t c = view.consumption_count(i, o);
      double total = 0.0;
      for (std::int32_t k = 0; k < c; ++k) total += view.consumption_amount(i, o, k);
      if (!(total > 0.0)) continue;
      for (std::int32_t k = 0; k < c; ++k)
        if (view.consumption_amount(i, o, k) > 0.0)
          partial[view.consumption_resource(i, o, k)] += marginal * a / total;
    }
  }
};

}  // namespace popalloc::detail
