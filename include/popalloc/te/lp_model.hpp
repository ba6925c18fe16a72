// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The exact path-formulation LPs of POP's traffic engineering, a solver-neutral sparse
/// model, and a free-format MPS writer, so the LP that `popalloc-te --solver lp` solves can be
/// checked with any LP solver.
///
/// Columns: f_p for every path p (in instance order), then alpha (concurrent-flow) or z
/// (min-max-utilization). The objective is written as a minimisation (MPS's default sense):
/// total-flow minimises -sum f_p, concurrent-flow minimises -alpha, min-max-utilization z.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "popalloc/io/text_file.hpp"
#include "popalloc/te/flow.hpp"
#include "popalloc/te/instance.hpp"

namespace popalloc::te {

/// \brief min obj.x + 0 s.t. row_lower <= A x <= row_upper, column_lower <= x <= column_upper;
/// A in compressed columns.
struct lp_model {
  te_objective kind = te_objective::total_flow;
  std::int64_t flow_columns = 0;  ///< the first columns are the path flows
  std::vector<std::string> row_names, column_names;
  std::vector<double> objective, column_lower, column_upper, row_lower, row_upper;
  std::vector<std::int64_t> column_start{0};
  std::vector<std::int32_t> row_index;
  std::vector<double> value;
  /// The original objective is `sign * (minimised value)`: -1 for the two maximisations.
  double sign = -1.0;

