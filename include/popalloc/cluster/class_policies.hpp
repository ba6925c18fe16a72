// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Exact policies over classes of identical jobs: max-min fairness (plain and water
/// filling) and min makespan as one small LP over classes solved by dense_simplex, proportional
/// fairness as one core solve over classes.
///
/// Jobs i and j are identical for a policy when they have the same model throughput row, scale
/// factor and level coefficient (max-min: w P / s; makespan: remaining steps), or for
/// proportional fairness the same rescaled row T / P, scale factor and weight. Permuting
/// identical jobs maps feasible allocations to feasible allocations with the same objective, and
/// the objectives are concave, so averaging an optimum over those permutations gives an optimum in
/// which every job of a class has the same row. Hence the LP over class totals y_aw (class a's
/// summed time on type w),
///
///     sum_a s_a y_aw <= n_w,   sum_w y_aw <= n_a,   sum_w T_aw y_aw >= n_a c_a L,
///
/// has the per-job optimum, and x_iw = y_aw / n_a for every job i of class a attains it. Water
/// filling: the leximin-optimal vector of levels over a convex symmetric set is unique, hence
/// invariant under the same permutations, so every job of a class ends at the same level and
/// progressive filling can freeze whole classes. A class is a bottleneck at level L when it
/// cannot rise by the threshold while every other free class keeps L and every frozen class its
/// level; a positive dual of its link row (below) proves this, otherwise one LP decides it.
/// Space sharing adds pair columns (level_pair) to the same LP: a pair's throughputs depend
/// only on the two jobs' classes, so the argument carries over (packed_policies.hpp).
///
/// The LP (rows: GPU types, class times, class levels, links; b >= 0 so the slack basis is
/// feasible):
///
///     columns y_aw (usable pairs), l_a (class level), z_a (link slack, upper 0 while free), t
///     s_a y_aw in GPU row w;  y_aw in time row a;  l_a c_a n_a - sum_w T_aw y_aw <= 0;
///     t - l_a - z_a <= 0;  maximise t.
///
/// Freezing class a sets l_a's lower bound to its level and lifts z_a's upper bound, so t no
/// longer binds it. The certified bound is weak duality at the first stage's duals, with finite
/// column bounds (l_a at most the level of a job of class a alone on its best type at full time,
/// t at most the largest of these).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <unordered_map>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/cluster/dense_simplex.hpp"
#include "popalloc/cluster/instance.hpp"
#include "popalloc/cluster/policy.hpp"

