// The reduction kernels' dispatch: the widest copy of kernels.h the processor runs.
#include "coll/ops/ops.h"

#include <complex>

#define TORUSMPI_OPS_ISA baseline
#include "coll/ops/kernels.h"

#if defined(__x86_64__)
#define TORUSMPI_OPS_X86 1  // coll/Makefile.am builds ops_avx2.cc and ops_avx512.cc
#else
#define TORUSMPI_OPS_X86 0
#endif

namespace torusmpi::coll {

#if TORUSMPI_OPS_X86
namespace avx2 {
ReduceFn kernel_for(ReduceOp op, Elem elem);
}
namespace avx512 {
ReduceFn kernel_for(ReduceOp op, Elem elem);
}
#endif

Isa best_isa() {
#if TORUSMPI_OPS_X86
  // Byte and word kernels need AVX-512BW beyond the foundation.
  static const Isa best = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                              ? Isa::kAvx512
                          : __builtin_cpu_supports("avx2") ? Isa::kAvx2
                                                           : Isa::kBaseline;
  return best;
#else
  return Isa::kBaseline;
#endif
}

ReduceFn reduce_fn(ReduceOp op, Elem elem, Isa isa) {
  if (isa > best_isa()) return nullptr;
  switch (isa) {
#if TORUSMPI_OPS_X86
    case Isa::kAvx512:
      return avx512::kernel_for(op, elem);
    case Isa::kAvx2:
      return avx2::kernel_for(op, elem);
#endif
    default:
      return baseline::kernel_for(op, elem);
  }
}

ReduceFn reduce_fn(ReduceOp op, Elem elem) { return reduce_fn(op, elem, best_isa()); }

size_t elem_stride(Elem elem) {
  switch (elem) {
    case Elem::kI8:
    case Elem::kU8:
    case Elem::kBool:
      return 1;
    case Elem::kI16:
    case Elem::kU16:
    case Elem::kBfloat16:
    case Elem::kFloat16:
      return 2;
    case Elem::kI32:
    case Elem::kU32:
    case Elem::kF32:
      return 4;
    case Elem::kI64:
    case Elem::kU64:
    case Elem::kF64:
    case Elem::kComplexF32:
      return 8;
    case Elem::kLongDouble:
    case Elem::kComplexF64:
      return 16;
    case Elem::kComplexLongDouble:
      return sizeof(std::complex<long double>);
    case Elem::kFloatInt:
      return sizeof(baseline::Pair<float, int>);
    case Elem::kDoubleInt:
      return sizeof(baseline::Pair<double, int>);
    case Elem::kLongInt:
      return sizeof(baseline::Pair<long, int>);
    case Elem::kIntInt:
      return sizeof(baseline::Pair<int, int>);
    case Elem::kShortInt:
      return sizeof(baseline::Pair<short, int>);
    case Elem::kLongDoubleInt:
      return sizeof(baseline::Pair<long double, int>);
    case Elem::kFloatFloat:
      return sizeof(baseline::Pair<float, float>);
    case Elem::kDoubleDouble:
      return sizeof(baseline::Pair<double, double>);
    case Elem::kCount:
      break;
  }
  return 0;
}

}  // namespace torusmpi::coll
