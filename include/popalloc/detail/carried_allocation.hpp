// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The pieces of a re-plan that carries the last allocation over: the kept rows and the
/// rows placed anew, their assembly into an allocation in job order, and the map of rows that
/// follows the jobs through removals.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <optional>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/config.hpp"
#include "popalloc/detail/dense_view.hpp"
#include "popalloc/detail/host_executor.hpp"
#include "popalloc/detail/relative_gap.hpp"
#include "popalloc/options.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"
#include "popalloc/utility/job_parameters.hpp"

namespace popalloc::detail {

/// Whether a result's allocation may be carried over: a converged solve whose bound was g(0).
inline bool carries_over(const solve_result& r) {
  return r.status == solve_status::converged && std::isfinite(r.trivial_bound) &&
         !(r.dual_bound < r.trivial_bound);
}

/// The throughput a job should reach: its fastest open throughput, or less where its utility is
/// flat beyond a saturation throughput (piecewise-linear utilities).
template <class Utility>
double throughput_goal(const Utility& utility, const job_parameters& job, double fastest) {
  const double saturation = utility.saturation(job);
  if (!(saturation < fastest)) return fastest;
  return utility.value(saturation, job) < utility.value(fastest, job) ? fastest : saturation;
}

/// Job i's fastest throughput on an open resource.
template <class Scalar>
double fastest_open(const dense_view<Scalar>& view, std::int64_t i) {
  double best = 0.0;
  for (std::int32_t j = 0; j < view.m; ++j) best = std::max(best, view.value(i, j));
  return best;
}

/// The carried allocation as it is built: the usage, the jobs' throughputs, and the rows of the
/// jobs that arrived or changed (the others' rows stay in the last allocation).
/// A row placed anew: (resource, fraction) in increasing resource order.
using placed_row = std::vector<std::pair<std::int32_t, double>>;

/// Row `from` of `last` as a placed row: a kept job's row that is about to change.
inline placed_row row_of_last(const allocation& last, std::size_t from) {
  placed_row row;
  for (auto e = last.job_offset[from]; e < last.job_offset[from + 1]; ++e)
    row.emplace_back(last.option[static_cast<std::size_t>(e)],
                     last.fraction[static_cast<std::size_t>(e)]);
  return row;
}

struct carried_rows {
  Eigen::VectorXd usage, throughput;
  std::vector<Eigen::Index> to_place;  ///< jobs that arrived or changed
  std::vector<placed_row> placed;      ///< to_place's rows
};

/// Fixed chunks of the rows for a re-plan's passes over every job, run on several threads: the
/// layout depends on n and the chunk size only, and the chunks' results are joined in chunk
/// order, so a pass gives the same answer on any number of threads.
struct row_chunks {
  static constexpr Eigen::Index default_rows_per_chunk = 16384;
  Eigen::Index n = 0, rows_per_chunk = default_rows_per_chunk, count = 1;

  explicit row_chunks(Eigen::Index jobs, Eigen::Index per_chunk = default_rows_per_chunk)
      : n(jobs),
        rows_per_chunk(per_chunk),
        count(std::max<Eigen::Index>(1, (jobs + per_chunk - 1) / per_chunk)) {}
  Eigen::Index begin(Eigen::Index c) const { return c * rows_per_chunk; }
  Eigen::Index end(Eigen::Index c) const { return std::min(n, begin(c) + rows_per_chunk); }

  /// f(c) for every chunk c, on up to `threads` threads.
  template <class F>
  void run([[maybe_unused]] int threads, const F& f) const {
    POPALLOC_PRAGMA_OMP(omp parallel for schedule(dynamic, 1) num_threads(threads) if (count > 1))
    for (Eigen::Index c = 0; c < count; ++c) f(c);
  }
};

/// Makes `map` (an entry per row of the last answer) an entry per row now: map[origin[i]], -1
/// where origin[i] is -1 or names no entry of `map`. In place, and only where a row's origin is
/// not its own (the changed and arrived rows, the rows removals moved): every such entry is read
/// from the old map before any is written, so one row's move cannot overwrite what another
/// reads. A fresh map would cost its page faults, and a full pass its writes, every re-plan.
inline void follow_row_map(std::vector<std::int64_t>& map, const std::vector<std::int64_t>& origin,
                           int threads) {
  const std::size_t mapped = map.size();
  const row_chunks chunks(static_cast<Eigen::Index>(origin.size()));
  std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> moved(
      static_cast<std::size_t>(chunks.count));
  chunks.run(threads, [&](Eigen::Index c) {
    auto& mine = moved[static_cast<std::size_t>(c)];
    for (auto i = static_cast<std::size_t>(chunks.begin(c));
         i < static_cast<std::size_t>(chunks.end(c)); ++i) {
      const std::int64_t from = origin[i];
      if (i < mapped && from == static_cast<std::int64_t>(i)) continue;
      mine.emplace_back(i, from >= 0 && static_cast<std::size_t>(from) < mapped
                               ? map[static_cast<std::size_t>(from)]
                               : -1);
    }
  });
  map.resize(origin.size());
  for (const auto& chunk : moved)
    for (const auto& [i, entry] : chunk) map[i] = entry;
}

/// The first entry of the increasing `rows` at or after row i.
inline std::size_t first_at_or_after(const std::vector<Eigen::Index>& rows, Eigen::Index i) {
  return static_cast<std::size_t>(std::lower_bound(rows.begin(), rows.end(), i) - rows.begin());
}

/// Writes zeros over data[0, count) in blocks, on up to `threads` threads, so that the pages
/// behind it are mapped.
template <class T>
void write_pages(T* data, std::size_t count, int threads) {
  const row_chunks blocks(static_cast<Eigen::Index>(count), Eigen::Index{1} << 16);
  blocks.run(threads,
             [&](Eigen::Index b) { std::fill(data + blocks.begin(b), data + blocks.end(b), T{}); });
}

/// The arrays of an answer that is being replaced, for the next carried answer to fill: at a
/// million jobs, fresh memory for them costs its page faults on every re-plan.
struct answer_buffers {
  allocation rows;
  Eigen::VectorXd throughput;

