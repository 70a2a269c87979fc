// Hang diagnosis for the MPI layer: the flight recorder opened at MPI_Init, and with
// TORUSMPI_TIMEOUT the report of a hung job and its end (core/flight.h has the recorder).
//
// The rank that has waited longer than the timeout describes the ranks of its node from their
// recorders, then ends the job with boot::kExitHang. Ranks of a node that time out together leave
// the report to the lowest of them; on every node where a rank waits, one reports, so a job of
// several nodes gets one report per node (nodes where no rank waits are not described: reaching
// them would take the launcher, see boot.h).
#ifndef TORUSMPI_MPI_HANG_H_
#define TORUSMPI_MPI_HANG_H_

#include <string>

#include "mpi/runtime.h"

namespace torusmpi::mpi {

// After the cards are exchanged (the node's pids are known) and the pml is up.
void hang_init(const Runtime& rt);
void hang_finalize();

// Reports the job hung (`why` says where this rank waited), then ends it with kExitHang.
[[noreturn]] void hang_abort(const std::string& why);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_HANG_H_
