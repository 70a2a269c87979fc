// What the MPI layer shares with Fortran: handle numbers (handles.cc) and the conversions of
// Fortran strings and logicals (fortran.cc).
//
// A Fortran handle is a small integer. Open MPI's numbers for the predefined handles are compiled
// into every Fortran program (mpif.h, use mpi, use mpi_f08), so each predefined object carries
// Open MPI's number (objects.cc). Other handles get the lowest free number when first converted,
// and give it back when freed, as Open MPI's tables do; groups get theirs when made, because
// libmpi_mpifh reads grp_f_to_c_index of a new group without converting it.
#ifndef TORUSMPI_MPI_FORTRAN_H_
#define TORUSMPI_MPI_FORTRAN_H_

#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

enum class HandleKind {
  kComm,
  kDatatype,
  kGroup,
  kOp,
  kInfo,
  kErrhandler,
  kRequest,
  kWin,
  kFile,
  kMessage,
  kCount
};

// The Fortran number of a valid handle, given it now if it has none; -1 for a handle that is not
// one of this kind (as MPI_<Class>_c2f answers for it).
MPI_Fint fortran_number(HandleKind kind, void* handle);
// A handle whose object goes away (or goes back to a pool) gives its number back, if it had one.
void fortran_forget(HandleKind kind, void* handle);

// The Fortran datatype of a type class (MPI_TYPECLASS_*) and size, as MPI_Type_match_size answers;
// MPI_DATATYPE_NULL when there is none (datatype.cc).
MPI_Datatype fortran_type_of_size(int typeclass, int size);

// Gfortran's LOGICAL values, as Open MPI's Fortran bindings are built (.TRUE. is 1).
constexpr MPI_Fint kFortranTrue = 1;
constexpr MPI_Fint kFortranFalse = 0;

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_FORTRAN_H_
