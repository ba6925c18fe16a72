// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The one exception type of popalloc-solve for problems the user can fix (bad command
/// line, malformed input file, unwritable output path). main() maps it to exit code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace popalloc_solve {

/// \brief A usage or input error. The message is complete ("FILE:LINE: what is wrong" for file
/// contents) and is printed as is.
class input_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// \brief Throws input_error("FILE:LINE: what").
[[noreturn]] inline void fail_at(const std::string& file, long line, const std::string& what) {
  throw input_error(file + ":" + std::to_string(line) + ": " + what);
}

}  // namespace popalloc_solve
