// SPDX-License-Identifier: Apache-2.0
// Fuzz target: popalloc-lb's placement CSV reader and writer. Any input is either rejected with
// io::input_error "PATH:LINE: ..." or read into a placement whose servers exist, whose fractions
// are finite in [0, 1] and sum to 1 per placed shard, with distinct servers per shard; written
// back (when its names can be written), it reads again as the same shards, servers and loads.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <popalloc/lb/placement_csv.hpp>

#include "fuzz_input.hpp"

namespace {

namespace lb = popalloc::lb;

void check_read(const lb::named_problem& n) {
  const lb::problem& p = n.instance;
  if (p.shards() == 0 || n.shard_names.size() != p.shards() || p.memory.size() != p.shards())
    std::abort();
  if (static_cast<std::size_t>(p.servers) != n.server_names.size()) std::abort();
  if (p.current.shards.size() != p.shards()) std::abort();
  for (std::size_t j = 0; j < p.shards(); ++j) {
    if (!std::isfinite(p.load[j]) || p.load[j] < 0.0 || p.memory[j] < 0.0) std::abort();
    double sum = 0.0;
    for (const lb::route& r : p.current.shards[j]) {
      if (r.server < 0 || r.server >= p.servers) std::abort();
      if (!std::isfinite(r.fraction) || r.fraction < 0.0 || r.fraction > 1.0 + 1e-12) std::abort();
      sum += r.fraction;
    }
    if (!p.current.shards[j].empty() && std::fabs(sum - 1.0) > 1e-9) std::abort();
  }
  try {
    p.validate();  // total load 0 is the one refusal left to it
  } catch (const popalloc::invalid_problem&) {
    if (p.total_load() > 0.0) std::abort();
  }
}

void check_round_trip(const lb::named_problem& n) {
  std::string written;
  try {
    lb::append_placement_csv(written, n, n.instance.current);
  } catch (const popalloc::io::input_error&) {
    return;  // a name with a quote that needs quoting: no CSV form
  }
  const lb::named_problem again = lb::read_placement_csv(written, "again.csv");
  if (again.shard_names != n.shard_names || again.instance.shards() != n.instance.shards())
    std::abort();
  if (again.server_names.size() != n.server_names.size()) std::abort();
  for (std::size_t j = 0; j < n.instance.shards(); ++j) {
    const double a = n.instance.load[j], b = again.instance.load[j];
    // A shard of load 0 with replicas is written as equal shares of 0.
    if (std::fabs(a - b) > 1e-9 * std::fmax(a, 1e-300) && !(a == 0.0 && b == 0.0)) std::abort();
    if (again.instance.memory[j] != n.instance.memory[j]) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  constexpr const char* path = "p.csv";
  lb::named_problem n;
  try {
    n = lb::read_placement_csv(text, path);
  } catch (const popalloc::io::input_error& e) {
    popalloc_fuzz::require_names_file(e.what(), path);
    return 0;
  }
  check_read(n);
  check_round_trip(n);
  return 0;
}
