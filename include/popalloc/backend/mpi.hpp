// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief MPI backend: every rank holds a shard of the jobs, computes their best responses with
/// the CPU backend's per-job passes, and every reduction of a dual evaluation (resource usage,
/// Hessian, dual and primal values) is combined over the ranks by one collective (docs/mpi.md).
///
///     popalloc::solve(popalloc::backend::mpi{MPI_COMM_WORLD}, my_shard, utility, options);
///
/// Rank r's shard holds jobs offset_r .. offset_r + n_r - 1 of the whole problem, in rank order;
/// every rank passes the same capacities and options (checked) and gets the same status,
/// objective, bound and prices, plus the allocation and throughput of its own jobs.
///
/// Determinism: the answer is the same bits for any number of ranks, any shard sizes and any
/// number of threads. The jobs are cut into blocks of consecutive jobs of the whole problem
/// (global indices); each block is summed in double in job order, and when a shard boundary cuts
/// a block, the rank holding its first part passes that part's partial sums on to the rank
/// holding the next part, which continues the same sequential sum. The block sums are then
/// combined either in the CPU backend's order (mpi_sums::cpu_order, the default: the blocks are
/// host_executor's chunks and every rank adds the gathered chunk sums in chunk order, so the
/// result is bit for bit popalloc::solve's on one machine) or exactly (mpi_sums::exact: a
/// fixed-point superaccumulator combined by an integer MPI_Allreduce, which scales to any number
/// of ranks). Every rank rounds the same numbers in the same order, so every rank takes the same
/// decisions and the ranks never diverge.
///
/// Failures: no rank ever waits forever. Collectives are non-blocking and polled with a
/// watchdog (`timeout_seconds`); a rank that throws during the solve tells the others, which
/// then throw backend_error naming it; a killed rank ends the job through the MPI launcher
/// (OpenMPI's mpirun terminates the other ranks) or, failing that, through the watchdog. After
/// a backend_error the ranks cannot solve together again: end the program with MPI_Abort.
///
/// The header is self-contained only where <mpi.h> is on the include path (link
/// popalloc::mpi); elsewhere it compiles to a stub whose use fails with a clear message, so
/// including it from code built without MPI is harmless.
#pragma once

#if __has_include(<mpi.h>)

// The deprecated MPI C++ bindings are not needed and do not compile warning-free.
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
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/backend/cpu.hpp"
#include "popalloc/config.hpp"
#include "popalloc/detail/engine.hpp"
#include "popalloc/detail/price_discovery.hpp"
#include "popalloc/detail/sample_start.hpp"
#include "popalloc/detail/solve_steps.hpp"
#include "popalloc/detail/stopwatch.hpp"
#include "popalloc/detail/traits.hpp"
#include "popalloc/error.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"

#if POPALLOC_OPENMP_ACTIVE
#include <omp.h>
#endif

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

/// Exact sums of doubles: a double is m * 2^e with a 53-bit integer m and e >= -1074, so every
/// finite double is an integer multiple of 2^-1074. `exact_sum` keeps that integer in limbs of
/// 32 bits stored in int64 (room for 2^30 additions between carry propagations), plus counts of
/// +inf, -inf and NaN. Integer addition is associative, hence the total is independent of the
/// order of additions, of threads and of the MPI reduction tree.
struct exact_sum {
  static constexpr int limbs = 68;  ///< bits -1074 .. 1102: any double, with carry headroom
  static constexpr int positive_infinities = limbs, negative_infinities = limbs + 1,
                       not_a_number = limbs + 2;
  static constexpr std::size_t stride = limbs + 3;  ///< int64 entries per accumulator
  static constexpr std::int64_t radix = std::int64_t{1} << 32;
  static constexpr std::int64_t additions_between_carries = std::int64_t{1} << 28;

