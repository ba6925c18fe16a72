// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Termination status of a solve.
#pragma once

#include <cstdint>

namespace popalloc {

/// \brief Why a solve stopped. Append-only with explicit values: never reorder.
enum class solve_status : std::uint8_t {
  not_solved = 0,       ///< solve() was not run
  converged = 1,        ///< relative (or absolute) duality gap within tolerance
  iteration_limit = 2,  ///< max_iterations dual evaluations used up
  time_limit = 3,       ///< time_limit_seconds reached
  interrupted = 4,      ///< the progress callback asked to stop
  stalled = 5,          ///< no further progress possible at the working precision
  numerical_error = 6,  ///< NaN/infinity in a dual evaluation, or a dual bound below a feasible
                        ///< objective (precision lost): the numbers are not a certificate
  parts_converged = 7,  ///< POP: every part converged, but the merged allocation's gap to the
                        ///< whole problem's dual bound exceeds the tolerance (a valid
                        ///< certificate of a looser answer)
};

/// \brief Stable lower-case name of a status, e.g. "converged".
inline const char* to_string(solve_status status) noexcept {
  switch (status) {
    case solve_status::not_solved:
      return "not_solved";
    case solve_status::converged:
      return "converged";
    case solve_status::iteration_limit:
      return "iteration_limit";
    case solve_status::time_limit:
      return "time_limit";
    case solve_status::interrupted:
      return "interrupted";
    case solve_status::stalled:
      return "stalled";
    case solve_status::numerical_error:
      return "numerical_error";
    case solve_status::parts_converged:
      return "parts_converged";
  }
  return "unknown";
}

/// \brief The status that says more about what went wrong, for merging the statuses of parts:
/// a failure (numerical_error, or not_solved) before an interruption before a stall before a
/// limit (or parts_converged), each before converged; ties keep `a`.
inline solve_status worse(solve_status a, solve_status b) noexcept {
  auto rank = [](solve_status s) {
    switch (s) {
      case solve_status::converged:
        return 0;
      case solve_status::parts_converged:
      case solve_status::iteration_limit:
      case solve_status::time_limit:
        return 1;
      case solve_status::stalled:
        return 2;
      case solve_status::interrupted:
        return 3;
      case solve_status::not_solved:
      case solve_status::numerical_error:
        break;
    }
    return 4;
  };
  return rank(b) > rank(a) ? b : a;
}

}  // namespace popalloc
