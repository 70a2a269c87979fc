// The reduction kernels, compiled once for each instruction set the dispatch in ops.cc chooses
// from: ops.cc (the x86-64 baseline, SSE2), ops_avx2.cc and ops_avx512.cc, each defining
// TORUSMPI_OPS_ISA, the namespace of its copy, before it includes this file. The loops are the
// same; only the vector width differs, so every copy computes the same bits (no copy may contract
// a multiply and an add: none is compiled with FMA).
//
// Included only by those three files: it defines functions.
#ifndef TORUSMPI_OPS_ISA
#error "define TORUSMPI_OPS_ISA (the namespace of this copy of the kernels) first"
#endif

#include <complex>
#include <type_traits>

#include "coll/ops/ops.h"
#include "core/float16.h"

namespace torusmpi::coll::TORUSMPI_OPS_ISA {
// Internal linkage: the copies of one template in the three files must not be merged.
namespace {

template <class V, class I>
struct Pair {
  V value;
  I index;
};

// Integer arithmetic goes through the unsigned type: wrap-around is defined there, and it is what
// the OSU Micro-Benchmarks' validation expects of MPI_CHAR sums.
template <class T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class T>
T mul(T a, T b) {
  if constexpr (std::is_integral_v<T> && sizeof(T) < sizeof(unsigned)) {
    // Narrow types promote to int, whose overflow is undefined: multiply as unsigned.
    return static_cast<T>(static_cast<unsigned>(a) * static_cast<unsigned>(b));
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}

// One loop per operator; the functor is inlined into it. The loop is vectorized explicitly
// (-fopenmp-simd): at -O2 gcc 12's cheap cost model leaves a loop of unknown trip count scalar,
// which made a float sum 6x slower than Open MPI's.
template <class T, class F>
void apply(void* inout, const void* in, size_t count, F f) {
  T* __restrict out = static_cast<T*>(inout);
  const T* __restrict src = static_cast<const T*>(in);
#pragma omp simd
  for (size_t i = 0; i < count; ++i) out[i] = f(src[i], out[i]);
}

template <class T>
void op_max(void* o, const void* i, size_t n) {
  apply<T>(o, i, n, [](T a, T b) { return a > b ? a : b; });
}
template <class T>
void op_min(void* o, const void* i, size_t n) {
  apply<T>(o, i, n, [](T a, T b) { return a < b ? a : b; });
}
template <class T>
void op_sum(void* o, const void* i, size_t n) {
  apply<T>(o, i, n, [](T a, T b) { return add(a, b); });
}
template <class T>
void op_prod(void* o, const void* i, size_t n) {
  apply<T>(o, i, n, [](T a, T b) { return mul(a, b); });
}
template <class T>
void op_land(void* o, const void* i, size_t n) {
  apply<T>(o, i, n, [](T a, T b) { return static_cast<T>(a != 0 && b != 0); });
}
template <class T>
void op_lor(void* o, const void* i, size_t n) {
  apply<T>(o, i, n, [](T a, T b) { return static_cast<T>(a != 0 || b != 0); });
}
template <class T>
void op_lxor(void* o, const void* i, size_t n) {
  apply<T>(o, i, n, [](T a, T b) { return static_cast<T>((a != 0) != (b != 0)); });
}
template <class T>
void op_band(void* o, const void* i, size_t n) {
  apply<T>(o, i, n, [](T a, T b) { return static_cast<T>(a & b); });
}
template <class T>
void op_bor(void* o, const void* i, size_t n) {
  apply<T>(o, i, n, [](T a, T b) { return static_cast<T>(a | b); });
}
template <class T>
void op_bxor(void* o, const void* i, size_t n) {
  apply<T>(o, i, n, [](T a, T b) { return static_cast<T>(a ^ b); });
}
// MPI 3.1 section 5.9.4: the larger (smaller) value wins; on a tie, the smaller index.
template <class P>
void op_maxloc(void* o, const void* i, size_t n) {
  apply<P>(o, i, n, [](P a, P b) {
    if (a.value > b.value) return a;
    if (b.value > a.value) return b;
    return a.index < b.index ? a : b;
  });
}
template <class P>
void op_minloc(void* o, const void* i, size_t n) {
  apply<P>(o, i, n, [](P a, P b) {
    if (a.value < b.value) return a;
    if (b.value < a.value) return b;
    return a.index < b.index ? a : b;
  });
}

// The 16-bit floats: both operands widened to float (exactly), combined there, the result rounded
// back to nearest even (core/float16.h). Max and min keep the winning operand's own bits. The
// conversions are branch-free, so these loops vectorize like the others.
struct Bfloat16 {
  static float widen(uint16_t h) { return float16::bf16_to_float(h); }
  static uint16_t narrow(float f) { return float16::float_to_bf16(f); }
};
struct Float16 {
  static float widen(uint16_t h) { return float16::half_to_float(h); }
  static uint16_t narrow(float f) { return float16::float_to_half(f); }
};
template <class F>
void op_max16(void* o, const void* i, size_t n) {
  apply<uint16_t>(o, i, n,
                  [](uint16_t a, uint16_t b) { return F::widen(a) > F::widen(b) ? a : b; });
}
template <class F>
void op_min16(void* o, const void* i, size_t n) {
  apply<uint16_t>(o, i, n,
                  [](uint16_t a, uint16_t b) { return F::widen(a) < F::widen(b) ? a : b; });
}
template <class F>
void op_sum16(void* o, const void* i, size_t n) {
  apply<uint16_t>(o, i, n,
                  [](uint16_t a, uint16_t b) { return F::narrow(F::widen(a) + F::widen(b)); });
}
template <class F>
void op_prod16(void* o, const void* i, size_t n) {
  apply<uint16_t>(o, i, n,
                  [](uint16_t a, uint16_t b) { return F::narrow(F::widen(a) * F::widen(b)); });
}
template <class F>
ReduceFn float16_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax:
      return op_max16<F>;
    case ReduceOp::kMin:
      return op_min16<F>;
    case ReduceOp::kSum:
      return op_sum16<F>;
    case ReduceOp::kProd:
      return op_prod16<F>;
    default:
      return nullptr;
  }
}

template <class T>
ReduceFn float_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMax:
      return op_max<T>;
    case ReduceOp::kMin:
      return op_min<T>;
    case ReduceOp::kSum:
      return op_sum<T>;
    case ReduceOp::kProd:
      return op_prod<T>;
    default:
      return nullptr;
  }
}

