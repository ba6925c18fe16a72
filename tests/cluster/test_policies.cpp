// SPDX-License-Identifier: Apache-2.0
// Cluster policies: the golden 2-job instance of Gavel's tests, feasibility invariants,
// POP, warm starts and bad inputs.
#include <cmath>
#include <mutex>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/cluster/policies.hpp>
#include <popalloc/cluster/throughputs.hpp>
#include <popalloc/cluster/trace.hpp>

#include "cluster_fixtures.hpp"

namespace pc = popalloc::cluster;
using cluster_test::golden_cluster;
using cluster_test::golden_jobs;

namespace {

pc::cluster_allocation run(pc::policy_kind policy, bool agnostic = false, double tol = 1e-7) {
  pc::policy_options o;
  o.policy = policy;
  o.heterogeneity_agnostic = agnostic;
  o.tolerance = tol;
  return pc::allocate(golden_jobs(), golden_cluster(), o);
}

/// Base constraints: X >= 0, rows <= 1, sum_i s_i X_iw <= n_w, nothing where T = 0 or s > n_w.
void check_feasible(const std::vector<pc::job>& jobs, const pc::gpu_cluster& cluster,
                    const pc::cluster_allocation& a) {
  REQUIRE(a.fraction.rows() == static_cast<Eigen::Index>(jobs.size()));
  REQUIRE(a.fraction.cols() == static_cast<Eigen::Index>(cluster.size()));
  std::vector<double> used(cluster.size(), 0.0);
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    double row = 0.0;
    double et = 0.0;
    for (std::size_t w = 0; w < cluster.size(); ++w) {
      const double x = a.fraction(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(w));
      CHECK(x >= 0.0);
      if (jobs[i].throughput[w] == 0.0 || jobs[i].scale_factor > cluster.counts[w]) CHECK(x == 0.0);
      row += x;
      used[w] += jobs[i].scale_factor * x;
      et += jobs[i].throughput[w] * x;
    }
    CHECK(row <= 1.0 + 1e-9);
    CHECK(a.effective_throughput[static_cast<Eigen::Index>(i)] ==
          doctest::Approx(et).epsilon(1e-12));
  }
  for (std::size_t w = 0; w < cluster.size(); ++w)
    CHECK(used[w] <= static_cast<double>(cluster.counts[w]) * (1.0 + 1e-9));
}

}  // namespace

TEST_CASE("golden: proportional throughputs 11/12 and 5/3") {
  const auto a = run(pc::policy_kind::max_min_fairness);
  CHECK(a.proportional_throughput[0] == doctest::Approx(11.0 / 12.0).epsilon(1e-15));
  CHECK(a.proportional_throughput[1] == doctest::Approx(5.0 / 3.0).epsilon(1e-15));
}

TEST_CASE("golden: max-min fairness optimum 48/31") {
  for (const bool water : {false, true}) {
    pc::policy_options o;
    o.water_filling = water;
    o.tolerance = 1e-7;
    const auto a = pc::allocate(golden_jobs(), golden_cluster(), o);
    check_feasible(golden_jobs(), golden_cluster(), a);
    CHECK(a.status == popalloc::solve_status::converged);
    CHECK(std::abs(a.objective - 48.0 / 31.0) <= 1e-7 * 48.0 / 31.0);
    CHECK(a.bound >= 48.0 / 31.0 * (1 - 1e-12));
    CHECK(a.bound - a.objective <= 1e-7 * a.bound);
    // Both jobs are bottlenecks at the optimum: ET = 44/31 and 80/31.
    CHECK(a.effective_throughput[0] == doctest::Approx(44.0 / 31.0).epsilon(1e-6));
    CHECK(a.effective_throughput[1] == doctest::Approx(80.0 / 31.0).epsilon(1e-6));
  }
}

