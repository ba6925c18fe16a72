// SPDX-License-Identifier: Apache-2.0
// The MPI backend in one process (MPI_COMM_SELF / a singleton MPI_COMM_WORLD): the CPU
// backend's answer (bit for bit in CPU order), validation, limits. Multi-rank runs: mpi_check.cpp
// under mpiexec.
#include <cmath>
#include <limits>
#include <string>

#include <doctest/doctest.h>

#include <popalloc/backend/mpi.hpp>
#include <popalloc/popalloc.hpp>

#include "mpi/mpi_init.hpp"
#include "support/instances.hpp"

#if defined(POPALLOC_TEST_HAVE_FAMILIES)
#include "support/probe_falls_short.hpp"
#endif

// OpenMPI's singleton start-up (MPI_Init without mpirun) leaks memory in components it loads and
// unloads, which LeakSanitizer reports at exit from frames it cannot even name. Leak detection is
// off in this binary only; ASan's memory-error checks and UBSan stay on.
#if defined(__SANITIZE_ADDRESS__)
#define POPALLOC_MPI_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define POPALLOC_MPI_TEST_ASAN 1
#endif
#endif
#if defined(POPALLOC_MPI_TEST_ASAN)
extern "C" const char* __asan_default_options() { return "detect_leaks=0"; }
#endif

namespace {

double relative(double a, double b) {
  return std::abs(a - b) / std::max({std::abs(a), std::abs(b), 1e-300});
}

template <class Utility>
void same_as_cpu(const Utility& utility, popalloc::backend::mpi_sums sums, std::int64_t block) {
  popalloc_test::ensure_mpi();
  const auto problem = popalloc_test::random_problem(2500, 6, 17);
  popalloc::solver_options options;
  options.relative_gap = 1e-6;
  const auto cpu = popalloc::solve(problem, utility, options);
  const auto mpi = popalloc::solve(popalloc::backend::mpi{MPI_COMM_WORLD, 60.0, sums, block},
                                   problem, utility, options);
  REQUIRE(mpi.status == popalloc::solve_status::converged);
  CHECK(mpi.relative_gap <= 1e-6);
  CHECK(popalloc_test::allocation_violation(problem, mpi) <= 1e-9);
  CHECK(relative(popalloc_test::recomputed_objective(problem, utility, mpi),
                 mpi.primal_objective) <= 1e-9);
  CHECK(mpi.allocation.jobs() == 2500);
  if (sums == popalloc::backend::mpi_sums::cpu_order) {  // the CPU backend's sums, bit for bit
    CHECK(mpi.primal_objective == cpu.primal_objective);
    CHECK(mpi.dual_bound == cpu.dual_bound);
    CHECK(mpi.prices == cpu.prices);
    CHECK(mpi.iterations == cpu.iterations);
    CHECK(mpi.allocation.fraction == cpu.allocation.fraction);
  } else {  // exact sums: a different rounding, the same optimum within both certificates
    CHECK(mpi.primal_objective <= cpu.dual_bound + 1e-12 * std::abs(cpu.dual_bound));
    CHECK(cpu.primal_objective <= mpi.dual_bound + 1e-12 * std::abs(cpu.dual_bound));
  }
}

}  // namespace

TEST_CASE("MPI backend, one rank: log utility, CPU order = the CPU backend bit for bit") {
  same_as_cpu(popalloc::utility::log{}, popalloc::backend::mpi_sums::cpu_order, 1024);
}

TEST_CASE("MPI backend, one rank: linear utility, CPU order = the CPU backend bit for bit") {
  same_as_cpu(popalloc::utility::linear{}, popalloc::backend::mpi_sums::cpu_order, 1024);
}

TEST_CASE("MPI backend, one rank: log utility, exact sums, per-job blocks") {
  same_as_cpu(popalloc::utility::log{}, popalloc::backend::mpi_sums::exact, 1);
}

TEST_CASE("MPI backend, one rank: target priority, exact sums") {
  same_as_cpu(popalloc::utility::target_priority{}, popalloc::backend::mpi_sums::exact, 100);
}

#if defined(POPALLOC_TEST_HAVE_FAMILIES)
TEST_CASE("MPI backend, one rank: a probe that falls short continues the sample, bit for bit") {
  // As in tests/test_families.cpp: the sample meets its targets early, the full problem at
  // those prices does not, and the sample goes on to its minimiser (a second nested solve).
  popalloc_test::ensure_mpi();
  const auto problem = popalloc_test::probe_falls_short(20000, 1);
  const popalloc::utility::target_priority u;
  popalloc::solver_options options;
  options.relative_gap = 1e-3;
  const auto cpu = popalloc::solve(problem, u, options);
  const auto mpi = popalloc::solve(
      popalloc::backend::mpi{MPI_COMM_WORLD, 60.0, popalloc::backend::mpi_sums::cpu_order, 64},
      problem, u, options);
  const popalloc::solve_result sample = popalloc_test::plain_sample_solve(problem, u, options);
  REQUIRE(mpi.status == popalloc::solve_status::converged);
  CHECK(cpu.sample_iterations > sample.iterations);  // the continuation ran
  CHECK(mpi.sample_iterations == cpu.sample_iterations);
  CHECK(mpi.iterations == cpu.iterations);
  CHECK(mpi.primal_objective == cpu.primal_objective);
  CHECK(mpi.dual_bound == cpu.dual_bound);
  CHECK(mpi.prices == cpu.prices);
  CHECK(popalloc_test::allocation_violation(problem, mpi) <= 1e-9);
}
#endif

