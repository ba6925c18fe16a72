// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief What the solver needs to know about a backend tag and a problem type.
#pragma once

#include <type_traits>

#include <Eigen/Core>

#include "popalloc/bundle_problem.hpp"
#include "popalloc/dense_problem.hpp"

namespace popalloc::detail {

/// Maps a backend tag to its executor; each backend header specialises it for its own tag.
template <class Backend>
struct executor_for;

template <class Problem>
struct is_dense_problem : std::false_type {};
template <class Scalar>
struct is_dense_problem<dense_problem<Scalar>> : std::true_type {};

template <class Scalar>
const Eigen::VectorXd& capacity_of(const dense_problem<Scalar>& problem) {
  return problem.capacity;
}
template <class Scalar>
const Eigen::VectorXd& capacity_of(const bundle_problem<Scalar>& problem) {
  return problem.capacity();
}

}  // namespace popalloc::detail
