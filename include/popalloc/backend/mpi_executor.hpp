// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief mpi_executor: the per-job passes over this rank's shard, each reduction combined over
/// the ranks independently of the shard layout. popalloc/backend/mpi.hpp documents the backend;
/// without <mpi.h> this header is empty.
#pragma once

#if __has_include(<mpi.h>)

// <mpi.h> comes through backend/mpi_session.hpp.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "popalloc/backend/mpi_session.hpp"
#include "popalloc/config.hpp"
#include "popalloc/detail/exact_sum.hpp"
#include "popalloc/detail/host_executor.hpp"

#if POPALLOC_OPENMP_ACTIVE
#include <omp.h>
#endif

namespace popalloc::detail {

/// Runs the per-job passes over this rank's shard with OpenMP (as host_executor) and combines
/// every reduction over the ranks in a way that does not depend on the shard layout (see
/// backend::mpi_sums).
class mpi_executor {
 public:
  static constexpr bool is_host = true;
  template <class T>
  using vector = std::vector<T>;

  mpi_executor(mpi_session& session, int threads) : host_(threads), session_(&session) {}

  template <class T>
  static T* data(std::vector<T>& v) {
    return v.data();
  }
  template <class T>
  static const T* data(const std::vector<T>& v) {
    return v.data();
  }
  // A rank's shard lives in host memory: the host executor moves the data.
  template <class T>
  void upload(const T* source, std::size_t count, std::vector<T>& destination) const {
    host_.upload(source, count, destination);
  }
  template <class T>
  void allocate(std::size_t count, std::vector<T>& destination) const {
    host_.allocate(count, destination);
  }
  template <class T>
  void fill(std::size_t count, T value, std::vector<T>& destination) const {
    host_.fill(count, value, destination);
  }
  template <class T>
  void download(const std::vector<T>& source, T* destination) const {
    host_.download(source, destination);
  }

  template <class F>
  void for_each(std::int64_t n, const F& f) const {
    host_.for_each(n, f);
  }

  /// out[k] = sum over the jobs of every rank of f's contribution k. Collective.
  ///
  /// Block b holds global jobs [b B, (b + 1) B). Each block is summed in double in job order,
  /// exactly as one rank would: when a shard boundary cuts a block, the rank holding its first
  /// part sends that part's partial sums to the rank holding the next part, which continues from
  /// them (`carry`). The rank that completes a block adds its sums to an exact accumulator.
  template <class F>
  void reduce(std::int64_t n, const F& f, double* out) {
    const std::int32_t width = f.width();
    const auto w = static_cast<std::size_t>(width);
    const std::size_t stride = w * exact_sum::stride;
    const std::int64_t total = session_->total_jobs();
    // cpu_order: host_executor's chunks of the whole problem; exact: fixed blocks.
    const std::int64_t chunks =
        chunk_count(total, width, host_executor::max_chunks, host_executor::min_chunk_jobs);
    const std::int64_t block = session_->cpu_order()
                                   ? std::max<std::int64_t>(1, (total + chunks - 1) / chunks)
                                   : session_->block_jobs();
    const std::int64_t offset = session_->offset();
    const std::int64_t end = offset + n;
    // Pieces: the parts of the global blocks that fall in this shard. Piece 0 may continue a
    // block begun on a lower rank, the last piece may be continued by a higher rank.
    const std::int64_t first_end = std::min(n, block - offset % block);
    const std::int64_t pieces = n <= 0 ? 0 : 1 + (n - first_end + block - 1) / block;
    const bool continues = n > 0 && offset % block != 0;
    const bool open = n > 0 && end % block != 0 && end < total;
    auto piece_begin = [&](std::int64_t p) { return p == 0 ? 0 : first_end + (p - 1) * block; };
    auto piece_end = [&](std::int64_t p) {
      return p == 0 ? first_end : std::min(n, first_end + p * block);
    };
    // Complete pieces [lo, hi) are summed in parallel; the others need a carry or make one.
    const std::int64_t lo = continues ? 1 : 0;
    const std::int64_t hi = std::max(lo, open ? pieces - 1 : pieces);

    carry_in_.assign(w, 0.0);
    carry_out_.assign(w, 0.0);
    MPI_Request receive = MPI_REQUEST_NULL, send = MPI_REQUEST_NULL;
    if (continues) session_->receive_carry(carry_in_.data(), w, &receive);
    if (open && !(continues && pieces == 1)) {
      // Started here, finished by a higher rank: send it first so that rank need not wait.
      for (std::int64_t i = piece_begin(pieces - 1); i < n; ++i) f(i, carry_out_.data());
      session_->send_carry(carry_out_.data(), w, &send);
    }
    if (session_->cpu_order()) {
      reduce_in_cpu_order(f, n, w, block, lo, hi, continues, open && pieces == 1, receive, send,
                          out);
      return;
    }

    const int threads = piece_threads(hi - lo);
    accumulators_.assign(static_cast<std::size_t>(threads) * stride + flag_count, 0);
    const std::size_t scratch_stride = host_executor::padded_stride(w);
    scratch_.assign(static_cast<std::size_t>(threads) * scratch_stride, 0.0);
    std::int64_t* accumulators = accumulators_.data();
    double* scratch = scratch_.data();
    POPALLOC_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1)) {
      const std::size_t t = thread_number();
      std::int64_t* acc = accumulators + t * stride;
      double* partial = scratch + t * scratch_stride;
      std::int64_t since_carry = 0;
      POPALLOC_PRAGMA_OMP(omp for schedule(dynamic, 1))
      for (std::int64_t p = lo; p < hi; ++p) {
        std::fill(partial, partial + w, 0.0);
        for (std::int64_t i = piece_begin(p), e = piece_end(p); i < e; ++i) f(i, partial);
        for (std::size_t k = 0; k < w; ++k) exact_sum::add(acc + k * exact_sum::stride, partial[k]);
        if (++since_carry == exact_sum::additions_between_carries) {
          for (std::size_t k = 0; k < w; ++k) exact_sum::normalize(acc + k * exact_sum::stride);
          since_carry = 0;
        }
      }
      for (std::size_t k = 0; k < w; ++k) exact_sum::normalize(acc + k * exact_sum::stride);
    }
    // Thread accumulators into the first (limbs stay far below 2^63: < threads * 2^32).
    for (int t = 1; t < threads; ++t)
      for (std::size_t e = 0; e < stride; ++e)
        accumulators[e] += accumulators[static_cast<std::size_t>(t) * stride + e];