TEST_CASE("MPI backend: results do not depend on the thread count, bit for bit") {
  popalloc_test::ensure_mpi();
  const auto problem = popalloc_test::random_problem(8000, 5, 3);
  popalloc::solver_options options;
  options.threads = 1;
  for (const auto sums :
       {popalloc::backend::mpi_sums::cpu_order, popalloc::backend::mpi_sums::exact}) {
    const popalloc::backend::mpi where{MPI_COMM_SELF, 60.0, sums, 256};
    options.threads = 1;
    const auto one = popalloc::solve(where, problem, popalloc::utility::log{}, options);
    options.threads = 3;
    const auto three = popalloc::solve(where, problem, popalloc::utility::log{}, options);
    CHECK(one.primal_objective == three.primal_objective);
    CHECK(one.dual_bound == three.dual_bound);
    CHECK(one.prices == three.prices);
    CHECK(one.iterations == three.iterations);
  }
}

TEST_CASE("MPI backend: invalid input is reported before any work") {
  popalloc_test::ensure_mpi();
  auto problem = popalloc_test::random_problem(100, 3, 1);
  const popalloc::backend::mpi where{MPI_COMM_SELF};
  SUBCASE("NaN throughput names the rank") {
    problem.throughput(5, 1) = std::numeric_limits<double>::quiet_NaN();
    try {
      popalloc::solve(where, problem, popalloc::utility::log{});
      FAIL("no exception");
    } catch (const popalloc::invalid_problem& e) {
      CHECK(std::string(e.what()).find("rank 0: throughput(5, 1)") != std::string::npos);
    }
  }
  SUBCASE("no jobs on any rank") {
    popalloc::dense_problem<double> empty;
    empty.throughput.resize(0, 3);
    empty.capacity = Eigen::VectorXd::Ones(3);
    CHECK_THROWS_AS(popalloc::solve(where, empty, popalloc::utility::log{}),
                    popalloc::invalid_problem);
  }
  SUBCASE("bad options") {
    popalloc::solver_options options;
    options.max_iterations = 0;
    CHECK_THROWS_AS(popalloc::solve(where, problem, popalloc::utility::log{}, options),
                    popalloc::invalid_options);
    options = {};
    options.warm_start_prices = Eigen::VectorXd::Ones(2);
    CHECK_THROWS_AS(popalloc::solve(where, problem, popalloc::utility::log{}, options),
                    popalloc::invalid_options);
  }
  SUBCASE("bad backend settings") {
    CHECK_THROWS_AS(popalloc::solve(popalloc::backend::mpi{MPI_COMM_SELF, 0.0}, problem,
                                    popalloc::utility::log{}),
                    popalloc::invalid_options);
    CHECK_THROWS_AS(popalloc::solve(popalloc::backend::mpi{MPI_COMM_SELF, 10.0,
                                                           popalloc::backend::mpi_sums::exact, 0},
                                    problem, popalloc::utility::log{}),
                    popalloc::invalid_options);
  }
}

TEST_CASE("MPI backend: time limit and callback stop are honoured") {
  popalloc_test::ensure_mpi();
  const auto problem = popalloc_test::random_problem(3000, 4, 8);
  const popalloc::backend::mpi where{MPI_COMM_SELF};
  popalloc::solver_options options;
  options.relative_gap = 1e-12;
  options.time_limit_seconds = 1e-9;
  const auto limited = popalloc::solve(where, problem, popalloc::utility::linear{}, options);
  CHECK(limited.status == popalloc::solve_status::time_limit);
  CHECK(limited.iterations <= 2);
  CHECK(popalloc_test::allocation_violation(problem, limited) <= 1e-9);
  options.time_limit_seconds = std::numeric_limits<double>::infinity();
  int calls = 0;
  const auto stopped = popalloc::solve(
      where, problem, popalloc::utility::linear{}, options, [&](const popalloc::progress& info) {
        ++calls;
        return info.iteration >= 4 ? popalloc::callback_action::stop
                                   : popalloc::callback_action::proceed;
      });
  CHECK(stopped.status == popalloc::solve_status::interrupted);
  // The stop request travels with the next reduction: one evaluation later than in one process.
  CHECK(stopped.iterations == 5);
  CHECK(calls == 5);
}
