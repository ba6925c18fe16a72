// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Library version; CMake reads the three macros below.
#pragma once

#define POPALLOC_VERSION_MAJOR 0
#define POPALLOC_VERSION_MINOR 1
#define POPALLOC_VERSION_PATCH 0

namespace popalloc {
/// \brief The library version as "major.minor.patch".
inline constexpr const char* version_string = "0.1.0";
}  // namespace popalloc
