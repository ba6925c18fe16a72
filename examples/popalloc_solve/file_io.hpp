// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Whole-file reading, shortest round-trip number formatting and atomic output files.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace popalloc_solve {

/// \brief The whole content of `path`. \throws input_error if it cannot be read.
std::string read_whole_file(const std::string& path);

/// \brief Appends the shortest decimal form of `value` that reads back to the same double.
void append_number(std::string& out, double value);

/// \brief Appends a CSV field, quoted when it would otherwise not read back the same (a comma,
/// a leading quote, blanks at either end). \throws input_error for a field that needs quotes and
/// contains a quote: the reader has no escape for that.
void append_csv_field(std::string& out, const std::string& field);

/// \brief Throws input_error unless the directory `path` would be created in is writable, so a
/// typo in an output path is reported before a long solve rather than after it.
void check_output_path(const std::string& path);

/// \brief An output file that appears complete or not at all: the text goes to
/// `PATH.tmp.<pid>` in the same directory and commit() renames it over PATH after fsync.
/// Destroying an uncommitted file removes the temporary file, so a failed run leaves PATH as it
/// was. Text is buffered in memory and written in large blocks.
class atomic_output_file {
 public:
  /// \throws input_error if the temporary file cannot be created.
  explicit atomic_output_file(std::string path);
  ~atomic_output_file();
  atomic_output_file(const atomic_output_file&) = delete;
  atomic_output_file& operator=(const atomic_output_file&) = delete;

  /// \brief The pending text; append to it, then call flush_if_large() now and then.
  std::string& buffer() { return buffer_; }
  void flush_if_large() {
    if (buffer_.size() >= kFlushBytes) flush();
  }
  /// \brief Writes everything, fsyncs and renames over the final path. \throws input_error.
  void commit();

 private:
  static constexpr std::size_t kFlushBytes = std::size_t{1} << 20;
  void flush();
  [[noreturn]] void fail(const char* action);

  std::string path_;
  std::string temporary_path_;
  std::FILE* stream_ = nullptr;
  std::string buffer_;
  bool committed_ = false;
};

}  // namespace popalloc_solve
