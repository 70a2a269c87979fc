// Point-to-point messaging below MPI: matching on (context, source, tag) in MPI's order, the eager
// and rendezvous protocols, and requests. It speaks bytes and ranks, never MPI handles; the bytes
// travel through a Transport (transport.h) chosen per peer, so shared memory (pml/shm), the
// loopback to this process (self) and the network (pml/ofi, pml/ucx: see net.h) all sit under the
// same matching code.
//
// Protocols, as seen by one message of n bytes from S to R:
//   eager       n <= eager limit:  S --EAGER(header+data)--> R              (S done once queued)
//   sync eager  Ssend, small:      S --EAGER(sync)--> R, R --ACK--> S on match
//   rendezvous  n > eager limit:   S --RTS(address)--> R, on match R reads S's buffer in one copy
//                                  (process_vm_readv; over a network an RMA read that completes
//                                  in a later poll), then R --FIN--> S
//   pipelined   no single copy:    S --RTS--> R, R --CTS--> S, S --DATA(chunk)...--> R
//   device inline  tiny, on device: S --EAGER(device)--> R written into a queue in R's HBM (shm)
//   device eager small, on device: S takes a chunk of its HBM ring, S --RTS(slot)--> R; R swaps the
//                                  chunk's word, reads S's buffer (or the chunk, if S waited 10 us
//                                  and copied the payload in; S then done) and stores 0 (no FIN)
// What a transport carries from one rank to another arrives in order (shm's two queues, host and
// device, carry one numbered stream) and every message's first fragment (EAGER or RTS) is matched
// on arrival, so messages from one sender are matched in the order they were sent
// (non-overtaking).
//
// The MPI layer serializes calls (MPI_THREAD_SERIALIZED at most); with asynchronous progress the
// entry points below and polling take progress::Lock, so the progress thread may poll meanwhile.
//
// Cancelling a send that has not matched (see cancel()):
//   S --kCancel(sreq, envelope)--> R: R drops the unexpected message if it is still there
//   R --kCancelReply(yes|no)--> S:    yes: the send completes cancelled; no: it completes as sent
#ifndef TORUSMPI_PML_PML_H_
#define TORUSMPI_PML_PML_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/status.h"

namespace torusmpi::pml {

constexpr int kAnySource = -1;
constexpr int kAnyTag = -1;

// What the pml needs of a communicator: its context id and who its ranks are.
struct Comm {
  // Point-to-point traffic uses `context`; the collectives of the same communicator use
  // context + 1 (coll_context()), so they never match the application's messages.
  uint32_t context = 0;
  int rank = 0;
  int size = 1;
  std::vector<int> world_ranks;  // job rank of each rank; empty when rank r is job rank r
  // Intercommunicators: the job rank of each rank of the remote group, which point-to-point ranks
  // name (peer_rank); empty for intracommunicators. rank, size and world_ranks stay the local
  // group's: a receiver matches the sender's local rank, which is its rank in the remote group.
  std::vector<int> remote_ranks;

  int world_rank(int r) const { return world_ranks.empty() ? r : world_ranks[r]; }
  int peer_rank(int r) const { return remote_ranks.empty() ? world_rank(r) : remote_ranks[r]; }
  uint32_t coll_context() const { return context + 1; }
};

// kRead: a standard send that always takes the rendezvous, so that the receiver fetches the data
// (one copy it makes whenever it runs) whatever the size.
enum class SendMode : uint8_t { kStandard, kSync, kRead };

struct Unexpected;  // a message that arrived before its receive was posted (pml.cc)

// One send or receive. The caller owns the memory and keeps it alive until done(); on_complete
// (when set) runs once, at completion, and may free the request.
struct Request {
  enum class Kind : uint8_t { kSend, kRecv };

  // Results, valid once done.
  int source = 0;  // sender's rank in the communicator (receives)
  int tag = 0;
  size_t bytes = 0;          // bytes received (at most the buffer's capacity) or sent
  size_t message_bytes = 0;  // receives: the whole message's size (more than bytes if truncated)
  Status error = Status::kOk;
  bool cancelled = false;

  void (*on_complete)(Request*) = nullptr;
  void* user = nullptr;  // the caller's, untouched by the pml
  // A receive that is always posted (a listener), not a wait: waiting_for leaves it out.
  bool quiet = false;

  // Acquire: what completion wrote (sizes, errors, data) is visible to whoever sees done, also
  // from another thread than the one that completed it (asynchronous progress).
  bool done() const { return __atomic_load_n(&done_, __ATOMIC_ACQUIRE); }

