// Device-side eager buffering. A small device message to a peer that reads this rank's HBM is
// copied into a chunk of a ring in HBM (one DMA copy, on the chip) and the caller's send is done at
// once, as an eager send is; the peer reads the chunk as it reads any device rendezvous. Without it
// a small device send would wait for its receive, and two ranks sending to each other first (as
// most programs do with small messages) would wait for ever.
//
// A chunk is a word (1 while lent) and, kSlotWordOffset bytes on, the payload. A peer on the node
// that has read the payload stores 0 into the word itself (kFlagSlot), so no kFin comes back; over
// a network, or when the peer has the data pushed (kCts), the chunk's own send stores it as it
// completes. A receiver that finds no receive posted copies the payload into its own HBM and gives
// the chunk back at once, so a message read late holds no chunk.
//
// Chunks are taken in ring order and taken back from the oldest: one the peer has not read yet
// holds back the reuse of those after it, and while the ring is full (of bytes, or of kMaxChunks
// messages) a message waits for its receive (the rendezvous), as it would without the ring.
#ifndef TORUSMPI_PML_DEVICE_EAGER_H_
#define TORUSMPI_PML_DEVICE_EAGER_H_

#include <cstddef>
#include <vector>

#include "pml/pml.h"
#include "pml/transport.h"

namespace torusmpi::pml {

class DeviceEagerRing;

struct DeviceChunk {
  Request req;  // the message's own send: kFin and kCts over a network name it
  DeviceEagerRing* ring = nullptr;
  void* word = nullptr;
  void* payload = nullptr;  // word + kSlotWordOffset
  size_t offset = 0;        // in the ring
  size_t bytes = 0;         // word and payload, rounded
  // Lent to a network peer: its read (an emulated RMA read) needs this rank's progress, so the
  // chunk counts as work in flight for the progress thread, and MPI_Finalize waits for it.
  bool network = false;
};

class DeviceEagerRing {
 public:
  // Messages up to `limit` bytes (TORUSMPI_DEVICE_EAGER_LIMIT); no HBM is taken before the first.
  void init(size_t limit);
  size_t limit() const { return limit_; }
  // A chunk for `bytes` of payload, marked lent, or nullptr when the ring is full (or HBM is).
  DeviceChunk* take(size_t bytes, bool network);
  // Chunks lent to network peers and not given back yet.
  int network_out() const { return network_out_; }
  // Forgets the chunks. Not their memory: a peer may read a chunk until the job's last barrier, and
  // the device arena goes after that.
  void clear();

 private:
  static void give(Request* r);               // the chunk's send completed
  void reclaim();                             // takes back the oldest chunks that are free again
  bool place(size_t need, size_t* at) const;  // where `need` bytes fit now, if they do

  size_t limit_ = 0;
  size_t capacity_ = 0;
  uint8_t* mem_ = nullptr;  // device memory
  size_t head_ = 0;         // where the next chunk's bytes go
  // The chunks lent, oldest first: chunks_[(first_ + i) % kMaxChunks] for i < count_. Made once,
  // at the first message: their requests' addresses travel in fragments.
  static constexpr size_t kMaxChunks = 256;
  std::vector<DeviceChunk> chunks_;
  size_t first_ = 0;
  size_t count_ = 0;
  int network_out_ = 0;
};

}  // namespace torusmpi::pml

#endif  // TORUSMPI_PML_DEVICE_EAGER_H_
