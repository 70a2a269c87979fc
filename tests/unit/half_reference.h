// The unit tests' reference for IEEE binary16: the compiler's own _Float16 conversions (libgcc's
// correctly rounded ones without F16C), which share nothing with core/float16.h. Not every
// compiler has the type (clang 14 has none on x86); the one that has it defines __FLT16_MAX__,
// which is what is asked here. Without it kHalfReference is false, the reference functions must
// not be called, and a test skips what needs them with GTEST_SKIP() << kNoHalfReference, so that
// the skip shows in the results instead of passing unchecked.
#ifndef TORUSMPI_TESTS_UNIT_HALF_REFERENCE_H_
#define TORUSMPI_TESTS_UNIT_HALF_REFERENCE_H_

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace torusmpi::float16 {

constexpr const char* kNoHalfReference =
    "binary16 not checked: this compiler has no _Float16 (the reference)";

#if defined(__FLT16_MAX__)
constexpr bool kHalfReference = true;
inline float ref_half_to_float(uint16_t h) {
  _Float16 x;
  std::memcpy(&x, &h, sizeof x);
  return static_cast<float>(x);
}
inline uint16_t ref_float_to_half(float f) {
  const _Float16 x = static_cast<_Float16>(f);
  uint16_t h;
  std::memcpy(&h, &x, sizeof h);
  return h;
}
#else
constexpr bool kHalfReference = false;
inline float ref_half_to_float(uint16_t) { std::abort(); }
inline uint16_t ref_float_to_half(float) { std::abort(); }
#endif

}  // namespace torusmpi::float16

#endif  // TORUSMPI_TESTS_UNIT_HALF_REFERENCE_H_