TEST_CASE("golden: agnostic max-min is a full time share (t* = 1)") {
  const auto a = run(pc::policy_kind::max_min_fairness, true);
  check_feasible(golden_jobs(), golden_cluster(), a);
  CHECK(a.objective == doctest::Approx(1.0).epsilon(1e-7));
  // Invariant from Gavel's test: min_i sum_w s_i X_iw of isolated == of agnostic max-min.
  const auto iso = run(pc::policy_kind::isolated, true);
  double min_iso = 1e300, min_mm = 1e300;
  for (Eigen::Index i = 0; i < 2; ++i) {
    min_iso = std::min(min_iso, iso.fraction.row(i).sum());
    min_mm = std::min(min_mm, a.fraction.row(i).sum());
  }
  CHECK(min_iso == doctest::Approx(min_mm).epsilon(1e-6));
}

TEST_CASE("golden: makespan 200 s with r = (300, 500)") {
  const auto a = run(pc::policy_kind::min_makespan);
  check_feasible(golden_jobs(), golden_cluster(), a);
  CHECK(std::abs(a.objective - 200.0) <= 1e-7 * 200.0);
  CHECK(a.bound <= 200.0 * (1 + 1e-12));
  for (Eigen::Index i = 0; i < 2; ++i)
    CHECK(golden_jobs()[static_cast<std::size_t>(i)].total_steps / a.effective_throughput[i] <=
          200.0 * (1 + 1e-6));
}

TEST_CASE("golden: max sum throughput 4") {
  const auto a = run(pc::policy_kind::max_throughput);
  check_feasible(golden_jobs(), golden_cluster(), a);
  CHECK(a.objective == doctest::Approx(4.0).epsilon(1e-7));
  CHECK(a.bound >= 4.0 - 1e-9);
}

TEST_CASE("SLO floor: remaining steps over the time left to arrival + slo * duration") {
  auto jobs = golden_jobs();  // job 0: 300 steps, 2 steps/s on the V100 (duration 150 s)
  jobs[0].slo = 2.0;          // deadline 300 s after arrival
  jobs[1].slo = -1.0;
  pc::policy_options o;
  o.policy = pc::policy_kind::max_throughput;
  CHECK(pc::prepare_instance(jobs, golden_cluster(), o).slo_floor[0] ==
        doctest::Approx(1.0).epsilon(1e-15));
  jobs[0].elapsed_time = 100.0;
  jobs[0].remaining_steps = 240.0;  // 240 steps in 200 s
  auto in = pc::prepare_instance(jobs, golden_cluster(), o);
  CHECK(in.slo_floor[0] == doctest::Approx(1.2).epsilon(1e-15));
  CHECK(in.slo_floor[1] == 0.0);
  jobs[0].elapsed_time = 400.0;  // past the deadline: no throughput can meet it
  CHECK(std::isinf(pc::prepare_instance(jobs, golden_cluster(), o).slo_floor[0]));

  // Max sum throughput is 4 either way (X_v100 + X'_v100 = 1); a floor of 1.8 on job 0 forces
  // it onto the V100 for 80 % of its time, which still allows 4.
  jobs[0].elapsed_time = 0.0;
  jobs[0].remaining_steps = 270.0;
  jobs[0].slo = 1.0;  // 270 steps in 150 s: 1.8 steps/s
  o.tolerance = 1e-7;
  const auto a = pc::allocate(jobs, golden_cluster(), o);
  check_feasible(jobs, golden_cluster(), a);
  CHECK(a.slo_jobs == 1);
  CHECK(!a.slo_floors_dropped);
  CHECK(a.effective_throughput[0] >= 1.8 * (1 - 1e-6));
  // The optimum is degenerate (both jobs indifferent at the optimal prices): the solve stops
  // within an absolute gap of about tolerance x (total throughput bound 10).
  CHECK(a.objective == doctest::Approx(4.0).epsilon(1e-6));
  CHECK(a.bound >= 4.0 - 1e-9);
  // 2.1 steps/s is more than job 0 gets alone on the V100: the floors are dropped, as in Gavel.
  jobs[0].remaining_steps = 315.0;
  const auto dropped = pc::allocate(jobs, golden_cluster(), o);
  CHECK(dropped.slo_floors_dropped);
  CHECK(dropped.objective == doctest::Approx(4.0).epsilon(1e-7));
  o.slo_floors = false;
  CHECK(pc::allocate(jobs, golden_cluster(), o).slo_jobs == 0);
  o.slo_floors = true;
  o.gpu_cost = {1.0, 2.0, 3.0};
  CHECK_THROWS_AS(pc::allocate(jobs, golden_cluster(), o), popalloc::invalid_options);
}

