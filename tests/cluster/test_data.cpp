// SPDX-License-Identifier: Apache-2.0
// Cluster data layer: cluster specs, Gavel's throughput JSON, traces and the job generator,
// including the errors for bad input (file:line and what).
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/cluster/cluster_spec.hpp>
#include <popalloc/cluster/job.hpp>
#include <popalloc/cluster/job_generator.hpp>
#include <popalloc/cluster/policies.hpp>
#include <popalloc/cluster/throughputs.hpp>
#include <popalloc/cluster/trace.hpp>
#include <popalloc/io/input_error.hpp>

namespace pc = popalloc::cluster;

namespace {

const std::string kDataDir = POPALLOC_CLUSTER_DATA_DIR;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const popalloc::error& e) {
    return e.what();
  }
  return "(no error)";
}

const pc::throughput_table& gavel_table() {
  static const pc::throughput_table table =
      pc::load_throughputs(kDataDir + "/simulation_throughputs.json");
  return table;
}

}  // namespace

TEST_CASE("cluster spec: order kept, Gavel shorthand, totals") {
  const auto c = pc::parse_cluster("v100:36, p100:36,k80:36");
  CHECK(c.types == std::vector<std::string>{"v100", "p100", "k80"});
  CHECK(c.total() == 108);
  CHECK(c.to_string() == "v100:36,p100:36,k80:36");
  const auto g = pc::parse_cluster("32:16:8");
  CHECK(g.types == std::vector<std::string>{"v100", "p100", "k80"});
  CHECK(g.counts == std::vector<std::int64_t>{32, 16, 8});
  CHECK(g.index_of("k80") == 2);
  CHECK(g.index_of("a100") == -1);
}

TEST_CASE("cluster spec: errors name the problem") {
  CHECK(error_of([] { pc::parse_cluster(""); }).find("empty cluster spec") != std::string::npos);
  CHECK(error_of([] { pc::parse_cluster("v100:4,v100:2"); }).find("twice") != std::string::npos);
  CHECK(error_of([] { pc::parse_cluster("v100:0"); }).find("must be positive") !=
        std::string::npos);
  CHECK(error_of([] { pc::parse_cluster("v100:-3"); }).find("positive") != std::string::npos);
  CHECK(error_of([] { pc::parse_cluster("v100:2.5"); }).find("not a whole number") !=
        std::string::npos);
  CHECK(error_of([] { pc::parse_cluster("v100"); }).find("not TYPE:COUNT") != std::string::npos);
  CHECK(error_of([] { pc::parse_cluster(":4,v100:2"); }).find("no type name") != std::string::npos);
  CHECK(error_of([] { pc::parse_cluster("1:2"); }).find("exactly three") != std::string::npos);
  CHECK(error_of([] {
          pc::parse_cluster("a100:4", {"k80", "p100", "v100"});
        }).find("unknown GPU type 'a100' (known: k80, p100, v100)") != std::string::npos);
}

TEST_CASE("throughputs: Gavel's file (83 keys, skipped zeros, spot values)") {
  const auto& t = gavel_table();
  CHECK(t.gpu_types().size() == 6);
  CHECK(t.gpu_types()[0] == "k80");
  // 26 types at s = 1 and 19 distributed types at 2, 4, 8 (k80_unconsolidated lacks some keys,
  // but the union over GPU types is 83).
  CHECK(t.size() == 83);
  CHECK(t.job_types().size() == 26);
  CHECK(t.get({"A3C", 1}, "v100") == doctest::Approx(7.175767179667988).epsilon(1e-15));
  CHECK(t.get({"ResNet-18 (batch size 16)", 1}, "k80") ==
        doctest::Approx(4.795294551566172).epsilon(1e-15));
  // The only zeros: ResNet-50 (batch size 128) at s = 2, 4, 8 on k80 -> read back as 0.
  CHECK(t.contains({"ResNet-50 (batch size 128)", 2}));
  CHECK(t.get({"ResNet-50 (batch size 128)", 2}, "k80") == 0.0);
  CHECK(t.get({"ResNet-50 (batch size 128)", 2}, "v100") > 0.0);
  CHECK_FALSE(t.contains({"A3C", 2}));
  const auto c = pc::parse_cluster("v100:4,k80:4");
  const auto row = t.for_cluster({"ResNet-50 (batch size 128)", 2}, c);
  CHECK(row.size() == 2);
  CHECK(row[0] > 0.0);
  CHECK(row[1] == 0.0);
}

