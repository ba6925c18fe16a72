// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief nvcc compile-only check of the CUDA path: instantiates the Thrust backend of the solver
/// for every built-in utility on one problem type per translation unit (compile_check_*.cu, which
/// nvcc builds in parallel), so host-only functions in device code and `device_reference`
/// deduction errors fail CI even without a GPU.
#pragma once

#include <popalloc/backend/thrust.hpp>
#include <popalloc/popalloc.hpp>

namespace popalloc_cuda_check {

template <class Problem>
void instantiate_all(const Problem& problem, const popalloc::solver_options& options) {
  using popalloc::backend::thrust;
  (void)popalloc::solve<thrust>(problem, popalloc::utility::linear{}, options);
  (void)popalloc::solve<thrust>(problem, popalloc::utility::target_priority{}, options);
  (void)popalloc::solve<thrust>(problem, popalloc::utility::log{}, options);
  (void)popalloc::solve<thrust>(problem, popalloc::utility::power{0.5}, options);
}

}  // namespace popalloc_cuda_check
