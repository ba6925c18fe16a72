// SPDX-License-Identifier: Apache-2.0
// The small named topology of the TE file-format tests and the te_plan fuzz target (whose
// corpus plans name it): no data file, so both can build it without POPALLOC_TE_DATA_DIR.
#pragma once

#include <cstdint>
#include <vector>

#include <popalloc/te.hpp>

namespace te_test {

/// A 4-cycle a-b-c-d in both directions (capacity 10) with a chord a <-> c (capacity 5).
inline popalloc::te::topology square_topology() {
  std::vector<popalloc::te::arc> arcs;
  for (std::int32_t u = 0; u < 4; ++u) {
    arcs.push_back({u, (u + 1) % 4, 10.0});
    arcs.push_back({(u + 1) % 4, u, 10.0});
  }
  arcs.push_back({0, 2, 5.0});
  arcs.push_back({2, 0, 5.0});
  return popalloc::te::make_topology("square", {"a", "b", "c", "d"}, arcs);
}

}  // namespace te_test
