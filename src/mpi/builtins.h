// Indices of the predefined datatypes and ops, in the order of datatypes.def and ops.def; the
// predefined objects carry them.
#ifndef TORUSMPI_MPI_BUILTINS_H_
#define TORUSMPI_MPI_BUILTINS_H_

#include <cstdint>

#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

// Which reductions a predefined datatype allows (MPI 3.1, section 5.9.2).
enum class TypeClass {
  kSignedInt,
  kUnsignedInt,
  kFloat,
  kComplex,
  kBool,
  kLogical,
  kByte,
  kPacked,
  kPair,
  kMarker
};

enum class BuiltinType : int32_t {
#define TORUSMPI_DATATYPE(obj, name, size, extent, true_extent, cls, fortran) k_##obj,
#include "mpi/datatypes.def"
#undef TORUSMPI_DATATYPE
  kCount
};

struct BuiltinTypeInfo {
  const char* name;
  int size;
  int extent;
  int true_extent;
  TypeClass cls;
  int fortran;  // Open MPI's Fortran number; -1: none of its own (numbered when first converted)
};

const BuiltinTypeInfo& builtin_type(int index);
// The predefined datatype's handle (MPI_INT for the index of "MPI_INT").
MPI_Datatype builtin_datatype(int index);

enum class BuiltinOp : int32_t {
#define TORUSMPI_OP(obj, name) k_##obj,
#include "mpi/ops.def"
#undef TORUSMPI_OP
  kCount
};

const char* builtin_op_name(int index);

// The predefined datatype behind a handle, or nullptr when it is not a valid predefined datatype
// (MPI_DATATYPE_NULL, another kind of handle, garbage).
const BuiltinTypeInfo* datatype_info(MPI_Datatype type);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_BUILTINS_H_
