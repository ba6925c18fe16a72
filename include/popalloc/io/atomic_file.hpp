// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief An output file that appears complete or not at all (temporary file, fsync, rename).
#pragma once

#include <cerrno>
#include <cstdio>
#include <string>
#include <unistd.h>
#include <utility>

#include "popalloc/io/input_error.hpp"
#include "popalloc/io/text_file.hpp"

namespace popalloc {
namespace io {

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

inline atomic_output_file::atomic_output_file(std::string path)
    : path_(std::move(path)),
      temporary_path_(path_ + ".tmp." + std::to_string(static_cast<long>(getpid()))) {
  stream_ = std::fopen(temporary_path_.c_str(), "wb");
  if (stream_ == nullptr)
    throw input_error(path_ + ": cannot create '" + temporary_path_ +
                      "': " + detail::system_message(errno));
  buffer_.reserve(kFlushBytes + 4096);
}

inline atomic_output_file::~atomic_output_file() {
  if (committed_) return;
  if (stream_ != nullptr) std::fclose(stream_);
  std::remove(temporary_path_.c_str());
}

inline void atomic_output_file::flush() {
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), stream_) != buffer_.size())
    fail("write");
  buffer_.clear();
}

inline void atomic_output_file::fail(const char* action) {
  const int error_number = errno;
  if (stream_ != nullptr) std::fclose(stream_);
  stream_ = nullptr;
  std::remove(temporary_path_.c_str());
  throw input_error(path_ + ": cannot " + action + ": " + detail::system_message(error_number));
}

inline void atomic_output_file::commit() {
  flush();
  if (std::fflush(stream_) != 0) fail("write");
  // fsync before rename: otherwise a crash can leave the new name pointing at an empty file.
  if (fsync(fileno(stream_)) != 0) fail("sync");
  const int closed = std::fclose(stream_);
  stream_ = nullptr;
  if (closed != 0) fail("close");
  if (std::rename(temporary_path_.c_str(), path_.c_str()) != 0) fail("rename the temporary file");
  committed_ = true;
}

}  // namespace io
}  // namespace popalloc
