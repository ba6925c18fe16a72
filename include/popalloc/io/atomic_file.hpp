// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief An output file that appears complete or not at all (temporary file, fsync, rename),
/// written through symbolic links, directly to devices, FIFOs and stdout, and never left behind
/// as a temporary file when a signal ends the program.
#pragma once

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <initializer_list>
#include <signal.h>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include <sys/stat.h>

#include "popalloc/io/input_error.hpp"
#include "popalloc/io/output_paths.hpp"
#include "popalloc/io/text_file.hpp"

namespace popalloc {
namespace io {
namespace detail {

/// The temporary files that exist right now, readable from a signal handler: fixed storage,
/// a slot is filled before it is marked used and unmarked before it is reused. Each slot keeps
/// the process that made the file: a forked child (popalloc-lb runs CBC in one) that dies on a
/// signal must not remove its parent's files.
struct temporary_registry {
  static constexpr int slots = 64;
  static constexpr std::size_t path_bytes = 4096;
  char paths[slots][path_bytes];
  pid_t owner[slots];
  volatile std::sig_atomic_t used[slots];
};
inline temporary_registry temporaries{};

/// The signals whose default action ends the process; a temporary file is removed before any of
/// them does.
inline constexpr int terminating_signals[] = {
    SIGHUP,  SIGINT,  SIGQUIT, SIGTERM, SIGPIPE, SIGALRM, SIGUSR1, SIGUSR2, SIGXCPU,  SIGXFSZ,
    SIGABRT, SIGSEGV, SIGBUS,  SIGFPE,  SIGILL,  SIGTRAP, SIGSYS,  SIGPROF, SIGVTALRM};

}  // namespace detail

/// \brief Removes every temporary output file of this process. Async-signal-safe: a program's
/// own signal handler calls it before it ends the process.
inline void remove_temporary_files() noexcept {
  const pid_t self = ::getpid();
  for (int k = 0; k < detail::temporary_registry::slots; ++k)
    if (detail::temporaries.used[k] != 0 && detail::temporaries.owner[k] == self)
      ::unlink(detail::temporaries.paths[k]);
}

namespace detail {

inline void remove_temporaries_and_die(int signal_number) {
  remove_temporary_files();
  // Back to the default action explicitly (a program may have reinstalled this handler with
  // signal(), without SA_RESETHAND): the raised signal is delivered when this handler returns
  // and ends the process as the original one would have.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(signal_number, &default_action, nullptr);
  ::raise(signal_number);
}

/// Installs remove_temporaries_and_die for every terminating signal whose action is the default:
/// a program's own handlers and ignored signals are left alone. Checked at every temporary file
/// (a few system calls), so a default action restored since the last one is covered too.
inline void install_cleanup_handlers() {
  for (const int signal_number : terminating_signals) {
    struct sigaction current {};
    if (::sigaction(signal_number, nullptr, &current) != 0) continue;
    if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) continue;
    struct sigaction cleanup {};
    cleanup.sa_handler = remove_temporaries_and_die;
    sigemptyset(&cleanup.sa_mask);
    cleanup.sa_flags = static_cast<int>(SA_RESETHAND);
    ::sigaction(signal_number, &cleanup, nullptr);
  }
}

inline int register_temporary(const std::string& path) {
  if (path.size() >= temporary_registry::path_bytes) return -1;
  for (int k = 0; k < temporary_registry::slots; ++k) {
    if (temporaries.used[k] != 0) continue;
    std::memcpy(temporaries.paths[k], path.c_str(), path.size() + 1);
    temporaries.owner[k] = ::getpid();
    temporaries.used[k] = 1;
    return k;
  }
  return -1;
}

inline void unregister_temporary(int slot) {
  if (slot >= 0) temporaries.used[slot] = 0;
}

/// Blocks every terminating signal for its lifetime, so that renaming a set of outputs into
/// place is not cut in half.
class signal_block {
 public:
  signal_block() {
    sigset_t all;
    sigemptyset(&all);
    for (const int signal_number : terminating_signals) sigaddset(&all, signal_number);
    ::sigprocmask(SIG_BLOCK, &all, &previous_);
  }
  ~signal_block() { ::sigprocmask(SIG_SETMASK, &previous_, nullptr); }
  signal_block(const signal_block&) = delete;
  signal_block& operator=(const signal_block&) = delete;

 private:
  sigset_t previous_;
};

}  // namespace detail

/// \brief An output file that appears complete or not at all. For a regular file (existing or
/// not, reached through any symbolic links) the text goes to `TARGET.tmp.<pid>` beside it and
/// commit() renames it over TARGET after fsync, keeping an existing file's permission bits.
/// "-" (stdout), character devices and FIFOs are written directly: they cannot be replaced, and
/// replacing /dev/null would be a disaster. Destroying an uncommitted file, or a terminating
/// signal, removes the temporary file, so a failed run leaves TARGET as it was. Text is buffered
/// in memory and written in large blocks. Outputs are created from one thread at a time (the
/// list of temporary files the signal handler reads has no lock).
class atomic_output_file {
 public:
  /// \throws input_error if the path cannot be written safely (resolve_output()) or the
  /// temporary file cannot be created.
  explicit atomic_output_file(std::string path);
  ~atomic_output_file();
  atomic_output_file(const atomic_output_file&) = delete;
  atomic_output_file& operator=(const atomic_output_file&) = delete;

