// SPDX-License-Identifier: Apache-2.0
// incremental_solver: random change sequences against a shadow copy of the jobs and against a
// cold solve of the changed problem (each answer's objective must lie under the other's dual
// bound), the empty problem, capacities to 0 and back, bad input, and the allocation carried
// over where the last answer reached g(0).
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/detail/best_response.hpp>
#include <popalloc/detail/engine.hpp>
#include <popalloc/detail/interior_point.hpp>
#include <popalloc/detail/relative_gap.hpp>
#include <popalloc/incremental.hpp>

#include "support/instances.hpp"

namespace {

using popalloc_test::test_backend;
using popalloc_test::uniform;

struct shadow_job {
  Eigen::RowVectorXd throughput;
  double weight = 1.0, target = 0.0, demand = 1.0;
};

template <class Utility>
class churn_run {
 public:
  using solver = popalloc::incremental_solver<Utility, double, test_backend>;
  using job_id = typename solver::job_id;

  churn_run(int m, int seed, const popalloc::solver_options& options)
      : rng_(static_cast<std::uint64_t>(seed)), m_(m), capacity_(m), inc_(initial(m), options) {
    capacity_ = inc_.problem().capacity;
  }

  /// One round of random arrivals, departures and updates (up to `most` of each) and, when
  /// `capacities`, sometimes a capacity change.
  void change(int most, bool capacities) {
    const auto draw = [&] {
      return static_cast<int>(rng_() % static_cast<std::uint64_t>(most + 1));
    };
    const int arrivals = draw(), departures = draw(), updates = draw();
    for (int k = 0; k < arrivals; ++k) add();
    for (int k = 0; k < departures && !shadow_.empty(); ++k) remove(pick());
    for (int k = 0; k < updates && !shadow_.empty(); ++k) update(pick());
    if (capacities && rng_() % 4 == 0) {
      const auto j = static_cast<Eigen::Index>(rng_() % static_cast<std::uint64_t>(m_));
      capacity_[j] = uniform(rng_, 0.2, 1.5) * (4.0 + static_cast<double>(shadow_.size()) / m_);
      inc_.set_capacity(j, capacity_[j]);
    }
  }

  void add() {
    shadow_job job;
    job.throughput.resize(m_);
    for (int j = 0; j < m_; ++j)
      job.throughput[j] = rng_() % 5 == 0 ? 0.0 : uniform(rng_, 0.1, 1.0) * (j + 1);
    job.throughput[static_cast<Eigen::Index>(rng_() % static_cast<std::uint64_t>(m_))] = 0.5;
    job.weight = rng_() % 2 == 0 ? 1.0 : 3.0;
    job.target = Utility::uses_target ? uniform(rng_, 0.05, 0.5) * m_ : 0.0;
    job.demand = rng_() % 7 == 0 ? 2.0 : 1.0;
    const job_id id = inc_.add_job(job.throughput, job.weight, job.target, job.demand);
    CHECK(shadow_.count(id) == 0);
    shadow_[id] = job;
  }

  void remove(job_id id) {
    inc_.remove_job(id);
    shadow_.erase(id);
  }

  void update(job_id id) {
    shadow_job& job = shadow_[id];
    switch (rng_() % 4) {
      case 0:
        job.throughput *= uniform(rng_, 0.5, 1.5);
        inc_.update_throughput(id, job.throughput);
        break;
      case 1:
        job.weight = uniform(rng_, 0.5, 4.0);
        inc_.update_weight(id, job.weight);
        break;
      case 2:
        if (Utility::uses_target) {
          job.target = uniform(rng_, 0.05, 0.5) * m_;
          inc_.update_target(id, job.target);
        }
        break;
      default:
        job.demand = job.demand == 1.0 ? 2.0 : 1.0;
        inc_.update_demand(id, job.demand);
    }
  }

  job_id pick() {
    auto it = shadow_.begin();
    std::advance(it, static_cast<long>(rng_() % shadow_.size()));
    return it->first;
  }

