// Dynamic processes (dynamic.cc): what MPI_Init and MPI_Comm_get_parent need of them.
#ifndef TORUSMPI_MPI_DYNAMIC_H_
#define TORUSMPI_MPI_DYNAMIC_H_

#include <cstdint>
#include <utility>

#include "mpi/ompi_abi.h"

namespace torusmpi::mpi {

// End of MPI_Init: a process started by MPI_Comm_spawn connects to its parents (collective over
// the spawned job). Ends the job, saying why, when that fails.
void dynamic_init(const char* fn);

// The intercommunicator to the parents, MPI_COMM_NULL for a job no MPI_Comm_spawn started (or
// once the application has disconnected or freed it).
MPI_Comm dynamic_parent();

// An order of processes that every process agrees on, whatever job each belongs to: by job
// (boot::job_id of its namespace), then by rank in that job. a and b are the pml's numbers (job
// ranks, and processes of other jobs past them, which are numbered differently in each process):
// whatever must be decided alike on both sides of an intercommunicator (which group comes first)
// compares them with this, not with <.
bool process_before(int a, int b);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_DYNAMIC_H_
