// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A job's best response to prices: a walk along the lower convex hull of its options.
///
/// Job i's options are points (a_o, c_o) with value rate a_o and cost c_o = (consumption of o) . p,
/// plus the slack point (0, 0). The cheapest way to reach throughput tau is the lower convex
/// envelope of these points, so the best response lies on one hull segment and uses at most two
/// options. The walk builds the hull lazily from the slack point by gift wrapping (no sort, no
/// memory) and stops at the first segment whose maximiser is not its right end: the objective
/// f(tau) - mu tau^2 / 2 - cost(tau) is concave along the hull, so that segment holds the optimum.
/// Cost O(m * vertices walked); 1 to 3 vertices are walked in practice.
#pragma once

#include <cmath>
#include <cstdint>

#include "popalloc/config.hpp"
#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::detail {

/// Time fraction `theta` on option `right`, 1 - theta on `left` (-1 = slack, i.e. idle).
struct segment {
  std::int32_t left = -1;
  std::int32_t right = -1;
  double theta = 0.0;
  double tau = 0.0;     ///< throughput
  double excess = 0.0;  ///< f(tau) - mu tau^2/2 - cost: the job's term of the dual function
};

/// Walks the lower hull of job i from vertex `start` (-1: slack) under utility
/// f(tau) - mu tau^2 / 2. `start` must be a hull vertex the walk would pass.
template <class View, class Utility>
POPALLOC_HD inline segment walk_hull(const View& view, std::int64_t i, const double* prices,
                                     const Utility& utility, const job_parameters& job, double mu,
                                     std::int32_t start) {
  std::int32_t v = start;
  double av = 0.0, cv = 0.0;
  if (v >= 0) {
    av = view.value(i, v);
    cv = view.cost(i, v, prices);
  }
  const std::int32_t count = view.option_count(i);
  for (;;) {
    std::int32_t next = -1;
    double next_a = 0.0, next_da = 0.0, next_dc = 0.0;
    for (std::int32_t o = 0; o < count; ++o) {
      const double a = view.value(i, o);
      if (!(a > av)) continue;
      const double da = a - av;
      const double dc = view.cost(i, o, prices) - cv;
      // Smallest slope dc/da first; on equal slopes the farther point (collinear hull points
      // are skipped, so a job never splits its time over three options).
      bool better = next < 0;
      if (!better) {
        const double lhs = dc * next_da, rhs = next_dc * da;
        better = lhs < rhs || (lhs == rhs && a > next_a);
      }
      if (better) {
        next = o;
        next_a = a;
        next_da = da;
        next_dc = dc;
      }
    }
    segment out;
    out.left = v;
    if (next < 0) {  // rightmost hull vertex
      out.tau = av;
      out.excess = utility.value(av, job) - 0.5 * mu * av * av - cv;
      return out;
    }
    const double slope = next_dc / next_da;
    const double tau = utility.maximize(slope, mu, av, next_a, job);
    if (tau < next_a) {
      out.tau = tau;
      out.excess = utility.value(tau, job) - 0.5 * mu * tau * tau - cv - slope * (tau - av);
      if (tau > av) {
        out.right = next;
        out.theta = (tau - av) / next_da;
      }
      return out;
    }
    v = next;
    av = next_a;
    cv = view.cost(i, v, prices);
  }
}

/// Regularisation scale of a job whose fastest option has throughput `amax` = max_o a_o:
/// kappa_i = level * f'(t_s) * amax / s, where s in (0, 1] is the share of its time the job can
/// expect (`share`; 1: all of it) and t_s = s amax (f'(0+) where it is finite). At level 1 the
/// regulariser's slope at x = s, kappa_i s, equals the utility's f'(t_s) amax, so `level` is the
/// relative size of the smoothing at the job's own scale. A job that can expect a billionth of
/// its time (capacities of 1e-9) is smoothed at the scale of its fractions: at s = 1 its kappa
/// would be a billionth of the prices' scale, and its response (nu a - price) / kappa would lose
/// every digit to cancellation.
template <class Utility>
POPALLOC_HD inline double regularization_scale(double amax, const job_parameters& job,
                                               const Utility& utility, double share) {
  double slope = utility.marginal(0.0, job);
  if (!(slope < HUGE_VAL)) slope = utility.marginal(amax * share, job);  // log: f'(0) infinite
  const double scale = slope * amax / share;
  return amax > 0.0 && slope > 0.0 && scale < HUGE_VAL ? scale : 0.0;
}

}  // namespace popalloc::detail
