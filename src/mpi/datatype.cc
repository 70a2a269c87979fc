// Datatype queries on the predefined datatypes. Derived datatypes come with the datatype engine.
#include <cstring>

#include "mpi/builtins.h"
#include "mpi/errors.h"

using torusmpi::mpi::BuiltinTypeInfo;
using torusmpi::mpi::datatype_info;
using torusmpi::mpi::raise;
using torusmpi::mpi::require_active;

namespace {

// Resolves a datatype or raises MPI_ERR_TYPE.
#define TORUSMPI_RESOLVE_TYPE(var, type, fn)                                                \
  const BuiltinTypeInfo* var = datatype_info(type);                                       \
  if (var == nullptr) {                                                                   \
    return raise(nullptr, MPI_ERR_TYPE, fn, "datatype argument is %s",                    \
                 (type) == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL" : "not a valid datatype"); \
  }

#define TORUSMPI_REQUIRE_ARG(ptr, fn) \
  if ((ptr) == nullptr) return raise(nullptr, MPI_ERR_ARG, fn, #ptr " argument is NULL")

}  // namespace

int PMPI_Type_size(MPI_Datatype type, int* size) {
  constexpr const char* kFn = "MPI_Type_size";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_TYPE(t, type, kFn);
  TORUSMPI_REQUIRE_ARG(size, kFn);
  *size = t->size;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Type_size);

int PMPI_Type_size_x(MPI_Datatype type, MPI_Count* size) {
  constexpr const char* kFn = "MPI_Type_size_x";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_TYPE(t, type, kFn);
  TORUSMPI_REQUIRE_ARG(size, kFn);
  *size = t->size;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Type_size_x);

int PMPI_Type_get_name(MPI_Datatype type, char* type_name, int* resultlen) {
  constexpr const char* kFn = "MPI_Type_get_name";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_TYPE(t, type, kFn);
  TORUSMPI_REQUIRE_ARG(type_name, kFn);
  TORUSMPI_REQUIRE_ARG(resultlen, kFn);
  size_t n = strnlen(t->name, MPI_MAX_OBJECT_NAME - 1);
  std::memcpy(type_name, t->name, n);
  type_name[n] = '\0';
  *resultlen = static_cast<int>(n);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_name);

int PMPI_Type_get_extent(MPI_Datatype type, MPI_Aint* lb, MPI_Aint* extent) {
  constexpr const char* kFn = "MPI_Type_get_extent";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_TYPE(t, type, kFn);
  TORUSMPI_REQUIRE_ARG(lb, kFn);
  TORUSMPI_REQUIRE_ARG(extent, kFn);
  *lb = 0;
  *extent = t->extent;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_extent);

int PMPI_Type_get_extent_x(MPI_Datatype type, MPI_Count* lb, MPI_Count* extent) {
  constexpr const char* kFn = "MPI_Type_get_extent_x";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_TYPE(t, type, kFn);
  TORUSMPI_REQUIRE_ARG(lb, kFn);
  TORUSMPI_REQUIRE_ARG(extent, kFn);
  *lb = 0;
  *extent = t->extent;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_extent_x);

int PMPI_Type_get_true_extent(MPI_Datatype type, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  constexpr const char* kFn = "MPI_Type_get_true_extent";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_TYPE(t, type, kFn);
  TORUSMPI_REQUIRE_ARG(true_lb, kFn);
  TORUSMPI_REQUIRE_ARG(true_extent, kFn);
  *true_lb = 0;
  *true_extent = t->true_extent;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_true_extent);

int PMPI_Type_get_true_extent_x(MPI_Datatype type, MPI_Count* true_lb, MPI_Count* true_extent) {
  constexpr const char* kFn = "MPI_Type_get_true_extent_x";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_TYPE(t, type, kFn);
  TORUSMPI_REQUIRE_ARG(true_lb, kFn);
  TORUSMPI_REQUIRE_ARG(true_extent, kFn);
  *true_lb = 0;
  *true_extent = t->true_extent;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Type_get_true_extent_x);
