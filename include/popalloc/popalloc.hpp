// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Everything popalloc offers on the CPU. Include popalloc/backend/thrust.hpp as well for
/// the Thrust backend.
#pragma once

#include "popalloc/backend/cpu.hpp"
#include "popalloc/bundle_problem.hpp"
#include "popalloc/config.hpp"
#include "popalloc/dense_problem.hpp"
#include "popalloc/dual_solver.hpp"
#include "popalloc/error.hpp"
#include "popalloc/incremental.hpp"
#include "popalloc/options.hpp"
#include "popalloc/pop.hpp"
#include "popalloc/random.hpp"
#include "popalloc/result.hpp"
#include "popalloc/status.hpp"
#include "popalloc/utility.hpp"
#include "popalloc/version.hpp"
