// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief nvcc compile-only check of the CUDA path: instantiates the Thrust backend of the solver
/// so that host-only functions in device code and `device_reference` deduction errors fail CI
/// even without a GPU. Each compile_check_*.cu is one translation unit, which nvcc builds in
/// parallel with the others and with benchmarks/gpu/gpu_check.cu.
///
/// Coverage, without instantiating a combination twice (each costs minutes of cicc and ptxas):
/// benchmarks/gpu/gpu_check.cu instantiates dense_problem<double> with linear, target_priority and
/// log; compile_check_dense_double.cu adds power; the other problem types get one piecewise-linear
/// utility (target_priority, which has every branch linear has and the tiers) and one smooth one
/// (log, which has the folded repair power lacks).
#pragma once

#include <popalloc/backend/thrust.hpp>
#include <popalloc/popalloc.hpp>

namespace popalloc_cuda_check {

template <class Problem, class Utility>
void instantiate(const Problem& problem, const Utility& utility,
                 const popalloc::solver_options& options) {
  (void)popalloc::solve<popalloc::backend::thrust>(problem, utility, options);
}

/// One piecewise-linear and one smooth utility on `Problem`.
template <class Problem>
void instantiate_both_kinds(const Problem& problem, const popalloc::solver_options& options) {
  instantiate(problem, popalloc::utility::target_priority{}, options);
  instantiate(problem, popalloc::utility::log{}, options);
}

}  // namespace popalloc_cuda_check
