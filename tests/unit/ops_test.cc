// The reduction kernels: each operator's meaning, wrap-around of integer sums, MINLOC/MAXLOC ties,
// and the pairs that have no kernel.
#include "coll/ops/ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "core/float16.h"

namespace torusmpi::coll {
namespace {

template <class T>
std::vector<T> reduce(ReduceOp op, Elem elem, std::vector<T> inout, const std::vector<T>& in) {
  ReduceFn fn = reduce_fn(op, elem);
  EXPECT_NE(fn, nullptr);
  if (fn != nullptr) fn(inout.data(), in.data(), inout.size());
  return inout;
}

TEST(Ops, IntegerOperators) {
  std::vector<int32_t> a{1, -5, 6, 0}, b{3, 2, 6, 7};
  EXPECT_EQ(reduce(ReduceOp::kSum, Elem::kI32, a, b), (std::vector<int32_t>{4, -3, 12, 7}));
  EXPECT_EQ(reduce(ReduceOp::kProd, Elem::kI32, a, b), (std::vector<int32_t>{3, -10, 36, 0}));
  EXPECT_EQ(reduce(ReduceOp::kMax, Elem::kI32, a, b), (std::vector<int32_t>{3, 2, 6, 7}));
  EXPECT_EQ(reduce(ReduceOp::kMin, Elem::kI32, a, b), (std::vector<int32_t>{1, -5, 6, 0}));
  EXPECT_EQ(reduce(ReduceOp::kLand, Elem::kI32, a, b), (std::vector<int32_t>{1, 1, 1, 0}));
  EXPECT_EQ(reduce(ReduceOp::kLor, Elem::kI32, a, b), (std::vector<int32_t>{1, 1, 1, 1}));
  EXPECT_EQ(reduce(ReduceOp::kLxor, Elem::kI32, a, b), (std::vector<int32_t>{0, 0, 0, 1}));
  EXPECT_EQ(reduce(ReduceOp::kBand, Elem::kI32, a, b), (std::vector<int32_t>{1 & 3, -5 & 2, 6, 0}));
  EXPECT_EQ(reduce(ReduceOp::kBor, Elem::kI32, a, b), (std::vector<int32_t>{3, -5 | 2, 6, 7}));
  EXPECT_EQ(reduce(ReduceOp::kBxor, Elem::kI32, a, b), (std::vector<int32_t>{2, -5 ^ 2, 0, 7}));
}

TEST(Ops, IntegerSumsAndProductsWrapAround) {
  // MPI_CHAR sums as the OSU Micro-Benchmarks validate them: modulo 256, never saturated.
  EXPECT_EQ(reduce<int8_t>(ReduceOp::kSum, Elem::kI8, {120, -128}, {10, -1}),
            (std::vector<int8_t>{static_cast<int8_t>(130 - 256), 127}));
  EXPECT_EQ(reduce<uint8_t>(ReduceOp::kSum, Elem::kU8, {250}, {10}), (std::vector<uint8_t>{4}));
  EXPECT_EQ(reduce<int16_t>(ReduceOp::kProd, Elem::kI16, {300}, {300}),
            (std::vector<int16_t>{static_cast<int16_t>(90000 - 65536)}));
  EXPECT_EQ(reduce<int64_t>(ReduceOp::kSum, Elem::kI64, {INT64_MAX}, {1}),
            (std::vector<int64_t>{INT64_MIN}));
}

TEST(Ops, FloatAndComplex) {
  EXPECT_EQ(reduce<double>(ReduceOp::kSum, Elem::kF64, {1.5, 2}, {2.5, -2}),
            (std::vector<double>{4, 0}));
  EXPECT_EQ(reduce<float>(ReduceOp::kMax, Elem::kF32, {1.5f}, {2.5f}), (std::vector<float>{2.5f}));
  using C = std::complex<double>;
  EXPECT_EQ(reduce<C>(ReduceOp::kProd, Elem::kComplexF64, {C(1, 1)}, {C(1, -1)}),
            (std::vector<C>{C(2, 0)}));
  EXPECT_EQ(reduce_fn(ReduceOp::kMax, Elem::kComplexF64), nullptr)
      << "complex numbers have no order";
  EXPECT_EQ(reduce_fn(ReduceOp::kBand, Elem::kF64), nullptr);
}

struct DoubleInt {
  double value;
  int index;
  bool operator==(const DoubleInt& o) const { return value == o.value && index == o.index; }
};

TEST(Ops, LocOperatorsPreferTheLowerIndexOnTies) {
  std::vector<DoubleInt> a{{1, 5}, {3, 2}, {2, 9}}, b{{1, 3}, {2, 0}, {4, 1}};
  EXPECT_EQ(reduce(ReduceOp::kMaxloc, Elem::kDoubleInt, a, b),
            (std::vector<DoubleInt>{{1, 3}, {3, 2}, {4, 1}}));
  EXPECT_EQ(reduce(ReduceOp::kMinloc, Elem::kDoubleInt, a, b),
            (std::vector<DoubleInt>{{1, 3}, {2, 0}, {2, 9}}));
  EXPECT_EQ(elem_stride(Elem::kDoubleInt), sizeof(DoubleInt));
  EXPECT_EQ(reduce_fn(ReduceOp::kSum, Elem::kDoubleInt), nullptr);
  EXPECT_EQ(reduce_fn(ReduceOp::kMaxloc, Elem::kI32), nullptr);
}

TEST(Ops, BoolHasOnlyLogicalOperators) {
  // uint8_t holding 0/1 stands for bool: std::vector<bool> has no data().
  EXPECT_EQ(reduce<uint8_t>(ReduceOp::kLxor, Elem::kBool, {1, 1, 0}, {1, 0, 0}),
            (std::vector<uint8_t>{0, 1, 0}));
  EXPECT_EQ(reduce_fn(ReduceOp::kSum, Elem::kBool), nullptr);
}

// The 16-bit floats, as bit patterns: each result the float result of the widened operands,
// rounded to nearest even.
std::vector<uint16_t> bf16(std::initializer_list<float> v) {
  std::vector<uint16_t> out;
  for (float f : v) out.push_back(float16::float_to_bf16(f));
  return out;
}
std::vector<uint16_t> half(std::initializer_list<float> v) {
  std::vector<uint16_t> out;
  for (float f : v) out.push_back(float16::float_to_half(f));
  return out;
}

TEST(Ops, Bfloat16Operators) {
  // Sums and products of integers stay exact up to 256 in magnitude; 255 + 2 = 257 ties to 256,
  // 257 + 2 = 259 to 260; 3 * 87 = 261 ties to 260.
  EXPECT_EQ(reduce(ReduceOp::kSum, Elem::kBfloat16, bf16({1, -7, 200, 255, 256, 0.5f}),
                   bf16({2, 3, 56, 2, 3, 0.25f})),
            bf16({3, -4, 256, 256, 260, 0.75f}));
  EXPECT_EQ(
      reduce(ReduceOp::kProd, Elem::kBfloat16, bf16({3, -16, 1.5f, 87}), bf16({5, 16, 1.5f, 3})),
      bf16({15, -256, 2.25f, 260}));
  EXPECT_EQ(reduce(ReduceOp::kMax, Elem::kBfloat16, bf16({1, -7, 200}), bf16({2, -9, 100})),
            bf16({2, -7, 200}));
  EXPECT_EQ(reduce(ReduceOp::kMin, Elem::kBfloat16, bf16({1, -7, 200}), bf16({2, -9, 100})),
            bf16({1, -9, 100}));
  // Overflow to infinity (the largest finite bfloat16 twice), and NaN stays NaN.
  const auto inf =
      reduce<uint16_t>(ReduceOp::kSum, Elem::kBfloat16, {0x7f7f, 0xff7f}, {0x7f7f, 0xff7f});
  EXPECT_EQ(inf, (std::vector<uint16_t>{0x7f80, 0xff80}));
  const auto nan = reduce(ReduceOp::kSum, Elem::kBfloat16, bf16({NAN}), bf16({1}));
  EXPECT_TRUE(std::isnan(float16::bf16_to_float(nan[0])));
  // A long vector (the vectorized loop and its tail): 1 + i, 8 times over, exactly.
  std::vector<uint16_t> acc(1000, float16::float_to_bf16(0)), one(1000);
  for (size_t i = 0; i < one.size(); ++i) one[i] = float16::float_to_bf16(1.0f + i % 31);
  for (int k = 0; k < 8; ++k)
    reduce_fn(ReduceOp::kSum, Elem::kBfloat16)(acc.data(), one.data(), 1000);
  for (size_t i = 0; i < acc.size(); ++i)
    EXPECT_EQ(float16::bf16_to_float(acc[i]), 8.0f * (1 + i % 31)) << i;
}

TEST(Ops, Float16Operators) {
  // Exact up to 2048; 2047 + 2 = 2049 ties to 2048, 2050 + 1 = 2051 to 2052; 65504 + 16 = 65520
  // ties to infinity (65504 is odd); subnormals add exactly.
  const float tiny = std::ldexp(1.0f, -24);
  EXPECT_EQ(reduce(ReduceOp::kSum, Elem::kFloat16, half({1, -7, 2047, 2050, 65504, tiny, 1000}),
                   half({2, 3, 2, 1, 16, 2 * tiny, -3000})),
            half({3, -4, 2048, 2052, INFINITY, 3 * tiny, -2000}));
  EXPECT_EQ(
      reduce(ReduceOp::kProd, Elem::kFloat16, half({3, -64, 0.5f, 683}), half({5, 32, 0.5f, 3})),
      half({15, -2048, 0.25f, 2048}));  // 2049 ties to 2048
  EXPECT_EQ(reduce(ReduceOp::kMax, Elem::kFloat16, half({1, -7, 2000}), half({2, -9, 100})),
            half({2, -7, 2000}));
  EXPECT_EQ(reduce(ReduceOp::kMin, Elem::kFloat16, half({1, -7, 2000}), half({2, -9, 100})),
            half({1, -9, 100}));
  const auto nan = reduce(ReduceOp::kProd, Elem::kFloat16, half({INFINITY}), half({0}));
  EXPECT_TRUE(std::isnan(float16::half_to_float(nan[0])));
  std::vector<uint16_t> acc(1000, float16::float_to_half(0)), one(1000);
  for (size_t i = 0; i < one.size(); ++i) one[i] = float16::float_to_half(1.0f + i % 251);
  for (int k = 0; k < 8; ++k)
    reduce_fn(ReduceOp::kSum, Elem::kFloat16)(acc.data(), one.data(), 1000);
  for (size_t i = 0; i < acc.size(); ++i)
    EXPECT_EQ(float16::half_to_float(acc[i]), 8.0f * (1 + i % 251)) << i;
}

TEST(Ops, Float16HasOnlyArithmeticOperators) {
  for (Elem e : {Elem::kBfloat16, Elem::kFloat16}) {
    for (ReduceOp op : {ReduceOp::kLand, ReduceOp::kLor, ReduceOp::kLxor, ReduceOp::kBand,
                        ReduceOp::kBor, ReduceOp::kBxor, ReduceOp::kMaxloc, ReduceOp::kMinloc})
      EXPECT_EQ(reduce_fn(op, e), nullptr) << static_cast<int>(op);
    EXPECT_EQ(elem_stride(e), 2u);
  }
}

// Every copy of the kernels (baseline, AVX2, AVX-512: those this processor runs) gives the same
// bits as the baseline for every op and element, on random bytes of lengths that leave every
// vector remainder, at element offsets 0, 1 and 2.
TEST(Ops, EveryInstructionSetGivesTheSameBits) {
  std::mt19937_64 gen(20261128);
  int compared = 0;
  for (int isa = 1; isa <= static_cast<int>(best_isa()); ++isa) {
    for (int e = 0; e < static_cast<int>(Elem::kCount); ++e) {
      const auto elem = static_cast<Elem>(e);
      const size_t stride = elem_stride(elem);
      for (int o = 0; o < static_cast<int>(ReduceOp::kCount); ++o) {
        const auto op = static_cast<ReduceOp>(o);
        ReduceFn base = reduce_fn(op, elem, Isa::kBaseline);
        ReduceFn wide = reduce_fn(op, elem, static_cast<Isa>(isa));
        ASSERT_EQ(base == nullptr, wide == nullptr) << "op " << o << " elem " << e;
        if (base == nullptr) continue;
        for (size_t count : {1, 7, 63, 64, 65, 257, 1000}) {
          for (size_t skew = 0; skew < 3; ++skew) {
            const size_t bytes = (count + skew) * stride;
            std::vector<uint8_t> in(bytes), a(bytes);
            for (auto& b : in) b = static_cast<uint8_t>(gen());
            for (auto& b : a) b = static_cast<uint8_t>(gen());
            if (elem == Elem::kBool) {  // a bool holds 0 or 1
              for (auto& b : in) b &= 1;
              for (auto& b : a) b &= 1;
            }
            std::vector<uint8_t> b = a;
            base(a.data() + skew * stride, in.data() + skew * stride, count);
            wide(b.data() + skew * stride, in.data() + skew * stride, count);
            ASSERT_EQ(a, b) << "isa " << isa << " op " << o << " elem " << e << " count " << count
                            << " skew " << skew;
            ++compared;
          }
        }
      }
    }
  }
  if (best_isa() == Isa::kBaseline) GTEST_SKIP() << "this processor runs the baseline copy only";
  EXPECT_GT(compared, 0);
}

TEST(Ops, EveryElementHasAStride) {
  for (int e = 0; e < static_cast<int>(Elem::kCount); ++e) {
    EXPECT_GT(elem_stride(static_cast<Elem>(e)), 0u) << e;
  }
}

}  // namespace
}  // namespace torusmpi::coll
