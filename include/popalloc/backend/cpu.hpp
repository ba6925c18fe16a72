// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief CPU backend: the shared per-job passes run in OpenMP loops over host memory.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "popalloc/config.hpp"

#if POPALLOC_OPENMP_ACTIVE
#include <omp.h>
#endif

namespace popalloc {
namespace backend {

/// \brief Selects the CPU backend (Eigen data, OpenMP threads; serial without OpenMP).
struct cpu {};

}  // namespace backend

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
  static constexpr std::int64_t min_chunk_jobs = 2048;
  template <class T>
  using vector = std::vector<T>;

  explicit host_executor(int threads) : threads_(threads) {
#if POPALLOC_OPENMP_ACTIVE
    if (threads_ <= 0) threads_ = omp_get_max_threads();
#else
    threads_ = 1;
#endif
  }

  int threads() const { return threads_; }

  template <class T>
  static T* data(std::vector<T>& v) {
    return v.data();
  }
  template <class T>
  static const T* data(const std::vector<T>& v) {
    return v.data();
  }
  template <class T>
  void upload(const T* source, std::size_t count, std::vector<T>& destination) const {
    destination.assign(source, source + count);
  }
  /// `count` elements, contents unspecified (every pass that reads them writes them first).
  template <class T>
  void allocate(std::size_t count, std::vector<T>& destination) const {
    destination.resize(count);
  }
  template <class T>
  void fill(std::size_t count, T value, std::vector<T>& destination) const {
    destination.assign(count, value);
  }
  template <class T>
  void download(const std::vector<T>& source, T* destination) const {
    std::copy(source.begin(), source.end(), destination);
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
    partial_.assign(static_cast<std::size_t>(chunks * width), 0.0);
    double* partial = partial_.data();
    POPALLOC_PRAGMA_OMP(omp parallel for schedule(dynamic, 1) num_threads(threads_) if (chunks > 1))
    for (std::int64_t c = 0; c < chunks; ++c) {
      double* acc = partial + c * width;
      const std::int64_t end = std::min(n, (c + 1) * per_chunk);
      for (std::int64_t i = c * per_chunk; i < end; ++i) f(i, acc);
    }
    std::fill(out, out + width, 0.0);
    for (std::int64_t c = 0; c < chunks; ++c)
      for (std::int32_t k = 0; k < width; ++k) out[k] += partial[c * width + k];
  }

 private:
  int threads_;
  std::vector<double> partial_;
};

}  // namespace detail
}  // namespace popalloc
