// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief POP resource and client splitting: k shares of every resource (fractional, or integer
/// units with the remainder handed out instead of dropped), and heavy clients cut into pieces that
/// go to distinct sub-problems and are merged back afterwards.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <Eigen/Core>

#include "popalloc/error.hpp"
#include "popalloc/pop/partition.hpp"

namespace popalloc::pop {

/// \brief Fractional shares of fungible capacity: column s is sub-problem s's capacity, R / k for
/// every part. Sums to R up to rounding; never above R by more than an ulp per resource (pop_solve
/// repairs that ulp when it coalesces).
inline Eigen::MatrixXd split_capacity(const Eigen::VectorXd& capacity, int parts) {
  if (parts < 1) throw invalid_options("POP needs at least one part (k >= 1)");
  Eigen::MatrixXd shares(capacity.size(), parts);
  for (int s = 0; s < parts; ++s) shares.col(s) = capacity / static_cast<double>(parts);
  return shares;
}

/// \brief Integer shares of indivisible units (GPUs, servers) and what was done with the remainder.
struct unit_split {
  /// shares[j][s]: units of resource j given to part s; sum_s shares[j][s] == units[j] exactly.
  std::vector<std::vector<std::int64_t>> shares;
  /// units[j] mod k: the units that did not divide evenly and were handed out one each.
  std::vector<std::int64_t> remainder;
};

/// \brief Splits integer unit counts into k shares of floor(n_j / k) plus one extra unit for
/// n_j mod k of the parts, so no unit is lost (POP's n_w // k drops them: with {3, 2, 1} units and
/// k = 2 the only unit of the third type disappears). The extras rotate across resources: resource
/// j's remainder starts where resource j-1's ended, so no part collects every extra unit.
inline unit_split split_units(const std::vector<std::int64_t>& units, int parts) {
  if (parts < 1) throw invalid_options("POP needs at least one part (k >= 1)");
  unit_split out;
  out.shares.resize(units.size());
  out.remainder.resize(units.size());
  std::int64_t next = 0;  // part receiving the next extra unit
  for (std::size_t j = 0; j < units.size(); ++j) {
    if (units[j] < 0) throw invalid_problem("split_units: negative unit count");
    const std::int64_t base = units[j] / parts, extra = units[j] % parts;
    out.shares[j].assign(static_cast<std::size_t>(parts), base);
    out.remainder[j] = extra;
    for (std::int64_t e = 0; e < extra; ++e) {
      ++out.shares[j][static_cast<std::size_t>(next)];
      next = (next + 1) % parts;
    }
  }
  return out;
}

/// \brief Heavy clients cut into pieces. Piece q belongs to client[q] and carries share[q] of its
/// size; a client's pieces are contiguous and its shares sum to 1.
struct client_split {
  std::vector<std::int64_t> piece_offset{0};  ///< client i owns pieces piece_offset[i] .. [i+1]-1
  std::vector<std::int64_t> client;           ///< owning client of every piece
  std::vector<double> share;                  ///< fraction of the client's size in the piece

  std::size_t clients() const { return piece_offset.size() - 1; }
  std::size_t pieces() const { return client.size(); }
  std::int64_t pieces_of(std::size_t i) const { return piece_offset[i + 1] - piece_offset[i]; }
};

/// \brief Cuts every client larger than `threshold` into min(max_pieces, ceil(size / threshold))
/// equal pieces (POP's tailored splitter uses threshold = total / k scaled, max_pieces = k, so the
/// pieces can land in distinct sub-problems). Other clients stay whole (one piece, share 1).
inline client_split split_heavy_clients(const std::vector<double>& sizes, double threshold,
                                        int max_pieces) {
  if (!(threshold > 0.0)) throw invalid_options("split_heavy_clients: threshold must be > 0");
  if (max_pieces < 1) throw invalid_options("split_heavy_clients: max_pieces must be >= 1");
  client_split out;
  out.piece_offset.reserve(sizes.size() + 1);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const double d = sizes[i];
    if (!std::isfinite(d) || d < 0.0)
      throw invalid_problem("split_heavy_clients: sizes must be finite and >= 0");
    std::int64_t pieces = 1;
    if (d > threshold)
      pieces =
          std::min<std::int64_t>(max_pieces, static_cast<std::int64_t>(std::ceil(d / threshold)));
    for (std::int64_t q = 0; q < pieces; ++q) {
      out.client.push_back(static_cast<std::int64_t>(i));
      out.share.push_back(1.0 / static_cast<double>(pieces));
    }
    out.piece_offset.push_back(static_cast<std::int64_t>(out.client.size()));
  }
  return out;
}

/// \brief Size of every piece: sizes[client] * share.
inline std::vector<double> piece_sizes(const client_split& split,
                                       const std::vector<double>& sizes) {
  std::vector<double> out(split.pieces());
  for (std::size_t q = 0; q < out.size(); ++q)
    out[q] = sizes[static_cast<std::size_t>(split.client[q])] * split.share[q];
  return out;
}

/// \brief Assigns pieces to parts: for every client a random permutation of the k parts, its
/// pieces taking the first entries (POP's RandomSplitter), so pieces of one client land in
/// distinct sub-problems whenever it has at most k pieces (beyond k they wrap around).
inline partition assign_pieces(const client_split& split, int parts, std::uint64_t seed) {
  if (parts < 1) throw invalid_options("POP needs at least one part (k >= 1)");
  random_source rng(seed);
  partition out;
  out.parts = parts;
  out.part_of.resize(split.pieces());
  std::vector<std::int32_t> order(static_cast<std::size_t>(parts));
  for (std::size_t i = 0; i < split.clients(); ++i) {
    const std::int64_t count = split.pieces_of(i);
    // Partial Fisher-Yates: only the first min(count, k) entries need drawing.
    for (int s = 0; s < parts; ++s) order[static_cast<std::size_t>(s)] = s;
    const std::int64_t drawn = std::min<std::int64_t>(count, parts);
    for (std::int64_t t = 0; t < drawn; ++t) {
      const auto r = static_cast<std::size_t>(
          t + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(parts - t))));
      std::swap(order[static_cast<std::size_t>(t)], order[r]);
    }
    for (std::int64_t q = 0; q < count; ++q)
      out.part_of[static_cast<std::size_t>(split.piece_offset[i] + q)] =
          order[static_cast<std::size_t>(q % parts)];
  }
  return out;
}

/// \brief Merges per-piece values back into per-client totals (e.g. a piece's allocated flow or
/// time): sum over each client's pieces. The allocations of a client's pieces add up because each
/// piece was solved with its own share of the client's size.
inline std::vector<double> merge_pieces(const client_split& split,
                                        const std::vector<double>& piece_values) {
  if (piece_values.size() != split.pieces())
    throw invalid_problem("merge_pieces: one value per piece expected");
  std::vector<double> out(split.clients(), 0.0);
  for (std::size_t q = 0; q < piece_values.size(); ++q)
    out[static_cast<std::size_t>(split.client[q])] += piece_values[q];
  return out;
}

}  // namespace popalloc::pop
