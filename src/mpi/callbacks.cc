// The predefined attribute callbacks (MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN, ...), which Open
// MPI's mpi.h names as functions of its library.
#include <cstring>

#include "mpi/ompi_abi.h"

namespace {

// MPI_*_NULL_COPY_FN: the attribute is not copied to the new object.
int null_copy(int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}

// MPI_*_DUP_FN: the new object gets the same attribute value.
int dup_copy(void* attribute_val_in, void* attribute_val_out, int* flag) {
  std::memcpy(attribute_val_out, &attribute_val_in, sizeof(void*));
  *flag = 1;
  return MPI_SUCCESS;
}

}  // namespace

#define TORUSMPI_COPY_FNS(Handle, NULL_COPY, DUP)                                        \
  int NULL_COPY(Handle, int, void*, void*, void*, int* flag) { return null_copy(flag); } \
  int DUP(Handle, int, void*, void* in, void* out, int* flag) { return dup_copy(in, out, flag); }
#define TORUSMPI_DELETE_FN(Handle, NULL_DELETE) \
  int NULL_DELETE(Handle, int, void*, void*) { return MPI_SUCCESS; }

TORUSMPI_COPY_FNS(MPI_Comm, OMPI_C_MPI_COMM_NULL_COPY_FN, OMPI_C_MPI_COMM_DUP_FN)
TORUSMPI_COPY_FNS(MPI_Datatype, OMPI_C_MPI_TYPE_NULL_COPY_FN, OMPI_C_MPI_TYPE_DUP_FN)
TORUSMPI_COPY_FNS(MPI_Win, OMPI_C_MPI_WIN_NULL_COPY_FN, OMPI_C_MPI_WIN_DUP_FN)
TORUSMPI_COPY_FNS(MPI_Comm, OMPI_C_MPI_NULL_COPY_FN, OMPI_C_MPI_DUP_FN)  // MPI-1 names
TORUSMPI_DELETE_FN(MPI_Comm, OMPI_C_MPI_COMM_NULL_DELETE_FN)
TORUSMPI_DELETE_FN(MPI_Datatype, OMPI_C_MPI_TYPE_NULL_DELETE_FN)
TORUSMPI_DELETE_FN(MPI_Win, OMPI_C_MPI_WIN_NULL_DELETE_FN)
TORUSMPI_DELETE_FN(MPI_Comm, OMPI_C_MPI_NULL_DELETE_FN)  // MPI-1 name
