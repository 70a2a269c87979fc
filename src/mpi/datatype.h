// Datatypes in the MPI layer: the object behind a derived datatype's handle, and the engine's view
// (dtype::Type) of any datatype, predefined or derived, for everything that moves data.
//
// A derived datatype lives while anything refers to it: the user's handle (until MPI_Type_free),
// each datatype built on it (MPI_Type_get_contents returns it), each handle MPI_Type_get_contents
// gave out, and each operation in flight that retained it. An operation may instead keep the
// engine type alone (engine_type_ref): layouts are immutable and shared.
#ifndef TORUSMPI_MPI_DATATYPE_H_
#define TORUSMPI_MPI_DATATYPE_H_

#include <atomic>
#include <string>
#include <vector>

#include "dtype/dtype.h"
#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

// A derived datatype: MPI_Datatype is &handle, handle.impl == this.
struct Datatype {
  ompi_datatype_t handle;
  std::atomic<int32_t> refs{1};
  bool committed = false;
  bool predefined = false;  // MPI_Type_create_f90_*'s: MPI_Type_free refuses it
  // MPI_Type_get_envelope/get_contents: the constructor and its arguments. Derived datatypes
  // among `types` are retained.
  int combiner = MPI_COMBINER_NAMED;
  std::vector<int> ints;
  std::vector<MPI_Aint> aints;
  std::vector<MPI_Datatype> types;
  std::string name;
  dtype::TypeRef type;
};

// The derived datatype behind a handle; nullptr for predefined ones and non-datatypes.
inline Datatype* derived_type(MPI_Datatype type) {
  return type != nullptr && type->magic == kMagicDatatype && type->builtin == kDerivedType
             ? type->impl
             : nullptr;
}

// The engine's type for any datatype handle; nullptr when the handle is not a datatype
// (MPI_DATATYPE_NULL, a freed datatype, another kind of handle, garbage).
const dtype::Type* engine_type(MPI_Datatype type);
// The same, shared, for an operation that outlives its call; empty when not a datatype.
dtype::TypeRef engine_type_ref(MPI_Datatype type);
// The engine's type of the predefined datatype with this index of datatypes.def.
const dtype::TypeRef& builtin_engine_type(int builtin);

// The layout a datatype has in a file of external32 data (MPI 3.1, 13.5.1): each basic element
// its external32 bytes, packed (MPI_LONG takes 4, MPI_DOUBLE_INT 12). Portable constructors
// (contiguous, vector, indexed, indexed_block, subarray, darray, dup) count old types, so their
// displacements scale with the old type's file extent; those given in bytes (hvector, hindexed,
// hindexed_block, struct, resized) are file bytes as they are. nullptr when it overflows.
dtype::TypeRef external32_layout(MPI_Datatype type);

// Why a handle is not a datatype, for messages: "MPI_DATATYPE_NULL", "a freed datatype", "not a
// datatype"; nullptr when it is one.
const char* bad_datatype(MPI_Datatype type);

// Checks the datatype argument of a call that moves data: a datatype, not MPI_DATATYPE_NULL,
// committed. Otherwise raises MPI_ERR_TYPE on comm's handler ("MPI_Send: MPI_ERR_TYPE: datatype
// argument is not committed"; `arg` names the argument: "datatype", "sendtype") and returns it.
int check_data_type(const char* fn, MPI_Comm comm, MPI_Datatype type, const char* arg,
                    const dtype::Type** out);

// Points the predefined datatypes' d_keyhash at themselves (MPI_Init), through their handles, so
// that the executable's copies get it: Open MPI's Fortran bindings pass it back to find a
// datatype's attributes.
void predefined_datatypes_init();

// Reference counts of derived datatypes; no-ops on predefined ones. A type whose last reference
// goes is deleted (its handle then reads as freed).
void retain_type(MPI_Datatype type);
void release_type(MPI_Datatype type);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_DATATYPE_H_
