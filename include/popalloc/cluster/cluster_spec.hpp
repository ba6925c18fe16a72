// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A heterogeneous GPU cluster: ordered GPU type names and how many GPUs of each type.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "popalloc/error.hpp"

namespace popalloc::cluster {

/// \brief GPU types and counts, in a fixed order that every per-type vector of the cluster
/// layer (job throughputs, allocations, prices) follows.
struct gpu_cluster {
  std::vector<std::string> types;    ///< GPU type names, unique, e.g. {"v100", "p100", "k80"}
  std::vector<std::int64_t> counts;  ///< GPUs of each type, >= 0

  std::size_t size() const { return types.size(); }

  /// \brief Total number of GPUs N.
  std::int64_t total() const {
    std::int64_t sum = 0;
    for (const std::int64_t c : counts) sum += c;
    return sum;
  }

  /// \brief Position of `type` in `types`, or -1.
  int index_of(std::string_view type) const {
    for (std::size_t w = 0; w < types.size(); ++w)
      if (types[w] == type) return static_cast<int>(w);
    return -1;
  }

  /// \brief The spec string ("v100:36,p100:36,k80:36") that parses back to this cluster.
  std::string to_string() const {
    std::string out;
    for (std::size_t w = 0; w < types.size(); ++w) {
      if (w) out += ',';
      out += types[w] + ':' + std::to_string(counts[w]);
    }
    return out;
  }

  /// \brief Throws invalid_problem unless the cluster is usable: at least one type, unique
  /// non-empty names, counts >= 0 and at least one GPU in total.
  void validate() const {
    if (types.empty()) throw invalid_problem("the cluster has no GPU types");
    if (types.size() != counts.size())
      throw invalid_problem("the cluster has " + std::to_string(types.size()) + " type names but " +
                            std::to_string(counts.size()) + " counts");
    for (std::size_t w = 0; w < types.size(); ++w) {
      if (types[w].empty()) throw invalid_problem("empty GPU type name in the cluster");
      for (std::size_t v = 0; v < w; ++v)
        if (types[v] == types[w])
          throw invalid_problem("GPU type '" + types[w] + "' is listed twice");
      if (counts[w] < 0) throw invalid_problem("GPU type '" + types[w] + "' has a negative count");
    }
    if (total() <= 0) throw invalid_problem("the cluster has no GPUs");
  }
};

namespace detail {
inline std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() &&
         (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

inline std::int64_t parse_count(std::string_view text, std::string_view type) {
  std::int64_t value = 0;
  const char* first = text.data();
  const char* last = text.data() + text.size();
  const auto [end, ec] = std::from_chars(first, last, value);
  if (text.empty() || ec != std::errc() || end != last)
    throw invalid_problem("GPU count '" + std::string(text) + "' of type '" + std::string(type) +
                          "' is not a whole number");
  if (value <= 0)
    throw invalid_problem("GPU count of type '" + std::string(type) + "' must be positive, got " +
                          std::string(text));
  return value;
}
}  // namespace detail

/// \brief Parses "TYPE:COUNT,TYPE:COUNT,..." (e.g. "v100:36,p100:36,k80:36"), keeping the given
/// order, or Gavel's shorthand "A:B:C" (three bare counts: v100, p100, k80, as its
/// `--cluster_spec 36:36:36`). Counts must be positive whole numbers.
/// \param known if not empty, the GPU types that exist (e.g. the throughput table's): any other
/// name is an error.
/// \throws invalid_problem naming the offending part.
inline gpu_cluster parse_cluster(std::string_view spec,
                                 const std::vector<std::string>& known = {}) {
  spec = detail::trim(spec);
  if (spec.empty()) throw invalid_problem("empty cluster spec (expected TYPE:COUNT,...)");
  gpu_cluster out;
  if (spec.find(',') == std::string_view::npos &&
      spec.find_first_not_of("0123456789:") == std::string_view::npos) {
    // Gavel's shorthand v100:p100:k80.
    static const char* const gavel_order[] = {"v100", "p100", "k80"};
    std::size_t start = 0;
    for (int w = 0; w < 3; ++w) {
      const std::size_t colon = spec.find(':', start);
      if ((w < 2) != (colon != std::string_view::npos))
        throw invalid_problem("cluster shorthand '" + std::string(spec) +
                              "' must have exactly three counts (v100:p100:k80)");
      const std::string_view part = spec.substr(
          start, colon == std::string_view::npos ? std::string_view::npos : colon - start);
      out.types.emplace_back(gavel_order[w]);
      out.counts.push_back(detail::parse_count(part, gavel_order[w]));
      start = colon + 1;
    }
  } else {
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = spec.find(',', start);
      const std::string_view item = detail::trim(spec.substr(
          start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
      const std::size_t colon = item.find(':');
      if (item.empty() || colon == std::string_view::npos)
        throw invalid_problem("cluster spec entry '" + std::string(item) + "' is not TYPE:COUNT");
      const std::string type(detail::trim(item.substr(0, colon)));
      if (type.empty())
        throw invalid_problem("cluster spec entry '" + std::string(item) + "' has no type name");
      if (out.index_of(type) >= 0)
        throw invalid_problem("GPU type '" + type + "' appears twice in the cluster spec");
      out.types.push_back(type);
      out.counts.push_back(detail::parse_count(detail::trim(item.substr(colon + 1)), type));
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
  }
  if (!known.empty()) {
    for (const std::string& type : out.types) {
      bool found = false;
      for (const std::string& k : known) found = found || k == type;
      if (!found) {
        std::string list;
        for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
        throw invalid_problem("unknown GPU type '" + type + "' (known: " + list + ")");
      }
    }
  }
  out.validate();
  return out;
}

}  // namespace popalloc::cluster
