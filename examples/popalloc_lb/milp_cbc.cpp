// SPDX-License-Identifier: Apache-2.0
// The shard placement MILP through COIN-OR CBC (see milp_cbc.hpp).
#include "milp_cbc.hpp"

#include <chrono>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <popalloc/error.hpp>
#include <popalloc/lb/checker.hpp>

#if defined(POPALLOC_LB_HAVE_CBC) && POPALLOC_LB_HAVE_CBC
#include <CbcModel.hpp>
#include <CbcSolver.hpp>
#include <CoinPackedMatrix.hpp>
#include <OsiClpSolverInterface.hpp>
#endif

namespace popalloc_lb {

#if defined(POPALLOC_LB_HAVE_CBC) && POPALLOC_LB_HAVE_CBC

bool milp_available() { return true; }

namespace {

std::string format_number(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

}  // namespace

popalloc::lb::lb_result solve_milp(const popalloc::lb::problem& prob, const milp_options& options,
                                   milp_report* report) {
  using popalloc::lb::lb_result;
  using popalloc::lb::lb_status;
  const auto start = std::chrono::steady_clock::now();
  prob.validate();
  if (!(options.mip_gap >= 0.0) || !std::isfinite(options.mip_gap))
    throw popalloc::invalid_options("MILP: mip_gap must be finite and >= 0");
  if (!(options.time_limit > 0.0)) throw popalloc::invalid_options("MILP: time_limit must be > 0");
  const std::size_t n = prob.server_count(), s = prob.shards();
  const std::size_t nx = n * s;  // r: columns 0..nx-1, x: nx..2nx-1; column j*n + i
  if (2 * nx > static_cast<std::size_t>(INT32_MAX / 2))
    throw popalloc::invalid_problem("MILP: " + std::to_string(s) + " shards x " +
                                    std::to_string(n) + " servers is too large for CBC");
  const int R = prob.required_replicas();
  const double lo = prob.lower(), hi = prob.upper();
  const bool have_current = !prob.current.shards.empty();

  std::vector<int> rows, cols;
  std::vector<double> values, row_lo, row_hi;
  auto rcol = [&](std::size_t j, std::size_t i) { return static_cast<int>(j * n + i); };
  auto xcol = [&](std::size_t j, std::size_t i) { return static_cast<int>(nx + j * n + i); };
  int row = 0;
  // Balanced load per server; memory per server.
  for (std::size_t i = 0; i < n; ++i, ++row) {
    for (std::size_t j = 0; j < s; ++j)
      if (prob.load[j] != 0.0) {
        rows.push_back(row);
        cols.push_back(rcol(j, i));
        values.push_back(prob.load[j]);
      }
    row_lo.push_back(lo);
    row_hi.push_back(hi);
  }
  for (std::size_t i = 0; i < n; ++i, ++row) {
    for (std::size_t j = 0; j < s; ++j)
      if (prob.memory[j] != 0.0) {
        rows.push_back(row);
        cols.push_back(xcol(j, i));
        values.push_back(prob.memory[j]);
      }
    row_lo.push_back(-COIN_DBL_MAX);
    row_hi.push_back(prob.max_memory);
  }
  // r_ij <= x_ij and, with R > 1, x_ij <= r_ij + 0.9999 (POP's "no idle replica").
  for (std::size_t j = 0; j < s; ++j)
    for (std::size_t i = 0; i < n; ++i) {
      rows.insert(rows.end(), {row, row});
      cols.insert(cols.end(), {rcol(j, i), xcol(j, i)});
      values.insert(values.end(), {1.0, -1.0});
      row_lo.push_back(-COIN_DBL_MAX);
      row_hi.push_back(0.0);
      ++row;
      if (R > 1) {
        rows.insert(rows.end(), {row, row});
        cols.insert(cols.end(), {xcol(j, i), rcol(j, i)});
        values.insert(values.end(), {1.0, -1.0});
        row_lo.push_back(-COIN_DBL_MAX);
        row_hi.push_back(0.9999);
        ++row;
      }
    }
  // sum_i r_ij = 1 and sum_i x_ij >= min(R, N).
  for (std::size_t j = 0; j < s; ++j) {
    for (std::size_t i = 0; i < n; ++i) {
      rows.push_back(row);
      cols.push_back(rcol(j, i));
      values.push_back(1.0);
    }
    row_lo.push_back(1.0);
    row_hi.push_back(1.0);
    ++row;
    for (std::size_t i = 0; i < n; ++i) {
      rows.push_back(row);
      cols.push_back(xcol(j, i));
      values.push_back(1.0);
    }
    row_lo.push_back(static_cast<double>(R));
    row_hi.push_back(COIN_DBL_MAX);
    ++row;
  }
  const int ncols = static_cast<int>(2 * nx);
  CoinPackedMatrix matrix(true, rows.data(), cols.data(), values.data(),
                          static_cast<CoinBigIndex>(values.size()));
  matrix.setDimensions(row, ncols);
  std::vector<double> col_lo(2 * nx, 0.0), col_hi(2 * nx, 1.0), objective(2 * nx, 0.0);
  for (std::size_t j = 0; j < s; ++j)
    for (std::size_t i = 0; i < n; ++i)
      objective[static_cast<std::size_t>(xcol(j, i))] =
          have_current && prob.current.holds(j, static_cast<std::int32_t>(i)) ? 0.0 : 1.0;

  OsiClpSolverInterface solver;
  solver.messageHandler()->setLogLevel(0);
  solver.loadProblem(matrix, col_lo.data(), col_hi.data(), objective.data(), row_lo.data(),
                     row_hi.data());
  for (int c = static_cast<int>(nx); c < ncols; ++c) solver.setInteger(c);

  std::vector<std::string> names;
  std::vector<const char*> name_ptrs;
  std::vector<double> start_values;
  if (options.start != nullptr && options.start->shards.size() == s) {
    // MIP start: every x and r (CBC needs names to match a start to columns).
    names.resize(2 * nx);
    for (std::size_t c = 0; c < 2 * nx; ++c) {
      names[c] = (c < nx ? "r" : "x") + std::to_string(c % nx);
      solver.setColName(static_cast<int>(c), names[c]);
    }
    start_values.assign(2 * nx, 0.0);
    for (std::size_t j = 0; j < s; ++j)
      for (const auto& r : options.start->shards[j]) {
        start_values[static_cast<std::size_t>(rcol(j, static_cast<std::size_t>(r.server)))] =
            r.fraction;
        start_values[static_cast<std::size_t>(xcol(j, static_cast<std::size_t>(r.server)))] = 1.0;
      }
    for (const auto& name : names) name_ptrs.push_back(name.c_str());
  }

  CbcModel model(solver);
  CbcSolverUsefulData data;
  data.noPrinting_ = true;
  CbcMain0(model, data);
  model.setLogLevel(0);
  if (!name_ptrs.empty())
    model.setMIPStart(static_cast<int>(name_ptrs.size()), name_ptrs.data(), start_values.data());
  const std::string gap = format_number(options.mip_gap);
  const std::string seconds = format_number(options.time_limit);
  // Wall-clock limit (CBC counts CPU seconds by default). CglPreProcess is off: CBC 2.10.8
  // crashed in its postProcess (ClpPresolve) on a POP sub-problem of the 1024 x 128 benchmark
  // (round 4, k = 16).
  const char* argv[] = {"popalloc-lb", "-log",    "0",        "-ratioGap",     gap.c_str(),
                        "-timeMode",   "elapsed", "-seconds", seconds.c_str(), "-preprocess",
                        "off",         "-solve",  "-quit"};
  CbcMain1(static_cast<int>(sizeof argv / sizeof argv[0]), argv, model, nullptr, data);

  lb_result out;
  milp_report rep;
  rep.nodes = model.getNodeCount();
  rep.best_bound = model.getBestPossibleObjValue();
  const double* best = model.bestSolution();
  if (model.isProvenInfeasible()) {
    out.status = lb_status::infeasible;
    out.message = "CBC proved the MILP infeasible";
  } else if (best == nullptr) {
    out.status = lb_status::no_solution;
    out.message = "CBC found no integer solution within the time limit";
  } else {
    rep.objective = model.getObjValue();
    rep.proven_optimal = model.isProvenOptimal();
    out.result.shards.resize(s);
    for (std::size_t j = 0; j < s; ++j) {
      double sum = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        const double x = best[xcol(j, i)];
        double r = best[rcol(j, i)];
        if (r < 1e-9) r = 0.0;
        // Keep a replica CBC chose (x = 1) only if it serves queries, or R > 1 requires it.
        if (x > 0.5 && (r > 0.0 || R > 1)) {
          out.result.shards[j].push_back({static_cast<std::int32_t>(i), r});
          sum += r;
        }
      }
      if (sum > 0.0)
        for (auto& e : out.result.shards[j]) e.fraction /= sum;
    }
    const auto c = popalloc::lb::check(prob, out.result);
    out.status = c.feasible ? lb_status::balanced : lb_status::unbalanced;
    out.message = c.feasible ? (rep.proven_optimal ? "optimal within the MIP gap"
                                                   : "time limit: best incumbent")
                             : c.violation;
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (report != nullptr) *report = rep;
  return out;
}

#else

bool milp_available() { return false; }

popalloc::lb::lb_result solve_milp(const popalloc::lb::problem&, const milp_options&,
                                   milp_report*) {
  throw popalloc::invalid_problem(
      "the MILP solver is not available: this build has no COIN-OR CBC (install "
      "coinor-libcbc-dev and pkg-config, then reconfigure)");
}

#endif

}  // namespace popalloc_lb
