// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The traffic-engineering layer's former umbrella header; include popalloc/te.hpp.
#pragma once

#include "popalloc/te.hpp"
