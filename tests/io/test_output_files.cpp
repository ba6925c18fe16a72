// SPDX-License-Identifier: Apache-2.0
// popalloc/io: outputs written through links and directly to devices, refused when replacing
// them would lose data, never the same file as an input, no temporary file left by a signal;
// input limits; messages without control characters; the merged POP result's status.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <Eigen/Core>
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <popalloc/io/atomic_file.hpp>
#include <popalloc/io/input_error.hpp>
#include <popalloc/io/output_paths.hpp>
#include <popalloc/io/text_file.hpp>
#include <popalloc/pop.hpp>
#include <popalloc/popalloc.hpp>

namespace io = popalloc::io;

namespace {

/// A fresh directory under the build's temporary area, removed with everything in it.
class scratch_dir {
 public:
  scratch_dir() {
    char pattern[] = "/tmp/popalloc_io_test.XXXXXX";
    const char* made = ::mkdtemp(pattern);
    REQUIRE(made != nullptr);
    path_ = made;
  }
  ~scratch_dir() {
    const std::string command = "rm -rf '" + path_ + "'";
    (void)std::system(command.c_str());
  }
  scratch_dir(const scratch_dir&) = delete;
  scratch_dir& operator=(const scratch_dir&) = delete;
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }
  /// Names in the directory, sorted.
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    DIR* d = ::opendir(path_.c_str());
    if (d == nullptr) return out;
    while (const dirent* e = ::readdir(d)) {
      const std::string name = e->d_name;
      if (name != "." && name != "..") out.push_back(name);
    }
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::string path_;
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

bool is_symlink(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode);
}

std::string error_of(void (*action)(const std::string&), const std::string& path) {
  try {
    action(path);
  } catch (const io::input_error& e) {
    return e.what();
  }
  return "";
}

void write_hello(const std::string& path) {
  io::atomic_output_file file(path);
  file.buffer() += "hello\n";
  file.commit();
}

}  // namespace

TEST_CASE("output through a symbolic link replaces the target and keeps the link") {
  scratch_dir dir;
  write_text(dir / "keep.json", "old\n");
  REQUIRE(::symlink("keep.json", (dir / "link.json").c_str()) == 0);
  write_hello(dir / "link.json");
  CHECK(is_symlink(dir / "link.json"));
  CHECK(read_text(dir / "keep.json") == "hello\n");
  // A chain of links, and a dangling one (its target is created, as a shell redirection does).
  REQUIRE(::symlink("link.json", (dir / "chain.json").c_str()) == 0);
  write_hello(dir / "chain.json");
  CHECK(is_symlink(dir / "chain.json"));
  CHECK(read_text(dir / "keep.json") == "hello\n");
  REQUIRE(::symlink("new.json", (dir / "dangling.json").c_str()) == 0);
  write_hello(dir / "dangling.json");
  CHECK(is_symlink(dir / "dangling.json"));
  CHECK(read_text(dir / "new.json") == "hello\n");
  // A loop is an error, not a hang.
  REQUIRE(::symlink("loop_b", (dir / "loop_a").c_str()) == 0);
  REQUIRE(::symlink("loop_a", (dir / "loop_b").c_str()) == 0);
  CHECK(error_of(write_hello, dir / "loop_a").find("symbolic links") != std::string::npos);
}

TEST_CASE("an existing file keeps its permission bits; a read-only one is refused") {
  scratch_dir dir;
  write_text(dir / "shared.csv", "old\n");
  REQUIRE(::chmod((dir / "shared.csv").c_str(), 0640) == 0);
  write_hello(dir / "shared.csv");
  struct stat info {};
  REQUIRE(::stat((dir / "shared.csv").c_str(), &info) == 0);
  CHECK((info.st_mode & 07777) == 0640);
  CHECK(read_text(dir / "shared.csv") == "hello\n");

  write_text(dir / "frozen.json", "precious\n");
  REQUIRE(::chmod((dir / "frozen.json").c_str(), 0444) == 0);
  const std::string why = error_of(write_hello, dir / "frozen.json");
  CHECK(why.find("read-only") != std::string::npos);
  CHECK(read_text(dir / "frozen.json") == "precious\n");
  CHECK(error_of(io::check_output_path, dir / "frozen.json").find("read-only") !=
        std::string::npos);
  CHECK(dir.entries() == std::vector<std::string>{"frozen.json", "shared.csv"});
}

