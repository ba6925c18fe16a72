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

/// Gavel's max_min_fairness_packed LP on the jobs themselves (every job alone and every pair on
/// every type both can use), counting the pair columns. Job i's level is its normalised
/// throughput s_i ET_i / (w_i P_i). `frozen[i]` (NaN: free) holds job i at that level or above.
/// With `objective_job` < 0 it returns the largest common level of the free jobs; otherwise
/// the largest level of that job while every free job stays at `floor` or above.
/// With `makespan` the level is 1 / makespan instead: job i needs throughput level x r_i (its
/// remaining steps). `coefs`, where given, are every job's c_i instead (job i needs level x c_i).
double per_job_packed_lp(const std::vector<pc::job>& jobs, const pc::gpu_cluster& cluster,
                         int& pair_columns, const std::vector<double>& frozen = {},
                         int objective_job = -1, double floor = 0.0, bool makespan = false,
                         const std::vector<double>& coefs = {}) {
  const pc::instance in = pc::prepare_instance(jobs, cluster, pc::policy_options{});
  const auto n = static_cast<int>(jobs.size());
  const auto m = static_cast<int>(cluster.size());
  auto coef = [&](int i) {
    if (!coefs.empty()) return coefs[static_cast<std::size_t>(i)];
    return makespan ? in.remaining[i] : in.weight[i] * in.proportional[i] / in.scale[i];
  };
  auto is_free = [&](int i) {
    return frozen.empty() || std::isnan(frozen[static_cast<std::size_t>(i)]);
  };
  sparse_lp lp;
  std::vector<int> time(static_cast<std::size_t>(n)), level(static_cast<std::size_t>(n)),
      gpu(static_cast<std::size_t>(m));
  for (int i = 0; i < n; ++i) time[static_cast<std::size_t>(i)] = lp.add_row(-kInf, 1.0);
  for (int w = 0; w < m; ++w) gpu[static_cast<std::size_t>(w)] = lp.add_row(-kInf, in.capacity[w]);
  for (int i = 0; i < n; ++i) {
    double at_least = 0.0;
    if (in.schedulable[static_cast<std::size_t>(i)] && !is_free(i))
      at_least = coef(i) * frozen[static_cast<std::size_t>(i)];
    else if (in.schedulable[static_cast<std::size_t>(i)] && objective_job >= 0)
      at_least = coef(i) * floor;
    level[static_cast<std::size_t>(i)] = lp.add_row(at_least, kInf);
  }
  if (objective_job < 0) {
    const int t = lp.add_col(kInf, 1.0);
    for (int i = 0; i < n; ++i)
      if (in.schedulable[static_cast<std::size_t>(i)] && is_free(i))
        lp.entry(level[static_cast<std::size_t>(i)], t, -coef(i));
  }
  // Objective weight of job i's throughput: 1 / c_i for the job whose level is maximised.
  auto gain = [&](int i) { return i == objective_job ? 1.0 / coef(i) : 0.0; };
  for (int i = 0; i < n; ++i)
    for (int w = 0; w < m; ++w) {
      const double a = in.model_throughput(i, w);
      if (!(a > 0.0)) continue;
      const int c = lp.add_col(kInf, a * gain(i));
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
        const int c = lp.add_col(kInf, tp.first * gain(i) + tp.second * gain(j));
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

/// The leximin vector of the per-job packed LP by progressive filling: at each level every
/// free job that cannot rise `threshold` above it (the others free at the level, the frozen at
/// theirs) is frozen there. One CLP solve per job and level.
std::vector<double> per_job_packed_water_filling(const std::vector<pc::job>& jobs,
                                                 const pc::gpu_cluster& cluster, double threshold) {
  const std::size_t n = jobs.size();
  std::vector<double> frozen(n, std::nan(""));
  int pair_columns = 0;
  for (int round = 0; round < 50; ++round) {
    bool any_free = false;
    for (const double f : frozen) any_free = any_free || std::isnan(f);
    if (!any_free) break;
    const double level = per_job_packed_lp(jobs, cluster, pair_columns, frozen);
    REQUIRE(std::isfinite(level));
    std::vector<double> next = frozen;
    for (std::size_t i = 0; i < n; ++i) {
      if (!std::isnan(frozen[i])) continue;
      const double room =
          per_job_packed_lp(jobs, cluster, pair_columns, frozen, static_cast<int>(i), level);
      REQUIRE(std::isfinite(room));
      if (room <= level * (1.0 + threshold)) next[i] = level;
    }
    frozen = next;
  }
  return frozen;
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

TEST_CASE("packed vs CLP: water filling equals the per-job leximin vector (16 seeds, pairs used)") {
  const auto cluster = pc::parse_cluster("k80:3,p100:2,v100:2");
  int levels_above_one = 0, used_pairs = 0;
  for (std::uint32_t seed = 21; seed <= 36; ++seed) {
    CAPTURE(seed);
    const auto jobs = packed_test::gavel_jobs(8 + static_cast<int>(seed % 3), 3, cluster, seed);
    pc::policy_options o;
    o.water_filling = true;
    const auto exact = per_job_packed_water_filling(jobs, cluster, o.water_filling_threshold);
    const auto packed = pc::allocate_packed(jobs, cluster, packed_test::gavel_table(), o);
    CHECK(packed.status == popalloc::solve_status::converged);
    packed_test::check_packed_feasible(jobs, cluster, packed);
    double lowest = kInf;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      CAPTURE(i);
      REQUIRE(!std::isnan(exact[i]));
      const double mine = packed.normalized_throughput[static_cast<Eigen::Index>(i)];
      CHECK(std::abs(mine - exact[i]) <= 1e-6 * exact[i]);
      lowest = std::min(lowest, exact[i]);
    }
    // The minimum is packed max-min's optimum, certified by the bound.
    CHECK(packed.objective == doctest::Approx(lowest).epsilon(1e-9));
    CHECK(packed.bound >= lowest * (1.0 - 1e-9));
    if (packed.water_filling_levels > 1) ++levels_above_one;
    if (!packed.pairs.empty()) ++used_pairs;
  }
  // The instances exercise more than one level and pairs (else the test checks max-min only).
  CHECK(levels_above_one >= 8);
  CHECK(used_pairs >= 8);
}

TEST_CASE("packed vs CLP: min makespan equals the per-job LP optimum (8 seeds, pairs used)") {
  const auto cluster = pc::parse_cluster("k80:3,p100:2,v100:2");
  int used_pairs = 0;
  for (std::uint32_t seed = 41; seed <= 48; ++seed) {
    CAPTURE(seed);
    auto jobs = packed_test::gavel_jobs(9 + static_cast<int>(seed % 4), 3, cluster, seed);
    // Two remaining-step counts, so classes hold several jobs and differ in their needs.
    for (std::size_t i = 0; i < jobs.size(); ++i) jobs[i].total_steps = i % 3 == 0 ? 3000.0 : 800.0;
    int pair_columns = 0;
    const double level = per_job_packed_lp(jobs, cluster, pair_columns, {}, -1, 0.0, true);
    REQUIRE(level > 0.0);
    pc::policy_options o;
    o.policy = pc::policy_kind::min_makespan;
    const auto packed = pc::allocate_packed(jobs, cluster, packed_test::gavel_table(), o);
    CHECK(packed.status == popalloc::solve_status::converged);
    CHECK(packed.objective == doctest::Approx(1.0 / level).epsilon(1e-9));
    CHECK(packed.bound <= (1.0 / level) * (1.0 + 1e-9));
    packed_test::check_packed_feasible(jobs, cluster, packed);
    // Never worse than without sharing (the unpacked class LP on the same jobs).
    const auto alone = pc::allocate(jobs, cluster, o);
    CHECK(packed.objective <= alone.objective * (1.0 + 1e-9));
    if (!packed.pairs.empty()) ++used_pairs;
  }
  CHECK(used_pairs >= 4);
}

TEST_CASE("packed vs CLP: finish-time fairness equals the per-job optimum (8 seeds, pairs used)") {
  // The exact optimum by bisection on the level L = 1 / rho: L is reachable when the per-job LP
  // with c_i = r_i / (D_i - t_i L) reaches the common multiple L.
  const auto cluster = pc::parse_cluster("k80:3,p100:2,v100:2");
  int used_pairs = 0;
  for (std::uint32_t seed = 51; seed <= 58; ++seed) {
    CAPTURE(seed);
    auto jobs = packed_test::gavel_jobs(8 + static_cast<int>(seed % 4), 3, cluster, seed);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      jobs[i].total_steps = i % 3 == 0 ? 3000.0 : 800.0;
      jobs[i].elapsed_time = 50.0 * static_cast<double>(i % 4);
      jobs[i].isolated_time = 20.0 * static_cast<double>(i % 2);
    }
    const pc::instance in = pc::prepare_instance(jobs, cluster, pc::policy_options{});
    const auto n = static_cast<std::size_t>(in.jobs());
    auto reachable = [&](double level) {
      std::vector<double> c(n);
      for (std::size_t i = 0; i < n; ++i) {
        const auto r = static_cast<Eigen::Index>(i);
        const double d = in.isolated_time[r] + in.remaining[r] / in.isolated_throughput[r];
        const double slack = d - in.elapsed[r] * level;
        if (!(slack > 0.0)) return false;
        c[i] = in.remaining[r] / slack;
      }
      int pair_columns = 0;
      return per_job_packed_lp(jobs, cluster, pair_columns, {}, -1, 0.0, false, c) >= level;
    };
    double lo = 0.0, hi = 1.0;
    while (reachable(hi)) hi *= 2.0;
    while (hi - lo > 1e-10 * hi) {
      const double mid = 0.5 * (lo + hi);
      (reachable(mid) ? lo : hi) = mid;
    }
    const double rho = 1.0 / lo;
    pc::policy_options o;
    o.policy = pc::policy_kind::finish_time_fairness;
    const auto packed = pc::allocate_packed(jobs, cluster, packed_test::gavel_table(), o);
    CHECK(packed.status == popalloc::solve_status::converged);
    CHECK(packed.objective == doctest::Approx(rho).epsilon(1e-6));
    CHECK(packed.bound <= rho * (1.0 + 1e-9));
    CHECK(packed.bound >= packed.objective * (1.0 - 1e-6));
    packed_test::check_packed_feasible(jobs, cluster, packed);
    const auto alone = pc::allocate(jobs, cluster, o);
    CHECK(packed.objective <= alone.objective * (1.0 + 1e-6));
    if (!packed.pairs.empty()) ++used_pairs;
  }
  CHECK(used_pairs >= 4);
}
