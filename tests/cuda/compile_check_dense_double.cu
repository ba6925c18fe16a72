// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief nvcc compile-only check of the CUDA path for popalloc::dense_problem<double> with the
/// power utility (the other built-in utilities on this problem type are instantiated by
/// benchmarks/gpu/gpu_check.cu; see instantiate.cuh).
#include "instantiate.cuh"

namespace popalloc_cuda_check {

void dense_double(const popalloc::dense_problem<double>& p, const popalloc::solver_options& o) {
  instantiate(p, popalloc::utility::power{0.5}, o);
}

}  // namespace popalloc_cuda_check
