// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A live scheduler's state as JSON (popalloc-schedule --state / --write-state): the
/// cluster and, per job, what Gavel's get_allocation receives (per-type throughputs, scale
/// factor, priority, steps), and the allocation in Gavel's {job_id: {type: fraction}} layout.
#pragma once

#include <string>
#include <vector>

#include <popalloc/cluster/cluster_spec.hpp>
#include <popalloc/cluster/job.hpp>
#include <popalloc/cluster/policy.hpp>

namespace popalloc_schedule {

struct scheduler_state {
  popalloc::cluster::gpu_cluster cluster;
  std::vector<popalloc::cluster::job> jobs;
};

/// \brief Reads a state file:
///
///     {"cluster": {"v100": 8, "p100": 8, "k80": 8},
///      "jobs": [{"id": 0, "throughputs": {"v100": 2.1, "p100": 1.2, "k80": 0.4},
///                "scale_factor": 1, "priority_weight": 1, "total_steps": 1e5,
///                "remaining_steps": 4e4, "arrival_time": 0, "job_type": "ResNet-18"}]}
///
/// Per job only `id` (an integer, unique) and `throughputs` (steps/s of the whole job on each
/// GPU type; a type left out is 0, cannot run there) are required; the others default to
/// scale_factor 1, priority_weight 1, total_steps 0, remaining_steps = total_steps,
/// arrival_time 0, no slo, elapsed_time and isolated_time 0 (finish-time fairness) and an empty
/// job_type. \throws popalloc::io::input_error "FILE:LINE: what" for malformed JSON, unknown or
/// repeated keys, wrong types, GPU types outside the cluster and values out of range.
scheduler_state read_scheduler_state(const std::string& path);

/// \brief The text read_scheduler_state() reads back to the same cluster and jobs, bit for bit.
std::string scheduler_state_json(const popalloc::cluster::gpu_cluster& cluster,
                                 const std::vector<popalloc::cluster::job>& jobs);

/// \brief Gavel's allocation layout: {"<job id>": {"<type>": fraction, ...}, ...}.
std::string gavel_allocation_json(const popalloc::cluster::gpu_cluster& cluster,
                                  const std::vector<popalloc::cluster::job>& jobs,
                                  const popalloc::cluster::cluster_allocation& allocation);

}  // namespace popalloc_schedule
