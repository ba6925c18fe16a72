# SPDX-License-Identifier: Apache-2.0
# For the example.cmake of popalloc-schedule and popalloc-simulate: --space-sharing without
# --throughputs reads the shipped Gavel table (common/shipped_throughputs.hpp), next to the
# installed program (a path relative to bin/, so any install prefix works) or in the source tree
# of this build.
file(RELATIVE_PATH _popalloc_gavel_from_bindir "${CMAKE_INSTALL_FULL_BINDIR}"
     "${CMAKE_INSTALL_FULL_DATADIR}/popalloc/gavel")
target_compile_definitions(${POPALLOC_EXAMPLE_TARGET} PRIVATE
  POPALLOC_CLI_GAVEL_DATA_FROM_BINDIR="${_popalloc_gavel_from_bindir}"
  POPALLOC_CLI_GAVEL_SOURCE_DATA_DIR="${PROJECT_SOURCE_DIR}/data/gavel")