  /// The problem's rows are the shadow's jobs, in job_ids() order.
  void check_rows() {
    const auto& p = inc_.problem();
    REQUIRE(p.jobs() == static_cast<Eigen::Index>(shadow_.size()));
    REQUIRE(inc_.job_ids().size() == shadow_.size());
    for (const auto& [id, job] : shadow_) {
      const Eigen::Index i = inc_.row_of(id);
      CHECK(inc_.job_ids()[static_cast<std::size_t>(i)] == id);
      CHECK((p.throughput.row(i) - job.throughput).cwiseAbs().maxCoeff() == 0.0);
      CHECK(p.weight[i] == job.weight);
      if (Utility::uses_target) CHECK(p.target[i] == job.target);
      CHECK((p.job_demand.size() ? p.job_demand[i] : 1.0) == job.demand);
    }
    CHECK(p.capacity == capacity_);
  }

  /// Solves warm and cold; both certified, each objective under the other's bound.
  void solve_and_compare(int& warm_evaluations, int& cold_evaluations) {
    const auto& p = inc_.problem();
    const Utility utility{};
    const popalloc::solve_result warm = inc_.solve();
    const popalloc::solve_result cold = inc_.solve_cold();
    REQUIRE(warm.status == popalloc::solve_status::converged);
    REQUIRE(cold.status == popalloc::solve_status::converged);
    warm_evaluations += warm.iterations;
    cold_evaluations += cold.iterations + cold.sample_iterations;
    const double scale = 1e-9 * (std::abs(cold.dual_bound) + 1.0);
    CHECK(warm.primal_objective <= cold.dual_bound + scale);
    CHECK(cold.primal_objective <= warm.dual_bound + scale);
    CHECK(popalloc_test::allocation_violation(p, warm) <= 1e-9);
    CHECK(popalloc_test::recomputed_objective(p, utility, warm) ==
          doctest::Approx(warm.primal_objective).epsilon(1e-9));
  }

  solver& inc() { return inc_; }
  std::size_t jobs() const { return shadow_.size(); }

 private:
  Eigen::VectorXd initial(int m) {
    Eigen::VectorXd c(m);
    for (int j = 0; j < m; ++j) c[j] = uniform(rng_, 0.5, 1.5) * 10.0;
    return c;
  }

  std::mt19937_64 rng_;
  int m_;
  Eigen::VectorXd capacity_;
  solver inc_;
  std::map<job_id, shadow_job> shadow_;
};

/// Many changes per round (up to a third of the jobs) and capacity changes: warm and cold
/// answers must agree.
template <class Utility>
void random_churn(int seed) {
  popalloc::solver_options options;
  options.relative_gap = 1e-5;
  churn_run<Utility> run(4, seed, options);
  for (int k = 0; k < 60; ++k) run.add();
  int warm = 0, cold = 0;
  for (int round = 0; round < 25; ++round) {
    CAPTURE(round);
    run.change(10, true);
    run.check_rows();
    run.solve_and_compare(warm, cold);
  }
}

/// A few changes per round (about 2% of the jobs): starting where the last round ended must pay
/// (fewer dual evaluations in all; 0.3-0.75 of a cold solve's on these instances).
template <class Utility>
void light_churn(int seed) {
  popalloc::solver_options options;
  options.relative_gap = 1e-4;
  churn_run<Utility> run(6, seed, options);
  for (int k = 0; k < 500; ++k) run.add();
  int warm = 0, cold = 0;
  run.solve_and_compare(warm, cold);
  warm = cold = 0;
  for (int round = 0; round < 8; ++round) {
    CAPTURE(round);
    run.change(6, false);
    run.solve_and_compare(warm, cold);
  }
  CHECK(warm < cold);
}

}  // namespace

TEST_CASE("incremental_solver: random changes agree with a cold solve (log)") {
  for (int seed = 1; seed <= 3; ++seed) random_churn<popalloc::utility::log>(seed);
}

TEST_CASE("incremental_solver: random changes agree with a cold solve (linear)") {
  for (int seed = 1; seed <= 3; ++seed) random_churn<popalloc::utility::linear>(seed);
}

TEST_CASE("incremental_solver: random changes agree with a cold solve (target priority)") {
  for (int seed = 1; seed <= 3; ++seed) random_churn<popalloc::utility::target_priority>(seed);
}

TEST_CASE("incremental_solver: after a few changes a warm solve needs fewer evaluations") {
  for (int seed = 1; seed <= 2; ++seed) {
    light_churn<popalloc::utility::log>(seed);
    light_churn<popalloc::utility::linear>(seed);
    light_churn<popalloc::utility::target_priority>(seed);
  }
}

