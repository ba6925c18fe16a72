// SPDX-License-Identifier: Apache-2.0
// Space sharing (Gavel's packed max-min fairness) at POP's figure-2 size and in Gavel's
// continuous-trace simulation; see docs/cluster-scheduling.md and docs/simulator.md.
//
//   bench_space_sharing [--jobs 2048] [--gpus 512] [--seed 1] [--pop 2,4,8] [--pop-seed 1]
//                       [--clp-jobs 256] [--sim-jobs 2000] [--window 500:1500] [--rate 5.6]
//                       [--sim-gpus 36] [--sim-seed 0] [--no-figure2] [--no-sim]
//                       [--per-job PREFIX]   (PREFIX_alone.csv, PREFIX_packed.csv: id, status,
//                                             jct_hours, for scripts/plot_jct_cdf.py)
//
// Prints markdown tables. Exit status 1 if a certificate or a simulation check fails.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <popalloc/cluster/job_generator.hpp>
#include <popalloc/cluster/packed_policies.hpp>
#include <popalloc/cluster/policies.hpp>
#include <popalloc/cluster/sim_policy.hpp>
#include <popalloc/cluster/simulator.hpp>

#ifdef POPALLOC_BENCH_HAVE_CLP
#include <ClpSimplex.hpp>
#include <CoinPackedMatrix.hpp>
#endif

namespace pc = popalloc::cluster;

