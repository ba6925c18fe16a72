// SPDX-License-Identifier: Apache-2.0
// Packed max-min fairness against CLP's exact solve of Gavel's per-job LP: a variable for every
// job alone and every pair of jobs (same scale factor, co-located entry in the table) on every
// GPU type both can use, with no pruning and no classes.
#include <cmath>
#include <limits>
#include <vector>

#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>
#include <doctest/doctest.h>

#include <popalloc/cluster/instance.hpp>
#include <popalloc/cluster/packed_policies.hpp>

#include "packed_fixtures.hpp"

namespace pc = popalloc::cluster;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct sparse_lp {
  std::vector<int> rows, cols;
  std::vector<double> values, row_lo, row_up, col_up, objective;

  int add_row(double lo, double up) {
    row_lo.push_back(lo);
    row_up.push_back(up);
    return static_cast<int>(row_lo.size()) - 1;
  }
  int add_col(double up, double c) {
    col_up.push_back(up);
    objective.push_back(c);
    return static_cast<int>(col_up.size()) - 1;
  }
  void entry(int r, int c, double v) {
    rows.push_back(r);
    cols.push_back(c);
    values.push_back(v);
  }
  double maximize() {
    CoinPackedMatrix matrix(true, rows.data(), cols.data(), values.data(),
                            static_cast<CoinBigIndex>(values.size()));
    matrix.setDimensions(static_cast<int>(row_lo.size()), static_cast<int>(col_up.size()));
    const std::vector<double> col_lo(col_up.size(), 0.0);
    ClpSimplex model;
    model.setLogLevel(0);
    model.loadProblem(matrix, col_lo.data(), col_up.data(), objective.data(), row_lo.data(),
                      row_up.data());
    model.setOptimizationDirection(-1.0);
    model.setPrimalTolerance(1e-10);
    model.setDualTolerance(1e-10);
    model.dual();
    return model.isProvenOptimal() ? model.objectiveValue() : std::nan("");
  }
};

/// Gavel's max_min_fairness_packed LP on the jobs themselves; returns its optimum and counts
/// the pair columns.
double per_job_packed_lp(const std::vector<pc::job>& jobs, const pc::gpu_cluster& cluster,
                         int& pair_columns) {
  const pc::instance in = pc::prepare_instance(jobs, cluster, pc::policy_options{});
  const auto n = static_cast<int>(jobs.size());
  const auto m = static_cast<int>(cluster.size());
  sparse_lp lp;
  std::vector<int> time(static_cast<std::size_t>(n)), level(static_cast<std::size_t>(n)),
      gpu(static_cast<std::size_t>(m));
  for (int i = 0; i < n; ++i) time[static_cast<std::size_t>(i)] = lp.add_row(-kInf, 1.0);
  for (int w = 0; w < m; ++w) gpu[static_cast<std::size_t>(w)] = lp.add_row(-kInf, in.capacity[w]);
  for (int i = 0; i < n; ++i) level[static_cast<std::size_t>(i)] = lp.add_row(0.0, kInf);
  const int t = lp.add_col(kInf, 1.0);
  for (int i = 0; i < n; ++i)
    if (in.schedulable[static_cast<std::size_t>(i)])
      lp.entry(level[static_cast<std::size_t>(i)], t,
               -in.weight[i] * in.proportional[i] / in.scale[i]);
  for (int i = 0; i < n; ++i)
    for (int w = 0; w < m; ++w) {
      const double a = in.model_throughput(i, w);
      if (!(a > 0.0)) continue;
      const int c = lp.add_col(kInf, 0.0);
      lp.entry(time[static_cast<std::size_t>(i)], c, 1.0);
      lp.entry(gpu[static_cast<std::size_t>(w)], c, in.scale[i]);
      lp.entry(level[static_cast<std::size_t>(i)], c, a);
    }
  pair_columns = 0;
  const auto& table = packed_test::gavel_table();
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const auto& a = jobs[static_cast<std::size_t>(i)];
      const auto& b = jobs[static_cast<std::size_t>(j)];
      if (a.scale_factor != b.scale_factor) continue;
      for (int w = 0; w < m; ++w) {
        if (!(in.model_throughput(i, w) > 0.0) || !(in.model_throughput(j, w) > 0.0)) continue;
        const auto tp = table.get_pair({a.job_type, a.scale_factor}, {b.job_type, b.scale_factor},
                                       cluster.types[static_cast<std::size_t>(w)]);
        if (!(tp.first > 0.0) || !(tp.second > 0.0)) continue;
        const int c = lp.add_col(kInf, 0.0);
        ++pair_columns;
        lp.entry(time[static_cast<std::size_t>(i)], c, 1.0);
        lp.entry(time[static_cast<std::size_t>(j)], c, 1.0);
        lp.entry(gpu[static_cast<std::size_t>(w)], c, in.scale[i]);
        lp.entry(level[static_cast<std::size_t>(i)], c, tp.first);
        lp.entry(level[static_cast<std::size_t>(j)], c, tp.second);
      }
    }
  return lp.maximize();
}

}  // namespace

TEST_CASE("packed vs CLP: max-min equals the per-job LP optimum to 1e-6 (8 seeds, pairs used)") {
  const auto cluster = pc::parse_cluster("k80:3,p100:2,v100:2");
  int used_pairs = 0;
  for (std::uint32_t seed = 11; seed <= 18; ++seed) {
    CAPTURE(seed);
    const auto jobs = packed_test::gavel_jobs(10 + static_cast<int>(seed % 5), 4, cluster, seed);
    int pair_columns = 0;
    const double lp = per_job_packed_lp(jobs, cluster, pair_columns);
    REQUIRE(std::isfinite(lp));
    CHECK(pair_columns > 0);
    pc::policy_options o;
    o.water_filling = false;
    const auto packed = pc::allocate_packed(jobs, cluster, packed_test::gavel_table(), o);
    CHECK(packed.status == popalloc::solve_status::converged);
    CHECK(packed.objective == doctest::Approx(lp).epsilon(1e-6));
    CHECK(packed.bound >= lp * (1.0 - 1e-9));
    packed_test::check_packed_feasible(jobs, cluster, packed);
    if (!packed.pairs.empty()) ++used_pairs;
  }
  CHECK(used_pairs >= 4);
}
