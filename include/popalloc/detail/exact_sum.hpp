// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief exact_sum: sums of doubles that are exact, hence the same bits in any order (the MPI
/// backend's mpi_sums::exact).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>

namespace popalloc::detail {

/// Exact sums of doubles: a double is m * 2^e with a 53-bit integer m and e >= -1074, so every
/// finite double is an integer multiple of 2^-1074. `exact_sum` keeps that integer in limbs of
/// 32 bits stored in int64 (room for 2^30 additions between carry propagations), plus counts of
/// +inf, -inf and NaN. Integer addition is associative, hence the total is independent of the
/// order of additions, of threads and of the MPI reduction tree.
struct exact_sum {
  static constexpr int limbs = 68;  ///< bits -1074 .. 1102: any double, with carry headroom
  static constexpr int positive_infinities = limbs, negative_infinities = limbs + 1,
                       not_a_number = limbs + 2;
  static constexpr std::size_t stride = limbs + 3;  ///< int64 entries per accumulator
  static constexpr std::int64_t radix = std::int64_t{1} << 32;
  static constexpr std::int64_t additions_between_carries = std::int64_t{1} << 28;

  static void add(std::int64_t* acc, double x) {
    if (x == 0.0) return;
    std::uint64_t bits = 0;
    std::memcpy(&bits, &x, sizeof bits);
    const bool negative = (bits >> 63) != 0;
    const int exponent = static_cast<int>((bits >> 52) & 0x7ff);
    std::uint64_t mantissa = bits & ((std::uint64_t{1} << 52) - 1);
    if (exponent == 0x7ff) {
      ++acc[mantissa != 0 ? not_a_number : (negative ? negative_infinities : positive_infinities)];
      return;
    }
    // x = mantissa * 2^(position - 1074): `position` is the bit index of the mantissa's lsb.
    int position = exponent - 1;
    if (exponent == 0) {
      position = 0;  // subnormal
    } else {
      mantissa |= std::uint64_t{1} << 52;
    }
    const int k = position / 32, shift = position % 32;
    const std::uint64_t low = (mantissa & 0xffffffffu) << shift;  // < 2^63
    const std::uint64_t high = (mantissa >> 32) << shift;         // < 2^52
    const auto a0 = static_cast<std::int64_t>(low & 0xffffffffu);
    const auto a1 = static_cast<std::int64_t>((low >> 32) + (high & 0xffffffffu));
    const auto a2 = static_cast<std::int64_t>(high >> 32);
    if (negative) {
      acc[k] -= a0;
      acc[k + 1] -= a1;
      acc[k + 2] -= a2;
    } else {
      acc[k] += a0;
      acc[k + 1] += a1;
      acc[k + 2] += a2;
    }
  }

  /// Carry propagation: limbs 0 .. limbs-2 end in [0, 2^32), the top limb keeps the sign. The
  /// representation of a value is then unique.
  static void normalize(std::int64_t* acc) {
    for (int k = 0; k + 1 < limbs; ++k) {
      const std::int64_t low = static_cast<std::int64_t>(static_cast<std::uint64_t>(acc[k]) &
                                                         std::uint64_t{0xffffffffu});
      acc[k + 1] += (acc[k] - low) / radix;  // exact: acc[k] - low is a multiple of 2^32
      acc[k] = low;
    }
  }

  /// The sum, correctly rounded to double (IEEE semantics for infinities and NaN).
  static double value(const std::int64_t* source) {
    const std::int64_t nan = source[not_a_number], pos = source[positive_infinities],
                       neg = source[negative_infinities];
    if (nan != 0 || (pos != 0 && neg != 0)) return std::numeric_limits<double>::quiet_NaN();
    if (pos != 0) return std::numeric_limits<double>::infinity();
    if (neg != 0) return -std::numeric_limits<double>::infinity();
    std::int64_t acc[limbs];
    std::copy(source, source + limbs, acc);
    normalize(acc);
    const bool negative = acc[limbs - 1] < 0;
    if (negative) {
      for (int k = 0; k < limbs; ++k) acc[k] = -acc[k];
      normalize(acc);
    }
    int top = limbs - 1;
    while (top >= 0 && acc[top] == 0) --top;
    if (top < 0) return 0.0;
    // Beyond limb 65 (2^1006 * 2^32 and up) the magnitude exceeds the largest double.
    if (top >= 66)
      return negative ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::infinity();
    const auto limb = [&](int k) {
      return k >= 0 ? static_cast<std::uint64_t>(acc[k]) : std::uint64_t{0};
    };
    const std::uint64_t t = limb(top);
    int bits = 0;  // bit length of the top limb, 1..32
    while (bits < 32 && (t >> bits) != 0) ++bits;
    // The top 64 significant bits, the rest folded into a sticky lsb: converting that to double
    // rounds exactly as the whole number would (the rounding bit is far above the sticky bit).
    std::uint64_t window = (t << (64 - bits)) | (limb(top - 1) << (32 - bits));
    if (bits < 32) window |= limb(top - 2) >> bits;
    bool sticky =
        bits < 32 ? (limb(top - 2) & ((std::uint64_t{1} << bits) - 1)) != 0 : limb(top - 2) != 0;
    for (int k = top - 3; k >= 0 && !sticky; --k) sticky = acc[k] != 0;
    if (sticky) window |= 1u;
    const double magnitude = std::ldexp(static_cast<double>(window), 32 * (top - 2) + bits - 1074);
    return negative ? -magnitude : magnitude;
  }
};

}  // namespace popalloc::detail
