// Reduction kernels on host memory: inout[i] = in[i] op inout[i] for count elements, the order of
// MPI_Reduce_local. The MPI layer maps its datatypes and ops onto Elem and ReduceOp (and refuses
// the pairs MPI forbids); nothing here knows mpi.h.
#ifndef TORUSMPI_COLL_OPS_OPS_H_
#define TORUSMPI_COLL_OPS_OPS_H_

#include <cstddef>
#include <cstdint>

namespace torusmpi::coll {

// Element types, by their C layout. Pairs are the MINLOC/MAXLOC types: value then index.
enum class Elem : uint8_t {
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  kF32,
  kF64,
  kLongDouble,
  kComplexF32,
  kComplexF64,
  kComplexLongDouble,
  kBool,  // C _Bool / C++ bool: one byte, 0 or 1
  kFloatInt,
  kDoubleInt,
  kLongInt,
  kIntInt,
  kShortInt,
  kLongDoubleInt,
  kFloatFloat,
  kDoubleDouble,
  kBfloat16,  // core/float16.h's formats, as uint16_t bit patterns: reduced in float, rounded back
  kFloat16,   // IEEE binary16
  kCount
};

enum class ReduceOp : uint8_t {
  kMax,
  kMin,
  kSum,
  kProd,
  kLand,
  kLor,
  kLxor,
  kBand,
  kBor,
  kBxor,
  kMaxloc,
  kMinloc,
  kCount
};

using ReduceFn = void (*)(void* inout, const void* in, size_t count);

// A reduction as a run applies it: a kernel of this file, or a function the application defined
// (MPI_Op_create), called through `call` with the application's function and datatype, which this
// layer does not look into (user_lang and user_extra say how the MPI layer calls a function made
// in Fortran or C++). inout = in op inout, in MPI_Reduce_local's order either way.
struct Reduction {
  ReduceFn kernel = nullptr;
  // A predefined op on a predefined type: which (kCount otherwise), for who must know what the
  // kernel does (the switch, pml/ina, does it itself).
  ReduceOp op = ReduceOp::kCount;
  Elem elem = Elem::kCount;
  void (*call)(const Reduction& r, void* inout, const void* in, size_t count) = nullptr;
  void* user_fn = nullptr;
  void* user_type = nullptr;
  void* user_extra = nullptr;
  uint8_t user_lang = 0;

  void apply(void* inout, const void* in, size_t count) const {
    if (kernel != nullptr) {
      kernel(inout, in, count);
    } else {
      call(*this, inout, in, count);
    }
  }
};

// The kernel for op on elem, or nullptr when the pair has none (sum of pairs, maxloc of ints...).
// Integer sums and products wrap around (two's complement), for every width. It is the widest
// copy the processor runs (Open MPI 4.1 also ships AVX-512 kernels: with SSE2 only, an
// accumulate of 16 KiB took 1.35x Open MPI's time); every copy gives the same bits.
ReduceFn reduce_fn(ReduceOp op, Elem elem);

// The copies of the kernels, by instruction set, and the widest this processor runs.
enum class Isa : uint8_t { kBaseline, kAvx2, kAvx512 };
Isa best_isa();
// The copy for isa, or nullptr when the processor does not run it (the unit tests compare them).
ReduceFn reduce_fn(ReduceOp op, Elem elem, Isa isa);

// Bytes between consecutive elements (C layout, padding included).
size_t elem_stride(Elem elem);

}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_OPS_OPS_H_
