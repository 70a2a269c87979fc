/* Prints the offsets and constants of layout.def as Open MPI's installed internal headers define
 * them (libopenmpi-dev ships them under <includedir>/openmpi). Built by layout.sh, which supplies
 * the one header they name but Debian does not ship (ompi/mpi/fortran/base/fint_2_int.h: MPI_Fint
 * and int are the same there, so its conversions are the identity). */
#include <stddef.h>
#include <stdio.h>

#include "ompi/attribute/attribute.h"
#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/errhandler/errhandler.h"
#include "ompi/file/file.h"
#include "ompi/group/group.h"
#include "ompi/info/info.h"
#include "ompi/message/message.h"
#include "ompi/op/op.h"
#include "ompi/request/request.h"
#include "ompi/runtime/mpiruntime.h"
#include "ompi/win/win.h"
#include "ompi_config.h"
#include "opal/class/opal_list.h"

int main(void) {
#define TORUSMPI_FIELD(type, field) printf("%s.%s %zu\n", #type, #field, offsetof(type, field));
#define TORUSMPI_CONST(ours, theirs) printf("%s %ld\n", #theirs, (long)(theirs));
#include "layout.def"
  return 0;
}
