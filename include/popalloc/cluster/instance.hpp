// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A scheduling instance prepared for the policies: the policy's throughput model
/// (heterogeneity-aware or agnostic), usable GPU types, and Gavel's normalisers (proportional
/// and isolated throughputs).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "popalloc/cluster/cluster_spec.hpp"
#include "popalloc/cluster/job.hpp"
#include "popalloc/cluster/policy.hpp"
#include "popalloc/error.hpp"

namespace popalloc::cluster {

/// \brief Dense per-job data in the cluster's GPU-type order.
struct instance {
  Eigen::MatrixXd true_throughput;   ///< T_iw as measured, n x m
  Eigen::MatrixXd model_throughput;  ///< what the policy optimises (agnostic: 1 or T_ref), 0 where
                                     ///< the job cannot run
  Eigen::VectorXd scale;             ///< s_i
  Eigen::VectorXd weight;            ///< w_i
  Eigen::VectorXd remaining;         ///< r_i, steps
  Eigen::VectorXd elapsed;           ///< t_i (finish-time fairness)
  Eigen::VectorXd isolated_time;     ///< C_i (finish-time fairness)
  Eigen::VectorXd arrival;           ///< arrival times (FIFO order)
  Eigen::VectorXd capacity;          ///< n_w (this (sub-)cluster's share)
  /// Gavel's proportional throughput P_i = sum_w T_iw n_w / N in the model throughputs, and
  /// the isolated effective throughput ET_iso_i; computed on the whole cluster and kept
  /// unchanged in POP parts (they only depend on n_w / N and n_w / m).
  Eigen::VectorXd proportional;
  Eigen::VectorXd proportional_true;  ///< P_i with the true throughputs
  Eigen::VectorXd isolated_throughput;
  /// SLO throughput floor in model throughputs (max-throughput): the rate that finishes the
  /// remaining steps by the deadline arrival + slo * duration, duration = total_steps /
  /// T_i,reference (Gavel); 0: no SLO; +inf: the deadline has passed.
  Eigen::VectorXd slo_floor;
  std::vector<char> schedulable;  ///< some type with T > 0 and s_i <= n_w on the whole cluster

  Eigen::Index jobs() const { return model_throughput.rows(); }
  Eigen::Index types() const { return model_throughput.cols(); }

