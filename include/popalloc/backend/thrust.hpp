// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Thrust backend: the same per-job passes as the CPU backend, run by thrust::for_each on
/// the device system chosen at compile time (CUDA on a GPU; OMP or CPP on any CPU, which is how CI
/// tests this code path without a GPU). Problem data stays in device memory for the whole solve;
/// per evaluation only the m prices go down and the m + m^2 + 5 sums come back.
#pragma once

#include <cstdint>
#include <vector>

#include <thrust/copy.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include "popalloc/config.hpp"
#include "popalloc/detail/host_executor.hpp"
#include "popalloc/detail/traits.hpp"

namespace popalloc {
namespace backend {

/// \brief Selects the Thrust backend (device system from THRUST_DEVICE_SYSTEM): include this
/// header beside popalloc/popalloc.hpp and call popalloc::solve<popalloc::backend::thrust>.
struct thrust {};

}  // namespace backend

namespace detail {

/// Chunk c of the reduction. On the GPU chunk c takes jobs c, c + chunks, c + 2 chunks, ...
/// (neighbouring threads read neighbouring jobs: coalesced). On CPU device systems it takes the
/// same contiguous block as the CPU backend, so the Thrust OMP/CPP build reproduces the CPU
/// backend's sums bit for bit. Either layout is fixed, so results are deterministic.
template <class Pass>
struct chunk_worker {
  Pass pass;
  double* partial = nullptr;
  std::int32_t width = 0;
  std::int64_t n = 0;
  std::int64_t chunks = 0;
  bool strided = false;
  POPALLOC_HD void operator()(std::int64_t c) const {
    double* acc = partial + c * width;
    for (std::int32_t k = 0; k < width; ++k) acc[k] = 0.0;
    if (strided) {
      for (std::int64_t i = c; i < n; i += chunks) pass(i, acc);
    } else {
      const std::int64_t per_chunk = (n + chunks - 1) / chunks;
      const std::int64_t end = (c + 1) * per_chunk < n ? (c + 1) * per_chunk : n;
      for (std::int64_t i = c * per_chunk; i < end; ++i) pass(i, acc);
    }
  }
};

/// out[k] = sum over chunks of partial[c][k], in chunk order.
struct chunk_column_sum {
  const double* partial = nullptr;
  double* out = nullptr;
  std::int32_t width = 0;
  std::int64_t chunks = 0;
  POPALLOC_HD void operator()(std::int32_t k) const {
    double sum = 0.0;
    for (std::int64_t c = 0; c < chunks; ++c) sum += partial[c * width + k];
    out[k] = sum;
  }
};

class thrust_executor {
 public:
  static constexpr bool is_host = false;
  template <class T>
  using vector = ::thrust::device_vector<T>;

  explicit thrust_executor(int /*threads: set by the device system*/) {}

  template <class T>
  static T* data(vector<T>& v) {
    return ::thrust::raw_pointer_cast(v.data());
  }
  template <class T>
  static const T* data(const vector<T>& v) {
    return ::thrust::raw_pointer_cast(v.data());
  }
  template <class T>
  void upload(const T* source, std::size_t count, vector<T>& destination) const {
    destination.assign(source, source + count);
  }
  /// `count` elements, contents unspecified (every pass that reads them writes them first).
  template <class T>
  void allocate(std::size_t count, vector<T>& destination) const {
    destination.resize(count);
  }
  template <class T>
  void fill(std::size_t count, T value, vector<T>& destination) const {
    destination.assign(count, value);
  }
  template <class T>
  void download(const vector<T>& source, T* destination) const {
    ::thrust::copy(source.begin(), source.end(), destination);
  }

  template <class F>
  void for_each(std::int64_t n, const F& f) const {
    ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::int64_t>(0),
                       ::thrust::counting_iterator<std::int64_t>(n), f);
  }

  template <class F>
  void reduce(std::int64_t n, const F& f, double* out) {
#if THRUST_DEVICE_SYSTEM == THRUST_DEVICE_SYSTEM_CUDA
    const bool strided = true;
    const std::int64_t chunks = chunk_count(n, f.width(), std::int64_t{1} << 16, 16);
#else
    const bool strided = false;
    const std::int64_t chunks =
        chunk_count(n, f.width(), host_executor::max_chunks, host_executor::min_chunk_jobs);
#endif
    const std::int32_t width = f.width();
    partial_.resize(static_cast<std::size_t>(chunks * width));
    sums_.resize(static_cast<std::size_t>(width));
    chunk_worker<F> work{f, data(partial_), width, n, chunks, strided};
    ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::int64_t>(0),
                       ::thrust::counting_iterator<std::int64_t>(chunks), work);
    chunk_column_sum total{data(partial_), data(sums_), width, chunks};
    ::thrust::for_each(::thrust::device, ::thrust::counting_iterator<std::int32_t>(0),
                       ::thrust::counting_iterator<std::int32_t>(width), total);
    ::thrust::copy(sums_.begin(), sums_.end(), out);
  }

 private:
  vector<double> partial_, sums_;
};

template <>
struct executor_for<backend::thrust> {
  using type = thrust_executor;
};

}  // namespace detail
}  // namespace popalloc
