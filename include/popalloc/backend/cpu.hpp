// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief CPU backend: the shared per-job passes run in OpenMP loops over host memory.
#pragma once

#include "popalloc/detail/host_executor.hpp"
#include "popalloc/detail/traits.hpp"

namespace popalloc {
namespace backend {

/// \brief Selects the CPU backend (Eigen data, OpenMP threads; serial without OpenMP).
struct cpu {};

}  // namespace backend

namespace detail {

template <>
struct executor_for<backend::cpu> {
  using type = host_executor;
};

}  // namespace detail
}  // namespace popalloc
