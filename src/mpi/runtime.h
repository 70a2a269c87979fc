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
#include "core/flight.h"
#include "mpi/ompi_abi.h"
#include "pml/pml.h"

namespace torusmpi::mpi {

struct Stream;  // stream.cc

// A communicator: what the pml needs (context id, rank, size, job ranks; for an intercommunicator
// the remote group's job ranks too) plus MPI's own state. MPI_COMM_WORLD and MPI_COMM_SELF live in
// the Runtime; the others are made by communicator management (comm_create.cc, intercomm.cc).
class Comm : public pml::Comm {
 public:
  MPI_Errhandler errhandler = nullptr;  // never null once the communicator exists
  flight::Name name;
  coll::Team team{this};  // its collectives: tag sequence, cached decisions and schedules
  // The handle the application holds: the predefined object for world and self, else one of the
  // pool of comm_create.cc.
  MPI_Comm handle = nullptr;
  MPI_Info info = MPI_INFO_NULL;  // hints of MPI_Comm_set_info and MPI_Comm_dup_with_info (a copy)
  // Creations started on this communicator, in the order every member starts them: the tags of
  // their context-id agreements (group.h).
  uint32_t create_seq = 0;
  // Intercommunicators: the local group as an intracommunicator of its own (collectives of the
  // local group run there), and a view of this one on its collective context (the leaders'
  // exchanges go there, never among the application's messages). Both are hidden, owned here.
  Comm* local = nullptr;
  Comm* shadow = nullptr;
  uint32_t inter_seq = 0;   // intercommunicator collectives: tags of the exchanges between groups
  uint32_t coll_calls = 0;  // collective calls so far: their numbers in the flight recorder
  bool hidden = false;      // local or shadow of an intercommunicator
  // Persistent requests on it (comm_keep): MPI_Comm_free waits for the last one to be freed.
  int kept = 0;
  bool free_deferred = false;
  // Every argument a collective's checks depend on, in the order the entry points list them
  // (unused: 0).
  struct CallKey {
    coll::Coll kind = coll::Coll::kBarrier;
    const void* sendbuf = nullptr;
    void* recvbuf = nullptr;
    int sendcount = 0;
    int recvcount = 0;
    MPI_Datatype sendtype = nullptr;
    MPI_Datatype recvtype = nullptr;
    MPI_Op op = nullptr;
    int root = 0;
    const int* recvcounts = nullptr;  // reduce_scatter's; its values are kept below
  };
  // The last collective's arguments as checked and placed (coll.cc: repeated, remember), when
  // they were host buffers and predefined types and op, which nothing can change: a loop of one
  // call (a solver's norms, a benchmark) skips the checks it passed, a third of its instructions.
  struct CheckedCall {
    bool valid = false;
    CallKey key;
    std::vector<int> recvcounts;  // key.recvcounts' values when it was checked
    std::vector<size_t> counts;   // a.counts points here
    coll::Args a;
    coll::RunArgs r;
  } checked;
  Stream* stream = nullptr;  // MPIX_Stream_comm_create: where its *_enqueue calls go
  // Whether the context pair is this communicator's to give back when it is freed: not for a
  // shadow (its intercommunicator's), nor before MPI_Comm_idup's agreement has chosen one.
  bool owns_context = true;
  // The groups the handle's c_local_group and c_remote_group point at: only their sizes matter,
  // to Open MPI's Fortran bindings (comm_sync_handle).
  ompi_group_t local_view{torusmpi::mpi::kMagicView, nullptr};
  ompi_group_t remote_view{torusmpi::mpi::kMagicView, nullptr};

  bool is_inter() const { return !remote_ranks.empty(); }
  int remote_size() const { return static_cast<int>(remote_ranks.size()); }
  // How many ranks point-to-point may name: the remote group's on an intercommunicator.
  int peer_count() const { return is_inter() ? remote_size() : size; }
  // The name for messages ("MPI_COMM_WORLD", a name set by MPI_Comm_set_name, or a description).
  std::string label() const;
  // The flight recorder's name for a rank of point-to-point (a job rank, or one of its own).
  int32_t flight_peer(int r) const {
    if (r == MPI_ANY_SOURCE) return flight::kAnyPeer;
    return r < 0 ? flight::kNoPeer : peer_rank(r);
  }
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

// Namespace scope, not a function's static: every entry point reads it, with no guard to check.
extern Runtime g_runtime;
inline Runtime& runtime() { return g_runtime; }

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