namespace {

struct settings {
  int jobs = 2048, gpus = 512, clp_jobs = 256, sim_jobs = 2000, sim_gpus = 36;
  std::uint64_t seed = 1, pop_seed = 1, sim_seed = 0;
  std::vector<int> pop = {2, 4, 8};
  std::int64_t window_first = 500, window_last = 1500;
  double rate = 5.6;
  bool figure2 = true, sim = true;
  std::string per_job;
};

bool failed = false;

void check(bool ok, const std::string& what) {
  if (ok) return;
  std::printf("CHECK FAILED: %s\n", what.c_str());
  failed = true;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

settings parse(int argc, char** argv) {
  settings s;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--jobs")
      s.jobs = std::stoi(next());
    else if (a == "--gpus")
      s.gpus = std::stoi(next());
    else if (a == "--seed")
      s.seed = std::stoull(next());
    else if (a == "--pop-seed")
      s.pop_seed = std::stoull(next());
    else if (a == "--clp-jobs")
      s.clp_jobs = std::stoi(next());
    else if (a == "--sim-jobs")
      s.sim_jobs = std::stoi(next());
    else if (a == "--sim-gpus")
      s.sim_gpus = std::stoi(next());
    else if (a == "--sim-seed")
      s.sim_seed = std::stoull(next());
    else if (a == "--rate")
      s.rate = std::stod(next());
    else if (a == "--no-figure2")
      s.figure2 = false;
    else if (a == "--no-sim")
      s.sim = false;
    else if (a == "--per-job")
      s.per_job = next();
    else if (a == "--pop") {
      s.pop.clear();
      std::stringstream in(next());
      for (std::string k; std::getline(in, k, ',');) s.pop.push_back(std::stoi(k));
    } else if (a == "--window") {
      const std::string w = next();
      const auto colon = w.find(':');
      s.window_first = std::stoll(w.substr(0, colon));
      s.window_last = std::stoll(w.substr(colon + 1));
    } else {
      std::fprintf(stderr, "unknown option %s (see the comment at the top of the source)\n",
                   a.c_str());
      std::exit(2);
    }
  }
  return s;
}

const pc::throughput_table& table() {
  static const pc::throughput_table t =
      pc::load_throughputs(std::string(POPALLOC_BENCH_DATA_DIR) + "/simulation_throughputs.json");
  return t;
}

pc::gpu_cluster cluster_of(int each) {
  return pc::parse_cluster("v100:" + std::to_string(each) + ",p100:" + std::to_string(each) +
                           ",k80:" + std::to_string(each));
}

std::vector<pc::job> single_gpu_jobs(int n, const pc::gpu_cluster& c, std::uint64_t seed,
                                     double rate = 0.0) {
  pc::generator_options g;
  g.seed = seed;
  g.multi_gpu = false;
  g.jobs_per_hour = rate;
  return pc::jobs_from_generated(pc::generate_jobs(n, table(), g), table(), c);
}

pc::policy_options plain_max_min() {
  pc::policy_options o;
  o.water_filling = false;
  o.tolerance = 1e-4;
  return o;
}

struct ratios {
  double mean = 0.0, stddev = 0.0, min = std::numeric_limits<double>::infinity();
};

ratios et_ratios(const Eigen::VectorXd& et, const Eigen::VectorXd& exact) {
  ratios r;
  std::vector<double> v;
  for (Eigen::Index i = 0; i < et.size(); ++i)
    if (exact[i] > 0.0) v.push_back(et[i] / exact[i]);
  for (const double x : v) r.mean += x / static_cast<double>(v.size());
  for (const double x : v) {
    r.stddev += (x - r.mean) * (x - r.mean) / static_cast<double>(v.size());
    r.min = std::min(r.min, x);
  }
  r.stddev = std::sqrt(r.stddev);
  return r;
}

#ifdef POPALLOC_BENCH_HAVE_CLP
/// CLP's dual simplex on Gavel's per-job packed max-min LP (a column per job and per job pair
/// on every type both can use): its optimum, its time and its column count.
double clp_per_job_lp(const std::vector<pc::job>& jobs, const pc::gpu_cluster& c, double& secs,
                      long& columns) {
  const pc::instance in = pc::prepare_instance(jobs, c, pc::policy_options{});
  const auto n = static_cast<int>(jobs.size()), m = static_cast<int>(c.size());
  std::vector<int> rows, cols;
  std::vector<double> values, col_up, obj;
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> row_lo, row_up;
  for (int i = 0; i < n; ++i) row_lo.push_back(-inf), row_up.push_back(1.0);
  for (int w = 0; w < m; ++w) row_lo.push_back(-inf), row_up.push_back(in.capacity[w]);
  for (int i = 0; i < n; ++i) row_lo.push_back(0.0), row_up.push_back(inf);
  auto column = [&](double c0, std::initializer_list<std::pair<int, double>> entries) {
    const int k = static_cast<int>(obj.size());
    obj.push_back(c0);
    col_up.push_back(inf);
    for (const auto& [r, v] : entries) rows.push_back(r), cols.push_back(k), values.push_back(v);
  };
  obj.push_back(1.0);
  col_up.push_back(inf);
  for (int i = 0; i < n; ++i)
    rows.push_back(n + m + i), cols.push_back(0),
        values.push_back(-in.weight[i] * in.proportional[i] / in.scale[i]);
  for (int i = 0; i < n; ++i)
    for (int w = 0; w < m; ++w)
      if (in.model_throughput(i, w) > 0.0)
        column(0.0, {{i, 1.0}, {n + w, in.scale[i]}, {n + m + i, in.model_throughput(i, w)}});
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j)
      for (int w = 0; w < m; ++w) {
        const auto& a = jobs[static_cast<std::size_t>(i)];
        const auto& b = jobs[static_cast<std::size_t>(j)];
        if (a.scale_factor != b.scale_factor || !(in.model_throughput(i, w) > 0.0) ||
            !(in.model_throughput(j, w) > 0.0))
          continue;
        const auto t = table().get_pair({a.job_type, a.scale_factor}, {b.job_type, b.scale_factor},
                                        c.types[static_cast<std::size_t>(w)]);
        if (t.first > 0.0 && t.second > 0.0)
          column(0.0, {{i, 1.0},
                       {j, 1.0},
                       {n + w, in.scale[i]},
                       {n + m + i, t.first},
                       {n + m + j, t.second}});
      }
  columns = static_cast<long>(obj.size());
  CoinPackedMatrix matrix(true, rows.data(), cols.data(), values.data(),
                          static_cast<CoinBigIndex>(values.size()));
  matrix.setDimensions(static_cast<int>(row_lo.size()), static_cast<int>(obj.size()));
  const std::vector<double> col_lo(obj.size(), 0.0);
  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(matrix, col_lo.data(), col_up.data(), obj.data(), row_lo.data(), row_up.data());
  model.setOptimizationDirection(-1.0);
  const auto start = std::chrono::steady_clock::now();
  model.dual();
  secs = seconds_since(start);
  return model.isProvenOptimal() ? model.objectiveValue() : std::nan("");
}
#endif

