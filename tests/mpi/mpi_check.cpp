// SPDX-License-Identifier: Apache-2.0
// popalloc_mpi_check: run under mpirun by tests/mpi/CMakeLists.txt.
//
//   popalloc_mpi_check agree        every rank solves its shard of several instances (dense and
//                                   bundle, four utilities; block-aligned, ragged, empty and
//                                   sub-block shards); the answer must be bit for bit that of the
//                                   MPI backend on one rank (MPI_COMM_SELF, whole problem) and,
//                                   with mpi_sums::cpu_order, of the CPU backend; and a sharded
//                                   solve whose sample is continued past a failed probe, against
//                                   the CPU backend. Exit 0 when every check passed on every rank.
//   popalloc_mpi_check invalid      rank 1's shard holds a NaN: every rank must throw
//                                   invalid_problem naming rank 1.
//   popalloc_mpi_check mismatch     the last rank passes other capacities: invalid_problem on all.
//   popalloc_mpi_check gap_mismatch the last rank measures the gap otherwise: invalid_problem on
//                                   all.
//   popalloc_mpi_check throw        rank 1's callback throws at evaluation 3: every rank must
//                                   throw backend_error naming rank 1.
//   popalloc_mpi_check kill         rank 1 kills itself (SIGKILL) at evaluation 3: the launcher
//                                   must end the job (run_failure.sh checks the exit status).
//   popalloc_mpi_check stall        rank 1 sleeps in its callback at evaluation 3: the others must
//                                   throw backend_error from the 2 s watchdog, then abort the job.
//
// Failure modes print "rank R: EXPECTED: <message>" for the error each rank saw; run_failure.sh
// checks those lines and that the job ended in time.
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <popalloc/backend/mpi.hpp>
#include <popalloc/popalloc.hpp>

#include "support/instances.hpp"

#if defined(POPALLOC_TEST_HAVE_FAMILIES)
#include "support/probe_falls_short.hpp"
#endif

