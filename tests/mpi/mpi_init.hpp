// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief MPI for doctest cases: initialised on first use (singleton, no launcher needed) and
/// finalised at exit. Every case runs in its own process under ctest.
#pragma once

#include <cstdlib>

#include <popalloc/backend/mpi.hpp>

namespace popalloc_test {

inline void finalize_mpi() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) MPI_Finalize();
}

inline void ensure_mpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized != 0) return;
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  std::atexit(finalize_mpi);
}

}  // namespace popalloc_test
