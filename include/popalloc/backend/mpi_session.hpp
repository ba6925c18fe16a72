// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The MPI backend's tag, backend::mpi (communicator, watchdog, summation), and
/// mpi_session, one solve's view of the communicator. popalloc/backend/mpi.hpp documents the
/// backend; without <mpi.h> this header is empty.
#pragma once

#if __has_include(<mpi.h>)

// The one place popalloc includes <mpi.h>. The deprecated MPI C++ bindings are not needed and
// do not compile warning-free.
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
// clang-format off
#include <mpi.h>
// clang-format on

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/error.hpp"

namespace popalloc {
namespace backend {

/// \brief How the MPI backend adds up the ranks' sums. Both give the same bits for any number
/// of ranks, any shard sizes and any number of threads (docs/mpi.md).
enum class mpi_sums : std::uint8_t {
  /// The CPU backend's order: its chunks of the whole problem (at most 256), each summed in job
  /// order, then added in chunk order. The result is bit for bit that of popalloc::solve on one
  /// machine. One all-gather of (chunks completed on the rank) x width doubles per reduction;
  /// with more than 256 ranks, ranks within one chunk wait for each other (use `exact`).
  cpu_order,
  /// Blocks of `block_jobs` jobs, each summed in job order, added exactly (superaccumulator,
  /// integer all-reduce of 71 x width int64). Scales to any number of ranks; differs from the
  /// CPU backend by rounding (the exact sum is the more accurate).
  exact,
};

/// \brief Selects the MPI backend: the communicator whose ranks hold the shards, and its
/// failure and summation settings.
struct mpi {
  MPI_Comm comm = MPI_COMM_WORLD;
  /// A collective that has not completed after this many seconds ends the solve with
  /// backend_error on the waiting ranks (a rank died, hangs, or holds a far larger shard).
  double timeout_seconds = 600.0;
  mpi_sums sums = mpi_sums::cpu_order;
  /// Jobs per summation block in mpi_sums::exact (global indices).
  std::int64_t block_jobs = 1024;
};

}  // namespace backend

namespace detail {

/// One solve's view of the communicator: a private duplicate (so popalloc's messages never meet
/// the caller's), the shard layout, the watchdog, and the flags every reduction carries.
class mpi_session {
 public:
  explicit mpi_session(const backend::mpi& where) : timeout_(where.timeout_seconds) {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized == 0 || finalized != 0)
      throw invalid_options("popalloc::backend::mpi: MPI is not initialised (call MPI_Init first)");
    if (!(where.timeout_seconds > 0.0))
      throw invalid_options("popalloc::backend::mpi: timeout_seconds must be > 0");
    if (where.block_jobs < 1)
      throw invalid_options("popalloc::backend::mpi: block_jobs must be >= 1");
    block_jobs_ = where.block_jobs;
    cpu_order_ = where.sums == backend::mpi_sums::cpu_order;
    check(MPI_Comm_dup(where.comm, &comm_), "MPI_Comm_dup");
    // Errors come back as codes (and become backend_error) instead of aborting the job.
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
  }
  ~mpi_session() {
    // A broken session may still have a collective in flight: freeing the communicator then
    // could block, and the program is about to end with MPI_Abort anyway.
    if (!broken_ && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
  }
  mpi_session(const mpi_session&) = delete;
  mpi_session& operator=(const mpi_session&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool broken() const { return broken_; }
  std::int64_t block_jobs() const { return block_jobs_; }
  bool cpu_order() const { return cpu_order_; }
  std::int64_t offset() const { return offset_; }
  std::int64_t total_jobs() const { return total_; }

  /// Shard layout (rank order) from every rank's job count. Collective.
  void set_layout(std::int64_t local_jobs) {
    const std::vector<std::int64_t> counts = all_gather(local_jobs);
    offset_ = 0;
    total_ = 0;
    for (int r = 0; r < size_; ++r) {
      if (r < rank_) offset_ += counts[static_cast<std::size_t>(r)];
      total_ += counts[static_cast<std::size_t>(r)];
    }
    counts_ = counts;
  }
  const std::vector<std::int64_t>& counts() const { return counts_; }

  /// Every rank's value, in rank order. Collective.
  std::vector<std::int64_t> all_gather(std::int64_t value) {
    std::vector<std::int64_t> all(static_cast<std::size_t>(size_));
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallgather(&value, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, comm_, &request),
          "MPI_Iallgather");
    wait(request, "all-gather");
    return all;
  }

  /// Every rank's text, in rank order. Collective.
  std::vector<std::string> all_gather(const std::string& text) {
    const std::vector<std::int64_t> lengths = all_gather(static_cast<std::int64_t>(text.size()));
    std::vector<int> counts(static_cast<std::size_t>(size_)), displacements(counts.size());
    std::int64_t total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (total + lengths[r] > std::numeric_limits<int>::max())
        throw backend_error("popalloc::backend::mpi: messages too long to gather");
      counts[r] = static_cast<int>(lengths[r]);
      displacements[r] = static_cast<int>(total);
      total += lengths[r];
    }
    std::string all(static_cast<std::size_t>(total), '\0');
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallgatherv(text.data(), static_cast<int>(text.size()), MPI_CHAR, &all[0],
                          counts.data(), displacements.data(), MPI_CHAR, comm_, &request),
          "MPI_Iallgatherv");
    wait(request, "all-gather");
    std::vector<std::string> texts;
    for (std::size_t r = 0; r < counts.size(); ++r)
      texts.push_back(all.substr(static_cast<std::size_t>(displacements[r]),
                                 static_cast<std::size_t>(counts[r])));
    return texts;
  }

