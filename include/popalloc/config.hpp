// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Compiler and parallelism macros shared by every popalloc header.
#pragma once

/// Marks functions that must be callable from host and device code (Thrust CUDA backend).
#if defined(__CUDACC__) || defined(__HIPCC__)
#define POPALLOC_HD __host__ __device__
#else
#define POPALLOC_HD
#endif

/// Inlined at every call site whatever the compiler's size heuristics say: the per-option helpers
/// of the per-job passes, so that the view's loop-invariant tests leave the option loops.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define POPALLOC_INLINE __forceinline__
#elif defined(__GNUC__)
#define POPALLOC_INLINE inline __attribute__((always_inline))
#else
#define POPALLOC_INLINE inline
#endif

/// `POPALLOC_PRAGMA_OMP(omp parallel for)` expands to an OpenMP pragma only when the build enables
/// OpenMP (`POPALLOC_HAS_OPENMP` and `-fopenmp`), so serial builds stay free of
/// `-Wunknown-pragmas` under `-Werror`. Variadic because clauses contain commas.
#if defined(POPALLOC_HAS_OPENMP) && defined(_OPENMP)
#define POPALLOC_PRAGMA_OMP(...) _Pragma(#__VA_ARGS__)
#define POPALLOC_OPENMP_ACTIVE 1
#else
#define POPALLOC_PRAGMA_OMP(...)
#define POPALLOC_OPENMP_ACTIVE 0
#endif
