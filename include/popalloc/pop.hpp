// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief POP (partition, solve, coalesce; SOSP 2021) for popalloc: client partitioning, resource
/// and client splitting, and the parallel driver with its dense-problem overload.
#pragma once

#include "popalloc/pop/partition.hpp"
#include "popalloc/pop/pop_solver.hpp"
#include "popalloc/pop/split.hpp"
