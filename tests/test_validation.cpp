// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Invalid problems and options are rejected with popalloc exceptions before any work.
#include <limits>

#include <doctest/doctest.h>

#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

namespace {
const double nan_value = std::numeric_limits<double>::quiet_NaN();
const double inf_value = std::numeric_limits<double>::infinity();
}  // namespace

TEST_CASE("[popalloc] invalid dense problems throw invalid_problem") {
  const popalloc::utility::linear linear;
  auto p = popalloc_test::random_problem(5, 3, 1);
  SUBCASE("valid") { CHECK_NOTHROW(p.validate(linear)); }
  SUBCASE("NaN throughput") {
    p.throughput(2, 1) = nan_value;
    CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, linear),
                    popalloc::invalid_problem);
  }
  SUBCASE("infinite throughput") {
    p.throughput(0, 0) = inf_value;
    CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, linear),
                    popalloc::invalid_problem);
  }
  SUBCASE("negative throughput") {
    p.throughput(0, 0) = -1.0;
    CHECK_THROWS_WITH_AS(popalloc::solve<popalloc_test::test_backend>(p, linear),
                         "throughput(0, 0) must be >= 0 and 0 or within [1e-60, 1e60] in magnitude",
                         popalloc::invalid_problem);
  }
  SUBCASE("values outside [1e-60, 1e60] are rejected, 0 is not") {
    p.throughput(0, 0) = 1e61;
    CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, linear),
                    popalloc::invalid_problem);
    p.throughput(0, 0) = 0.0;
    p.capacity[0] = 1e-300;
    CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, linear),
                    popalloc::invalid_problem);
    p.capacity[0] = 0.0;
    CHECK_NOTHROW(popalloc::solve<popalloc_test::test_backend>(p, linear));
  }
  SUBCASE("negative capacity") {
    p.capacity[1] = -0.5;
    CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, linear),
                    popalloc::invalid_problem);
  }
  SUBCASE("capacity size mismatch") {
    p.capacity.resize(2);
    CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, linear),
                    popalloc::invalid_problem);
  }
  SUBCASE("weight size mismatch") {
    p.weight.resize(4);
    CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, linear),
                    popalloc::invalid_problem);
  }
  SUBCASE("NaN weight") {
    p.weight[3] = nan_value;
    CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, linear),
                    popalloc::invalid_problem);
  }
  SUBCASE("target-priority needs targets") {
    p.target.resize(0);
    CHECK_THROWS_AS(
        popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::target_priority{}),
        popalloc::invalid_problem);
  }
  SUBCASE("log needs positive weights and a usable option per job") {
    p.weight[0] = 0.0;
    CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}),
                    popalloc::invalid_problem);
    p.weight[0] = 1.0;
    p.throughput.row(4).setZero();
    CHECK_THROWS_WITH_AS(
        popalloc::solve<popalloc_test::test_backend>(p, popalloc::utility::log{}),
        "job 4 has no positive throughput on an open resource, so its utility is -infinity for "
        "every allocation",
        popalloc::invalid_problem);
  }
  SUBCASE("invalid demand entries are named") {
    p.demand = decltype(p.demand)::Ones(5, 3);
    p.demand(3, 2) = nan_value;
    CHECK_THROWS_WITH_AS(popalloc::solve<popalloc_test::test_backend>(p, linear),
                         "demand(3, 2) must be >= 0 and 0 or within [1e-60, 1e60] in magnitude",
                         popalloc::invalid_problem);
    p.demand(3, 2) = -2.0;
    CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, linear),
                    popalloc::invalid_problem);
  }
  SUBCASE("demand and job_demand together") {
    p.demand = decltype(p.demand)::Ones(5, 3);
    p.job_demand = decltype(p.job_demand)::Ones(5);
    CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, linear),
                    popalloc::invalid_problem);
  }
  SUBCASE("empty problems") {
    popalloc::dense_problem<double> empty;
    CHECK_THROWS_WITH_AS(popalloc::solve<popalloc_test::test_backend>(empty, linear),
                         "problem has no jobs", popalloc::invalid_problem);
    popalloc::dense_problem<double> no_resources;
    no_resources.throughput.resize(3, 0);
    CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(no_resources, linear),
                    popalloc::invalid_problem);
  }
}

TEST_CASE("[popalloc] invalid options throw invalid_options") {
  const auto p = popalloc_test::random_problem(5, 3, 1);
  const popalloc::utility::linear linear;
  popalloc::solver_options o;
  SUBCASE("negative tolerance") { o.relative_gap = -1.0; }
  SUBCASE("both tolerances zero") {
    o.relative_gap = 0.0;
    o.absolute_gap = 0.0;
  }
  SUBCASE("no iterations") { o.max_iterations = 0; }
  SUBCASE("bad time limit") { o.time_limit_seconds = 0.0; }
  SUBCASE("negative threads") { o.threads = -2; }
  SUBCASE("warm start of the wrong size") { o.warm_start_prices = Eigen::VectorXd::Ones(2); }
  SUBCASE("negative warm-start price") {
    o.warm_start_prices = Eigen::VectorXd::Ones(3);
    o.warm_start_prices[1] = -1.0;
  }
  SUBCASE("warm-start price beyond the value range") {
    o.warm_start_prices = Eigen::VectorXd::Ones(3);
    o.warm_start_prices[2] = 1e308;
  }
  CHECK_THROWS_AS(popalloc::solve<popalloc_test::test_backend>(p, linear, o),
                  popalloc::invalid_options);
}

TEST_CASE("[popalloc] power utility exponent is checked") {
  CHECK_THROWS_AS(popalloc::utility::power{1.0}, popalloc::invalid_options);
  CHECK_THROWS_AS(popalloc::utility::power{0.0}, popalloc::invalid_options);
  CHECK_NOTHROW(popalloc::utility::power{0.5});
}

TEST_CASE("[popalloc] bundle problems reject bad data") {
  popalloc::bundle_problem<double> b(Eigen::VectorXd::Ones(2));
  CHECK_THROWS_AS(b.add_option(1.0, {{0, 1.0}}), popalloc::invalid_problem);  // no job yet
  b.add_job();
  CHECK_THROWS_AS(b.add_option(1.0, {{5, 1.0}}), popalloc::invalid_problem);  // unknown resource
  b.add_option(1.0, {{0, -1.0}});
  CHECK_THROWS_AS(b.validate(popalloc::utility::linear{}), popalloc::invalid_problem);
}