  void take(solve_result& old) {
    rows = std::move(old.allocation);
    throughput = std::move(old.throughput);
  }
  /// Gives the buffers `answer`'s sizes, writing every page now, on up to `threads` threads:
  /// the first re-plan after a solve then fills memory already mapped, as later ones do.
  void map_like(const solve_result& answer, int threads) {
    rows.job_offset.resize(answer.allocation.job_offset.size());
    rows.option.resize(answer.allocation.option.size());
    rows.fraction.resize(answer.allocation.fraction.size());
    throughput.resize(answer.throughput.size());
    write_pages(rows.job_offset.data(), rows.job_offset.size(), threads);
    write_pages(rows.option.data(), rows.option.size(), threads);
    write_pages(rows.fraction.data(), rows.fraction.size(), threads);
    write_pages(throughput.data(), static_cast<std::size_t>(throughput.size()), threads);
  }
  /// Makes `out` a vector of n entries (contents unspecified), in `throughput`'s memory where
  /// that has n entries too (Eigen reallocates on any other size).
  void lend_throughput(Eigen::Index n, Eigen::VectorXd& out) {
    if (throughput.size() == n) {
      out.swap(throughput);
    } else {
      out.resize(n);
    }
  }
};

/// The rows of the jobs that did not change since `last`: their throughputs (a changed row's
/// is 0 until it is placed) and `kept_usage`, their rows' usage; the jobs to place, in job
/// order. `origin[i]`: the row job i had in `last`, -1 when it arrived or changed since. On up to
/// `threads` threads; `buffers` lends the throughputs' memory.
inline carried_rows gather_kept_rows(const Eigen::VectorXd& kept_usage, const solve_result& last,
                                     const std::vector<std::int64_t>& origin, int threads,
                                     answer_buffers& buffers) {
  const auto n = static_cast<Eigen::Index>(origin.size());
  carried_rows rows;
  rows.usage = kept_usage;
  buffers.lend_throughput(n, rows.throughput);
  const auto last_jobs = static_cast<std::int64_t>(last.allocation.jobs());
  const row_chunks chunks(n);
  std::vector<std::vector<Eigen::Index>> changed(static_cast<std::size_t>(chunks.count));
  chunks.run(threads, [&](Eigen::Index c) {
    for (Eigen::Index i = chunks.begin(c); i < chunks.end(c); ++i) {
      const std::int64_t from = origin[static_cast<std::size_t>(i)];
      const bool kept = from >= 0 && from < last_jobs;
      rows.throughput[i] = kept ? last.throughput[from] : 0.0;
      if (!kept) changed[static_cast<std::size_t>(c)].push_back(i);
    }
  });
  for (const auto& chunk : changed)
    rows.to_place.insert(rows.to_place.end(), chunk.begin(), chunk.end());
  rows.placed.resize(rows.to_place.size());
  return rows;
}

/// Gives placed job to_place[q] up to `free_time` more time on its fastest resources with room
/// (usage below `room`), up to its throughput_goal where its utility is piecewise linear, and
/// sets its throughput. An arrival starts from an empty row and all of its time; a job cut on a
/// full resource gets back the time it gave (a log job cut to no throughput would lose all its
/// utility), and one whose best response left time idle at a kink gets that time while capacity
/// is left.
template <class Utility, class Scalar>
void fill_free_time(const dense_view<Scalar>& view, const Utility& utility, std::size_t q,
                    double free_time, const Eigen::VectorXd& room, carried_rows& rows) {
  const Eigen::Index i = rows.to_place[q];
  auto& row = rows.placed[q];
  double t = 0.0;
  for (const auto& [j, x] : row) t += x * view.value(i, j);
  double goal = fastest_open(view, i);
  if constexpr (Utility::piecewise_linear)
    goal = throughput_goal(utility, view.parameters(i), goal);
  rows.throughput[i] = t;
  if (!(free_time > 0.0) || !(t < goal)) return;
  std::vector<std::int32_t> order(static_cast<std::size_t>(view.m));
  std::iota(order.begin(), order.end(), std::int32_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return view.value(i, a) > view.value(i, b);
  });
  for (const std::int32_t j : order) {
    const double speed = view.value(i, j), d = view.amount(i, j);
    if (!(t < goal) || !(free_time > 0.0) || !(speed > 0.0)) break;
    double x = std::min(free_time, (goal - t) / speed);
    if (d > 0.0) x = std::min(x, (room[j] - rows.usage[j]) / d);
    if (!(x > 0.0)) continue;
    const auto at =
        std::find_if(row.begin(), row.end(), [&](const auto& e) { return e.first == j; });
    if (at != row.end()) {
      at->second += x;
    } else {
      row.emplace_back(j, x);
    }
    rows.usage[j] += d * x;
    t += x * speed;
    free_time -= x;
  }
  std::sort(row.begin(), row.end());  // options in increasing order, as the solver returns them
  rows.throughput[i] = t;
}

