// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Whole-file reading, shortest round-trip number formatting, CSV fields and an early
/// check that an output path is writable (POSIX).
#pragma once

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <string>
#include <unistd.h>

#include <sys/stat.h>

#include "popalloc/io/input_error.hpp"

namespace popalloc {
namespace io {
namespace detail {

inline std::string system_message(int error_number) { return std::strerror(error_number); }

/// The directory part of `path` ("." when it has none).
inline std::string directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace detail

/// \brief The whole content of `path`. \throws input_error if it cannot be read.
inline std::string read_whole_file(const std::string& path) {
  std::FILE* stream = std::fopen(path.c_str(), "rb");
  if (stream == nullptr)
    throw input_error(path + ": cannot open: " + detail::system_message(errno));
  // Read in blocks until EOF rather than trusting the size (pipes and /proc files report none),
  // but start with room for the whole regular file plus the probe for EOF, so a large file is
  // neither reallocated nor copied.
  constexpr std::size_t kBlock = std::size_t{1} << 22;
  std::size_t capacity = kBlock;
  struct stat info {};
  if (fstat(fileno(stream), &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0)
    capacity = static_cast<std::size_t>(info.st_size) + 1;
  std::string content(capacity, '\0');
  std::size_t size = 0;
  for (;;) {
    if (size == content.size()) content.resize(2 * content.size());
    const std::size_t got = std::fread(&content[size], 1, content.size() - size, stream);
    size += got;
    if (got == 0) break;
  }
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

/// \brief Throws input_error unless the directory `path` would be created in is writable, so a
/// typo in an output path is reported before a long solve rather than after it.
inline void check_output_path(const std::string& path) {
  if (path.empty()) throw input_error("an output path is empty");
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    throw input_error(path + ": is a directory, expected a file name");
  const std::string directory = detail::directory_of(path);
  if (access(directory.c_str(), W_OK | X_OK) != 0)
    throw input_error(path + ": cannot write to directory '" + directory +
                      "': " + detail::system_message(errno));
}

}  // namespace io
}  // namespace popalloc
