// Prints the offsets and constants of layout.def as torusmpi's src/mpi/ompi_abi.h defines them,
// in layout_ompi.c's form and with Open MPI's names.
#include <cstddef>
#include <cstdio>

#include "mpi/ompi_abi.h"

int main() {
  using namespace torusmpi::mpi::ompi;
#define TORUSMPI_FIELD(type, field) \
  std::printf("%s.%s %zu\n", #type, #field, offsetof(type, field));
#define TORUSMPI_CONST(ours, theirs) std::printf("%s %ld\n", #theirs, static_cast<long>(ours));
#include "layout.def"
  return 0;
}
