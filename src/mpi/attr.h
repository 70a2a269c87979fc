// Attributes (keyvals) of communicators, datatypes and windows, for the code that creates and
// frees those objects: a duplicate gets copies through the keyvals' copy callbacks, a freed object
// has its attributes deleted through their delete callbacks, as MPI defines.
#ifndef TORUSMPI_MPI_ATTR_H_
#define TORUSMPI_MPI_ATTR_H_

#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

enum class AttrKind { kComm, kType, kWin };

// Copies the attributes of old_handle (an MPI_Comm, MPI_Datatype or MPI_Win) to new_handle, each
// through its keyval's copy callback (MPI_Comm_dup, MPI_Comm_idup, MPI_Type_dup), in the order
// they were set; a callback that returns flag 0 leaves its attribute out. Returns MPI_SUCCESS, or
// the error code a callback returned: the copy then stops, and the attributes already copied to
// new_handle are deleted again (through their delete callbacks), so new_handle holds none and can
// be thrown away without another call.
int attr_copy_all(AttrKind kind, void* old_handle, void* new_handle);

// Deletes every attribute of handle through its keyval's delete callback, the last set first
// (MPI_Comm_free, MPI_Type_free, MPI_Finalize for MPI_COMM_SELF then MPI_COMM_WORLD). Every
// attribute is removed even when a callback fails, so nothing stays attached to a handle whose
// object is going away. Returns MPI_SUCCESS or the first error code a callback returned.
int attr_delete_all(AttrKind kind, void* handle);

// The value of the predefined attribute MPI_LASTUSEDCODE: MPI_Add_error_class and
// MPI_Add_error_code (errors.cc) report each code they hand out.
void attr_set_last_used_code(int code);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_ATTR_H_
