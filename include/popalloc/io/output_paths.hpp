// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief What an output path names once symbolic links are followed, whether it can be written
/// without losing data, and whether two paths of a run name the same file (POSIX).
#pragma once

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include <sys/stat.h>
#include <sys/types.h>

#include "popalloc/io/input_error.hpp"

namespace popalloc {
namespace io {

/// \brief How an output is written.
enum class output_kind {
  standard_output,  ///< the path "-": written to stdout as it is produced
  stream,           ///< a character device or a FIFO: opened and written directly, never replaced
  new_file,         ///< nothing there yet: a temporary file renamed into place
  regular_file,     ///< an existing regular file: replaced by rename, keeping its permissions
};

/// \brief An output path resolved: `path` is where the data goes (the target of a chain of
/// symbolic links, so replacing it leaves the links in place).
struct output_target {
  output_kind kind = output_kind::new_file;
  std::string path;
  bool exists = false;
  dev_t device = 0;
  ino_t inode = 0;
  mode_t mode = 0;
  /// For new and regular files: the real path of the directory plus the file name, which tells
  /// two not-yet-existing outputs apart.
  std::string canonical;
};

namespace detail {

inline std::string errno_text(int error_number) { return std::strerror(error_number); }

inline std::string parent_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

inline std::string base_of(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

inline std::string real_path(const std::string& path) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) == nullptr) return path;
  return buffer;
}

/// Follows symbolic links from `path` to the first name that is not one (which may not exist:
/// a dangling link is written through, creating its target, as a shell redirection does).
inline std::string follow_links(const std::string& original) {
  // The limit of the kernel's own resolution (ELOOP), so a loop fails as it would in open().
  constexpr int max_links = 40;
  std::string path = original;
  for (int hop = 0; hop <= max_links; ++hop) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) {
      if (errno == ENOENT) return path;
      throw input_error(original + ": cannot examine '" + path + "': " + errno_text(errno));
    }
    if (!S_ISLNK(info.st_mode)) return path;
    std::string target(static_cast<std::size_t>(PATH_MAX), '\0');
    const ssize_t length = ::readlink(path.c_str(), &target[0], target.size());
    if (length < 0)
      throw input_error(original + ": cannot read the link '" + path + "': " + errno_text(errno));
    target.resize(static_cast<std::size_t>(length));
    path = !target.empty() && target[0] == '/' ? target : parent_of(path) + "/" + target;
  }
  throw input_error(original + ": too many levels of symbolic links");
}

}  // namespace detail

/// \brief Resolves an output path and checks that writing it loses nothing it should not:
/// "-" is stdout; character devices and FIFOs are written directly; a regular file (reached
/// through any symbolic links) is replaced by a new file in its directory, which must be
/// writable. \throws input_error for an empty path, a directory, a block device or socket, a
/// read-only file (replacing it would defeat its protection), a link loop, or a directory that
/// is missing or not writable.
inline output_target resolve_output(const std::string& path) {
  output_target t;
  if (path.empty()) throw input_error("an output path is empty");
  if (path == "-") {
    t.kind = output_kind::standard_output;
    t.path = path;
    return t;
  }
  t.path = detail::follow_links(path);
  const std::string shown = t.path == path ? path : path + " (-> " + t.path + ")";
  struct stat info {};
  if (::stat(t.path.c_str(), &info) == 0) {
    t.exists = true;
    t.device = info.st_dev;
    t.inode = info.st_ino;
    t.mode = info.st_mode;
    if (S_ISDIR(info.st_mode)) throw input_error(shown + ": is a directory, expected a file name");
    if (S_ISCHR(info.st_mode) || S_ISFIFO(info.st_mode)) {
      t.kind = output_kind::stream;
      if (::access(t.path.c_str(), W_OK) != 0)
        throw input_error(shown + ": cannot write: " + detail::errno_text(errno));
      return t;
    }
    if (!S_ISREG(info.st_mode))
      throw input_error(shown + ": is neither a regular file, a character device nor a FIFO");
    // The write bits, not access(): root may write anything, but a file its owner made
    // read-only is one nobody meant to be overwritten.
    if ((info.st_mode & 0222) == 0 || ::access(t.path.c_str(), W_OK) != 0)
      throw input_error(shown + ": is read-only; not replacing it");
    t.kind = output_kind::regular_file;
  } else if (errno != ENOENT) {
    throw input_error(shown + ": cannot examine: " + detail::errno_text(errno));
  }
  const std::string directory = detail::parent_of(t.path);
  if (::access(directory.c_str(), W_OK | X_OK) != 0)
    throw input_error(shown + ": cannot write to directory '" + directory +
                      "': " + detail::errno_text(errno));
  t.canonical = detail::real_path(directory) + "/" + detail::base_of(t.path);
  return t;
}

/// \brief A path a program reads or writes, with the option that named it (for messages).
struct named_path {
  std::string option;  ///< e.g. "--output"
  std::string path;
};

/// \brief Checks every output with resolve_output() and that no output is the same file as an
/// input or as another output (the same device and inode once links are followed, or for files
/// that do not exist yet the same real directory and name). Standard output and devices are left
/// out: writing two outputs to /dev/null loses nothing. Empty paths are skipped (an option not
/// given). \throws input_error naming both options.
inline void check_output_files(const std::vector<named_path>& outputs,
                               const std::vector<named_path>& inputs = {}) {
  struct identity {
    const named_path* named;
    bool exists;
    dev_t device;
    ino_t inode;
    std::string canonical;
  };
  std::vector<identity> seen;
  auto clash = [](const identity& a, const identity& b) {
    if (a.exists && b.exists) return a.device == b.device && a.inode == b.inode;
    return !a.canonical.empty() && a.canonical == b.canonical;
  };
  auto describe = [](const named_path& p) { return p.option + " '" + p.path + "'"; };
  for (const named_path& input : inputs) {
    if (input.path.empty() || input.path == "-") continue;
    struct stat info {};
    if (::stat(input.path.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) continue;
    seen.push_back({&input, true, info.st_dev, info.st_ino, detail::real_path(input.path)});
  }
  const std::size_t input_count = seen.size();
  for (const named_path& output : outputs) {
    if (output.path.empty()) continue;
    const output_target t = resolve_output(output.path);
    if (t.kind == output_kind::standard_output || t.kind == output_kind::stream) continue;
    identity mine{&output, t.exists, t.device, t.inode, t.canonical};
    for (std::size_t k = 0; k < seen.size(); ++k)
      if (clash(mine, seen[k]))
        throw input_error(describe(output) + " is the same file as " +
                          (k < input_count ? "the input " : "") + describe(*seen[k].named) +
                          "; refusing to overwrite it");
    seen.push_back(std::move(mine));
  }
}

}  // namespace io
}  // namespace popalloc
