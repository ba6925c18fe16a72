// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief popalloc-solve's instance families (examples/popalloc_solve/families.hpp): specs,
/// valid data, determinism and slicing, the original generator bit for bit, the JOBS.csv demand
/// column, and the solver against the exact LP (CLP) on every family.
#if POPALLOC_TEST_HAVE_FAMILIES

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/popalloc.hpp>

#include "families.hpp"
#include "generator.hpp"
#include "instance.hpp"
#include "io.hpp"
#include "support/instances.hpp"
#include "support/probe_falls_short.hpp"

#if POPALLOC_TEST_HAVE_CLP
#include "support/lp_reference.hpp"
#endif

namespace {

using popalloc_solve::capacity_level;
using popalloc_solve::family_spec;
using popalloc_solve::generate_family;
using popalloc_solve::parse_family;
using popalloc_solve::target_level;

/// Every family with the resource count it is tested at (gavel has exactly 3).
struct sized_family {
  const char* name;
  std::int64_t resources;
};
constexpr sized_family kFamilies[] = {{"generations", 4}, {"uniform", 4}, {"classes", 4},
                                      {"gavel", 3},       {"paper", 4},   {"sparse", 4}};

family_spec spec_of(const std::string& text) { return parse_family(text); }

std::string message_of(const std::string& text) {
  try {
    parse_family(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

/// The data every family promises: finite, >= 0, every job usable, weights and targets > 0.
void check_valid(const popalloc::dense_problem<double>& p, const std::string& family) {
  CAPTURE(family);
  const Eigen::Index n = p.jobs(), m = p.resources();
  REQUIRE(p.capacity.size() == m);
  REQUIRE(p.weight.size() == n);
  REQUIRE(p.target.size() == n);
  for (Eigen::Index j = 0; j < m; ++j) {
    CHECK(std::isfinite(p.capacity[j]));
    CHECK(p.capacity[j] > 0.0);
  }
  int bad_rows = 0, bad_values = 0;
  for (Eigen::Index i = 0; i < n; ++i) {
    bool usable = false;
    for (Eigen::Index j = 0; j < m; ++j) {
      const double a = p.throughput(i, j);
      bad_values += !(std::isfinite(a) && a >= 0.0);
      usable = usable || (a > 0.0 && p.capacity[j] > 0.0);
    }
    bad_rows += !usable;
    bad_values += !(std::isfinite(p.weight[i]) && p.weight[i] > 0.0);
    bad_values += !(std::isfinite(p.target[i]) && p.target[i] > 0.0);
  }
  CHECK(bad_rows == 0);
  CHECK(bad_values == 0);
  if (family == "gavel") {
    REQUIRE(p.job_demand.size() == n);
    for (Eigen::Index i = 0; i < n; ++i) {
      const double d = p.job_demand[i];
      CHECK((d == 1.0 || d == 2.0 || d == 4.0 || d == 8.0));
    }
  } else {
    CHECK(p.job_demand.size() == 0);
  }
  CHECK(p.demand.size() == 0);
  CHECK_NOTHROW(p.validate(popalloc::utility::log{}));
  CHECK_NOTHROW(p.validate(popalloc::utility::target_priority{}));
}

bool same_rows(const popalloc::dense_problem<double>& full,
               const popalloc::dense_problem<double>& part, Eigen::Index first) {
  const Eigen::Index count = part.jobs();
  bool same = part.capacity == full.capacity && part.resources() == full.resources();
  if (!same) return false;
  same = part.throughput == full.throughput.middleRows(first, count) &&
         part.weight == full.weight.segment(first, count) &&
         part.target == full.target.segment(first, count);
  if (full.job_demand.size() != 0)
    same = same && part.job_demand == full.job_demand.segment(first, count);
  else
    same = same && part.job_demand.size() == 0;
  return same;
}

double weighted_target_sum(const popalloc::dense_problem<double>& p) {
  return p.weight.dot(p.target);
}

/// A scratch directory for CSV files, removed at the end of the test (a random name: the CPU and
/// Thrust test executables may run this case at the same time).
struct scratch_dir {
  std::filesystem::path path;
  explicit scratch_dir(const std::string& name)
      : path(std::filesystem::temp_directory_path() /
             ("popalloc_test_families_" + name + "_" + std::to_string(std::random_device{}()))) {
    std::filesystem::create_directories(path);
  }
  ~scratch_dir() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

/// The input_error message of reading JOBS.csv `jobs_text` with two resources r0, r1.
std::string read_error(const scratch_dir& dir, const std::string& jobs_text) {
  write_text(dir.file("bad.resources.csv"), "name,capacity\nr0,1\nr1,2\n");
  write_text(dir.file("bad.jobs.csv"), jobs_text);
  try {
    popalloc_solve::read_instance(dir.file("bad.jobs.csv"), dir.file("bad.resources.csv"),
                                  popalloc_solve::data_requirements{});
  } catch (const popalloc_solve::input_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("[families] parse_family and to_string round trip") {
  for (const std::string& name : popalloc_solve::family_names()) {
    for (const char* capacity : {"", ":tight", ":loose"}) {
      for (const char* targets : {"", ":reachable", ":far"}) {
        const std::string text = name + capacity + targets;
        CAPTURE(text);
        const family_spec spec = parse_family(text);
        CHECK(spec.family == name);
        CHECK(popalloc_solve::to_string(spec) == text);
        CHECK(popalloc_solve::to_string(parse_family(popalloc_solve::to_string(spec))) == text);
        CHECK(!popalloc_solve::describe_family(name).empty());
      }
    }
  }
  const family_spec swapped = parse_family("paper:reachable:loose");
  CHECK(swapped.family == "paper");
  CHECK(swapped.capacity == capacity_level::loose);
  CHECK(swapped.targets == target_level::reachable);
  CHECK(popalloc_solve::to_string(swapped) == "paper:loose:reachable");
  CHECK(spec_of("classes:tight").capacity == capacity_level::tight);
  CHECK(spec_of("sparse:far").targets == target_level::far);
  const family_spec fallback;
  CHECK(fallback.family == "generations");
  CHECK(popalloc_solve::to_string(fallback) == "generations");
  CHECK(popalloc_solve::family_names() ==
        std::vector<std::string>{"generations", "uniform", "classes", "gavel", "paper", "sparse"});
}

TEST_CASE("[families] bad specs throw, naming the bad part and the valid names") {
  CHECK_THROWS_AS(parse_family("clases"), std::invalid_argument);
  const std::string unknown = message_of("clases:tight");
  CHECK(unknown.find("'clases'") != std::string::npos);
  for (const std::string& name : popalloc_solve::family_names())
    CHECK(unknown.find(name) != std::string::npos);
  CHECK(message_of("classes:tigth").find("'tigth'") != std::string::npos);
  CHECK(message_of("classes:tigth").find("tight") != std::string::npos);
  CHECK(message_of("").find("empty") != std::string::npos);
  CHECK(message_of(":tight").find("empty") != std::string::npos);
  CHECK(message_of("classes:").find("''") != std::string::npos);
  CHECK(message_of("classes:tight:loose").find("two capacity") != std::string::npos);
  CHECK(message_of("classes:far:reachable").find("two target") != std::string::npos);
  CHECK(message_of("Classes").find("'Classes'") != std::string::npos);
  CHECK_THROWS_AS(popalloc_solve::describe_family("nope"), std::invalid_argument);
}

TEST_CASE("[families] sizes a family cannot make throw") {
  const auto gavel = spec_of("gavel");
  for (const std::int64_t m : {1, 2, 4, 8}) {
    CAPTURE(m);
    try {
      generate_family(gavel, 100, m, 1);
      FAIL("gavel with m != 3 did not throw");
    } catch (const std::invalid_argument& e) {
      CHECK(std::string(e.what()).find("gavel") != std::string::npos);
      CHECK(std::string(e.what()).find("3") != std::string::npos);
    }
  }
  CHECK_THROWS_AS(popalloc_solve::family_resource_names(gavel, 8), std::invalid_argument);
  CHECK(popalloc_solve::family_resource_names(gavel, 3) ==
        std::vector<std::string>{"k80", "p100", "v100"});
  CHECK(popalloc_solve::family_resource_names(spec_of("paper"), 2) ==
        std::vector<std::string>{"r0", "r1"});
  for (const sized_family& f : kFamilies) {
    CAPTURE(f.name);
    const auto spec = spec_of(f.name);
    CHECK_THROWS_AS(generate_family(spec, 0, f.resources, 1), std::invalid_argument);
    CHECK_THROWS_AS(generate_family(spec, -5, f.resources, 1), std::invalid_argument);
    CHECK_THROWS_AS(generate_family(spec, 10, 0, 1), std::invalid_argument);
    CHECK_THROWS_AS(generate_family(spec, std::int64_t{1} << 31, f.resources, 1),
                    std::invalid_argument);
    CHECK_THROWS_AS(generate_family(spec, 10, std::int64_t{1} << 31, 1), std::invalid_argument);
    CHECK_THROWS_AS(generate_family(spec, 10, f.resources, 1, 5, 6), std::invalid_argument);
    CHECK_THROWS_AS(generate_family(spec, 10, f.resources, 1, -1, 2), std::invalid_argument);
    CHECK(generate_family(spec, 10, f.resources, 1, 10, 0).jobs() == 0);
  }
  family_spec unknown;
  unknown.family = "nope";
  CHECK_THROWS_AS(generate_family(unknown, 10, 2, 1), std::invalid_argument);
}

TEST_CASE("[families] every family and variant makes valid data") {
  for (const sized_family& f : kFamilies) {
    for (const char* variant : {"", ":tight", ":loose", ":reachable", ":far", ":tight:far"}) {
      const std::string text = std::string(f.name) + variant;
      CAPTURE(text);
      for (const std::int64_t n : {1, 2, 7, 500}) {
        CAPTURE(n);
        check_valid(generate_family(spec_of(text), n, f.resources, 3), f.name);
      }
    }
  }
  for (const char* name : {"generations", "uniform", "classes", "paper", "sparse"}) {
    CAPTURE(name);
    for (const std::int64_t m : {1, 2, 3, 16}) {
      CAPTURE(m);
      check_valid(generate_family(spec_of(name), 300, m, 11), name);
    }
  }
}

TEST_CASE("[families] the families have their documented shapes") {
  const std::int64_t n = 4000;
  SUBCASE("sparse: every job uses 1-3 resources, all three counts occur") {
    const auto p = generate_family(spec_of("sparse"), n, 8, 5);
    int counts[4] = {0, 0, 0, 0};
    for (Eigen::Index i = 0; i < p.jobs(); ++i) {
      const auto used = (p.throughput.row(i).array() > 0.0).count();
      REQUIRE(used >= 1);
      REQUIRE(used <= 3);
      ++counts[used];
    }
    for (int k = 1; k <= 3; ++k) CHECK(counts[k] > n / 5);
  }
  SUBCASE("classes: job sizes span orders of magnitude, best resources differ") {
    const auto p = generate_family(spec_of("classes"), n, 6, 5);
    const Eigen::VectorXd best = p.throughput.rowwise().maxCoeff();
    CHECK(best.maxCoeff() / best.minCoeff() > 1000.0);
    std::vector<int> best_resource(6, 0);
    for (Eigen::Index i = 0; i < p.jobs(); ++i) {
      Eigen::Index j = 0;
      p.throughput.row(i).maxCoeff(&j);
      ++best_resource[static_cast<std::size_t>(j)];
    }
    int resources_someone_prefers = 0;
    for (const int count : best_resource) resources_someone_prefers += count > n / 50;
    CHECK(resources_someone_prefers >= 3);  // oldest, a middle one and the newest at least
    CHECK(best_resource[0] > n / 50);
    CHECK(best_resource[5] > n / 50);
  }
  SUBCASE("uniform: every job prefers the newest resource on average") {
    const auto p = generate_family(spec_of("uniform"), n, 4, 5);
    for (Eigen::Index j = 0; j < 4; ++j) {
      CHECK(p.throughput.col(j).minCoeff() >= 0.1 * static_cast<double>(j + 1));
      CHECK(p.throughput.col(j).maxCoeff() < 1.0 * static_cast<double>(j + 1));
      CHECK(p.capacity[j] >= 0.1 * n / 4 * 0.5);
      CHECK(p.capacity[j] < 1.0 * n / 4 * 0.5);
    }
    CHECK(((p.weight.array() == 1.0) || (p.weight.array() == 2.0)).all());
    CHECK(p.target.maxCoeff() < 0.5 * 4);
  }
  SUBCASE("paper: R_j = U(0.1,1) n / 1.5^j, A_ij in [0.1, mid_j), weights 1") {
    const int m = 5;
    const auto p = generate_family(spec_of("paper"), n, m, 5);
    for (Eigen::Index j = 0; j < m; ++j) {
      const double mid = 0.3 + 0.7 * static_cast<double>(j) / (m - 1);
      CHECK(p.throughput.col(j).minCoeff() >= 0.1);
      CHECK(p.throughput.col(j).maxCoeff() < mid);
      const double scale = static_cast<double>(n) / std::pow(1.5, static_cast<double>(j));
      CHECK(p.capacity[j] >= 0.1 * scale);
      CHECK(p.capacity[j] < scale);
    }
    CHECK((p.weight.array() == 1.0).all());
  }
  SUBCASE("gavel: Gavel's rows tiled, noise within 10%, demand = the scale factor") {
    const auto p = generate_family(spec_of("gavel"), n, 3, 5);
    // Job 2 is table row 2, ("LM (batch size 10)", 1): 23.79, 77.08, 81.65 steps/s.
    CHECK(p.job_demand[2] == 1.0);
    CHECK(p.throughput(2, 0) == doctest::Approx(23.794428965833195).epsilon(0.1));
    CHECK(p.throughput(2, 2) == doctest::Approx(81.65163491883021).epsilon(0.1));
    CHECK(p.job_demand[5] == 8.0);  // ("LM (batch size 10)", 8)
    CHECK(p.job_demand[5 + 83] == 8.0);
    CHECK(p.throughput(5 + 83, 2) / p.throughput(5, 2) == doctest::Approx(1.0).epsilon(0.25));
    // Capacities: a third of the total demand, about equal between the types, whole GPUs.
    const double total = p.capacity.sum(), demand = p.job_demand.sum();
    CHECK(total > 0.8 * demand / 3.0);
    CHECK(total < 1.2 * demand / 3.0);
    for (Eigen::Index j = 0; j < 3; ++j) CHECK(p.capacity[j] == std::round(p.capacity[j]));
    CHECK(p.throughput.col(0).minCoeff() == 0.0);  // ResNet-50 (batch size 128) on k80
    CHECK(p.throughput.col(2).minCoeff() > 0.0);
  }
  SUBCASE("capacity variants scale the standard capacities, targets stay") {
    for (const char* name : {"uniform", "classes", "paper", "gavel", "sparse"}) {
      CAPTURE(name);
      const std::int64_t m = std::string(name) == "gavel" ? 3 : 4;
      const auto standard = generate_family(spec_of(name), 500, m, 9);
      const auto tight = generate_family(spec_of(std::string(name) + ":tight"), 500, m, 9);
      const auto loose = generate_family(spec_of(std::string(name) + ":loose"), 500, m, 9);
      for (Eigen::Index j = 0; j < m; ++j) {
        CHECK(tight.capacity[j] == doctest::Approx(0.3 * standard.capacity[j]));
        CHECK(loose.capacity[j] == doctest::Approx(3.0 * standard.capacity[j]));
      }
      CHECK(tight.throughput == standard.throughput);
      CHECK(tight.target == standard.target);
      CHECK(loose.target == standard.target);
    }
    const auto standard = generate_family(spec_of("generations"), 5000, 4, 9);
    const auto tight = generate_family(spec_of("generations:tight"), 5000, 4, 9);
    CHECK(tight.capacity.sum() == doctest::Approx(0.3 * standard.capacity.sum()).epsilon(0.01));
    CHECK(tight.target == standard.target);
  }
}

TEST_CASE("[families] deterministic, and any slice equals the rows of the full instance") {
  const std::int64_t n = 211;
  for (const sized_family& f : kFamilies) {
    for (const char* variant : {"", ":tight:reachable", ":loose:far"}) {
      const std::string text = std::string(f.name) + variant;
      CAPTURE(text);
      const auto spec = spec_of(text);
      const auto full = generate_family(spec, n, f.resources, 42);
      const auto again = generate_family(spec, n, f.resources, 42);
      CHECK(same_rows(full, again, 0));
      const auto other_seed = generate_family(spec, n, f.resources, 43);
      CHECK(!(other_seed.throughput == full.throughput));
      for (const auto& slice : std::vector<std::pair<std::int64_t, std::int64_t>>{
               {0, 1}, {0, 70}, {70, 71}, {141, 70}, {210, 1}, {100, 0}, {0, n}}) {
        const std::int64_t first = slice.first, count = slice.second;
        CAPTURE(first);
        CAPTURE(count);
        const auto part = generate_family(spec, n, f.resources, 42, first, count);
        CHECK(part.jobs() == count);
        CHECK(same_rows(full, part, first));
      }
    }
  }
}

TEST_CASE("[families] generations is the original generator, bit for bit") {
  // Values printed by the generator before it moved into families.cpp (generate_instance with
  // jobs 300, resources 5, seed 7). Exact on glibc; other libms may differ in the last bits of
  // std::exp/std::pow, hence the 1e-14 tolerance on the throughputs.
  popalloc_solve::generator_settings settings;
  settings.jobs = 300;
  settings.resources = 5;
  settings.seed = 7;
  const popalloc_solve::instance original = popalloc_solve::generate_instance(settings);
  const auto p = generate_family(family_spec{}, 300, 5, 7);
  CHECK(p.throughput == original.problem.throughput);
  CHECK(p.capacity == original.problem.capacity);
  CHECK(p.weight == original.problem.weight);
  CHECK(p.target == original.problem.target);
  CHECK(original.job_ids.front() == "0");
  CHECK(original.job_ids.back() == "299");
  CHECK(original.resource_names == std::vector<std::string>{"r0", "r1", "r2", "r3", "r4"});

  const double capacity[] = {60, 42, 29, 20, 14};
  for (Eigen::Index j = 0; j < 5; ++j) CHECK(p.capacity[j] == capacity[j]);
  struct golden_row {
    Eigen::Index job;
    double weight, target, throughput[5];
  };
  const golden_row rows[] = {
      {0,
       2,
       1.8024850451326486,
       {0.44751178394900815, 0.979723063636327, 1.997801112221391, 4.8367390794079324,
        11.335445632505142}},
      {1,
       1,
       1.4096526357580785,
       {0.47237447009635286, 0.93198647180078187, 2.3642380527222824, 4.2923982200920809,
        9.3456360780300844}},
      {17,
       2,
       1.5817434212668975,
       {1.0027358069971937, 1.7958481012460101, 2.8205839333769473, 4.6601626352265644,
        8.0712175002430282}},
      {299,
       2,
       1.649483092732124,
       {0.92178946717007881, 1.9025196892718637, 2.6562347907694468, 4.7820797377641791,
        8.1944781482506865}},
  };
  for (const golden_row& row : rows) {
    CAPTURE(row.job);
    CHECK(p.weight[row.job] == row.weight);
    CHECK(p.target[row.job] == doctest::Approx(row.target).epsilon(1e-14));
    for (Eigen::Index j = 0; j < 5; ++j)
      CHECK(p.throughput(row.job, j) == doctest::Approx(row.throughput[j]).epsilon(1e-14));
  }
  CHECK((p.throughput.array() == 0.0).count() == 40);

  // The default settings use the default family; a slice is the original slice.
  settings.family = parse_family("generations");
  const auto slice = popalloc_solve::generate_instance(settings, 100, 50);
  CHECK(slice.problem.throughput == original.problem.throughput.middleRows(100, 50));
  CHECK(slice.job_ids.front() == "100");
}

TEST_CASE("[families] JOBS.csv demand column: exact round trip and clear errors") {
  scratch_dir dir("csv");
  popalloc_solve::generator_settings settings;
  settings.jobs = 300;
  settings.resources = 3;
  settings.seed = 4;
  settings.family = parse_family("gavel:tight");
  const popalloc_solve::instance original = popalloc_solve::generate_instance(settings);
  REQUIRE(original.problem.job_demand.size() == 300);
  popalloc_solve::write_instance(original, dir.file("gavel"));
  const auto back = popalloc_solve::read_instance(
      dir.file("gavel.jobs.csv"), dir.file("gavel.resources.csv"), {"target-priority", true});
  CHECK(back.job_ids == original.job_ids);
  CHECK(back.resource_names == original.resource_names);
  CHECK(back.problem.throughput == original.problem.throughput);
  CHECK(back.problem.capacity == original.problem.capacity);
  CHECK(back.problem.weight == original.problem.weight);
  CHECK(back.problem.target == original.problem.target);
  CHECK(back.problem.job_demand == original.problem.job_demand);

  // Non-integer demands round-trip too; no column without job_demand.
  popalloc_solve::instance odd = original;
  odd.problem.job_demand[0] = 0.1;
  odd.problem.job_demand[1] = 1.0 / 3.0;
  odd.problem.job_demand[2] = 3.0e-7;
  popalloc_solve::write_instance(odd, dir.file("odd"));
  CHECK(popalloc_solve::read_instance(dir.file("odd.jobs.csv"), dir.file("odd.resources.csv"), {})
            .problem.job_demand == odd.problem.job_demand);
  popalloc_solve::instance plain = original;
  plain.problem.job_demand.resize(0);
  popalloc_solve::write_instance(plain, dir.file("plain"));
  CHECK(
      popalloc_solve::read_instance(dir.file("plain.jobs.csv"), dir.file("plain.resources.csv"), {})
          .problem.job_demand.size() == 0);

  // Any column order.
  write_text(dir.file("order.resources.csv"), "name,capacity\nr0,1\nr1,2\n");
  write_text(dir.file("order.jobs.csv"), "r1,demand,id,r0\n1,2.5,a,0\n3,1,b,4\n");
  const auto order = popalloc_solve::read_instance(dir.file("order.jobs.csv"),
                                                   dir.file("order.resources.csv"), {});
  CHECK(order.problem.job_demand == Eigen::Vector2d(2.5, 1.0));
  CHECK(order.problem.throughput(0, 1) == 1.0);

  const std::string bad = dir.file("bad.jobs.csv");
  for (const char* field : {"0", "-1", "nan", "inf", "abc", ""}) {
    CAPTURE(field);
    const std::string error =
        read_error(dir, std::string("id,demand,r0\na,1,1\nb,") + field + ",1\n");
    CHECK(error.find(bad + ":3:") == 0);
    CHECK(error.find("demand") != std::string::npos);
  }
  CHECK(read_error(dir, "id,demand,demand,r0\na,1,1,1\n").find("duplicate column") !=
        std::string::npos);
  write_text(dir.file("reserved.resources.csv"), "name,capacity\ndemand,1\n");
  write_text(dir.file("reserved.jobs.csv"), "id,demand\na,1\n");
  try {
    popalloc_solve::read_instance(dir.file("reserved.jobs.csv"), dir.file("reserved.resources.csv"),
                                  {});
    FAIL("a resource named 'demand' was accepted");
  } catch (const popalloc_solve::input_error& e) {
    CHECK(std::string(e.what()).find("reserved") != std::string::npos);
  }
}

#if POPALLOC_TEST_HAVE_CLP

namespace {

popalloc_test::lp_solution exact_optimum(const popalloc::dense_problem<double>& p,
                                         popalloc_test::lp_utility kind) {
  const Eigen::MatrixXd throughput = p.throughput;
  const Eigen::VectorXd weight = p.weight, target = p.target;
  Eigen::MatrixXd demand;
  if (p.job_demand.size() != 0) demand = p.job_demand.replicate(1, p.resources());
  const auto lp = popalloc_test::solve_lp(popalloc_test::make_dense_lp(
      throughput, p.capacity, weight, &target, kind, demand.size() != 0 ? &demand : nullptr));
  REQUIRE(lp.optimal);
  return lp;
}

/// popalloc at relative gap 1e-7 against CLP: the objective to 1e-6 of max(1, |OPT|), the dual
/// bound above OPT, the allocation feasible. Returns the result.
template <class Utility>
popalloc::solve_result check_against_clp(const popalloc::dense_problem<double>& p,
                                         const Utility& utility, popalloc_test::lp_utility kind,
                                         double optimum) {
  popalloc::solver_options options;
  options.relative_gap = 1e-7;
  const auto r = popalloc::solve<popalloc_test::test_backend>(p, utility, options);
  CAPTURE(r.iterations);
  CAPTURE(r.primal_objective);
  CAPTURE(r.dual_bound);
  CAPTURE(optimum);
  // The objective is the test; the status is reported (POPALLOC_TEST_VERBOSE=1): a few families
  // end stalled at the optimum or at the iteration limit within the tolerance.
  CHECK(r.status != popalloc::solve_status::numerical_error);
  CHECK(r.status != popalloc::solve_status::not_solved);
  const double tolerance = 1e-6 * std::max(1.0, std::abs(optimum));
  CHECK(std::abs(r.primal_objective - optimum) <= tolerance);
  CHECK(r.dual_bound >= optimum - tolerance);
  CHECK(r.primal_objective <= optimum + tolerance);
  const double scale = std::max(1.0, p.capacity.maxCoeff());
  CHECK(popalloc_test::allocation_violation(p, r) <= 1e-9 * scale);
  CHECK(popalloc_test::recomputed_objective(p, utility, r) ==
        doctest::Approx(r.primal_objective).epsilon(1e-9));
  (void)kind;
  return r;
}

/// Target priority to a 1e-3 gap with the sample start and without it.
struct sampled_and_cold {
  popalloc::solve_result sampled, cold;
};

sampled_and_cold solve_target_priority_both_ways(const popalloc::dense_problem<double>& p) {
  popalloc::solver_options o;
  o.relative_gap = 1e-3;
  const popalloc::utility::target_priority u;
  sampled_and_cold out;
  out.sampled = popalloc::solve<popalloc_test::test_backend>(p, u, o);
  o.sample_start = false;
  out.cold = popalloc::solve<popalloc_test::test_backend>(p, u, o);
  return out;
}

/// A converged solve of a problem whose targets are all reachable: bound exactly g(0) = 0, every
/// target met to the tolerance, the allocation feasible.
void check_targets_met(const popalloc::dense_problem<double>& p, const popalloc::solve_result& r) {
  CHECK(r.status == popalloc::solve_status::converged);
  CHECK(r.dual_bound == 0.0);
  CHECK(r.primal_objective <= 0.0);
  CHECK(-r.primal_objective <= 1e-3 * 1e-6 * weighted_target_sum(p));
  CHECK(popalloc_test::allocation_violation(p, r) <= 1e-9);
}

}  // namespace

TEST_CASE("[families] the solver matches the exact LP on every family") {
  // Iteration counts are printed with POPALLOC_TEST_VERBOSE=1 (docs/instance-families.md).
  const bool verbose = std::getenv("POPALLOC_TEST_VERBOSE") != nullptr;
  std::vector<std::string> specs;
  for (const sized_family& f : kFamilies) {
    specs.emplace_back(f.name);
    specs.push_back(std::string(f.name) + ":reachable");
  }
  for (const char* extra : {"classes:tight", "paper:loose", "sparse:tight", "gavel:loose",
                            "generations:far", "classes:far", "uniform:tight"})
    specs.emplace_back(extra);
  for (const std::string& text : specs) {
    CAPTURE(text);
    const auto spec = spec_of(text);
    const std::int64_t m = spec.family == "gavel" ? 3 : 4;
    for (const std::uint64_t seed : {1u, 2u}) {
      CAPTURE(seed);
      const auto p = generate_family(spec, 200, m, seed);
      const auto linear = exact_optimum(p, popalloc_test::lp_utility::linear);
      const auto linear_result = check_against_clp(
          p, popalloc::utility::linear{}, popalloc_test::lp_utility::linear, linear.objective);
      const auto target = exact_optimum(p, popalloc_test::lp_utility::target_priority);
      const auto target_result =
          check_against_clp(p, popalloc::utility::target_priority{},
                            popalloc_test::lp_utility::target_priority, target.objective);
      if (verbose)
        std::printf(
            "families: %-22s seed %d  linear %3d iterations (%s)  target-priority %3d "
            "iterations (%s, optimum %.6g, sum w T %.6g)\n",
            text.c_str(), static_cast<int>(seed), linear_result.iterations,
            popalloc::to_string(linear_result.status), target_result.iterations,
            popalloc::to_string(target_result.status), target.objective, weighted_target_sum(p));
    }
  }
}

TEST_CASE("[families] optimal prices 0: the full solve continues at the sample's last prices") {
  // Every target reachable: the bound is g(0) = 0 from the start and only the allocation is left
  // to find, at the smoothed minimiser's prices (proportional to the smoothing level). The
  // sample's last prices are that minimiser for the sample, so the full solve continues there.
  const auto p = generate_family(spec_of("classes:reachable"), 20000, 8, 3);
  const sampled_and_cold runs = solve_target_priority_both_ways(p);
  const popalloc::solve_result &sampled = runs.sampled, &cold = runs.cold;
  for (const auto* r : {&sampled, &cold}) {
    check_targets_met(p, *r);
    // The last prices are positive and price only filled resources: the smoothed minimiser.
    CHECK(r->final_prices.maxCoeff() > 0.0);
    CHECK(popalloc::detail::prices_complementary(*r, p.capacity));
  }
  CHECK(sampled.sample_iterations > 0);
  INFO("full evaluations: " << sampled.iterations << " after the sample, " << cold.iterations
                            << " cold");
  CHECK(sampled.iterations < cold.iterations);
  CHECK(sampled.smoothing == cold.smoothing);  // the same level: the sample's
}

TEST_CASE(
    "[families] a start expected to end at its first evaluation that does not still converges") {
  // A g(0) sample start (sample_start_level::likely_final) evaluates its start without the
  // Newton model; where that evaluation does not close the gap (here: half the minimiser's prices),
  // the model comes from the same evaluation repeated, and the solve goes on as it would have.
  const auto p = generate_family(spec_of("classes:reachable"), 20000, 8, 3);
  const popalloc::utility::target_priority u;
  popalloc::solver_options o;
  o.relative_gap = 1e-3;
  o.sample_start = false;
  const popalloc::solve_result reference = popalloc::solve<popalloc_test::test_backend>(p, u, o);
  REQUIRE(reference.status == popalloc::solve_status::converged);
  o.warm_start_prices = 0.5 * reference.final_prices;
  auto solve_from = [&](bool likely_final) {
    popalloc::detail::sample_start_level start =
        popalloc::detail::sample_start_level::at(reference.smoothing, true);
    start.likely_final = likely_final;
    return popalloc::detail::solve_as<popalloc_test::test_backend>(
        popalloc::detail::solve_role::full, p, u, o, {}, start);
  };
  const popalloc::solve_result with_model = solve_from(false);
  const popalloc::solve_result without = solve_from(true);
  check_targets_met(p, with_model);
  check_targets_met(p, without);
  INFO("evaluations: " << with_model.iterations << " with the first model, " << without.iterations
                       << " without");
  CHECK(with_model.iterations > 1);
  CHECK(without.iterations == with_model.iterations + 1);  // the repeated first evaluation
}

TEST_CASE(
    "[families] optimal prices 0, targets met early: the full solve tries the sample's prices") {
  // generations' standard targets are all reachable, and its sample's allocation meets them
  // before the Newton iteration reaches the smoothed minimiser: those prices say nothing about
  // the minimiser, but the full problem's responses there meet the targets too (or come within
  // top-ups of them), so the full solve evaluates there first and stops.
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    CAPTURE(seed);
    const auto p = generate_family(spec_of("generations"), 20000, 8, seed);
    const sampled_and_cold runs = solve_target_priority_both_ways(p);
    const popalloc::solve_result &sampled = runs.sampled, &cold = runs.cold;
    for (const auto* r : {&sampled, &cold}) check_targets_met(p, *r);
    CHECK(sampled.sample_iterations > 0);
    INFO("full evaluations: " << sampled.iterations << " after the sample, " << cold.iterations
                              << " cold");
    CHECK(sampled.iterations == 1);
    CHECK(sampled.iterations < cold.iterations);
  }
}

TEST_CASE("[families] a probe that falls short: the sample goes on to its minimiser") {
  // The sample meets its targets early, the full problem at those prices does not
  // (popalloc_test::probe_falls_short). The sample then goes on from there to its minimiser,
  // and the full solve starts at that instead of cold.
  for (const std::uint64_t seed : {1u, 2u}) {
    CAPTURE(seed);
    const auto p = popalloc_test::probe_falls_short(20000, seed);
    const popalloc::utility::target_priority u;
    popalloc::solver_options o;
    o.relative_gap = 1e-3;
    const popalloc::solve_result continued = popalloc::solve<popalloc_test::test_backend>(p, u, o);
    // The same probe, then a cold start: what the full solve did before the continuation.
    namespace d = popalloc::detail;
    const std::int64_t stride = d::sample_stride(p, true);
    const auto sample = d::sample_jobs(p, stride);
    const popalloc::solve_result s = d::solve_as<popalloc_test::test_backend>(
        d::solve_role::sample, sample, u, d::sample_options(o, stride), {});
    popalloc::solver_options run = o;
    run.sample_start = false;
    const d::sample_start_level probe = d::start_from_sample<decltype(u)>(s, sample.capacity, run);
    REQUIRE(probe.probe_prices.size() == 8);
    const popalloc::solve_result cold =
        d::solve_as<popalloc_test::test_backend>(d::solve_role::full, p, u, run, {}, probe);
    for (const auto* r : {&continued, &cold}) {
      CHECK(r->status == popalloc::solve_status::converged);
      CHECK(popalloc_test::allocation_violation(p, *r) <= 1e-9);
    }
    // Both certified: each objective lies below the other's bound.
    const double rounding = 1e-9 * weighted_target_sum(p);
    CHECK(continued.primal_objective <= cold.dual_bound + rounding);
    CHECK(cold.primal_objective <= continued.dual_bound + rounding);
    CHECK(continued.sample_iterations > s.iterations);  // the continuation ran
    INFO("full evaluations: " << continued.iterations << " after the continuation, "
                              << cold.iterations << " cold after the probe");
    CHECK(continued.iterations < cold.iterations);
  }
}

TEST_CASE("[families] reachable targets are met at the optimum, far ones are not") {
  for (const sized_family& f : kFamilies) {
    for (const char* capacity : {"", ":tight", ":loose"}) {
      for (const std::uint64_t seed : {1u, 5u}) {
        const std::string name = std::string(f.name) + capacity;
        CAPTURE(name);
        CAPTURE(seed);
        const auto reachable =
            generate_family(spec_of(name + ":reachable"), 200, f.resources, seed);
        const double reachable_sum = weighted_target_sum(reachable);
        const auto met = exact_optimum(reachable, popalloc_test::lp_utility::target_priority);
        CHECK(met.objective >= -1e-6 * reachable_sum);
        const auto far = generate_family(spec_of(name + ":far"), 200, f.resources, seed);
        const double far_sum = weighted_target_sum(far);
        const auto missed = exact_optimum(far, popalloc_test::lp_utility::target_priority);
        CHECK(missed.objective < -0.1 * far_sum);
        if (std::string(capacity).empty()) {  // the standard targets lie in between
          const auto standard = generate_family(spec_of(f.name), 200, f.resources, seed);
          const auto optimum = exact_optimum(standard, popalloc_test::lp_utility::target_priority);
          CHECK(optimum.objective <= 0.0);
          CHECK(optimum.objective > -0.9 * weighted_target_sum(standard));
        }
      }
    }
  }
}

TEST_CASE("[families] a last smoothing stage near the tolerance is sized from the gap") {
  // sparse 500 x 8 to 1e-4: the stage after 0.01 begins with a gap a few times the tolerance,
  // so its level is the one predicted to halve the allowed gap, between 1e-3 and 5e-3 (a
  // tenfold step would give 1e-3), and the solve converges there with the LP's objective.
  const auto p = generate_family(spec_of("sparse"), 500, 8, 1);
  const auto lp = exact_optimum(p, popalloc_test::lp_utility::target_priority);
  popalloc::solver_options options;
  options.relative_gap = 1e-4;
  const auto r = popalloc::solve<popalloc_test::test_backend>(
      p, popalloc::utility::target_priority{}, options);
  CAPTURE(r.iterations);
  CAPTURE(r.smoothing);
  CHECK(r.status == popalloc::solve_status::converged);
  CHECK(r.smoothing_stages == 2);
  CHECK(r.smoothing > 1.01e-3);
  CHECK(r.smoothing <= 5e-3 * (1.0 + 1e-12));
  CHECK(r.relative_gap <= 1e-4);
  const double tolerance = 1e-4 * std::max(std::abs(lp.objective), std::abs(r.dual_bound));
  CHECK(r.primal_objective >= lp.objective - tolerance);
  CHECK(r.primal_objective <= lp.objective + 1e-9 * std::max(1.0, std::abs(lp.objective)));
  CHECK(r.dual_bound >= lp.objective - 1e-9 * std::max(1.0, std::abs(lp.objective)));
  CHECK(popalloc_test::allocation_violation(p, r) <= 1e-9);
}

#endif  // POPALLOC_TEST_HAVE_CLP

#endif  // POPALLOC_TEST_HAVE_FAMILIES
