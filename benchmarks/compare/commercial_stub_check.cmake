# SPDX-License-Identifier: Apache-2.0
# Compile check of popalloc-compare's Gurobi and MOSEK adapters (commercial.cpp) against the
# stub headers of stub/, so that every test build compiles the adapters, licensed solver or not.
# An OBJECT library: its two TUs are compiled with the project's warnings and -Werror and never
# linked, so the stub definitions (which fail every call) cannot reach a program. Included from
# tests/CMakeLists.txt (the test preset) and benchmarks/compare/CMakeLists.txt.
if(NOT TARGET popalloc_compare_commercial_stub_check)
  set(_popalloc_compare_dir "${CMAKE_CURRENT_LIST_DIR}")
  add_library(popalloc_compare_commercial_stub_check OBJECT
    "${_popalloc_compare_dir}/commercial.cpp" "${_popalloc_compare_dir}/stub/commercial_stub.cpp")
  target_include_directories(popalloc_compare_commercial_stub_check PRIVATE
    "${_popalloc_compare_dir}" "${_popalloc_compare_dir}/stub")
  target_compile_definitions(popalloc_compare_commercial_stub_check PRIVATE
    POPALLOC_COMPARE_COMMERCIAL_STUB=1 POPALLOC_COMPARE_HAVE_GUROBI=1 POPALLOC_COMPARE_HAVE_MOSEK=1)
  target_link_libraries(popalloc_compare_commercial_stub_check PRIVATE
    popalloc::popalloc popalloc_dev_flags)
endif()
