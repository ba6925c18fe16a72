// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A crossover for linear level problems: from near-optimal prices, the optimum of the
/// level problem restricted to the splits those prices make plausible, by a small dense LP.
///
/// When every requirement is linear in the level, tau_i(L) = k_i L (max-min fairness, minimum
/// makespan), the level's dual is a price per GPU type, and at the optimal prices a job runs
/// only on the types where a unit of level costs it least, p_w / A_iw. Most jobs have one such
/// type by a clear margin; the jobs near a tie between two types decide how the GPUs are split.
/// The restriction: a job with a clear cheapest type stays on it (its GPU use k_i s_i L / A_iw
/// is linear in L, so the fixed jobs of a type add up to one column); jobs near a tie between
/// the same two types, at about the same margin, split their level between those two types in
/// one common proportion (one class per pair and margin band); a job whose cheapest type cannot
/// carry the level within its time keeps every type (a class of its own). The restricted LP has
/// at most n / 8 classes (32 to 160) whatever the number of jobs, so it costs less than a
/// probe, and its optimum is a feasible allocation of the whole problem: a certified lower end.
/// Its GPU duals are better prices than the ones it started from, so the step repeats with
/// narrower bands around the new ties.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Core>

#include "popalloc/cluster/class_policies.hpp"
#include "popalloc/cluster/level_problem.hpp"