    if (continues) {
      // The block begun on lower ranks, continued from their partial sums in job order.
      session_->complete(receive, "block carry from a lower rank");
      for (std::int64_t i = 0; i < first_end; ++i) f(i, carry_in_.data());
      if (pieces == 1 && open) {
        session_->send_carry(carry_in_.data(), w, &send);  // still not finished: pass it on
      } else {
        for (std::size_t k = 0; k < w; ++k)
          exact_sum::add(accumulators + k * exact_sum::stride, carry_in_[k]);
      }
    }
    for (std::size_t k = 0; k < w; ++k) exact_sum::normalize(accumulators + k * exact_sum::stride);
    // The flags ride in the same message, after the sums (over thread 1's merged accumulator).
    session_->local_flags(accumulators + stride);
    received_.assign(stride + flag_count, 0);
    session_->all_reduce(accumulators, received_.data(), stride + flag_count);
    // The receiver of our carry has contributed to the all-reduce, so it has the message.
    session_->complete(send, "block carry to a higher rank");
    session_->agreed_flags(received_.data() + stride);
    for (std::size_t k = 0; k < w; ++k)
      out[k] = exact_sum::value(received_.data() + k * exact_sum::stride);
  }

 private:
  static constexpr std::size_t flag_count = 2;

  /// Threads that sum `pieces` whole pieces of jobs (at most one piece each).
  int piece_threads(std::int64_t pieces) const {
#if POPALLOC_OPENMP_ACTIVE
    return static_cast<int>(
        std::max<std::int64_t>(1, std::min<std::int64_t>(host_.threads(), pieces)));
#else
    (void)pieces;
    return 1;
#endif
  }

  /// The calling thread's number in the current OpenMP team (0 outside one or without OpenMP).
  static std::size_t thread_number() {
#if POPALLOC_OPENMP_ACTIVE
    return static_cast<std::size_t>(omp_get_thread_num());
#else
    return 0;
#endif
  }

  /// mpi_sums::cpu_order: the chunk sums this rank completes, in chunk order, are gathered on
  /// every rank and added in chunk order from 0, as host_executor::reduce adds its chunks.
  template <class F>
  void reduce_in_cpu_order(const F& f, std::int64_t n, std::size_t w, std::int64_t block,
                           std::int64_t lo, std::int64_t hi, bool continues, bool passes_on,
                           MPI_Request& receive, MPI_Request& send, double* out) {
    const std::int64_t offset = session_->offset(), total = session_->total_jobs();
    const std::int64_t first_end = std::min(n, block - offset % block);
    // Slot 0 (if this rank completes a continued chunk), then the complete pieces lo .. hi-1.
    const bool continued_completes = continues && !passes_on;
    const std::int64_t head = continued_completes ? 1 : 0;
    const auto slots = static_cast<std::size_t>(head + (hi - lo));
    gathered_send_.assign(slots * w + flag_count, 0.0);
    double* slot = gathered_send_.data();
    // Each piece is summed in its thread's own padded scratch, then copied to its slot: the
    // slots are packed for the gather, and summing in place made two threads write one cache
    // line for every job (false sharing).
    const int threads = piece_threads(hi - lo);
    const std::size_t scratch_stride = host_executor::padded_stride(w);
    scratch_.assign(static_cast<std::size_t>(threads) * scratch_stride, 0.0);
    double* scratch = scratch_.data();
    POPALLOC_PRAGMA_OMP(omp parallel num_threads(threads) if (threads > 1)) {
      double* partial = scratch + thread_number() * scratch_stride;
      POPALLOC_PRAGMA_OMP(omp for schedule(dynamic, 1))
      for (std::int64_t p = lo; p < hi; ++p) {
        std::fill(partial, partial + w, 0.0);
        const std::int64_t begin = p == 0 ? 0 : first_end + (p - 1) * block;
        const std::int64_t stop = p == 0 ? first_end : std::min(n, first_end + p * block);
        for (std::int64_t i = begin; i < stop; ++i) f(i, partial);
        std::copy(partial, partial + w, slot + static_cast<std::size_t>(head + p - lo) * w);
      }
    }
    if (continues) {
      session_->complete(receive, "chunk carry from a lower rank");
      for (std::int64_t i = 0; i < first_end; ++i) f(i, carry_in_.data());
      if (passes_on) {
        session_->send_carry(carry_in_.data(), w, &send);
      } else {
        std::copy(carry_in_.begin(), carry_in_.end(), slot);
      }
    }
    std::int64_t flags[flag_count];
    session_->local_flags(flags);
    for (std::size_t k = 0; k < flag_count; ++k)
      gathered_send_[slots * w + k] = static_cast<double>(flags[k]);
    // Every rank's slot count follows from the layout: the chunks whose last job it holds.
    const std::vector<std::int64_t>& counts = session_->counts();
    const std::int64_t nonempty = (total + block - 1) / block;
    auto completed_before = [&](std::int64_t e) { return e >= total ? nonempty : e / block; };
    std::vector<int> sizes(counts.size());
    std::size_t all = 0;
    std::int64_t start = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      const std::int64_t chunks =
          counts[r] > 0 ? completed_before(start + counts[r]) - completed_before(start) : 0;
      start += counts[r];
      sizes[r] = static_cast<int>(static_cast<std::size_t>(chunks) * w + flag_count);
      all += static_cast<std::size_t>(sizes[r]);
    }
    gathered_.assign(all, 0.0);
    session_->all_gather(gathered_send_.data(), sizes, gathered_.data());
    session_->complete(send, "chunk carry to a higher rank");
    std::fill(out, out + w, 0.0);
    std::int64_t agreed[flag_count] = {0, 0};
    const double* at = gathered_.data();
    for (std::size_t r = 0; r < sizes.size(); ++r) {
      const std::size_t sums = static_cast<std::size_t>(sizes[r]) - flag_count;
      for (std::size_t c = 0; c < sums; c += w)
        for (std::size_t k = 0; k < w; ++k) out[k] += at[c + k];
      for (std::size_t k = 0; k < flag_count; ++k)
        agreed[k] += static_cast<std::int64_t>(at[sums + k]);
      at += sizes[r];
    }
    session_->agreed_flags(agreed);
  }

  host_executor host_;
  mpi_session* session_;
  std::vector<std::int64_t> accumulators_, received_;
  std::vector<double> scratch_, carry_in_, carry_out_, gathered_send_, gathered_;
};

}  // namespace popalloc::detail

#endif
