// A c10d::Store served over MPI, so torch.distributed's rendezvous needs no MASTER_ADDR/PORT
// under mpirun: world rank 0 keeps the keys on a thread of its own; every rank (rank 0 too) asks
// it with a message and waits for the answer. Torch uses the store to start groups (its
// store-based barrier after init_process_group and new_group) and gloo groups exchange their
// addresses through it.
#pragma once

#include <mpi.h>

#include <torch/csrc/distributed/c10d/Store.hpp>

namespace torusmpi::pt {

// The job's store, made on first use (collective over MPI_COMM_WORLD: every rank asks once).
c10::intrusive_ptr<c10d::Store> world_store();

// Ends the server once every rank is done with the store (collective), before MPI_Finalize.
void shutdown_store();

}  // namespace torusmpi::pt
