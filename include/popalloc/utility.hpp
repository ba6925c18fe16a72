// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief All built-in utilities and the utility requirements.
#pragma once

#include "popalloc/utility/concept.hpp"
#include "popalloc/utility/job_parameters.hpp"
#include "popalloc/utility/linear.hpp"
#include "popalloc/utility/linear_with_floor.hpp"
#include "popalloc/utility/log.hpp"
#include "popalloc/utility/power.hpp"
#include "popalloc/utility/target_priority.hpp"