namespace {

int rank = 0, ranks = 1;
int failures = 0;

void fail(const std::string& what) {
  std::fprintf(stderr, "rank %d: FAIL: %s\n", rank, what.c_str());
  ++failures;
}

/// Jobs [begin, end) of rank r out of n. `aligned`: boundaries on multiples of `block` with
/// shares 1:2:3:..., `empty_first`: rank 0 has no jobs and the others share them evenly (on
/// block boundaries), otherwise (`ragged`, `one_block`) shares 1:2:3:... plus 7 r jobs.
struct range {
  std::int64_t begin, end;
};
range shard(std::int64_t n, int r, int size, const std::string& mode, std::int64_t block) {
  auto boundary = [&](int q) -> std::int64_t {
    if (q >= size) return n;
    if (mode == "empty_first") {
      if (q == 0) return 0;
      const std::int64_t blocks = (n + block - 1) / block;
      return q == 1 ? 0 : std::min(n, blocks * (q - 1) / (size - 1) * block);
    }
    const std::int64_t weight = std::int64_t{q} * (q + 1) / 2,
                       total = std::int64_t{size} * (size + 1) / 2;
    if (mode == "aligned") {
      const std::int64_t blocks = (n + block - 1) / block;
      return std::min(n, blocks * weight / total * block);
    }
    return std::min(n, n * weight / total + 7 * q);  // ragged
  };
  return {boundary(r), boundary(r + 1)};
}

popalloc::dense_problem<double> slice(const popalloc::dense_problem<double>& p, range r) {
  popalloc::dense_problem<double> s;
  const Eigen::Index begin = r.begin, count = r.end - r.begin;
  s.throughput = p.throughput.middleRows(begin, count);
  s.capacity = p.capacity;
  if (p.weight.size() != 0) s.weight = p.weight.segment(begin, count);
  if (p.target.size() != 0) s.target = p.target.segment(begin, count);
  if (p.job_demand.size() != 0) s.job_demand = p.job_demand.segment(begin, count);
  if (p.demand.size() != 0) s.demand = p.demand.middleRows(begin, count);
  return s;
}

/// Each job has 3 options, each consuming 1-2 of m resources.
popalloc::bundle_problem<double> random_bundle(std::int64_t n, int m, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Eigen::VectorXd capacity(m);
  for (int j = 0; j < m; ++j)
    capacity[j] = popalloc_test::uniform(rng, 0.2, 1.0) * static_cast<double>(n) / m;
  popalloc::bundle_problem<double> p(capacity);
  for (std::int64_t i = 0; i < n; ++i) {
    popalloc::job_parameters job;
    job.weight = static_cast<double>(rng() % 3) + 1.0;
    job.target = popalloc_test::uniform(rng, 0.5, 2.0);
    p.add_job(job);
    for (int o = 0; o < 3; ++o) {
      std::vector<popalloc::consumption> uses;
      const int first = static_cast<int>(rng() % static_cast<std::uint64_t>(m));
      uses.push_back({first, popalloc_test::uniform(rng, 0.5, 1.5)});
      if (rng() % 2 == 0) {
        const int second =
            (first + 1 + static_cast<int>(rng() % static_cast<std::uint64_t>(m - 1))) % m;
        uses.push_back({second, popalloc_test::uniform(rng, 0.2, 1.0)});
      }
      p.add_option(popalloc_test::uniform(rng, 0.5, 3.0), uses);
    }
  }
  return p;
}

popalloc::bundle_problem<double> slice(const popalloc::bundle_problem<double>& p, range r) {
  popalloc::bundle_problem<double> s(p.capacity());
  for (std::int64_t i = r.begin; i < r.end; ++i) {
    const auto u = static_cast<std::size_t>(i);
    popalloc::job_parameters job;
    job.weight = p.weight()[u];
    job.target = p.target()[u];
    s.add_job(job);
    for (auto o = p.job_option_offset()[u]; o < p.job_option_offset()[u + 1]; ++o) {
      std::vector<popalloc::consumption> uses;
      const auto uo = static_cast<std::size_t>(o);
      for (auto k = p.option_consumption_offset()[uo]; k < p.option_consumption_offset()[uo + 1];
           ++k)
        uses.push_back({p.consumption_resource()[static_cast<std::size_t>(k)],
                        p.consumption_amount()[static_cast<std::size_t>(k)]});
      s.add_option(p.option_value()[uo], uses);
    }
  }
  return s;
}

double relative(double a, double b, double scale = 0.0) {
  if (a == b) return 0.0;
  return std::abs(a - b) / std::max({std::abs(a), std::abs(b), std::abs(scale), 1e-300});
}
double price_difference(const Eigen::VectorXd& a, const Eigen::VectorXd& b) {
  const double scale = std::max(b.cwiseAbs().maxCoeff(), 1e-300);
  return (a - b).cwiseAbs().maxCoeff() / scale;
}

template <class Problem, class Utility>
void agree_case(const std::string& name, const Problem& full, const Utility& utility,
                const std::string& mode, std::int64_t block,
                popalloc::backend::mpi_sums sums = popalloc::backend::mpi_sums::cpu_order) {
  popalloc::solver_options options;
  options.relative_gap = 1e-6;
  options.max_iterations = 400;
  options.threads = 1;
  const popalloc::backend::mpi world{MPI_COMM_WORLD, 60.0, sums, block};
  const popalloc::backend::mpi self{MPI_COMM_SELF, 60.0, sums, block};
  const bool cpu_order = sums == popalloc::backend::mpi_sums::cpu_order;
  const range mine = shard(full.jobs(), rank, ranks, mode, block);
  const popalloc::solve_result cpu = popalloc::solve(full, utility, options);
  const popalloc::solve_result one = popalloc::solve(self, full, utility, options);
  const popalloc::solve_result sharded =
      popalloc::solve(world, slice(full, mine), utility, options);
  const std::string label =
      name + " " + mode + (cpu_order ? "" : " exact") + " np=" + std::to_string(ranks);
  const int before = failures;
  if (sharded.status != popalloc::solve_status::converged)
    fail(label + ": status " + popalloc::to_string(sharded.status));
  // Against the CPU backend on the whole problem. cpu_order: the same bits. exact: its sums are
  // rounded differently, and the Newton iterates can drift apart within the tolerance, so the
  // two certificates must agree: each objective below the other's bound (docs/mpi.md).
  if (cpu_order) {
    if (sharded.primal_objective != cpu.primal_objective || sharded.dual_bound != cpu.dual_bound ||
        sharded.prices != cpu.prices || sharded.iterations != cpu.iterations ||
        sharded.usage != cpu.usage)
      fail(label + ": not bitwise identical to the CPU backend (objective differs by " +
           std::to_string(relative(sharded.primal_objective, cpu.primal_objective) * 1e9) +
           "e-9, prices by " + std::to_string(price_difference(sharded.prices, cpu.prices) * 1e9) +
           "e-9)");
  } else {
    const double slack = 1e-12 * std::abs(cpu.dual_bound);
    if (sharded.primal_objective > cpu.dual_bound + slack ||
        cpu.primal_objective > sharded.dual_bound + slack)
      fail(label + ": certificates inconsistent with the CPU backend's");
  }
  // Against the MPI backend in one process: the same bits for any shard layout (block carries
  // plus exact summation), allocation included.
  {
    if (sharded.primal_objective != one.primal_objective || sharded.dual_bound != one.dual_bound ||
        sharded.prices != one.prices || sharded.iterations != one.iterations ||
        sharded.usage != one.usage || sharded.status != one.status)
      fail(label + ": not bitwise identical to the single-rank MPI solve (objective differs by " +
           std::to_string(relative(sharded.primal_objective, one.primal_objective) * 1e9) +
           "e-9, prices by " + std::to_string(price_difference(sharded.prices, one.prices) * 1e9) +
           "e-9)");
    const auto& a = sharded.allocation;
    const auto& b = one.allocation;
    bool same = a.jobs() == static_cast<std::size_t>(mine.end - mine.begin);
    for (std::size_t i = 0; same && i < a.jobs(); ++i) {
      const auto bi = static_cast<std::size_t>(mine.begin) + i;
      const auto na = a.job_offset[i + 1] - a.job_offset[i];
      const auto nb = b.job_offset[bi + 1] - b.job_offset[bi];
      same = na == nb;
      for (std::int64_t k = 0; same && k < na; ++k) {
        const auto ka = static_cast<std::size_t>(a.job_offset[i] + k);
        const auto kb = static_cast<std::size_t>(b.job_offset[bi] + k);
        same = a.option[ka] == b.option[kb] && a.fraction[ka] == b.fraction[kb];
      }
    }
    if (!same) fail(label + ": this rank's allocation differs from the single-rank rows");
  }
  // Every rank sees the same global answer; the returned usage respects the capacities.
  const Eigen::VectorXd& capacity = popalloc::detail::capacity_of(full);
  if ((sharded.usage - capacity).maxCoeff() > 0.0) fail(label + ": usage exceeds a capacity");
  double mine_objective = sharded.primal_objective, low = 0, high = 0;
  MPI_Allreduce(&mine_objective, &low, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine_objective, &high, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (low != high) fail(label + ": ranks returned different objectives");
  if (rank == 0)
    std::printf(
        "%-36s %s  objective %.15g  iterations %d (cpu %d)  vs cpu: objective %.1e "
        "prices %.1e\n",
        label.c_str(), failures == before ? "ok" : "FAILED", sharded.primal_objective,
        sharded.iterations, cpu.iterations,
        relative(sharded.primal_objective, cpu.primal_objective),
        price_difference(sharded.prices, cpu.prices));
}

#if defined(POPALLOC_TEST_HAVE_FAMILIES)
/// A sample that met its targets early, whose probe falls short on the full problem (every 200th
/// job re-profiled at half speed): every rank enters the continued sample's collective solve at
/// the same evaluation, with the same options (a finite time limit: their fingerprints must
/// agree although the ranks' clocks differ), and the answer is the CPU backend's bit for bit.
void continuation_case() {
  const auto full = popalloc_test::probe_falls_short(20000, 1);
  const popalloc::utility::target_priority utility;
  popalloc::solver_options options;
  options.relative_gap = 1e-3;
  options.threads = 1;
  options.time_limit_seconds = 600.0;
  const popalloc::backend::mpi world{MPI_COMM_WORLD, 60.0, popalloc::backend::mpi_sums::cpu_order,
                                     64};
  const popalloc::solve_result cpu = popalloc::solve(full, utility, options);
  const popalloc::solve_result sharded = popalloc::solve(
      world, slice(full, shard(full.jobs(), rank, ranks, "ragged", 64)), utility, options);
  const popalloc::solve_result sample = popalloc_test::plain_sample_solve(full, utility, options);
  const std::string label = "continued sample np=" + std::to_string(ranks);
  const int before = failures;
  if (sharded.status != popalloc::solve_status::converged)
    fail(label + ": status " + popalloc::to_string(sharded.status));
  if (!(cpu.sample_iterations > sample.iterations)) fail(label + ": the sample was not continued");
  if (sharded.sample_iterations != cpu.sample_iterations || sharded.iterations != cpu.iterations ||
      sharded.primal_objective != cpu.primal_objective || sharded.dual_bound != cpu.dual_bound ||
      sharded.prices != cpu.prices)
    fail(label + ": differs from the CPU backend");
  if (rank == 0)
    std::printf("%-40s %s objective %.12g evaluations %d + %d\n", label.c_str(),
                failures == before ? "ok" : "FAILED", sharded.primal_objective, sharded.iterations,
                sharded.sample_iterations);
}
#endif

int agree() {
  const popalloc::dense_problem<double> dense = popalloc_test::random_problem(3001, 5, 11);
  const popalloc::bundle_problem<double> bundle = random_bundle(2500, 4, 5);
  // one_block: blocks larger than the problem, so the block carry passes through all ranks.
  // Every utility on the hardest layout for the rank count; the other layouts on two cases. The
  // test time goes into the latency of the collectives on an oversubscribed machine.
  const std::string main_mode = ranks == 1 ? "aligned" : (ranks == 2 ? "aligned" : "ragged");
  std::vector<std::string> extra;
  if (ranks == 2) extra = {"ragged"};
  if (ranks >= 3) extra = {"empty_first", "one_block"};
  for (const std::string& mode : extra) {
    const std::int64_t block = mode == "one_block" ? 4096 : 64;
    agree_case("dense/linear", dense, popalloc::utility::linear{}, mode, block);
    agree_case("bundle/log", bundle, popalloc::utility::log{}, mode, block);
  }
  // Exact sums: the same layout, two cases.
  agree_case("dense/linear", dense, popalloc::utility::linear{}, main_mode, 64,
             popalloc::backend::mpi_sums::exact);
  agree_case("bundle/log", bundle, popalloc::utility::log{}, main_mode, 64,
             popalloc::backend::mpi_sums::exact);
  {
    const std::string& mode = main_mode;
    const std::int64_t block = 64;
    agree_case("dense/linear", dense, popalloc::utility::linear{}, mode, block);
    agree_case("dense/log", dense, popalloc::utility::log{}, mode, block);
    agree_case("dense/target-priority", dense, popalloc::utility::target_priority{}, mode, block);
    agree_case("dense/power:0.5", dense, popalloc::utility::power(0.5), mode, block);
    agree_case("bundle/linear", bundle, popalloc::utility::linear{}, mode, block);
    agree_case("bundle/log", bundle, popalloc::utility::log{}, mode, block);
  }
#if defined(POPALLOC_TEST_HAVE_FAMILIES)
  continuation_case();
#endif
  return failures;
}

/// Solves a sharded instance with a callback that misbehaves on rank 1 at evaluation 3.
popalloc::solve_result misbehave(const std::string& how, double timeout) {
  const popalloc::dense_problem<double> full = popalloc_test::random_problem(4000, 4, 3);
  popalloc::dense_problem<double> mine = slice(full, shard(full.jobs(), rank, ranks, "ragged", 64));
  if (how == "invalid" && rank == 1) mine.throughput(2, 1) = std::nan("");
  if (how == "mismatch" && rank == ranks - 1) mine.capacity[0] *= 2.0;
  popalloc::solver_options options;
  options.relative_gap = 1e-9;
  options.threads = 1;
  if (how == "gap_mismatch" && rank == ranks - 1) options.gap = popalloc::gap_measure::objective;
  const popalloc::progress_callback callback = [&](const popalloc::progress& info) {
    if (rank == 1 && info.iteration == 3) {
      if (how == "throw") throw std::runtime_error("the callback on rank 1 failed on purpose");
      if (how == "kill") std::raise(SIGKILL);
      if (how == "stall") std::this_thread::sleep_for(std::chrono::seconds(60));
    }
    return popalloc::callback_action::proceed;
  };
  return popalloc::solve(popalloc::backend::mpi{MPI_COMM_WORLD, timeout}, mine,
                         popalloc::utility::log{}, options, callback);
}

/// After an expected error: print it, let every rank print (a barrier with a deadline, as a rank
/// may be dead or asleep), then end the job.
[[noreturn]] void expected(const std::string& message, bool abort_job) {
  std::printf("rank %d: EXPECTED: %s\n", rank, message.c_str());
  std::fflush(stdout);
  if (!abort_job) {
    MPI_Finalize();
    std::exit(0);
  }
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  while (done == 0 && std::chrono::steady_clock::now() - start < std::chrono::seconds(5)) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  MPI_Abort(MPI_COMM_WORLD, 3);
  std::exit(3);
}

int failure_mode(const std::string& how) {
  const double timeout = how == "stall" ? 2.0 : 60.0;
  try {
    misbehave(how, timeout);
  } catch (const popalloc::invalid_problem& e) {
    if (how == "invalid" || how == "mismatch" || how == "gap_mismatch") expected(e.what(), false);
    fail(std::string("unexpected invalid_problem: ") + e.what());
    return 1;
  } catch (const popalloc::backend_error& e) {
    if (how == "throw" || how == "stall") expected(e.what(), true);
    fail(std::string("unexpected backend_error: ") + e.what());
    return 1;
  }
  fail("the solve succeeded although rank 1 misbehaved (" + how + ")");
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  const std::string mode = argc > 1 ? argv[1] : "agree";
  int local = 0;
  if (mode == "agree") {
    local = agree();
  } else if (ranks < 2) {
    fail("failure modes need at least 2 ranks");
    local = 1;
  } else {
    local = failure_mode(mode);
  }
  int total = 0;
  MPI_Allreduce(&local, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) std::printf("%s: %d failure(s) over %d rank(s)\n", mode.c_str(), total, ranks);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
