// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief POP client partitioning: uniform random, shuffled (balanced random), round-robin and
/// power-of-two-choices balancing on per-client features. Every random strategy takes an explicit
/// seed, and draws through popalloc's own integer/real conversions on std::mt19937_64, so a seed
/// gives the same partition with every standard library (std::uniform_*_distribution is
/// implementation-defined).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Core>

#include "popalloc/error.hpp"
#include "popalloc/random.hpp"

namespace popalloc::pop {

/// \brief POP's draws come from popalloc::random_source (random.hpp); the old name stays.
using popalloc::random_source;

/// \brief Assignment of n clients to k sub-problems (parts).
struct partition {
  int parts = 1;                      ///< k
  std::vector<std::int32_t> part_of;  ///< part_of[i] in [0, k): the sub-problem of client i

  std::size_t clients() const { return part_of.size(); }

  /// \brief The clients of every part, each list in increasing client order (so a sub-problem
  /// keeps the original order of its clients, which makes k = 1 the unchanged problem).
  std::vector<std::vector<std::int64_t>> members() const {
    std::vector<std::vector<std::int64_t>> out(static_cast<std::size_t>(parts));
    std::vector<std::size_t> count(static_cast<std::size_t>(parts), 0);
    for (const std::int32_t s : part_of) ++count[static_cast<std::size_t>(s)];
    for (std::size_t s = 0; s < out.size(); ++s) out[s].reserve(count[s]);
    for (std::size_t i = 0; i < part_of.size(); ++i)
      out[static_cast<std::size_t>(part_of[i])].push_back(static_cast<std::int64_t>(i));
    return out;
  }

  /// \brief Number of clients in every part.
  std::vector<std::int64_t> sizes() const {
    std::vector<std::int64_t> count(static_cast<std::size_t>(parts), 0);
    for (const std::int32_t s : part_of) ++count[static_cast<std::size_t>(s)];
    return count;
  }
};

/// \brief How pop_solve assigns clients to sub-problems.
enum class partition_strategy : std::uint8_t {
  shuffled = 0,        ///< random permutation dealt round-robin: random, sizes differ by <= 1
  uniform_random = 1,  ///< i.i.d. uniform part per client (POP cluster scheduling); parts may be
                       ///< empty
  round_robin = 2,     ///< client i -> i mod k (POP figure-2 harness)
  two_choices = 3,     ///< power-of-two-choices balancing of client features (POP "means")
};

/// \brief Name of a strategy ("shuffled", "uniform-random", "round-robin", "two-choices").
inline const char* to_string(partition_strategy s) {
  switch (s) {
    case partition_strategy::shuffled:
      return "shuffled";
    case partition_strategy::uniform_random:
      return "uniform-random";
    case partition_strategy::round_robin:
      return "round-robin";
    case partition_strategy::two_choices:
      return "two-choices";
  }
  return "unknown";
}

namespace detail {
inline void check_partition_arguments(std::int64_t clients, int parts) {
  if (parts < 1) throw invalid_options("POP needs at least one part (k >= 1)");
  if (clients < 0) throw invalid_options("POP: negative client count");
}
}  // namespace detail

/// \brief Client i goes to part i mod k.
inline partition partition_round_robin(std::int64_t clients, int parts) {
  detail::check_partition_arguments(clients, parts);
  partition out;
  out.parts = parts;
  out.part_of.resize(static_cast<std::size_t>(clients));
  for (std::int64_t i = 0; i < clients; ++i)
    out.part_of[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i % parts);
  return out;
}

/// \brief Every client draws its part uniformly and independently (parts can end up empty).
inline partition partition_uniform_random(std::int64_t clients, int parts, std::uint64_t seed) {
  detail::check_partition_arguments(clients, parts);
  random_source rng(seed);
  partition out;
  out.parts = parts;
  out.part_of.resize(static_cast<std::size_t>(clients));
  for (auto& s : out.part_of)
    s = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(parts)));
  return out;
}

