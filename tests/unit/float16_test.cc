// The 16-bit float formats (core/float16.h): every bit pattern of each widens exactly and comes
// back; narrowing rounds to nearest even at every boundary of either format, checked against
// references that share nothing with the code under test (the compiler's own _Float16 conversion
// for binary16, half_reference.h, a search over the two neighbours in double for bfloat16), on
// hand-picked values, on every tie and its neighbours, and on a sweep of float patterns. A compiler
// without _Float16 checks bfloat16 against its reference and binary16 by hand only: the cases that
// need the binary16 reference report themselves skipped.
#include "core/float16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "half_reference.h"

namespace torusmpi::float16 {
namespace {

bool is_nan_bf16(uint16_t h) { return (h & 0x7fffu) > 0x7f80u; }
bool is_nan_half(uint16_t h) { return (h & 0x7fffu) > 0x7c00u; }

// bfloat16 by definition: the value of a pattern is its float with 16 zero bits below; a float
// rounds to the nearer of the two patterns around it (in double, exactly), the even one on a tie,
// and past the largest finite value, at or beyond the halfway point to 2^128, to infinity.
double bf16_value(uint16_t h) {
  uint32_t u = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
uint16_t ref_float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const double a = std::fabs(static_cast<double>(f));
  const uint16_t low = static_cast<uint16_t>((u & 0x7fffffffu) >> 16);  // toward zero
  if ((u & 0xffffu) == 0) return static_cast<uint16_t>(sign | low);
  const double lo = bf16_value(low);
  const double hi = low == 0x7f7fu ? std::ldexp(1.0, 128) : bf16_value(low + 1);
  const double below = a - lo, above = hi - a;
  uint16_t pick = below < above ? low : above < below ? low + 1 : (low & 1) ? low + 1 : low;
  return static_cast<uint16_t>(sign | pick);
}

float float_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

TEST(Float16, EveryBfloat16PatternRoundTrips) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t p = static_cast<uint16_t>(h);
    const float f = bf16_to_float(p);
    ASSERT_EQ(bits_of(f), h << 16) << std::hex << h;
    ASSERT_EQ(float_to_bf16(f), p) << std::hex << h;
  }
}

TEST(Float16, EveryHalfPatternRoundTrips) {
  if (!kHalfReference) GTEST_SKIP() << kNoHalfReference;
  int nans = 0;
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t p = static_cast<uint16_t>(h);
    const float f = half_to_float(p);
    if (is_nan_half(p)) {
      ++nans;
      ASSERT_TRUE(std::isnan(f)) << std::hex << h;
      // Sign and payload, the quiet bit included, in float's upper mantissa bits.
      ASSERT_EQ(bits_of(f), ((h & 0x8000u) << 16) | 0x7f800000u | ((h & 0x3ffu) << 13))
          << std::hex << h;
    } else {
      ASSERT_EQ(f, ref_half_to_float(p)) << std::hex << h;  // zeros, subnormals, infinities
      ASSERT_EQ(std::signbit(f), (h & 0x8000u) != 0) << std::hex << h;
    }
    ASSERT_EQ(float_to_half(f), p) << std::hex << h;
  }
  EXPECT_EQ(nans, 2 * 1023);
}