  /// \brief The pending text; append to it, then call flush_if_large() now and then.
  std::string& buffer() { return buffer_; }
  void flush_if_large() {
    if (buffer_.size() >= flush_bytes) flush();
  }
  /// \brief Writes everything and makes it durable (fsync) without publishing it yet; a
  /// direct output is complete after this. \throws input_error.
  void prepare();
  /// \brief prepare(), then renames the temporary file over the final path. \throws input_error.
  void commit();
  /// \brief prepare() on every file, then the renames with terminating signals blocked: either
  /// every output is replaced or (a failure before the renames) none is.
  static void commit_together(std::initializer_list<atomic_output_file*> files);

  /// \brief Where the data goes: the final target of the path's symbolic links.
  const std::string& target() const { return target_.path; }

 private:
  static constexpr std::size_t flush_bytes = std::size_t{1} << 20;
  bool direct() const {
    return target_.kind != output_kind::new_file && target_.kind != output_kind::regular_file;
  }
  void flush();
  void publish();
  [[noreturn]] void fail(const char* action);
  void discard() noexcept;

  std::string path_;
  output_target target_;
  std::string temporary_path_;
  std::FILE* stream_ = nullptr;
  int slot_ = -1;
  std::string buffer_;
  bool prepared_ = false;
  bool committed_ = false;
};

inline atomic_output_file::atomic_output_file(std::string path)
    : path_(std::move(path)), target_(resolve_output(path_)) {
  if (target_.kind == output_kind::standard_output) {
    stream_ = stdout;
  } else if (direct()) {
    stream_ = std::fopen(target_.path.c_str(), "wb");
    if (stream_ == nullptr)
      throw input_error(path_ + ": cannot open: " + detail::system_message(errno));
  } else {
    temporary_path_ = target_.path + ".tmp." + std::to_string(static_cast<long>(getpid()));
    detail::install_cleanup_handlers();
    // Registered before it exists, so no signal can leave it behind unnoticed.
    slot_ = detail::register_temporary(temporary_path_);
    const mode_t mode = target_.exists ? (target_.mode & 07777) : mode_t{0666};
    ::unlink(temporary_path_.c_str());  // a leftover of an earlier process with the same pid
    const int fd = ::open(temporary_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd < 0) {
      const int error_number = errno;
      detail::unregister_temporary(slot_);
      throw input_error(path_ + ": cannot create '" + temporary_path_ +
                        "': " + detail::system_message(error_number));
    }
    // open() applied the umask; an existing file keeps exactly the bits it had.
    if (target_.exists) (void)::fchmod(fd, mode);
    stream_ = ::fdopen(fd, "wb");
    if (stream_ == nullptr) {
      const int error_number = errno;
      ::close(fd);
      ::unlink(temporary_path_.c_str());
      detail::unregister_temporary(slot_);
      throw input_error(path_ + ": cannot open '" + temporary_path_ +
                        "': " + detail::system_message(error_number));
    }
  }
  buffer_.reserve(flush_bytes + 4096);
}

inline void atomic_output_file::discard() noexcept {
  if (stream_ != nullptr && stream_ != stdout) std::fclose(stream_);
  stream_ = nullptr;
  if (!direct() && !temporary_path_.empty()) {
    ::unlink(temporary_path_.c_str());
    detail::unregister_temporary(slot_);
    slot_ = -1;
  }
}

inline atomic_output_file::~atomic_output_file() {
  if (committed_) return;
  if (direct() && stream_ == stdout) {
    std::fflush(stdout);
    return;
  }
  discard();
}

inline void atomic_output_file::flush() {
  if (!buffer_.empty() && std::fwrite(buffer_.data(), 1, buffer_.size(), stream_) != buffer_.size())
    fail("write");
  buffer_.clear();
}

inline void atomic_output_file::fail(const char* action) {
  const int error_number = errno;
  if (stream_ == stdout) {
    stream_ = nullptr;
  } else {
    discard();
  }
  throw input_error(path_ + ": cannot " + action + ": " + detail::system_message(error_number));
}

inline void atomic_output_file::prepare() {
  if (prepared_) return;
  flush();
  if (std::fflush(stream_) != 0) fail("write");
  if (stream_ == stdout) {
    prepared_ = true;
    return;
  }
  // fsync before rename: otherwise a crash can leave the new name pointing at an empty file.
  // Devices and FIFOs cannot be synced (EINVAL); only a temporary file must be.
  if (!direct() && fsync(fileno(stream_)) != 0) fail("sync");
  const int closed = std::fclose(stream_);
  stream_ = nullptr;
  if (closed != 0) fail("close");
  prepared_ = true;
}

inline void atomic_output_file::publish() {
  if (!direct() && std::rename(temporary_path_.c_str(), target_.path.c_str()) != 0) {
    const int error_number = errno;
    discard();
    throw input_error(
        path_ + ": cannot rename the temporary file: " + detail::system_message(error_number));
  }
  detail::unregister_temporary(slot_);
  slot_ = -1;
  committed_ = true;
}

inline void atomic_output_file::commit() {
  prepare();
  detail::signal_block block;
  publish();
}

inline void atomic_output_file::commit_together(std::initializer_list<atomic_output_file*> files) {
  for (atomic_output_file* file : files)
    if (file != nullptr) file->prepare();
  detail::signal_block block;
  for (atomic_output_file* file : files)
    if (file != nullptr) file->publish();
}

}  // namespace io
}  // namespace popalloc
