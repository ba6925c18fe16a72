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

/// Everything one dual evaluation needs from job i.
struct job_outcome {
  segment smooth;               ///< best response under the smoothed utility (the iterate's X)
  double excess_exact = 0.0;    ///< h_i(p) of the exact dual (no smoothing)
  double utility_exact = 0.0;   ///< f_i(tau) at the smoothed best response
  double mu = 0.0;              ///< smoothing parameter used for this job
  double hessian_weight = 0.0;  ///< d tau / d slope / (a_r - a_l)^2; 0 at a vertex or a kink
};

/// Smoothing parameter of job i for a relative smoothing level: mu_i = level * f'(0+) / max_o a_o,
/// so that smoothing changes the marginal utility by at most a fraction `level` of its size.
template <class View, class Utility>
POPALLOC_HD inline double smoothing_scale(const View& view, std::int64_t i,
                                          const Utility& utility) {
  double amax = 0.0;
  const std::int32_t count = view.option_count(i);
  for (std::int32_t o = 0; o < count; ++o) {
    const double a = view.value(i, o);
    if (a > amax) amax = a;
  }
  if (!(amax > 0.0)) return 0.0;
  const double slope = utility.marginal(0.0, view.parameters(i));
  return slope > 0.0 ? slope / amax : 0.0;
}

template <class View, class Utility>
POPALLOC_HD inline job_outcome evaluate_job(const View& view, std::int64_t i, const double* prices,
                                            const Utility& utility, double mu) {
  const job_parameters job = view.parameters(i);
  job_outcome out;
  out.mu = mu;
  out.smooth = walk_hull(view, i, prices, utility, job, mu, -1);
  if (mu > 0.0) {
    // Smoothing only moves the optimum left, so the exact walk passes the smoothed left vertex.
    out.excess_exact = walk_hull(view, i, prices, utility, job, 0.0, out.smooth.left).excess;
  } else {
    out.excess_exact = out.smooth.excess;
  }
  out.utility_exact = utility.value(out.smooth.tau, job);
  if (out.smooth.right >= 0) {
    const double curvature = utility.curvature(out.smooth.tau, job) + mu;
    const double a_left = out.smooth.left >= 0 ? view.value(i, out.smooth.left) : 0.0;
    const double da = view.value(i, out.smooth.right) - a_left;
    const double denominator = curvature * da * da;
    if (denominator > 0.0 && denominator < 1e300) out.hessian_weight = 1.0 / denominator;
  }
  return out;
}

}  // namespace popalloc::detail
