// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The load-balancing layer's former umbrella header; include popalloc/lb.hpp.
#pragma once

#include "popalloc/lb.hpp"
