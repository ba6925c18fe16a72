// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Smallest consumer of an installed popalloc (find_package + popalloc::popalloc).
#include <cstdio>

#include <popalloc/popalloc.hpp>

int main() {
  std::printf("popalloc %d.%d.%d\n", POPALLOC_VERSION_MAJOR, POPALLOC_VERSION_MINOR,
              POPALLOC_VERSION_PATCH);
  return 0;
}
