// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief odr_check TU A: includes the facade; linking it with TU B catches non-inline definitions.
#include <string>

#include <popalloc/popalloc.hpp>

std::string odr_a() {
  return std::string(popalloc::to_string(popalloc::solve_status::converged)) + " " +
         popalloc::version_string;
}