namespace popalloc::cluster::detail {

/// \brief Groups positions 0..n-1 whose rows of `t` and entries of `key1`, `key2` are equal
/// (exact comparison of the values; a hash of their bits finds candidates in O(1)). Returns the
/// classes in order of their first member, members ascending; empty when there are more than
/// `limit` classes.
inline std::vector<std::vector<Eigen::Index>> identical_row_classes(const Eigen::MatrixXd& t,
                                                                    const Eigen::VectorXd& key1,
                                                                    const Eigen::VectorXd& key2,
                                                                    std::size_t limit) {
  const Eigen::Index n = t.rows(), m = t.cols();
  auto bits = [](double v) {
    if (v == 0.0) v = 0.0;  // -0 == +0
    std::uint64_t u = 0;
    std::memcpy(&u, &v, sizeof u);
    return u;
  };
  auto mix = [](std::uint64_t h, std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h;
  };
  auto same = [&](Eigen::Index a, Eigen::Index b) {
    if (!(key1[a] == key1[b] && key2[a] == key2[b])) return false;
    for (Eigen::Index w = 0; w < m; ++w)
      if (!(t(a, w) == t(b, w))) return false;
    return true;
  };
  std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_hash;
  std::vector<std::vector<Eigen::Index>> out;
  for (Eigen::Index i = 0; i < n; ++i) {
    std::uint64_t h = mix(bits(key1[i]), bits(key2[i]));
    for (Eigen::Index w = 0; w < m; ++w) h = mix(h, bits(t(i, w)));
    auto& candidates = by_hash[h];
    std::size_t c = 0;
    for (; c < candidates.size(); ++c)
      if (same(out[candidates[c]].front(), i)) break;
    if (c == candidates.size()) {
      if (out.size() == limit) return {};
      candidates.push_back(out.size());
      out.emplace_back();
      out.back().push_back(i);
    } else {
      out[candidates[c]].push_back(i);
    }
  }
  return out;
}

/// \brief Per-job allocation from per-job class rows: x_i = xc_a for every member i of class a,
/// then rounding is scaled out (rows <= 1, sum_i s_i x_iw <= n_w, x >= 0).
inline Eigen::MatrixXd spread_class_rows(const Eigen::MatrixXd& xc,
                                         const std::vector<std::vector<Eigen::Index>>& classes,
                                         const Eigen::VectorXd& scale,
                                         const Eigen::VectorXd& capacity, Eigen::Index n) {
  const Eigen::Index m = xc.cols();
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(n, m);
  Eigen::MatrixXd per = xc.cwiseMax(0.0);
  for (Eigen::Index a = 0; a < per.rows(); ++a) {
    const double sum = per.row(a).sum();
    if (sum > 1.0) per.row(a) /= sum;
  }
  Eigen::VectorXd used = Eigen::VectorXd::Zero(m);
  for (std::size_t a = 0; a < classes.size(); ++a)
    used += static_cast<double>(classes[a].size()) * scale[classes[a].front()] *
            per.row(static_cast<Eigen::Index>(a)).transpose();
  for (Eigen::Index w = 0; w < m; ++w)
    if (used[w] > capacity[w]) per.col(w) *= capacity[w] / used[w];
  for (std::size_t a = 0; a < classes.size(); ++a)
    for (const Eigen::Index i : classes[a]) x.row(i) = per.row(static_cast<Eigen::Index>(a));
  return x;
}

/// \brief A pair column of the class LP (space sharing): total time y that a job of class
/// `first` and one of class `second` share `scale` GPUs of type `gpu`, each at its co-located
/// throughput. It uses the time of both jobs (2 y of one class's time when first == second).
struct level_pair {
  Eigen::Index first = 0, second = 0, gpu = 0;
  double scale = 1.0, first_throughput = 0.0, second_throughput = 0.0;
  double upper = 0.0;  ///< largest y (class sizes, GPUs of the type)
};

/// \brief The class LP of a level policy (max-min, makespan) and its progressive filling.
class class_level_lp {
 public:
  /// `throughput` (k x m, per job of the class, 0 where unusable), `scale` s_a, `count` n_a,
  /// `coef` c_a > 0 (a job of class a at level L needs throughput L c_a), `capacity` n_w;
  /// `pairs`: shared-GPU columns (space sharing), none for the unpacked policies.
  class_level_lp(const Eigen::MatrixXd& throughput, const Eigen::VectorXd& scale,
                 const Eigen::VectorXd& count, const Eigen::VectorXd& coef,
                 const Eigen::VectorXd& capacity, std::vector<level_pair> pairs = {})
      : k_(throughput.rows()),
        m_(throughput.cols()),
        t_(throughput),
        count_(count),
        coef_(coef),
        pairs_(std::move(pairs)) {
    const Eigen::Index rows = m_ + 3 * k_;
    std::vector<Eigen::Index> col_class, col_gpu;
    for (Eigen::Index a = 0; a < k_; ++a)
      for (Eigen::Index w = 0; w < m_; ++w)
        if (t_(a, w) > 0.0) {
          col_class.push_back(a);
          col_gpu.push_back(w);
        }
    const auto singles = static_cast<Eigen::Index>(col_class.size());
    const Eigen::Index ny = singles + static_cast<Eigen::Index>(pairs_.size());
    pair0_ = singles;
    ell0_ = ny;
    z0_ = ny + k_;
    tcol_ = ny + 2 * k_;
    const Eigen::Index cols = tcol_ + 1;
    a_ = Eigen::MatrixXd::Zero(rows, cols);
    b_ = Eigen::VectorXd::Zero(rows);
    up_ = Eigen::VectorXd::Zero(cols);
    b_.head(m_) = capacity;
    b_.segment(m_, k_) = count_;
    y_class_ = col_class;
    y_gpu_ = col_gpu;
    Eigen::VectorXd best = Eigen::VectorXd::Zero(k_);
    for (Eigen::Index j = 0; j < singles; ++j) {
      const Eigen::Index a = col_class[static_cast<std::size_t>(j)];
      const Eigen::Index w = col_gpu[static_cast<std::size_t>(j)];
      a_(w, j) = scale[a];
      a_(m_ + a, j) = 1.0;
      a_(m_ + k_ + a, j) = -t_(a, w);
      up_[j] = std::min(count_[a], capacity[w] / scale[a]);
      best[a] = std::max(best[a], t_(a, w));
    }
    for (std::size_t p = 0; p < pairs_.size(); ++p) {
      const level_pair& q = pairs_[p];
      const Eigen::Index j = pair0_ + static_cast<Eigen::Index>(p);
      a_(q.gpu, j) = q.scale;
      a_(m_ + q.first, j) += 1.0;
      a_(m_ + q.second, j) += 1.0;
      a_(m_ + k_ + q.first, j) -= q.first_throughput;
      a_(m_ + k_ + q.second, j) -= q.second_throughput;
      up_[j] = q.upper;
      best[q.first] = std::max(best[q.first], q.first_throughput);
      best[q.second] = std::max(best[q.second], q.second_throughput);
    }
    // t <= l_a binds only free classes, so t's own bound is the largest alone level (frozen
    // classes must not cap it); finite, for the weak-duality bound.
    double t_up = 0.0;
    for (Eigen::Index a = 0; a < k_; ++a) {
      a_(m_ + k_ + a, ell0_ + a) = coef_[a] * count_[a];
      a_(m_ + 2 * k_ + a, ell0_ + a) = -1.0;
      a_(m_ + 2 * k_ + a, z0_ + a) = -1.0;
      a_(m_ + 2 * k_ + a, tcol_) = 1.0;
      up_[ell0_ + a] = best[a] / coef_[a];
      t_up = std::max(t_up, up_[ell0_ + a]);
    }
    up_[tcol_] = t_up;
    simplex_ = std::make_unique<dense_simplex>(a_, b_, up_);
  }