TEST_CASE("devices and FIFOs are written directly, never replaced") {
  scratch_dir dir;
  // /dev/null as it is: a character device that must stay one.
  write_hello("/dev/null");
  struct stat info {};
  REQUIRE(::stat("/dev/null", &info) == 0);
  CHECK(S_ISCHR(info.st_mode));
  CHECK(io::resolve_output("/dev/null").kind == io::output_kind::stream);
  CHECK(io::resolve_output("-").kind == io::output_kind::standard_output);
  CHECK(io::resolve_output(dir / "x.json").kind == io::output_kind::new_file);

  const std::string fifo = dir / "pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const pid_t reader = ::fork();
  REQUIRE(reader >= 0);
  if (reader == 0) {  // child: read the FIFO into a file, then exit
    const std::string text = read_text(fifo);
    write_text(dir / "received", text);
    std::_Exit(0);
  }
  write_hello(fifo);
  int status = 0;
  REQUIRE(::waitpid(reader, &status, 0) == reader);
  CHECK(read_text(dir / "received") == "hello\n");
  REQUIRE(::lstat(fifo.c_str(), &info) == 0);
  CHECK(S_ISFIFO(info.st_mode));
}

TEST_CASE("directories, empty paths and missing directories are refused") {
  scratch_dir dir;
  CHECK(error_of(io::check_output_path, dir / "").find("directory") != std::string::npos);
  CHECK(error_of(io::check_output_path, "").find("empty") != std::string::npos);
  CHECK(error_of(io::check_output_path, dir / "no/such/x.json").find("cannot write to") !=
        std::string::npos);
}

TEST_CASE("an output that is an input or another output is refused") {
  scratch_dir dir;
  write_text(dir / "jobs.csv", "id,gpu\na,1\n");
  REQUIRE(::link((dir / "jobs.csv").c_str(), (dir / "hard.csv").c_str()) == 0);
  REQUIRE(::symlink("jobs.csv", (dir / "soft.csv").c_str()) == 0);
  REQUIRE(::mkdir((dir / "sub").c_str(), 0755) == 0);
  auto refused = [&](std::vector<io::named_path> outputs, std::vector<io::named_path> inputs) {
    try {
      io::check_output_files(outputs, inputs);
    } catch (const io::input_error& e) {
      return std::string(e.what()).find("same file") != std::string::npos;
    }
    return false;
  };
  const io::named_path jobs{"--jobs", dir / "jobs.csv"};
  CHECK(refused({{"--output", dir / "jobs.csv"}}, {jobs}));
  CHECK(refused({{"--output", dir / "hard.csv"}}, {jobs}));         // same inode
  CHECK(refused({{"--output", dir / "soft.csv"}}, {jobs}));         // through a link
  CHECK(refused({{"--output", dir / "sub/../jobs.csv"}}, {jobs}));  // another spelling
  // Two outputs that do not exist yet, spelled differently.
  CHECK(refused({{"--output", dir / "r.json"}, {"--allocation", dir / "sub/../r.json"}}, {}));
  CHECK(refused({{"--output", dir / "r.json"}, {"--allocation", dir / "./r.json"}}, {}));
  // Different files, stdout twice and a device twice are fine.
  CHECK_NOTHROW(io::check_output_files(
      {{"--output", dir / "r.json"}, {"--allocation", dir / "a.csv"}}, {jobs}));
  CHECK_NOTHROW(io::check_output_files({{"--output", "-"}, {"--allocation", "-"}}, {}));
  CHECK_NOTHROW(
      io::check_output_files({{"--output", "/dev/null"}, {"--allocation", "/dev/null"}}, {}));
  CHECK(read_text(dir / "jobs.csv") == "id,gpu\na,1\n");
}

TEST_CASE("commit_together publishes both files; an uncommitted file leaves nothing behind") {
  scratch_dir dir;
  write_text(dir / "r.json", "old r\n");
  write_text(dir / "a.csv", "old a\n");
  {
    io::atomic_output_file r(dir / "r.json"), a(dir / "a.csv");
    r.buffer() += "new r\n";
    a.buffer() += "new a\n";
    CHECK(dir.entries().size() == 4);  // both temporary files exist beside the outputs
    io::atomic_output_file::commit_together({&r, &a});
  }
  CHECK(read_text(dir / "r.json") == "new r\n");
  CHECK(read_text(dir / "a.csv") == "new a\n");
  {
    io::atomic_output_file r(dir / "r.json");
    r.buffer() += "abandoned\n";
  }
  CHECK(read_text(dir / "r.json") == "new r\n");
  CHECK(dir.entries() == std::vector<std::string>{"a.csv", "r.json"});
}

