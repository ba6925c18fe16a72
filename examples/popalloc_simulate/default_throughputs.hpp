// SPDX-License-Identifier: Apache-2.0
// Gavel's isolated throughputs, embedded (see default_throughputs.cpp for provenance and licence).
#pragma once

namespace popalloc_simulate {

/// JSON text in Gavel's simulation_throughputs.json schema (isolated entries only).
extern const char* const kDefaultThroughputsJson;

}  // namespace popalloc_simulate
