// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The exception of popalloc's file readers and writers for problems the user can fix (a
/// malformed file, an unreadable or unwritable path). Messages are complete ("FILE:LINE: what").
#pragma once

#include <cstdio>
#include <string>

#include "popalloc/error.hpp"

namespace popalloc {
namespace io {

namespace detail {

/// `text` with control characters other than tab and newline written as \xHH: messages quote
/// pieces of the input, and a NUL or an escape sequence from a hostile file must neither cut the
/// message short nor reach the terminal.
inline std::string printable(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\t' && c != '\n') || byte == 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", static_cast<unsigned>(byte));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace detail

/// \brief A malformed input file or an unusable path. The message is complete and meant to be
/// printed as is; command-line programs map it to exit code 2.
class input_error : public error {
 public:
  explicit input_error(const std::string& what) : error(detail::printable(what)) {}
  explicit input_error(const char* what) : input_error(std::string(what)) {}
};

/// \brief Throws input_error("FILE:LINE: what").
[[noreturn]] inline void fail_at(const std::string& file, long line, const std::string& what) {
  throw input_error(file + ":" + std::to_string(line) + ": " + what);
}

}  // namespace io
}  // namespace popalloc
