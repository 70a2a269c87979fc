// Datatype queries on the predefined datatypes. Derived datatypes come with the datatype engine.
#include <initializer_list>

#include "mpi/builtins.h"
#include "mpi/errors.h"
#include "mpi/runtime.h"

using torusmpi::mpi::BuiltinTypeInfo;

namespace {

struct OutArg {
  const char* name;
  const void* ptr;
};

// The checks every datatype query shares (MPI active, a valid datatype, no NULL output argument),
// then answer(info) fills the outputs.
template <class Answer>
int query(const char* fn, MPI_Datatype type, std::initializer_list<OutArg> outs, Answer answer) {
  using torusmpi::mpi::raise_error;
  if (int err = torusmpi::mpi::require_active(fn)) return err;
  const BuiltinTypeInfo* t = torusmpi::mpi::datatype_info(type);
  if (t == nullptr) {
    return raise_error(nullptr, MPI_ERR_TYPE, fn, "datatype argument is %s",
                       type == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype");
  }
  for (const OutArg& out : outs) {
    if (out.ptr == nullptr)
      return raise_error(nullptr, MPI_ERR_ARG, fn, "%s argument is NULL", out.name);
  }
  answer(*t);
  return MPI_SUCCESS;
}

// MPI_Type_size and MPI_Type_size_x differ only in the width of the answer; so do the extents.
template <class T>
int size_of(const char* fn, MPI_Datatype type, T* size) {
  return query(fn, type, {{"size", size}}, [&](const BuiltinTypeInfo& t) { *size = t.size; });
}

template <class T>
int extent_of(const char* fn, MPI_Datatype type, T* lb, T* extent) {
  return query(fn, type, {{"lb", lb}, {"extent", extent}}, [&](const BuiltinTypeInfo& t) {
    *lb = 0;  // every predefined datatype starts at 0
    *extent = t.extent;
  });
}

template <class T>
int true_extent_of(const char* fn, MPI_Datatype type, T* true_lb, T* true_extent) {
  return query(fn, type, {{"true_lb", true_lb}, {"true_extent", true_extent}},
               [&](const BuiltinTypeInfo& t) {
                 *true_lb = 0;
                 *true_extent = t.true_extent;
               });
}

}  // namespace

int PMPI_Type_size(MPI_Datatype type, int* size) { return size_of("MPI_Type_size", type, size); }
TORUSMPI_WEAK_ALIAS(MPI_Type_size);

int PMPI_Type_size_x(MPI_Datatype type, MPI_Count* size) {
  return size_of("MPI_Type_size_x", type, size);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_size_x);

int PMPI_Type_get_name(MPI_Datatype type, char* type_name, int* resultlen) {
  return query("MPI_Type_get_name", type, {{"type_name", type_name}, {"resultlen", resultlen}},
               [&](const BuiltinTypeInfo& t) {
                 *resultlen = torusmpi::mpi::copy_out(t.name, type_name, MPI_MAX_OBJECT_NAME);
               });
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_name);

int PMPI_Type_get_extent(MPI_Datatype type, MPI_Aint* lb, MPI_Aint* extent) {
  return extent_of("MPI_Type_get_extent", type, lb, extent);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_extent);

int PMPI_Type_get_extent_x(MPI_Datatype type, MPI_Count* lb, MPI_Count* extent) {
  return extent_of("MPI_Type_get_extent_x", type, lb, extent);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_extent_x);

int PMPI_Type_get_true_extent(MPI_Datatype type, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  return true_extent_of("MPI_Type_get_true_extent", type, true_lb, true_extent);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_true_extent);

int PMPI_Type_get_true_extent_x(MPI_Datatype type, MPI_Count* true_lb, MPI_Count* true_extent) {
  return true_extent_of("MPI_Type_get_true_extent_x", type, true_lb, true_extent);
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_true_extent_x);