void report_clp(const settings& s) {
#ifdef POPALLOC_BENCH_HAVE_CLP
  if (s.clp_jobs <= 0) return;
  const int gpus = std::max(1, s.gpus * s.clp_jobs / s.jobs);
  const pc::gpu_cluster c = cluster_of(gpus);
  const auto jobs = single_gpu_jobs(s.clp_jobs, c, s.seed);
  double secs = 0.0;
  long columns = 0;
  const double lp = clp_per_job_lp(jobs, c, secs, columns);
  const auto ours = pc::allocate_packed(jobs, c, table(), plain_max_min());
  std::printf(
      "\nPer-job LP (Gavel's formulation) of %d jobs on %d:%d:%d, CLP dual simplex: %ld "
      "columns, optimum %.9g in %.3f s; class LP: objective %.9g, bound %.9g in %.4f s "
      "(relative difference %.2e)\n",
      s.clp_jobs, gpus, gpus, gpus, columns, lp, secs, ours.objective, ours.bound, ours.seconds,
      std::abs(ours.objective - lp) / lp);
  check(std::abs(ours.objective - lp) <= 1e-6 * lp, "class LP equals CLP's per-job LP");
#else
  (void)s;
#endif
}

void figure2(const settings& s) {
  const pc::gpu_cluster c = cluster_of(s.gpus);
  const auto jobs = single_gpu_jobs(s.jobs, c, s.seed);
  const pc::instance in = pc::prepare_instance(jobs, c, plain_max_min());
  const auto model = pc::make_combinations(in, jobs, c, table());
  const auto exact = pc::allocate_packed(jobs, c, table(), plain_max_min());
  const double gap = (exact.bound - exact.objective) / exact.bound;
  std::printf("## Max-min fairness with space sharing: %d single-GPU jobs, %d:%d:%d\n\n", s.jobs,
              s.gpus, s.gpus, s.gpus);
  std::printf(
      "classes %zu, class pairs x types offered %zu (pruned below 1: %lld), standing for "
      "%.0f job pairs x types; pairs allocated %zu\n",
      model.classes.size(), model.pairs.size(), static_cast<long long>(model.pruned),
      model.job_pair_options, exact.pairs.size());
  std::printf("exact: objective %.9g, bound %.9g, relative gap %.2e, %s, %.4f s\n\n",
              exact.objective, exact.bound, gap, popalloc::to_string(exact.status), exact.seconds);
  check(exact.status == popalloc::solve_status::converged && gap <= 1e-4 && gap >= -1e-12,
        "exact packed solve certified to 1e-4");
  pc::policy_options unpacked = plain_max_min();
  unpacked.threads = 2;
  const auto alone = pc::allocate(jobs, c, unpacked);
  check(exact.objective >= alone.objective, "packed >= unpacked");
  std::printf(
      "| method | allocate() s | POP parts max s | objective (min normalised) | mean ET "
      "ratio | std | min ratio |\n|---|---|---|---|---|---|---|\n");
  std::printf("| exact (class LP) | %.4f | - | %.6f | 1 | 0 | 1 |\n", exact.seconds,
              exact.objective);
  for (const int k : s.pop) {
    pc::policy_options o = plain_max_min();
    o.pop_parts = k;
    o.pop_seed = s.pop_seed;
    o.threads = 1;
    const auto r = pc::allocate_packed(jobs, c, table(), o);
    const ratios q = et_ratios(r.effective_throughput, exact.effective_throughput);
    std::printf("| POP-%d | %.4f | %.4f | %.6f | %.5f | %.4f | %.4f |\n", k, r.seconds,
                r.pop_parts_seconds_max, r.objective, q.mean, q.stddev, q.min);
  }
  const ratios q = et_ratios(alone.effective_throughput, exact.effective_throughput);
  std::printf(
      "| no space sharing (core, plain max-min, 2 threads) | %.4f | - | %.6f | %.5f | %.4f "
      "| %.4f |\n",
      alone.seconds, alone.objective, q.mean, q.stddev, q.min);
  std::printf(
      "\nPair selection (exact solves):\n\n| pairs offered | class pairs x types | "
      "objective | loss vs all pairs | s |\n|---|---|---|---|---|\n");
  double all = 0.0;
  for (const double threshold : {0.0, 1.0, 1.5, -1.0}) {
    pc::policy_options o = plain_max_min();
    o.pairing.min_combined_throughput = std::max(threshold, 0.0);
    o.pairing.enabled = threshold >= 0.0;
    const auto r = pc::allocate_packed(jobs, c, table(), o);
    const auto offered = pc::make_combinations(in, jobs, c, table(), o.pairing).pairs.size();
    if (threshold == 0.0) all = r.objective;
    const std::string name =
        threshold < 0.0 ? "none (singles only)" : "combined >= " + std::to_string(threshold);
    std::printf("| %s | %zu | %.6f | %.3e | %.4f |\n", name.c_str(), offered, r.objective,
                (all - r.objective) / all, r.seconds);
  }
  report_clp(s);
}

