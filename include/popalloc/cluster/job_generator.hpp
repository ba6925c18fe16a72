// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Gavel-like job generation (Gavel scheduler/utils.py generate_job): scale factors,
/// durations, job types, priorities and Poisson arrivals, reproducible from a seed.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "popalloc/cluster/cluster_spec.hpp"
#include "popalloc/cluster/job.hpp"
#include "popalloc/cluster/throughputs.hpp"
#include "popalloc/error.hpp"
#include "popalloc/random.hpp"

namespace popalloc::cluster {

/// \brief Generator settings; the defaults follow Gavel's generate_job with multi-GPU jobs on.
struct generator_options {
  std::uint64_t seed = 0;
  /// Draw s in {1, 2, 4, 8} with 70/10/15/5 %; false: every job has s = 1.
  bool multi_gpu = true;
  /// Priority 5 with probability 0.2 (Gavel's multi-priority mode); false: all 1.
  bool multi_priority = false;
  /// Poisson arrivals at this many jobs per hour (exponential gaps, mean 3600 / rate s);
  /// 0: every job arrives at t = 0 (a static trace).
  double jobs_per_hour = 0.0;
  /// GPU type whose throughput converts a duration to steps (Gavel: "v100").
  std::string reference_gpu = "v100";
  /// Draw an SLO in {1.2, 2, 10} with probability 1/3 each (Gavel's SLO mode); false: none.
  bool slos = false;
};

/// \brief One generated job, like a row of Gavel's job table.
struct generated_job {
  std::string job_type;
  int scale_factor = 1;
  double duration = 0.0;     ///< seconds on the reference GPU type
  double total_steps = 0.0;  ///< duration * T_reference(job type, s)
  double priority_weight = 1.0;
  double arrival_time = 0.0;  ///< seconds
  double slo = -1.0;          ///< deadline = arrival + slo * duration; <= 0: none
};

/// \brief Generates `count` jobs. Per job, in Gavel's order: scale factor r ~ U(0,1) (2 if
/// 0.7 <= r <= 0.8, 4 if 0.8 < r <= 0.95, 8 if r > 0.95, else 1); duration 60 * 10^U(1.5, 3) s
/// with probability 0.8, else 60 * 10^U(3, 4) s; job type uniform over the table's
/// scale-factor-1 types, redrawn until (type, s) is in the table (Gavel redraws until the template
/// is distributed); priority; arrival gap; the SLO from a separate stream. The draws use
/// popalloc's portable random source, so a seed gives the same jobs everywhere (not Gavel's exact
/// draws: Python's RNG differs).
/// \throws invalid_problem if the table has no job types or no reference-GPU entry for a key.
inline std::vector<generated_job> generate_jobs(std::int64_t count, const throughput_table& table,
                                                const generator_options& options = {}) {
  if (count < 0) throw invalid_problem("cannot generate a negative number of jobs");
  if (!(options.jobs_per_hour >= 0.0) || !std::isfinite(options.jobs_per_hour))
    throw invalid_problem("jobs_per_hour must be finite and >= 0");
  const std::vector<std::string> types = table.job_types();
  if (types.empty()) throw invalid_problem("the throughput table has no scale-factor-1 job types");
  random_source rng(options.seed);
  // SLOs come from a stream of their own, so turning them on leaves the other draws unchanged.
  random_source slo_rng(options.seed ^ 0x510c0ffee5105105ULL);
  std::vector<generated_job> out;
  out.reserve(static_cast<std::size_t>(count));
  double clock = 0.0;
  for (std::int64_t i = 0; i < count; ++i) {
    generated_job g;
    g.scale_factor = 1;
    if (options.multi_gpu) {
      const double r = rng.unit();
      if (r >= 0.7 && r <= 0.8)
        g.scale_factor = 2;
      else if (r > 0.8 && r <= 0.95)
        g.scale_factor = 4;
      else if (r > 0.95)
        g.scale_factor = 8;
    }
    const double long_job = rng.unit();
    const double exponent = long_job < 0.8 ? 1.5 + 1.5 * rng.unit() : 3.0 + rng.unit();
    g.duration = 60.0 * std::pow(10.0, exponent);
    bool any = false;
    for (const std::string& t : types) any = any || table.contains(job_key{t, g.scale_factor});
    if (!any)
      throw invalid_problem("the throughput table has no job type at scale factor " +
                            std::to_string(g.scale_factor));
    for (;;) {
      const std::string& t = types[static_cast<std::size_t>(rng.below(types.size()))];
      if (table.contains(job_key{t, g.scale_factor})) {
        g.job_type = t;
        break;
      }
    }
    const double reference = table.get(job_key{g.job_type, g.scale_factor}, options.reference_gpu);
    if (!(reference > 0.0))
      throw invalid_problem("job " + job_key{g.job_type, g.scale_factor}.to_string() +
                            " has no positive throughput on the reference GPU type '" +
                            options.reference_gpu + "'");
    g.total_steps = std::round(g.duration * reference);
    if (options.multi_priority && rng.unit() < 0.2) g.priority_weight = 5.0;
    if (options.slos) {
      static constexpr double choices[3] = {1.2, 2.0, 10.0};
      g.slo = choices[slo_rng.below(3)];
    }
    if (options.jobs_per_hour > 0.0) {
      if (i > 0) clock += -std::log(1.0 - rng.unit()) * 3600.0 / options.jobs_per_hour;
      g.arrival_time = clock;
    }
    out.push_back(std::move(g));
  }
  return out;
}

/// \brief Jobs for `cluster` from generated rows: job i gets id i (generation order).
inline std::vector<job> jobs_from_generated(const std::vector<generated_job>& rows,
                                            const throughput_table& table,
                                            const gpu_cluster& cluster) {
  std::vector<job> out;
  out.reserve(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const generated_job& g = rows[i];
    job j = make_job(static_cast<std::int64_t>(i), g.job_type, g.scale_factor, g.total_steps, table,
                     cluster);
    j.arrival_time = g.arrival_time;
    j.priority_weight = g.priority_weight;
    j.slo = g.slo;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace popalloc::cluster
