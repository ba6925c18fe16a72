// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Small dense box-constrained convex QP: the trust-region step in price space.
#pragma once

#include <algorithm>
#include <cmath>

#include <Eigen/Cholesky>
#include <Eigen/Core>

namespace popalloc::detail {

/// Approximately solves A x = b for symmetric positive definite A by conjugate gradients with a
/// Jacobi (diagonal) preconditioner, to a relative residual of 1e-10 or 200 iterations: O(k^2)
/// per iteration instead of the O(k^3) of a factorisation, which dominates the whole solve once
/// there are thousands of resources. The diagonal of the price-space Hessian spans orders of
/// magnitude (a resource's curvature grows with the squared demands of the jobs on it): on the
/// load-balancing LP (653 prices) the preconditioner cut the iterations per solve from 198 to 62
/// on average.
inline Eigen::VectorXd conjugate_gradient(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const Eigen::VectorXd inverse_diagonal =
      a.diagonal().unaryExpr([](double d) { return d > 0.0 && d < HUGE_VAL ? 1.0 / d : 1.0; });
  Eigen::VectorXd x = Eigen::VectorXd::Zero(b.size());
  Eigen::VectorXd r = b;
  Eigen::VectorXd z = inverse_diagonal.cwiseProduct(r);
  Eigen::VectorXd p = z;
  double rz = r.dot(z);
  const double stop = 1e-20 * b.squaredNorm();
  for (int iteration = 0; iteration < 200 && r.squaredNorm() > stop; ++iteration) {
    const Eigen::VectorXd ap = a * p;
    const double pap = p.dot(ap);
    if (!(pap > 0.0)) break;
    const double alpha = rz / pap;
    x += alpha * p;
    r -= alpha * ap;
    z = inverse_diagonal.cwiseProduct(r);
    const double next = r.dot(z);
    p = z + (next / rz) * p;
    rz = next;
  }
  return x;
}

/// Free variables above which the Newton refinement uses conjugate gradients.
constexpr Eigen::Index box_qp_direct_limit = 512;

/// q(d) = g.d + d.H d / 2 for symmetric positive semidefinite H.
inline double quadratic_model(const Eigen::VectorXd& g, const Eigen::MatrixXd& h,
                              const Eigen::VectorXd& d) {
  return g.dot(d) + 0.5 * d.dot(h * d);
}

/// Approximately minimises q(d) over lo <= d <= hi (lo <= 0 <= hi): coordinate descent, then
/// Newton steps on the free variables with a projected backtracking search. Never returns a
/// point with q(d) > 0. Cost O(m^2) per sweep; m is the number of resources.
inline Eigen::VectorXd solve_box_qp(const Eigen::VectorXd& g, const Eigen::MatrixXd& h,
                                    const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) {
  const Eigen::Index m = g.size();
  Eigen::VectorXd d = Eigen::VectorXd::Zero(m);
  Eigen::VectorXd grad = g;  // gradient of q at d
  const int sweeps = m <= 64 ? 100 : 20;
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    double largest = 0.0;
    for (Eigen::Index j = 0; j < m; ++j) {
      const double hjj = h(j, j);
      double next;
      if (hjj > 0.0) {
        next = std::clamp(d[j] - grad[j] / hjj, lo[j], hi[j]);
      } else {
        next = grad[j] > 0.0 ? lo[j] : (grad[j] < 0.0 ? hi[j] : d[j]);
      }
      const double delta = next - d[j];
      if (delta != 0.0) {
        grad += delta * h.col(j);
        d[j] = next;
        largest = std::max(largest, std::abs(delta) / (hi[j] - lo[j] + 1e-300));
      }
    }
    if (largest < 1e-12) break;
  }
  // Newton refinement on the variables strictly inside their bounds.
  for (int round = 0; round < 5; ++round) {
    Eigen::Array<bool, Eigen::Dynamic, 1> free(m);
    Eigen::Index n_free = 0;
    for (Eigen::Index j = 0; j < m; ++j) {
      free[j] = !((d[j] <= lo[j] && grad[j] > 0.0) || (d[j] >= hi[j] && grad[j] < 0.0));
      n_free += free[j] ? 1 : 0;
    }
    if (n_free == 0) break;
    Eigen::MatrixXd hf(n_free, n_free);
    Eigen::VectorXd gf(n_free);
    Eigen::VectorXi index(n_free);
    for (Eigen::Index a = 0, j = 0; j < m; ++j)
      if (free[j]) index[a++] = static_cast<int>(j);
    double diagonal = 0.0;
    for (Eigen::Index a = 0; a < n_free; ++a) {
      gf[a] = grad[index[a]];
      for (Eigen::Index b = 0; b < n_free; ++b) hf(a, b) = h(index[a], index[b]);
      diagonal = std::max(diagonal, hf(a, a));
    }
    if (!(diagonal > 0.0)) break;
    hf.diagonal().array() += 1e-12 * diagonal;
    const Eigen::VectorXd step = n_free <= box_qp_direct_limit
                                     ? Eigen::VectorXd(hf.ldlt().solve(-gf))
                                     : conjugate_gradient(hf, -gf);
    if (!step.allFinite()) break;
    const double q0 = quadratic_model(g, h, d);
    bool improved = false;
    for (double t = 1.0; t > 1e-3; t *= 0.5) {
      Eigen::VectorXd trial = d;
      for (Eigen::Index a = 0; a < n_free; ++a) {
        const Eigen::Index j = index[a];
        trial[j] = std::clamp(d[j] + t * step[a], lo[j], hi[j]);
      }
      if (quadratic_model(g, h, trial) < q0 - 1e-15 * std::abs(q0)) {
        d = trial;
        improved = true;
        break;
      }
    }
    if (!improved) break;
    grad = g + h * d;
  }
  if (quadratic_model(g, h, d) > 0.0) d.setZero();
  return d;
}

}  // namespace popalloc::detail
