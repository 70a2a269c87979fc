// MPI_Pack and friends. [Being written.]
