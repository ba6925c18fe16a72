// SPDX-License-Identifier: Apache-2.0
// popalloc-schedule's built-in throughput table must equal Gavel's file, value for value.
#include <string>

#include <doctest/doctest.h>

#include <popalloc/cluster/throughputs.hpp>

#include "../../examples/popalloc_schedule/embedded_throughputs.hpp"

TEST_CASE("embedded throughput table equals the JSON file") {
  const auto file = popalloc::cluster::load_throughputs(std::string(POPALLOC_CLUSTER_DATA_DIR) +
                                                        "/simulation_throughputs.json");
  const auto embedded = popalloc_schedule::embedded_throughput_table();
  REQUIRE(embedded.size() == file.size());
  for (const auto& key : file.keys()) {
    CAPTURE(key.to_string());
    REQUIRE(embedded.contains(key));
    for (const char* gpu : {"k80", "p100", "v100"})
      CHECK(embedded.get(key, gpu) == file.get(key, gpu));
  }
}