TEST_CASE("incremental_solver: every job removed, then added again") {
  popalloc::solver_options options;
  options.relative_gap = 1e-5;
  churn_run<popalloc::utility::log> run(3, 7, options);
  for (int k = 0; k < 40; ++k) run.add();
  int warm = 0, cold = 0;
  run.solve_and_compare(warm, cold);
  while (run.jobs() > 0) run.remove(run.pick());
  run.check_rows();
  const popalloc::solve_result empty = run.inc().solve();
  CHECK(empty.status == popalloc::solve_status::converged);
  CHECK(empty.primal_objective == 0.0);
  CHECK(empty.dual_bound == 0.0);
  CHECK(empty.allocation.jobs() == 0);
  CHECK(empty.usage.size() == 3);
  for (int k = 0; k < 40; ++k) run.add();
  run.check_rows();
  run.solve_and_compare(warm, cold);
}

TEST_CASE("incremental_solver: a capacity to 0 and back") {
  using utility = popalloc::utility::linear;
  popalloc::solver_options options;
  options.relative_gap = 1e-6;
  const popalloc::dense_problem<double> p = popalloc_test::random_problem(50, 3, 11);
  popalloc::incremental_solver<utility, double, test_backend> inc(p.capacity, options);
  popalloc::dense_problem<double> jobs = p;
  jobs.target.resize(0);
  const auto ids = inc.add_jobs(jobs);
  REQUIRE(ids.size() == 50);
  const popalloc::solve_result before = inc.solve();
  inc.set_capacity(2, 0.0);
  const popalloc::solve_result closed = inc.solve();
  REQUIRE(closed.status == popalloc::solve_status::converged);
  CHECK(closed.usage[2] == 0.0);
  CHECK(closed.primal_objective < before.primal_objective);
  CHECK(closed.primal_objective <= inc.solve_cold().dual_bound + 1e-9);
  inc.set_capacity(2, p.capacity[2]);
  const popalloc::solve_result reopened = inc.solve();
  REQUIRE(reopened.status == popalloc::solve_status::converged);
  CHECK(reopened.primal_objective <= before.dual_bound + 1e-9);
  CHECK(before.primal_objective <= reopened.dual_bound + 1e-9);
}

TEST_CASE("incremental_solver: max_iterations bounds the whole call") {
  popalloc::solver_options options;
  options.relative_gap = 1e-7;
  churn_run<popalloc::utility::linear> run(4, 13, options);
  for (int k = 0; k < 200; ++k) run.add();
  REQUIRE(run.inc().solve().status == popalloc::solve_status::converged);
  run.inc().options().max_iterations = 3;
  int limited = 0;
  for (int round = 0; round < 4; ++round) {
    run.change(30, true);
    const popalloc::solve_result r = run.inc().solve();
    CHECK(r.iterations <= 3);
    CHECK((r.status == popalloc::solve_status::converged ||
           r.status == popalloc::solve_status::iteration_limit));
    limited += r.status == popalloc::solve_status::iteration_limit ? 1 : 0;
    CHECK(popalloc_test::allocation_violation(run.inc().problem(), r) <= 1e-9);
  }
  CHECK(limited > 0);
}

