# SPDX-License-Identifier: Apache-2.0
# popalloc-lb: the exact MILP needs COIN-OR CBC. Without it the program still builds and
# `--solver milp` stops with a clear error (exit status 2).
if(TARGET PkgConfig::CBC)
  target_link_libraries(${POPALLOC_EXAMPLE_TARGET} PRIVATE PkgConfig::CBC)
  target_compile_definitions(${POPALLOC_EXAMPLE_TARGET} PRIVATE POPALLOC_LB_HAVE_CBC=1)
endif()
