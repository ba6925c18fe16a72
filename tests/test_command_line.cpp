// SPDX-License-Identifier: Apache-2.0
// The programs' shared reader of numeric option values (examples/common/command_line.hpp).
#if POPALLOC_TEST_HAVE_FAMILIES  // examples/ is on the include path

#include <cstdint>
#include <string>

#include <doctest/doctest.h>

#include "../common/command_line.hpp"
#include "support/input_refusal.hpp"

namespace {

[[noreturn]] void test_usage_error(const std::string& what) {
  throw popalloc::io::input_error(what + " (see --help)");
}

const popalloc_cli::value_reader read_value{test_usage_error};

using popalloc_test::refusal;

}  // namespace

TEST_CASE("value_reader reads whole numbers in range and names the option when it refuses one") {
  CHECK(read_value.integer(std::string("12"), "--pop", 1) == 12);
  CHECK(read_value.integer<long long>("-7", "--seed", -10) == -7);
  CHECK(read_value.integer<std::uint64_t>("18446744073709551615", "--seed", 0) ==
        18446744073709551615ull);
  CHECK(refusal([] { read_value.integer("x", "--pop", 1); }) ==
        "--pop: 'x' is not an integer (see --help)");
  CHECK(refusal([] { read_value.integer("", "--pop", 1); }) ==
        "--pop: '' is not an integer (see --help)");
  CHECK(refusal([] { read_value.integer("1.5", "--pop", 1); }) ==
        "--pop: '1.5' is not an integer (see --help)");
  CHECK(refusal([] { read_value.integer("0", "--pop", 1); }) == "--pop must be >= 1 (see --help)");
  CHECK(refusal([] { read_value.integer("5", "--repeat", 1, 4); }) ==
        "--repeat must be <= 4 (see --help)");
  CHECK(refusal([] { read_value.integer("99999999999", "--threads", 0); }) ==
        "--threads must be in [0, 2147483647] (see --help)");
  CHECK(refusal([] { read_value.integer<std::uint64_t>("-1", "--seed", 0); }) ==
        "--seed must be >= 0 (see --help)");
}

TEST_CASE("value_reader reads finite numbers above or at their lower bound") {
  CHECK(read_value.number("1e-3", "--tolerance", popalloc_cli::above(0.0)) == 1e-3);
  CHECK(read_value.number("0", "--epsilon", popalloc_cli::at_least(0.0)) == 0.0);
  CHECK(read_value.number("-2.5", "--shift", popalloc_cli::any_number) == -2.5);
  for (const char* not_finite : {"inf", "-inf", "nan", "1e999", "1x", "", " 1"})
    CHECK(refusal([&] { read_value.number(not_finite, "--time-limit", popalloc_cli::above(0)); }) ==
          "--time-limit: '" + std::string(not_finite) + "' is not a finite number (see --help)");
  CHECK(refusal([] { read_value.number("0", "--time-limit", popalloc_cli::above(0.0)); }) ==
        "--time-limit must be > 0 (see --help)");
  CHECK(refusal([] { read_value.number("-0.5", "--mip-gap", popalloc_cli::at_least(0.0)); }) ==
        "--mip-gap must be >= 0 (see --help)");
  CHECK(refusal([] { read_value.number("0.05", "--rate", popalloc_cli::above(0.1)); }) ==
        "--rate must be > 0.1 (see --help)");
}

#endif  // POPALLOC_TEST_HAVE_FAMILIES
