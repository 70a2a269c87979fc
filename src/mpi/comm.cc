// Communicator queries: rank, size, names. (Attributes: attr.cc.)
#include <cstring>

#include "core/progress.h"
#include "mpi/dynamic.h"
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

}  // namespace

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_rank";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_COMM(c, comm, kFn);
  if (rank == nullptr) return raise_error(comm, MPI_ERR_ARG, kFn, "rank argument is NULL");
  *rank = c->rank;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_rank);

int PMPI_Comm_size(MPI_Comm comm, int* size) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_size";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_COMM(c, comm, kFn);
  if (size == nullptr) return raise_error(comm, MPI_ERR_ARG, kFn, "size argument is NULL");
  *size = c->size;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_size);

int PMPI_Comm_get_name(MPI_Comm comm, char* comm_name, int* resultlen) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_get_name";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_COMM(c, comm, kFn);
  if (comm_name == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "comm_name argument is NULL");
  if (resultlen == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "resultlen argument is NULL");
  *resultlen = torusmpi::mpi::copy_out(c->name.str(), comm_name, MPI_MAX_OBJECT_NAME);
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_get_name);

int PMPI_Comm_set_name(MPI_Comm comm, const char* comm_name) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_set_name";
  if (int err = require_active(kFn)) return err;
  TORUSMPI_RESOLVE_COMM(c, comm, kFn);
  if (comm_name == nullptr)
    return raise_error(comm, MPI_ERR_ARG, kFn, "comm_name argument is NULL");
  // MPI truncates names to MPI_MAX_OBJECT_NAME - 1 characters.
  c->name.assign(comm_name, strnlen(comm_name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_set_name);

// The intercommunicator to the parents of a job MPI_Comm_spawn started (dynamic.cc).
int PMPI_Comm_get_parent(MPI_Comm* parent) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Comm_get_parent";
  if (int err = require_active(kFn)) return err;
  if (parent == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "parent argument is NULL");
  *parent = torusmpi::mpi::dynamic_parent();
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Comm_get_parent);
