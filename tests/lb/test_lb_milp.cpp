// SPDX-License-Identifier: Apache-2.0
// Load balancing: the CBC MILP against brute force (every x in {0,1}^{N x S}, each checked for a
// feasible routing r with CLP), and the CLI-facing error when CBC is absent.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/lb.hpp>

#include "lb/lb_check.hpp"
#include "milp_cbc.hpp"

#if defined(POPALLOC_LB_HAVE_CBC) && POPALLOC_LB_HAVE_CBC
#include <ClpSimplex.hpp>
#endif

namespace lb = popalloc::lb;

#if defined(POPALLOC_LB_HAVE_CBC) && POPALLOC_LB_HAVE_CBC

namespace {

/// Is there an r with r_ij in [lb x_ij, x_ij], sum_i r_ij = 1, load band per server? (CLP)
bool routable(const lb::problem& p, const std::vector<int>& x, double r_min) {
  const std::size_t S = p.shards(), N = p.server_count();
  std::vector<int> col_of(S * N, -1);
  int cols = 0;
  for (std::size_t k = 0; k < S * N; ++k)
    if (x[k]) col_of[k] = cols++;
  const int rows = static_cast<int>(N + S);
  std::vector<int> ri, ci;
  std::vector<double> v;
  for (std::size_t j = 0; j < S; ++j)
    for (std::size_t i = 0; i < N; ++i) {
      const int c = col_of[j * N + i];
      if (c < 0) continue;
      ri.insert(ri.end(), {static_cast<int>(i), static_cast<int>(N + j)});
      ci.insert(ci.end(), {c, c});
      v.insert(v.end(), {p.load[j], 1.0});
    }
  CoinPackedMatrix m(true, ri.data(), ci.data(), v.data(), static_cast<CoinBigIndex>(v.size()));
  m.setDimensions(rows, cols);
  std::vector<double> clo(static_cast<std::size_t>(cols), r_min),
      chi(static_cast<std::size_t>(cols), 1.0), obj(static_cast<std::size_t>(cols), 0.0), rlo, rhi;
  for (std::size_t i = 0; i < N; ++i) {
    rlo.push_back(p.lower());
    rhi.push_back(p.upper());
  }
  for (std::size_t j = 0; j < S; ++j) {
    rlo.push_back(1.0);
    rhi.push_back(1.0);
  }
  ClpSimplex lp;
  lp.setLogLevel(0);
  lp.loadProblem(m, clo.data(), chi.data(), obj.data(), rlo.data(), rhi.data());
  lp.dual();
  return lp.isProvenOptimal();
}

/// Fewest new replicas over every x (memory, replica count, routable); -1 when none exists.
long brute_force(const lb::problem& p) {
  const std::size_t S = p.shards(), N = p.server_count(), bits = S * N;
  long best = -1;
  const long R = p.required_replicas();
  for (std::uint64_t mask = 0; mask < (std::uint64_t{1} << bits); ++mask) {
    std::vector<int> x(bits);
    long cost = 0;
    bool ok = true;
    for (std::size_t j = 0; j < S && ok; ++j) {
      long copies = 0;
      for (std::size_t i = 0; i < N; ++i) {
        x[j * N + i] = static_cast<int>((mask >> (j * N + i)) & 1U);
        copies += x[j * N + i];
        if (x[j * N + i] && !p.current.holds(j, static_cast<std::int32_t>(i))) ++cost;
      }
      ok = copies >= R;
    }
    if (!ok || (best >= 0 && cost >= best)) continue;
    for (std::size_t i = 0; i < N && ok; ++i) {
      double mem = 0.0;
      for (std::size_t j = 0; j < S; ++j) mem += p.memory[j] * x[j * N + i];
      ok = mem <= p.max_memory;
    }
    // With R > 1 POP adds x <= r + 0.9999, i.e. r >= 1e-4 on every replica.
    if (ok && routable(p, x, R > 1 ? 1e-4 : 0.0)) best = cost;
  }
  return best;
}

lb::problem tiny(std::uint64_t seed, std::size_t S, std::int32_t N) {
  std::mt19937_64 rng(seed);
  lb::problem p;
  p.servers = N;
  for (std::size_t j = 0; j < S; ++j) {
    p.load.push_back(static_cast<double>(1 + rng() % 60));
    p.memory.push_back(1.0);
  }
  p.max_memory = static_cast<double>(1 + rng() % S);
  p.epsilon = (rng() % 2) ? 0.05 : 0.2;
  p.current.shards.resize(S);
  for (std::size_t j = 0; j < S; ++j)
    if (rng() % 6 != 0)
      p.current.shards[j].push_back(
          {static_cast<std::int32_t>(rng() % static_cast<std::uint64_t>(N)), 1.0});
  return p;
}

}  // namespace

