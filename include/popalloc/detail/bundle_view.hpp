// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Raw-pointer view of a bundle problem, readable from host and device code.
#pragma once

#include <cstdint>

#include "popalloc/config.hpp"
#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::detail {

/// Options of job i are job_option_offset[i] .. job_option_offset[i+1]-1 (CSR).
template <class Scalar>
struct bundle_view {
  const std::int64_t* job_option_offset = nullptr;
  const Scalar* option_value = nullptr;
  const std::int64_t* option_consumption_offset = nullptr;
  const std::int32_t* resource_of = nullptr;     ///< per consumption entry
  const Scalar* amount_of = nullptr;             ///< per consumption entry
  const unsigned char* option_closed = nullptr;  ///< per option: uses a closed resource
  const Scalar* weight = nullptr;
  const Scalar* target = nullptr;
  std::int64_t n = 0;
  std::int32_t m = 0;

  POPALLOC_HD std::int32_t option_count(std::int64_t i) const {
    return static_cast<std::int32_t>(job_option_offset[i + 1] - job_option_offset[i]);
  }
  POPALLOC_HD double value(std::int64_t i, std::int32_t o) const {
    const std::int64_t g = job_option_offset[i] + o;
    if (option_closed != nullptr && option_closed[g] != 0) return 0.0;
    return static_cast<double>(option_value[g]);
  }
  POPALLOC_HD double cost(std::int64_t i, std::int32_t o, const double* prices) const {
    const std::int64_t g = job_option_offset[i] + o;
    double c = 0.0;
    for (std::int64_t k = option_consumption_offset[g]; k < option_consumption_offset[g + 1]; ++k)
      c += prices[resource_of[k]] * static_cast<double>(amount_of[k]);
    return c;
  }
  POPALLOC_HD std::int32_t consumption_count(std::int64_t i, std::int32_t o) const {
    const std::int64_t g = job_option_offset[i] + o;
    return static_cast<std::int32_t>(option_consumption_offset[g + 1] -
                                     option_consumption_offset[g]);
  }
  POPALLOC_HD std::int32_t consumption_resource(std::int64_t i, std::int32_t o,
                                                std::int32_t k) const {
    return resource_of[option_consumption_offset[job_option_offset[i] + o] + k];
  }
  POPALLOC_HD double consumption_amount(std::int64_t i, std::int32_t o, std::int32_t k) const {
    return static_cast<double>(amount_of[option_consumption_offset[job_option_offset[i] + o] + k]);
  }
  POPALLOC_HD job_parameters parameters(std::int64_t i) const {
    job_parameters p;
    if (weight != nullptr) p.weight = static_cast<double>(weight[i]);
    if (target != nullptr) p.target = static_cast<double>(target[i]);
    return p;
  }
  /// Position of job i's first option in the problem's option order.
  POPALLOC_HD std::int64_t option_base(std::int64_t i) const { return job_option_offset[i]; }
};

}  // namespace popalloc::detail