  // Internal to the pml.
  Kind kind_ = Kind::kSend;
  bool done_ = false;
  SendMode mode_ = SendMode::kStandard;
  uint32_t context_ = 0;
  int peer_ = 0;  // job rank of the other side (sends; matched receives)
  int match_source_ = kAnySource;
  int match_tag_ = kAnyTag;
  bool matched_ = false;         // sends: the receiver has matched it (kAck, kFin or kCts came)
  bool cancel_pending_ = false;  // sends: a kCancel is out; completion waits for its answer
  bool finished_ = false;        // sends: the protocol completed while the answer was awaited
  bool rendezvous_ = false;      // sends: counted in the peer's rendezvous_out until complete
  uint8_t* buf_ = nullptr;
  size_t capacity_ = 0;      // receive buffer size, or send size
  size_t received_ = 0;      // pipelined receives: bytes arrived so far, excess included
  size_t total_ = 0;         // pipelined receives: the message's full size
  Request* next_ = nullptr;  // posted-receive queue
  Request* prev_ = nullptr;
};

// Starts the pml over the transports set up by the caller (see transport.h): `self` is this
// process's job rank, `size` the job's. Registers the pml's poll function with the progress engine.
Status init(int self, int size);
// Completes what is still queued for sending, then stops polling.
Status finalize();

// Processes of other jobs (MPI_Comm_spawn, MPI_Comm_connect) become peers at run time, numbered
// after the job's ranks: peer_count() is the number the next one gets, and add_peer(t) makes it,
// reached through transport t, and returns that number. Communicators name them by it as they
// name job ranks.
class Transport;
int peer_count();
int add_peer(Transport* t);

// Starts a send of `bytes` bytes to rank `dest` of comm, on `context` (comm.context or
// comm.coll_context()). The buffer must stay unchanged until the request is done.
Status isend(const Comm& comm, uint32_t context, const void* buf, size_t bytes, int dest, int tag,
             SendMode mode, Request* req);
// A standard-mode send that completes in the call, if it can: host memory, at most the peer's
// eager limit, nothing queued before it for that peer, and the transport takes it now (it copies
// the payload). True when sent: the buffer is free again and no request exists, so the message
// cannot be cancelled (Open MPI and MPICH complete such sends at once too; MPI 4.0 deprecates
// cancelling sends). False: nothing was done, and isend() sends it.
bool send_now(const Comm& comm, uint32_t context, const void* buf, size_t bytes, int dest, int tag);
// Posts a receive of at most `capacity` bytes from `source` (or kAnySource) with `tag` (or
// kAnyTag).
Status irecv(const Comm& comm, uint32_t context, void* buf, size_t capacity, int source, int tag,
             Request* req);

// The job ranks whose messages the posted receives wait for (flight::kAnyPeer for a receive from
// any source), at most `max` of them, each once: what the flight recorder shows of a waiting rank.
int waiting_for(int32_t* ranks, int max);

// Cancels a receive that has not matched yet: it completes with cancelled set. Returns false (and
// does nothing) when it is too late.
//
// A send can be cancelled until its receiver matches it. One still in this rank's backlog is taken
// out at once. Otherwise a kCancel fragment follows the message to the receiver (the channel is
// FIFO, so the message is there first): it drops the message if it is still unexpected and
// answers yes or no. Meanwhile the request is not done, even a standard eager send that was
// complete already; the answer completes it, with cancelled set on yes. So a cancelled send's
// completion needs the receiver's progress, as its matching would. Returns true when the
// cancellation was done or asked for, false when the send is known to have matched or was
// cancelled already.
bool cancel(Request* req);

// A matched message taken off the queue by improbe, received later by mrecv.
struct Message;
struct ProbeInfo {
  int source = 0;
  int tag = 0;
  size_t bytes = 0;
};
// Looks for a message that a receive (context, source, tag) would match, without receiving it.
bool iprobe(const Comm& comm, uint32_t context, int source, int tag, ProbeInfo* info);
// The same, but takes the message: no other receive can match it; mrecv receives it.
bool improbe(const Comm& comm, uint32_t context, int source, int tag, ProbeInfo* info,
             Message** msg);
Status mrecv(Message* msg, void* buf, size_t capacity, Request* req);

// Blocks (driving progress) until req is done.
void wait(Request* req);

// The largest message sent eagerly to `peer` (TORUSMPI_EAGER_LIMIT, capped by the transport).
size_t eager_limit(int peer);

// Payload bytes that reached this rank through a network transport (eager data, pipelined chunks
// and rendezvous reads): what its chip's NIC received for it (TORUSMPI_STATS).
uint64_t network_bytes_received();

// Context ids: MPI_COMM_WORLD and MPI_COMM_SELF take the first two pairs; each further
// communicator takes a pair its members agree on (src/mpi/comm_create.cc), free for all of them.
constexpr uint32_t kWorldContext = 0;
constexpr uint32_t kSelfContext = 2;

// Whether nothing waits on the pair at `context` (no receive posted, no message unmatched): a
// freed communicator's pair is given out again only then, so no message of the old communicator
// can match a receive of the new one.
bool contexts_idle(uint32_t context);

}  // namespace torusmpi::pml

#endif  // TORUSMPI_PML_PML_H_
