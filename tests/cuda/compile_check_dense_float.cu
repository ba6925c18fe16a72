// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief nvcc compile-only check of the CUDA path for popalloc::dense_problem<float>
/// (instantiate.cuh).
#include "instantiate.cuh"

namespace popalloc_cuda_check {

void dense_float(const popalloc::dense_problem<float>& p, const popalloc::solver_options& o) {
  instantiate_both_kinds(p, o);
}

}  // namespace popalloc_cuda_check
