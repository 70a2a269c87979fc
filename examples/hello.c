/* The smallest torusmpi program: every rank says where it runs and which MPI serves it. Build it
 * with torusmpi's mpicc, or with Open MPI's and substitute torusmpi at run time (see README). */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size, len;
  char host[MPI_MAX_PROCESSOR_NAME], lib[MPI_MAX_LIBRARY_VERSION_STRING];
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Get_processor_name(host, &len);
  MPI_Get_library_version(lib, &len);
  printf("rank %d of %d on %s: %s\n", rank, size, host, lib);
  MPI_Finalize();
  return 0;
}
