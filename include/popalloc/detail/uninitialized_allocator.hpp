// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief An allocator whose vectors' resize() leaves new elements default-initialised.
#pragma once

#include <memory>
#include <new>
#include <type_traits>
#include <utility>

namespace popalloc::detail {

/// resize() without zeroing: the solver writes every element it later reads, in parallel, so
/// that the pages of large per-job arrays and results are first touched by all threads instead
/// of being zeroed by one.
template <class T>
struct uninitialized_allocator : std::allocator<T> {
  uninitialized_allocator() noexcept = default;
  template <class U>
  uninitialized_allocator(const uninitialized_allocator<U>& /*other*/) noexcept {}
  template <class U>
  struct rebind {
    using other = uninitialized_allocator<U>;
  };
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

}  // namespace popalloc::detail