TEST_CASE("incremental_solver: bad changes are refused and change nothing") {
  using utility = popalloc::utility::log;
  using solver = popalloc::incremental_solver<utility, double, test_backend>;
  const Eigen::VectorXd capacity = Eigen::VectorXd::Constant(2, 4.0);
  CHECK_THROWS_AS(solver(Eigen::VectorXd{}), popalloc::invalid_problem);
  CHECK_THROWS_AS(solver(Eigen::VectorXd::Constant(2, -1.0)), popalloc::invalid_problem);
  CHECK_THROWS_AS(solver(Eigen::VectorXd::Constant(2, std::nan(""))), popalloc::invalid_problem);
  popalloc::solver_options bad_options;
  bad_options.relative_gap = -1.0;
  CHECK_THROWS_AS(solver(capacity, bad_options), popalloc::invalid_options);

  solver inc(capacity);
  const Eigen::RowVector2d good(1.0, 2.0);
  const auto id = inc.add_job(good);
  CHECK_THROWS_AS(inc.add_job(Eigen::RowVector3d(1.0, 2.0, 3.0)), popalloc::invalid_problem);
  CHECK_THROWS_AS(inc.add_job(Eigen::RowVector2d(1.0, std::nan(""))), popalloc::invalid_problem);
  CHECK_THROWS_AS(inc.add_job(Eigen::RowVector2d(-1.0, 1.0)), popalloc::invalid_problem);
  CHECK_THROWS_AS(inc.add_job(Eigen::RowVector2d(0.0, 0.0)), popalloc::invalid_problem);
  CHECK_THROWS_AS(inc.add_job(good, 0.0), popalloc::invalid_problem);       // log needs weight > 0
  CHECK_THROWS_AS(inc.add_job(good, 1.0, 2.0), popalloc::invalid_problem);  // no targets here
  CHECK_THROWS_AS(inc.add_job(good, 1.0, 0.0, -1.0), popalloc::invalid_problem);
  CHECK_THROWS_AS(inc.add_job(good, std::numeric_limits<double>::infinity()),
                  popalloc::invalid_problem);
  CHECK_THROWS_AS(inc.remove_job(id + 1), popalloc::invalid_problem);
  CHECK_THROWS_AS(inc.update_weight(id + 1, 1.0), popalloc::invalid_problem);
  CHECK_THROWS_AS(inc.update_throughput(id, Eigen::RowVector2d(1e61, 1.0)),
                  popalloc::invalid_problem);
  CHECK_THROWS_AS(inc.set_capacity(2, 1.0), popalloc::invalid_problem);
  CHECK_THROWS_AS(inc.set_capacity(-1, 1.0), popalloc::invalid_problem);
  CHECK_THROWS_AS(inc.set_capacity(0, -1.0), popalloc::invalid_problem);
  CHECK_THROWS_AS(inc.set_capacities(Eigen::VectorXd::Ones(3)), popalloc::invalid_problem);
  CHECK(inc.jobs() == 1);
  CHECK(inc.problem().throughput.row(0) == good);
  CHECK(inc.problem().capacity == capacity);
  CHECK(inc.contains(id));
  CHECK_FALSE(inc.contains(id + 1));

  // A capacity change can leave a log job without an open resource: the solve says which row.
  inc.add_job(Eigen::RowVector2d(0.0, 1.0));
  inc.set_capacity(1, 0.0);
  CHECK_THROWS_AS(inc.solve(), popalloc::invalid_problem);
  inc.set_capacity(1, 4.0);
  CHECK(inc.solve().status == popalloc::solve_status::converged);
}

TEST_CASE("incremental_solver: float storage, job_demand and rows after removals") {
  using utility = popalloc::utility::target_priority;
  popalloc::solver_options options;
  options.relative_gap = 1e-5;
  const popalloc::dense_problem<double> p = popalloc_test::random_problem(80, 3, 5);
  popalloc::incremental_solver<utility, float, test_backend> inc(p.capacity, options);
  std::vector<popalloc::incremental_solver<utility, float, test_backend>::job_id> ids;
  for (Eigen::Index i = 0; i < p.jobs(); ++i)
    ids.push_back(
        inc.add_job(p.throughput.row(i), p.weight[i], p.target[i], i % 3 == 0 ? 2.0 : 1.0));
  CHECK(inc.solve().status == popalloc::solve_status::converged);
  for (std::size_t k = 0; k < ids.size(); k += 4) inc.remove_job(ids[k]);
  const auto added = inc.add_job(Eigen::RowVector3d(1.0, 2.0, 3.0), 2.0, 1.5, 3.0);
  const auto& q = inc.problem();
  REQUIRE(q.jobs() == 61);
  REQUIRE(q.job_demand.size() == 61);
  const Eigen::Index row = inc.row_of(added);
  CHECK(q.throughput(row, 2) == 3.0f);
  CHECK(q.job_demand[row] == 3.0f);
  CHECK(q.target[row] == 1.5f);
  for (std::size_t k = 1; k < ids.size(); k += 4) {
    const Eigen::Index i = inc.row_of(ids[k]);
    const auto original = static_cast<Eigen::Index>(k);
    CHECK(q.throughput(i, 0) == static_cast<float>(p.throughput(original, 0)));
    CHECK(q.job_demand[i] == (original % 3 == 0 ? 2.0f : 1.0f));
  }
  const popalloc::solve_result warm = inc.solve();
  const popalloc::solve_result cold = inc.solve_cold();
  REQUIRE(warm.status == popalloc::solve_status::converged);
  REQUIRE(cold.status == popalloc::solve_status::converged);
  CHECK(warm.primal_objective <= cold.dual_bound + 1e-9);
  CHECK(cold.primal_objective <= warm.dual_bound + 1e-9);
}

