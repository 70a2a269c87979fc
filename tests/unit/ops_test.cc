// The reduction kernels: each operator's meaning, wrap-around of integer sums, MINLOC/MAXLOC ties,
// and the pairs that have no kernel.
#include "coll/ops/ops.h"

#include <gtest/gtest.h>

#include <complex>
#include <cstdint>
#include <vector>

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

TEST(Ops, EveryElementHasAStride) {
  for (int e = 0; e < static_cast<int>(Elem::kCount); ++e) {
    EXPECT_GT(elem_stride(static_cast<Elem>(e)), 0u) << e;
  }
}

}  // namespace
}  // namespace torusmpi::coll