namespace popalloc::cluster {

/// \brief A feasible allocation of a linear level problem and the prices of its restricted LP.
struct level_crossover {
  bool ok = false;         ///< false: not a linear problem, too many free jobs, or no LP optimum
  Eigen::MatrixXd x;       ///< feasible for the base constraints (n x m)
  Eigen::VectorXd prices;  ///< GPU duals, in the units of the probes' prices
  double level = 0.0;      ///< the restricted LP's optimum (x reaches it up to rounding)
};

namespace detail {

/// Per job: the two open types where a unit of level costs least (-1: none), and how much more
/// the second costs than the first, relative (+inf: no second type).
struct cheapest_types {
  Eigen::Index first = -1, second = -1;
  double margin = std::numeric_limits<double>::infinity();
};

inline cheapest_types cheapest_of(const level_problem& p, const Eigen::VectorXd& prices,
                                  Eigen::Index i) {
  double first = std::numeric_limits<double>::infinity(), second = first;
  cheapest_types out;
  for (Eigen::Index w = 0; w < p.throughput.cols(); ++w) {
    if (!(p.throughput(i, w) > 0.0) || !(p.capacity[w] > 0.0)) continue;
    const double cost = prices[w] / p.throughput(i, w);
    if (cost < first) {
      second = first;
      out.second = out.first;
      first = cost;
      out.first = w;
    } else if (cost < second) {
      second = cost;
      out.second = w;
    }
  }
  if (out.second >= 0) out.margin = second > first ? (second - first) / second : 0.0;
  return out;
}

/// The restriction's classes: which class each job joins, and each class's LP row.
struct crossover_classes {
  std::vector<Eigen::Index> class_of;  ///< per job; -1: needs nothing or holds no GPU
  std::vector<Eigen::Index> single;    ///< per class: the job it holds alone, or -1 (a group)
  Eigen::MatrixXd usage;               ///< groups: GPUs per unit of level on each type
};

/// Groups the jobs at `prices`: margin below `band` puts a job in the group of its two cheapest
/// types and its margin's eighth of the band; -1 entries of class_of need nothing. False when
/// more than `max_single` jobs keep every type or there would be more than `max_classes`
/// classes (the dense LP's size).
inline bool group_jobs(const level_problem& p, const Eigen::VectorXd& prices, double upper,
                       double band, std::size_t max_single, crossover_classes& out) {
  constexpr Eigen::Index bands = 8;
  // The dense LP costs about its classes cubed, a probe about the jobs: it stays well below a
  // probe's cost.
  const Eigen::Index n = p.throughput.rows(), m = p.throughput.cols();
  const std::size_t max_classes = std::clamp<std::size_t>(static_cast<std::size_t>(n) / 8, 32, 160);
  const Eigen::VectorXd& k = p.linear_coefficient;
  // Group of (cheapest type, second type or none, band): one slot each, -1 until used.
  std::vector<Eigen::Index> group(static_cast<std::size_t>(m * (m + 1) * bands), -1);
  std::vector<Eigen::VectorXd> usage;
  out.class_of.assign(static_cast<std::size_t>(n), -1);
  out.single.clear();
  for (Eigen::Index i = 0; i < n; ++i) {
    if (!(k[i] > 0.0) || !(p.scale[i] > 0.0)) continue;
    const cheapest_types c = cheapest_of(p, prices, i);
    if (c.first < 0) return false;  // no open type: the level is 0
    // A tie only where both types carry the level within the job's time; a job whose
    // cheapest type alone cannot keeps every type.
    const bool tie = c.margin < band &&
                     upper * k[i] <= std::min(p.throughput(i, c.first), p.throughput(i, c.second));
    Eigen::Index& cls = out.class_of[static_cast<std::size_t>(i)];
    if (!tie && upper * k[i] > p.throughput(i, c.first)) {
      if (out.single.size() >= max_single || usage.size() + out.single.size() >= max_classes)
        return false;
      cls = static_cast<Eigen::Index>(out.single.size());
      out.single.push_back(i);
      continue;
    }
    const Eigen::Index second = tie ? c.second : -1;
    const Eigen::Index b =
        tie ? std::min<Eigen::Index>(bands - 1, static_cast<Eigen::Index>(c.margin / band * bands))
            : 0;
    Eigen::Index& g = group[static_cast<std::size_t>((c.first * (m + 1) + second + 1) * bands + b)];
    if (g < 0) {
      if (usage.size() + out.single.size() >= max_classes) return false;
      g = static_cast<Eigen::Index>(usage.size());
      usage.push_back(Eigen::VectorXd::Zero(m));
    }
    for (const Eigen::Index w : {c.first, second})
      if (w >= 0) usage[static_cast<std::size_t>(g)][w] += p.scale[i] * k[i] / p.throughput(i, w);
    cls = -2 - g;  // a group, numbered after the singles below
  }
  const auto singles = static_cast<Eigen::Index>(out.single.size());
  out.usage.resize(static_cast<Eigen::Index>(usage.size()), m);
  for (std::size_t g = 0; g < usage.size(); ++g)
    out.usage.row(static_cast<Eigen::Index>(g)) = usage[g].transpose();
  for (Eigen::Index& cls : out.class_of)
    if (cls <= -2) cls = singles + (-2 - cls);
  out.single.resize(static_cast<std::size_t>(singles + out.usage.rows()), -1);
  return !out.single.empty();
}

/// The whole problem's allocation at `level` from the restricted LP's per-job class rows
/// (y_aw / count_a): singles take their row, a group's members its split of the level, jobs that
/// hold no GPU their best type; rounding is scaled out (rows <= 1, GPUs within capacity).
inline Eigen::MatrixXd allocation_of(const level_problem& p, const crossover_classes& cc,
                                     const Eigen::MatrixXd& t, const Eigen::MatrixXd& rows,
                                     double level) {
  const Eigen::Index n = p.throughput.rows(), m = p.throughput.cols();
  const Eigen::VectorXd& k = p.linear_coefficient;
  const Eigen::Index singles = t.rows() - cc.usage.rows();
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(n, m);
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::Index a = cc.class_of[static_cast<std::size_t>(i)];
    if (a < 0) {
      if (k[i] > 0.0) {  // holds no GPU: full time on its best type costs nothing
        Eigen::Index best = 0;
        p.throughput.row(i).maxCoeff(&best);
        x(i, best) = 1.0;
      }
    } else if (a < singles) {
      x.row(i) = rows.row(a);
    } else {
      // The group's share of its level on type w is t_w y_w / sum_v t_v y_v; each member gets
      // that share of `level` there.
      const Eigen::VectorXd share = rows.row(a).cwiseProduct(t.row(a)).transpose();
      const double total = share.sum();
      for (Eigen::Index w = 0; w < m && total > 0.0; ++w)
        if (share[w] > 0.0) x(i, w) = share[w] / total * level * k[i] / p.throughput(i, w);
    }
  }
  x = x.cwiseMax(0.0);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double sum = x.row(i).sum();
    if (sum > 1.0) x.row(i) /= sum;
  }
  const Eigen::VectorXd used = x.transpose() * p.scale;
  for (Eigen::Index w = 0; w < m; ++w)
    if (used[w] > p.capacity[w]) x.col(w) *= p.capacity[w] / used[w];
  return x;
}