  Eigen::Index classes() const { return k_; }
  int simplex_runs() const { return runs_; }

  /// Level of every class in the current point: sum_w T_aw y_aw / (c_a n_a).
  Eigen::VectorXd class_levels() const {
    Eigen::VectorXd et = Eigen::VectorXd::Zero(k_);
    for (std::size_t j = 0; j < y_class_.size(); ++j)
      et[y_class_[j]] += t_(y_class_[j], y_gpu_[j]) * simplex_->value(static_cast<Eigen::Index>(j));
    const Eigen::VectorXd shared = pair_totals();
    for (std::size_t p = 0; p < pairs_.size(); ++p) {
      const double y = shared[static_cast<Eigen::Index>(p)];
      et[pairs_[p].first] += pairs_[p].first_throughput * y;
      et[pairs_[p].second] += pairs_[p].second_throughput * y;
    }
    return et.cwiseQuotient(coef_.cwiseProduct(count_));
  }

  /// Total shared time y of every pair column in the current point.
  Eigen::VectorXd pair_totals() const {
    Eigen::VectorXd y(static_cast<Eigen::Index>(pairs_.size()));
    for (Eigen::Index p = 0; p < y.size(); ++p) y[p] = std::max(simplex_->value(pair0_ + p), 0.0);
    return y;
  }

