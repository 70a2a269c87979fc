// The two 16-bit floating-point formats that accelerators reduce in, as bit patterns (uint16_t),
// and their conversions to and from float:
//  - bfloat16: 1 sign, 8 exponent and 7 mantissa bits, the upper half of a float;
//  - half: IEEE 754 binary16 (C's _Float16), 1 sign, 5 exponent and 10 mantissa bits.
// Widening is exact for every one of the 65536 patterns of either format (NaNs keep their sign and
// payload, quiet or not). Narrowing rounds to nearest, ties to even, as float arithmetic does:
// past the largest finite value to infinity, below the smallest normal to the format's subnormals
// (half) or float's (bfloat16); a NaN stays a NaN with its sign and its payload's upper bits.
//
// Plain integer and float operations without branches, so that loops over arrays vectorize with
// SSE2 alone (gcc 12 converts _Float16 through libgcc calls unless F16C is enabled). Reductions
// widen both operands, combine them in float and narrow the result: for +, - and * one rounding of
// the exact result, since float's 24 bits hold at least 2p + 2 bits of either format.
#ifndef TORUSMPI_CORE_FLOAT16_H_
#define TORUSMPI_CORE_FLOAT16_H_

#include <cstdint>
#include <cstring>

namespace torusmpi::float16 {

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// c ? a : b, as bit operations: with a branch instead, gcc would not vectorize the loops, since
// it may not move the float operations of one path out of their branch (-ftrapping-math).
inline uint32_t pick(bool c, uint32_t a, uint32_t b) {
  return b ^ ((a ^ b) & (0u - static_cast<uint32_t>(c)));
}

inline float bf16_to_float(uint16_t h) { return float_of(uint32_t{h} << 16); }

inline uint16_t float_to_bf16(float f) {
  const uint32_t u = bits_of(f);
  // Adding 0x7fff and the kept part's lowest bit carries into the kept part exactly when the
  // dropped half is above one half, or one half with an odd kept part: ties go to even. A carry
  // out of the mantissa raises the exponent, up to infinity's.
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  // A NaN whose payload lies only in the dropped bits would come out as infinity: quiet it.
  const uint32_t nan = (u >> 16) | pick((u & 0x007f0000u) == 0, 0x0040u, 0u);
  return static_cast<uint16_t>(pick((u & 0x7fffffffu) > 0x7f800000u, nan, rounded));
}

inline float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t{h & 0x8000u} << 16;
  const uint32_t em = h & 0x7fffu;  // exponent and mantissa
  // Normal: the exponent rebiased by 127 - 15 = 112. Infinity and NaN (exponent 31): float's 255,
  // the mantissa (payload) as it is. Zero and subnormals: em units of 2^-24, which is
  // 2^-14 (1 + em 2^-10) - 2^-14, exact (the two are within a factor of 2 of each other).
  const uint32_t normal = (em << 13) + (112u << 23);
  const uint32_t special = (em << 13) | 0x7f800000u;
  const uint32_t tiny = bits_of(float_of((em << 13) + (113u << 23)) - 0x1p-14f);
  const uint32_t magnitude = pick(em >= 0x7c00u, special, pick(em >= 0x0400u, normal, tiny));
  return float_of(sign | magnitude);
}

inline uint16_t float_to_half(float f) {
  const uint32_t u = bits_of(f);
  const uint32_t sign = (u >> 16) & 0x8000u;
  const uint32_t a = u & 0x7fffffffu;
  // [2^-14, 65520): rebiased, the 13 dropped bits rounded as float_to_bf16 rounds its 16.
  const uint32_t normal = (a - (112u << 23) + 0x0fffu + ((a >> 13) & 1u)) >> 13;
  // Below 2^-14, subnormal: in 0.5f + |f| the float addition itself rounds |f| to a multiple of
  // 2^-24 (the spacing of floats in [0.5, 1)), to nearest even, and leaves it in the low bits;
  // 2^-14 itself comes out as 0x400, the smallest normal half.
  const uint32_t tiny = bits_of(float_of(a) + 0.5f) - 0x3f000000u;
  const uint32_t nan = 0x7c00u | ((a >> 13) & 0x03ffu) | pick((a & 0x007fe000u) == 0, 0x0200u, 0u);
  // 65520 lies halfway between 65504, the largest half (odd mantissa), and 65536: to infinity.
  const uint32_t magnitude = pick(
      a > 0x7f800000u, nan, pick(a >= 0x477ff000u, 0x7c00u, pick(a >= 0x38800000u, normal, tiny)));
  return static_cast<uint16_t>(sign | magnitude);
}

}  // namespace torusmpi::float16

#endif  // TORUSMPI_CORE_FLOAT16_H_
