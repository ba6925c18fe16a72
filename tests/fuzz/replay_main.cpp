// SPDX-License-Identifier: Apache-2.0
// Runs a fuzz target over files and directories of inputs without libFuzzer, so every compiler
// (and the sanitizer build) replays the seed corpora as regression tests:
//   popalloc_fuzz_<target> CORPUS_DIR_OR_FILE...
// Exits 1 when no input was found (a missing corpus must not pass silently).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

void run_file(const std::filesystem::path& path) {
  std::ifstream stream(path, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(stream)),
                          std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t inputs = 0;
  for (int a = 1; a < argc; ++a) {
    const std::filesystem::path root(argv[a]);
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(root)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(root))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else if (std::filesystem::is_regular_file(root)) {
      files.push_back(root);
    } else {
      std::fprintf(stderr, "%s: no such file or directory\n", argv[a]);
      return 1;
    }
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
      run_file(file);
      ++inputs;
    }
  }
  std::printf("replayed %zu input(s)\n", inputs);
  return inputs == 0 ? 1 : 0;
}