TEST_CASE("MILP optimum equals brute force on tiny instances") {
  int feasible = 0, infeasible = 0;
  for (std::uint64_t seed = 1; seed <= 24; ++seed) {
    const std::size_t S = 3 + seed % 2;
    const auto N = static_cast<std::int32_t>(2 + seed % 2);
    lb::problem p = tiny(seed, S, N);
    if (seed % 8 == 0) p.replication = 2;
    const long best = brute_force(p);
    popalloc_lb::milp_options o;
    o.mip_gap = 0.0;
    o.time_limit = 30.0;
    // Both paths: CBC in a child process (the default; the answer crosses the pipe) and in this
    // process.
    for (const bool isolate : {true, false}) {
      o.isolate = isolate;
      const auto r = popalloc_lb::solve_milp(p, o);
      const popalloc_lb::milp_report& rep = r.report;
      CAPTURE(seed);
      CAPTURE(isolate);
      if (best < 0) {
        if (isolate) ++infeasible;
        CHECK(r.status == lb::lb_status::infeasible);
        CHECK(rep.outcome == popalloc_lb::milp_outcome::infeasible);
      } else {
        if (isolate) ++feasible;
        REQUIRE(r.status == lb::lb_status::balanced);
        CHECK(rep.outcome == popalloc_lb::milp_outcome::optimal);
        CHECK(rep.source == popalloc_lb::placement_source::cbc);
        const auto v = lb_test::independent_check(p, r.result);
        CHECK(v.ok);
        CHECK(v.moved == best);
      }
    }
  }
  // The instance family must exercise both outcomes.
  CHECK(feasible >= 8);
  CHECK(infeasible >= 2);
  MESSAGE("brute force: " << feasible << " feasible, " << infeasible << " infeasible instances");
}

TEST_CASE("MILP is at least as good as price + repair, greedy and POP on small benchmark rounds") {
  lb::zipf_workload w(48, 6, 42);
  lb::placement cur = lb::round_robin_placement(48, 6);
  for (int round = 0; round < 4; ++round) {
    const lb::problem p = w.next_round(cur);
    popalloc_lb::milp_options o;
    o.mip_gap = 0.0;
    o.time_limit = 30.0;
    const auto m = popalloc_lb::solve_milp(p, o);
    REQUIRE(m.status == lb::lb_status::balanced);
    const auto vm = lb_test::independent_check(p, m.result);
    REQUIRE(vm.ok);
    const auto price = lb::solve_price(p);
    REQUIRE(price.status == lb::lb_status::balanced);
    CHECK(lb_test::independent_check(p, price.result).moved >= vm.moved);
    const auto pop =
        lb::pop_solve(p, 2, [&](const lb::problem& q) { return popalloc_lb::solve_milp(q, o); });
    if (pop.status == lb::lb_status::balanced) {
      const auto vp = lb_test::independent_check(p, pop.result);
      CHECK(vp.ok);
      CHECK(vp.moved >= vm.moved);
    }
    // The MIP start path: a start equal to the price placement is accepted.
    o.start = &price.result;
    const auto ms = popalloc_lb::solve_milp(p, o);
    REQUIRE(ms.status == lb::lb_status::balanced);
    CHECK(lb_test::independent_check(p, ms.result).moved == vm.moved);
    cur = m.result;
  }
}

namespace {

/// A benchmark round where CBC branches (48 shards on 6 servers, round-robin start).
lb::problem benchmark_round() {
  lb::zipf_workload w(48, 6, 42);
  return w.next_round(lb::round_robin_placement(48, 6));
}

}  // namespace

TEST_CASE("MILP isolation: CBC aborting in the child is reported, not fatal") {
  const lb::problem p = benchmark_round();
  popalloc_lb::milp_options o;
  o.fault = popalloc_lb::milp_fault::abort_child;
  const auto r = popalloc_lb::solve_milp(p, o);
  popalloc_lb::milp_report rep = r.report;
  CHECK(r.status == lb::lb_status::no_solution);
  CHECK(r.result.shards.empty());
  CHECK(rep.outcome == popalloc_lb::milp_outcome::solver_crashed);
  CHECK(rep.source == popalloc_lb::placement_source::none);
  CHECK(rep.incumbents == 0);
  CHECK_MESSAGE(r.message.find("SIGABRT, signal 6") != std::string::npos, r.message);
  CHECK_MESSAGE(r.message.find("no incumbent") != std::string::npos, r.message);
  // The parent is unharmed and the next solve works.
  o.fault = popalloc_lb::milp_fault::none;
  o.mip_gap = 0.0;
  const auto again = popalloc_lb::solve_milp(p, o);
  rep = again.report;
  CHECK(again.status == lb::lb_status::balanced);
  CHECK(rep.outcome == popalloc_lb::milp_outcome::optimal);
  CHECK(lb_test::independent_check(p, again.result).ok);
}