  /// \brief The rows `members` with capacity `share` (a POP part). Normalisers are copied.
  instance subset(const std::vector<std::int64_t>& members, const Eigen::VectorXd& share) const {
    instance out;
    const auto n = static_cast<Eigen::Index>(members.size());
    const Eigen::Index m = types();
    out.true_throughput.resize(n, m);
    out.model_throughput.resize(n, m);
    for (Eigen::VectorXd* v :
         {&out.scale, &out.weight, &out.remaining, &out.elapsed, &out.isolated_time, &out.arrival,
          &out.proportional, &out.proportional_true, &out.isolated_throughput, &out.slo_floor})
      v->resize(n);
    out.schedulable.resize(members.size());
    for (Eigen::Index r = 0; r < n; ++r) {
      const auto i = static_cast<Eigen::Index>(members[static_cast<std::size_t>(r)]);
      out.true_throughput.row(r) = true_throughput.row(i);
      out.model_throughput.row(r) = model_throughput.row(i);
      out.scale[r] = scale[i];
      out.weight[r] = weight[i];
      out.remaining[r] = remaining[i];
      out.elapsed[r] = elapsed[i];
      out.isolated_time[r] = isolated_time[i];
      out.arrival[r] = arrival[i];
      out.proportional[r] = proportional[i];
      out.proportional_true[r] = proportional_true[i];
      out.isolated_throughput[r] = isolated_throughput[i];
      out.slo_floor[r] = slo_floor[i];
      out.schedulable[static_cast<std::size_t>(r)] = schedulable[static_cast<std::size_t>(i)];
    }
    out.capacity = share;
    return out;
  }
};

/// \brief Gavel's isolated allocation (OSDI 2020): x_iw = (n_w / m) / s_i on the types
/// job i can use, rows scaled down to sum 1 when above. Feasible: sum_i s_i x_iw <= n_w.
inline Eigen::MatrixXd isolated_allocation(const Eigen::MatrixXd& usable_throughput,
                                           const Eigen::VectorXd& scale,
                                           const Eigen::VectorXd& capacity) {
  const Eigen::Index n = usable_throughput.rows(), m = usable_throughput.cols();
  Eigen::MatrixXd x = Eigen::MatrixXd::Zero(n, m);
  if (n == 0) return x;
  for (Eigen::Index i = 0; i < n; ++i) {
    double sum = 0.0;
    for (Eigen::Index w = 0; w < m; ++w)
      if (usable_throughput(i, w) > 0.0) {
        x(i, w) = capacity[w] / static_cast<double>(n) / scale[i];
        sum += x(i, w);
      }
    if (sum > 1.0) x.row(i) /= sum;
  }
  return x;
}

/// \brief Prepares `jobs` on `cluster` for `options` (throughput model, normalisers).
/// \throws invalid_problem for invalid jobs or cluster.
inline instance prepare_instance(const std::vector<job>& jobs, const gpu_cluster& cluster,
                                 const policy_options& options) {
  validate_jobs(jobs, cluster);
  if (jobs.empty()) throw invalid_problem("no jobs to schedule");
  const auto n = static_cast<Eigen::Index>(jobs.size());
  const auto m = static_cast<Eigen::Index>(cluster.size());
  instance in;
  in.true_throughput.resize(n, m);
  in.model_throughput = Eigen::MatrixXd::Zero(n, m);
  for (Eigen::VectorXd* v :
       {&in.scale, &in.weight, &in.remaining, &in.elapsed, &in.isolated_time, &in.arrival,
        &in.proportional, &in.proportional_true, &in.isolated_throughput, &in.slo_floor})
    v->resize(n);
  in.capacity.resize(m);
  for (Eigen::Index w = 0; w < m; ++w)
    in.capacity[w] = static_cast<double>(cluster.counts[static_cast<std::size_t>(w)]);
  const double total = static_cast<double>(cluster.total());
  const int reference = cluster.index_of(options.reference_gpu);
  const bool unit_model = options.policy == policy_kind::max_min_fairness ||
                          options.policy == policy_kind::proportional_fairness;
  in.schedulable.assign(jobs.size(), 0);
  for (Eigen::Index i = 0; i < n; ++i) {
    const job& j = jobs[static_cast<std::size_t>(i)];
    in.scale[i] = j.scale_factor;
    in.weight[i] = j.priority_weight;
    in.remaining[i] = j.remaining();
    in.elapsed[i] = j.elapsed_time;
    in.isolated_time[i] = j.isolated_time;
    in.arrival[i] = j.arrival_time;
    double reference_value =
        reference >= 0 ? j.throughput[static_cast<std::size_t>(reference)] : 0.0;
    if (!(reference_value > 0.0))
      reference_value = *std::max_element(j.throughput.begin(), j.throughput.end());
    double p_true = 0.0, p = 0.0;
    for (Eigen::Index w = 0; w < m; ++w) {
      const double t = j.throughput[static_cast<std::size_t>(w)];
      in.true_throughput(i, w) = t;
      p_true += t * in.capacity[w] / total;
      // The normaliser counts every type the job has a throughput on, as Gavel's does, so it
      // does not depend on which types are too small for the job.
      const double model = !(t > 0.0)                        ? 0.0
                           : !options.heterogeneity_agnostic ? t
                           : unit_model                      ? 1.0
                                                             : reference_value;
      p += model * in.capacity[w] / total;
      // A job needs s_i GPUs of one type at once: a type with fewer can never run it.
      const bool usable = t > 0.0 && static_cast<double>(j.scale_factor) <= in.capacity[w];
      if (!usable) continue;
      in.schedulable[static_cast<std::size_t>(i)] = 1;
      in.model_throughput(i, w) = model;
    }
    in.proportional_true[i] = p_true;
    in.proportional[i] = p;
    in.slo_floor[i] = 0.0;
    if (j.slo > 0.0 && in.remaining[i] > 0.0) {
      const double time_left = j.slo * j.total_steps / reference_value - j.elapsed_time;
      in.slo_floor[i] = time_left > 0.0 ? in.remaining[i] / time_left : HUGE_VAL;
    }
  }
  const Eigen::MatrixXd iso = isolated_allocation(in.model_throughput, in.scale, in.capacity);
  for (Eigen::Index i = 0; i < n; ++i)
    in.isolated_throughput[i] = in.model_throughput.row(i).dot(iso.row(i));
  return in;
}

}  // namespace popalloc::cluster
