// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The class-level LP of a packed (space-sharing) policy, its exact solution and its
/// certified bound.
///
/// Variables y_cw: total time (summed over the class's jobs) that combination c (a class alone,
/// or a class pair) runs on GPU type w. Rows: GPUs sum_c s_c y_cw <= n_w; each class's time
/// sum_{c owns a} mult_ca y_cw <= n_a (mult 2 for a pair inside one class); for max-min also the
/// level rows L c_a n_a - sum_c T^a_cw y_cw <= 0 with c_a = w_a P_a / s_a, and for
/// max-throughput with SLO floors the same rows with c_a = the class's floor f_a and L <= 1
/// (L = 1: every floor met). Averaging any
/// optimum of the per-job LP over the permutations of each class's jobs keeps it feasible and
/// optimal, and its class totals satisfy these rows, so this LP has the per-job LP's optimum.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "popalloc/cluster/combinations.hpp"
#include "popalloc/cluster/dense_simplex.hpp"
#include "popalloc/cluster/instance.hpp"

namespace popalloc::cluster {

/// \brief A packed LP over classes; column j is a single (pair = -1), a pair or the level.
struct packed_lp {
  Eigen::MatrixXd a;
  Eigen::VectorXd b, upper, objective;
  /// The second objective, with the level held: max-min's total normalised throughput, the
  /// total throughput with SLO floors.
  Eigen::VectorXd fill;
  struct column {
    int cls = -1, pair = -1, gpu = -1;  ///< single: cls, gpu; pair: index into model.pairs
  };
  std::vector<column> columns;
  Eigen::Index level = -1;  ///< the level column (max-min, SLO floors), -1 for max-throughput
  bool slo_floors = false;  ///< max-throughput with floors: the fill is the objective
};

/// \brief The class LP's solution.
struct packed_lp_solution {
  Eigen::VectorXd y;                                        ///< per column
  double value = std::numeric_limits<double>::quiet_NaN();  ///< the first objective's optimum
  double bound = std::numeric_limits<double>::quiet_NaN();  ///< certified upper bound on it
  /// The level the first run reached (max-min's optimum; with SLO floors, 1 when every floor
  /// can be met); NaN without a level column or when that run failed.
  double level = std::numeric_limits<double>::quiet_NaN();
  bool optimal = false;
  int runs = 0;  ///< simplex runs (max-min: the level, then the fill)
};

namespace detail {

/// c_a = w_a P_a / s_a: normalised throughput L needs ET >= L c_a.
inline double level_coefficient(const instance& in, Eigen::Index row) {
  return in.weight[row] * in.proportional[row] / in.scale[row];
}

inline void add_packed_column(packed_lp& lp, std::vector<Eigen::VectorXd>& cols,
                              Eigen::VectorXd col, double upper, double objective, double fill,
                              packed_lp::column c) {
  cols.push_back(std::move(col));
  lp.columns.push_back(c);
  lp.upper.conservativeResize(lp.upper.size() + 1);
  lp.upper[lp.upper.size() - 1] = upper;
  lp.objective.conservativeResize(lp.objective.size() + 1);
  lp.objective[lp.objective.size() - 1] = objective;
  lp.fill.conservativeResize(lp.fill.size() + 1);
  lp.fill[lp.fill.size() - 1] = fill;
}

/// Largest total time of class pair q on its GPU type: a job's time (each pair inside one
/// class uses two of its jobs), and the GPUs of the type at scale s.
inline double pair_upper(const class_pair& q, double count_first, double count_second, double gpus,
                         double s) {
  return std::min({q.first == q.second ? count_first / 2.0 : count_first, count_second, gpus / s});
}

}  // namespace detail

/// \brief The class LP of max-min fairness (`max_min` true: maximise the level L) or of
/// max-throughput (maximise the total throughput sum_i ET_i) on the model throughputs; with
/// `slo_floors` (max-throughput only; classes split by floor) every job of class a must also
/// reach its floor in.slo_floor (finite, >= 0): the level column then scales the floors, up to 1.
inline packed_lp build_packed_lp(const instance& in, const combination_model& model, bool max_min,
                                 bool slo_floors = false) {
  const Eigen::Index m = in.types();
  const auto k = static_cast<Eigen::Index>(model.classes.size());
  const bool level_rows = max_min || slo_floors;
  const Eigen::Index rows = m + k + (level_rows ? k : 0);
  packed_lp lp;
  lp.b = Eigen::VectorXd::Zero(rows);
  lp.b.head(m) = in.capacity;
  std::vector<double> count(static_cast<std::size_t>(k)), coef(static_cast<std::size_t>(k));
  std::vector<double> best(static_cast<std::size_t>(k), 0.0);  // best per-unit-time throughput
  for (Eigen::Index a = 0; a < k; ++a) {
    const auto& members = model.classes[static_cast<std::size_t>(a)];
    count[static_cast<std::size_t>(a)] = static_cast<double>(members.size());
    coef[static_cast<std::size_t>(a)] =
        slo_floors ? in.slo_floor[members.front()] : detail::level_coefficient(in, members.front());
    lp.b[m + a] = count[static_cast<std::size_t>(a)];
  }
  std::vector<Eigen::VectorXd> cols;
  for (Eigen::Index a = 0; a < k; ++a) {
    const Eigen::Index r = model.classes[static_cast<std::size_t>(a)].front();
    const auto ua = static_cast<std::size_t>(a);
    for (Eigen::Index w = 0; w < m; ++w) {
      const double t = in.model_throughput(r, w);
      if (!(t > 0.0)) continue;
      Eigen::VectorXd col = Eigen::VectorXd::Zero(rows);
      col[w] = in.scale[r];
      col[m + a] = 1.0;
      if (level_rows) col[m + k + a] = -t;
      best[ua] = std::max(best[ua], t);
      detail::add_packed_column(
          lp, cols, std::move(col), std::min(count[ua], in.capacity[w] / in.scale[r]), t,
          slo_floors ? t : t / coef[ua], {static_cast<int>(a), -1, static_cast<int>(w)});
    }
  }
  for (std::size_t p = 0; p < model.pairs.size(); ++p) {
    const class_pair& q = model.pairs[p];
    const auto fa = static_cast<std::size_t>(q.first), fb = static_cast<std::size_t>(q.second);
    const double s = in.scale[model.classes[fa].front()];
    Eigen::VectorXd col = Eigen::VectorXd::Zero(rows);
    col[q.gpu] = s;
    col[m + q.first] += 1.0;
    col[m + q.second] += 1.0;
    if (level_rows) {
      col[m + k + q.first] -= q.first_throughput;
      col[m + k + q.second] -= q.second_throughput;
    }
    best[fa] = std::max(best[fa], q.first_throughput);
    best[fb] = std::max(best[fb], q.second_throughput);
    const double upper = detail::pair_upper(q, count[fa], count[fb], in.capacity[q.gpu], s);
    const double total = q.first_throughput + q.second_throughput;
    detail::add_packed_column(
        lp, cols, std::move(col), upper, total,
        slo_floors ? total : q.first_throughput / coef[fa] + q.second_throughput / coef[fb],
        {-1, static_cast<int>(p), q.gpu});
  }
  if (level_rows) {
    // No job's level exceeds its best throughput per unit of its time over c_a; the floors'
    // scale stops at 1.
    double level_upper = slo_floors ? 1.0 : std::numeric_limits<double>::infinity();
    Eigen::VectorXd col = Eigen::VectorXd::Zero(rows);
    for (Eigen::Index a = 0; a < k; ++a) {
      const auto ua = static_cast<std::size_t>(a);
      col[m + k + a] = coef[ua] * count[ua];
      if (!slo_floors) level_upper = std::min(level_upper, best[ua] / coef[ua]);
    }
    lp.level = static_cast<Eigen::Index>(cols.size());
    detail::add_packed_column(lp, cols, std::move(col), level_upper, 1.0, 0.0, {});
    lp.objective.head(lp.level).setZero();
    lp.slo_floors = slo_floors;
  }
  lp.a.resize(rows, static_cast<Eigen::Index>(cols.size()));
  for (std::size_t j = 0; j < cols.size(); ++j) lp.a.col(static_cast<Eigen::Index>(j)) = cols[j];
  return lp;
}

/// \brief Weak duality for max c.x, A x <= b, 0 <= x <= u: for any y >= 0 the optimum is at
/// most y.b + sum_j max(0, c_j - y.A_j) u_j. Exact at an optimal y; never below the optimum
/// for any y (rounding in y only loosens it).
/// With the level column held at `level_lower` or above, its negative reduced cost counts at
/// that bound (max c_j x_j over [l_j, u_j] is c_j l_j for c_j < 0).
inline double packed_dual_bound(const packed_lp& lp, const Eigen::VectorXd& c, Eigen::VectorXd y,
                                double level_lower = 0.0) {
  y = y.cwiseMax(0.0);
  double bound = y.dot(lp.b);
  const Eigen::VectorXd reduced = c - lp.a.transpose() * y;
  for (Eigen::Index j = 0; j < reduced.size(); ++j) {
    if (reduced[j] > 0.0)
      bound += reduced[j] * lp.upper[j];
    else if (j == lp.level)
      bound += reduced[j] * level_lower;
  }
  return bound;
}

/// \brief Solves the LP exactly (simplex). Max-min: maximises L, then, with L held at its
/// optimum to 1e-11, the total normalised throughput (so capacity the minimum does not need is
/// not left idle). SLO floors: the same two runs, the second's total throughput being the
/// objective, certified by the second run's duals with the level held.
inline packed_lp_solution solve_packed_lp(const packed_lp& lp) {
  packed_lp_solution out;
  dense_simplex simplex(lp.a, lp.b, lp.upper);
  const simplex_status first = simplex.maximize(lp.objective);
  out.runs = 1;
  out.optimal = first == simplex_status::optimal;
  out.bound = packed_dual_bound(lp, lp.objective, simplex.duals());
  out.y = simplex.solution();
  out.value = lp.objective.dot(out.y);
  if (lp.level < 0 || !out.optimal) return out;
  out.level = out.y[lp.level];
  if (!(out.level > 0.0)) return out;
  const double held = out.level * (1.0 - 1e-11);
  simplex.set_lower(lp.level, held);
  ++out.runs;
  const bool filled = simplex.maximize(lp.fill) == simplex_status::optimal;
  if (filled) out.y = simplex.solution();
  if (lp.slo_floors) {
    out.optimal = filled;
    out.value = lp.fill.dot(out.y);
    out.bound = packed_dual_bound(lp, lp.fill, simplex.duals(), held);
  }
  return out;
}

}  // namespace popalloc::cluster
