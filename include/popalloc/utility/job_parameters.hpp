// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Per-job parameters handed to a utility.
#pragma once

namespace popalloc {

/// \brief Per-job utility parameters: a weight (priority) and a target throughput. Utilities
/// that need no target ignore it; a user-supplied utility may use both as it sees fit.
struct job_parameters {
  double weight = 1.0;
  double target = 0.0;
};

}  // namespace popalloc
