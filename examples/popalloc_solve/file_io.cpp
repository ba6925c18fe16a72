// SPDX-License-Identifier: Apache-2.0
#include "file_io.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <unistd.h>
#include <utility>

#include <sys/stat.h>

#include "errors.hpp"

namespace popalloc_solve {

namespace {

std::string system_message(int error_number) { return std::strerror(error_number); }

/// The directory part of `path` ("." when it has none).
std::string directory_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

std::string read_whole_file(const std::string& path) {
  std::FILE* stream = std::fopen(path.c_str(), "rb");
  if (stream == nullptr) throw input_error(path + ": cannot open: " + system_message(errno));
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
  if (failed) throw input_error(path + ": read error: " + system_message(error_number));
  return content;
}

void append_number(std::string& out, double value) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text, value);
  out.append(text, result.ptr);
}

void append_csv_field(std::string& out, const std::string& field) {
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

void check_output_path(const std::string& path) {
  if (path.empty()) throw input_error("an output path is empty");
  struct stat info {};
  if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode))
    throw input_error(path + ": is a directory, expected a file name");
  const std::string directory = directory_of(path);
  if (access(directory.c_str(), W_OK | X_OK) != 0)
    throw input_error(path + ": cannot write to directory '" + directory +
                      "': " + system_message(errno));
}

atomic_output_file::atomic_output_file(std::string path)
    : path_(std::move(path)),
      temporary_path_(path_ + ".tmp." + std::to_string(static_cast<long>(getpid()))) {
  stream_ = std::fopen(temporary_path_.c_str(), "wb");
  if (stream_ == nullptr)
    throw input_error(path_ + ": cannot create '" + temporary_path_ +
                      "': " + system_message(errno));
  buffer_.reserve(kFlushBytes + 4096);
}

atomic_output_file::~atomic_output_file() {
  if (committed_) return;
  if (stream_ != nullptr) std::fclose(stream_);
  std::remove(temporary_path_.c_str());
}

void atomic_output_file::flush() {
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), stream_) != buffer_.size())
    fail("write");
  buffer_.clear();
}

void atomic_output_file::fail(const char* action) {
  const int error_number = errno;
  if (stream_ != nullptr) std::fclose(stream_);
  stream_ = nullptr;
  std::remove(temporary_path_.c_str());
  throw input_error(path_ + ": cannot " + action + ": " + system_message(error_number));
}

void atomic_output_file::commit() {
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

}  // namespace popalloc_solve