TEST_CASE("golden: POP with k = 2 keeps the only V100 (no GPU lost to integer division)") {
  pc::policy_options o;
  o.policy = pc::policy_kind::max_throughput;
  o.pop_parts = 2;
  o.pop_strategy = popalloc::pop::partition_strategy::round_robin;
  const auto a = pc::allocate(golden_jobs(), golden_cluster(), o);
  check_feasible(golden_jobs(), golden_cluster(), a);
  // Job 0 goes to part 0, which gets {k80: 2, p100: 1, v100: 1} from split_units; job 1 gets
  // {k80: 1, p100: 1, v100: 0}. POP's n // k would give both parts v100: 0 and total 1 + 2 = 3;
  // here part 0 can run job 0 on the V100 (2) and part 1 job 1 on a P100 (2): 4, the optimum.
  CHECK(a.fraction.col(2).sum() > 0.99);
  CHECK(a.objective == doctest::Approx(4.0).epsilon(1e-6));
}

namespace {

const std::string kDataDir = POPALLOC_CLUSTER_DATA_DIR;

std::vector<pc::job> trace_jobs(const pc::gpu_cluster& c) {
  static const pc::throughput_table table =
      pc::load_throughputs(kDataDir + "/simulation_throughputs.json");
  const std::string path = kDataDir + "/traces/max_min_fairness.trace";
  return pc::jobs_from_trace(pc::load_trace(path), table, c, path);
}

}  // namespace

TEST_CASE("every policy on Gavel's trace: feasible, objective consistent, POP feasible") {
  const auto cluster = pc::parse_cluster("v100:8,p100:8,k80:8");
  const auto jobs = trace_jobs(cluster);
  for (const auto policy :
       {pc::policy_kind::max_min_fairness, pc::policy_kind::proportional_fairness,
        pc::policy_kind::max_throughput, pc::policy_kind::min_makespan,
        pc::policy_kind::finish_time_fairness, pc::policy_kind::isolated, pc::policy_kind::fifo}) {
    for (const bool agnostic : {false, true}) {
      for (const int k : {1, 4}) {
        pc::policy_options o;
        o.policy = policy;
        o.heterogeneity_agnostic = agnostic;
        o.pop_parts = k;
        o.pop_seed = 3;
        o.tolerance = 1e-5;
        CAPTURE(pc::to_string(policy));
        CAPTURE(agnostic);
        CAPTURE(k);
        const auto a = pc::allocate(jobs, cluster, o);
        check_feasible(jobs, cluster, a);
        CHECK(std::isfinite(a.objective));
        for (const char s : a.schedulable) CHECK(s == 1);
        if (k == 1 && policy != pc::policy_kind::isolated && policy != pc::policy_kind::fifo) {
          CHECK(a.status == popalloc::solve_status::converged);
          // The certified bound is on the right side of the objective.
          const bool minimise = policy == pc::policy_kind::min_makespan ||
                                policy == pc::policy_kind::finish_time_fairness;
          if (minimise)
            CHECK(a.bound <= a.objective * (1 + 1e-9));
          else
            CHECK(a.bound >= a.objective - 1e-9 * std::abs(a.objective));
        }
      }
    }
  }
}

