// SPDX-License-Identifier: Apache-2.0
#include "lp_clp.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <popalloc/error.hpp>

#if defined(POPALLOC_TE_HAVE_CLP) && POPALLOC_TE_HAVE_CLP
#include <ClpSimplex.hpp>
#include <ClpSolve.hpp>
#include <CoinPackedMatrix.hpp>
#endif

namespace popalloc_te {

namespace te = popalloc::te;

#if defined(POPALLOC_TE_HAVE_CLP) && POPALLOC_TE_HAVE_CLP

bool lp_solver_available() { return true; }

namespace {

double clp_bound(double v) {
  if (v == std::numeric_limits<double>::infinity()) return COIN_DBL_MAX;
  if (v == -std::numeric_limits<double>::infinity()) return -COIN_DBL_MAX;
  return v;
}

}  // namespace

te::result solve_lp(const te::instance& inst, te::te_objective objective) {
  const auto start = std::chrono::steady_clock::now();
  const te::lp_model lp = te::build_lp(inst, objective);
  const auto columns = static_cast<int>(lp.columns());
  std::vector<CoinBigIndex> starts(lp.column_start.begin(), lp.column_start.end());
  std::vector<int> rows(lp.row_index.begin(), lp.row_index.end());
  std::vector<int> lengths(static_cast<std::size_t>(columns));
  for (int c = 0; c < columns; ++c)
    lengths[static_cast<std::size_t>(c)] =
        static_cast<int>(lp.column_start[static_cast<std::size_t>(c) + 1] -
                         lp.column_start[static_cast<std::size_t>(c)]);
  CoinPackedMatrix matrix(true, lp.rows(), columns, static_cast<CoinBigIndex>(lp.value.size()),
                          lp.value.data(), rows.data(), starts.data(), lengths.data());
  std::vector<double> column_lower(lp.column_lower), column_upper(lp.column_upper),
      row_lower(lp.row_lower), row_upper(lp.row_upper);
  for (auto* v : {&column_lower, &column_upper, &row_lower, &row_upper})
    for (double& x : *v) x = clp_bound(x);
  ClpSimplex model;
  model.setLogLevel(0);
  model.loadProblem(matrix, column_lower.data(), column_upper.data(), lp.objective.data(),
                    row_lower.data(), row_upper.data());
  model.setOptimizationDirection(1.0);
  ClpSolve how;
  how.setSolveType(ClpSolve::useDual);
  model.initialSolve(how);
  if (!model.isProvenOptimal())
    throw popalloc::error("CLP did not solve the LP to optimality (status " +
                          std::to_string(model.status()) + ")");
  te::result out;
  out.kind = objective;
  const double* x = model.primalColumnSolution();
  out.path_flow.assign(x, x + lp.flow_columns);
  // Basic solutions carry round-off (~1e-12): clip tiny negatives so flows are >= 0.
  for (double& f : out.path_flow)
    if (f < 0.0) f = 0.0;
  out.objective = lp.sign * model.objectiveValue();
  out.bound = out.objective;
  out.relative_gap = 0.0;
  out.status = popalloc::te::solve_status::optimal;
  out.iterations = model.numberIterations();
  out.solves = 1;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

double solve_mps_file(const std::string& path) {
  ClpSimplex model;
  model.setLogLevel(0);
  model.messageHandler()->setLogLevel(0);
  if (model.readMps(path.c_str(), true, false) != 0)
    throw popalloc::error(path + ": CLP cannot read the MPS file");
  model.dual();
  if (!model.isProvenOptimal()) throw popalloc::error(path + ": CLP found no optimum");
  return model.objectiveValue();
}

#else

bool lp_solver_available() { return false; }

te::result solve_lp(const te::instance&, te::te_objective) {
  throw popalloc::error(
      "this popalloc-te was built without COIN-OR CLP, so --solver lp is not available "
      "(install coinor-libclp-dev and reconfigure, or use --solver price; --export-mps still "
      "writes the LP for another solver)");
}

double solve_mps_file(const std::string& path) {
  throw popalloc::error(path + ": built without COIN-OR CLP, cannot solve MPS files");
}

#endif

}  // namespace popalloc_te
