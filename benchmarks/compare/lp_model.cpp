// SPDX-License-Identifier: Apache-2.0
#include "lp_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <popalloc/error.hpp>
#include <popalloc/utility/linear.hpp>
#include <popalloc/utility/target_priority.hpp>

namespace popalloc_compare {
namespace {

double weight_of(const popalloc::dense_problem<double>& p, Eigen::Index i) {
  return p.weight.size() == 0 ? 1.0 : p.weight[i];
}

double demand_of(const popalloc::dense_problem<double>& p, Eigen::Index i, Eigen::Index j) {
  if (p.demand.size() != 0) return p.demand(i, j);
  if (p.job_demand.size() != 0) return p.job_demand[i];
  return 1.0;
}

}  // namespace

const char* to_string(lp_kind kind) {
  return kind == lp_kind::linear ? "linear" : "target-priority";
}

lp_model build_lp(const popalloc::dense_problem<double>& problem, lp_kind kind) {
  const Eigen::Index n = problem.jobs(), m = problem.resources();
  constexpr double inf = std::numeric_limits<double>::infinity();
  const bool epigraph = kind == lp_kind::target_priority;
  std::int64_t x_count = 0;
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < m; ++j) x_count += problem.throughput(i, j) > 0.0 ? 1 : 0;
  const std::int64_t rows = n + m + (epigraph ? n : 0);
  const std::int64_t columns = x_count + (epigraph ? n : 0);
  const std::int64_t nonzeros = x_count * (epigraph ? 3 : 2) + (epigraph ? n : 0);
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  if (rows > int_max || columns > int_max)
    throw popalloc::invalid_problem("the LP has more rows or columns than the LP libraries index");

  lp_model lp;
  lp.kind = kind;
  lp.rows = static_cast<int>(rows);
  lp.columns = static_cast<int>(columns);
  lp.x_columns = static_cast<int>(x_count);
  lp.start.reserve(static_cast<std::size_t>(columns + 1));
  lp.index.reserve(static_cast<std::size_t>(nonzeros));
  lp.value.reserve(static_cast<std::size_t>(nonzeros));
  lp.column_lower.reserve(static_cast<std::size_t>(columns));
  lp.column_upper.reserve(static_cast<std::size_t>(columns));
  lp.objective.reserve(static_cast<std::size_t>(columns));
  lp.x_job.reserve(static_cast<std::size_t>(x_count));
  lp.x_resource.reserve(static_cast<std::size_t>(x_count));
  lp.start.push_back(0);
  for (Eigen::Index i = 0; i < n; ++i) {
    const double w = weight_of(problem, i);
    for (Eigen::Index j = 0; j < m; ++j) {
      const double a = problem.throughput(i, j);
      if (!(a > 0.0)) continue;
      lp.index.push_back(static_cast<int>(i));  // job row
      lp.value.push_back(1.0);
      const double d = demand_of(problem, i, j);
      if (d != 0.0) {
        lp.index.push_back(static_cast<int>(n + j));  // capacity row
        lp.value.push_back(d);
      }
      if (epigraph && w * a != 0.0) {
        lp.index.push_back(static_cast<int>(n + m + i));  // z_i - w_i t_i <= -w_i T_i
        lp.value.push_back(-w * a);
      }
      lp.start.push_back(static_cast<std::int64_t>(lp.index.size()));
      lp.column_lower.push_back(0.0);
      lp.column_upper.push_back(inf);
      lp.objective.push_back(epigraph ? 0.0 : w * a);
      lp.x_job.push_back(i);
      lp.x_resource.push_back(static_cast<int>(j));
    }
  }
  if (epigraph) {
    for (Eigen::Index i = 0; i < n; ++i) {
      lp.index.push_back(static_cast<int>(n + m + i));
      lp.value.push_back(1.0);
      lp.start.push_back(static_cast<std::int64_t>(lp.index.size()));
      lp.column_lower.push_back(-inf);
      lp.column_upper.push_back(0.0);
      lp.objective.push_back(1.0);
    }
  }
  lp.row_lower.assign(static_cast<std::size_t>(rows), -inf);
  lp.row_upper.assign(static_cast<std::size_t>(rows), 0.0);
  for (Eigen::Index i = 0; i < n; ++i) lp.row_upper[static_cast<std::size_t>(i)] = 1.0;
  for (Eigen::Index j = 0; j < m; ++j)
    lp.row_upper[static_cast<std::size_t>(n + j)] = problem.capacity[j];
  if (epigraph) {
    for (Eigen::Index i = 0; i < n; ++i)
      lp.row_upper[static_cast<std::size_t>(n + m + i)] =
          -weight_of(problem, i) * problem.target[i];
  }
  return lp;
}

primal_check check_primal(const popalloc::dense_problem<double>& problem, lp_kind kind,
                          const lp_model& model, const double* column_values) {
  const Eigen::Index n = problem.jobs(), m = problem.resources();
  std::vector<double> t(static_cast<std::size_t>(n), 0.0), row_sum(t.size(), 0.0);
  std::vector<double> usage(static_cast<std::size_t>(m), 0.0);
  primal_check out;
  for (int c = 0; c < model.x_columns; ++c) {
    const double x = column_values[c];
    const auto i = static_cast<std::size_t>(model.x_job[static_cast<std::size_t>(c)]);
    const int j = model.x_resource[static_cast<std::size_t>(c)];
    if (!std::isfinite(x)) {
      out.max_violation = std::numeric_limits<double>::infinity();
      continue;
    }
    out.max_violation = std::max(out.max_violation, -x);
    t[i] += problem.throughput(static_cast<Eigen::Index>(i), j) * x;
    row_sum[i] += x;
    usage[static_cast<std::size_t>(j)] += demand_of(problem, static_cast<Eigen::Index>(i), j) * x;
  }
  const popalloc::utility::linear linear;
  const popalloc::utility::target_priority target;
  for (Eigen::Index i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    out.max_violation = std::max(out.max_violation, row_sum[k] - 1.0);
    popalloc::job_parameters job;
    job.weight = weight_of(problem, i);
    if (problem.target.size() != 0) job.target = problem.target[i];
    out.objective += kind == lp_kind::linear ? linear.value(t[k], job) : target.value(t[k], job);
  }
  for (Eigen::Index j = 0; j < m; ++j)
    out.max_violation =
        std::max(out.max_violation, usage[static_cast<std::size_t>(j)] - problem.capacity[j]);
  return out;
}

}  // namespace popalloc_compare