// Integers take what floats take, and the logical and bitwise operators.
template <class T>
ReduceFn integer_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::kLand:
      return op_land<T>;
    case ReduceOp::kLor:
      return op_lor<T>;
    case ReduceOp::kLxor:
      return op_lxor<T>;
    case ReduceOp::kBand:
      return op_band<T>;
    case ReduceOp::kBor:
      return op_bor<T>;
    case ReduceOp::kBxor:
      return op_bxor<T>;
    default:
      return float_fn<T>(op);
  }
}

template <class T>
ReduceFn complex_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return op_sum<std::complex<T>>;
    case ReduceOp::kProd:
      return op_prod<std::complex<T>>;
    default:
      return nullptr;
  }
}

template <class P>
ReduceFn pair_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::kMaxloc:
      return op_maxloc<P>;
    case ReduceOp::kMinloc:
      return op_minloc<P>;
    default:
      return nullptr;
  }
}

ReduceFn bool_fn(ReduceOp op) {
  switch (op) {
    case ReduceOp::kLand:
      return op_land<bool>;
    case ReduceOp::kLor:
      return op_lor<bool>;
    case ReduceOp::kLxor:
      return op_lxor<bool>;
    default:
      return nullptr;
  }
}

}  // namespace

// The kernel of this copy for op on elem, or nullptr (ops.h's reduce_fn).
ReduceFn kernel_for(ReduceOp op, Elem elem) {
  switch (elem) {
    case Elem::kI8:
      return integer_fn<int8_t>(op);
    case Elem::kI16:
      return integer_fn<int16_t>(op);
    case Elem::kI32:
      return integer_fn<int32_t>(op);
    case Elem::kI64:
      return integer_fn<int64_t>(op);
    case Elem::kU8:
      return integer_fn<uint8_t>(op);
    case Elem::kU16:
      return integer_fn<uint16_t>(op);
    case Elem::kU32:
      return integer_fn<uint32_t>(op);
    case Elem::kU64:
      return integer_fn<uint64_t>(op);
    case Elem::kF32:
      return float_fn<float>(op);
    case Elem::kF64:
      return float_fn<double>(op);
    case Elem::kLongDouble:
      return float_fn<long double>(op);
    case Elem::kComplexF32:
      return complex_fn<float>(op);
    case Elem::kComplexF64:
      return complex_fn<double>(op);
    case Elem::kComplexLongDouble:
      return complex_fn<long double>(op);
    case Elem::kBool:
      return bool_fn(op);
    case Elem::kFloatInt:
      return pair_fn<Pair<float, int>>(op);
    case Elem::kDoubleInt:
      return pair_fn<Pair<double, int>>(op);
    case Elem::kLongInt:
      return pair_fn<Pair<long, int>>(op);
    case Elem::kIntInt:
      return pair_fn<Pair<int, int>>(op);
    case Elem::kShortInt:
      return pair_fn<Pair<short, int>>(op);
    case Elem::kLongDoubleInt:
      return pair_fn<Pair<long double, int>>(op);
    case Elem::kFloatFloat:
      return pair_fn<Pair<float, float>>(op);
    case Elem::kDoubleDouble:
      return pair_fn<Pair<double, double>>(op);
    case Elem::kBfloat16:
      return float16_fn<Bfloat16>(op);
    case Elem::kFloat16:
      return float16_fn<Float16>(op);
    case Elem::kCount:
      break;
  }
  return nullptr;
}

}  // namespace torusmpi::coll::TORUSMPI_OPS_ISA
