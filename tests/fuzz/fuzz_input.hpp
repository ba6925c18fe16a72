// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Helpers shared by the fuzz targets: splitting one input into parts, writing a part to
/// a scratch file for readers that take paths, reading numbers out of raw bytes, and checking
/// that a reader's error names the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace popalloc_fuzz {

/// Splits at the first `separator` line ("\n----\n" by default): inputs stay readable text.
inline std::vector<std::string_view> split_parts(std::string_view input, std::size_t parts,
                                                 std::string_view separator = "\n----\n") {
  std::vector<std::string_view> out;
  while (out.size() + 1 < parts) {
    const std::size_t at = input.find(separator);
    if (at == std::string_view::npos) break;
    out.push_back(input.substr(0, at));
    input.remove_prefix(at + separator.size());
  }
  out.push_back(input);
  while (out.size() < parts) out.emplace_back();
  return out;
}

/// A file with the given content under $TMPDIR (or /tmp), removed on destruction; readers that
/// take a path are fuzzed through it.
class scratch_file {
 public:
  scratch_file(std::string_view content, const char* suffix) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/popalloc_fuzz_" +
            std::to_string(static_cast<long>(getpid())) + "_" + suffix;
    std::FILE* f = std::fopen(path_.c_str(), "wb");
    if (f == nullptr) std::abort();  // the harness's own environment is broken, not the input
    if (!content.empty() && std::fwrite(content.data(), 1, content.size(), f) != content.size())
      std::abort();
    std::fclose(f);
  }
  ~scratch_file() { std::remove(path_.c_str()); }
  scratch_file(const scratch_file&) = delete;
  scratch_file& operator=(const scratch_file&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// Consumes bytes from the front of the input; past the end everything reads as zero.
class byte_reader {
 public:
  byte_reader(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  std::uint8_t byte() { return position_ < size_ ? data_[position_++] : 0; }
  /// Any double bit pattern, NaN, infinities and subnormals included.
  double any_double() {
    std::uint64_t bits = 0;
    for (int k = 0; k < 8; ++k) bits = (bits << 8) | byte();
    double value;
    std::memcpy(&value, &bits, sizeof value);
    return value;
  }
  /// Mostly "interesting" values (0, 1, tiny, huge, negative, NaN, inf) and sometimes any double.
  double interesting_double() {
    static constexpr double table[] = {
        0.0,  1.0, 2.0,  0.5,  1e-12, 1e12, 1e-300, 1e300,    -1.0,
        -0.0, 3.0, 7.25, 1e-9, 1e9,   0.1,  100.0,  4.9e-324, 1.7976931348623157e308};
    const std::uint8_t selector = byte();
    if (selector < 200) return table[selector % (sizeof table / sizeof table[0])];
    if (selector < 210) return std::numeric_limits<double>::quiet_NaN();
    if (selector < 220)
      return (selector & 1) != 0 ? std::numeric_limits<double>::infinity()
                                 : -std::numeric_limits<double>::infinity();
    return any_double();
  }
  bool exhausted() const { return position_ >= size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t position_ = 0;
};

/// Aborts unless a reader's error `message` is "PATH:..." with something after the colon: every
/// refusal must say which file (and, for a line-based format, which line).
inline void require_names_file(std::string_view message, std::string_view path) {
  if (message.rfind(path, 0) != 0 || message.size() <= path.size() + 1 ||
      message[path.size()] != ':')
    std::abort();
}

}  // namespace popalloc_fuzz
