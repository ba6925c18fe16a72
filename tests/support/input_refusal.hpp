// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The message with which a reader refuses its input, for tests of error messages.
#pragma once

#include <string>

#include <popalloc/io/input_error.hpp>

namespace popalloc_test {

/// The io::input_error message of `read()`, or "accepted" when it reads without one.
template <class Read>
std::string refusal(Read read) {
  try {
    read();
  } catch (const popalloc::io::input_error& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace popalloc_test