/// \brief A uniformly random permutation of the clients dealt round-robin: as random as
/// uniform_random for which clients share a part, but part sizes differ by at most one, so no
/// sub-problem is empty while clients >= k.
inline partition partition_shuffled(std::int64_t clients, int parts, std::uint64_t seed) {
  detail::check_partition_arguments(clients, parts);
  random_source rng(seed);
  std::vector<std::int64_t> order(static_cast<std::size_t>(clients));
  for (std::int64_t i = 0; i < clients; ++i) order[static_cast<std::size_t>(i)] = i;
  // Fisher-Yates with the portable bounded draw.
  for (std::int64_t i = clients - 1; i > 0; --i) {
    const auto j = static_cast<std::size_t>(rng.below(static_cast<std::uint64_t>(i) + 1));
    std::swap(order[static_cast<std::size_t>(i)], order[j]);
  }
  partition out;
  out.parts = parts;
  out.part_of.resize(static_cast<std::size_t>(clients));
  for (std::int64_t r = 0; r < clients; ++r)
    out.part_of[static_cast<std::size_t>(order[static_cast<std::size_t>(r)])] =
        static_cast<std::int32_t>(r % parts);
  return out;
}

/// \brief Power-of-two-choices balancing (POP's "means" splitter): with tgt = column totals / k,
/// clients are taken in order; each draws two distinct open parts and joins the one where
/// ||(S + v - tgt) / tgt|| - ||(S - tgt) / tgt|| is smallest (S: the part's running feature sum,
/// v: the client's row). A part closes once it holds more than 1.01 n / k clients, which keeps
/// sizes balanced as well as feature sums. Feature columns with a zero total are ignored.
/// \param features n x f, one row of nonnegative features per client (e.g. normalised demand).
inline partition partition_two_choices(const Eigen::MatrixXd& features, int parts,
                                       std::uint64_t seed) {
  const std::int64_t n = features.rows();
  detail::check_partition_arguments(n, parts);
  const Eigen::Index f = features.cols();
  partition out;
  out.parts = parts;
  out.part_of.assign(static_cast<std::size_t>(n), 0);
  if (parts == 1 || n == 0) return out;
  Eigen::VectorXd target = features.colwise().sum().transpose() / static_cast<double>(parts);
  Eigen::VectorXd inverse(f);
  for (Eigen::Index c = 0; c < f; ++c)
    inverse[c] = (std::isfinite(target[c]) && target[c] != 0.0) ? 1.0 / target[c] : 0.0;
  Eigen::MatrixXd sums = Eigen::MatrixXd::Zero(f, parts);  // column s: S of part s
  std::vector<std::int64_t> count(static_cast<std::size_t>(parts), 0);
  // POP closes a part at > 1.01 N / k entities; never below ceil(n / k) so all clients fit.
  const auto cap = std::max<std::int64_t>(
      (n + parts - 1) / parts,
      static_cast<std::int64_t>(std::floor(1.01 * static_cast<double>(n) / parts)) + 1);
  std::vector<std::int32_t> open(static_cast<std::size_t>(parts));
  for (int s = 0; s < parts; ++s) open[static_cast<std::size_t>(s)] = s;
  random_source rng(seed);
  auto score_change = [&](std::int32_t s, Eigen::Index i) {
    double before = 0.0, after = 0.0;
    for (Eigen::Index c = 0; c < f; ++c) {
      const double sum = sums(c, s);
      const double b = (sum - target[c]) * inverse[c];
      const double a = (sum + features(i, c) - target[c]) * inverse[c];
      before += b * b;
      after += a * a;
    }
    return std::sqrt(after) - std::sqrt(before);
  };
  for (Eigen::Index i = 0; i < n; ++i) {
    std::int32_t chosen;
    if (open.size() == 1) {
      chosen = open[0];
    } else {
      const auto m = static_cast<std::uint64_t>(open.size());
      const auto a = static_cast<std::size_t>(rng.below(m));
      auto b = static_cast<std::size_t>(rng.below(m - 1));
      if (b >= a) ++b;  // distinct second choice
      const std::int32_t sa = open[a], sb = open[b];
      chosen = score_change(sb, i) < score_change(sa, i) ? sb : sa;
    }
    out.part_of[static_cast<std::size_t>(i)] = chosen;
    sums.col(chosen) += features.row(i).transpose();
    if (++count[static_cast<std::size_t>(chosen)] >= cap) {
      for (std::size_t t = 0; t < open.size(); ++t)
        if (open[t] == chosen) {
          open.erase(open.begin() + static_cast<std::ptrdiff_t>(t));
          break;
        }
    }
  }
  return out;
}

}  // namespace popalloc::pop