TEST_CASE("throughputs: malformed files give PATH:LINE: what") {
  auto err = [](const std::string& text) {
    return error_of([&] { pc::parse_throughputs(text, "t.json"); });
  };
  CHECK(err("[1]").find("t.json:1: expected an object") != std::string::npos);
  CHECK(err("{\n\"k80\": {\n\"(A3C, 1)\": {\"null\": 1}}}").find("t.json:3: malformed job key") !=
        std::string::npos);
  CHECK(err("{\"k80\": {\n\"('A3C', 1)\": {\n\"null\": -2}}}")
            .find("t.json:3: isolated throughput of ('A3C', 1) on 'k80' must be finite and >= 0") !=
        std::string::npos);
  CHECK(err("{\"k80\": {\n\"('A3C', 1)\": {\"x\": [1, 2]}}}").find("t.json:2: entry") !=
        std::string::npos);
  CHECK(err("{\"k80\": {\"('A3C', 1)\": {\"null\": \"fast\"}}}").find("must be a number") !=
        std::string::npos);
  CHECK(err("{\"k80\": {\"('A3C', 1)\": {\"null\": 1, \"('B', 1)\": 3}}}")
            .find("array of two numbers") != std::string::npos);
  CHECK(err("{\"k80\": {\"('A3C', 1)\": {\"null\": 1}, \"('A3C', 1)\": {\"null\": 2}}}")
            .find("appears twice") != std::string::npos);
  CHECK(err("{\"k80\": {}, \"k80\": {}}").find("appears twice") != std::string::npos);
  CHECK(err("{\"k80\": {\"('A3C', 1)\": {\"null\": 1}").find("t.json:1:") != std::string::npos);
  CHECK(error_of([] { pc::load_throughputs("/nonexistent/x.json"); }).find("cannot open") !=
        std::string::npos);
}

TEST_CASE("trace: Gavel's files read with every column") {
  const auto trace = pc::load_trace(kDataDir + "/traces/max_min_fairness.trace");
  REQUIRE(trace.size() == 96);
  CHECK(trace[0].job_type == "ResNet-18 (batch size 128)");
  CHECK(trace[0].total_steps == 925982);
  CHECK(trace[0].scale_factor == 4);
  CHECK(trace[0].priority_weight == 1.0);
  CHECK(trace[0].slo == -1.0);
  CHECK(trace[0].line == 1);
  std::map<int, int> scale;
  for (const auto& j : trace) ++scale[j.scale_factor];
  CHECK(scale[1] == 59);
  CHECK(scale[2] == 19);
  CHECK(scale[4] == 18);
  const auto c = pc::parse_cluster("v100:4,p100:4,k80:4");
  const auto jobs = pc::jobs_from_trace(trace, gavel_table(), c, "max_min_fairness.trace");
  CHECK(jobs[5].id == 5);
  // The ResNet-50 (batch size 128) job at s = 2 cannot run on K80s.
  bool found = false;
  for (const auto& j : jobs)
    if (j.job_type == "ResNet-50 (batch size 128)" && j.scale_factor == 2) {
      found = true;
      CHECK(j.throughput[2] == 0.0);
    }
  CHECK(found);
  const auto small = pc::load_trace(kDataDir + "/traces/small_test.trace");
  CHECK(small.size() == 20);
}

