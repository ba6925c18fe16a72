// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief nvcc compile-only check of the CUDA path (placeholder until the Thrust backend lands):
/// includes the facade with POPALLOC_HAS_THRUST=1 and instantiates a POPALLOC_HD functor in a
/// Thrust reduction, which is where host-only or `device_reference`-deducing functors fail.
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/transform_reduce.h>

#include <popalloc/popalloc.hpp>

namespace {

struct square {
  POPALLOC_HD double operator()(double x) const { return x * x; }
};

}  // namespace

double popalloc_cuda_compile_check_sum_of_squares(const thrust::device_vector<double>& v) {
  return thrust::transform_reduce(thrust::device, v.begin(), v.end(), square{}, 0.0,
                                  thrust::plus<double>{});
}
