// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The exception of popalloc's file readers and writers for problems the user can fix (a
/// malformed file, an unreadable or unwritable path). Messages are complete ("FILE:LINE: what").
#pragma once

#include <string>

#include "popalloc/error.hpp"

namespace popalloc {
namespace io {

/// \brief A malformed input file or an unusable path. The message is complete and meant to be
/// printed as is; command-line programs map it to exit code 2.
class input_error : public error {
 public:
  using error::error;
};

/// \brief Throws input_error("FILE:LINE: what").
[[noreturn]] inline void fail_at(const std::string& file, long line, const std::string& what) {
  throw input_error(file + ":" + std::to_string(line) + ": " + what);
}

}  // namespace io
}  // namespace popalloc
