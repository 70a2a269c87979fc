// Device-side eager buffering. A small device send to a peer that reads this rank's HBM takes a
// chunk of a ring in HBM and is sent as a rendezvous whose reader finds its payload through the
// chunk; the peer reads it as it reads any device rendezvous, in one DMA copy.
//
// The payload stays in the sender's buffer (the chunk is lent) while the reader comes for it soon,
// so a message read at once is copied once, buffer to buffer. A send that waits and finds its chunk
// still lent after kMoveAfterUs (the receiver is computing, or both ranks send first) copies the
// payload into the chunk and is done, as an eager send is: without that, two ranks sending to each
// other first (as most programs do with small messages) would wait until one of them read. The
// chunk's word says where the payload is (ChunkWord). The reader copies from the sender's buffer
// first, then swaps the word from kChunkLent to kChunkFree: if the swap fails, the sender had begun
// its move before the copy ended (the buffer may have changed since), and the reader copies again,
// from the chunk. One swap both settles the race and gives the chunk back.
//
// Over a network a chunk is filled at the send (the reader's RMA read needs this rank's progress
// anyway). A reader on the node gives a chunk back through its word (kFlagSlot), so no kFin comes
// back; over a network, or when the peer has the data pushed (kCts),
// the chunk's own send stores it as it completes. A receiver that finds no receive posted copies
// the payload into its own HBM and gives the chunk back at once, so a message read late holds no
// chunk and no sender's buffer.
//
// Chunks are taken in ring order and taken back from the oldest: one the peer has not read yet
// holds back the reuse of those after it, and while the ring is full (of bytes, or of kMaxChunks
// messages) a message waits for its receive (the rendezvous), as it would without the ring.
#ifndef TORUSMPI_PML_DEVICE_EAGER_H_
#define TORUSMPI_PML_DEVICE_EAGER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pml/pml.h"
#include "pml/transport.h"

namespace torusmpi::pml {

class DeviceEagerRing;

// A chunk's word, kSlotWordOffset bytes before its payload.
enum ChunkWord : uint64_t {
  kChunkFree = 0,    // read: the sender takes the chunk back
  kChunkCopied = 1,  // the payload is in the chunk
  kChunkLent = 2,    // the payload is in the sender's buffer (the address the RTS carries)
  kChunkMoving = 3,  // the sender is copying it into the chunk
};

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
  // While lent: the application's send, done when the chunk is read or its payload moved, and the
  // buffer it sends.
  Request* lent = nullptr;
  const void* source = nullptr;
  double found_lent_at = 0;  // when poll first found it lent with nothing else to do, or 0
};

class DeviceEagerRing {
 public:
  // Messages up to `limit` bytes (TORUSMPI_DEVICE_EAGER_LIMIT); no HBM is taken before the first.
  // `complete` completes an application's request (the pml's, which knows about cancellation).
  void init(size_t limit, void (*complete)(Request*));
  size_t limit() const { return limit_; }
  // A chunk for `bytes` of payload, or nullptr when the ring is full (or HBM is). The caller fills
  // or lends it before its message leaves.
  DeviceChunk* take(size_t bytes, bool network);
  void fill(DeviceChunk* c, const void* buf, size_t bytes);   // copies buf in: kChunkCopied
  void lend(DeviceChunk* c, const void* buf, Request* send);  // kChunkLent; send is done later
  // Completes the sends whose lent chunks were read. When `idle` (nothing else progressed), also
  // moves the payloads of chunks found lent for kMoveAfterUs into them. Returns the sends done.
  int poll(bool idle);
  bool any_lent() const { return lent_ > 0; }
  // `r`, if it is a chunk's own send, is about to push the chunk's payload (kCts): a lent payload
  // is moved into the chunk first.
  void settle(Request* r);
  // Every lent payload moved into its chunk (MPI_Finalize): sends the application never waited for
  // are done, and their readers find the data in the arena until the job's last barrier.
  void move_all();
  // Chunks lent to network peers and not given back yet.
  int network_out() const { return network_out_; }
  // Forgets the chunks. Not their memory: a peer may read a chunk until the job's last barrier, and
  // the device arena goes after that.
  void clear();

 private:
  static void give(Request* r);               // the chunk's send completed
  bool move(DeviceChunk& c);                  // false when the reader got there first
  Request* unlend(DeviceChunk& c);            // no longer lent: its send, for complete_
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
  int lent_ = 0;
  unsigned idle_polls_ = 0;
  void (*complete_)(Request*) = nullptr;
};

}  // namespace torusmpi::pml

#endif  // TORUSMPI_PML_DEVICE_EAGER_H_