/// Entries of rows [begin, end) of the carried allocation: the placed rows' own, the kept rows'
/// in `last`.
inline std::size_t carried_entries(const carried_rows& rows, const allocation& last,
                                   const std::vector<std::int64_t>& origin, Eigen::Index begin,
                                   Eigen::Index end) {
  std::size_t entries = 0;
  for (std::size_t i = static_cast<std::size_t>(begin), q = first_at_or_after(rows.to_place, begin);
       i < static_cast<std::size_t>(end); ++i) {
    if (q < rows.to_place.size() && rows.to_place[q] == static_cast<Eigen::Index>(i)) {
      entries += rows.placed[q++].size();
      continue;
    }
    const auto from = static_cast<std::size_t>(origin[i]);
    entries += static_cast<std::size_t>(last.job_offset[from + 1] - last.job_offset[from]);
  }
  return entries;
}

/// Writes rows [begin, end) of the carried allocation `a` from entry `at` on. Runs of kept rows
/// that were consecutive in `last` (all but the few a change touched or a removal moved) are
/// copied in one block each.
inline void assemble_chunk(const carried_rows& rows, const allocation& last,
                           const std::vector<std::int64_t>& origin, std::size_t begin,
                           std::size_t end, std::size_t at, allocation& a) {
  std::size_t next_placed = first_at_or_after(rows.to_place, static_cast<Eigen::Index>(begin));
  for (std::size_t i = begin; i < end;) {
    if (next_placed < rows.to_place.size() &&
        rows.to_place[next_placed] == static_cast<Eigen::Index>(i)) {
      for (const auto& [j, x] : rows.placed[next_placed]) {
        a.option[at] = j;
        a.fraction[at] = x;
        ++at;
      }
      ++next_placed;
      a.job_offset[++i] = static_cast<std::int64_t>(at);
      continue;
    }
    const std::size_t stop =
        next_placed < rows.to_place.size()
            ? std::min(end, static_cast<std::size_t>(rows.to_place[next_placed]))
            : end;
    std::size_t run_end = i + 1;
    while (run_end < stop && origin[run_end] == origin[run_end - 1] + 1) ++run_end;
    const auto first = static_cast<std::size_t>(origin[i]);
    const std::int64_t from = last.job_offset[first];
    const auto count = static_cast<std::size_t>(last.job_offset[first + (run_end - i)] - from);
    std::copy_n(last.option.begin() + from, count,
                a.option.begin() + static_cast<std::ptrdiff_t>(at));
    std::copy_n(last.fraction.begin() + from, count,
                a.fraction.begin() + static_cast<std::ptrdiff_t>(at));
    const std::int64_t shift = static_cast<std::int64_t>(at) - from;
    for (std::size_t k = i; k < run_end; ++k)
      a.job_offset[k + 1] = last.job_offset[first + (k - i) + 1] + shift;
    at += count;
    i = run_end;
  }
}

/// The carried allocation in job order: the placed jobs' rows, the others' from `last`, into
/// `a`'s memory (its contents are replaced), on up to `threads` threads.
inline void assemble_rows(const carried_rows& rows, const allocation& last,
                          const std::vector<std::int64_t>& origin, allocation& a, int threads = 1) {
  const row_chunks chunks(static_cast<Eigen::Index>(origin.size()));
  std::vector<std::size_t> start(static_cast<std::size_t>(chunks.count) + 1, 0);
  chunks.run(threads, [&](Eigen::Index c) {
    start[static_cast<std::size_t>(c) + 1] =
        carried_entries(rows, last, origin, chunks.begin(c), chunks.end(c));
  });
  std::partial_sum(start.begin(), start.end(), start.begin());
  a.job_offset.resize(origin.size() + 1);
  a.job_offset[0] = 0;
  a.option.resize(start.back());
  a.fraction.resize(start.back());
  chunks.run(threads, [&](Eigen::Index c) {
    assemble_chunk(rows, last, origin, static_cast<std::size_t>(chunks.begin(c)),
                   static_cast<std::size_t>(chunks.end(c)), start[static_cast<std::size_t>(c)], a);
  });
}

}  // namespace popalloc::detail