  static void add(std::int64_t* acc, double x) {
    if (x == 0.0) return;
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    const bool negative = (bits >> 63) != 0;
    const int exponent = static_cast<int>((bits >> 52) & 0x7ff);
    std::uint64_t mantissa = bits & ((std::uint64_t{1} << 52) - 1);
    if (exponent == 0x7ff) {
      ++acc[mantissa != 0 ? not_a_number : (negative ? negative_infinities : positive_infinities)];
      return;
    }
    // x = mantissa * 2^(position - 1074): `position` is the bit index of the mantissa's lsb.
    int position = exponent - 1;
    if (exponent == 0) {
      position = 0;  // subnormal
    } else {
      mantissa |= std::uint64_t{1} << 52;
    }
    const int k = position / 32, shift = position % 32;
    const std::uint64_t low = (mantissa & 0xffffffffu) << shift;  // < 2^63
    const std::uint64_t high = (mantissa >> 32) << shift;         // < 2^52
    const auto a0 = static_cast<std::int64_t>(low & 0xffffffffu);
    const auto a1 = static_cast<std::int64_t>((low >> 32) + (high & 0xffffffffu));
    const auto a2 = static_cast<std::int64_t>(high >> 32);
    if (negative) {
      acc[k] -= a0;
      acc[k + 1] -= a1;
      acc[k + 2] -= a2;
    } else {
      acc[k] += a0;
      acc[k + 1] += a1;
      acc[k + 2] += a2;
    }
  }

  /// Carry propagation: limbs 0 .. limbs-2 end in [0, 2^32), the top limb keeps the sign. The
  /// representation of a value is then unique.
  static void normalize(std::int64_t* acc) {
    for (int k = 0; k + 1 < limbs; ++k) {
      const std::int64_t low = static_cast<std::int64_t>(static_cast<std::uint64_t>(acc[k]) &
                                                         std::uint64_t{0xffffffffu});
      acc[k + 1] += (acc[k] - low) / radix;  // exact: acc[k] - low is a multiple of 2^32
      acc[k] = low;
    }
  }

  /// The sum, correctly rounded to double (IEEE semantics for infinities and NaN).
  static double value(const std::int64_t* source) {
    const std::int64_t nan = source[not_a_number], pos = source[positive_infinities],
                       neg = source[negative_infinities];
    if (nan != 0 || (pos != 0 && neg != 0)) return std::numeric_limits<double>::quiet_NaN();
    if (pos != 0) return std::numeric_limits<double>::infinity();
    if (neg != 0) return -std::numeric_limits<double>::infinity();
    std::int64_t acc[limbs];
    std::copy(source, source + limbs, acc);
    normalize(acc);
    const bool negative = acc[limbs - 1] < 0;
    if (negative) {
      for (int k = 0; k < limbs; ++k) acc[k] = -acc[k];
      normalize(acc);
    }
    int top = limbs - 1;
    while (top >= 0 && acc[top] == 0) --top;
    if (top < 0) return 0.0;
    // Beyond limb 65 (2^1006 * 2^32 and up) the magnitude exceeds the largest double.
    if (top >= 66)
      return negative ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
    const auto limb = [&](int k) {
      return k >= 0 ? static_cast<std::uint64_t>(acc[k]) : std::uint64_t{0};
    };
    const std::uint64_t t = limb(top);
    int bits = 0;  // bit length of the top limb, 1..32
    while (bits < 32 && (t >> bits) != 0) ++bits;
    // The top 64 significant bits, the rest folded into a sticky lsb: converting that to double
    // rounds exactly as the whole number would (the rounding bit is far above the sticky bit).
    std::uint64_t window = (t << (64 - bits)) | (limb(top - 1) << (32 - bits));
    if (bits < 32) window |= limb(top - 2) >> bits;
    bool sticky =
        bits < 32 ? (limb(top - 2) & ((std::uint64_t{1} << bits) - 1)) != 0 : limb(top - 2) != 0;
    for (int k = top - 3; k >= 0 && !sticky; --k) sticky = acc[k] != 0;
    if (sticky) window |= 1u;
    const double magnitude = std::ldexp(static_cast<double>(window), 32 * (top - 2) + bits - 1074);
    return negative ? -magnitude : magnitude;
  }
};

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

/// FNV-1a over the bytes of values that must agree on every rank.
class fingerprint {
 public:
  template <class T>
  void add(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    unsigned char bytes[sizeof(T)];
    std::memcpy(bytes, &value, sizeof(T));
    for (unsigned char b : bytes) hash_ = (hash_ ^ b) * 0x100000001b3ull;
  }
  void add(const Eigen::VectorXd& v) {
    add(static_cast<std::int64_t>(v.size()));
    for (Eigen::Index j = 0; j < v.size(); ++j) add(v[j]);
  }
  std::int64_t value() const { return static_cast<std::int64_t>(hash_ >> 1); }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ull;
};

}  // namespace detail

