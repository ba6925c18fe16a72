// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Raw-pointer view of a dense problem, readable from host and device code.
#pragma once

#include <cstdint>
#include <type_traits>

#include "popalloc/config.hpp"
#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::detail {

/// Options are resource types: option o of any job consumes d_io units of resource o.
template <class Scalar>
struct dense_view {
  const Scalar* throughput = nullptr;     ///< n x m row-major
  const Scalar* demand = nullptr;         ///< n x m row-major, or null
  const Scalar* job_demand = nullptr;     ///< n, or null
  const Scalar* weight = nullptr;         ///< n, or null (all 1)
  const Scalar* target = nullptr;         ///< n, or null (all 0)
  const unsigned char* closed = nullptr;  ///< m flags (capacity 0), or null
  std::int64_t n = 0;
  std::int32_t m = 0;

  POPALLOC_HD std::int32_t option_count(std::int64_t /*i*/) const { return m; }
  POPALLOC_HD double value(std::int64_t i, std::int32_t o) const {
    if (closed != nullptr && closed[o] != 0) return 0.0;
    return static_cast<double>(throughput[i * m + o]);
  }
  POPALLOC_HD double amount(std::int64_t i, std::int32_t o) const {
    if (demand != nullptr) return static_cast<double>(demand[i * m + o]);
    if (job_demand != nullptr) return static_cast<double>(job_demand[i]);
    return 1.0;
  }
  POPALLOC_HD double cost(std::int64_t i, std::int32_t o, const double* prices) const {
    return prices[o] * amount(i, o);
  }
  POPALLOC_HD std::int32_t consumption_count(std::int64_t /*i*/, std::int32_t /*o*/) const {
    return 1;
  }
  POPALLOC_HD std::int32_t consumption_resource(std::int64_t /*i*/, std::int32_t o,
                                                std::int32_t /*k*/) const {
    return o;
  }
  POPALLOC_HD double consumption_amount(std::int64_t i, std::int32_t o, std::int32_t /*k*/) const {
    return amount(i, o);
  }
  POPALLOC_HD job_parameters parameters(std::int64_t i) const {
    job_parameters p;
    if (weight != nullptr) p.weight = static_cast<double>(weight[i]);
    if (target != nullptr) p.target = static_cast<double>(target[i]);
    return p;
  }
  /// Position of job i's first option in the problem's option order.
  POPALLOC_HD std::int64_t option_base(std::int64_t i) const { return i * m; }
  /// Every resource open and every amount 1: value(i, o) is row(i)[o] and cost(i, o, p) is p[o].
  POPALLOC_HD bool unit_and_open() const {
    return closed == nullptr && demand == nullptr && job_demand == nullptr;
  }
  /// Job i's throughputs (m entries).
  POPALLOC_HD const Scalar* row(std::int64_t i) const { return throughput + option_base(i); }
};

template <class View>
struct is_dense_view : std::false_type {};
template <class Scalar>
struct is_dense_view<dense_view<Scalar>> : std::true_type {};

}  // namespace popalloc::detail
