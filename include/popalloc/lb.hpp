// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Shard placement (POP's load-balancing experiment): everything in popalloc::lb. The exact
/// MILP needs COIN-OR CBC, so it is not part of the header-only library: popalloc-lb's
/// `--solver milp` runs it (docs/load-balancing.md).
#pragma once

#include "popalloc/lb/benchmark.hpp"
#include "popalloc/lb/checker.hpp"
#include "popalloc/lb/greedy.hpp"
#include "popalloc/lb/pop_split.hpp"
#include "popalloc/lb/price_solver.hpp"
#include "popalloc/lb/problem.hpp"
