// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Whole-file reading, shortest round-trip number formatting, CSV fields and an early
/// check that an output path can be written (POSIX).
#pragma once

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

#include <sys/stat.h>

#include "popalloc/io/input_error.hpp"
#include "popalloc/io/output_paths.hpp"

namespace popalloc {
namespace io {
namespace detail {

inline std::string system_message(int error_number) { return std::strerror(error_number); }

}  // namespace detail

/// \brief The largest input file read_whole_file() accepts by default (4 GiB): far above any
/// instance the programs solve in memory, and a stop for endless streams (`yes |`, a device).
inline constexpr std::size_t default_input_limit = std::size_t{1} << 32;

/// \brief The whole content of `path`. Inputs are text, so a NUL byte ends the read with an
/// error (a binary file or /dev/zero is refused after one block instead of filling memory), and
/// so does content beyond `max_bytes`. \throws input_error if it cannot be read.
inline std::string read_whole_file(const std::string& path,
                                   std::size_t max_bytes = default_input_limit) {
  std::FILE* stream = std::fopen(path.c_str(), "rb");
  if (stream == nullptr)
    throw input_error(path + ": cannot open: " + detail::system_message(errno));
  // Read in blocks until EOF rather than trusting the size (pipes and /proc files report none),
  // but start with room for the whole regular file plus the probe for EOF, so a large file is
  // neither reallocated nor copied.
  constexpr std::size_t block_bytes = std::size_t{1} << 22;
  std::size_t capacity = block_bytes;
  struct stat info {};
  if (fstat(fileno(stream), &info) == 0 && S_ISDIR(info.st_mode)) {
    std::fclose(stream);
    throw input_error(path + ": is a directory, expected a file");
  }
  if (fstat(fileno(stream), &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    if (static_cast<std::uintmax_t>(info.st_size) > max_bytes) {
      std::fclose(stream);
      throw input_error(path + ": is larger than the input limit of " + std::to_string(max_bytes) +
                        " bytes");
    }
    capacity = static_cast<std::size_t>(info.st_size) + 1;
  }
  std::string content(capacity, '\0');
  std::size_t size = 0;
  auto refuse = [&](const std::string& what) {
    std::fclose(stream);
    throw input_error(path + ": " + what);
  };
  for (;;) {
    if (size == content.size()) {
      if (size > max_bytes)
        refuse("is larger than the input limit of " + std::to_string(max_bytes) + " bytes");
      content.resize(std::min(2 * content.size(), max_bytes + 1));
    }
    const std::size_t got = std::fread(&content[size], 1, content.size() - size, stream);
    if (std::memchr(content.data() + size, '\0', got) != nullptr) {
      const char* at = static_cast<const char*>(std::memchr(content.data() + size, '\0', got));
      const auto line = 1 + std::count(static_cast<const char*>(content.data()), at, '\n');
      std::fclose(stream);
      fail_at(path, static_cast<long>(line), "contains a NUL byte: not a text file");
    }
    size += got;
    if (got == 0) break;
  }
  if (size > max_bytes)
    refuse("is larger than the input limit of " + std::to_string(max_bytes) + " bytes");
  content.resize(size);
  const bool failed = std::ferror(stream) != 0;
  const int error_number = errno;
  std::fclose(stream);
  if (failed) throw input_error(path + ": read error: " + detail::system_message(error_number));
  return content;
}

/// \brief Appends the shortest decimal form of `value` that reads back to the same double.
inline void append_number(std::string& out, double value) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text, value);
  out.append(text, result.ptr);
}

/// \brief Appends a CSV field, quoted when it would otherwise not read back the same (a comma,
/// a leading quote, blanks at either end). \throws input_error for a field that needs quotes and
/// contains a quote: the reader has no escape for that.
inline void append_csv_field(std::string& out, const std::string& field) {
  auto blank = [](char c) { return c == ' ' || c == '\t'; };
  const bool needs_quotes =
      field.find(',') != std::string::npos ||
      (!field.empty() && (field.front() == '"' || blank(field.front()) || blank(field.back())));
  if (!needs_quotes) {
    out += field;
    return;
  }
  if (field.find('"') != std::string::npos)
    throw input_error("cannot write '" + field +
                      "' as a CSV field: it needs quotes and contains one");
  out += '"';
  out += field;
  out += '"';
}

/// \brief Throws input_error unless `path` can be written without losing data
/// (resolve_output()), so a typo in an output path is reported before a long solve rather than
/// after it.
inline void check_output_path(const std::string& path) { (void)resolve_output(path); }

}  // namespace io
}  // namespace popalloc
