// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Compile-time check of the operations a utility must provide.
///
/// A utility is a copyable struct (usable in device code, so no virtual functions) with
/// \code
///   static constexpr bool piecewise_linear;             // true: the solver smooths it
///   static constexpr bool uses_target;                  // validation: targets required
///   static constexpr bool requires_positive_weight;     // validation: weight > 0
///   static constexpr bool requires_positive_throughput; // validation: some a_io > 0 per job
///   double value(double t, const job_parameters&) const;      // f(t), may be -inf
///   double marginal(double t, const job_parameters&) const;   // right derivative f'(t+)
///   double curvature(double t, const job_parameters&) const;  // -f''(t) >= 0, +inf at a kink
///   double maximize(double slope, double mu, double lo, double hi,
///                   const job_parameters&) const;  // argmax_{lo<=t<=hi} f(t)-mu t^2/2-slope t
/// \endcode
/// Optionally, a strictly concave utility may provide the root of t = alpha + beta f'(t),
/// \code
///   double piece_root(double alpha, double beta, const job_parameters&) const;  // beta >= 0
/// \endcode
/// in closed form (log does); without it the solver finds that root by a safeguarded Newton
/// iteration on `marginal` and `curvature`.
/// A piecewise-linear utility must have the shape
/// f(t) = f(0) + f'(0) min(t, T) + f'(T) max(t - T, 0) with 0 <= f'(T) <= f'(0) (slope
/// `marginal(0)` up to a saturation throughput T, slope `marginal(T)` beyond: flat for
/// target_priority, the weight for linear_with_floor) and also provide
/// \code
///   double saturation(const job_parameters&) const;  // T, or HUGE_VAL for none
/// \endcode
/// because the solver smooths such utilities by regularising the allocation (see
/// detail/regularized_response.hpp).
/// f must be concave and nondecreasing. Mark the member functions POPALLOC_HD to use the utility
/// with the Thrust CUDA backend.
#pragma once

#include <type_traits>
#include <utility>

#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::detail {

template <class U, class = void>
struct has_value : std::false_type {};
template <class U>
struct has_value<U, std::void_t<decltype(double{std::declval<const U&>().value(
                        0.0, std::declval<const job_parameters&>())})>> : std::true_type {};

template <class U, class = void>
struct has_marginal : std::false_type {};
template <class U>
struct has_marginal<U, std::void_t<decltype(double{std::declval<const U&>().marginal(
                           0.0, std::declval<const job_parameters&>())})>> : std::true_type {};

template <class U, class = void>
struct has_curvature : std::false_type {};
template <class U>
struct has_curvature<U, std::void_t<decltype(double{std::declval<const U&>().curvature(
                            0.0, std::declval<const job_parameters&>())})>> : std::true_type {};

template <class U, class = void>
struct has_maximize : std::false_type {};
template <class U>
struct has_maximize<U, std::void_t<decltype(double{std::declval<const U&>().maximize(
                           0.0, 0.0, 0.0, 0.0, std::declval<const job_parameters&>())})>>
    : std::true_type {};

template <class U, class = void>
struct has_saturation : std::false_type {};
template <class U>
struct has_saturation<U, std::void_t<decltype(double{std::declval<const U&>().saturation(
                             std::declval<const job_parameters&>())})>> : std::true_type {};

template <class U, class = void>
struct has_piece_root : std::false_type {};
template <class U>
struct has_piece_root<U, std::void_t<decltype(double{std::declval<const U&>().piece_root(
                             0.0, 0.0, std::declval<const job_parameters&>())})>> : std::true_type {
};

template <class U, class = void>
struct has_flags : std::false_type {};
template <class U>
struct has_flags<U, std::void_t<decltype(bool{U::piecewise_linear}), decltype(bool{U::uses_target}),
                                decltype(bool{U::requires_positive_weight}),
                                decltype(bool{U::requires_positive_throughput})>> : std::true_type {
};

/// Instantiated by every solver entry point: a readable error instead of a template backtrace.
template <class U>
constexpr bool check_utility() {
  static_assert(std::is_copy_constructible_v<U>, "popalloc: a utility must be copyable");
  static_assert(has_value<U>::value,
                "popalloc: utility lacks `double value(double t, const job_parameters&) const`");
  static_assert(has_marginal<U>::value,
                "popalloc: utility lacks `double marginal(double t, const job_parameters&) const`");
  static_assert(
      has_curvature<U>::value,
      "popalloc: utility lacks `double curvature(double t, const job_parameters&) const`");
  static_assert(has_maximize<U>::value,
                "popalloc: utility lacks `double maximize(double slope, double mu, double lo, "
                "double hi, const job_parameters&) const`");
  static_assert(has_flags<U>::value,
                "popalloc: utility lacks the static constexpr bool flags piecewise_linear, "
                "uses_target, requires_positive_weight, requires_positive_throughput");
  if constexpr (has_flags<U>::value) {
    static_assert(!U::piecewise_linear || has_saturation<U>::value,
                  "popalloc: a piecewise_linear utility needs "
                  "`double saturation(const job_parameters&) const`");
  }
  return true;
}

}  // namespace popalloc::detail