/// \brief Solves the problem whose jobs are spread over the ranks of `where.comm`: this rank
/// passes its shard (its jobs, in the global order, after those of lower ranks; possibly none),
/// the full capacity vector and the same options as every other rank. Collective: every rank of
/// the communicator must call it.
///
/// Returns on every rank the same status, iterations, objective, bound, gap, prices and usage
/// (bit for bit); `allocation` and `throughput` are this rank's jobs; timings are this rank's.
/// A time limit or a callback's stop request on any rank stops all ranks at the same
/// evaluation (a callback's request one evaluation later than in a single process).
/// \throws invalid_problem, invalid_options on every rank when any rank's data or options are
/// invalid or the ranks disagree on capacities or options (the message names the rank);
/// backend_error when MPI fails, a rank fails during the solve (on every rank, naming it) or
/// the watchdog expires. After backend_error, end the program with MPI_Abort.
template <class Problem, class Utility>
solve_result solve(const backend::mpi& where, const Problem& problem, const Utility& utility,
                   const solver_options& options = {}, const progress_callback& callback = {});

namespace detail {

/// Each rank checks its options and its shard, then all agree: either every rank goes on or
/// every rank throws, with every failing rank's message.
template <class Problem, class Utility>
void agree_valid(mpi_session& session, const Problem& problem, const Utility& utility,
                 const solver_options& options) {
  int kind = 0;  // 1: options, 2: problem
  std::string message;
  try {
    options.validate();
    check_warm_start_size(options, capacity_of(problem));
  } catch (const invalid_options& e) {
    kind = 1;
    message = e.what();
  }
  if (kind == 0 && problem.jobs() > 0) {  // an empty shard is fine if another rank has jobs
    try {
      problem.validate(utility);
    } catch (const invalid_problem& e) {
      kind = 2;
      message = e.what();
    }
  }
  const std::vector<std::int64_t> kinds = session.all_gather(std::int64_t{kind});
  if (std::none_of(kinds.begin(), kinds.end(), [](std::int64_t k) { return k != 0; })) return;
  const std::vector<std::string> messages = session.all_gather(message);
  std::string all;
  bool options_error = false;
  for (std::size_t r = 0; r < kinds.size(); ++r) {
    if (kinds[r] == 0) continue;
    if (!all.empty()) all += "; ";
    all += "rank " + std::to_string(r) + ": " + messages[r];
    options_error = options_error || kinds[r] == 1;
  }
  if (options_error) throw invalid_options(all);
  throw invalid_problem(all);
}

/// The ranks must agree on everything but the jobs: throws invalid_problem on every rank when
/// one differs.
template <class Problem>
void agree_on_options(mpi_session& session, const backend::mpi& where, const Problem& problem,
                      const solver_options& options) {
  fingerprint print;
  print.add(static_cast<std::int64_t>(problem.resources()));
  print.add(capacity_of(problem));
  // Each rank may use its own thread count and callback frequency; every other option steers
  // decisions that all ranks must take alike.
  options.for_each_field([&print](const char* name, const auto& value) {
    const std::string field = name;
    if (field != "threads" && field != "callback_every") print.add(value);
  });
  print.add(where.block_jobs);
  print.add(static_cast<int>(where.sums));
  const std::vector<std::int64_t> prints = session.all_gather(print.value());
  std::string differ;
  for (std::size_t r = 1; r < prints.size(); ++r)
    if (prints[r] != prints[0]) differ += (differ.empty() ? "" : ", ") + std::to_string(r);
  if (!differ.empty())
    throw invalid_problem(
        "the ranks disagree on the resources, capacities or solver options (rank(s) " + differ +
        " differ from rank 0); every rank must pass the same capacity vector and options");
}

/// `start`: as for the single-process solve_as (a sample's continuation starts at its level).
template <class Problem, class Utility>
solve_result solve_as(solve_role role, const backend::mpi& where, const Problem& problem,
                      const Utility& utility, const solver_options& options,
                      const progress_callback& callback, sample_start_level start = {}) {
  static_assert(detail::check_utility<Utility>());
  const detail::stopwatch clock;
  detail::mpi_session session(where);
  const std::string me = "rank " + std::to_string(session.rank());

  // 1. Local checks, then agreement: either every rank goes on or every rank throws.
  agree_valid(session, problem, utility, options);
  // 2. The ranks must agree on everything but the jobs.
  agree_on_options(session, where, problem, options);
  const Eigen::VectorXd& capacity = capacity_of(problem);
  session.set_layout(static_cast<std::int64_t>(problem.jobs()));
  if (session.total_jobs() == 0) throw invalid_problem("problem has no jobs (on any rank)");

  // 3. The sample start, as in one process: every rank passes its part of the same sample
  // (a nested collective solve), so the starting prices are the single-process ones bit for bit.
  solve_result result;
  solver_options run_options = options;
  sample_start_level start_level = start;
  sample_continuation continue_sample;
  if constexpr (is_dense_problem<Problem>::value) {
    const std::int64_t stride =
        sample_stride(session.total_jobs(), static_cast<std::int64_t>(problem.resources()),
                      Utility::piecewise_linear);
    if (options.sample_start && options.warm_start_prices.size() == 0 && stride > 1) {
      const auto solve_sample = [&where, &utility](solve_role sample_role, const Problem& sample,
                                                   const solver_options& sample_run_options,
                                                   sample_start_level first) {
        return solve_as(sample_role, where, sample, utility, sample_run_options, {}, first);
      };
      // The ranks' clocks differ; the continuation takes the slowest one's, so that every rank
      // passes the same options (the nested solve compares their fingerprints) and takes the
      // same branch.
      const auto agreed_seconds = [&session, &clock] {
        const std::vector<std::int64_t> elapsed_us =
            session.all_gather(static_cast<std::int64_t>(std::ceil(clock.seconds() * 1e6)));
        return 1e-6 * static_cast<double>(*std::max_element(elapsed_us.begin(), elapsed_us.end()));
      };
      start_level = start_with_sample<Utility>(
          sample_jobs(problem, stride, session.offset(), session.total_jobs()), stride, options,
          solve_sample, clock, agreed_seconds, result, run_options, continue_sample);
    }
  }

  // 4. The solve. Limits and stop requests are decided collectively (flags in every reduction)
  // so that all ranks leave the loop at the same evaluation.
  solver_options core = run_options;
  core.time_limit_seconds = std::numeric_limits<double>::infinity();
  core.callback_every = 1;
  session.set_time_limit(options.time_limit_seconds);
  const progress_callback agreed = [&](const progress& info) {
    if (callback && info.iteration % options.callback_every == 0 &&
        callback(info) == callback_action::stop)
      session.request_stop();
    return session.stop_agreed() || session.time_limit_reached() ? callback_action::stop
                                                                 : callback_action::proceed;
  };
  try {
    using engine_type = detail::engine<detail::mpi_executor, Problem, Utility>;
    engine_type engine(problem, utility, detail::mpi_executor(session, options.threads));
    detail::price_discovery<engine_type> method(engine, capacity, core, agreed, clock);
    run_as(role, method, options, start_level, std::move(continue_sample), result);
  } catch (const std::exception& e) {
    if (session.broken()) throw;  // the session's own error: the others know already
    std::string what = e.what();
    if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) what = "out of memory: " + what;
    session.notify_failure(what);
    throw backend_error("popalloc::backend::mpi: " + me + " failed: " + what);
  } catch (...) {
    if (session.broken()) throw;
    session.notify_failure("unknown exception");
    throw backend_error("popalloc::backend::mpi: " + me + " failed: unknown exception");
  }
  if (result.status == solve_status::interrupted && session.time_limit_reached() &&
      !session.stop_agreed())
    result.status = solve_status::time_limit;
  return result;
}

}  // namespace detail

template <class Problem, class Utility>
solve_result solve(const backend::mpi& where, const Problem& problem, const Utility& utility,
                   const solver_options& options, const progress_callback& callback) {
  return detail::solve_as(detail::solve_role::full, where, problem, utility, options, callback);
}

}  // namespace popalloc

#elif defined(POPALLOC_HAS_MPI) && POPALLOC_HAS_MPI
#error "popalloc/backend/mpi.hpp: popalloc::mpi is linked but <mpi.h> is not on the include path"
#else

namespace popalloc {
namespace detail {
template <class T>
struct mpi_header_missing {
  static_assert(sizeof(T) == 0,
                "popalloc/backend/mpi.hpp needs <mpi.h>: link popalloc::mpi "
                "(find_package(popalloc COMPONENTS mpi), or configure popalloc with "
                "POPALLOC_ENABLE_MPI=ON) or compile with mpicxx");
};
}  // namespace detail
namespace backend {
/// Without <mpi.h> the MPI backend is unavailable; any use of it fails to compile with a
/// message saying how to enable it.
using mpi = detail::mpi_header_missing<void>;
}  // namespace backend
}  // namespace popalloc

#endif
