// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The host executor: runs the per-job passes in OpenMP loops over host memory, with a
/// chunk layout that depends only on the problem size (the same bits on any number of threads).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

#include "popalloc/config.hpp"
#include "popalloc/detail/uninitialized_allocator.hpp"

#if POPALLOC_OPENMP_ACTIVE
#include <omp.h>
#endif

namespace popalloc {
namespace detail {

/// Fixed chunking: the chunk layout depends only on the problem size, never on the thread count,
/// and chunk partial sums are added in chunk order, so results are bitwise reproducible for any
/// number of threads.
inline std::int64_t chunk_count(std::int64_t n, std::int32_t width, std::int64_t max_chunks,
                                std::int64_t min_chunk_jobs) {
  const std::int64_t by_size = (n + min_chunk_jobs - 1) / min_chunk_jobs;
  // At least 4 chunks when the jobs allow, so that a wide reduction (thousands of resources:
  // an m x m Hessian per chunk) still runs in parallel.
  const std::int64_t by_memory = std::max<std::int64_t>(4, (std::int64_t{1} << 22) / width);
  return std::max<std::int64_t>(1, std::min({by_size, by_memory, max_chunks}));
}

/// Runs pass functors over host memory with OpenMP.
class host_executor {
 public:
  static constexpr bool is_host = true;
  static constexpr std::int64_t max_chunks = 256;
  /// Small enough that a problem of ten thousand jobs makes an even number of chunks (10), so
  /// that two threads share them evenly: with an odd count one thread runs a chunk more.
  static constexpr std::int64_t min_chunk_jobs = 1024;
  static constexpr std::int64_t doubles_per_line = 8;  ///< 64-byte cache lines
  /// Offset between per-thread or per-chunk accumulators of `width` doubles that every job
  /// writes: a cache line or more between one's end and the next's start, so no two threads
  /// write one line (false sharing made the 1e4-job equal-share pass slower on 2 threads than
  /// on 1).
  static constexpr std::size_t padded_stride(std::size_t width) {
    constexpr auto line = static_cast<std::size_t>(doubles_per_line);
    return (width + 2 * line - 1) / line * line;
  }
  /// Below this many elements, fills and copies run on one thread.
  static constexpr std::int64_t parallel_copy_min = 65536;
  template <class T>
  using vector = std::vector<T, uninitialized_allocator<T>>;

  explicit host_executor(int threads) : threads_(threads) {
#if POPALLOC_OPENMP_ACTIVE
    if (threads_ <= 0) threads_ = omp_get_max_threads();
#else
    threads_ = 1;
#endif
  }

  int threads() const { return threads_; }

  template <class T, class A>
  static T* data(std::vector<T, A>& v) {
    return v.data();
  }
  template <class T, class A>
  static const T* data(const std::vector<T, A>& v) {
    return v.data();
  }
  template <class T, class A>
  void upload(const T* source, std::size_t count, std::vector<T, A>& destination) const {
    destination.resize(count);
    copy(source, count, destination.data());
  }
  /// `count` elements, contents unspecified (every pass that reads them writes them first).
  template <class T, class A>
  void allocate(std::size_t count, std::vector<T, A>& destination) const {
    destination.resize(count);
  }
  template <class T, class A>
  void fill(std::size_t count, T value, std::vector<T, A>& destination) const {
    destination.resize(count);
    T* out = destination.data();
    const auto n = static_cast<std::int64_t>(count);
    POPALLOC_PRAGMA_OMP(
        omp parallel for schedule(static) num_threads(threads_) if (n > parallel_copy_min))
    for (std::int64_t i = 0; i < n; ++i) out[i] = value;
  }
  template <class T, class A>
  void download(const std::vector<T, A>& source, T* destination) const {
    copy(source.data(), source.size(), destination);
  }

  /// f(i) for every job.
  template <class F>
  void for_each(std::int64_t n, const F& f) const {
    POPALLOC_PRAGMA_OMP(omp parallel for schedule(static) num_threads(threads_) if (n > 4096))
    for (std::int64_t i = 0; i < n; ++i) f(i);
  }

  /// out[k] = sum over jobs of f's contribution k, k < f.width().
  template <class F>
  void reduce(std::int64_t n, const F& f, double* out) {
    const std::int32_t width = f.width();
    const std::int64_t chunks = chunk_count(n, width, max_chunks, min_chunk_jobs);
    const std::int64_t per_chunk = (n + chunks - 1) / chunks;
    const auto stride = static_cast<std::int64_t>(padded_stride(static_cast<std::size_t>(width)));
    partial_.resize(static_cast<std::size_t>(chunks * stride));
    double* partial = partial_.data();
    // Each chunk clears its own accumulator, in parallel: with a Hessian (m^2 entries per
    // chunk) clearing them in one thread took a tenth of a load-balancing solve at m = 2048.
    POPALLOC_PRAGMA_OMP(omp parallel for schedule(dynamic, 1) num_threads(threads_) if (chunks > 1))
    for (std::int64_t c = 0; c < chunks; ++c) {
      double* acc = partial + c * stride;
      std::fill(acc, acc + width, 0.0);
      const std::int64_t end = std::min(n, (c + 1) * per_chunk);
      for (std::int64_t i = c * per_chunk; i < end; ++i) f(i, acc);
    }
    // Summed in chunk order for every k (the same bits on any number of threads).
    POPALLOC_PRAGMA_OMP(
        omp parallel for schedule(static) num_threads(threads_) if (width > parallel_copy_min))
    for (std::int32_t k = 0; k < width; ++k) {
      double sum = 0.0;
      for (std::int64_t c = 0; c < chunks; ++c) sum += partial[c * stride + k];
      out[k] = sum;
    }
  }

 private:
  template <class T>
  void copy(const T* source, std::size_t count, T* destination) const {
    const auto n = static_cast<std::int64_t>(count);
    POPALLOC_PRAGMA_OMP(
        omp parallel for schedule(static) num_threads(threads_) if (n > parallel_copy_min))
    for (std::int64_t i = 0; i < n; ++i) destination[i] = source[i];
  }

  int threads_;
  std::vector<double> partial_;
};

}  // namespace detail
}  // namespace popalloc