TEST_CASE("a terminating signal removes the temporary files and leaves the outputs as they were") {
  for (const int signal_number : {SIGTERM, SIGINT, SIGHUP}) {
    scratch_dir dir;
    write_text(dir / "r.json", "old\n");
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      // The child may have inherited an ignored or caught disposition from the test runner.
      std::signal(signal_number, SIG_DFL);
      io::atomic_output_file r(dir / "r.json"), a(dir / "a.csv");
      r.buffer() += "new\n";
      a.buffer() += std::string(3 << 20, 'x');  // large enough to be on disk already
      a.flush_if_large();
      ::raise(signal_number);
      std::_Exit(0);  // not reached
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == signal_number);
    CHECK(read_text(dir / "r.json") == "old\n");
    CHECK(dir.entries() == std::vector<std::string>{"r.json"});
  }
}

TEST_CASE("a forked child that dies on a signal leaves its parent's temporary files alone") {
  scratch_dir dir;
  io::atomic_output_file r(dir / "r.json");
  r.buffer() += "parent\n";
  r.prepare();
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    std::signal(SIGTERM, SIG_DFL);
    io::detail::install_cleanup_handlers();
    ::raise(SIGTERM);
    std::_Exit(0);  // not reached
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFSIGNALED(status));
  r.commit();
  CHECK(read_text(dir / "r.json") == "parent\n");
}

TEST_CASE("read_whole_file refuses NUL bytes and content beyond its limit") {
  scratch_dir dir;
  write_text(dir / "binary.csv", std::string("id,gpu\na,1\nb,\0\n", 16));
  try {
    (void)io::read_whole_file(dir / "binary.csv");
    FAIL("a NUL byte was accepted");
  } catch (const io::input_error& e) {
    CHECK(std::string(e.what()).find("binary.csv:3: contains a NUL byte") != std::string::npos);
  }
  write_text(dir / "big.csv", std::string(1000, 'a'));
  CHECK(io::read_whole_file(dir / "big.csv", 1000).size() == 1000);
  CHECK_THROWS_AS((void)io::read_whole_file(dir / "big.csv", 999), io::input_error);
  // A stream of unknown size: /dev/zero ends at its first block, not at the memory limit.
  CHECK_THROWS_AS((void)io::read_whole_file("/dev/zero"), io::input_error);
  CHECK_THROWS_AS((void)io::read_whole_file(dir / ""), io::input_error);
}

TEST_CASE("input_error messages carry no raw control characters") {
  static const char raw[] = "unknown resource 'a\0b\x1b[31m'\tx\n";
  const io::input_error e(std::string(raw, sizeof raw - 1));
  const std::string what = e.what();
  CHECK(what.find('\0') == std::string::npos);
  CHECK(what.find('\x1b') == std::string::npos);
  CHECK(what.find("a\\x00b\\x1b[31m'\tx\n") != std::string::npos);
}

TEST_CASE("POP: parts that converged do not make the merged result converged") {
  // Ten jobs in ten parts: every part is one job with a tenth of every capacity, far from the
  // whole problem's optimum, which each part's own bound cannot see.
  popalloc::dense_problem<double> p;
  p.throughput.resize(10, 4);
  for (Eigen::Index i = 0; i < 10; ++i)
    for (Eigen::Index j = 0; j < 4; ++j)
      p.throughput(i, j) = ((i * 7 + j * 3) % 5 == 0) ? 0.0 : 1.0 + double((i + 2 * j) % 4);
  p.capacity = Eigen::Vector4d(1.0, 2.0, 0.5, 1.5);
  popalloc::pop::pop_options o;
  o.parts = 10;
  o.threads = 1;
  const auto split = popalloc::pop::pop_solve(p, popalloc::utility::log{}, o);
  for (const auto& part : split.parts) CHECK(part.status == popalloc::solve_status::converged);
  CHECK(split.result.relative_gap > o.solver.relative_gap);
  CHECK(split.result.status == popalloc::solve_status::parts_converged);
  CHECK(std::string(popalloc::to_string(split.result.status)) == "parts_converged");

  // Identical jobs in two equal parts: POP is exact, so the whole converges too.
  popalloc::dense_problem<double> q;
  q.throughput = Eigen::MatrixXd::Constant(200, 3, 2.0);
  q.capacity = Eigen::Vector3d(10.0, 20.0, 30.0);
  o.parts = 2;
  const auto even = popalloc::pop::pop_solve(q, popalloc::utility::linear{}, o);
  CHECK(even.result.relative_gap <= o.solver.relative_gap);
  CHECK(even.result.status == popalloc::solve_status::converged);
}
