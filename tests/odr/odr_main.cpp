// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief odr_check driver: both TUs must link and agree.
#include <cstdio>
#include <string>

#include <popalloc/popalloc.hpp>

std::string odr_a();
std::string odr_b();

int main() {
  const std::string a = odr_a();
  const std::string b = odr_b();
  std::printf("odr_check: popalloc %d.%d.%d, a=\"%s\", b=\"%s\"\n", POPALLOC_VERSION_MAJOR,
              POPALLOC_VERSION_MINOR, POPALLOC_VERSION_PATCH, a.c_str(), b.c_str());
  return a == b ? 0 : 1;
}
