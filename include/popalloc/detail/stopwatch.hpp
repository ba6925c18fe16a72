// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Wall-clock seconds since construction, on the steady clock (time limits and the
/// timings reported in results).
#pragma once

#include <chrono>

namespace popalloc::detail {

class stopwatch {
 public:
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  void restart() { start_ = std::chrono::steady_clock::now(); }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace popalloc::detail
