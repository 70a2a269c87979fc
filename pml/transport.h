// What a transport does for the pml: carry fragments (a fixed header plus a bounded payload) to a
// peer in FIFO order, hand arriving fragments to pml::deliver(), and, where it can, copy a range
// of a peer's memory in one step (the rendezvous protocol's single copy). Everything about
// matching and protocols stays in pml.cc, so a network transport plugs in beside shared memory.
#ifndef TORUSMPI_PML_TRANSPORT_H_
#define TORUSMPI_PML_TRANSPORT_H_

#include <cstddef>
#include <cstdint>

namespace torusmpi::pml {

enum class FragType : uint8_t {
  kEager = 1,  // a whole message: header + data (matched)
  kRts,        // ready to send: a large message's header and its sender's address (matched)
  kAck,        // to the sender of a synchronous eager message: it has matched
  kFin,        // to the sender of a rendezvous message: its buffer has been read
  kCts,        // to the sender of a rendezvous message: push the data as kData fragments
  kData,       // a chunk of a rendezvous message, at offset `size`
  // To a receiver: drop the message of `sreq` (envelope and size as sent) if still unmatched.
  kCancel,
  // To the sender of kCancel: kFlagCancelled when the message was dropped.
  kCancelReply,
  // To the sender of a rendezvous message: write your buffer from byte `size` on into mine (the
  // payload: my buffer's address and where the copy ends) while I read the bytes before it.
  kSplit,
  // To the receiver of kSplit (rreq echoed): the sender's part is written, or with
  // kFlagSplitFailed it could not write it.
  kSplitDone,
};

constexpr uint8_t kFlagSync = 1;  // kEager: the sender waits for kAck
// kRts: the sender's buffer is device memory. On a node, addr is its address in the sender's
// device range (read_device); over a network, the address of its NIC view (read_remote).
// kEager: the payload is device memory (given to send() as the sender's buffer, handed to deliver
// in the receiver's HBM, where the transport wrote it: device_inline_limit).
constexpr uint8_t kFlagDevice = 2;
// kRts with kFlagDevice, on a node: a small message, through a chunk of the sender's device eager
// ring. addr is the sender's buffer, the payload the address of the chunk's word, which says
// whether the payload is still there or in the chunk (kSlotWordOffset bytes on: device_eager.h).
// The reader gives the chunk back through that word, not by kFin: a fragment less each way.
constexpr uint8_t kFlagSlot = 4;
constexpr uint64_t kSlotWordOffset = 8;
constexpr uint8_t kFlagCancelled = 1;    // kCancelReply: the message was unmatched and is dropped
constexpr uint8_t kFlagSplitFailed = 1;  // kSplitDone: the receiver reads the sender's part too
constexpr size_t kSplitPayload = 2 * sizeof(uint64_t);  // kSplit: buffer address, end of the copy

struct FragHeader {
  FragType type;
  uint8_t flags;
  uint16_t reserved;
  uint32_t context;
  int32_t source;  // sender's rank in the communicator
  int32_t tag;
  uint64_t size;  // the whole message's bytes; kData: the chunk's offset in it
  uint64_t sreq;  // the sender's request, echoed in kAck, kFin, kCts, kSplit and kCancelReply
  union {
    uint64_t rreq;  // kCts, kData, kSplit, kSplitDone: the receiver's request (or its copy's)
    uint64_t addr;  // kRts: the sender's buffer
  };
};
static_assert(sizeof(FragHeader) == 40, "FragHeader travels in shared memory and on the wire");

// Context ids are below this (src/mpi hands out 2 x 8192): a higher one is not this library's.
constexpr uint32_t kMaxContext = uint32_t{1} << 16;

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;

  // Queues one fragment for job rank `peer`; false when there is no room now (the pml keeps it
  // and retries after polling). len <= max_payload(). Fragments to one peer arrive in order.
  virtual bool send(int peer, const FragHeader& h, const void* payload, size_t len) = 0;
  virtual size_t max_payload() const = 0;
  // The largest message worth sending eagerly to peers of this transport, when the rendezvous is
  // cheaper above it than the eager copies (the pml takes the least of this, max_payload() and
  // TORUSMPI_EAGER_LIMIT).
  virtual size_t eager_cap() const { return SIZE_MAX; }

