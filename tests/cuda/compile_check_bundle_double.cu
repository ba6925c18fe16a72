// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief nvcc compile-only check of the CUDA path for popalloc::bundle_problem<double>
/// (instantiate.cuh).
#include "instantiate.cuh"

namespace popalloc_cuda_check {

void bundle_double(const popalloc::bundle_problem<double>& p, const popalloc::solver_options& o) {
  instantiate_both_kinds(p, o);
}

}  // namespace popalloc_cuda_check
