# SPDX-License-Identifier: Apache-2.0
# popalloc-te: the exact LP solver (COIN-OR CLP) is optional; without it --solver lp reports a
# clear error and everything else works.
if(TARGET PkgConfig::CLP)
  target_link_libraries(${POPALLOC_EXAMPLE_TARGET} PRIVATE PkgConfig::CLP)
  target_compile_definitions(${POPALLOC_EXAMPLE_TARGET} PRIVATE POPALLOC_TE_HAVE_CLP=1)
endif()
