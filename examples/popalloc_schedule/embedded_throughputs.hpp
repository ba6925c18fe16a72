// SPDX-License-Identifier: Apache-2.0
// Gavel's isolated throughputs built into popalloc-schedule, so it runs without files.
#pragma once

#include <cstddef>

#include <popalloc/cluster/throughputs.hpp>

namespace popalloc_schedule {

struct embedded_row {
  const char* job_type;
  int scale_factor;
  double k80, p100, v100;  ///< steps/s; 0 = cannot run
};

extern const embedded_row kEmbeddedThroughputs[];
extern const std::size_t kEmbeddedThroughputCount;

/// \brief The table of the 83 (job type, scale factor) keys on k80, p100 and v100.
popalloc::cluster::throughput_table embedded_throughput_table();

}  // namespace popalloc_schedule
