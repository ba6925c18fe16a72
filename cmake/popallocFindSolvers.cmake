# SPDX-License-Identifier: Apache-2.0
# External LP/MILP solvers used by popalloc's tests, examples and benchmarks (never by the
# header-only library itself). Each is optional; what is found becomes an imported target:
#   PkgConfig::CLP   COIN-OR CLP   (Debian: coinor-libclp-dev)  exact LP reference
#   PkgConfig::CBC   COIN-OR CBC   (Debian: coinor-libcbc-dev)  exact MILP (load balancing)
#   popalloc_glpk    GLPK          (Debian: libglpk-dev)        second LP solver (benchmarks)
# Imported targets put their include directories on -isystem, so their warnings never meet -Werror.
include_guard(GLOBAL)

find_package(PkgConfig QUIET)
if(PkgConfig_FOUND)
  if(NOT TARGET PkgConfig::CLP)
    pkg_check_modules(CLP QUIET IMPORTED_TARGET GLOBAL clp)
  endif()
  if(NOT TARGET PkgConfig::CBC)
    pkg_check_modules(CBC QUIET IMPORTED_TARGET GLOBAL cbc)
  endif()
endif()

if(NOT TARGET popalloc_glpk)
  find_path(POPALLOC_GLPK_INCLUDE_DIR glpk.h)
  find_library(POPALLOC_GLPK_LIBRARY glpk)
  mark_as_advanced(POPALLOC_GLPK_INCLUDE_DIR POPALLOC_GLPK_LIBRARY)
  if(POPALLOC_GLPK_INCLUDE_DIR AND POPALLOC_GLPK_LIBRARY)
    add_library(popalloc_glpk UNKNOWN IMPORTED GLOBAL)
    set_target_properties(popalloc_glpk PROPERTIES
      IMPORTED_LOCATION "${POPALLOC_GLPK_LIBRARY}"
      INTERFACE_INCLUDE_DIRECTORIES "${POPALLOC_GLPK_INCLUDE_DIR}")
  endif()
endif()

foreach(_solver IN ITEMS CLP CBC)
  if(TARGET PkgConfig::${_solver})
    message(STATUS "popalloc: COIN-OR ${_solver} ${${_solver}_VERSION} found")
  else()
    message(STATUS "popalloc: COIN-OR ${_solver} not found (pkg-config); code that needs it is compiled out")
  endif()
endforeach()
if(TARGET popalloc_glpk)
  message(STATUS "popalloc: GLPK found (${POPALLOC_GLPK_LIBRARY})")
else()
  message(STATUS "popalloc: GLPK not found; code that needs it is compiled out")
endif()