  /// Per-job rows x_aw = y_aw / n_a of the current point (k x m).
  Eigen::MatrixXd per_job_rows() const {
    Eigen::MatrixXd x = Eigen::MatrixXd::Zero(k_, m_);
    for (std::size_t j = 0; j < y_class_.size(); ++j)
      x(y_class_[j], y_gpu_[j]) =
          simplex_->value(static_cast<Eigen::Index>(j)) / count_[y_class_[j]];
    return x;
  }

  /// Maximises the common level t of the free classes; returns false unless optimal.
  /// `bound` gets the weak-duality bound on that maximum at the duals found.
  bool maximize_level(double& level, double& bound, Eigen::VectorXd& duals) {
    Eigen::VectorXd c = Eigen::VectorXd::Zero(a_.cols());
    c[tcol_] = 1.0;
    ++runs_;
    if (simplex_->maximize(c) != simplex_status::optimal) return false;
    level = simplex_->value(tcol_);
    duals = simplex_->duals().cwiseMax(0.0);
    bound = duals.dot(b_);
    const Eigen::VectorXd reduced = c - a_.transpose() * duals;
    for (Eigen::Index j = 0; j < reduced.size(); ++j)
      if (reduced[j] > 0.0) bound += reduced[j] * up_[j];
    return true;
  }

  /// Holds the common level at >= `level` (within rounding) from now on.
  void hold_level(double level) { simplex_->set_lower(tcol_, level); }

  /// The largest level class a reaches while the others keep their requirements (t held).
  double max_class_level(Eigen::Index a) {
    Eigen::VectorXd c = Eigen::VectorXd::Zero(a_.cols());
    c[ell0_ + a] = 1.0;
    ++runs_;
    if (simplex_->maximize(c) != simplex_status::optimal) return -1.0;  // undecided: freeze
    return simplex_->value(ell0_ + a);
  }

  /// Maximises the sum of the levels of `candidates`, each capped at `cap` (or its own bound,
  /// if lower) for this run only: lifts as many of them as the LP can to the cap at once. The
  /// caps never cut off the current point, so every point the run reaches is feasible.
  void lift_together(const std::vector<Eigen::Index>& candidates, double cap) {
    Eigen::VectorXd c = Eigen::VectorXd::Zero(a_.cols());
    for (const Eigen::Index a : candidates) {
      const Eigen::Index j = ell0_ + a;
      c[j] = 1.0;
      simplex_->set_upper(j, std::max(std::min(cap, up_[j]), simplex_->value(j)));
    }
    ++runs_;
    simplex_->maximize(c);
    for (const Eigen::Index a : candidates) {
      const Eigen::Index j = ell0_ + a;
      simplex_->set_upper(j, std::max(up_[j], simplex_->value(j)));  // rounding may pass up_
    }
  }

  /// Freezes class a at `level`: its level may not fall below it, and t no longer binds it.
  void freeze(Eigen::Index a, double level) {
    simplex_->set_lower(ell0_ + a, std::min(level, simplex_->value(ell0_ + a)));
    simplex_->set_upper(z0_ + a, std::numeric_limits<double>::infinity());
  }

  /// Row index of class a's link row (its dual certifies a bottleneck).
  Eigen::Index link_row(Eigen::Index a) const { return m_ + 2 * k_ + a; }