  // Copies len bytes at address addr of peer's memory into dst. Returns false when this transport
  // (or the kernel's policy) does not allow it; the pml then uses the pipelined protocol. `key`
  // is what the peer's transport wrote in expose() for that buffer (key_len 0: nothing).
  virtual bool read_remote(int peer, uint64_t addr, void* dst, size_t len, const void* key,
                           size_t key_len) {
    (void)peer, (void)addr, (void)dst, (void)len, (void)key, (void)key_len;
    return false;
  }

  // The split copy of a large message between ranks that each have a core: the receiver reads
  // the first part of the sender's buffer while the sender writes the rest into the receiver's
  // (kSplit), two copies at once where one would take the whole message. split_copy: worth it
  // and allowed for len bytes at addr in peer's memory. write_remote copies len bytes at src into
  // peer's memory at addr; false when it cannot (the receiver then reads that part too).
  virtual bool split_copy(int peer, uint64_t addr, size_t len) {
    (void)peer, (void)addr, (void)len;
    return false;
  }
  virtual bool write_remote(int peer, uint64_t addr, const void* src, size_t len) {
    (void)peer, (void)addr, (void)src, (void)len;
    return false;
  }

  // The same copy, left running where it needs the peer's progress (a network's RMA read, which
  // a provider may emulate in software): the pml's poll, and the peer's, go on meanwhile. kStarted:
  // dst stays the transport's until a later poll() calls read_done(cookie), once every byte is
  // there; a read that fails ends the job, naming the peer. kDone: copied already. kUnsupported:
  // as read_remote's false. Reads from one peer are posted in the order started.
  enum class ReadStart : uint8_t { kUnsupported, kDone, kStarted };
  virtual ReadStart start_read(int peer, uint64_t addr, void* dst, size_t len, const void* key,
                               size_t key_len, uint64_t cookie) {
    (void)cookie;
    return read_remote(peer, addr, dst, len, key, key_len) ? ReadStart::kDone
                                                           : ReadStart::kUnsupported;
  }

  // Device memory, the way NeuronLink moves it (HBM to HBM, no host copy). device_reach(peer):
  // a device buffer sent to peer always takes the rendezvous, whatever its size, because the
  // receiver can fetch it without a host bounce (read_device on a node; read_remote on the NIC
  // view a network transport registered with expose). read_device copies len bytes of peer's
  // device memory at addr (an address in peer's device range) into dst (host or this rank's device
  // memory) with one DMA copy, charged to the links of its route; false when it cannot (the pml
  // then pipelines the message through host memory).
  virtual bool device_reach(int peer) const {
    (void)peer;
    return false;
  }
  virtual bool read_device(int peer, uint64_t addr, void* dst, size_t len) {
    (void)peer, (void)addr, (void)dst, (void)len;
    return false;
  }
  // The largest device payload send() takes to peer as a kEager fragment with kFlagDevice: the
  // transport writes it straight into a queue in the receiver's HBM, in order with the peer's other
  // fragments (a small message is then one write and one read, as a host one is). 0: none.
  virtual size_t device_inline_limit(int peer) const {
    (void)peer;
    return 0;
  }

  // Remote memory access (network transports): makes [buf, buf+len) readable by `peer` for the
  // rendezvous send `id` and writes what the reader needs (a remote key) to key, at most kMaxKey
  // bytes. Returns the key's length; 0 when this transport needs none (shared memory) or cannot
  // (the pml then sends without one, and the reader pipelines unless read_remote works keyless).
  // unexpose(id) is called once the send is done (kFin, or the pipeline's last chunk).
  static constexpr size_t kMaxKey = 64;
  virtual size_t expose(int peer, uint64_t id, const void* buf, size_t len, void* key) {
    (void)peer, (void)id, (void)buf, (void)len, (void)key;
    return 0;
  }
  virtual void unexpose(uint64_t id) { (void)id; }

  // True for transports between instances or nodes (their bytes are counted per NIC).
  virtual bool network() const { return false; }

  // Hands every fragment that has arrived to pml::deliver(); returns how many there were.
  virtual int poll() = 0;

  // True when something has arrived that poll() would deliver (checked before sleeping).
  virtual bool pending() const = 0;

  // True while fragments handed over by send() are not yet out of this process: a provider with
  // manual progress pushes them only while this rank polls, so MPI_Finalize waits for this to
  // end before its fence (where nothing polls) instead of leaving a receiver waiting.
  virtual bool sending() const { return false; }