TEST(Float16, HalfValuesByHand) {
  EXPECT_EQ(half_to_float(0x3c00), 1.0f);
  EXPECT_EQ(half_to_float(0xc000), -2.0f);
  EXPECT_EQ(half_to_float(0x7bff), 65504.0f);
  EXPECT_EQ(half_to_float(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_EQ(half_to_float(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(half_to_float(0x03ff), 1023 * std::ldexp(1.0f, -24));
  EXPECT_EQ(half_to_float(0x7c00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(half_to_float(0xfc00), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(bits_of(half_to_float(0x8000)), 0x80000000u);  // -0
}

TEST(Float16, HalfRoundsTiesToEven) {
  // 1 + 2^-11 lies halfway between 1 and 1 + 2^-10: to 1 (even); 1 + 3 2^-11 to 1 + 2^-9.
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above a tie: up.
  EXPECT_EQ(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -23)), 0x3c01);
  // Integers: exact to 2048, then every other one; 2049 ties to 2048, 2051 to 2052.
  EXPECT_EQ(float_to_half(2048.0f), 0x6800);
  EXPECT_EQ(float_to_half(2049.0f), 0x6800);
  EXPECT_EQ(float_to_half(2051.0f), 0x6802);
  EXPECT_EQ(float_to_half(-2051.0f), 0xe802);
  // The top: 65519 rounds down to 65504, 65520 (the tie, 65504 being odd) to infinity.
  EXPECT_EQ(float_to_half(65519.0f), 0x7bff);
  EXPECT_EQ(float_to_half(65520.0f), 0x7c00);
  EXPECT_EQ(float_to_half(-1e10f), 0xfc00);
  // Subnormals: 2^-25 ties between 0 and 2^-24: 0; 3 2^-25 between 1 and 2 units: 2.
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(float_to_half(3 * std::ldexp(1.0f, -25)), 0x0002);
  EXPECT_EQ(float_to_half(std::ldexp(1.0f, -25) * 1.0001f), 0x0001);
  EXPECT_EQ(float_to_half(-std::ldexp(1.0f, -30)), 0x8000);  // -0
  // The largest subnormal plus half a unit ties to the smallest normal (even).
  EXPECT_EQ(float_to_half(1023.5f * std::ldexp(1.0f, -24)), 0x0400);
  // NaN stays NaN, sign kept; a payload only in dropped bits is quieted, not made infinite.
  EXPECT_TRUE(is_nan_half(float_to_half(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(float_to_half(float_bits(0xffc00000u)), 0xfe00);
  EXPECT_EQ(float_to_half(float_bits(0x7f800001u)), 0x7e00);
}

TEST(Float16, Bfloat16RoundsTiesToEven) {
  EXPECT_EQ(bf16_to_float(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_float(0x4380), 256.0f);
  // Integers: exact to 256, then every other one; 257 ties to 256, 259 to 260.
  EXPECT_EQ(float_to_bf16(256.0f), 0x4380);
  EXPECT_EQ(float_to_bf16(257.0f), 0x4380);
  EXPECT_EQ(float_to_bf16(259.0f), 0x4382);
  EXPECT_EQ(float_to_bf16(-259.0f), 0xc382);
  EXPECT_EQ(float_to_bf16(257.5f), 0x4381);  // above the tie
  // 1 + 2^-8 ties between 1 and 1 + 2^-7: to 1; 1 + 3 2^-8 to 1 + 2^-6.
  EXPECT_EQ(float_to_bf16(1.0f + std::ldexp(1.0f, -8)), 0x3f80);
  EXPECT_EQ(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
  // The largest float rounds up past the largest bfloat16: infinity.
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7f80);
  EXPECT_EQ(float_to_bf16(-std::numeric_limits<float>::infinity()), 0xff80);
  // Float subnormals keep their upper bits, rounded the same way.
  EXPECT_EQ(float_to_bf16(float_bits(0x00018000u)), 0x0002);  // tie, odd 1: up to 2
  EXPECT_EQ(float_to_bf16(float_bits(0x00028000u)), 0x0002);  // tie, even 2: stays
  // NaN stays NaN, sign kept; a payload only in the dropped bits is quieted.
  EXPECT_EQ(float_to_bf16(float_bits(0x7fc00000u)), 0x7fc0);
  EXPECT_EQ(float_to_bf16(float_bits(0xff800001u)), 0xffc0);
  EXPECT_EQ(float_to_bf16(float_bits(0x7fa00000u)), 0x7fa0);  // signaling, payload kept
}

// Every pattern of either format, the floats halfway to its neighbour and one float either side
// of that, against the references.
TEST(Float16, EveryTieAndItsNeighbours) {
  for (uint32_t h = 0; h <= 0xffff; ++h) {
    const uint16_t p = static_cast<uint16_t>(h);
    if (kHalfReference && !is_nan_half(p)) {
      const uint32_t f = bits_of(half_to_float(p));
      // The next half up in magnitude is the next pattern.
      const uint16_t next = static_cast<uint16_t>(p + 1);
      if ((p & 0x7fffu) < 0x7c00u) {
        // Past 65504 the next step would be 65536, were there one: the tie is 65520.
        const float a = float_bits(f);
        const float b =
            (next & 0x7fffu) == 0x7c00u ? std::copysign(65536.0f, a) : half_to_float(next);
        const float mid = static_cast<float>((static_cast<double>(a) + b) / 2);  // exact
        for (float x : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 2 * mid), a, b}) {
          ASSERT_EQ(float_to_half(x), ref_float_to_half(x)) << std::hex << bits_of(x);
        }
      }
    }
    if (!is_nan_bf16(p)) {
      const uint32_t u = h << 16;
      for (uint32_t low : {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
        const float x = float_bits(u | low);
        if (std::isnan(x)) continue;
        ASSERT_EQ(float_to_bf16(x), ref_float_to_bf16(x)) << std::hex << (u | low);
      }
    }
  }
  if (!kHalfReference) GTEST_SKIP() << "bfloat16 checked; " << kNoHalfReference;
}

// A sweep over all of float's patterns, one in 1021 (NaNs aside), against the references.
TEST(Float16, FloatSweepMatchesReferences) {
  for (uint64_t u = 0; u <= 0xffffffffu; u += 1021) {
    const float x = float_bits(static_cast<uint32_t>(u));
    if (std::isnan(x)) {
      ASSERT_TRUE(is_nan_half(float_to_half(x)));
      ASSERT_TRUE(is_nan_bf16(float_to_bf16(x)));
      continue;
    }
    if (kHalfReference) {
      ASSERT_EQ(float_to_half(x), ref_float_to_half(x)) << std::hex << u;
    }
    ASSERT_EQ(float_to_bf16(x), ref_float_to_bf16(x)) << std::hex << u;
  }
  if (!kHalfReference) GTEST_SKIP() << "bfloat16 checked; " << kNoHalfReference;
}

}  // namespace
}  // namespace torusmpi::float16
