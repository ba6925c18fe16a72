// SPDX-License-Identifier: Apache-2.0
// The exact LP through COIN-OR CLP (optional at build time: POPALLOC_TE_HAVE_CLP).
#pragma once

#include <string>

#include <popalloc/te/flow.hpp>
#include <popalloc/te/instance.hpp>
#include <popalloc/te/lp_model.hpp>

namespace popalloc_te {

/// True when this build can solve LPs (linked with CLP).
bool lp_solver_available();

/// Solves build_lp(inst, objective) with CLP's dual simplex. Throws popalloc::error when CLP is
/// not available or the LP is not solved to optimality.
popalloc::te::result solve_lp(const popalloc::te::instance& inst,
                              popalloc::te::te_objective objective);

/// Optimal objective (minimisation sense, as written) of an MPS file read by CLP; used by the
/// tests to check --export-mps. Throws popalloc::error when CLP is missing or the LP fails.
double solve_mps_file(const std::string& path);

}  // namespace popalloc_te
