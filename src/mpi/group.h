// Groups. [Being written.]
#ifndef TORUSMPI_MPI_GROUP_H_
#define TORUSMPI_MPI_GROUP_H_
#endif  // TORUSMPI_MPI_GROUP_H_
