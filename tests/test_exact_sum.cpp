// SPDX-License-Identifier: Apache-2.0
// The exact summation behind the MPI backend's rank-count independence (mpi_sums::exact).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <doctest/doctest.h>

#include <popalloc/detail/exact_sum.hpp>

namespace {

using popalloc::detail::exact_sum;

double exact_total(const std::vector<double>& values) {
  std::vector<std::int64_t> acc(exact_sum::stride, 0);
  for (double x : values) exact_sum::add(acc.data(), x);
  return exact_sum::value(acc.data());
}

}  // namespace

TEST_CASE("exact sum: cancellation and magnitudes that defeat naive summation") {
  CHECK(exact_total({1.0, 1e-300, -1.0}) == 1e-300);
  CHECK(exact_total({1e308, 1e308, -1e308}) == 1e308);                     // naive: inf
  CHECK(exact_total({0x1p53, 1.0, 1.0}) == 0x1p53 + 2.0);                  // naive: 2^53
  CHECK(exact_total({0x1p-1074, 0x1p-1074, 0x1p-1074}) == 3 * 0x1p-1074);  // subnormals
  CHECK(exact_total({-2.5, 0.5}) == -2.0);
  CHECK(exact_total({}) == 0.0);
  CHECK(exact_total({std::numeric_limits<double>::max(), std::numeric_limits<double>::max()}) ==
        std::numeric_limits<double>::infinity());
}

TEST_CASE("exact sum: rounds once, to nearest even") {
  // 1 + 2^-53 is a tie between 1 and 1 + 2^-52: even is 1; with a further 2^-200 it rounds up.
  CHECK(exact_total({1.0, 0x1p-53}) == 1.0);
  CHECK(exact_total({1.0, 0x1p-53, 0x1p-200}) == 1.0 + 0x1p-52);
  CHECK(exact_total({1.0 + 0x1p-52, 0x1p-53}) == 1.0 + 0x1p-51);  // tie, odd below: up
  CHECK(exact_total({-1.0, -0x1p-53, -0x1p-200}) == -(1.0 + 0x1p-52));
}

TEST_CASE("exact sum: infinities and NaN follow IEEE addition") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(exact_total({1.0, inf}) == inf);
  CHECK(exact_total({-inf, 5.0}) == -inf);
  CHECK(std::isnan(exact_total({inf, -inf})));
  CHECK(std::isnan(exact_total({1.0, std::nan("")})));
}

TEST_CASE("exact sum: the same bits in any order, split and merged anyhow") {
  std::mt19937_64 rng(42);
  std::vector<double> values;
  long double reference = 0.0L;
  for (int i = 0; i < 20000; ++i) {
    const double x = std::ldexp(static_cast<double>(rng() >> 11) * 0x1.0p-53 - 0.3,
                                static_cast<int>(rng() % 60) - 30);
    values.push_back(x);
    reference += static_cast<long double>(x);
  }
  const double total = exact_total(values);
  CHECK(std::abs(static_cast<long double>(total) - reference) <= 1e-15L * std::abs(reference));
  for (int trial = 0; trial < 5; ++trial) {
    std::shuffle(values.begin(), values.end(), rng);
    // Three partial accumulators merged by integer addition, as threads and ranks are.
    std::vector<std::int64_t> parts[3];
    for (auto& part : parts) part.assign(exact_sum::stride, 0);
    for (std::size_t i = 0; i < values.size(); ++i)
      exact_sum::add(parts[rng() % 3].data(), values[i]);
    for (auto& part : parts) exact_sum::normalize(part.data());
    for (std::size_t e = 0; e < exact_sum::stride; ++e) parts[0][e] += parts[1][e] + parts[2][e];
    CHECK(exact_sum::value(parts[0].data()) == total);
  }
}
