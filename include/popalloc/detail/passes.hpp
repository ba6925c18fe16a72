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
#include <type_traits>

#include "popalloc/config.hpp"
#include "popalloc/detail/best_response.hpp"
#include "popalloc/detail/dense_view.hpp"
#include "popalloc/detail/regularized_response.hpp"
#include "popalloc/utility/concept.hpp"
#include "popalloc/utility/log.hpp"

namespace popalloc::detail {

POPALLOC_HD inline bool is_finite(double x) { return x - x == 0.0; }

/// Smallest capacity scale factor over the resources option o consumes (1 for the slack).
template <class View>
POPALLOC_HD POPALLOC_INLINE double option_factor(const View& view, std::int64_t i, std::int32_t o,
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
POPALLOC_HD POPALLOC_INLINE void add_usage(const View& view, std::int64_t i, std::int32_t o,
                                           double x, double* usage) {
  if (o < 0 || x == 0.0) return;
  const std::int32_t count = view.consumption_count(i, o);
  for (std::int32_t k = 0; k < count; ++k)
    usage[view.consumption_resource(i, o, k)] += x * view.consumption_amount(i, o, k);
}

/// Per-job state of one evaluation, enough to rebuild the job's allocation at that evaluation's
/// prices. Hull walk: options `left`, `right` (-1: idle) with `theta` on the right. Regularised
/// response (left == regularized_marker): theta = lambda, extra = nu (see regularized_state),
/// and `right` holds flags: saturated, whether the fractions need time_normalizer, and idle.
constexpr std::int32_t regularized_marker = -2;
constexpr std::int32_t state_saturated = 1;
constexpr std::int32_t state_normalized = 2;
constexpr std::int32_t state_idle = 4;  ///< no time on any option (evaluate_pass::record_idle)

struct state_pointers {
  std::int32_t* left = nullptr;
  std::int32_t* right = nullptr;
  double* theta = nullptr;
  double* extra = nullptr;
};

/// Fraction of job i's time on its option o under the stored state.
template <class View>
POPALLOC_HD POPALLOC_INLINE double state_fraction(const View& view, std::int64_t i, std::int32_t o,
                                                  const double* prices, double kappa,
                                                  const state_pointers& s) {
  const std::int32_t left = s.left[i];
  if (left == regularized_marker) {
    regularized_state r;
    r.lambda = s.theta[i];
    r.nu = s.extra[i];
    return regularized_fraction(view, i, o, prices, kappa, r);
  }
  double x = 0.0;
  if (o == left) x += 1.0 - s.theta[i];
  if (o == s.right[i]) x += s.theta[i];
  return x;
}

/// 1, or slightly less than 1 / total when rounding pushed a job's total time (the sum of its
/// `count` positive fractions) above 1: the regularised fractions y_o - lambda lose digits to
/// cancellation when kappa is small. The extra (count + 1) ulps cover the rounding of the scaled
/// fractions' sum, so that sum never exceeds 1, in any order it is added.
POPALLOC_HD inline double normalizer_for(double total, double count) {
  return total > 1.0 ? (1.0 - 2.3e-16 * (count + 1.0)) / total : 1.0;
}

template <class View>
POPALLOC_HD inline double time_normalizer(const View& view, std::int64_t i, const double* prices,
                                          double kappa, const state_pointers& s) {
  if (s.left[i] != regularized_marker || (s.right[i] & state_normalized) == 0) return 1.0;
  double total = 0.0, count = 0.0;
  const std::int32_t options = view.option_count(i);
  for (std::int32_t o = 0; o < options; ++o) {
    const double x = state_fraction(view, i, o, prices, kappa, s);
    if (x > 0.0) total += x, count += 1.0;
  }
  return normalizer_for(total, count);
}

/// Calls visit(o, x) for every option of job i with a positive fraction x under the stored
/// state, normalised (time_normalizer): what repair and export read. Idle jobs are skipped
/// without a scan (half the jobs near an oversubscribed LP-type optimum).
template <class View, class Visit>
POPALLOC_HD inline void visit_state_fractions(const View& view, std::int64_t i,
                                              const double* prices, double kappa,
                                              const state_pointers& s, Visit&& visit) {
  const std::int32_t options = view.option_count(i);
  if (s.left[i] == regularized_marker) {
    const std::int32_t flags = s.right[i];
    if ((flags & state_idle) != 0) return;
    regularized_state r;
    r.lambda = s.theta[i];
    r.nu = s.extra[i];
    const double normalizer =
        (flags & state_normalized) != 0 ? time_normalizer(view, i, prices, kappa, s) : 1.0;
    if constexpr (is_dense_view<View>::value) {
      // regularized_fraction's arithmetic, bit for bit, on the row itself: no per-option checks
      // for closed resources and demands.
      if (view.unit_and_open()) {
        const auto* row = view.row(i);
        const double inv_kappa = 1.0 / kappa;
        for (std::int32_t o = 0; o < options; ++o) {
          const double y = (r.nu * static_cast<double>(row[o]) - prices[o]) * inv_kappa - r.lambda;
          const double x = (y > 0.0 ? y : 0.0) * normalizer;
          if (x > 0.0) visit(o, x);
        }
        return;
      }
    }
    const job_options<View> job{view, i, prices};
    for (std::int32_t o = 0; o < options; ++o) {
      const double x = regularized_fraction(job, o, kappa, r) * normalizer;
      if (x > 0.0) visit(o, x);
    }
    return;
  }
  for (std::int32_t o = 0; o < options; ++o) {
    const double x = state_fraction(view, i, o, prices, kappa, s);
    if (x > 0.0) visit(o, x);
  }
}

/// H += weight * c_a c_b^T for the consumption vectors of options a and b of job i.
template <class View>
POPALLOC_HD inline void add_outer(const View& view, std::int64_t i, std::int32_t a, std::int32_t b,
                                  double weight, double* h, std::int32_t m) {
  const std::int32_t ca = view.consumption_count(i, a), cb = view.consumption_count(i, b);
  for (std::int32_t ka = 0; ka < ca; ++ka) {
    const std::int32_t ra = view.consumption_resource(i, a, ka);
    const double va = weight * view.consumption_amount(i, a, ka);
    for (std::int32_t kb = 0; kb < cb; ++kb)
      h[ra * m + view.consumption_resource(i, b, kb)] += va * view.consumption_amount(i, b, kb);
  }
}

/// row -= s * v over m entries, in blocks of four that compile to vector code without the
/// run-time alias and trip-count checks a plain loop of unknown length gets.
POPALLOC_HD inline void subtract_multiple(double* row, double s, const double* v, std::int32_t m) {
  std::int32_t c = 0;
  for (; c + 4 <= m; c += 4)
    for (std::int32_t k = 0; k < 4; ++k) row[c + k] -= s * v[c + k];
  for (; c < m; ++c) row[c] -= s * v[c];
}

/// H += C^T W C over a job's active options, W_pq = [p == q] diagonal - alpha_p - beta_p b_q: the
/// shape of every Hessian term of a regularised response (a projector plus a low-rank part).
/// Options that consume one resource each (dense problems) take a loop of two multiply-adds per
/// pair, or whole rows when many options are active; options with several consumptions go
/// through add_outer.
template <class View>
POPALLOC_HD inline void add_structured_outer(const View& view, std::int64_t i,
                                             const std::int32_t* active, std::int32_t n,
                                             double diagonal, const double* alpha,
                                             const double* beta, const double* b, double* h,
                                             std::int32_t m) {
  if (n == 1 && view.consumption_count(i, active[0]) == 1) {  // most jobs once smoothing is low
    const double c = view.consumption_amount(i, active[0], 0);
    const std::int64_t r = view.consumption_resource(i, active[0], 0);
    h[r * m + r] += (diagonal - alpha[0] - beta[0] * b[0]) * c * c;
    return;
  }
  constexpr std::int32_t capacity = local_options::capacity;
  std::int32_t resource[capacity];
  double amount[capacity], amount_b[capacity];
  bool single = n <= capacity;
  for (std::int32_t p = 0; single && p < n; ++p) {
    if (view.consumption_count(i, active[p]) != 1) {
      single = false;
      break;
    }
    resource[p] = view.consumption_resource(i, active[p], 0);
    amount[p] = view.consumption_amount(i, active[p], 0);
    amount_b[p] = amount[p] * b[p];
  }
  if (!single) {
    for (std::int32_t p = 0; p < n; ++p)
      for (std::int32_t q = 0; q < n; ++q) {
        const double weight = (p == q ? diagonal : 0.0) - alpha[p] - beta[p] * b[q];
        if (weight != 0.0) add_outer(view, i, active[p], active[q], weight, h, m);
      }
    return;
  }
#ifndef __CUDA_ARCH__
  if (m <= capacity && 2 * n >= m) {
    // Many active options of few resources (every option of a saturated job at low prices):
    // whole rows over zero-filled vectors, which the compiler vectorises, instead of n^2
    // scattered updates.
    double dense_amount[capacity] = {}, dense_amount_b[capacity] = {};
    for (std::int32_t p = 0; p < n; ++p) {
      dense_amount[resource[p]] += amount[p];
      dense_amount_b[resource[p]] += amount_b[p];
    }
    bool rank_one = true;  // saturated with the time constraint slack: alpha = 0
    for (std::int32_t p = 0; p < n; ++p) rank_one &= alpha[p] == 0.0;
    for (std::int32_t p = 0; p < n; ++p) {
      double* row = h + static_cast<std::int64_t>(resource[p]) * m;
      const double alpha_p = alpha[p] * amount[p], beta_p = beta[p] * amount[p];
      row[resource[p]] += diagonal * amount[p] * amount[p];
      if (rank_one) {
        subtract_multiple(row, beta_p, dense_amount_b, m);
      } else {
        for (std::int32_t c = 0; c < m; ++c)
          row[c] -= alpha_p * dense_amount[c] + beta_p * dense_amount_b[c];
      }
    }
    return;
  }
#endif
  for (std::int32_t p = 0; p < n; ++p) {
    double* row = h + static_cast<std::int64_t>(resource[p]) * m;
    const double alpha_p = alpha[p] * amount[p], beta_p = beta[p] * amount[p];
    row[resource[p]] += diagonal * amount[p] * amount[p];
    for (std::int32_t q = 0; q < n; ++q)
      row[resource[q]] -= alpha_p * amount[q] + beta_p * amount_b[q];
  }
}

/// Evaluates the exact and smoothed dual terms, resource usage and the generalized Hessian of
/// the smoothed dual. Layout of `partial`: usage[m], hessian[m*m] (if requested), then the
/// scalars below. With level > 0 every job uses the regularised response with
/// kappa_i = level * kappa_scale[i]; with level 0 (or kappa_i = 0) the exact hull walk.
///
/// With `fold_repair` (options that each consume one resource) the pass also accumulates what
/// certify() needs for a lower bound on the objective of the allocation scaled down by
/// per-resource factors g, without a second pass. With pi_io = a_o x_o / t_i (the share of job
/// i's throughput from option o), the scaled throughput is t_i sum_o pi_io g_o, and
/// - when f_i(0) is finite, concavity along [0, t_i] gives f_i(t') >= f_i(0) + (f_i(t_i) -
///   f_i(0)) sum_o pi_io g_o: objective >= base + sum_j g_j value_j with base = sum_i f_i(0) and
///   value_j = sum_i (f_i(t_i) - f_i(0)) pi_ij (exact for piecewise-linear utilities below their
///   saturation throughput);
/// - for the log utility, Jensen's inequality gives log t' >= log t + sum_o pi_o log g_o:
///   objective >= base + sum_j log(g_j) value_j with base = sum_i f_i(t_i) and
///   value_j = sum_i w_i pi_ij.
/// Both are within O((1 - g)^2) of the exact value. quad_j = sum_i kappa_i x_ij^2 gives the scaled
/// regulariser. Jobs that fit neither (f(0) = -inf for another utility, t = 0 under log, or more
/// active options than the local buffer) are counted in `unfolded`; certify() then runs the
/// repair pass instead.
template <class View, class Utility>
struct evaluate_pass {
  enum scalar : std::int32_t {
    excess_smooth = 0,
    excess_exact = 1,
    utility_exact = 2,
    utility_smooth = 3,
    non_finite = 4,
    fold_base = 5,
    unfolded = 6,
    scalar_count = 7
  };

  View view;
  Utility utility;
  const double* prices = nullptr;
  const double* kappa_scale = nullptr;  ///< per job, null when not smoothing
  double level = 0.0;
  std::int32_t m = 0;
  bool hessian = true;
  bool exact_dual = true;  ///< also accumulate the exact dual terms
  state_pointers state;
  double* slope_memory = nullptr;  ///< per job: last regularised slope (a warm start), or null
  /// Per job (piecewise-linear utilities), or null: 1 when the job was saturated with its time
  /// constraint slack at the previous evaluation or has no history, else 0. Such a job tries the
  /// closed-form slack_saturation first, which needs no starting slope: when the prices or the
  /// level moved, a search from the previous slope walked several pieces (7 projections per job
  /// on the first evaluation when every target is reachable), and a job saturated on one
  /// option is the one-option case of the same formula.
  std::int32_t* slack_memory = nullptr;
  bool fold_repair = false;  ///< accumulate value[m] and quad[m] (see above)

  POPALLOC_HD std::int32_t fold_offset() const { return m + (hessian ? m * m : 0); }
  POPALLOC_HD std::int32_t scalar_offset() const {
    return fold_offset() + (fold_repair ? 2 * m : 0);
  }
  POPALLOC_HD std::int32_t width() const { return scalar_offset() + scalar_count; }

  static constexpr bool log_fold = std::is_same_v<Utility, utility::log>;

  /// The folded-repair terms of job i (see above): its `count` options with positive fractions.
  POPALLOC_HD void add_fold(std::int64_t i, const job_parameters& job, double tau, double u,
                            const std::int32_t* options, const double* fractions,
                            std::int32_t count, double kappa, double* partial) const {
    if (!fold_repair) return;
    double* sc = partial + scalar_offset();
    double* value = partial + fold_offset();
    double* quad = value + m;
    double share = 0.0;  // multiplies a_o x_o
    if constexpr (log_fold) {
      if (!is_finite(u)) {
        sc[unfolded] += 1.0;
        return;
      }
      sc[fold_base] += u;
      share = job.weight / tau;
    } else {
      const double idle = utility.value(0.0, job);
      if (!is_finite(idle)) {
        sc[unfolded] += 1.0;
        return;
      }
      sc[fold_base] += idle;
      share = tau > 0.0 ? (u - idle) / tau : 0.0;
    }
    for (std::int32_t k = 0; k < count; ++k) {
      const std::int32_t j = view.consumption_resource(i, options[k], 0);
      const double x = fractions[k];
      value[j] += share * view.value(i, options[k]) * x;
      quad[j] += kappa * x * x;
    }
  }

  /// `exact_excess`: the job's unregularised dual term when the response could give it without a
  /// hull walk (regularized_state::unsaturated_best), else left unchanged.
  POPALLOC_HD void evaluate_regularized(std::int64_t i, const job_parameters& job, double kappa,
                                        double nu_guess, double* partial, double& u_exact,
                                        double& u_smooth, double& e_smooth,
                                        double& exact_excess) const {
    const std::int32_t options = view.option_count(i);
    if (options <= local_options::capacity) {
      local_options local;
      local.n = options;
      for (std::int32_t o = 0; o < options; ++o) {
        local.a[o] = view.value(i, o);
        local.k[o] = view.cost(i, o, prices);
      }
      regularized_job(local, i, job, kappa, nu_guess, partial, u_exact, u_smooth, e_smooth,
                      exact_excess);
    } else {
      regularized_job(job_options<View>{view, i, prices}, i, job, kappa, nu_guess, partial, u_exact,
                      u_smooth, e_smooth, exact_excess);
    }
  }

  /// Whether no option of the job pays at the steepest slope w of its piecewise-linear utility:
  /// the response is then idle at every smoothing level (t(w) = 0 and t is nondecreasing). Near
  /// the optimum of an oversubscribed problem most jobs are (53% at 1e4 x 8 target priority), so
  /// one scan settles them instead of the search and the fraction loops.
  template <class Job>
  POPALLOC_HD static bool pays_nothing(const Job& options, double w) {
    const std::int32_t count = options.count();
    bool pays = false;
    for (std::int32_t o = 0; o < count; ++o) pays |= w * options.value(o) - options.cost(o) > 0.0;
    return !pays;
  }

  /// The exact (unregularised) dual term of a piecewise-linear job whose regularised response
  /// is saturated, or HUGE_VAL when this closed form does not apply and the hull walk must give
  /// it. The term is the minimum over nu in [w', w] of the convex function f(0) + (w - nu) T +
  /// max(0, max_q nu a_q - c_q) (regularized_state). Below the smallest break-even slope
  /// nu0 = min_q c_q / a_q no option profits and the function falls with slope -T; just above it
  /// it rises with slope a_o - T, o the option breaking even there with the largest a_o. When
  /// that is >= 0 and nu0 lies in [w', w], nu0 is the minimiser and the term is
  /// f(0) + (w - nu0) T: one scan instead of a hull walk, and the case of most saturated jobs
  /// (a third of all jobs near an oversubscribed optimum, nearly all when every target is
  /// reachable).
  template <class Job>
  POPALLOC_HD double saturated_dual_term(const Job& options, const job_parameters& job, double w,
                                         double w_beyond, double saturation) const {
    // The break-even slope as a fraction cost / value, compared by cross-multiplication.
    double best_cost = 1.0, best_value = 0.0;
    const std::int32_t count = options.count();
    for (std::int32_t q = 0; q < count; ++q) {
      const double a = options.value(q);
      if (!(a > 0.0)) continue;
      const double c = options.cost(q);
      const double lhs = c * best_value, rhs = best_cost * a;
      if (lhs < rhs || (lhs == rhs && a > best_value)) best_cost = c, best_value = a;
    }
    if (!(best_value >= saturation && best_value > 0.0)) return HUGE_VAL;
    const double nu = best_cost / best_value;
    if (!(nu >= w_beyond && nu <= w)) return HUGE_VAL;
    return utility.value(0.0, job) + (w - nu) * saturation;
  }

  /// What regularized_job records for a job that pays_nothing: the response at slope w with no
  /// time on any option.
  POPALLOC_HD void record_idle(std::int64_t i, const job_parameters& job, double w, double kappa,
                               double* partial, double& u_exact, double& u_smooth, double& e_smooth,
                               double& exact_excess) const {
    if (slope_memory != nullptr) slope_memory[i] = 0.0;
    if (slack_memory != nullptr) slack_memory[i] = 0;
    state.left[i] = regularized_marker;
    state.right[i] = state_idle;
    state.theta[i] = 0.0;
    state.extra[i] = w;
    u_exact = utility.value(0.0, job);
    add_fold(i, job, 0.0, u_exact, nullptr, nullptr, 0, kappa, partial);
    u_smooth = u_exact;
    e_smooth = u_exact;
    exact_excess = u_exact;
  }

  template <class Job>
  POPALLOC_HD void regularized_job(const Job& options, std::int64_t i, const job_parameters& job,
                                   double kappa, double nu_guess, double* partial, double& u_exact,
                                   double& u_smooth, double& e_smooth, double& exact_excess) const {
    // Searches start from the slope this job had at the previous evaluation.
    const double previous = slope_memory != nullptr ? slope_memory[i] : 0.0;
    regularized_state r;
    // Piecewise-linear utilities: slope w up to the saturation throughput, w_beyond above it.
    [[maybe_unused]] double w = 0.0, w_beyond = 0.0, saturation = HUGE_VAL;
    if constexpr (Utility::piecewise_linear) {
      w = utility.marginal(0.0, job);
      if (pays_nothing(options, w)) {
        record_idle(i, job, w, kappa, partial, u_exact, u_smooth, e_smooth, exact_excess);
        return;
      }
      saturation = utility.saturation(job);
      w_beyond = saturation < HUGE_VAL ? utility.marginal(saturation, job) : 0.0;
      if (!(w_beyond < w)) saturation = HUGE_VAL, w_beyond = 0.0;  // one slope after all
      const bool slack_first = slack_memory == nullptr || slack_memory[i] != 0;
      r = regularized_response(options, kappa, w, saturation, previous, w_beyond, slack_first);
      if (r.unsaturated_best >= 0) {
        const double a = options.value(r.unsaturated_best);
        const double k = options.cost(r.unsaturated_best);
        if (r.beyond) {
          exact_excess = utility.value(0.0, job) + (w - w_beyond) * saturation + w_beyond * a - k;
        } else {
          const double gain = w * a - k;
          exact_excess = utility.value(0.0, job) + (gain > 0.0 ? gain : 0.0);
        }
      }
      if (slope_memory != nullptr) slope_memory[i] = r.saturated || r.beyond ? r.nu : 0.0;
    } else {
      r = smooth_regularized_response(options, kappa, utility, job,
                                      previous > 0.0 ? previous : nu_guess);
      if (slope_memory != nullptr) slope_memory[i] = r.nu;
    }
    state.left[i] = regularized_marker;
    std::int32_t flags = r.saturated ? state_saturated : 0;
    state.theta[i] = r.lambda;
    state.extra[i] = r.nu;
    // Active options, remembered for the Hessian. A job with more than `capacity` active options
    // (a tie among many) contributes no Hessian term: the model is then less accurate, never
    // wrong about the function values the line search checks.
    // The first entries are set so that GCC's -O3 flow analysis sees the arrays initialised on
    // the path with no active option (add_fold then reads none of them).
    std::int32_t active[local_options::capacity];
    active[0] = 0;
    std::int32_t n_active = 0;
    bool overflow = false;
    double tau = 0.0, cost = 0.0, norm2 = 0.0, count = 0.0, sum_a = 0.0, sum_a2 = 0.0;
    const std::int32_t n_options = options.count();
    // The fractions y_o - lambda lose digits to cancellation when kappa is small, which can push
    // their sum above 1 by a few ulps. Later passes over the stored state scale them back
    // (time_normalizer); here only the flag that tells them to is set. Usage and Hessian keep
    // the unscaled fractions: the usage is then an upper bound on the returned allocation's.
    // Small jobs keep their fractions in a buffer between the two loops.
    double buffer[local_options::capacity];
    const bool buffered = n_options <= local_options::capacity;
    double total = 0.0, positive = 0.0;
    for (std::int32_t o = 0; o < n_options; ++o) {
      const double x = regularized_fraction(options, o, kappa, r);
      if (buffered) buffer[o] = x;
      if (x > 0.0) total += x, positive += 1.0;
    }
    if (normalizer_for(total, positive) != 1.0) flags |= state_normalized;
    state.right[i] = flags;
    double active_x[local_options::capacity];
    active_x[0] = 0.0;
    for (std::int32_t o = 0; o < n_options; ++o) {
      const double x = buffered ? buffer[o] : regularized_fraction(options, o, kappa, r);
      if (!(x > 0.0)) continue;
      const double a = options.value(o);
      tau += a * x;
      cost += options.cost(o) * x;
      norm2 += x * x;
      count += 1.0;
      sum_a += a;
      sum_a2 += a * a;
      add_usage(view, i, o, x, partial);
      if (n_active < local_options::capacity) {
        active[n_active] = o;
        active_x[n_active] = x;
        ++n_active;
      } else {
        overflow = true;
      }
    }
    if constexpr (Utility::piecewise_linear) {
      if (r.saturated && exact_dual && r.unsaturated_best < 0)
        exact_excess = saturated_dual_term(options, job, w, w_beyond, saturation);
      if (slack_memory != nullptr) slack_memory[i] = r.saturated && !(r.lambda > 0.0) ? 1 : 0;
    }
    u_exact = utility.value(tau, job);
    if (overflow) {
      if (fold_repair) partial[scalar_offset() + unfolded] += 1.0;
    } else {
      add_fold(i, job, tau, u_exact, active, active_x, n_active, kappa, partial);
    }
    u_smooth = u_exact - 0.5 * kappa * norm2;
    e_smooth = u_smooth - cost;
    if (!hessian || count == 0.0 || overflow) return;
    add_regularized_hessian(options, i, job, r, tau, kappa, {count, sum_a, sum_a2}, active,
                            n_active, partial + m);
  }

  /// Sums over a job's active options: their number, the sum of their throughputs and of their
  /// squares.
  struct active_sums {
    double count, sum_a, sum_a2;
  };

  /// Adds the regularised job's generalized Hessian, d usage / d prices over its `n_active`
  /// active options, to `h`.
  template <class Job>
  POPALLOC_HD void add_regularized_hessian(const Job& options, std::int64_t i,
                                           const job_parameters& job, const regularized_state& r,
                                           double tau, double kappa, const active_sums& sums,
                                           const std::int32_t* active, std::int32_t n_active,
                                           double* h) const {
    const double count = sums.count, sum_a = sums.sum_a, sum_a2 = sums.sum_a2;
    const bool capped = r.lambda > 0.0;
    if constexpr (!Utility::piecewise_linear) {
      // nu = f'(t) moves with x: d usage / d prices = C^T M C over the active options with
      // M = P/kappa - c (P a)(P a)^T / (kappa^2 (1 + c a^T P a / kappa)), c = -f''(t),
      // P = I - [capped] 1 1^T / |S|.
      const double c = utility.curvature(tau, job);
      const double mean_a = capped ? sum_a / count : 0.0;
      const double apa = sum_a2 - (capped ? sum_a * sum_a / count : 0.0);
      const double rank_one = (c > 0.0 && c < HUGE_VAL) ? c / (kappa * (kappa + c * apa)) : 0.0;
      const double mean_term = capped ? 1.0 / (count * kappa) : 0.0;
      double alpha[local_options::capacity], beta[local_options::capacity],
          centred[local_options::capacity];
      for (std::int32_t p = 0; p < n_active; ++p) {
        centred[p] = options.value(active[p]) - mean_a;
        alpha[p] = mean_term;
        beta[p] = rank_one * centred[p];
      }
      add_structured_outer(view, i, active, n_active, 1.0 / kappa, alpha, beta, centred, h, m);
      return;
    }
    // d usage / d prices = C^T (I - B (B^T B)^-1 B^T) C / kappa over the active options,
    // B = [1 if the time constraint binds, a if saturated].
    double g00 = 0.0, g01 = 0.0, g11 = 0.0;  // (B^T B)^-1 in the basis (1, a)
    if (capped && r.saturated) {
      const double det = count * sum_a2 - sum_a * sum_a;
      if (det > 1e-12 * count * sum_a2) {
        g00 = sum_a2 / det;
        g01 = -sum_a / det;
        g11 = count / det;
      } else {
        g00 = 1.0 / count;  // a constant on S: both constraints are the same one
      }
    } else if (capped) {
      g00 = 1.0 / count;
    } else if (r.saturated && sum_a2 > 0.0) {
      g11 = 1.0 / sum_a2;
    }
    // Projector entry (p, q): [p == q] - (g00 + g01 a_p) - (g01 + g11 a_p) a_q.
    double alpha[local_options::capacity], beta[local_options::capacity],
        value[local_options::capacity];
    const double inv_kappa = 1.0 / kappa;
    for (std::int32_t p = 0; p < n_active; ++p) {
      value[p] = options.value(active[p]);
      alpha[p] = (g00 + g01 * value[p]) * inv_kappa;
      beta[p] = (g01 + g11 * value[p]) * inv_kappa;
    }
    add_structured_outer(view, i, active, n_active, inv_kappa, alpha, beta, value, h, m);
  }

  POPALLOC_HD void operator()(std::int64_t i, double* partial) const {
    const job_parameters job = view.parameters(i);
    const double kappa = kappa_scale != nullptr ? level * kappa_scale[i] : 0.0;
    // The exact hull walk gives h_i(p) of the unsmoothed dual (the certified bound); regularised
    // jobs need it only when the solver asks for a certificate.
    const bool regularizable = kappa > 0.0;
    double* sc = partial + scalar_offset();
    double u_exact = 0.0, u_smooth = 0.0, e_smooth = 0.0;
    segment exact;
    bool regularized = false;
    if (regularizable && Utility::piecewise_linear) {
      // The response usually yields the exact term too; walk the hull only when it cannot.
      double exact_excess = HUGE_VAL;
      evaluate_regularized(i, job, kappa, 0.0, partial, u_exact, u_smooth, e_smooth, exact_excess);
      regularized = true;
      if (exact_dual) {
        if (exact_excess < HUGE_VAL) {
          exact.excess = exact_excess;
        } else {
          exact = walk_hull(view, i, prices, utility, job, 0.0, -1);
        }
      }
    } else {
      if (exact_dual || !regularizable) exact = walk_hull(view, i, prices, utility, job, 0.0, -1);
      if (regularizable) {
        // The exact walk's throughput seeds the slope search when the job has no slope memory.
        const double guess = exact_dual ? utility.marginal(exact.tau, job) : 0.0;
        double unused = 0.0;
        evaluate_regularized(i, job, kappa, guess, partial, u_exact, u_smooth, e_smooth, unused);
        regularized = true;
      }
    }
    if (!regularized) {
      state.left[i] = exact.left;
      state.right[i] = exact.right;
      state.theta[i] = exact.theta;
      state.extra[i] = 0.0;
      add_usage(view, i, exact.left, 1.0 - exact.theta, partial);
      add_usage(view, i, exact.right, exact.theta, partial);
      u_exact = utility.value(exact.tau, job);
      if (fold_repair) {
        std::int32_t used[2];
        double fraction[2];
        std::int32_t count = 0;
        if (exact.left >= 0 && exact.theta < 1.0)
          used[count] = exact.left, fraction[count] = 1.0 - exact.theta, ++count;
        if (exact.right >= 0 && exact.theta > 0.0)
          used[count] = exact.right, fraction[count] = exact.theta, ++count;
        add_fold(i, job, exact.tau, u_exact, used, fraction, count, 0.0, partial);
      }
      u_smooth = u_exact;
      e_smooth = exact.excess;
      if (hessian && exact.right >= 0) {
        // Inside a hull segment t moves with the segment's slope s: dt/ds = -1/f''(t).
        const double curvature = utility.curvature(exact.tau, job);
        const double a_left = exact.left >= 0 ? view.value(i, exact.left) : 0.0;
        const double da = view.value(i, exact.right) - a_left;
        const double denominator = curvature * da * da;
        if (denominator > 0.0 && denominator < 1e300) {
          const double w = 1.0 / denominator;
          double* h = partial + m;
          add_outer(view, i, exact.right, exact.right, w, h, m);
          if (exact.left >= 0) {
            add_outer(view, i, exact.left, exact.left, w, h, m);
            add_outer(view, i, exact.left, exact.right, -w, h, m);
            add_outer(view, i, exact.right, exact.left, -w, h, m);
          }
        }
      }
    }
    sc[excess_smooth] += e_smooth;
    sc[excess_exact] += exact.excess;
    sc[utility_exact] += u_exact;
    sc[utility_smooth] += u_smooth;
    if (!is_finite(e_smooth) || !is_finite(exact.excess) || !is_finite(u_exact))
      sc[non_finite] += 1.0;
  }
};

/// What scaling the over-used resources down takes from job i: the throughput it wants back (its
/// throughput before the scaling, or more: see topup_tiers::to_saturation), its throughput after
/// the scaling, and its scaled time on its options (with their count, for the rounding margin).
struct scaled_job {
  double throughput = 0.0, scaled_throughput = 0.0, scaled_time = 0.0, options = 0.0;
  /// The scaled fraction of each option, for choose_topup's swaps; only when the job has at most
  /// local_options::capacity options (`recorded`; then the job's options are all set), else the
  /// job tops up without swapping.
  bool recorded = false;
  double scaled[local_options::capacity];
};

/// `wanted`: a throughput the job wants back even beyond its unscaled one (0: none).
template <class View>
POPALLOC_HD inline scaled_job scale_job(const View& view, std::int64_t i, const double* prices,
                                        double kappa, const state_pointers& s,
                                        const double* factors, double wanted) {
  scaled_job out;
  const std::int32_t options = view.option_count(i);
  out.recorded = options <= local_options::capacity;
  if (out.recorded)
    for (std::int32_t o = 0; o < options; ++o) out.scaled[o] = 0.0;
  visit_state_fractions(view, i, prices, kappa, s, [&](std::int32_t o, double x0) {
    const double a = view.value(i, o);
    const double x = x0 * option_factor(view, i, o, factors);
    out.throughput += a * x0;
    out.scaled_throughput += a * x;
    out.scaled_time += x;
    out.options += 1.0;
    if (out.recorded) out.scaled[o] = x;
  });
  if (wanted > out.throughput) out.throughput = wanted;
  return out;
}

/// Extra time of a job on one option whose resources all have capacity to spare, after the
/// scaling of the over-used ones; when its free time cannot buy back what it lost there, part of
/// its time on slower options moves to that option too (a swap).
struct topup {
  std::int32_t option = -1;  ///< -1: none
  double time = 0.0;         ///< added to `option`, before the option's fill ratio
  /// Share of its time on options slower than `option` that the job moves there (0: no swap),
  /// before the fill ratio: with fill ratio f those options keep 1 - f cut of their time.
  double cut = 0.0;
  double gain = 0.0;  ///< the job's throughput gain, before the fill ratio
};

/// Whether option o of job i is one that a swap to `t.option` takes time from.
template <class View>
POPALLOC_HD inline bool swapped_from(const View& view, std::int64_t i, std::int32_t o,
                                     const topup& t) {
  return t.cut > 0.0 && o != t.option && view.value(i, o) < view.value(i, t.option);
}

/// The top-up of a job that the scaling took throughput from: the option with the largest
/// throughput x preference (preference > 0 on every resource it uses: only resources with spare
/// capacity have one), for the time that gives the lost throughput back, within the time the job
/// has left; what that time cannot buy back, the job buys by moving time from its slower options
/// (each by the same share). Utilities are nondecreasing and every part of a top-up, scaled by
/// its option's fill ratio, gains throughput, so a top-up never lowers the objective; with each
/// resource's top-ups scaled by a fill ratio <= spare / their usage, the capacities hold.
template <class View>
POPALLOC_HD inline topup choose_topup(const View& view, std::int64_t i, const double* preference,
                                      const scaled_job& job) {
  topup out;
  const double lost = job.throughput - job.scaled_throughput;
  // The margin keeps the time's sum below 1 in any order it is added (normalizer_for), with the
  // rounding of a swap's cut products.
  const double free_time = 1.0 - job.scaled_time - 2.3e-16 * (2.0 * job.options + 4.0);
  if (!(lost > 0.0) || !(free_time > 0.0)) return out;
  double best = 0.0, speed = 0.0;
  const std::int32_t options = view.option_count(i);
  for (std::int32_t o = 0; o < options; ++o) {
    const double a = view.value(i, o);
    const double score = a * option_factor(view, i, o, preference);
    if (score > best) best = score, speed = a, out.option = o;
  }
  if (out.option < 0) return out;
  out.time = lost / speed < free_time ? lost / speed : free_time;
  out.gain = speed * out.time;
  const double short_of = lost - out.gain;
  if (!(short_of > 0.0) || !job.recorded) return out;
  double slow_time = 0.0, slow_throughput = 0.0;
  for (std::int32_t o = 0; o < options; ++o) {
    const double a = view.value(i, o);
    if (o != out.option && a < speed)
      slow_time += job.scaled[o], slow_throughput += a * job.scaled[o];
  }
  const double gain_per_cut = speed * slow_time - slow_throughput;
  if (!(gain_per_cut > 0.0)) return out;
  out.cut = short_of < gain_per_cut ? short_of / gain_per_cut : 1.0;
  out.time += out.cut * slow_time;
  out.gain += out.cut * gain_per_cut;
  return out;
}

/// The top-ups of a repair as one array of 5m entries: the first tier's fill ratio and preference
/// of each resource, then the second tier's, then the confined fill ratio (below). A job takes its
/// first-tier top-up (choose_topup by the first preferences) at the fill ratio of its option, f1,
/// and what that leaves, 1 - f1, on its second-tier option (by the second preferences: resources
/// where the first tier's top-ups fit and room is left) at that option's fill ratio. Each top-up
/// alone is an allocation that restores the job (within its time), so the job ends at a convex
/// combination of its scaled allocation and its two topped-up ones: time within 1, fractions >= 0.
/// The second tier only for jobs with at most local_options::capacity options
/// (scaled_job::recorded). A job whose first tier is cut (f1 < 1) but that has no second-tier
/// option is confined: it takes its first-tier top-up at the confined fill ratio of its option (the
/// fifth row of the table) instead, so that a resource can give its room to the jobs that have
/// nowhere else to go first.
struct topup_tiers {
  const double* table = nullptr;  ///< 5m entries, or null: no top-ups
  std::int32_t m = 0;
  /// Jobs below their utility's saturation throughput (finite for target priority: the target)
  /// also want the rest of the way there back, not only what the scaling took: the top-ups of
  /// an allocation that fits but leaves jobs short of their targets while capacity is left.
  bool to_saturation = false;
  /// What job i wants back beyond its unscaled throughput (0: nothing).
  template <class View, class Utility>
  POPALLOC_HD double wanted(const View& view, std::int64_t i, const Utility& utility) const {
    if constexpr (has_saturation<Utility>::value) {
      if (!to_saturation) return 0.0;
      const double t = utility.saturation(view.parameters(i));
      return is_finite(t) ? t : 0.0;
    } else {
      return 0.0;
    }
  }
  POPALLOC_HD const double* fill(int tier) const { return table + 2 * tier * m; }
  POPALLOC_HD const double* preference(int tier) const { return table + (2 * tier + 1) * m; }
  POPALLOC_HD const double* confined_fill() const { return table + 4 * m; }
  static constexpr std::int32_t rows = 5;  ///< table entries per resource
};

/// A job's top-ups under topup_tiers: each tier's option (-1: none), its time before the fill
/// ratio, and its weight (the share of its top-up the job takes, fill ratio included).
struct job_topups {
  topup tier[2];
  double weight[2] = {0.0, 0.0};
  bool confined = false;  ///< first tier cut, no second-tier option (topup_tiers)
};

/// Calls visit(o, x) for every option of job i in increasing order with its fraction under the
/// stored state scaled by `factors` (x may be 0), plus the job's top-ups when `topups` has a
/// table: the allocation that repair and export read. Returns the top-ups.
template <class View, class Utility, class Visit>
POPALLOC_HD inline job_topups visit_repaired_fractions(
    const View& view, std::int64_t i, const double* prices, double kappa, const state_pointers& s,
    const double* factors, const topup_tiers& topups, const Utility& utility, Visit&& visit) {
  job_topups out;
  if (topups.table == nullptr) {
    visit_state_fractions(view, i, prices, kappa, s, [&](std::int32_t o, double x0) {
      visit(o, x0 * option_factor(view, i, o, factors));
    });
    return out;
  }
  const scaled_job job =
      scale_job(view, i, prices, kappa, s, factors, topups.wanted(view, i, utility));
  out.tier[0] = choose_topup(view, i, topups.preference(0), job);
  const topup& first = out.tier[0];
  if (first.option >= 0) out.weight[0] = option_factor(view, i, first.option, topups.fill(0));
  if (first.option >= 0 && out.weight[0] < 1.0) {
    if (job.recorded) out.tier[1] = choose_topup(view, i, topups.preference(1), job);
    if (out.tier[1].option >= 0) {
      out.weight[1] =
          (1.0 - out.weight[0]) * option_factor(view, i, out.tier[1].option, topups.fill(1));
    } else {
      out.confined = true;
      out.weight[0] = option_factor(view, i, first.option, topups.confined_fill());
    }
  }
  // What the swaps leave of option o's time, plus the time the top-ups add there.
  auto topped = [&](std::int32_t o, double x) {
    double kept = 1.0, added = 0.0;
    for (int k = 0; k < 2; ++k) {
      if (!(out.weight[k] > 0.0)) continue;
      if (swapped_from(view, i, o, out.tier[k])) kept -= out.weight[k] * out.tier[k].cut;
      if (o == out.tier[k].option) added += out.weight[k] * out.tier[k].time;
    }
    return x * kept + added;
  };
  auto receives = [&](std::int32_t o) {
    return (o == out.tier[0].option && out.weight[0] > 0.0) ||
           (o == out.tier[1].option && out.weight[1] > 0.0);
  };
  if (job.recorded) {  // the scaled fractions are at hand: no second pass over the state
    const std::int32_t options = view.option_count(i);
    for (std::int32_t o = 0; o < options; ++o)
      if (job.scaled[o] > 0.0 || receives(o)) visit(o, topped(o, job.scaled[o]));
    return out;
  }
  // One tier only here: the first tier's option gets its time in order.
  const std::int32_t extra_option = out.weight[0] > 0.0 ? first.option : -1;
  bool pending = extra_option >= 0;
  visit_state_fractions(view, i, prices, kappa, s, [&](std::int32_t o, double x0) {
    if (pending && o > extra_option) {
      visit(extra_option, topped(extra_option, 0.0));
      pending = false;
    }
    if (o == extra_option) pending = false;
    visit(o, topped(o, x0 * option_factor(view, i, o, factors)));
  });
  if (pending) visit(extra_option, topped(extra_option, 0.0));
  return out;
}

/// Utility and usage of a stored allocation after scaling each resource by `factors` (a job on
/// an over-used resource gives up the same fraction of its time there), with the top-ups when
/// `topups` has a table; with `tracked_tier` >= 0 also the usage of that tier's top-ups alone,
/// before the tier's fill ratios (what they have to fit into the room that is left): the
/// second tier's scaled by what the first leaves, 1 - w1. Tracking the second tier also tracks
/// the first-tier top-ups of the confined jobs (job_topups::confined), before any fill ratio.
/// Layout: usage[m], utility, smoothed utility, non_finite, then tier_usage[m] if tracked, then
/// confined_usage[m] if the second tier is tracked.
template <class View, class Utility>
struct repair_pass {
  View view;
  Utility utility;
  const double* factors = nullptr;
  topup_tiers topups;
  const double* prices = nullptr;       ///< prices of the stored evaluation
  const double* kappa_scale = nullptr;  ///< per job, null when not smoothing
  double level = 0.0;
  state_pointers state;
  std::int32_t m = 0;
  int tracked_tier = -1;

  POPALLOC_HD std::int32_t width() const {
    return m + 3 + (tracked_tier >= 0 ? m : 0) + (tracked_tier == 1 ? m : 0);
  }

  POPALLOC_HD void operator()(std::int64_t i, double* partial) const {
    const double kappa = kappa_scale != nullptr ? level * kappa_scale[i] : 0.0;
    double tau = 0.0, norm2 = 0.0;
    const job_topups t = visit_repaired_fractions(view, i, prices, kappa, state, factors, topups,
                                                  utility, [&](std::int32_t o, double x) {
                                                    tau += x * view.value(i, o);
                                                    norm2 += x * x;
                                                    add_usage(view, i, o, x, partial);
                                                  });
    if (tracked_tier == 0) {
      add_usage(view, i, t.tier[0].option, t.tier[0].time, partial + m + 3);
    } else if (tracked_tier == 1) {
      if (t.tier[1].option >= 0)
        add_usage(view, i, t.tier[1].option, (1.0 - t.weight[0]) * t.tier[1].time, partial + m + 3);
      if (t.confined) add_usage(view, i, t.tier[0].option, t.tier[0].time, partial + 2 * m + 3);
    }
    const double u = utility.value(tau, view.parameters(i));
    partial[m] += u;
    partial[m + 1] += u - 0.5 * kappa * norm2;
    if (!is_finite(u)) partial[m + 2] += 1.0;
  }
};

/// The kept allocation of every job in compressed sparse rows, in two passes: export_count_pass
/// counts each job's positive fractions (and writes its throughput), the caller turns the counts
/// into row offsets, and export_write_pass fills the rows. Both compute the same fractions, so
/// the counts match; no n x options buffer is ever allocated.
template <class View, class Utility>
struct export_pass_base {
  View view;
  Utility utility;
  const double* factors = nullptr;
  topup_tiers topups;  ///< see repair_pass
  const double* prices = nullptr;
  const double* kappa_scale = nullptr;
  double level = 0.0;
  state_pointers state;

  /// Calls emit(o, x) for every option of job i with a positive repaired fraction x.
  template <class Emit>
  POPALLOC_HD void fractions(std::int64_t i, Emit&& emit) const {
    const double kappa = kappa_scale != nullptr ? level * kappa_scale[i] : 0.0;
    visit_repaired_fractions(view, i, prices, kappa, state, factors, topups, utility,
                             [&](std::int32_t o, double x) {
                               if (x > 0.0) emit(o, x);
                             });
  }
};

/// Collects one job's (option, fraction) pairs into caller-owned arrays of at least
/// option_count entries: an emitter for export_pass_base::fractions that host code can pass
/// (a host lambda cannot be called from the host-device fractions() under nvcc).
struct row_buffer {
  std::int32_t* option = nullptr;
  double* fraction = nullptr;
  std::int32_t count = 0;
  POPALLOC_HD void operator()(std::int32_t o, double x) {
    option[count] = o;
    fraction[count] = x;
    ++count;
  }
};

/// Also sums the exported allocation's objective (partial[0]; reported exactly, where certify()
/// may have used the folded lower bound).
template <class View, class Utility>
struct export_count_pass : export_pass_base<View, Utility> {
  std::int32_t* count_out = nullptr;  ///< one per job
  double* throughput_out = nullptr;   ///< one per job

  POPALLOC_HD std::int32_t width() const { return 1; }
  POPALLOC_HD void operator()(std::int64_t i, double* partial) const {
    std::int32_t count = 0;
    double tau = 0.0;
    const View& v = this->view;
    this->fractions(i, [&](std::int32_t o, double x) {
      ++count;
      tau += x * v.value(i, o);
    });
    count_out[i] = count;
    throughput_out[i] = tau;
    partial[0] += this->utility.value(tau, v.parameters(i));
  }
};

template <class View, class Utility>
struct export_write_pass : export_pass_base<View, Utility> {
  const std::int64_t* row_offset = nullptr;  ///< n + 1, from the counts
  std::int32_t* option_out = nullptr;
  double* fraction_out = nullptr;

  POPALLOC_HD void operator()(std::int64_t i) const {
    std::int64_t k = row_offset[i];
    this->fractions(i, [&](std::int32_t o, double x) {
      option_out[k] = o;
      fraction_out[k] = x;
      ++k;
    });
  }
};

/// Number of jobs, as a reduction: a backend that holds only a shard of the jobs (MPI) sees the
/// total over all shards, so nothing on the host side has to read the job count directly.
struct job_count_pass {
  POPALLOC_HD std::int32_t width() const { return 1; }
  POPALLOC_HD void operator()(std::int64_t /*i*/, double* partial) const { partial[0] += 1.0; }
};

/// How many times its equal share of the capacities a job's smoothing assumes it may get. The
/// equal share undercounts what a job gets once other jobs leave its resources for their
/// alternatives (a job confined to a scarce resource: the 1/n share assumes all n jobs stay on
/// it). Where the equal share is 1/16 of the job's time or more the smoothing keeps the full-time
/// scale, so problems at ordinary scales keep the smoothing the method's other constants were
/// chosen with (docs/method.md, "Why regularise", has the choice between 1, 16 and 100).
constexpr double share_headroom = 16.0;

/// Marginal value of each resource at an equal-share allocation (resalloc's initial prices,
/// generalised to bundles: an option's marginal value is split over the units it consumes).
/// Layout: value[m] at the equal share and value[m] at zero throughput (the caller divides by n),
/// then sum_i f_i(0), the count of jobs whose f_i(0) is not finite, sum_i t_i f_i'(t_i) at the
/// equal share over those jobs (engine::elasticity), and sum_i f_i(max_o a_io), the objective with
/// unlimited capacities (engine::unlimited_utility; f_i is nondecreasing, so a job alone does
/// best on its fastest open option). One pass serves both price estimates; a non-finite marginal
/// (log at 0) contributes nothing. Also writes each job's regularisation scale
/// (regularization_scale) at the share of its time it can expect, s = min(1, share_headroom x
/// its equal-share time: the sum over its options of its 1/n of each one's bottleneck) for
/// strictly concave utilities, and at its full time (s = 1) for piecewise-linear ones, whose
/// smoothed responses jump between options and which needed up to twice the evaluations on some
/// families with s below 1.
template <class View, class Utility>
struct initial_price_pass {
  View view;
  Utility utility;
  const double* capacity = nullptr;  ///< R (m entries), then R / jobs (m entries)
  std::int32_t m = 0;
  double jobs = 0.0;              ///< n over all shards (job_count_pass), not the local view.n
  double* kappa_scale = nullptr;  ///< per job: regularization_scale

  POPALLOC_HD std::int32_t width() const { return 2 * m + 4; }

  /// A dense problem with every resource open and every amount 1.
  POPALLOC_HD bool plain_dense() const {
    if constexpr (is_dense_view<View>::value) {
      return view.unit_and_open();
    } else {
      return false;
    }
  }

  /// Job i's time at an equal share (each job gets 1/n of each of its options' bottleneck
  /// resource), summed over its options, and the throughput it gives.
  POPALLOC_HD void equal_share(std::int64_t i, double& share_sum, double& tau) const {
    const std::int32_t count = view.option_count(i);
    for (std::int32_t o = 0; o < count; ++o) {
      const double a = view.value(i, o);
      if (!(a > 0.0)) continue;
      double share = 1.0;
      const std::int32_t c = view.consumption_count(i, o);
      for (std::int32_t k = 0; k < c; ++k) {
        const double amount = view.consumption_amount(i, o, k);
        if (amount > 0.0) {
          // Unit amounts (dense problems without demands) skip the division.
          const std::int32_t j = view.consumption_resource(i, o, k);
          const double s = amount == 1.0 ? capacity[m + j] : capacity[j] / (jobs * amount);
          if (s < share) share = s;
        }
      }
      share_sum += share;
      tau += share * a;
    }
  }

  /// equal_share and the fastest option of a dense job in one scan of its row.
  POPALLOC_HD void dense_equal_share(std::int64_t i, double& fastest, double& share_sum,
                                     double& tau) const {
    if (plain_dense()) {
      // The loop below with every resource open and every amount 1, bit for bit.
      const auto* row = view.row(i);
      for (std::int32_t o = 0; o < m; ++o) {
        const double a = static_cast<double>(row[o]);
        if (!(a > 0.0)) continue;
        if (a > fastest) fastest = a;
        const double share = capacity[m + o] < 1.0 ? capacity[m + o] : 1.0;
        share_sum += share;
        tau += share * a;
      }
      return;
    }
    for (std::int32_t o = 0; o < m; ++o) {
      const double a = view.value(i, o);
      if (!(a > 0.0)) continue;
      if (a > fastest) fastest = a;
      const double amount = view.amount(i, o);
      double share = 1.0;
      if (amount > 0.0) {
        const double s = amount == 1.0 ? capacity[m + o] : capacity[o] / (jobs * amount);
        if (s < share) share = s;
      }
      share_sum += share;
      tau += share * a;
    }
  }

  POPALLOC_HD void operator()(std::int64_t i, double* partial) const {
    const std::int32_t count = view.option_count(i);
    const job_parameters job = view.parameters(i);
    const double idle = utility.value(0.0, job);
    double fastest = 0.0, share_sum = 0.0, tau = 0.0;
    if constexpr (is_dense_view<View>::value) {
      dense_equal_share(i, fastest, share_sum, tau);
    } else {
      for (std::int32_t o = 0; o < count; ++o) {
        const double a = view.value(i, o);
        if (a > fastest) fastest = a;
      }
      equal_share(i, share_sum, tau);
    }
    partial[2 * m + 3] += utility.value(fastest, job);
    const bool idle_finite = is_finite(idle);
    if (idle_finite) {
      partial[2 * m] += idle;
    } else {
      partial[2 * m + 1] += 1.0;
    }
    if (share_sum > 1.0) tau /= share_sum;
    const double expected_time = share_headroom * share_sum;
    const bool by_share = !Utility::piecewise_linear && expected_time > 0.0 && expected_time < 1.0;
    kappa_scale[i] = regularization_scale(fastest, job, utility, by_share ? expected_time : 1.0);
    double marginal = utility.marginal(tau, job);
    double marginal_at_zero = utility.marginal(0.0, job);
    if (!is_finite(marginal)) marginal = 0.0;
    // t f'(t) at the equal share, for jobs whose f(0) = -inf: w for every log job.
    if (!idle_finite) partial[2 * m + 2] += tau * marginal;
    if (!is_finite(marginal_at_zero)) marginal_at_zero = 0.0;
    if (marginal == 0.0 && marginal_at_zero == 0.0) return;
    if constexpr (is_dense_view<View>::value) {
      // Zero contributions (marginal_at_zero is 0 for log) leave the sums as they are.
      if (plain_dense()) {
        const auto* row = view.row(i);
        for (std::int32_t o = 0; o < count; ++o) {
          const double a = static_cast<double>(row[o]);
          if (!(a > 0.0)) continue;
          partial[o] += marginal * a;
          if (marginal_at_zero != 0.0) partial[m + o] += marginal_at_zero * a;
        }
        return;
      }
      for (std::int32_t o = 0; o < count; ++o) {
        const double a = view.value(i, o), total = view.amount(i, o);
        if (!(a > 0.0) || !(total > 0.0)) continue;
        partial[o] += total == 1.0 ? marginal * a : marginal * a / total;
        if (marginal_at_zero != 0.0)
          partial[m + o] += total == 1.0 ? marginal_at_zero * a : marginal_at_zero * a / total;
      }
    } else {  // nvcc flags a loop after a discarded branch's return as unreachable
      for (std::int32_t o = 0; o < count; ++o) {
        const double a = view.value(i, o);
        if (!(a > 0.0)) continue;
        const std::int32_t c = view.consumption_count(i, o);
        double total = 0.0;
        for (std::int32_t k = 0; k < c; ++k) total += view.consumption_amount(i, o, k);
        if (!(total > 0.0)) continue;
        for (std::int32_t k = 0; k < c; ++k) {
          if (view.consumption_amount(i, o, k) > 0.0) {
            const std::int32_t j = view.consumption_resource(i, o, k);
            partial[j] += total == 1.0 ? marginal * a : marginal * a / total;
            partial[m + j] += total == 1.0 ? marginal_at_zero * a : marginal_at_zero * a / total;
          }
        }
      }
    }
  }
};

}  // namespace popalloc::detail