  // Sleeps until a fragment arrives, space frees up for a blocked send, or `us` microseconds
  // pass. Transports without a doorbell sleep the whole time. `also` (when >= 0) is another
  // transport's wait_fd(), armed: the sleep also ends when it becomes readable.
  virtual void sleep(int64_t us, int also) = 0;
  // Whether sleep() ends whenever there is something to do, and wake_self() ends it from another
  // thread (work was added for it). Something to do includes a peer's read of this rank's memory
  // where the provider emulates RMA (tcp) and so serves it in this rank's progress: a network
  // transport says yes only when its descriptor is readable for that too.
  virtual bool has_doorbell() { return false; }
  virtual void wake_self() {}

  // Network transports: a file descriptor that becomes readable when something arrives, or -1.
  // arm() readies it for one sleep; false when something is already there to poll.
  virtual int wait_fd() { return -1; }
  virtual bool arm() { return true; }
};

// What is wrong with an arriving fragment of `len` payload bytes, as a phrase, or nullptr when its
// header is one a torusmpi sender writes. pml::deliver ends the job, naming the peer, on a fault.
// The request pointers (sreq, rreq) are the peer's word and cannot be checked here.
inline const char* fragment_fault(const FragHeader& h, size_t len) {
  switch (h.type) {
    case FragType::kEager:
      if ((h.flags & ~(kFlagSync | kFlagDevice)) != 0)
        return "an eager fragment with unknown flags";
      if (h.size != len) return "an eager fragment whose payload is not its message's size";
      break;
    case FragType::kRts:
      if ((h.flags & ~(kFlagDevice | kFlagSlot)) != 0 ||
          (h.flags & kFlagSlot && !(h.flags & kFlagDevice)))
        return "a rendezvous request with unknown flags";
      if (len > Transport::kMaxKey) return "a rendezvous request with an oversized remote key";
      if (h.flags & kFlagSlot && len != sizeof(uint64_t)) {
        return "a device eager request without its chunk's address";
      }
      break;
    case FragType::kAck:
    case FragType::kFin:
    case FragType::kCts:
      if (h.flags != 0 || len != 0) return "a control fragment with flags or a payload";
      return nullptr;  // unmatched: no context, source or tag
    case FragType::kCancel:
      if (h.flags != 0 || len != 0) return "a cancel request with flags or a payload";
      break;  // names a message: context and source are checked below
    case FragType::kCancelReply:
      if ((h.flags & ~kFlagCancelled) != 0 || len != 0)
        return "a cancel reply with unknown flags or a payload";
      return nullptr;
    case FragType::kSplit:
      if (h.flags != 0 || len != kSplitPayload)
        return "a split-copy request with flags or without its buffer's address and end";
      return nullptr;
    case FragType::kSplitDone:
      if ((h.flags & ~kFlagSplitFailed) != 0 || len != 0)
        return "a split-copy answer with unknown flags or a payload";
      return nullptr;
    case FragType::kData:
      if (h.flags != 0) return "a data fragment with flags";
      if (h.size + len < h.size) return "a data fragment past the end of any message";
      return nullptr;
    default:
      return "a fragment of unknown type";
  }
  if (h.context >= kMaxContext) return "a fragment for a context id no communicator has";
  if (h.source < 0) return "a fragment from a negative source rank";
  return nullptr;
}

// Called by transports for each arriving fragment from job rank `peer`; the payload is valid only
// during the call.
void deliver(int peer, const FragHeader& h, const void* payload, size_t len);

// How many fragments from one peer a poll() may hand over: one while at most one receive is
// posted, so that the waiter it completes sees that at once (shm/ring.h: RingReader::drain), and
// as many as the posted receives (up to 16) for a window of them, which one pass then serves.
// With more ranks than cores, 16 always: a rank that has just got the core back takes all that
// came meanwhile, or it may yield it again before its next poll takes the rest (4 ranks on 2
// cores, osu_* at 16 B, medians of 9 alternating runs: alltoall 2.45 us against 2.62, allreduce
// 2.83 against 3.19, allgather 2.36 against 2.53, reduce_scatter level).
int poll_budget();

// Called by a transport's poll() when a read it started (Transport::start_read) is complete.
void read_done(uint64_t cookie);

// Which transport reaches job rank `peer`. Set before pml::init for every rank but this one (the
// pml adds its own loopback for itself); ranks left unset are unreachable.
void set_transport(int peer, Transport* t);

}  // namespace torusmpi::pml

#endif  // TORUSMPI_PML_TRANSPORT_H_