 private:
  Eigen::Index k_, m_;
  Eigen::MatrixXd t_;
  Eigen::VectorXd count_, coef_;
  Eigen::MatrixXd a_;
  Eigen::VectorXd b_, up_;
  std::vector<level_pair> pairs_;
  std::vector<Eigen::Index> y_class_, y_gpu_;
  Eigen::Index pair0_ = 0, ell0_ = 0, z0_ = 0, tcol_ = 0;
  std::unique_ptr<dense_simplex> simplex_;
  int runs_ = 0;
};

/// \brief What a class solve produced (per job of the class, k x m), or nothing (ok = false:
/// use the core path).
struct class_solve {
  bool ok = false;
  Eigen::MatrixXd rows;         ///< per-job allocation of each class
  Eigen::VectorXd pair_totals;  ///< shared time of each level_pair column (space sharing)
  double bound = std::numeric_limits<double>::quiet_NaN();  ///< certified, on the level scale
  int levels = 0;
  int runs = 0;
  double level = 0.0;         ///< the first stage's optimal level
  Eigen::VectorXd gpu_duals;  ///< the first stage's GPU-row duals (level per GPU)
};

/// \brief Level policy over classes: maximise the minimum level, then (water_filling) freeze
/// the bottleneck classes (threshold `threshold`) and raise the others, at most `max_levels`
/// levels.
inline class_solve solve_level_classes(const Eigen::MatrixXd& throughput,
                                       const Eigen::VectorXd& scale, const Eigen::VectorXd& count,
                                       const Eigen::VectorXd& coef, const Eigen::VectorXd& capacity,
                                       bool water_filling, double threshold, int max_levels,
                                       std::vector<level_pair> pairs = {}) {
  class_solve out;
  class_level_lp lp(throughput, scale, count, coef, capacity, std::move(pairs));
  const Eigen::Index k = lp.classes();
  double level = 0.0, bound = 0.0;
  Eigen::VectorXd duals;
  if (!lp.maximize_level(level, bound, duals)) return out;
  out.bound = bound;
  out.level = level;
  out.gpu_duals = duals.head(capacity.size());
  out.levels = 1;
  lp.hold_level(level);
  // Plain max-min stops at the optimal vertex (only the minimum is determined, as in Gavel's
  // max_min_fairness); water filling distributes what the minimum does not need.
  if (water_filling) {
    std::vector<char> frozen(static_cast<std::size_t>(k), 0);
    for (;;) {
      // Bottlenecks at `level`: a positive link dual proves it; a class above the threshold in
      // any point the LP visits at this level (held: t >= level, frozen classes at theirs) is
      // free; otherwise one LP decides, and its optimum may show other classes free too.
      const double rise = level * (1.0 + threshold);
      std::vector<char> can_rise(static_cast<std::size_t>(k), 0);
      auto note_point = [&] {
        const Eigen::VectorXd levels = lp.class_levels();
        for (Eigen::Index a = 0; a < k; ++a)
          if (levels[a] > rise) can_rise[static_cast<std::size_t>(a)] = 1;
      };
      note_point();
      std::vector<Eigen::Index> undecided;
      for (Eigen::Index a = 0; a < k; ++a)
        if (!frozen[static_cast<std::size_t>(a)] && !can_rise[static_cast<std::size_t>(a)] &&
            !(duals[lp.link_row(a)] > 1e-9))
          undecided.push_back(a);
      if (undecided.size() > 1) {
        lp.lift_together(undecided, level * (1.0 + 2.0 * threshold));
        note_point();
      }
      std::vector<Eigen::Index> freeze_now;
      std::size_t free_left = 0;
      for (Eigen::Index a = 0; a < k; ++a) {
        if (frozen[static_cast<std::size_t>(a)]) continue;
        bool bottleneck;
        if (can_rise[static_cast<std::size_t>(a)]) {
          bottleneck = false;
        } else if (duals[lp.link_row(a)] > 1e-9) {
          bottleneck = true;
        } else {
          bottleneck = !(lp.max_class_level(a) >= rise);
          note_point();
        }
        if (bottleneck)
          freeze_now.push_back(a);
        else
          ++free_left;
      }
      for (const Eigen::Index a : freeze_now) {
        lp.freeze(a, level);
        frozen[static_cast<std::size_t>(a)] = 1;
      }
      if (free_left == 0 || out.levels >= max_levels) break;
      double next = 0.0, unused = 0.0;
      if (!lp.maximize_level(next, unused, duals) || !(next > level)) break;
      level = next;
      lp.hold_level(level);
      ++out.levels;
    }
  }
  out.rows = lp.per_job_rows();
  out.pair_totals = lp.pair_totals();
  out.runs = lp.simplex_runs();
  out.ok = true;
  return out;
}

}  // namespace popalloc::cluster::detail