TEST_CASE("trace: errors give PATH:LINE: what") {
  auto err = [](const std::string& text) {
    return error_of([&] { pc::parse_trace(text, "x.trace"); });
  };
  const std::string ok = "A3C\tcmd\tdir\t--n\t0\t100\t1\t1\t-1\t0\n";
  CHECK(pc::parse_trace(ok, "x.trace").size() == 1);
  CHECK(err("").find("no jobs") != std::string::npos);
  CHECK(err(ok + "A3C\tcmd\t100\t1\n").find("x.trace:2: expected 10 tab-separated columns") !=
        std::string::npos);
  CHECK(err("A3C\tc\td\t--n\t0\tmany\t1\t1\t-1\t0\n").find("x.trace:1: total_steps") !=
        std::string::npos);
  CHECK(err("A3C\tc\td\t--n\t0\t100\t1.5\t1\t-1\t0\n").find("scale_factor (column 7)") !=
        std::string::npos);
  CHECK(err("A3C\tc\td\t--n\t0\t100\t0\t1\t-1\t0\n").find("scale_factor") != std::string::npos);
  CHECK(err("A3C\tc\td\t--n\t0\t100\t1\t0\t-1\t0\n").find("priority_weight") != std::string::npos);
  CHECK(err("A3C\tc\td\t--n\t0\t100\t1\t1\t-1\t-5\n").find("arrival_time") != std::string::npos);
  CHECK(err("A3C\tc\td\t--n\t0\tnan\t1\t1\t-1\t0\n").find("total_steps") != std::string::npos);
  CHECK(err("A3C\tc\td\t--n\t2\t100\t1\t1\t-1\t0\n").find("needs_data_dir") != std::string::npos);
  const auto unknown = pc::parse_trace("Foo\tc\td\t--n\t0\t100\t1\t1\t-1\t0\n", "y.trace");
  const auto c = pc::parse_cluster("v100:1");
  CHECK(error_of([&] {
          pc::jobs_from_trace(unknown, gavel_table(), c, "y.trace");
        }).find("y.trace:1: job ('Foo', 1) is not in the throughput table (unknown job type)") !=
        std::string::npos);
  const auto wrong_scale = pc::parse_trace("A3C\tc\td\t--n\t0\t100\t2\t1\t-1\t0\n", "z.trace");
  CHECK(error_of([&] {
          pc::jobs_from_trace(wrong_scale, gavel_table(), c, "z.trace");
        }).find("no entry at this scale factor") != std::string::npos);
}

TEST_CASE("generator: Gavel's distributions, reproducible, Poisson arrivals") {
  pc::generator_options g;
  g.seed = 7;
  g.jobs_per_hour = 6.4;
  const auto a = pc::generate_jobs(4000, gavel_table(), g);
  const auto b = pc::generate_jobs(4000, gavel_table(), g);
  REQUIRE(a.size() == 4000);
  std::map<int, int> scale;
  double long_jobs = 0.0, gap_sum = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].job_type == b[i].job_type);
    CHECK(a[i].arrival_time == b[i].arrival_time);
    ++scale[a[i].scale_factor];
    CHECK(gavel_table().contains({a[i].job_type, a[i].scale_factor}));
    CHECK(a[i].duration >= 60.0 * std::pow(10.0, 1.5) * (1 - 1e-12));
    CHECK(a[i].duration <= 60.0 * 1e4 * (1 + 1e-12));
    if (a[i].duration > 60.0 * 1e3) long_jobs += 1.0;
    CHECK(
        a[i].total_steps ==
        std::round(a[i].duration * gavel_table().get({a[i].job_type, a[i].scale_factor}, "v100")));
    if (i > 0) {
      CHECK(a[i].arrival_time >= a[i - 1].arrival_time);
      gap_sum += a[i].arrival_time - a[i - 1].arrival_time;
    }
  }
  // 70 / 10 / 15 / 5 % and 20 % long jobs, within ~4 standard deviations.
  CHECK(std::abs(scale[1] / 4000.0 - 0.70) < 0.03);
  CHECK(std::abs(scale[2] / 4000.0 - 0.10) < 0.02);
  CHECK(std::abs(scale[4] / 4000.0 - 0.15) < 0.025);
  CHECK(std::abs(scale[8] / 4000.0 - 0.05) < 0.015);
  CHECK(std::abs(long_jobs / 4000.0 - 0.2) < 0.03);
  CHECK(std::abs(gap_sum / 3999.0 - 562.5) < 0.07 * 562.5);  // mean gap 3600 / 6.4 s
  g.seed = 8;
  CHECK(pc::generate_jobs(50, gavel_table(), g)[3].duration != a[3].duration);
  g.multi_gpu = false;
  for (const auto& j : pc::generate_jobs(200, gavel_table(), g)) CHECK(j.scale_factor == 1);
  CHECK_THROWS_AS(pc::generate_jobs(-1, gavel_table(), g), popalloc::invalid_problem);
}

