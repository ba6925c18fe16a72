// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The job description shared by the policies, POP and the round-based simulator.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "popalloc/cluster/cluster_spec.hpp"
#include "popalloc/cluster/throughputs.hpp"
#include "popalloc/error.hpp"

namespace popalloc::cluster {

/// \brief One training job as the policies see it. Throughputs are per GPU type in the order of
/// the gpu_cluster the job is scheduled on.
struct job {
  std::int64_t id = 0;       ///< caller's identifier (trace line / generation order), kept as is
  std::string job_type;      ///< model, e.g. "ResNet-18 (batch size 16)"
  int scale_factor = 1;      ///< s: GPUs the job holds at once
  double total_steps = 0.0;  ///< work of the whole job, in steps
  /// Steps still to run (min-makespan and finish-time fairness use it); a new job has
  /// remaining_steps == total_steps. Negative means "not set": total_steps is used.
  double remaining_steps = -1.0;
  double arrival_time = 0.0;     ///< seconds
  double priority_weight = 1.0;  ///< w_i > 0
  double slo = -1.0;             ///< Gavel's SLO column; <= 0: none
  /// T_iw: steps/s of the whole s-GPU job on one "unit" of GPU type w (s GPUs), in cluster
  /// order; 0 = cannot run on that type.
  std::vector<double> throughput;
  /// Finish-time fairness state (Themis rho): t_i, seconds since arrival, and C_i, the
  /// cumulative time the job would have needed in isolation for the steps it already ran
  /// (C_i += (r_prev - r_now) / ET_iso_prev between calls; the simulator keeps it).
  double elapsed_time = 0.0;
  double isolated_time = 0.0;

  /// \brief r_i: remaining_steps if set, else total_steps.
  double remaining() const { return remaining_steps >= 0.0 ? remaining_steps : total_steps; }
};

/// \brief Throws invalid_problem (naming the job's position) unless every job fits `cluster`:
/// one throughput per GPU type, finite and >= 0; s >= 1; finite steps >= 0; finite times;
/// priority weight > 0.
inline void validate_jobs(const std::vector<job>& jobs, const gpu_cluster& cluster) {
  cluster.validate();
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const job& j = jobs[i];
    const std::string who = "job " + std::to_string(i) + " (id " + std::to_string(j.id) + ")";
    if (j.throughput.size() != cluster.size())
      throw invalid_problem(who + " has " + std::to_string(j.throughput.size()) +
                            " throughputs, the cluster has " + std::to_string(cluster.size()) +
                            " GPU types");
    for (std::size_t w = 0; w < j.throughput.size(); ++w)
      if (!std::isfinite(j.throughput[w]) || j.throughput[w] < 0.0)
        throw invalid_problem(who + ": throughput on " + cluster.types[w] +
                              " must be finite and >= 0");
    if (j.scale_factor < 1) throw invalid_problem(who + ": scale factor must be >= 1");
    if (!std::isfinite(j.total_steps) || j.total_steps < 0.0)
      throw invalid_problem(who + ": total_steps must be finite and >= 0");
    if (!std::isfinite(j.remaining_steps))
      throw invalid_problem(who + ": remaining_steps must be finite");
    if (!(std::isfinite(j.priority_weight) && j.priority_weight > 0.0))
      throw invalid_problem(who + ": priority weight must be finite and > 0");
    if (!std::isfinite(j.arrival_time) || !std::isfinite(j.elapsed_time) || j.elapsed_time < 0.0 ||
        !std::isfinite(j.isolated_time) || j.isolated_time < 0.0 || !std::isfinite(j.slo))
      throw invalid_problem(who +
                            ": arrival/elapsed/isolated times and SLO must be finite (and "
                            "elapsed/isolated >= 0)");
  }
}

/// \brief A job of type (job_type, s) with its throughputs looked up in `table` for `cluster`.
/// \throws invalid_problem if the key is not in the table.
inline job make_job(std::int64_t id, const std::string& job_type, int scale_factor,
                    double total_steps, const throughput_table& table, const gpu_cluster& cluster) {
  job j;
  j.id = id;
  j.job_type = job_type;
  j.scale_factor = scale_factor;
  j.total_steps = total_steps;
  j.throughput = table.for_cluster(job_key{job_type, scale_factor}, cluster);
  return j;
}

}  // namespace popalloc::cluster