  /// Every rank's doubles, concatenated in rank order (`counts[r]` from rank r). Collective.
  void all_gather(const double* send, const std::vector<int>& counts, double* receive) {
    std::vector<int> displacements(counts.size());
    std::int64_t total = 0;
    for (std::size_t r = 0; r < counts.size(); ++r) {
      if (total > std::numeric_limits<int>::max())
        throw backend_error("popalloc::backend::mpi: reduction too wide for one all-gather");
      displacements[r] = static_cast<int>(total);
      total += counts[r];
    }
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallgatherv(send, counts[static_cast<std::size_t>(rank_)], MPI_DOUBLE, receive,
                          counts.data(), displacements.data(), MPI_DOUBLE, comm_, &request),
          "MPI_Iallgatherv");
    wait(request, "all-gather");
  }

  /// Exact element-wise sum of int64 vectors over the ranks. Collective.
  void all_reduce(std::int64_t* send, std::int64_t* receive, std::size_t count) {
    if (count > static_cast<std::size_t>(std::numeric_limits<int>::max()))
      throw backend_error("popalloc::backend::mpi: reduction too wide (" + std::to_string(count) +
                          " integers); too many resources for one message");
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(send, receive, static_cast<int>(count), MPI_INT64_T, MPI_SUM, comm_,
                         &request),
          "MPI_Iallreduce");
    wait(request, "all-reduce");
  }

  /// Partial sums of a block cut by a shard boundary, to the next rank that holds jobs.
  void send_carry(const double* sums, std::size_t count, MPI_Request* request) {
    check(MPI_Isend(sums, static_cast<int>(count), MPI_DOUBLE, neighbour(+1), carry_tag, comm_,
                    request),
          "MPI_Isend");
  }
  /// ... and from the previous rank that holds jobs.
  void receive_carry(double* sums, std::size_t count, MPI_Request* request) {
    check(MPI_Irecv(sums, static_cast<int>(count), MPI_DOUBLE, neighbour(-1), carry_tag, comm_,
                    request),
          "MPI_Irecv");
  }
  /// Waits for a request (no-op for MPI_REQUEST_NULL) under the watchdog.
  void complete(MPI_Request& request, const char* what) {
    if (request != MPI_REQUEST_NULL) wait(request, what);
  }

  // ---- Flags carried by every reduction (kept identical on all ranks) ----
  void set_time_limit(double seconds) { time_limit_ = seconds; }
  void request_stop() { stop_requested_ = true; }
  /// The two local flags, as integers appended to a reduction.
  void local_flags(std::int64_t* out) const {
    out[0] = clock_.seconds() >= time_limit_ ? 1 : 0;
    out[1] = stop_requested_ ? 1 : 0;
  }
  void agreed_flags(const std::int64_t* in) {
    time_limit_reached_ = time_limit_reached_ || in[0] != 0;
    stop_agreed_ = stop_agreed_ || in[1] != 0;
  }
  bool time_limit_reached() const { return time_limit_reached_; }
  bool stop_agreed() const { return stop_agreed_; }

  /// Tells every other rank that this one failed (`what`), waits (watchdog) until they have
  /// read it, and marks the session broken. Never throws.
  void notify_failure(const std::string& what) noexcept {
    if (broken_) return;
    broken_ = true;
    try {
      std::vector<MPI_Request> sends;
      for (int r = 0; r < size_; ++r) {
        if (r == rank_) continue;
        sends.emplace_back(MPI_REQUEST_NULL);
        if (MPI_Isend(what.data(), static_cast<int>(what.size()), MPI_CHAR, r, failure_tag, comm_,
                      &sends.back()) != MPI_SUCCESS)
          sends.pop_back();
      }
      std::vector<bool> acknowledged(static_cast<std::size_t>(size_), false);
      int pending = size_ - 1;
      const stopwatch waited;
      while (pending > 0 && waited.seconds() < timeout_) {
        int flag = 0;
        MPI_Status status;
        if (MPI_Iprobe(MPI_ANY_SOURCE, acknowledge_tag, comm_, &flag, &status) == MPI_SUCCESS &&
            flag != 0) {
          char byte = 0;
          MPI_Recv(&byte, 1, MPI_CHAR, status.MPI_SOURCE, acknowledge_tag, comm_,
                   MPI_STATUS_IGNORE);
          if (!acknowledged[static_cast<std::size_t>(status.MPI_SOURCE)]) {
            acknowledged[static_cast<std::size_t>(status.MPI_SOURCE)] = true;
            --pending;
          }
          continue;
        }
        // Another rank may have failed too and be waiting for our acknowledgement.
        if (MPI_Iprobe(MPI_ANY_SOURCE, failure_tag, comm_, &flag, &status) == MPI_SUCCESS &&
            flag != 0) {
          receive_failure(status);
          if (!acknowledged[static_cast<std::size_t>(status.MPI_SOURCE)]) {
            acknowledged[static_cast<std::size_t>(status.MPI_SOURCE)] = true;
            --pending;
          }
          continue;
        }
        pause(waited.seconds());
      }
      for (MPI_Request& request : sends) {
        int done = 0;
        MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      }
    } catch (...) {
    }
  }

 private:
  static constexpr int failure_tag = 0x7a10, acknowledge_tag = 0x7a11, carry_tag = 0x7a12;

  /// The nearest rank below (direction -1) or above (+1) that holds jobs.
  int neighbour(int direction) const {
    for (int r = rank_ + direction; r >= 0 && r < size_; r += direction)
      if (counts_[static_cast<std::size_t>(r)] > 0) return r;
    throw backend_error("popalloc::backend::mpi: no rank with jobs next to rank " +
                        std::to_string(rank_));
  }

  void check(int code, const char* call) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    broken_ = true;
    throw backend_error("popalloc::backend::mpi: rank " + std::to_string(rank_) + ": " + call +
                        " failed: " + std::string(text, static_cast<std::size_t>(length)));
  }

  /// Short spins first (balanced shards finish together), then sleeps of growing length so that
  /// waiting ranks leave the cores to those still computing (oversubscribed nodes).
  static void pause(double waited) {
    if (waited < 1e-3) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(waited < 0.1 ? 50 : 1000));
    }
  }

  /// Receives a failure notice, acknowledges it and returns its text.
  std::string receive_failure(const MPI_Status& status) {
    int length = 0;
    MPI_Get_count(&status, MPI_CHAR, &length);
    std::string text(static_cast<std::size_t>(std::max(length, 0)), '\0');
    MPI_Recv(text.empty() ? nullptr : &text[0], length, MPI_CHAR, status.MPI_SOURCE, failure_tag,
             comm_, MPI_STATUS_IGNORE);
    const char byte = 1;
    MPI_Send(&byte, 1, MPI_CHAR, status.MPI_SOURCE, acknowledge_tag, comm_);
    return text;
  }

  void wait(MPI_Request& request, const char* what) {
    const stopwatch waited;
    for (;;) {
      int done = 0;
      check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done != 0) {
        ++collectives_;
        return;
      }
      int flag = 0;
      MPI_Status status;
      check(MPI_Iprobe(MPI_ANY_SOURCE, failure_tag, comm_, &flag, &status), "MPI_Iprobe");
      if (flag != 0) {
        const std::string text = receive_failure(status);
        broken_ = true;
        throw backend_error("popalloc::backend::mpi: rank " + std::to_string(rank_) +
                            ": stopped because rank " + std::to_string(status.MPI_SOURCE) +
                            " failed: " + text);
      }
      const double seconds = waited.seconds();
      if (seconds >= timeout_) {
        broken_ = true;
        throw backend_error("popalloc::backend::mpi: rank " + std::to_string(rank_) + ": " + what +
                            " #" + std::to_string(collectives_) + " did not complete within " +
                            std::to_string(timeout_) +
                            " s: another rank died, hangs or holds a much larger shard "
                            "(backend::mpi::timeout_seconds)");
      }
      pause(seconds);
    }
  }

  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1;
  double timeout_;
  std::int64_t block_jobs_ = 1024;
  bool cpu_order_ = true;
  std::int64_t offset_ = 0, total_ = 0;
  std::vector<std::int64_t> counts_;
  long long collectives_ = 0;
  bool broken_ = false;
  stopwatch clock_;
  double time_limit_ = std::numeric_limits<double>::infinity();
  bool stop_requested_ = false, time_limit_reached_ = false, stop_agreed_ = false;
};

}  // namespace detail
}  // namespace popalloc

#endif
