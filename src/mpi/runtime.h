// The state of the MPI library in this process: initialized or not, the thread level, the
// predefined communicators' implementations.
#ifndef TORUSMPI_MPI_RUNTIME_H_
#define TORUSMPI_MPI_RUNTIME_H_

#include <pthread.h>

#include <string>
#include <string_view>
#include <vector>

#include "boot/boot.h"
#include "coll/team.h"
#include "mpi/ompi_abi.h"
#include "pml/pml.h"

namespace torusmpi::mpi {

// A communicator: what the pml needs (context id, rank, size, job ranks) plus MPI's own state.
// MPI_COMM_WORLD and MPI_COMM_SELF exist so far; communicator management adds the others.
class Comm : public pml::Comm {
 public:
  MPI_Errhandler errhandler = nullptr;  // never null once the communicator exists
  std::string name;
  coll::Team team{this};  // its collectives: tag sequence, cached decisions and schedules
};

enum class Phase { kBeforeInit, kActive, kFinalized };

struct Runtime {
  Phase phase = Phase::kBeforeInit;
  int thread_level = MPI_THREAD_SINGLE;
  pthread_t main_thread{};
  boot::JobInfo job;
  std::vector<boot::PeerCard> local_peers;  // in job.local_peers order
  Comm world;
  Comm self;
};

Runtime& runtime();

// Copies text into an MPI string argument of `capacity` bytes (MPI_MAX_..., terminator included),
// truncating; returns the length written, which the MPI call reports as resultlen.
inline int copy_out(std::string_view text, char* out, int capacity) {
  size_t n = text.copy(out, static_cast<size_t>(capacity) - 1);
  out[n] = '\0';
  return static_cast<int>(n);
}

// MPI_Get_library_version's text: "torusmpi 0.1.0 (Open MPI 4.1 ABI; ...)".
std::string library_version();

// The implementation behind a communicator handle, or nullptr when the handle is not a usable
// communicator (MPI_COMM_NULL, a freed one, another kind of handle).
inline Comm* comm_impl(MPI_Comm comm) {
  return comm != nullptr && comm->magic == kMagicComm ? comm->impl : nullptr;
}

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_RUNTIME_H_
