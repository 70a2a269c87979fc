// Attributes (keyvals) of communicators, datatypes and windows, for the code that creates and
// frees those objects: a duplicate gets copies through the keyvals' copy callbacks, a freed object
// has its attributes deleted through their delete callbacks, as MPI defines.
#ifndef TORUSMPI_MPI_ATTR_H_
#define TORUSMPI_MPI_ATTR_H_

#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

enum class AttrKind { kComm, kType, kWin };

// Copies the attributes of old_handle (an MPI_Comm, MPI_Datatype or MPI_Win) to new_handle, each
// through its keyval's copy callback (MPI_Comm_dup, MPI_Comm_idup, MPI_Type_dup). Returns
// MPI_SUCCESS, or the error class a callback returned (the copy then stops).
int attr_copy_all(AttrKind kind, void* old_handle, void* new_handle);

// Deletes every attribute of handle through its keyval's delete callback (MPI_Comm_free,
// MPI_Type_free, MPI_Finalize for MPI_COMM_SELF then MPI_COMM_WORLD). Returns MPI_SUCCESS or the
// class a callback returned.
int attr_delete_all(AttrKind kind, void* handle);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_ATTR_H_