  std::int32_t rows() const { return static_cast<std::int32_t>(row_names.size()); }
  std::int64_t columns() const { return static_cast<std::int64_t>(column_names.size()); }
};

/// \brief Builds the LP of `objective` for `inst`. Rows: cap_<e> for every arc, then per
/// commodity dem_<k> (flow_k <= d_k; = d_k for min-max-utilization) and, for concurrent flow,
/// con_<k> (flow_k - d_k alpha >= 0). min-max-utilization leaves z unbounded above (POP bounds
/// it by 1 in MIN_MAX_LINK_UTIL, which makes the LP infeasible when the demand does not fit).
inline lp_model build_lp(const instance& inst, te_objective objective) {
  inst.validate();
  const double inf = std::numeric_limits<double>::infinity();
  lp_model lp;
  lp.kind = objective;
  lp.sign = objective == te_objective::min_max_utilization ? 1.0 : -1.0;
  const auto m = static_cast<std::int32_t>(inst.graph.arcs.size());
  const auto n = static_cast<std::int32_t>(inst.commodities.size());
  const bool mcf = objective == te_objective::concurrent_flow;
  const bool mlu = objective == te_objective::min_max_utilization;
  for (std::int32_t e = 0; e < m; ++e) {
    lp.row_names.push_back("cap_" + std::to_string(e));
    lp.row_lower.push_back(-inf);
    lp.row_upper.push_back(mlu ? 0.0 : inst.graph.arcs[static_cast<std::size_t>(e)].capacity);
  }
  for (std::int32_t k = 0; k < n; ++k) {
    const double d = inst.commodities[static_cast<std::size_t>(k)].demand;
    lp.row_names.push_back("dem_" + std::to_string(k));
    lp.row_lower.push_back(mlu ? d : -inf);
    lp.row_upper.push_back(d);
  }
  if (mcf)
    for (std::int32_t k = 0; k < n; ++k) {
      lp.row_names.push_back("con_" + std::to_string(k));
      lp.row_lower.push_back(0.0);
      lp.row_upper.push_back(inf);
    }
  for (std::int32_t k = 0; k < n; ++k)
    for (auto p = inst.paths.pair_offset[static_cast<std::size_t>(k)];
         p < inst.paths.pair_offset[static_cast<std::size_t>(k) + 1]; ++p) {
      lp.column_names.push_back("f_" + std::to_string(p));
      lp.objective.push_back(objective == te_objective::total_flow ? -1.0 : 0.0);
      lp.column_lower.push_back(0.0);
      lp.column_upper.push_back(inf);
      // Arc rows in increasing order (paths are simple, so no repeats), then the commodity rows.
      std::vector<std::int32_t> arcs(
          inst.paths.arcs.begin() + inst.paths.path_offset[static_cast<std::size_t>(p)],
          inst.paths.arcs.begin() + inst.paths.path_offset[static_cast<std::size_t>(p) + 1]);
      std::sort(arcs.begin(), arcs.end());
      for (const auto e : arcs) {
        lp.row_index.push_back(e);
        lp.value.push_back(1.0);
      }
      lp.row_index.push_back(m + k);
      lp.value.push_back(1.0);
      if (mcf) {
        lp.row_index.push_back(m + n + k);
        lp.value.push_back(1.0);
      }
      lp.column_start.push_back(static_cast<std::int64_t>(lp.row_index.size()));
    }
  lp.flow_columns = lp.columns();
  if (mcf) {
    lp.column_names.push_back("alpha");
    lp.objective.push_back(-1.0);
    lp.column_lower.push_back(0.0);
    lp.column_upper.push_back(1.0);
    for (std::int32_t k = 0; k < n; ++k) {
      lp.row_index.push_back(m + n + k);
      lp.value.push_back(-inst.commodities[static_cast<std::size_t>(k)].demand);
    }
    lp.column_start.push_back(static_cast<std::int64_t>(lp.row_index.size()));
  }
  if (mlu) {
    lp.column_names.push_back("z");
    lp.objective.push_back(1.0);
    lp.column_lower.push_back(0.0);
    lp.column_upper.push_back(inf);
    for (std::int32_t e = 0; e < m; ++e) {
      const double c = inst.graph.arcs[static_cast<std::size_t>(e)].capacity;
      if (c == 0.0) continue;  // a closed arc: sum of flows <= 0
      lp.row_index.push_back(e);
      lp.value.push_back(-c);
    }
    lp.column_start.push_back(static_cast<std::int64_t>(lp.row_index.size()));
  }
  return lp;
}

/// \brief Appends `lp` as a free-format MPS file (names without spaces, numbers in shortest
/// round-trip form), readable by CLP (`clp FILE.mps`), GLPK (`glpsol --freemps`), HiGHS, etc.
inline void append_mps(std::string& out, const lp_model& lp, const std::string& name) {
  const double inf = std::numeric_limits<double>::infinity();
  out += "* popalloc-te path-formulation LP, objective ";
  out += to_string(lp.kind);
  out += lp.sign < 0 ? " (a maximisation written as min of the negated objective)\n"
                     : " (minimised)\n";
  out += "NAME " + name + "\nROWS\n N obj\n";
  for (std::int32_t r = 0; r < lp.rows(); ++r) {
    const auto ru = static_cast<std::size_t>(r);
    const bool lo = lp.row_lower[ru] > -inf, up = lp.row_upper[ru] < inf;
    out += lo && up ? (lp.row_lower[ru] == lp.row_upper[ru] ? " E " : " L ") : (lo ? " G " : " L ");
    out += lp.row_names[ru];
    out += '\n';
  }
  out += "COLUMNS\n";
  for (std::int64_t c = 0; c < lp.columns(); ++c) {
    const auto cu = static_cast<std::size_t>(c);
    if (lp.objective[cu] != 0.0) {
      out += "    " + lp.column_names[cu] + " obj ";
      io::append_number(out, lp.objective[cu]);
      out += '\n';
    }
    for (auto q = lp.column_start[cu]; q < lp.column_start[cu + 1]; ++q) {
      out += "    " + lp.column_names[cu] + " " +
             lp.row_names[static_cast<std::size_t>(lp.row_index[static_cast<std::size_t>(q)])] +
             " ";
      io::append_number(out, lp.value[static_cast<std::size_t>(q)]);
      out += '\n';
    }
  }
  out += "RHS\n";
  std::string ranges;
  for (std::int32_t r = 0; r < lp.rows(); ++r) {
    const auto ru = static_cast<std::size_t>(r);
    const bool lo = lp.row_lower[ru] > -inf, up = lp.row_upper[ru] < inf;
    const double rhs = up ? lp.row_upper[ru] : lp.row_lower[ru];
    if (rhs != 0.0) {
      out += "    rhs " + lp.row_names[ru] + " ";
      io::append_number(out, rhs);
      out += '\n';
    }
    if (lo && up && lp.row_lower[ru] != lp.row_upper[ru]) {  // L row with range R: [U - R, U]
      ranges += "    rng " + lp.row_names[ru] + " ";
      io::append_number(ranges, lp.row_upper[ru] - lp.row_lower[ru]);
      ranges += '\n';
    }
  }
  if (!ranges.empty()) out += "RANGES\n" + ranges;
  out += "BOUNDS\n";
  for (std::int64_t c = 0; c < lp.columns(); ++c) {
    const auto cu = static_cast<std::size_t>(c);
    if (lp.column_lower[cu] != 0.0) {
      out += lp.column_lower[cu] > -inf ? " LO bnd " : " MI bnd ";
      out += lp.column_names[cu];
      if (lp.column_lower[cu] > -inf) {
        out += ' ';
        io::append_number(out, lp.column_lower[cu]);
      }
      out += '\n';
    }
    if (lp.column_upper[cu] < inf) {
      out += " UP bnd " + lp.column_names[cu] + " ";
      io::append_number(out, lp.column_upper[cu]);
      out += '\n';
    }
  }
  out += "ENDATA\n";
}

}  // namespace popalloc::te