TEST_CASE("incremental_solver: at g(0) a re-plan carries the allocation over") {
  using utility = popalloc::utility::target_priority;
  using solver = popalloc::incremental_solver<utility, double, test_backend>;
  constexpr int m = 4;
  std::mt19937_64 rng(5);
  popalloc::solver_options options;
  options.relative_gap = 1e-4;
  // 200 jobs on 4 x 60 units, each needing at most 0.3 of its time: every target reachable.
  solver inc(Eigen::VectorXd::Constant(m, 60.0), options);
  auto draw = [&] {
    Eigen::RowVectorXd a(m);
    for (int j = 0; j < m; ++j) a[j] = uniform(rng, 0.5, 2.0);
    return a;
  };
  auto add = [&] {
    const Eigen::RowVectorXd a = draw();
    return inc.add_job(a, uniform(rng, 1.0, 3.0), 0.3 * a.maxCoeff());
  };
  std::vector<solver::job_id> ids;
  for (int k = 0; k < 200; ++k) ids.push_back(add());
  const popalloc::solve_result first = inc.solve();
  REQUIRE(first.status == popalloc::solve_status::converged);
  REQUIRE(first.dual_bound >= first.trivial_bound);  // the bound is g(0)
  REQUIRE(first.iterations > 0);
  const solver::job_id kept = ids[50];
  const Eigen::Index kept_row = inc.row_of(kept);
  auto row_of = [](const popalloc::solve_result& r, Eigen::Index i) {
    std::map<std::int32_t, double> row;
    const auto& a = r.allocation;
    for (auto k = a.job_offset[static_cast<std::size_t>(i)];
         k < a.job_offset[static_cast<std::size_t>(i) + 1]; ++k)
      row[a.option[static_cast<std::size_t>(k)]] = a.fraction[static_cast<std::size_t>(k)];
    return row;
  };

  // 3% churn: departures (rows move), arrivals, re-profiled and re-targeted jobs.
  for (int k = 0; k < 2; ++k) inc.remove_job(ids[static_cast<std::size_t>(7 * k)]);
  for (int k = 0; k < 2; ++k) ids.push_back(add());
  inc.update_throughput(ids[100], draw());
  inc.update_target(ids[101], 0.1);
  const popalloc::solve_result carried = inc.solve();
  CHECK(carried.status == popalloc::solve_status::converged);
  CHECK(carried.iterations == 0);
  CHECK(carried.dual_bound == carried.trivial_bound);
  CHECK(carried.relative_gap <= options.relative_gap);
  const auto& p = inc.problem();
  CHECK(popalloc_test::allocation_violation(p, carried) <= 1e-9);
  CHECK(popalloc_test::recomputed_objective(p, utility{}, carried) ==
        doctest::Approx(carried.primal_objective).epsilon(1e-12));
  CHECK(row_of(carried, inc.row_of(kept)) == row_of(first, kept_row));
  const popalloc::solve_result cold = inc.solve_cold();
  REQUIRE(cold.status == popalloc::solve_status::converged);
  CHECK(carried.primal_objective <= cold.dual_bound + 1e-9);
  CHECK(cold.primal_objective <= carried.dual_bound + 1e-9);

  // Capacities shrunk under the kept jobs: nothing to carry over, the warm solve decides.
  for (Eigen::Index j = 0; j < m; ++j) inc.set_capacity(j, 10.0);
  const popalloc::solve_result shrunk = inc.solve();
  CHECK(shrunk.status == popalloc::solve_status::converged);
  CHECK(shrunk.iterations > 0);
  CHECK(popalloc_test::allocation_violation(inc.problem(), shrunk) <= 1e-9);
  const popalloc::solve_result shrunk_cold = inc.solve_cold();
  CHECK(shrunk.primal_objective <= shrunk_cold.dual_bound + 1e-9);
  CHECK(shrunk_cold.primal_objective <= shrunk.dual_bound + 1e-9);
}