TEST_CASE("MILP isolation: a SIGSEGV after an incumbent returns that incumbent") {
  const lb::problem p = benchmark_round();
  popalloc_lb::milp_options o;
  o.mip_gap = 0.0;
  o.isolate = false;
  const auto exact = popalloc_lb::solve_milp(p, o);
  REQUIRE(exact.status == lb::lb_status::balanced);
  const long optimum = lb_test::independent_check(p, exact.result).moved;

  o.isolate = true;
  o.fault = popalloc_lb::milp_fault::segv_after_incumbent;
  const auto r = popalloc_lb::solve_milp(p, o);
  popalloc_lb::milp_report rep = r.report;
  CHECK(rep.outcome == popalloc_lb::milp_outcome::solver_crashed);
  CHECK_MESSAGE(r.message.find("SIGSEGV, signal 11") != std::string::npos, r.message);
  CHECK(rep.incumbents == 1);
  REQUIRE(rep.source == popalloc_lb::placement_source::cbc_incumbent);
  REQUIRE(r.status == lb::lb_status::balanced);
  const auto v = lb_test::independent_check(p, r.result);
  CHECK(v.ok);
  CHECK(v.moved >= optimum);
  CHECK(static_cast<double>(v.moved) == doctest::Approx(rep.objective));
}

TEST_CASE("MILP isolation: a child that never answers is killed at the deadline") {
  const lb::problem p = benchmark_round();
  popalloc_lb::milp_options o;
  o.fault = popalloc_lb::milp_fault::hang_child;
  o.time_limit = 0.3;
  o.kill_grace = 0.2;
  const auto r = popalloc_lb::solve_milp(p, o);
  popalloc_lb::milp_report rep = r.report;
  CHECK(r.status == lb::lb_status::no_solution);
  CHECK(rep.outcome == popalloc_lb::milp_outcome::time_limit);
  CHECK_MESSAGE(r.message.find("killed at the deadline") != std::string::npos, r.message);
  CHECK(r.seconds >= 0.5);  // it waited for the deadline, not less
}

TEST_CASE("MILP fault names round-trip") {
  for (const auto f :
       {popalloc_lb::milp_fault::none, popalloc_lb::milp_fault::abort_child,
        popalloc_lb::milp_fault::segv_after_incumbent, popalloc_lb::milp_fault::hang_child}) {
    popalloc_lb::milp_fault back = popalloc_lb::milp_fault::none;
    CHECK(popalloc_lb::parse_milp_fault(popalloc_lb::to_string(f), back));
    CHECK(back == f);
  }
  popalloc_lb::milp_fault back{};
  CHECK(!popalloc_lb::parse_milp_fault("crash", back));
}

#else

TEST_CASE("MILP without CBC: a clear error") {
  CHECK(!popalloc_lb::milp_available());
  lb::problem p;
  p.servers = 1;
  p.load = {1.0};
  p.memory = {1.0};
  p.max_memory = 1.0;
  CHECK_THROWS_WITH_AS(popalloc_lb::solve_milp(p, {}), doctest::Contains("CBC"),
                       popalloc::invalid_problem);
}

#endif

TEST_CASE("MILP outcomes and sources: names and the order of worse()") {
  using o = popalloc_lb::milp_outcome;
  using s = popalloc_lb::placement_source;
  const o outcomes[] = {o::optimal, o::infeasible, o::time_limit, o::not_run, o::solver_crashed};
  const char* const outcome_names[] = {"optimal", "infeasible", "time_limit", "not_run",
                                       "solver_crashed"};
  for (std::size_t k = 0; k < 5; ++k) {
    CHECK(std::string(popalloc_lb::to_string(outcomes[k])) == outcome_names[k]);
    for (std::size_t l = 0; l < 5; ++l)
      CHECK(popalloc_lb::worse(outcomes[k], outcomes[l]) == outcomes[std::max(k, l)]);
  }
  const s sources[] = {s::cbc, s::cbc_incumbent, s::mip_start, s::previous_placement, s::none};
  const char* const source_names[] = {"cbc", "cbc_incumbent", "mip_start", "previous_placement",
                                      "none"};
  for (std::size_t k = 0; k < 5; ++k) {
    CHECK(std::string(popalloc_lb::to_string(sources[k])) == source_names[k]);
    for (std::size_t l = 0; l < 5; ++l)
      CHECK(popalloc_lb::worse(sources[k], sources[l]) == sources[std::max(k, l)]);
  }
}
