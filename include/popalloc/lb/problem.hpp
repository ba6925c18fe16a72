// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Shard placement (load balancing): the problem, a placement, and the balance bounds.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "popalloc/error.hpp"
#include "popalloc/status.hpp"

namespace popalloc::lb {

/// \brief One replica of a shard: the server holding it and the fraction of the shard's queries
/// routed there (r_ij). A replica with fraction 0 is an idle copy (x_ij = 1, r_ij = 0).
struct route {
  std::int32_t server = 0;
  double fraction = 0.0;
};

/// \brief Where every shard lives and how its queries are routed: `shards[j]` lists shard j's
/// replicas (distinct servers). The MILP's x_ij is "server i appears in shards[j]", r_ij its
/// fraction.
struct placement {
  std::vector<std::vector<route>> shards;

  std::size_t size() const { return shards.size(); }
  /// \brief True when shard j has a replica on server i.
  bool holds(std::size_t shard, std::int32_t server) const {
    for (const route& r : shards[shard])
      if (r.server == server) return true;
    return false;
  }
};

/// \brief The shard placement MILP of POP's load-balancing experiment (SOSP 2021):
/// route every shard's load so that every server's load is within [lower, upper] (by default
/// mean -+ epsilon * mean), no server holds more than `max_memory` of shard memory, every shard
/// has at least min(replication, servers) replicas, and as few replicas as possible are new
/// (not in `current`).
struct problem {
  std::vector<double> load;      ///< l_j >= 0, one per shard (queries per unit of time)
  std::vector<double> memory;    ///< mu_j >= 0, one per shard
  std::int32_t servers = 0;      ///< N >= 1
  double max_memory = 0.0;       ///< memory capacity of every server (POP: 16 shards of size 1)
  std::int32_t replication = 1;  ///< minimum replicas per shard (POP: minReplicationFactor = 1)
  double epsilon = 0.05;         ///< relative half-width of the balance band (POP: 1/20)
  /// Explicit per-server load band; both negative (the default) means mean -+ epsilon * mean.
  /// POP sub-problems use the full problem's band here (see pop_split.hpp).
  double lower_bound = -1.0;
  double upper_bound = -1.0;
  placement current;  ///< a_ij: current replicas (fractions = previous routing, may be empty)

  std::size_t shards() const { return load.size(); }
  std::size_t server_count() const { return static_cast<std::size_t>(servers); }
  double total_load() const {
    double t = 0.0;
    for (const double l : load) t += l;
    return t;
  }
  /// \brief Average server load sum_j l_j / N.
  double mean_load() const { return total_load() / static_cast<double>(servers); }
  /// \brief Lowest allowed server load.
  double lower() const { return lower_bound >= 0.0 ? lower_bound : mean_load() * (1.0 - epsilon); }
  /// \brief Highest allowed server load.
  double upper() const { return upper_bound >= 0.0 ? upper_bound : mean_load() * (1.0 + epsilon); }
  /// \brief min(replication, N): what every shard needs (POP's actualReplicationFactor).
  std::int32_t required_replicas() const { return replication < servers ? replication : servers; }