namespace {

/// g(p) of `p` at `prices` from every job's exact best response: the bound a re-plan certified at
/// the last prices claims, summed afresh over all the jobs.
template <class Utility>
double dual_at(const popalloc::dense_problem<double>& p, const Eigen::VectorXd& prices,
               const Utility& utility) {
  popalloc::detail::host_executor host(1);
  const popalloc::detail::problem_storage<popalloc::detail::host_executor,
                                          popalloc::dense_problem<double>>
      storage(host, p);
  double g = prices.dot(p.capacity);
  for (Eigen::Index i = 0; i < p.jobs(); ++i)
    g += popalloc::detail::walk_hull(storage.view, i, prices.data(), utility,
                                     storage.view.parameters(i), 0.0, -1)
             .excess;
  return g;
}

/// Throughputs U(0.2, 1) (1 + 0.3 j) over m resources: later resources faster on average.
Eigen::RowVectorXd graded_row(std::mt19937_64& rng, int m) {
  Eigen::RowVectorXd a(m);
  for (int j = 0; j < m; ++j) a[j] = uniform(rng, 0.2, 1.0) * (1.0 + 0.3 * j);
  return a;
}

/// Two rounds of a few changes after a tight solve: each re-plan is certified at the last
/// prices with no dual evaluation, and its bound, objective and usage are those of the changed
/// problem summed afresh; a cold solve agrees. Then a resource closes and the solver evaluates.
template <class Utility>
void check_priced_carry(double target_share, double tolerance) {
  using solver = popalloc::incremental_solver<Utility, double, test_backend>;
  constexpr int m = 4;
  std::mt19937_64 rng(11);
  popalloc::solver_options options;
  options.relative_gap = 1e-7;
  solver inc(Eigen::VectorXd::Constant(m, 300.0), options);
  auto draw = [&] { return graded_row(rng, m); };
  auto add = [&] {
    const Eigen::RowVectorXd a = draw();
    return inc.add_job(a, uniform(rng, 1.0, 2.0),
                       Utility::uses_target ? target_share * a.maxCoeff() : 0.0);
  };
  std::vector<typename solver::job_id> ids;
  for (int k = 0; k < 2000; ++k) ids.push_back(add());
  const popalloc::solve_result first = inc.solve();
  REQUIRE(first.status == popalloc::solve_status::converged);
  REQUIRE(first.dual_bound < first.trivial_bound);  // priced: the bound is not g(0)
  inc.options().relative_gap = tolerance;

  for (int round = 0; round < 2; ++round) {
    inc.remove_job(ids[static_cast<std::size_t>(10 + round)]);
    ids.push_back(add());
    inc.update_throughput(ids[static_cast<std::size_t>(100 + round)], draw());
    inc.update_weight(ids[static_cast<std::size_t>(200 + round)], 1.5);
    const popalloc::solve_result carried = inc.solve();
    CHECK(carried.status == popalloc::solve_status::converged);
    CHECK(carried.iterations == 0);
    CHECK(carried.relative_gap <= tolerance);
    CHECK(carried.prices == first.prices);
    const auto& p = inc.problem();
    CHECK(dual_at(p, carried.prices, Utility{}) ==
          doctest::Approx(carried.dual_bound).epsilon(1e-11));
    CHECK(popalloc_test::recomputed_objective(p, Utility{}, carried) ==
          doctest::Approx(carried.primal_objective).epsilon(1e-11));
    CHECK(popalloc_test::allocation_violation(p, carried) <= 1e-9);
    const popalloc::detail::measured_gap gap = popalloc::detail::measure_gap(
        carried.dual_bound, carried.primal_objective, popalloc::gap_measure::automatic,
        popalloc::detail::gap_references_of(p, Utility{}));
    CHECK(carried.gap_scale == doctest::Approx(gap.scale).epsilon(1e-12));
    CHECK(std::string(carried.gap_scale_name) == gap.scale_name);
    const popalloc::solve_result cold = inc.solve_cold();
    REQUIRE(cold.status == popalloc::solve_status::converged);
    CHECK(carried.primal_objective <= cold.dual_bound + 1e-9);
    CHECK(cold.primal_objective <= carried.dual_bound + 1e-9);
  }

  inc.set_capacity(1, 0.0);  // every job loses an option: the sums at the last prices go
  const popalloc::solve_result closed = inc.solve();
  CHECK(closed.status == popalloc::solve_status::converged);
  CHECK(closed.iterations > 0);
  CHECK(popalloc_test::allocation_violation(inc.problem(), closed) <= 1e-9);
}

}  // namespace

