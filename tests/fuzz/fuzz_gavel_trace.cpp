// SPDX-License-Identifier: Apache-2.0
// Fuzz target: a cluster spec line, a "----" line, then a Gavel trace. Both readers either reject
// the input (invalid_problem / io::input_error) or their output goes through the whole policy
// path (jobs_from_trace + allocate, max-min fairness and makespan) against a small built-in
// throughput table. allocate() may reject the data, but never crash; what it returns has finite
// fractions in [0, 1], rows summing to <= 1 and no GPU type over-subscribed. Accepted trace
// fields lie in the documented ranges.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <popalloc/cluster/cluster_spec.hpp>
#include <popalloc/cluster/policies.hpp>
#include <popalloc/cluster/throughputs.hpp>
#include <popalloc/cluster/trace.hpp>

#include "fuzz_input.hpp"

namespace {

const popalloc::cluster::throughput_table& small_table() {
  static const popalloc::cluster::throughput_table table = [] {
    popalloc::cluster::throughput_table t;
    for (const char* gpu : {"v100", "p100", "k80"}) t.add_gpu_type(gpu);
    const double rates[3][3] = {{10.0, 6.0, 2.0}, {4.0, 3.5, 0.0}, {1.0, 0.5, 0.25}};
    const char* types[3] = {"A", "B", "C"};
    for (int k = 0; k < 3; ++k)
      for (int s : {1, 2, 4}) {
        t.set({types[k], s}, "v100", rates[k][0] * s);
        t.set({types[k], s}, "p100", rates[k][1] * s);
        t.set({types[k], s}, "k80", rates[k][2] * s);
      }
    return t;
  }();
  return table;
}

void check(const popalloc::cluster::cluster_allocation& a,
           const std::vector<popalloc::cluster::job>& jobs,
           const popalloc::cluster::gpu_cluster& cluster) {
  if (a.fraction.rows() != static_cast<Eigen::Index>(jobs.size())) std::abort();
  if (a.fraction.cols() != static_cast<Eigen::Index>(cluster.size())) std::abort();
  if (!a.fraction.allFinite()) std::abort();
  for (Eigen::Index i = 0; i < a.fraction.rows(); ++i) {
    if ((a.fraction.row(i).array() < 0.0).any()) std::abort();
    if (a.fraction.row(i).sum() > 1.0 + 1e-9) std::abort();
  }
  for (Eigen::Index w = 0; w < a.fraction.cols(); ++w) {
    double used = 0.0;
    for (Eigen::Index i = 0; i < a.fraction.rows(); ++i)
      used += jobs[static_cast<std::size_t>(i)].scale_factor * a.fraction(i, w);
    if (used >
        static_cast<double>(cluster.counts[static_cast<std::size_t>(w)]) * (1.0 + 1e-9) + 1e-9)
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const auto parts = popalloc_fuzz::split_parts(input, 2);
  const auto& table = small_table();
  try {
    const auto cluster = popalloc::cluster::parse_cluster(parts[0], table.gpu_types());
    const auto trace = popalloc::cluster::parse_trace(parts[1], "input.trace");
    // What the reader accepts is inside the ranges it documents.
    for (const auto& t : trace) {
      if (!popalloc::detail::in_value_range(t.total_steps) || t.total_steps < 0.0) std::abort();
      if (!popalloc::detail::in_value_range(t.priority_weight) || !(t.priority_weight > 0.0))
        std::abort();
      if (!(t.slo == -1.0 || (t.slo > 0.0 && popalloc::detail::in_value_range(t.slo))))
        std::abort();
      if (!(t.arrival_time >= 0.0 && t.arrival_time <= popalloc::cluster::max_trace_seconds))
        std::abort();
    }
    if (trace.size() > 64) return 0;  // the readers are covered; keep the solves quick
    const auto jobs = popalloc::cluster::jobs_from_trace(trace, table, cluster, "input.trace");
    for (const auto policy : {popalloc::cluster::policy_kind::max_min_fairness,
                              popalloc::cluster::policy_kind::min_makespan}) {
      popalloc::cluster::policy_options options;
      options.policy = policy;
      options.threads = 1;
      options.tolerance = 1e-4;
      try {
        check(popalloc::cluster::allocate(jobs, cluster, options), jobs, cluster);
      } catch (const popalloc::invalid_problem&) {
      } catch (const popalloc::invalid_options&) {
      }
    }
  } catch (const popalloc::io::input_error&) {
  } catch (const popalloc::invalid_problem&) {
  }
  return 0;
}
