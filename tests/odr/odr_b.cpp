// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief odr_check TU B: includes the facade; linking it with TU A catches non-inline definitions.
#include <string>

#include <popalloc/popalloc.hpp>

std::string odr_b() {
  return std::string(popalloc::to_string(popalloc::solve_status::converged)) + " " +
         popalloc::version_string;
}
