// SPDX-License-Identifier: Apache-2.0
// Fuzz target: Gavel's throughput JSON reader (popalloc::cluster::parse_throughputs). Any input is
// either rejected with io::input_error "PATH:..." or gives a table whose entries are finite, >= 0
// and within popalloc's value range, and whose keys read back through parse_job_key.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <popalloc/cluster/throughputs.hpp>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  popalloc::cluster::throughput_table table;
  try {
    table = popalloc::cluster::parse_throughputs(text, "throughputs.json");
  } catch (const popalloc::io::input_error& e) {
    if (std::string_view(e.what()).substr(0, 17) != "throughputs.json:") std::abort();
    return 0;
  }
  for (const auto& key : table.keys()) {
    popalloc::cluster::job_key again;
    if (!popalloc::cluster::parse_job_key(key.to_string(), again)) std::abort();
    if (again.job_type != key.job_type || again.scale_factor != key.scale_factor) std::abort();
    for (const auto& gpu : table.gpu_types()) {
      const double t = table.get(key, gpu);
      if (!std::isfinite(t) || t < 0.0 || !popalloc::detail::in_value_range(t)) std::abort();
    }
  }
  return 0;
}
