// Info objects. [Being written.]
#ifndef TORUSMPI_MPI_INFO_H_
#define TORUSMPI_MPI_INFO_H_
#endif  // TORUSMPI_MPI_INFO_H_
