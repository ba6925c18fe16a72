// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Space sharing: the combinations a packed policy may run (every job alone, and pairs of
/// jobs with the same scale factor sharing the same GPUs at their measured co-located
/// throughputs), grouped by classes of identical jobs.
///
/// A pair's throughputs depend only on the two jobs' (job type, scale factor), so the pairs are
/// not enumerated job by job (2048 jobs give 2.1 million of them) but class by class: a class
/// is a set of jobs that no packed max-min policy can tell apart (same key, throughputs, weight
/// and normaliser). Gavel's table has 26 single-GPU job types, hence at most 351 class pairs.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/cluster/cluster_spec.hpp"
#include "popalloc/cluster/instance.hpp"
#include "popalloc/cluster/job.hpp"
#include "popalloc/cluster/policy.hpp"
#include "popalloc/cluster/throughputs.hpp"
#include "popalloc/error.hpp"

namespace popalloc::cluster {

/// \brief A pair of job classes sharing GPUs of one type.
struct class_pair {
  int first = 0, second = 0;  ///< class indices, first <= second
  int gpu = 0;                ///< GPU type (cluster order)
  /// Steps/s of a member of `first` and of `second` while they share (for first == second, the
  /// table's two entries: the pair's first and second job).
  double first_throughput = 0.0, second_throughput = 0.0;
};

/// \brief What else jobs of one class must share besides their key, throughputs, weight and
/// normaliser: what the policy's requirement of a job depends on.
enum class class_split : std::uint8_t {
  none = 0,             ///< max-min fairness, max-throughput
  remaining_steps = 1,  ///< min makespan: a job needs throughput level x r_i
  finish_time = 2,      ///< finish-time fairness: r_i, elapsed t_i, C_i and ET_iso_i
  slo_floor = 3,        ///< max-throughput with SLO floors: the floor (jobs without steps kept)
};

/// \brief The jobs of an instance grouped into classes, and the class pairs on offer.
struct combination_model {
  std::vector<std::vector<Eigen::Index>> classes;  ///< member rows of each class
  std::vector<int> class_of;                       ///< per job row; -1: not schedulable
  std::vector<class_pair> pairs;
  std::int64_t pruned = 0;  ///< class pairs x types left out by min_combined_throughput
  /// Job pairs x GPU types the class pairs stand for (what a per-pair model would enumerate).
  double job_pair_options = 0.0;
};

namespace detail {

/// Jobs a packed policy cannot tell apart: same key, throughputs, weight, normaliser and what
/// `split` names. Where the split needs remaining steps, a job without any is in no class: the
/// policy does not count it, so it gets no GPU time.
inline std::vector<int> job_classes(const instance& in, const std::vector<job>& jobs,
                                    std::vector<std::vector<Eigen::Index>>& members,
                                    class_split split) {
  using class_key = std::tuple<std::string, int, double, double, std::vector<double>>;
  const bool by_remaining =
      split == class_split::remaining_steps || split == class_split::finish_time;
  std::map<class_key, int> index;
  std::vector<int> class_of(jobs.size(), -1);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto r = static_cast<Eigen::Index>(i);
    if (!in.schedulable[i] || (by_remaining && !(in.remaining[r] > 0.0))) continue;
    std::vector<double> row(static_cast<std::size_t>(in.types()));
    for (Eigen::Index w = 0; w < in.types(); ++w)
      row[static_cast<std::size_t>(w)] = in.model_throughput(r, w);
    if (by_remaining) row.push_back(in.remaining[r]);
    if (split == class_split::slo_floor) row.push_back(in.slo_floor[r]);
    if (split == class_split::finish_time) {
      row.push_back(in.elapsed[r]);
      row.push_back(in.isolated_time[r]);
      row.push_back(in.isolated_throughput[r]);
    }
    class_key key{jobs[i].job_type, jobs[i].scale_factor, in.weight[r], in.proportional[r],
                  std::move(row)};
    const auto found = index.emplace(std::move(key), static_cast<int>(members.size()));
    if (found.second) members.emplace_back();
    class_of[i] = found.first->second;
    members[static_cast<std::size_t>(class_of[i])].push_back(r);
  }
  return class_of;
}

}  // namespace detail

/// \brief Classes of `jobs` (prepared as `in`, heterogeneity-aware) and the class pairs that
/// `table` has co-located throughputs for, on the GPU types both classes can use. With `split`
/// remaining_steps or finish_time, jobs of a class also have equal remaining steps (and, for
/// finish_time, equal elapsed and isolated times and isolated throughput), and jobs without
/// remaining steps are left out; with slo_floor, jobs of a class have equal SLO floors.
/// \throws invalid_options for a NaN or negative threshold.
inline combination_model make_combinations(const instance& in, const std::vector<job>& jobs,
                                           const gpu_cluster& cluster,
                                           const throughput_table& table,
                                           const pairing_options& options = {},
                                           class_split split = class_split::none) {
  if (!(options.min_combined_throughput >= 0.0))
    throw invalid_options("pairing: min_combined_throughput must be >= 0");
  combination_model out;
  out.class_of = detail::job_classes(in, jobs, out.classes, split);
  if (!options.enabled) return out;
  const auto classes = static_cast<int>(out.classes.size());
  for (int a = 0; a < classes; ++a) {
    const Eigen::Index ra = out.classes[static_cast<std::size_t>(a)].front();
    const job& ja = jobs[static_cast<std::size_t>(ra)];
    for (int b = a; b < classes; ++b) {
      const Eigen::Index rb = out.classes[static_cast<std::size_t>(b)].front();
      const job& jb = jobs[static_cast<std::size_t>(rb)];
      const double na = static_cast<double>(out.classes[static_cast<std::size_t>(a)].size());
      const double nb = static_cast<double>(out.classes[static_cast<std::size_t>(b)].size());
      if (ja.scale_factor != jb.scale_factor || (a == b && na < 2.0)) continue;
      for (Eigen::Index w = 0; w < in.types(); ++w) {
        const double ta = in.model_throughput(ra, w), tb = in.model_throughput(rb, w);
        if (!(ta > 0.0) || !(tb > 0.0)) continue;  // also: too few GPUs of w for s
        auto [pa, pb] = table.get_pair(job_key{ja.job_type, ja.scale_factor},
                                       job_key{jb.job_type, jb.scale_factor},
                                       cluster.types[static_cast<std::size_t>(w)]);
        // Two jobs of one class must be interchangeable for the class model to be exact;
        // Gavel's table is symmetric there, a lopsided entry counts at its smaller side.
        if (a == b) pa = pb = std::min(pa, pb);
        if (!(pa > 0.0) || !(pb > 0.0)) continue;
        if (pa / ta + pb / tb < options.min_combined_throughput) {
          ++out.pruned;
          continue;
        }
        out.pairs.push_back({a, b, static_cast<int>(w), pa, pb});
        out.job_pair_options += a == b ? na * (na - 1.0) / 2.0 : na * nb;
      }
    }
  }
  return out;
}

}  // namespace popalloc::cluster