TEST_CASE("incremental_solver: at the last prices a re-plan needs no dual evaluation (log)") {
  check_priced_carry<popalloc::utility::log>(0.0, 1e-3);
}

TEST_CASE("incremental_solver: at the last prices a re-plan needs no dual evaluation (linear)") {
  check_priced_carry<popalloc::utility::linear>(0.0, 1e-3);
}

TEST_CASE(
    "incremental_solver: at the last prices a re-plan needs no dual evaluation (target "
    "priority)") {
  check_priced_carry<popalloc::utility::target_priority>(0.8, 5e-3);
}

TEST_CASE(
    "incremental_solver: at the last prices, kept jobs at the margin give way to an arrival "
    "(target priority)") {
  // One resource of 500.5 units and 1000 jobs of weight 1 + k / 1000 that need one unit each to
  // meet their targets: the 500 heaviest are served, the 501st half. An arrival of weight 10
  // takes a whole unit at the optimal price (about 1.5). Cut alone it would lose about 8.5 of
  // value, 1.4% of the objective; the half-served job and the next one giving way lose nothing
  // at that price but the 0.001 that separates their weights.
  using solver =
      popalloc::incremental_solver<popalloc::utility::target_priority, double, test_backend>;
  popalloc::solver_options options;
  options.relative_gap = 1e-8;
  solver inc(Eigen::VectorXd::Constant(1, 500.5), options);
  std::vector<double> weights;
  for (int k = 0; k < 1000; ++k) {
    weights.push_back(1.0 + k / 1000.0);
    inc.add_job(Eigen::RowVectorXd::Ones(1), weights.back(), 1.0);
  }
  const popalloc::solve_result first = inc.solve();
  REQUIRE(first.status == popalloc::solve_status::converged);
  REQUIRE(first.dual_bound < first.trivial_bound);
  inc.options().relative_gap = 1e-3;
  inc.add_job(Eigen::RowVectorXd::Ones(1), 10.0, 1.0);
  weights.push_back(10.0);
  const popalloc::solve_result carried = inc.solve();
  CHECK(carried.status == popalloc::solve_status::converged);
  CHECK(carried.iterations == 0);
  CHECK(carried.prices == first.prices);
  CHECK(carried.relative_gap <= 1e-3);
  const auto& p = inc.problem();
  CHECK(popalloc_test::allocation_violation(p, carried) <= 1e-9);
  CHECK(popalloc_test::recomputed_objective(p, popalloc::utility::target_priority{}, carried) ==
        doctest::Approx(carried.primal_objective).epsilon(1e-11));
  CHECK(carried.throughput[1000] == doctest::Approx(1.0));  // the arrival is served

  // The optimum serves the heaviest 500 fully and the next one half (one resource, unit needs).
  std::sort(weights.rbegin(), weights.rend());
  double optimum = -0.5 * weights[500];
  for (std::size_t k = 501; k < weights.size(); ++k) optimum -= weights[k];
  CHECK(carried.primal_objective <= optimum + 1e-9);
  CHECK(carried.dual_bound >= optimum - 1e-9);
  CHECK(carried.primal_objective >= optimum - 0.01);  // not 8.5 short
}

namespace {

/// Linear jobs over 4 resources of `capacity` each, with throughputs graded_row and weights
/// U(1, 2), drawn from `seed`.
struct graded_linear_jobs {
  using solver = popalloc::incremental_solver<popalloc::utility::linear, double, test_backend>;
  static constexpr int m = 4;
  std::mt19937_64 rng;
  solver inc;
  std::vector<solver::job_id> ids;