TEST_CASE("heterogeneity-aware beats agnostic on its own measure (Gavel trace)") {
  const auto cluster = pc::parse_cluster("v100:8,p100:8,k80:8");
  const auto jobs = trace_jobs(cluster);
  pc::policy_options o;
  o.policy = pc::policy_kind::min_makespan;
  const auto aware = pc::allocate(jobs, cluster, o);
  o.heterogeneity_agnostic = true;
  const auto agnostic = pc::allocate(jobs, cluster, o);
  // True makespan of each allocation: max_i r_i / ET_i with the measured throughputs.
  auto makespan = [&](const pc::cluster_allocation& a) {
    double m = 0.0;
    for (std::size_t i = 0; i < jobs.size(); ++i)
      m = std::max(m, jobs[i].total_steps / a.effective_throughput[static_cast<Eigen::Index>(i)]);
    return m;
  };
  CHECK(makespan(aware) == doctest::Approx(aware.objective).epsilon(1e-9));
  CHECK(makespan(aware) < makespan(agnostic));
  o.policy = pc::policy_kind::max_min_fairness;
  o.heterogeneity_agnostic = false;
  const auto mm = pc::allocate(jobs, cluster, o);
  o.policy = pc::policy_kind::isolated;
  const auto iso = pc::allocate(jobs, cluster, o);
  CHECK(mm.objective >= iso.objective);
}

TEST_CASE("FIFO baseline: whole GPUs in arrival order, best type first") {
  const auto cluster = golden_cluster();
  auto jobs = golden_jobs();
  jobs[0].arrival_time = 5.0;  // job 1 arrives first and takes the V100
  pc::policy_options o;
  o.policy = pc::policy_kind::fifo;
  const auto a = pc::allocate(jobs, cluster, o);
  CHECK(a.fraction(1, 2) == 1.0);
  CHECK(a.fraction(0, 1) == 1.0);  // the V100 is taken: job 0's next best is a P100
  check_feasible(jobs, cluster, a);
}

TEST_CASE("jobs without a usable GPU type get nothing and are reported") {
  const auto cluster = pc::parse_cluster("v100:2,k80:8");
  auto jobs = golden_jobs();
  for (auto& j : jobs) j.throughput = {2.0, 1.0};
  jobs.push_back(jobs[0]);
  jobs[2].scale_factor = 4;         // only fits the K80s ...
  jobs[2].throughput = {3.0, 0.0};  // ... where it cannot run
  for (const auto policy : {pc::policy_kind::max_min_fairness, pc::policy_kind::min_makespan,
                            pc::policy_kind::proportional_fairness}) {
    pc::policy_options o;
    o.policy = policy;
    const auto a = pc::allocate(jobs, cluster, o);
    CHECK(a.schedulable == std::vector<char>{1, 1, 0});
    CHECK(a.fraction.row(2).sum() == 0.0);
    CHECK(std::isfinite(a.objective));
    check_feasible(jobs, cluster, a);
  }
}

TEST_CASE("warm start from the previous call's prices gives the same answer") {
  const auto cluster = pc::parse_cluster("v100:8,p100:8,k80:8");
  const auto jobs = trace_jobs(cluster);
  pc::policy_options o;
  o.policy = pc::policy_kind::proportional_fairness;
  o.tolerance = 1e-8;
  const auto cold = pc::allocate(jobs, cluster, o);
  o.warm_start_prices = cold.prices;
  const auto warm = pc::allocate(jobs, cluster, o);
  CHECK(warm.objective == doctest::Approx(cold.objective).epsilon(1e-7));
  o.warm_start_prices = Eigen::VectorXd::Constant(3, -1.0);
  CHECK_THROWS_AS(pc::allocate(jobs, cluster, o), popalloc::invalid_options);
}

