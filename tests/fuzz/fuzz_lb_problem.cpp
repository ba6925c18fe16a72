// SPDX-License-Identifier: Apache-2.0
// Fuzz target: load balancing (popalloc::lb) on small arbitrary problems: loads and memories of
// any magnitude, any band, any current placement. Invalid problems raise invalid_problem; a
// valid one gets, from the greedy and the price solver (alone and under POP with 2 parts), a
// placement whose servers exist and whose fractions are finite in [0, 1], "balanced" only when
// the checker agrees and a message whenever it is not balanced.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <functional>

#include <popalloc/lb.hpp>

#include "fuzz_input.hpp"

namespace lb = popalloc::lb;

namespace {

void check_result(const lb::problem& p, const lb::lb_result& r) {
  if (r.result.shards.empty()) {
    if (r.status == lb::lb_status::balanced) std::abort();
    return;
  }
  if (r.result.shards.size() != p.shards()) std::abort();
  for (const auto& shard : r.result.shards)
    for (const lb::route& route : shard) {
      if (route.server < 0 || route.server >= p.servers) std::abort();
      if (!std::isfinite(route.fraction) || route.fraction < 0.0 || route.fraction > 1.0 + 1e-9)
        std::abort();
    }
  // An unbalanced placement may be incomplete, but must say why; a balanced one must be one.
  if (r.status != lb::lb_status::balanced && r.message.empty()) std::abort();
  if (r.status == lb::lb_status::balanced && !lb::check(p, r.result).feasible) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  popalloc_fuzz::byte_reader in(data, size);
  lb::problem p;
  const std::size_t shards = 1 + in.byte() % 24;
  p.servers = 1 + in.byte() % 6;
  p.max_memory = in.byte() % 4 == 0 ? in.interesting_double() : double(1 + in.byte() % 8);
  p.epsilon = in.byte() % 4 == 0 ? in.interesting_double() : 0.01 * double(in.byte() % 30);
  p.replication = 1 + in.byte() % 2;
  const bool placed = in.byte() % 4 != 0;
  for (std::size_t j = 0; j < shards; ++j) {
    p.load.push_back(in.byte() % 3 == 0 ? in.interesting_double() : double(1 + in.byte()));
    p.memory.push_back(in.byte() % 8 == 0 ? in.interesting_double() : 1.0);
  }
  if (placed) {
    p.current.shards.resize(shards);
    for (std::size_t j = 0; j < shards; ++j) {
      const int replicas = in.byte() % 3;
      for (int k = 0; k < replicas; ++k) {
        lb::route r;
        r.server = static_cast<std::int32_t>(in.byte() % 8) - 1;  // some out of range
        r.fraction = in.byte() % 5 == 0 ? in.interesting_double() : 1.0 / (1 + k);
        p.current.shards[j].push_back(r);
      }
    }
  }
  try {
    p.validate();
  } catch (const popalloc::invalid_problem&) {
    return 0;
  }
  auto guarded = [&](const std::function<lb::lb_result()>& solve) {
    try {
      check_result(p, solve());
    } catch (const popalloc::invalid_problem&) {
      // Data beyond the core's value range (a load of 1e300): refused, not solved.
    }
  };
  lb::price_options o;
  o.solver.threads = 1;
  o.solver.max_iterations = 200;
  guarded([&] { return lb::solve_greedy(p); });
  guarded([&] { return lb::solve_price(p, o); });
  if (p.servers >= 2) {
    guarded([&] {
      return lb::pop_solve(p, 2, [&](const lb::problem& q) { return lb::solve_price(q, o); });
    });
  }
  return 0;
}