/// One restricted LP at `prices` with tie band `band`.
inline level_crossover crossover_once(const level_problem& p, const Eigen::VectorXd& prices,
                                      double upper, double band, std::size_t max_single) {
  const Eigen::Index n = p.throughput.rows(), m = p.throughput.cols();
  const Eigen::VectorXd& k = p.linear_coefficient;
  level_crossover out;
  crossover_classes cc;
  if (!group_jobs(p, prices, upper, band, max_single, cc)) return out;
  const auto classes = static_cast<Eigen::Index>(cc.single.size());
  const Eigen::Index singles = classes - cc.usage.rows();
  // A group is one class of throughput 1 / usage on its types: its level L costs it usage_w L
  // GPUs of type w for the share of the level it gets there. Its own time never binds (members
  // were checked against `upper`), so it counts as more members than there are GPUs.
  Eigen::MatrixXd t = Eigen::MatrixXd::Zero(classes, m);
  Eigen::VectorXd scale = Eigen::VectorXd::Ones(classes), count(classes), coef(classes);
  const double members = p.capacity.sum() + 1.0;
  for (Eigen::Index a = 0; a < classes; ++a) {
    const Eigen::Index i = cc.single[static_cast<std::size_t>(a)];
    if (a < singles) {
      for (Eigen::Index w = 0; w < m; ++w)
        if (p.capacity[w] > 0.0) t(a, w) = p.throughput(i, w);
      scale[a] = p.scale[i];
      count[a] = 1.0;
      coef[a] = k[i];
    } else {
      for (Eigen::Index w = 0; w < m; ++w)
        if (cc.usage(a - singles, w) > 0.0) t(a, w) = 1.0 / cc.usage(a - singles, w);
      count[a] = members;
      coef[a] = 1.0 / members;
    }
  }
  class_level_lp lp(t, scale, count, coef, p.capacity);
  double bound = 0.0;
  Eigen::VectorXd duals;
  if (!lp.maximize_level(out.level, bound, duals) || !(out.level > 0.0)) return out;
  // The groups' time is not in the LP: it holds for every level up to `upper` (members were
  // checked against it), which the optimum cannot pass. A restricted LP above it only says that
  // some job's time binds at the optimum; its level is then taken down to `upper`.
  out.level = std::min(out.level, upper);
  out.x = allocation_of(p, cc, t, lp.per_job_rows(), out.level);
  // A GPU's dual is level per GPU; a probe's prices are relative deficit per GPU, about n / L
  // times as many (every job's deficit weighs 1).
  out.prices = duals.head(m).cwiseMax(0.0) * (static_cast<double>(n) / out.level);
  out.ok = true;
  return out;
}

}  // namespace detail

/// \brief Crossover of a linear level problem (p.linear_coefficient set, no finite cap) at
/// `prices` (one per type, >= 0, not all 0), given a certified upper end `upper` of its optimum.
/// At most `max_single` jobs keep every type (those whose cheapest types cannot carry `upper`
/// within their time). Each round's restricted LP gives the next round's prices, with the tie
/// band narrowed 4x, for `rounds` rounds or until the level stops rising; the best is returned.
inline level_crossover crossover_level(const level_problem& p, const Eigen::VectorXd& prices,
                                       double upper, std::size_t max_single = 48, int rounds = 6) {
  level_crossover best;
  const bool capped =
      std::any_of(p.cap.begin(), p.cap.end(), [](double c) { return std::isfinite(c); });
  if (p.linear_coefficient.size() != p.throughput.rows() || capped ||
      prices.size() != p.throughput.cols() || !prices.allFinite() || (prices.array() < 0.0).any() ||
      !(prices.maxCoeff() > 0.0) || !(upper > 0.0) || !std::isfinite(upper))
    return best;
  Eigen::VectorXd at = prices;
  double band = 0.05;
  for (int r = 0; r < rounds; ++r) {
    level_crossover next = detail::crossover_once(p, at, upper, band, max_single);
    if (!next.ok) break;
    const bool rose = !best.ok || next.level > best.level * (1.0 + 1e-12);
    at = next.prices;
    if (rose) {
      best = std::move(next);
      band *= 0.25;
    } else if (r >= 2) {
      break;
    }
  }
  return best;
}

}  // namespace popalloc::cluster