  graded_linear_jobs(std::uint64_t seed, double capacity, int jobs,
                     const popalloc::solver_options& options)
      : rng(seed), inc(Eigen::VectorXd::Constant(m, capacity), options) {
    for (int k = 0; k < jobs; ++k) ids.push_back(inc.add_job(draw(), uniform(rng, 1.0, 2.0)));
  }
  Eigen::RowVectorXd draw() { return graded_row(rng, m); }
};

bool same_answer(const popalloc::solve_result& a, const popalloc::solve_result& b) {
  const auto& x = a.allocation;
  const auto& y = b.allocation;
  return a.primal_objective == b.primal_objective && a.dual_bound == b.dual_bound &&
         a.throughput == b.throughput && a.usage == b.usage &&
         std::equal(x.job_offset.begin(), x.job_offset.end(), y.job_offset.begin(),
                    y.job_offset.end()) &&
         std::equal(x.option.begin(), x.option.end(), y.option.begin(), y.option.end()) &&
         std::equal(x.fraction.begin(), x.fraction.end(), y.fraction.begin(), y.fraction.end());
}

}  // namespace

TEST_CASE("incremental_solver: the answer solve() returns holds until the next solve()") {
  // Re-plans certified at the last prices fill the arrays of the answer before the last one:
  // the answer in hand must not change under the next round's changes or a cold solve, and each
  // new answer must be whole (its objective recomputed from its own allocation).
  using utility = popalloc::utility::linear;
  popalloc::solver_options options;
  options.relative_gap = 1e-7;
  graded_linear_jobs run(11, 300.0, 2000, options);
  auto& inc = run.inc;
  auto& ids = run.ids;
  const popalloc::solve_result* answer = &inc.solve();
  REQUIRE(answer->status == popalloc::solve_status::converged);
  inc.options().relative_gap = 1e-3;
  int carried = 0;
  for (int round = 0; round < 4; ++round) {
    CAPTURE(round);
    const popalloc::solve_result copy = *answer;
    inc.remove_job(ids[static_cast<std::size_t>(round)]);
    ids.push_back(inc.add_job(run.draw(), 1.5));
    inc.update_throughput(ids[static_cast<std::size_t>(500 + round)], run.draw());
    CHECK(same_answer(*answer, copy));
    REQUIRE(inc.solve_cold().status == popalloc::solve_status::converged);
    CHECK(same_answer(*answer, copy));
    answer = &inc.solve();
    REQUIRE(answer->status == popalloc::solve_status::converged);
    carried += answer->iterations == 0 ? 1 : 0;
    const auto& p = inc.problem();
    CHECK(popalloc_test::allocation_violation(p, *answer) <= 1e-9);
    CHECK(popalloc_test::recomputed_objective(p, utility{}, *answer) ==
          doctest::Approx(answer->primal_objective).epsilon(1e-11));
  }
  CHECK(carried == 4);  // from the second on, each filled the arrays of an earlier answer
}

TEST_CASE("incremental_solver: at the last prices, changes spread over many row chunks") {
  // 40,000 jobs: a re-plan's passes over every job run in chunks of 16,384 rows, on two threads
  // here; the changed jobs lie in every chunk. The bound must still be g(p) of the changed
  // problem summed afresh, and the allocation whole.
  using utility = popalloc::utility::linear;
  constexpr int jobs = 40000;
  popalloc::solver_options options;
  options.relative_gap = 1e-6;
  options.threads = 2;
  graded_linear_jobs run(23, 6000.0, jobs, options);
  auto& inc = run.inc;
  auto& ids = run.ids;
  const popalloc::solve_result first = inc.solve();
  REQUIRE(first.status == popalloc::solve_status::converged);
  REQUIRE(first.dual_bound < first.trivial_bound);
  inc.options().relative_gap = 1e-3;
  for (int k = 0; k < 12; ++k) {
    const auto spread = static_cast<std::size_t>(k) * (jobs / 12);
    inc.remove_job(ids[spread + 1]);
    ids.push_back(inc.add_job(run.draw(), 1.5));
    inc.update_throughput(ids[spread + 2], run.draw());
  }
  const popalloc::solve_result& carried = inc.solve();
  REQUIRE(carried.status == popalloc::solve_status::converged);
  CHECK(carried.iterations == 0);
  const auto& p = inc.problem();
  CHECK(dual_at(p, carried.prices, utility{}) ==
        doctest::Approx(carried.dual_bound).epsilon(1e-11));
  CHECK(popalloc_test::recomputed_objective(p, utility{}, carried) ==
        doctest::Approx(carried.primal_objective).epsilon(1e-11));
  CHECK(popalloc_test::allocation_violation(p, carried) <= 1e-9);
}
