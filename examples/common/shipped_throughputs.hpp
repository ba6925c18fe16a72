// SPDX-License-Identifier: Apache-2.0
// Where the shipped copy of Gavel's simulation_throughputs.json lies, for --space-sharing
// without --throughputs (the built-in tables hold only the isolated throughputs). Used by
// popalloc-schedule and popalloc-simulate.
#pragma once

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace popalloc_cli {

/// The candidates, in order: next to an installed program (relative to the executable, so a
/// prefix chosen at install time or a moved installation still finds it), then the source tree
/// the program was built from. Empty if neither holds the file.
inline std::string shipped_gavel_throughputs() {
  std::vector<std::filesystem::path> candidates;
  std::error_code ec;
#ifdef POPALLOC_CLI_GAVEL_DATA_FROM_BINDIR
  // Linux names the running executable here; elsewhere the lookup fails and is skipped.
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec)
    candidates.push_back(self.parent_path() / POPALLOC_CLI_GAVEL_DATA_FROM_BINDIR /
                         "simulation_throughputs.json");
#endif
#ifdef POPALLOC_CLI_GAVEL_SOURCE_DATA_DIR
  candidates.push_back(std::filesystem::path(POPALLOC_CLI_GAVEL_SOURCE_DATA_DIR) /
                       "simulation_throughputs.json");
#endif
  for (const std::filesystem::path& p : candidates)
    if (std::filesystem::is_regular_file(p, ec)) return p.lexically_normal().string();
  return {};
}

}  // namespace popalloc_cli
