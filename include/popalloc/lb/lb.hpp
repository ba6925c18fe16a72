// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Shard placement (POP's load-balancing experiment): everything in popalloc::lb except the
/// exact MILP, which needs COIN-OR CBC and lives in examples/popalloc_lb/milp_cbc.hpp.
#pragma once

#include "popalloc/lb/benchmark.hpp"
#include "popalloc/lb/checker.hpp"
#include "popalloc/lb/greedy.hpp"
#include "popalloc/lb/pop_split.hpp"
#include "popalloc/lb/price_solver.hpp"
#include "popalloc/lb/problem.hpp"
