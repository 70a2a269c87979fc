// Attributes: keyvals and the values attached to communicators (the predefined ones included),
// datatypes and windows. [Being written: user keyvals, copy and delete callbacks.]
#include <climits>

#include "mpi/attr.h"
#include "mpi/errors.h"
#include "mpi/runtime.h"

using torusmpi::mpi::Comm;
using torusmpi::mpi::comm_impl;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::require_active;
using torusmpi::mpi::runtime;

namespace {

// Resolves comm or raises MPI_ERR_COMM (on MPI_COMM_WORLD's handler, as comm has none).
#define TORUSMPI_RESOLVE_COMM(var, comm, fn)                                                    \
  Comm* var = comm_impl(comm);                                                                  \
  if (var == nullptr) {                                                                         \
    return raise_error(nullptr, MPI_ERR_COMM, fn, "comm argument is %s",                        \
                       (comm) == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a valid communicator"); \
  }

// Values of the predefined attributes. MPI hands out pointers to them, so they must outlive
// every caller: they live as long as the process.
struct PredefinedAttrs {
  int tag_ub = INT_MAX;
  int host = MPI_PROC_NULL;  // no host process
  int io = MPI_ANY_SOURCE;   // every rank can do I/O
  int wtime_is_global = 0;   // MPI_Wtime clocks of different nodes are not synchronized
  int universe_size = 1;
  int appnum = 0;
  int lastusedcode = MPI_ERR_LASTCODE;
};

PredefinedAttrs g_attrs;

}  // namespace

namespace torusmpi::mpi {

int attr_copy_all(AttrKind, void*, void*) { return MPI_SUCCESS; }
int attr_delete_all(AttrKind, void*) { return MPI_SUCCESS; }

}  // namespace torusmpi::mpi

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void* attribute_val, int* flag) {
  constexpr const char* kFn = "MPI_Comm_get_attr";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_COMM(c, comm, kFn);
  (void)c;
  if (attribute_val == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "attribute_val argument is NULL");
  if (flag == nullptr) return raise_error(comm, MPI_ERR_ARG, kFn, "flag argument is NULL");
  g_attrs.universe_size = runtime().job.universe_size;
  g_attrs.appnum = runtime().job.appnum;
  int* value = nullptr;
  switch (comm_keyval) {
    case MPI_TAG_UB:
      value = &g_attrs.tag_ub;
      break;
    case MPI_HOST:
      value = &g_attrs.host;
      break;
    case MPI_IO:
      value = &g_attrs.io;
      break;
    case MPI_WTIME_IS_GLOBAL:
      value = &g_attrs.wtime_is_global;
      break;
    case MPI_UNIVERSE_SIZE:
      value = &g_attrs.universe_size;
      break;
    case MPI_APPNUM:
      value = &g_attrs.appnum;
      break;
    case MPI_LASTUSEDCODE:
      value = &g_attrs.lastusedcode;
      break;
    default:
      return raise_error(comm, MPI_ERR_KEYVAL, kFn,
                         "comm_keyval %d is not a predefined attribute (user keyvals are not "
                         "implemented yet)",
                         comm_keyval);
  }
  // MPI: for a predefined attribute, attribute_val receives a pointer to the int.
  *static_cast<int**>(attribute_val) = value;
  *flag = 1;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_get_attr);
