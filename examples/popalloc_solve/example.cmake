# SPDX-License-Identifier: Apache-2.0
# popalloc-solve under mpirun (docs/mpi.md): with popalloc::mpi available the program links MPI
# and joins a distributed solve when an MPI launcher started it; run directly, it never
# initialises MPI and behaves exactly as without MPI.
if(TARGET popalloc::mpi)
  target_link_libraries(${POPALLOC_EXAMPLE_TARGET} PRIVATE popalloc::mpi)
  target_compile_definitions(${POPALLOC_EXAMPLE_TARGET} PRIVATE POPALLOC_SOLVE_WITH_MPI=1)
endif()

# The gavel instance family (families.cpp) reads Gavel's throughputs from popalloc-schedule's
# embedded table.
target_sources(${POPALLOC_EXAMPLE_TARGET} PRIVATE
               "${PROJECT_SOURCE_DIR}/examples/popalloc_schedule/embedded_throughputs.cpp")
