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
/// nu in [w', w] that lands exactly on t = T is found by a safeguarded Newton iteration on the
/// piecewise-linear, nondecreasing map nu -> t(nu) (piecewise-linear utilities: slope w up to a
/// saturation throughput T, slope w' in [0, w) beyond, w' = 0 being flat); for strictly concave
/// utilities the slope solves nu = f'(t(nu)) (smooth_regularized_response).
#pragma once

#include <cmath>
#include <cstdint>

#include "popalloc/config.hpp"
#include "popalloc/utility/concept.hpp"
#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::detail {

/// x_o = max(0, (nu a_o - k_o) / kappa - lambda). `saturated`: t = T holds with slope nu in
/// (w', w). `beyond`: t >= T already at the slope w' > 0 above the saturation throughput, so
/// nu = w'.
struct regularized_state {
  double nu = 0.0;
  double lambda = 0.0;  ///< > 0 when the job's time constraint sum x <= 1 binds
  bool saturated = false;
  bool beyond = false;
  /// Piecewise-linear utilities: the unregularised job problem's value is
  /// min over nu in [w', w] of f(0) + (w - nu) T + max(0, max_o nu a_o - c_o), a convex function
  /// of nu. When it is attained at an end that the response visited, this is the option that
  /// gives it without a hull walk, or -1. Not beyond: an option maximising w a_o - c_o whose
  /// a_o <= T (or whatever o when that maximum is <= 0), so the function does not decrease
  /// towards w and the value is f(0) + max(0, w a_o - c_o). Beyond: an option maximising
  /// w' a_o - c_o > 0 with a_o >= T, so the function does not increase from w' and the value is
  /// f(0) + (w - w') T + w' a_o - c_o.
  std::int32_t unsaturated_best = -1;
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
POPALLOC_HD POPALLOC_INLINE double regularized_fraction(const Job& job, std::int32_t o,
                                                        double kappa, const regularized_state& s) {
  const double y = (s.nu * job.value(o) - job.cost(o)) * (1.0 / kappa) - s.lambda;
  return y > 0.0 ? y : 0.0;
}

template <class View>
POPALLOC_HD POPALLOC_INLINE double regularized_fraction(const View& view, std::int64_t i,
                                                        std::int32_t o, const double* prices,
                                                        double kappa, const regularized_state& s) {
  return regularized_fraction(job_options<View>{view, i, prices}, o, kappa, s);
}

/// Sums over the active options for a given slope nu (lambda chosen by Michelot's algorithm).
struct projection_sums {
  double lambda = 0.0;
  double tau = 0.0;        ///< sum a_o x_o
  double count = 0.0;      ///< |S|
  double sum_a = 0.0;      ///< sum over S of a_o
  double sum_a2 = 0.0;     ///< sum over S of a_o^2
  std::int32_t best = -1;  ///< an option with the largest nu a_o - k_o
};

template <class Job>
POPALLOC_HD inline projection_sums project_capped(const Job& job, double kappa, double nu) {
  const double inv_kappa = 1.0 / kappa;
  const std::int32_t count = job.count();
  projection_sums out;
  double positive_sum = 0.0, positive_count = 0.0, largest = -HUGE_VAL;
  for (std::int32_t o = 0; o < count; ++o) {
    const double y = (nu * job.value(o) - job.cost(o)) * inv_kappa;
    if (y > 0.0) {
      positive_sum += y;
      positive_count += 1.0;
    }
    if (y > largest) largest = y, out.best = o;
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
  out.best = best;
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

/// The piece of the map nu -> t(nu) around a slope nu0: on [lo, hi] the active set and whether
/// the time constraint binds stay the same, so t(nu) = tau + beta (nu - nu0) and
/// lambda(nu) = lambda + dlambda (nu - nu0) exactly. Knowing the piece lets a search solve for
/// the root on it in closed form and jump straight to the next piece when the root lies beyond,
/// instead of re-projecting to confirm or bisecting across pieces.
struct response_piece {
  double nu0 = 0.0;
  double tau = 0.0;
  double beta = 0.0;  ///< d t / d nu
  double lambda = 0.0;
  double dlambda = 0.0;    ///< d lambda / d nu (0 when the time constraint does not bind)
  double sum_a = 0.0;      ///< sum of a_o over the active options
  std::int32_t best = -1;  ///< an option with the largest nu0 a_o - k_o
  double lo = 0.0;
  double hi = HUGE_VAL;

  /// The regularised state at a slope nu on this piece.
  POPALLOC_HD regularized_state at(double nu) const {
    regularized_state s;
    s.nu = nu;
    const double l = lambda > 0.0 ? lambda + dlambda * (nu - nu0) : 0.0;
    s.lambda = l > 0.0 ? l : 0.0;
    return s;
  }
};

/// The piece at nu: slope, value and lambda. Its range [lo, hi] is left unknown (lo = hi = nu)
/// until bound_piece is called: most searches end on their first piece (piece_holds).
template <class Job>
POPALLOC_HD inline response_piece locate_piece(const Job& job, double kappa, double nu) {
  const projection_sums p = project_capped(job, kappa, nu);
  response_piece piece;
  piece.nu0 = nu;
  piece.tau = p.tau;
  piece.beta = tau_slope(p, kappa);
  piece.lambda = p.lambda;
  const bool capped = p.lambda > 0.0 && p.count > 0.0;
  piece.dlambda = capped ? p.sum_a / (kappa * p.count) : 0.0;
  piece.sum_a = p.sum_a;
  piece.best = p.best;
  piece.lo = piece.hi = nu;
  return piece;
}

/// Whether the active set and the binding of the time constraint at slope nu are those of
/// `piece` (then piece.at(nu) is the exact response there). Cheaper than bound_piece: no
/// divisions. Fractions within 1e-12 of zero may sit on either side (a root on a breakpoint).
template <class Job>
POPALLOC_HD inline bool piece_holds(const Job& job, double kappa, const response_piece& piece,
                                    double nu) {
  const bool capped = piece.lambda > 0.0;
  const double lambda = capped ? piece.lambda + piece.dlambda * (nu - piece.nu0) : 0.0;
  if (lambda < 0.0) return false;
  const double inv_kappa = 1.0 / kappa;
  double sum = 0.0;
  const std::int32_t count = job.count();
  for (std::int32_t o = 0; o < count; ++o) {
    const double a = job.value(o), k = job.cost(o);
    const bool member = (piece.nu0 * a - k) * inv_kappa - piece.lambda > 0.0;
    const double x = (nu * a - k) * inv_kappa - lambda;
    if (member) {
      if (x < -1e-12) return false;
      sum += x;
    } else if (x > 1e-12) {
      return false;
    }
  }
  return capped || sum <= 1.0 + 1e-12;
}

/// Sets the range [lo, hi] of `piece`: the nearest slopes where an option enters or leaves the
/// active set or the time constraint starts or stops binding.
template <class Job>
POPALLOC_HD inline void bound_piece(const Job& job, double kappa, response_piece& piece) {
  const double nu = piece.nu0;
  const double inv_kappa = 1.0 / kappa;
  const bool capped = piece.lambda > 0.0;
  // Distances to the nearest crossings as fractions num / den (den > 0), compared by
  // cross-multiplication: one division per side instead of one per option.
  double up_num = 1.0, up_den = 0.0, down_num = 1.0, down_den = 0.0, sum_y = 0.0;
  const std::int32_t count = job.count();
  for (std::int32_t o = 0; o < count; ++o) {
    const double a = job.value(o);
    const double y = (nu * a - job.cost(o)) * inv_kappa;
    const double x = y - piece.lambda;
    const double dx = a * inv_kappa - piece.dlambda;  // d x_o / d nu on this piece
    const bool member = x > 0.0;
    if (member) sum_y += y;
    if (dx == 0.0) continue;
    // x_o reaches 0 at distance |x / dx|: a member leaves, a non-member enters.
    const double num = x < 0.0 ? -x : x, den = dx < 0.0 ? -dx : dx;
    if (member == (dx > 0.0)) {
      if (num * down_den < down_num * den) down_num = num, down_den = den;
    } else if (num * up_den < up_num * den) {
      up_num = num, up_den = den;
    }
  }
  double lo = down_den > 0.0 ? nu - down_num / down_den : 0.0;
  double hi = up_den > 0.0 ? nu + up_num / up_den : HUGE_VAL;
  if (capped) {
    if (piece.dlambda > 0.0) {
      const double release = nu - piece.lambda / piece.dlambda;  // lambda reaches 0
      if (release > lo) lo = release;
    }
  } else if (piece.sum_a > 0.0) {
    const double cap = nu + (1.0 - sum_y) * kappa / piece.sum_a;  // sum x reaches 1
    if (cap < hi) hi = cap > nu ? cap : nu;
  }
  piece.lo = lo > 0.0 ? lo : 0.0;
  piece.hi = hi;
}

/// The next slope above nu >= 0 that a projection tells apart from nu: just past a breakpoint.
POPALLOC_HD inline double just_above(double nu) { return nu + 1e-13 * nu + 1e-300; }

/// Next slope when the root lies beyond `piece` (above it if `up`): just past the breakpoint,
/// so the projection there sees the neighbouring piece, kept inside the bracket (lo, hi).
POPALLOC_HD inline double step_past(const response_piece& piece, bool up, double lo, double hi) {
  double next;
  if (up) {
    next = piece.hi < HUGE_VAL ? just_above(piece.hi) : 16.0 * piece.nu0;
  } else {
    next = piece.lo - 1e-13 * piece.lo;
  }
  if (!(next > lo && next < hi))
    next = hi < HUGE_VAL ? 0.5 * (lo + hi) : 16.0 * (lo > 0.0 ? lo : 1.0);
  return next;
}

/// The saturated response when the time constraint is slack at the saturating slope, in closed
/// form. With x_o = max(0, (nu a_o - k_o) / kappa), t(nu) = sum_S a_o (nu a_o - k_o) / kappa is
/// linear in nu for a fixed active set S, so t = T gives nu = (kappa T + sum_S a_o k_o) /
/// sum_S a_o^2. Each round takes S as the options active at the previous slope, starting from
/// those that profit at w: while S contains the root's active set, the options outside it only
/// lower the sum, so the new slope lies at or above the root and its active set is again a
/// superset (Michelot's argument for the simplex). The slopes decrease until the set repeats,
/// which it does after at most |S| + 1 rounds, at the root. When the time used there exceeds 1,
/// the root is not in (w', w), or nothing profits, this returns false and the piece search
/// decides. `best_at_w` gets an option maximising w a_o - k_o (see
/// regularized_state::unsaturated_best).
template <class Job>
POPALLOC_HD inline bool slack_saturation(const Job& job, double kappa, double w, double saturation,
                                         double w_beyond, regularized_state& out,
                                         std::int32_t& best_at_w) {
  const std::int32_t count = job.count();
  const double inv_kappa = 1.0 / kappa;
  double nu = w, largest = -HUGE_VAL;
  best_at_w = -1;
  for (std::int32_t round = 0; round <= count + 1; ++round) {
    double sum_a2 = 0.0, sum_ak = 0.0, time = 0.0, tau = 0.0;
    for (std::int32_t o = 0; o < count; ++o) {
      const double a = job.value(o), k = job.cost(o);
      const double gain = nu * a - k;
      if (round == 0 && gain > largest) largest = gain, best_at_w = o;
      if (gain > 0.0) {
        const double x = gain * inv_kappa;  // as regularized_fraction computes it
        sum_a2 += a * a;
        sum_ak += a * k;
        time += x;
        tau += a * x;
      }
    }
    if (!(sum_a2 > 0.0)) return false;
    const double next = (kappa * saturation + sum_ak) / sum_a2;
    if (next == nu) {
      if (!(nu > w_beyond) || !(time <= 1.0)) return false;
      out = regularized_state{};
      // The formula's rounding, amplified by the cancellation in nu a - k when kappa is small,
      // leaves t a little off T; one Newton step on the linear piece takes it back.
      out.nu = nu + (saturation - tau) / (sum_a2 * inv_kappa);
      out.saturated = true;
      return true;
    }
    if (!(next < w)) return false;
    nu = next;
  }
  return false;
}

/// Solves the regularised best response for slope w up to the saturation throughput
/// `saturation` and slope `w_beyond` in [0, w) above it. `nu_guess`: the slope the job had in the
/// previous evaluation when it was saturated or beyond (0: neither). `slack_first`: try
/// slack_saturation before the piece search (the job was saturated with time to spare at the
/// previous evaluation, or has no history).
template <class Job>
POPALLOC_HD inline regularized_state regularized_response(const Job& job, double kappa, double w,
                                                          double saturation, double nu_guess = 0.0,
                                                          double w_beyond = 0.0,
                                                          bool slack_first = false) {
  double lo = w_beyond, hi = w;  // bracket of the saturating slope: t(lo) <= T < t(hi)
  const bool two_slopes = w_beyond > 0.0;
  response_piece piece;
  std::int32_t exact_best = -1;  // see regularized_state::unsaturated_best
  auto note_full_slope = [&](const response_piece& at_w) {
    const std::int32_t o = at_w.best;
    if (o >= 0 && (job.value(o) <= saturation || !(w * job.value(o) - job.cost(o) > 0.0)))
      exact_best = o;
  };
  auto finish = [&](regularized_state s) {
    s.unsaturated_best = exact_best;
    return s;
  };
  if (slack_first && saturation < HUGE_VAL) {
    regularized_state s;
    std::int32_t o = -1;
    if (slack_saturation(job, kappa, w, saturation, w_beyond, s, o)) {
      if (o >= 0 && (job.value(o) <= saturation || !(w * job.value(o) - job.cost(o) > 0.0)))
        s.unsaturated_best = o;
      return s;
    }
  }
  // With two slopes t(w') may already reach T: the job then stays at slope w' (`beyond`).
  // Otherwise t(w') < T becomes the lower end of the bracket.
  auto beyond_at = [&](const response_piece& at_beyond) {
    regularized_state s = at_beyond.at(w_beyond);
    s.beyond = true;
    const std::int32_t o = at_beyond.best;
    if (o >= 0 && job.value(o) >= saturation && w_beyond * job.value(o) - job.cost(o) > 0.0)
      s.unsaturated_best = o;
    return s;
  };
  bool below_at_lo = !two_slopes;  // t(lo) <= T established (t(0) = 0 <= T with one slope)
  if (two_slopes && nu_guess == w_beyond) {
    // Beyond last time: check that first.
    piece = locate_piece(job, kappa, w_beyond);
    if (!(piece.tau < saturation)) return beyond_at(piece);
    below_at_lo = true;
    piece = locate_piece(job, kappa, w);
    note_full_slope(piece);
    if (!(piece.tau > saturation)) return finish(piece.at(w));
  } else if (nu_guess > w_beyond && nu_guess < w) {
    // Saturated last time: start there. t is nondecreasing, so t(guess) > T proves saturation
    // now (given t(w') < T); otherwise the slope w decides it.
    piece = locate_piece(job, kappa, nu_guess);
    if (!(piece.tau > saturation)) {
      // t reaches T on this piece below w: that proves saturation and is the answer.
      if (piece.beta > 0.0) {
        const double root = nu_guess + (saturation - piece.tau) / piece.beta;
        if (root >= nu_guess && root < w && piece_holds(job, kappa, piece, root)) {
          regularized_state s = piece.at(root);
          s.saturated = true;
          return s;
        }
      }
      const response_piece at_w = locate_piece(job, kappa, w);
      note_full_slope(at_w);
      if (!(at_w.tau > saturation)) return finish(at_w.at(w));
      lo = nu_guess;
      below_at_lo = true;
    }
  } else {
    piece = locate_piece(job, kappa, w);
    note_full_slope(piece);
    if (!(piece.tau > saturation)) return finish(piece.at(w));
  }
  if (!below_at_lo) {
    const response_piece at_beyond = locate_piece(job, kappa, w_beyond);
    if (!(at_beyond.tau < saturation)) return beyond_at(at_beyond);
  }
  // Overshoot: find nu in [w', w) with t(nu) = T (t(0) = 0 <= T since costs are >= 0).
  for (int iteration = 0; iteration < 200; ++iteration) {
    const double nu = piece.nu0;
    const double gap = piece.tau - saturation;
    // t is a difference of terms of size nu * dt/dnu (x = y - lambda cancels digits when kappa
    // is small): below that rounding level no step can improve it.
    const double tolerance = 1e-13 * saturation + 1e-14 * nu * piece.beta;
    if (!(gap > tolerance || gap < -tolerance) || hi - lo <= 1e-15 * w) break;
    if (gap < 0.0) {
      lo = nu;
    } else {
      hi = nu;
    }
    if (piece.beta > 0.0) {
      const double root = nu - gap / piece.beta;
      if (root >= lo && root <= hi && piece_holds(job, kappa, piece, root)) {
        regularized_state s = piece.at(root);
        s.saturated = true;
        return finish(s);
      }
    }
    bound_piece(job, kappa, piece);
    const double next = step_past(piece, gap < 0.0, lo, hi);
    if (next == nu) break;
    piece = locate_piece(job, kappa, next);
  }
  regularized_state s = piece.at(piece.nu0);
  s.saturated = true;
  return finish(s);
}

/// Throughput t* on the affine extension t = alpha + beta nu of a piece of the map nu -> t(nu)
/// where nu = f'(t) holds, i.e. the root of psi(t) = t - alpha - beta f'(t). psi is increasing
/// (f' is decreasing), so a Newton iteration safeguarded by a bracket converges; it touches no
/// option data, which is why it is cheaper than another projection.
template <class Utility>
POPALLOC_HD inline double piece_root(double alpha, double beta, const Utility& utility,
                                     const job_parameters& params, double t_guess) {
  double lo = alpha > 0.0 ? alpha : 0.0;  // psi(lo) = lo - alpha - beta f'(lo) <= 0
  if (!(beta > 0.0)) return lo;
  if constexpr (has_piece_root<Utility>::value) return utility.piece_root(alpha, beta, params);
  double hi = HUGE_VAL;
  const double at_lo = utility.marginal(lo, params);
  if (at_lo < HUGE_VAL) hi = alpha + beta * at_lo;  // psi(hi) >= 0: f'(hi) <= f'(lo)
  double t =
      t_guess > lo && t_guess < hi ? t_guess : (hi < HUGE_VAL ? hi : (lo > 0.0 ? 2.0 * lo : 1.0));
  for (int iteration = 0; iteration < 100; ++iteration) {
    const double psi = t - alpha - beta * utility.marginal(t, params);
    if (psi == 0.0) return t;
    if (psi < 0.0) {
      lo = t;
    } else {
      hi = t;
    }
    if (hi < HUGE_VAL && !(hi - lo > 4e-16 * hi)) break;
    const double derivative = 1.0 + beta * utility.curvature(t, params);
    double next = t - psi / derivative;
    if (!(next > lo && next < hi)) next = hi < HUGE_VAL ? 0.5 * (lo + hi) : 4.0 * t;
    if (next == t) break;
    t = next;
  }
  return t;
}

/// The smallest slope at which some option profits, min over a_o > 0 of k_o / a_o (HUGE_VAL when
/// no option has a positive value): below it the response is idle.
template <class Job>
POPALLOC_HD inline double entry_slope(const Job& job) {
  double best_k = HUGE_VAL, best_a = 1.0;
  const std::int32_t count = job.count();
  for (std::int32_t o = 0; o < count; ++o) {
    const double a = job.value(o), k = job.cost(o);
    if (a > 0.0 && k * best_a < best_k * a) best_k = k, best_a = a;
  }
  return best_k / best_a;
}

/// Regularised best response for a strictly concave utility: the slope nu of the linearised
/// problem must equal f'(t(nu)). phi(nu) = nu - f'(t(nu)) is increasing (t is nondecreasing and
/// f' decreasing). On each piece of t(nu) the equation is solved exactly (piece_root); when that
/// root lies beyond the piece the search moves to the neighbouring piece, with a bracket on phi's
/// sign as the safeguard. The search starts at the previous evaluation's slope `nu_guess`, or
/// just past the entry slope when that is lower: under the small smoothing levels of a solve's
/// end a job's margin nu a_o - k_o is a small share of its cost, so a few per cent of price
/// movement leaves most jobs without a profitable option at their old slope, and the search
/// would spend a projection and a piece bound to find the entry slope.
template <class Job, class Utility>
POPALLOC_HD inline regularized_state smooth_regularized_response(const Job& job, double kappa,
                                                                 const Utility& utility,
                                                                 const job_parameters& params,
                                                                 double nu_guess) {
  double lo = 0.0, hi = HUGE_VAL;
  double start = nu_guess > 0.0 ? nu_guess : 1.0;
  const double entry = entry_slope(job);
  if (start <= entry && entry < utility.marginal(0.0, params)) {
    // Up to the entry slope t = 0, so phi = nu - f'(0) < 0 there: the root lies above it.
    lo = entry;
    start = just_above(entry);
  }
  response_piece piece = locate_piece(job, kappa, start);
  for (int iteration = 0; iteration < 200; ++iteration) {
    const double nu = piece.nu0;
    const double phi = nu - utility.marginal(piece.tau, params);
    // t carries rounding of about 1e-14 nu dt/dnu (x = y - lambda cancels digits when kappa is
    // small); accept a residual of that size, but only once t itself is resolved to 1e-6
    // (near t = 0 the curvature of log-like utilities would excuse any residual).
    const double t_rounding = 1e-14 * nu * piece.beta;
    double tolerance = 1e-11 * nu;
    if (t_rounding <= 1e-6 * piece.tau) {
      const double rounding = utility.curvature(piece.tau, params) * t_rounding;
      if (rounding > tolerance && rounding < HUGE_VAL) tolerance = rounding;
    }
    if (!(phi > tolerance || phi < -tolerance)) break;
    if (phi < 0.0) {
      lo = nu;
    } else {
      hi = nu;
    }
    if (hi < HUGE_VAL && hi - lo <= 1e-14 * hi) break;
    if (piece.tau > 0.0 || piece.beta > 0.0) {
      const double t_star =
          piece_root(piece.tau - piece.beta * nu, piece.beta, utility, params, piece.tau);
      const double root = utility.marginal(t_star, params);
      if (root > lo && root < hi && piece_holds(job, kappa, piece, root)) return piece.at(root);
    }
    bound_piece(job, kappa, piece);
    const double next = step_past(piece, phi < 0.0, lo, hi);
    if (next == nu) break;
    piece = locate_piece(job, kappa, next);
  }
  return piece.at(piece.nu0);
}

}  // namespace popalloc::detail
