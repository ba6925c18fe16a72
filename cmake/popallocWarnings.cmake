# SPDX-License-Identifier: Apache-2.0
# popalloc_add_warnings(<interface-target>)
#
# Puts popalloc's warning set on a private INTERFACE helper target (popalloc_dev_flags) that only
# popalloc's own tests, examples and benchmarks link. Never applied to popalloc::popalloc, and never
# through add_compile_options/CMAKE_CXX_FLAGS, so nothing leaks into consumer projects.
# Third-party headers come in through imported targets (Eigen3::Eigen, doctest::doctest,
# PkgConfig::CLP, CCCL::CCCL) and are therefore -isystem: their warnings cannot trip -Werror.
function(popalloc_add_warnings target)
  set(_gnu_like
    -Wall -Wextra -Wpedantic -Wshadow -Wconversion -Wnon-virtual-dtor -Wold-style-cast)
  if(POPALLOC_WARNINGS_AS_ERRORS)
    list(APPEND _gnu_like -Werror)
  endif()
  list(JOIN _gnu_like "$<SEMICOLON>" _gnu_like_genex)
  target_compile_options(${target} INTERFACE
    "$<$<COMPILE_LANG_AND_ID:CXX,GNU,Clang,AppleClang,IntelLLVM>:${_gnu_like_genex}>"
    "$<$<COMPILE_LANG_AND_ID:CXX,MSVC>:/W4;/permissive-$<$<BOOL:${POPALLOC_WARNINGS_AS_ERRORS}>:;/WX>>")
  # popalloc uses Eigen on the host only (kernels go through Thrust on raw arrays). EIGEN_NO_CUDA
  # keeps Eigen's __host__ __device__ annotations out of nvcc TUs, which (a) silences Eigen's own
  # nvcc diagnostics #20012-D/#20015-D (DenseStorage.h, arch/CUDA/Complex.h) that would otherwise
  # break --Werror, and (b) makes Eigen's code identical in .cu and .cpp TUs.
  target_compile_definitions(${target} INTERFACE "$<$<COMPILE_LANGUAGE:CUDA>:EIGEN_NO_CUDA>")
  # nvcc: only host-compiler -Wall; the stricter set (-Wold-style-cast, -Wconversion, ...) fires on
  # nvcc's generated stubs. -Werror for CUDA is opt-in (POPALLOC_CUDA_WARNINGS_AS_ERRORS, cuda preset).
  if(POPALLOC_CUDA_WARNINGS_AS_ERRORS)
    target_compile_options(${target} INTERFACE
      "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Werror;--Werror=all-warnings>")
  else()
    target_compile_options(${target} INTERFACE "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall>")
  endif()
endfunction()
