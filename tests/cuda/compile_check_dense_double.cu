// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief nvcc compile-only check of the CUDA path for popalloc::dense_problem<double>
/// (instantiate_all.cuh).
#include "instantiate_all.cuh"

namespace popalloc_cuda_check {

void dense_double(const popalloc::dense_problem<double>& p, const popalloc::solver_options& o) {
  instantiate_all(p, o);
}

}  // namespace popalloc_cuda_check
