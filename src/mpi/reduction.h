// Reductions as the MPI layer sees them: a predefined (op, datatype) pair becomes a kernel of
// coll/ops, a user op a call of its function, or an MPI_ERR_OP naming the pair.
#ifndef TORUSMPI_MPI_REDUCTION_H_
#define TORUSMPI_MPI_REDUCTION_H_

#include <cstddef>

#include "coll/ops/ops.h"
#include "dtype/dtype.h"
#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

// The reduction for (op, type) and whether op commutes, or raises MPI_ERR_OP on comm: a kernel
// for a predefined op, the application's function for one of MPI_Op_create. MPI_REPLACE and
// MPI_NO_OP are for one-sided accumulates only.
int resolve_reduction(const char* fn, MPI_Comm comm, MPI_Op op, MPI_Datatype type,
                      coll::Reduction* out, bool* commutative);

// The same for a derived datatype t (type's engine type), on its packed stream (the collectives'
// wire format): a predefined op works on the one predefined type that every basic element of t
// is, *elem bytes each and *per of them in an element of t; a user op gets its elements unpacked
// into the datatype's own layout, *elem = t's size and *per = 1. A predefined op on a datatype
// that mixes basic types is MPI_ERR_OP.
int resolve_packed_reduction(const char* fn, MPI_Comm comm, MPI_Op op, MPI_Datatype type,
                             const dtype::Type& t, coll::Reduction* out, bool* commutative,
                             size_t* elem, size_t* per);

// A user op kept by a persistent collective's request: MPI_Op_free of it takes the user's handle
// away but leaves the op to the last release. Nothing for predefined ops.
void retain_op(MPI_Op op);
void release_op(MPI_Op op);
bool is_user_op(MPI_Op op);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_REDUCTION_H_
