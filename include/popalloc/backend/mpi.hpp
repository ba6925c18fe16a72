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

// <mpi.h> comes through backend/mpi_session.hpp.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/backend/cpu.hpp"
#include "popalloc/backend/mpi_executor.hpp"
#include "popalloc/backend/mpi_session.hpp"
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

namespace popalloc {
namespace detail {

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
      const auto solve_sample = [&where, &utility](solve_role sample_role, const auto& sample,
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
