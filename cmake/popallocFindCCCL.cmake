# SPDX-License-Identifier: Apache-2.0
# popalloc_find_cccl(<device-system> [REQUIRED])
#
# Makes the target CCCL::CCCL available with the requested Thrust device system
# (CUDA|OMP|TBB|CPP). Used both by popalloc's own build and by the installed popallocConfig.cmake
# (thrust component), so the in-tree and installed popalloc::thrust resolve the same way.
#
#  1. CCCL from the CUDA toolkit (find_package(CCCL CONFIG)); the device system is passed through
#     CCCL_THRUST_DEVICE_SYSTEM, which CCCL's default CCCL::Thrust target reads. A CUDA toolkit is
#     searched at CUDAToolkit_ROOT, $CUDA_PATH and /usr/local/cuda.
#  2. Fallback: a standalone Thrust package (e.g. Debian's libthrust-dev 1.17), wrapped in an
#     imported CCCL::CCCL target so that popalloc::thrust's link interface is the same.
#
# If CCCL::CCCL already exists (a parent project found CCCL), it is used as is.
# Sets POPALLOC_CCCL_FOUND and POPALLOC_CCCL_PROVIDER (CCCL|Thrust) in the caller's scope.
macro(popalloc_find_cccl _popalloc_sys)
  set(_popalloc_cccl_args ${ARGN})
  set(POPALLOC_CCCL_FOUND FALSE)
  if(TARGET CCCL::CCCL)
    set(POPALLOC_CCCL_FOUND TRUE)
    if(NOT DEFINED POPALLOC_CCCL_PROVIDER)
      set(POPALLOC_CCCL_PROVIDER "CCCL")
    endif()
  else()
    # Normal variable: honoured by CCCL's thrust_create_target(FROM_OPTIONS) even when a stale
    # cache entry with another value exists.
    set(CCCL_THRUST_DEVICE_SYSTEM "${_popalloc_sys}")
    set(_popalloc_cccl_hints)
    foreach(_popalloc_root IN ITEMS "${CUDAToolkit_ROOT}" "$ENV{CUDAToolkit_ROOT}" "$ENV{CUDA_PATH}" "/usr/local/cuda")
      if(_popalloc_root AND IS_DIRECTORY "${_popalloc_root}/lib64/cmake/cccl")
        list(APPEND _popalloc_cccl_hints "${_popalloc_root}/lib64/cmake")
      endif()
      if(_popalloc_root AND IS_DIRECTORY "${_popalloc_root}/lib/cmake/cccl")
        list(APPEND _popalloc_cccl_hints "${_popalloc_root}/lib/cmake")
      endif()
    endforeach()
    find_package(CCCL CONFIG QUIET HINTS ${_popalloc_cccl_hints})
    if(CCCL_FOUND AND TARGET CCCL::CCCL)
      set(POPALLOC_CCCL_FOUND TRUE)
      set(POPALLOC_CCCL_PROVIDER "CCCL")
    else()
      find_package(Thrust CONFIG QUIET)
      if(Thrust_FOUND AND COMMAND thrust_create_target)
        if(NOT TARGET popalloc_thrust_system)
          thrust_create_target(popalloc_thrust_system HOST CPP DEVICE ${_popalloc_sys} GLOBAL)
        endif()
        add_library(CCCL::CCCL INTERFACE IMPORTED GLOBAL)
        target_link_libraries(CCCL::CCCL INTERFACE popalloc_thrust_system)
        set(POPALLOC_CCCL_FOUND TRUE)
        set(POPALLOC_CCCL_PROVIDER "Thrust")
        message(STATUS "popalloc: CCCL not found; using standalone Thrust ${Thrust_VERSION} (${_popalloc_sys})")
      endif()
    endif()
  endif()
  if(POPALLOC_CCCL_FOUND)
    # CCCL's include dirs sit on non-imported helper targets and would arrive as -I; re-declare them
    # on the imported CCCL::CCCL so they become -isystem and Thrust/CUB warnings cannot trip -Werror.
    foreach(_popalloc_t IN ITEMS _Thrust_Thrust _CUB_CUB _libcudacxx_libcudacxx)
      if(TARGET ${_popalloc_t})
        get_target_property(_popalloc_dirs ${_popalloc_t} INTERFACE_INCLUDE_DIRECTORIES)
        if(_popalloc_dirs)
          set_property(TARGET CCCL::CCCL APPEND PROPERTY INTERFACE_SYSTEM_INCLUDE_DIRECTORIES ${_popalloc_dirs})
          set_property(TARGET CCCL::CCCL APPEND PROPERTY INTERFACE_INCLUDE_DIRECTORIES ${_popalloc_dirs})
        endif()
      endif()
    endforeach()
    unset(_popalloc_t)
    unset(_popalloc_dirs)
  endif()
  if(NOT POPALLOC_CCCL_FOUND AND "REQUIRED" IN_LIST _popalloc_cccl_args)
    message(FATAL_ERROR
      "popalloc: neither CCCL (CUDA toolkit: set CUDAToolkit_ROOT or CCCL_DIR) nor a standalone "
      "Thrust package (Debian: libthrust-dev) was found; needed for popalloc::thrust")
  endif()
  unset(_popalloc_cccl_args)
  unset(_popalloc_cccl_hints)
  unset(_popalloc_root)
endmacro()