TEST_CASE("generator: SLOs in {1.2, 2, 10} from their own stream, other draws unchanged") {
  pc::generator_options g;
  g.seed = 3;
  const auto plain = pc::generate_jobs(3000, gavel_table(), g);
  g.slos = true;
  const auto with = pc::generate_jobs(3000, gavel_table(), g);
  std::map<double, int> count;
  for (std::size_t i = 0; i < with.size(); ++i) {
    CHECK(plain[i].slo < 0.0);
    CHECK(with[i].job_type == plain[i].job_type);
    CHECK(with[i].duration == plain[i].duration);
    CHECK(with[i].scale_factor == plain[i].scale_factor);
    ++count[with[i].slo];
  }
  REQUIRE(count.size() == 3);
  for (const double slo : {1.2, 2.0, 10.0})
    CHECK(std::abs(count[slo] / 3000.0 - 1.0 / 3.0) < 0.035);  // ~4 standard deviations
  const auto jobs = pc::jobs_from_generated(with, gavel_table(), pc::parse_cluster("v100:1"));
  CHECK(jobs[5].slo == with[5].slo);
}

TEST_CASE("jobs: validation names the job") {
  const auto c = pc::parse_cluster("v100:2,k80:2");
  std::vector<pc::job> jobs(1);
  jobs[0].throughput = {1.0};
  CHECK(error_of([&] { pc::validate_jobs(jobs, c); }).find("job 0 (id 0) has 1 throughputs") !=
        std::string::npos);
  jobs[0].throughput = {1.0, std::nan("")};
  CHECK(error_of([&] { pc::validate_jobs(jobs, c); }).find("throughput on k80") !=
        std::string::npos);
  jobs[0].throughput = {1.0, 2.0};
  jobs[0].priority_weight = 0.0;
  CHECK(error_of([&] { pc::validate_jobs(jobs, c); }).find("priority weight") != std::string::npos);
  jobs[0].priority_weight = 1.0;
  jobs[0].scale_factor = 0;
  CHECK(error_of([&] { pc::validate_jobs(jobs, c); }).find("scale factor") != std::string::npos);
  jobs[0].scale_factor = 1;
  jobs[0].total_steps = -1;
  CHECK(error_of([&] { pc::validate_jobs(jobs, c); }).find("total_steps") != std::string::npos);
  jobs[0].total_steps = 1;
  CHECK_NOTHROW(pc::validate_jobs(jobs, c));
  CHECK_THROWS_AS(pc::allocate({}, c), popalloc::invalid_problem);
  pc::policy_options o;
  o.tolerance = 0.0;
  CHECK_THROWS_AS(pc::allocate(jobs, c, o), popalloc::invalid_options);
  o.tolerance = 1e-6;
  o.gpu_cost = {1.0};
  CHECK_THROWS_AS(pc::allocate(jobs, c, o), popalloc::invalid_options);
  o.gpu_cost.clear();
  o.pop_parts = 0;
  CHECK_THROWS_AS(pc::allocate(jobs, c, o), popalloc::invalid_options);
  o.pop_parts = static_cast<int>(c.total()) + 1;  // a part without any GPU
  CHECK(error_of([&] { pc::allocate(jobs, c, o); }).find("at least one GPU per part") !=
        std::string::npos);
  o.pop_parts = static_cast<int>(c.total());
  CHECK_NOTHROW(pc::allocate(jobs, c, o));
  CHECK(pc::parse_policy("min_makespan") == pc::policy_kind::min_makespan);
  CHECK_THROWS_AS(pc::parse_policy("las"), popalloc::invalid_options);
}