void print_sim(const char* name, const pc::sim_result& r, double wall) {
  const auto& m = r.summary;
  std::printf("| %s | %.2f | %.2f | %.1f | %lld / %lld | %lld | %.3f | %lld | %.2f | %.1f |\n",
              name, m.avg_jct_hours, m.p50_jct_hours, m.p99_jct_hours,
              static_cast<long long>(m.jobs_finished), static_cast<long long>(m.jobs_total),
              static_cast<long long>(m.jobs_measured), m.gpu_utilization,
              static_cast<long long>(m.policy_calls), 1e3 * m.avg_policy_seconds, wall);
}

void write_per_job(const std::string& path, const pc::sim_result& r) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) {
    check(false, "cannot write " + path);
    return;
  }
  std::fprintf(f, "id,status,jct_hours\n");
  for (std::size_t i = 0; i < r.jobs.size(); ++i)
    std::fprintf(f, "%zu,%s,%.9g\n", i, pc::to_string(r.jobs[i].status),
                 r.jobs[i].jct_seconds() / 3600.0);
  std::fclose(f);
}

void simulation(const settings& s) {
  const pc::gpu_cluster c = cluster_of(s.sim_gpus);
  const auto jobs = single_gpu_jobs(s.sim_jobs, c, s.sim_seed, s.rate);
  pc::simulator_options o;
  o.type_order = {0, 1, 2};  // v100, p100, k80: fastest first
  o.window_first = s.window_first;
  o.window_last = s.window_last;
  std::printf(
      "\n## Simulation: %d single-GPU jobs at %.1f jobs/h on %d:%d:%d, seed %llu, window "
      "%lld:%lld, plain max-min\n\n",
      s.sim_jobs, s.rate, s.sim_gpus, s.sim_gpus, s.sim_gpus,
      static_cast<unsigned long long>(s.sim_seed), static_cast<long long>(s.window_first),
      static_cast<long long>(s.window_last));
  std::printf(
      "| policy | avg JCT h | p50 h | p99 h | finished | measured | GPU util. | policy "
      "calls | policy ms/call | wall s |\n|---|---|---|---|---|---|---|---|---|---|\n");
  auto start = std::chrono::steady_clock::now();
  const pc::policy_adapter alone(jobs, c, plain_max_min());
  const auto u = pc::simulate(pc::to_sim_jobs(jobs), pc::sim_gpus(c), alone, o);
  print_sim("max-min, no space sharing", u, seconds_since(start));
  start = std::chrono::steady_clock::now();
  const pc::packed_policy_adapter packed(jobs, c, table(), plain_max_min());
  const auto p = pc::simulate_packed(pc::to_sim_jobs(jobs), pc::sim_gpus(c), packed, o);
  print_sim("max-min, space sharing", p, seconds_since(start));
  if (!s.per_job.empty()) {
    write_per_job(s.per_job + "_alone.csv", u);
    write_per_job(s.per_job + "_packed.csv", p);
  }
  std::printf("\nratio (no space sharing / space sharing): %.3f; pairs per call %.1f\n",
              u.summary.avg_jct_hours / p.summary.avg_jct_hours,
              static_cast<double>(packed.stats().pairs) /
                  static_cast<double>(std::max<std::int64_t>(1, packed.stats().calls)));
  const std::int64_t window = s.window_last - s.window_first;
  check(p.summary.jobs_measured == std::min<std::int64_t>(window, s.sim_jobs),
        "every window job finishes with space sharing");
}

}  // namespace

int main(int argc, char** argv) {
  const settings s = parse(argc, argv);
  try {
    if (s.figure2) figure2(s);
    if (s.sim) simulation(s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return failed ? 1 : 0;
}