TEST_CASE("POP: same seed same allocation, and k parts of a divisible cluster lose little") {
  const auto cluster = pc::parse_cluster("v100:8,p100:8,k80:8");
  const auto jobs = trace_jobs(cluster);
  pc::policy_options o;
  o.tolerance = 1e-5;
  const auto full = pc::allocate(jobs, cluster, o);
  o.pop_parts = 2;
  o.pop_strategy = popalloc::pop::partition_strategy::shuffled;
  o.pop_seed = 11;
  const auto a = pc::allocate(jobs, cluster, o);
  const auto b = pc::allocate(jobs, cluster, o);
  CHECK(a.fraction == b.fraction);
  CHECK(a.pop_parts == 2);
  CHECK(a.pop_parts_seconds_sum >= a.pop_parts_seconds_max);
  // POP's sub-problems are restrictions of the full one: its min cannot beat the optimum.
  CHECK(a.objective <= full.bound * (1 + 1e-9));
  double ratio = 0.0;
  for (Eigen::Index i = 0; i < full.effective_throughput.size(); ++i)
    ratio += a.effective_throughput[i] / full.effective_throughput[i];
  ratio /= static_cast<double>(full.effective_throughput.size());
  CHECK(ratio > 0.9);
}

TEST_CASE("progress: every core solve of max-min is reported, the last bracket is the result's") {
  const auto cluster = pc::parse_cluster("v100:8,p100:8,k80:8");
  const auto jobs = trace_jobs(cluster);
  pc::policy_options o;
  o.tolerance = 1e-5;
  o.class_lp_max_classes = 0;  // the core on every job
  std::vector<pc::policy_progress> reports;
  o.progress = [&reports](const pc::policy_progress& p) { reports.push_back(p); };
  const auto a = pc::allocate(jobs, cluster, o);
  REQUIRE(a.core_solves > 1);
  REQUIRE(!reports.empty());
  int solves = 0;
  const pc::policy_progress* last_search = nullptr;
  for (const auto& p : reports) {
    CHECK(p.pop_part == -1);
    CHECK(p.core_solves >= solves);
    solves = p.core_solves;
    const std::string stage = p.stage;
    CHECK((stage == "level search" || stage == "water filling"));
    if (stage == "level search") {
      CHECK(p.lower <= p.upper);
      CHECK(p.relative_gap == doctest::Approx((p.upper - p.lower) / p.upper));
      last_search = &p;
    } else {
      CHECK(p.water_filling_levels >= 1);
    }
  }
  CHECK(solves == a.core_solves);
  REQUIRE(last_search != nullptr);
  CHECK(last_search->upper == a.bound);
  CHECK(last_search->lower == doctest::Approx(a.objective).epsilon(o.tolerance));
}

TEST_CASE("progress: a separable policy reports its core iterations; POP parts are tagged") {
  const auto cluster = pc::parse_cluster("v100:8,p100:8,k80:8");
  const auto jobs = trace_jobs(cluster);
  pc::policy_options o;
  o.policy = pc::policy_kind::proportional_fairness;
  o.tolerance = 1e-6;
  o.class_lp_max_classes = 0;
  std::mutex mutex;
  std::vector<pc::policy_progress> reports;
  o.progress = [&](const pc::policy_progress& p) {
    const std::lock_guard<std::mutex> lock(mutex);
    reports.push_back(p);
  };
  const auto a = pc::allocate(jobs, cluster, o);
  REQUIRE(!reports.empty());
  for (const auto& p : reports) {
    CHECK(std::string(p.stage) == "solve");
    CHECK(p.pop_part == -1);
    CHECK(p.upper >= p.lower);  // the core's dual bound and objective
  }
  CHECK(static_cast<int>(reports.size()) >= a.core_solves);

  reports.clear();
  o.pop_parts = 2;
  o.threads = 2;
  (void)pc::allocate(jobs, cluster, o);
  std::vector<int> seen(2, 0);
  for (const auto& p : reports) {
    REQUIRE(p.pop_part >= 0);
    REQUIRE(p.pop_part < 2);
    ++seen[static_cast<std::size_t>(p.pop_part)];
  }
  CHECK(seen[0] > 0);
  CHECK(seen[1] > 0);
}