  /// \brief Throws invalid_problem naming the first unusable entry.
  void validate() const {
    if (servers < 1) throw invalid_problem("load balancing: need at least one server");
    if (load.empty()) throw invalid_problem("load balancing: need at least one shard");
    if (memory.size() != load.size())
      throw invalid_problem("load balancing: memory has " + std::to_string(memory.size()) +
                            " entries but there are " + std::to_string(load.size()) + " shards");
    for (std::size_t j = 0; j < load.size(); ++j) {
      if (!std::isfinite(load[j]) || load[j] < 0.0)
        throw invalid_problem("load balancing: load[" + std::to_string(j) +
                              "] must be finite and >= 0");
      if (!std::isfinite(memory[j]) || memory[j] < 0.0)
        throw invalid_problem("load balancing: memory[" + std::to_string(j) +
                              "] must be finite and >= 0");
    }
    if (!std::isfinite(max_memory) || max_memory < 0.0)
      throw invalid_problem("load balancing: max_memory must be finite and >= 0");
    if (replication < 1) throw invalid_problem("load balancing: replication must be >= 1");
    if (!std::isfinite(epsilon) || epsilon < 0.0)
      throw invalid_problem("load balancing: epsilon must be finite and >= 0");
    if ((lower_bound >= 0.0) != (upper_bound >= 0.0))
      throw invalid_problem("load balancing: give both explicit load bounds or neither");
    if (lower_bound >= 0.0 &&
        (!std::isfinite(lower_bound) || !std::isfinite(upper_bound) || upper_bound < lower_bound))
      throw invalid_problem("load balancing: explicit load bounds must be finite, lower <= upper");
    if (!(total_load() > 0.0))
      throw invalid_problem("load balancing: total load must be > 0 (nothing to balance)");
    if (!current.shards.empty() && current.shards.size() != load.size())
      throw invalid_problem("load balancing: current placement has " +
                            std::to_string(current.shards.size()) + " shards, expected " +
                            std::to_string(load.size()) + " (or none)");
    std::vector<std::int32_t> seen(server_count(), -1);
    for (std::size_t j = 0; j < current.shards.size(); ++j) {
      for (const route& r : current.shards[j]) {
        if (r.server < 0 || r.server >= servers)
          throw invalid_problem("load balancing: current placement of shard " + std::to_string(j) +
                                " names server " + std::to_string(r.server) + " (servers are 0.." +
                                std::to_string(servers - 1) + ")");
        if (!std::isfinite(r.fraction) || r.fraction < 0.0)
          throw invalid_problem("load balancing: current routing fraction of shard " +
                                std::to_string(j) + " must be finite and >= 0");
        auto& mark = seen[static_cast<std::size_t>(r.server)];
        if (mark == static_cast<std::int32_t>(j))
          throw invalid_problem("load balancing: shard " + std::to_string(j) + " lists server " +
                                std::to_string(r.server) + " twice");
        mark = static_cast<std::int32_t>(j);
      }
    }
  }
};

/// \brief Whether a solver could return a placement that meets every constraint.
enum class lb_status : std::uint8_t {
  balanced = 0,     ///< every constraint holds (the checker agrees)
  unbalanced = 1,   ///< a placement is returned but some constraint is violated (see message)
  no_solution = 2,  ///< the solver found nothing (e.g. MILP time limit without an incumbent)
  infeasible = 3,   ///< proven infeasible (MILP)
};

/// \brief Stable lower-case name of a status.
inline const char* to_string(lb_status s) noexcept {
  switch (s) {
    case lb_status::balanced:
      return "balanced";
    case lb_status::unbalanced:
      return "unbalanced";
    case lb_status::no_solution:
      return "no_solution";
    case lb_status::infeasible:
      return "infeasible";
  }
  return "unknown";
}

/// \brief What solve_price() did besides the placement.
struct price_report {
  std::size_t lp_shards = 0;   ///< shards in the LP (those on overloaded servers)
  std::size_t lp_servers = 0;  ///< servers (columns) in the LP
  /// True when the restricted LP is provably the full relaxation: always with the keep flow; with
  /// the core when every server is a column, or a receiver column kept slack (price 0), so the
  /// missing options cannot improve it.
  bool lp_exact = false;
  int lp_iterations = 0;         ///< the core's dual evaluations (0 with the keep flow)
  double lp_relative_gap = 0.0;  ///< certified gap of the LP relaxation
  /// LP relaxation optimum bound, in fractional shard moves (a lower bound on the moves of any
  /// placement that keeps the non-LP shards in place; 0 when no LP was needed).
  double lp_moves_bound = 0.0;
  /// Status of the LP relaxation (the keep flow: converged when its certificate meets the
  /// relative gap); not_solved when no LP was needed (or another solver ran).
  solve_status lp_status = solve_status::not_solved;
  std::int64_t repair_moves = 0;  ///< replicas the lower-bound repair added
  double lp_seconds = 0.0;
};

/// \brief What pop_solve() did besides the merged placement: per-part timing and status (empty
/// when POP did not run).
struct pop_report {
  std::vector<double> part_seconds;
  std::vector<lb_status> part_status;  ///< parts solved (up to the first without a placement)
  double split_seconds = 0.0;
  double merge_seconds = 0.0;
};

/// \brief What every load-balancing solver returns.
struct lb_result {
  lb_status status = lb_status::no_solution;
  placement result;      ///< the new replicas and routing (empty for no_solution/infeasible)
  std::string message;   ///< why it is not balanced, or solver details
  double seconds = 0.0;  ///< wall-clock time of the solve
  price_report price;    ///< solve_price(): its LP relaxation and repair
  pop_report pop;        ///< pop_solve(): its parts
};

}  // namespace popalloc::lb
