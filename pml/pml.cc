// The matching engine and the protocols (see pml.h for the picture).
#include "pml/pml.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "boot/boot.h"
#include "core/flight.h"
#include "core/log.h"
#include "core/params.h"
#include "core/progress.h"
#include "device/device.h"
#include "pml/device_eager.h"
#include "pml/ina/client.h"
#include "pml/self.h"
#include "pml/transport.h"

namespace torusmpi::pml {

// A matched fragment (kEager or kRts) that arrived before its receive; improbe hands it out.
struct Message {
  FragHeader h;
  int peer = 0;             // job rank of the sender
  uint8_t* data = nullptr;  // kEager: the payload (h.size bytes); kRts: a remote key; malloc'd
  size_t len = 0;           // bytes at data
  bool on_device = false;   // data is this rank's HBM: a device eager payload out of its chunk
  Message* next_ = nullptr;
  Message* prev_ = nullptr;
};

namespace {

// How long MPI_Finalize waits for the transports' sends to leave (Transport::sending()).
constexpr double kSendDrainTimeoutS = 10.0;

// An intrusive FIFO of T (next_/prev_ members): O(1) append and removal, no allocation.
template <class T>
struct Fifo {
  T* head = nullptr;
  T* tail = nullptr;

  void push_back(T* x) {
    x->next_ = nullptr;
    x->prev_ = tail;
    if (tail != nullptr) {
      tail->next_ = x;
    } else {
      head = x;
    }
    tail = x;
  }
  void erase(T* x) {
    (x->prev_ != nullptr ? x->prev_->next_ : head) = x->next_;
    (x->next_ != nullptr ? x->next_->prev_ : tail) = x->prev_;
    x->next_ = x->prev_ = nullptr;
  }
};

// The receives posted on one context and the messages no receive wanted yet, each in MPI order.
struct Context {
  Fifo<Request> posted;
  Fifo<Message> unexpected;
};

// A fragment waiting for room in its transport: a message's first fragment, a control fragment,
// or the remaining chunks of a pipelined rendezvous send (pipeline = true).
struct OutJob {
  FragHeader h;
  const uint8_t* data = nullptr;
  size_t len = 0;
  Request* complete = nullptr;  // done once the job has been handed over
  bool pipeline = false;
  size_t offset = 0;
  uint8_t* bounce = nullptr;  // host copy of a device payload (len bytes), given back at hand-over
  uint8_t key_len = 0;        // kRts over a network: the remote key travels as the payload
  uint8_t key[Transport::kMaxKey];

  // What the transport is given: the key is sent from the job itself, wherever it is kept.
  const void* payload() const { return key_len > 0 ? key : data; }
};

// Host buffers the pml holds for a while, of a power-of-two size and kept for reuse (8 MiB of them
// at most): the payloads of messages that arrive before their receive, and host copies of eager
// device payloads (bounces, free again once a transport has copied them). A burst of large eager
// messages that come early (osu_bibw's windows) otherwise has malloc give the pages back and fault
// them in again, message after message: host osu_bibw at 32-64 KiB ran at 1-4 GB/s, not 15-40.
class BufferPool {
 public:
  // nullptr when memory is short.
  uint8_t* take(size_t len) {
    const int c = size_class(len);
    if (c >= kClasses) return static_cast<uint8_t*>(std::malloc(len));
    std::vector<uint8_t*>& kept = free_[c];
    if (kept.empty()) return static_cast<uint8_t*>(std::malloc(class_bytes(c)));
    uint8_t* b = kept.back();
    kept.pop_back();
    kept_bytes_ -= class_bytes(c);
    return b;
  }
  // b came from take(len), or is nullptr.
  void give(uint8_t* b, size_t len) {
    if (b == nullptr) return;
    const int c = size_class(len);
    if (c < kClasses && kept_bytes_ + class_bytes(c) <= kKeepBytes) {
      free_[c].push_back(b);
      kept_bytes_ += class_bytes(c);
      return;
    }
    std::free(b);
  }
  void clear() {
    for (std::vector<uint8_t*>& kept : free_) {
      for (uint8_t* b : kept) std::free(b);
      kept.clear();
    }
    kept_bytes_ = 0;
  }

 private:
  static constexpr int kClasses = 12;  // class c: 64 << c bytes, up to 128 KiB
  static constexpr size_t kKeepBytes = size_t{8} << 20;
  static size_t class_bytes(int c) { return size_t{64} << c; }
  static int size_class(size_t len) {
    return len <= 64 ? 0 : 64 - __builtin_clzll(static_cast<unsigned long long>(len - 1)) - 6;
  }
  std::vector<uint8_t*> free_[kClasses];
  size_t kept_bytes_ = 0;
};

// A rendezvous read a network transport runs while the pml goes on (Transport::start_read); its
// pointer is the cookie read_done() gets back. A split copy (split_rendezvous) is one too, its
// pointer the rreq of kSplit and kSplitDone.
struct RemoteRead {
  Request* r;
  int peer;
  uint64_t sreq;  // the sender's, for kFin
  size_t bytes;
  // Split copies: the sender's buffer, where the sender's part begins, and the parts not yet in
  // (this side's read, the sender's write).
  uint64_t addr = 0;
  size_t split = 0;
  int parts_left = 0;
};

struct Peer {
  Transport* transport = nullptr;
  bool network = false;        // transport->network(): its arrivals count as NIC bytes
  size_t eager_limit = 0;      // peer_eager_limit(transport)
  std::deque<OutJob> backlog;  // never bypassed: fragments to a peer keep their order
  // Rendezvous sends to the peer not yet completed: while there are any, the peer has copying of
  // its own to do for this rank, and a message from it is read here alone, not split.
  int rendezvous_out = 0;
};

struct Engine {
  int self = 0;
  size_t posted = 0;  // receives in the contexts' posted queues
  std::vector<Peer> peers;
  std::vector<Transport*> transports;  // distinct, polled in order
  std::vector<Context> contexts;
  std::vector<int> backlogged;  // peers with a non-empty backlog
  size_t eager_limit = 0;
  int poll_id = 0;
  std::unique_ptr<SelfTransport> loopback;
  // A pipelined chunk from device memory passes through here on its way into a transport, which
  // copies what it is given (a transport never reads device memory).
  std::vector<uint8_t> chunk_bounce;
  BufferPool buffers;  // bounces and unexpected messages' host payloads
  // Unexpected messages' records given back, for the next ones: with more ranks than cores most
  // small messages arrive before their receive (a rank waiting in one collective takes the next
  // one's messages), and new and delete were a tenth of a small alltoall's instructions.
  std::vector<Message*> spare_messages;
  uint64_t network_bytes = 0;  // payload that arrived through a network transport
  DeviceEagerRing device_eager;
  int reads_in_flight = 0;  // RemoteReads started and not done
};

// Namespace scope rather than a function's static: no initialization guard on the hot path.
Engine g_engine;
inline Engine& engine() { return g_engine; }

// Transports are set before init sizes the table.
std::vector<Transport*>& pending_transports() {
  static std::vector<Transport*> t;
  return t;
}

// TORUSMPI_EAGER_LIMIT, capped by what the transport carries in one fragment and by its own
// preference.
size_t peer_eager_limit(const Transport* t) {
  return std::min({engine().eager_limit, t->max_payload(), t->eager_cap()});
}

// Out of line: context() is on every message's path and inlines without it.
[[gnu::noinline]] Context& new_context(uint32_t id) {
  engine().contexts.resize(id + 1);
  return engine().contexts[id];
}

inline Context& context(uint32_t id) {
  std::vector<Context>& all = engine().contexts;
  if (__builtin_expect(id >= all.size(), 0)) return new_context(id);
  return all[id];
}

void complete(Request* r) {
  if (__builtin_expect(r->rendezvous_, 0)) {
    r->rendezvous_ = false;
    --engine().peers[r->peer_].rendezvous_out;
  }
  // A send whose cancellation is being asked completes at the answer (deliver, kCancelReply).
  if (__builtin_expect(r->cancel_pending_, 0)) {
    r->finished_ = true;
    return;
  }
  __atomic_store_n(&r->done_, true, __ATOMIC_RELEASE);
  if (r->on_complete != nullptr) r->on_complete(r);  // may free r
}

bool matches(int want_source, int want_tag, int source, int tag) {
  return (want_source == kAnySource || want_source == source) &&
         (want_tag == kAnyTag || want_tag == tag);
}

// Sends a fragment now, or queues it behind what already waits for that peer.
void send_or_queue(int peer, const OutJob& job) {
  Engine& e = engine();
  Peer& p = e.peers[peer];
  if (p.backlog.empty() && p.transport->send(peer, job.h, job.payload(), job.len)) {
    e.buffers.give(job.bounce, job.len);
    if (job.complete != nullptr) complete(job.complete);
    return;
  }
  if (p.backlog.empty()) e.backlogged.push_back(peer);
  p.backlog.push_back(job);
}

void send_control(int peer, FragType type, uint64_t sreq, uint64_t rreq, uint8_t flags = 0) {
  OutJob job;
  std::memset(&job.h, 0, sizeof job.h);
  job.h.type = type;
  job.h.flags = flags;
  job.h.sreq = sreq;
  job.h.rreq = rreq;
  send_or_queue(peer, job);
}

// Hands over as much of the peer's backlog as its transport takes; true when it is empty.
bool flush(int peer) {
  Peer& p = engine().peers[peer];
  Transport* t = p.transport;
  while (!p.backlog.empty()) {
    OutJob& job = p.backlog.front();
    if (job.pipeline) {
      size_t chunk = t->max_payload();
      const bool on_device = device::in_device_range(job.data);
      while (job.offset < job.len) {
        size_t n = std::min(chunk, job.len - job.offset);
        job.h.size = job.offset;
        const uint8_t* from = job.data + job.offset;
        if (on_device) {
          // Copied again if the transport has no room: cheaper than a bounce per backlog entry.
          std::vector<uint8_t>& b = engine().chunk_bounce;
          if (b.size() < n) b.resize(n);
          device::stage(b.data(), from, n);
          from = b.data();
        }
        if (!t->send(peer, job.h, from, n)) return false;
        job.offset += n;
      }
    } else if (!t->send(peer, job.h, job.payload(), job.len)) {
      return false;
    }
    Request* done = job.complete;
    engine().buffers.give(job.bounce, job.len);
    p.backlog.pop_front();
    if (done != nullptr) complete(done);
  }
  return true;
}

int flush_backlogs() {
  Engine& e = engine();
  int events = 0;
  for (size_t i = 0; i < e.backlogged.size();) {
    if (flush(e.backlogged[i])) {
      e.backlogged[i] = e.backlogged.back();
      e.backlogged.pop_back();
      ++events;
    } else {
      ++i;
    }
  }
  return events;
}

int poll_all(void*) {
  Engine& e = engine();
  int events = 0;
  for (Transport* t : e.transports) events += t->poll();
  if (!e.backlogged.empty()) events += flush_backlogs();
  if (e.device_eager.any_lent()) events += e.device_eager.poll(events == 0);
  return events;
}

// Sleeps until a doorbell rings: only when nothing is waiting to be delivered, since the loopback
// and the transports without doorbells cannot wake us.
void sleep_until_bell(void*, int64_t us) {
  Engine& e = engine();
  for (Transport* t : e.transports) {
    if (t->pending()) return;
  }
  // The first transport is the one that sleeps (init orders them: shared memory, network,
  // loopback); a network transport's descriptor, armed, also ends the sleep of another.
  Transport* sleeper = e.transports.front();
  int also = -1;
  for (Transport* t : e.transports) {
    if (!t->network()) continue;
    if (!t->arm()) return;  // something arrived meanwhile
    if (t != sleeper) also = t->wait_fd();
    break;
  }
  // The switch's answers end the sleep too, while an aggregation waits for them.
  also = ina::wait_fd(also);
  sleeper->sleep(us, also);
}

void wake_sleeper(void*) { engine().transports.front()->wake_self(); }

// The sleeper, and the waker when every transport's work ends the sleep (has_doorbell). Without
// the waker the progress thread sleeps only briefly (progress::set_sleeper).
void update_sleeper() {
  const auto& ts = engine().transports;
  // The loopback (last) has none, but what it carries is posted by this rank's own calls.
  bool all = !ts.empty() && ts.front()->has_doorbell();
  for (Transport* t : ts) all = all && (t->has_doorbell() || t == ts.back());
  progress::set_sleeper(sleep_until_bell, all ? wake_sleeper : nullptr, nullptr);
}

// Reads n bytes of device eager message h (kFlagSlot; its payload is its chunk's word address)
// into dst, from wherever its payload is now, and gives the chunk back (device_eager.h). False,
// with the chunk as it was, when this rank cannot read the sender's HBM.
bool read_chunk(int peer, const FragHeader& h, const uint8_t* payload, void* dst, size_t n) {
  Transport* t = engine().peers[peer].transport;
  uint64_t word = 0;
  std::memcpy(&word, payload, sizeof word);
  // Fetched to be written (the swap), so the look at it costs one transfer, not two.
  device::prefetch_at_peer(peer, word);
  uint64_t seen = 0;
  if (!device::load_from_peer(peer, word, &seen)) return false;
  // Read from the buffer before the swap that proves it was still lent (a reader that comes late
  // finds the payload moved already, and reads it once, from the chunk).
  if (seen == kChunkLent) {
    if (n > 0 && !t->read_device(peer, h.addr, dst, n)) return false;
    if (!device::exchange_at_peer(peer, word, kChunkLent, kChunkFree, &seen)) return false;
    if (seen == kChunkLent) return true;
  }
  // The sender waited long enough and moved the payload into the chunk: read it there.
  if (seen == kChunkMoving) {
    progress::Backoff backoff;
    while (device::load_from_peer(peer, word, &seen) && seen == kChunkMoving) backoff.pause();
  }
  if (n > 0 && !t->read_device(peer, word + kSlotWordOffset, dst, n)) return false;
  device::store_to_peer(peer, word, kChunkFree);
  return true;
}

// A rendezvous receive whose n bytes are in place: the sender may have its buffer back.
void finish_rendezvous(Request* r, int peer, uint64_t sreq, size_t n) {
  Engine& e = engine();
  if (e.peers[peer].network) e.network_bytes += n;
  send_control(peer, FragType::kFin, sreq, 0);
  complete(r);
}

// One part of a split copy is in the receiver's buffer; the last one finishes the receive.
void split_part_done(RemoteRead* rr) {
  if (--rr->parts_left > 0) return;
  --engine().reads_in_flight;
  progress::add_work(-1);
  finish_rendezvous(rr->r, rr->peer, rr->sreq, rr->bytes);
  delete rr;
}

// A large message between ranks that each have a core (Transport::split_copy), from a sender this
// rank sends nothing large to (it would only wait for its kFin): this rank reads the first half
// of the sender's buffer while the sender, told by kSplit, writes the second half into this
// rank's buffer. Two cores copying 512 KiB each took 18 us where one copying 1 MiB took
// 55 (process_vm_readv/writev between two processes on a 2-vCPU VM, medians of 2000). The
// sender's buffer is its own again at kFin, once both halves are in.
void split_rendezvous(Request* r, int peer, const FragHeader& h, size_t n) {
  Engine& e = engine();
  Transport* t = e.peers[peer].transport;
  auto* rr = new RemoteRead{r, peer, h.sreq, n, h.addr, (n / 2) & ~size_t{4095}, 2};
  OutJob job;
  std::memset(&job.h, 0, sizeof job.h);
  job.h.type = FragType::kSplit;
  job.h.sreq = h.sreq;
  job.h.rreq = reinterpret_cast<uint64_t>(rr);
  job.h.size = rr->split;
  const uint64_t at[2] = {reinterpret_cast<uint64_t>(r->buf_), n};
  std::memcpy(job.key, at, sizeof at);
  job.key_len = sizeof at;
  job.len = sizeof at;
  send_or_queue(peer, job);
  ++e.reads_in_flight;
  progress::add_work(1);
  if (!t->read_remote(peer, h.addr, r->buf_, rr->split, nullptr, 0)) {
    boot::abort_job(1, "pml: rank " + std::to_string(e.self) + " could not read " +
                           std::to_string(rr->split) + " B of a message from rank " +
                           std::to_string(peer) + " in its buffer (freed during the send?)");
  }
  split_part_done(rr);
}

// Receives a matched message's data into r: copies an eager payload, or runs the rendezvous.
void receive_matched(Request* r, int peer, const FragHeader& h, const uint8_t* payload,
                     size_t len) {
  Engine& e = engine();
  r->peer_ = peer;
  r->source = h.source;
  r->tag = h.tag;
  size_t n = std::min<size_t>(h.size, r->capacity_);
  r->bytes = n;
  r->message_bytes = h.size;
  if (h.size > r->capacity_) r->error = Status::kErrTruncate;
  if (h.type == FragType::kEager) {
    if (n > 0) device::copy(r->buf_, payload, n);
    if (h.flags & kFlagSync) send_control(peer, FragType::kAck, h.sreq, 0);
    complete(r);
    return;
  }
  // Rendezvous: one copy straight from the sender's buffer when the transport can: a peer chip's
  // HBM by DMA (read_device), or host memory or a NIC view read into this side's DMA view. A
  // network read completes later, in read_done: its target's progress serves it, and this rank's
  // engine must not wait for that holding the lock.
  Peer& p = e.peers[peer];
  Transport::ReadStart read = Transport::ReadStart::kDone;
  if (h.flags & kFlagSlot) {  // from a peer on the node: the read gives its chunk back
    if (read_chunk(peer, h, payload, r->buf_, n)) {
      complete(r);
      return;
    }
    read = Transport::ReadStart::kUnsupported;
  } else if (n > 0 && (h.flags & kFlagDevice) && !p.network) {
    if (!p.transport->read_device(peer, h.addr, r->buf_, n))
      read = Transport::ReadStart::kUnsupported;
  } else if (n > 0 && !(h.flags & kFlagDevice) && !device::in_device_range(r->buf_) &&
             p.transport->split_copy(peer, h.addr, n)) {
    if (p.rendezvous_out == 0) {
      split_rendezvous(r, peer, h, n);
      return;
    }
    if (!p.transport->read_remote(peer, h.addr, r->buf_, n, nullptr, 0)) {
      read = Transport::ReadStart::kUnsupported;
    }
  } else if (n > 0) {
    auto* rr = new RemoteRead{r, peer, h.sreq, n};
    read = p.transport->start_read(peer, h.addr, device::dma_view(r->buf_), n, payload, len,
                                   reinterpret_cast<uint64_t>(rr));
    if (read == Transport::ReadStart::kStarted) {
      ++e.reads_in_flight;
      progress::add_work(1);  // the progress thread sees it through, as it does a collective
      return;
    }
    delete rr;
  }
  if (read == Transport::ReadStart::kDone) {
    finish_rendezvous(r, peer, h.sreq, n);
    return;
  }
  r->total_ = h.size;
  r->received_ = 0;
  send_control(peer, FragType::kCts, h.sreq, reinterpret_cast<uint64_t>(r));
}

// Kept in Engine::spare_messages up to this many.
constexpr size_t kSpareMessages = 256;

Message* new_message() {
  std::vector<Message*>& spare = engine().spare_messages;
  if (spare.empty()) return new Message;
  Message* m = spare.back();
  spare.pop_back();
  *m = Message{};
  return m;
}

void free_message(Message* m) {
  if (m->on_device) {
    device::free(m->data);
  } else if (m->data != nullptr) {
    engine().buffers.give(m->data, m->len);
  }
  std::vector<Message*>& spare = engine().spare_messages;
  if (spare.size() < kSpareMessages) {
    spare.push_back(m);
  } else {
    delete m;
  }
}

// An unexpected device eager message (kFlagSlot): its payload is read into this rank's HBM and the
// sender's chunk given back at once, so that a receive posted late holds no chunk (device_eager.h).
// It is then an eager message. False when HBM is short: it stays a rendezvous.
bool take_out_of_chunk(Message* m, int peer, const uint8_t* payload) {
  FragHeader& h = m->h;
  void* mem = nullptr;
  if (device::alloc(h.size, &mem) != Status::kOk) return false;
  if (!read_chunk(peer, h, payload, mem, h.size)) {
    device::free(mem);
    return false;
  }
  h.type = FragType::kEager;
  h.flags = 0;
  m->data = static_cast<uint8_t*>(mem);
  m->len = h.size;
  m->on_device = true;
  return true;
}

void on_matched_fragment(int peer, const FragHeader& h, const uint8_t* payload, size_t len) {
  Context& c = context(h.context);
  for (Request* r = c.posted.head; r != nullptr; r = r->next_) {
    if (matches(r->match_source_, r->match_tag_, h.source, h.tag)) {
      c.posted.erase(r);
      --engine().posted;
      receive_matched(r, peer, h, payload, len);
      return;
    }
  }
  Message* m = new_message();
  m->h = h;
  m->peer = peer;
  if (h.flags & kFlagSlot && take_out_of_chunk(m, peer, payload)) {
    c.unexpected.push_back(m);
    return;
  }
  if (len > 0) {
    // An inline device payload waits in this rank's HBM, unless it is full.
    void* mem = nullptr;
    if (h.type == FragType::kEager && (h.flags & kFlagDevice) &&
        device::alloc(len, &mem) == Status::kOk) {
      device::copy(mem, payload, len);
      m->data = static_cast<uint8_t*>(mem);
      m->on_device = true;
    } else {
      m->data = engine().buffers.take(len);
      if (m->data == nullptr) {
        log::error("pml: out of memory keeping an unexpected message of %llu B from rank %d",
                   static_cast<unsigned long long>(h.size), peer);
        std::abort();
      }
      device::stage(m->data, payload, len);
    }
    m->len = len;
  }
  c.unexpected.push_back(m);
}

Message* find_unexpected(uint32_t ctx, int source, int tag) {
  for (Message* m = context(ctx).unexpected.head; m != nullptr; m = m->next_) {
    if (matches(source, tag, m->h.source, m->h.tag)) return m;
  }
  return nullptr;
}

// Receives an unexpected message into r and frees it.
void receive_unexpected(Message* m, Request* r) {
  receive_matched(r, m->peer, m->h, m->data, m->len);
  free_message(m);
}

void prepare_recv(Request* r, uint32_t ctx, void* buf, size_t capacity) {
  r->kind_ = Request::Kind::kRecv;
  r->done_ = false;
  r->error = Status::kOk;
  r->cancelled = false;
  r->bytes = 0;
  r->context_ = ctx;
  r->buf_ = static_cast<uint8_t*>(buf);
  r->capacity_ = capacity;
}

}  // namespace

void set_transport(int peer, Transport* t) {
  std::vector<Transport*>& list = pending_transports();
  if (peer >= static_cast<int>(list.size())) list.resize(peer + 1);
  list[peer] = t;
}

Status init(int self, int size) {
  Engine& e = engine();
  e.self = self;
  e.peers.assign(size, Peer{});
  std::vector<Transport*>& set = pending_transports();
  for (int r = 0; r < size && r < static_cast<int>(set.size()); ++r) {
    Transport* t = set[r];
    e.peers[r].transport = t;
    e.peers[r].network = t != nullptr && t->network();
    if (t != nullptr &&
        std::find(e.transports.begin(), e.transports.end(), t) == e.transports.end()) {
      e.transports.push_back(t);
    }
  }
  // Shared memory first: it is polled first and sleeps, watching the network's descriptor too.
  std::stable_partition(e.transports.begin(), e.transports.end(),
                        [](Transport* t) { return !t->network(); });
  e.loopback = std::make_unique<SelfTransport>(self);
  e.peers[self].transport = e.loopback.get();
  e.transports.push_back(e.loopback.get());
  e.eager_limit = static_cast<size_t>(params::eager_limit());
  e.device_eager.init(std::min(e.eager_limit, static_cast<size_t>(params::device_eager_limit())),
                      complete);
  for (Peer& p : e.peers) {
    if (p.transport != nullptr) p.eager_limit = peer_eager_limit(p.transport);
  }
  e.poll_id = progress::add(poll_all, nullptr);
  update_sleeper();
  TORUSMPI_DEBUG(kPml, "pml: %zu transport(s), eager limit %zu B", e.transports.size(),
                 e.eager_limit);
  return Status::kOk;
}

int peer_count() {
  progress::Lock lock;
  return static_cast<int>(engine().peers.size());
}

int add_peer(Transport* t) {
  progress::Lock lock;
  Engine& e = engine();
  Peer p;
  p.transport = t;
  p.network = t->network();
  p.eager_limit = peer_eager_limit(t);
  e.peers.push_back(std::move(p));
  // Polled, and sleeping, in init's order: shared memory, network, then the loopback, last.
  if (std::find(e.transports.begin(), e.transports.end(), t) == e.transports.end()) {
    e.transports.insert(e.transports.end() - 1, t);
    update_sleeper();
  }
  return static_cast<int>(e.peers.size()) - 1;
}

Status finalize() {
  Engine& e = engine();
  // Reads of receives nobody waited for (MPI_Request_free) end with a kFin their senders wait for.
  // Bounded, as below: what a peer that is gone leaves unread is abandoned.
  if (!progress::wait_until([&] { return e.reads_in_flight == 0; }, kSendDrainTimeoutS)) {
    log::warn("pml: rank %d finalizes with %d rendezvous read(s) unfinished", e.self,
              e.reads_in_flight);
  }
  // Sends the application completed may still sit in a backlog (eager sends complete on queueing).
  progress::wait_until([&] { return e.backlogged.empty(); });
  // ... and what the transports took may still need this rank's polling (see sending()). Bounded:
  // a peer that is gone must not keep this rank from finalizing.
  progress::wait_until(
      [&] {
        for (Transport* t : e.transports) {
          if (t->sending()) return false;
        }
        return true;
      },
      kSendDrainTimeoutS);
  // Device eager chunks: payloads still in the application's buffers go into their chunks, which
  // peers on the node read from the arena until the job's last barrier; those lent to network peers
  // are waited for (device_eager.h), bounded in the same way.
  e.device_eager.move_all();
  progress::wait_until([&] { return e.device_eager.network_out() == 0; }, kSendDrainTimeoutS);
  progress::set_sleeper(nullptr, nullptr, nullptr);
  progress::remove(e.poll_id);
  for (Context& c : e.contexts) {
    while (Message* m = c.unexpected.head) {
      c.unexpected.erase(m);
      free_message(m);
    }
  }
  e.contexts.clear();
  e.transports.clear();
  e.peers.clear();
  e.loopback.reset();
  e.buffers.clear();
  for (Message* m : e.spare_messages) delete m;
  e.spare_messages.clear();
  e.device_eager.clear();
  pending_transports().clear();
  return Status::kOk;
}

size_t eager_limit(int peer) { return engine().peers[peer].eager_limit; }

uint64_t network_bytes_received() { return engine().network_bytes; }

bool contexts_idle(uint32_t ctx) {
  progress::Lock lock;
  const std::vector<Context>& all = engine().contexts;
  for (uint32_t id = ctx; id <= ctx + 1 && id < all.size(); ++id) {
    if (all[id].posted.head != nullptr || all[id].unexpected.head != nullptr) return false;
  }
  return true;
}

namespace {

// The header of an eager message; a rendezvous's sets its type and address after.
FragHeader message_header(uint32_t ctx, int source, int tag, size_t bytes, uint64_t sreq) {
  FragHeader h;
  h.type = FragType::kEager;
  h.flags = 0;
  h.reserved = 0;
  h.context = ctx;
  h.source = source;
  h.tag = tag;
  h.size = bytes;
  h.sreq = sreq;
  h.addr = 0;
  return h;
}

void prepare_send(Request* req, uint32_t ctx, SendMode mode, int peer, int source, int tag,
                  const void* buf, size_t bytes) {
  req->kind_ = Request::Kind::kSend;
  req->done_ = false;
  req->error = Status::kOk;
  req->cancelled = false;
  req->matched_ = false;
  req->cancel_pending_ = false;
  req->finished_ = false;
  req->rendezvous_ = false;
  req->context_ = ctx;
  req->mode_ = mode;
  req->peer_ = peer;
  req->source = source;
  req->tag = tag;
  req->bytes = bytes;
  req->buf_ = static_cast<uint8_t*>(const_cast<void*>(buf));
  req->capacity_ = bytes;
}

}  // namespace

Status isend(const Comm& comm, uint32_t ctx, const void* buf, size_t bytes, int dest, int tag,
             SendMode mode, Request* req) {
  progress::Lock lock;
  Engine& e = engine();
  int peer = comm.peer_rank(dest);
  if (e.peers[peer].transport == nullptr) return Status::kErrUnsupported;
  prepare_send(req, ctx, mode, peer, comm.rank, tag, buf, bytes);

  OutJob job;
  FragHeader& h = job.h;
  h = message_header(ctx, comm.rank, tag, bytes, reinterpret_cast<uint64_t>(req));
  Peer& p = e.peers[peer];
  // Device data goes eager only where the receiver could not fetch it from HBM (an eager payload
  // from device memory passes through host memory), or where the transport writes it into the
  // receiver's HBM itself (inline).
  const bool on_device = bytes > 0 && device::in_device_range(buf);
  const bool inline_device = on_device && bytes <= p.transport->device_inline_limit(peer);
  const bool reach = inline_device || (on_device && p.transport->device_reach(peer));
  if (reach && !inline_device && bytes <= p.eager_limit && mode == SendMode::kStandard) {
    if (DeviceChunk* chunk = e.device_eager.take(bytes, p.network)) {
      prepare_send(&chunk->req, ctx, mode, peer, comm.rank, tag, chunk->payload, bytes);
      h.sreq = reinterpret_cast<uint64_t>(&chunk->req);
      if (p.network) {
        e.device_eager.fill(chunk, buf, bytes);
        job.complete = req;  // its data is in the chunk: done once the message is on its way
        buf = chunk->payload;
      } else {
        // The reader copies from buf, and swaps the chunk's word: its address travels as the
        // payload. Done when read, or when moved into the chunk.
        h.flags = kFlagSlot;
        e.device_eager.lend(chunk, buf, req);
        const auto word = reinterpret_cast<uint64_t>(chunk->word);
        std::memcpy(job.key, &word, sizeof word);
        job.key_len = sizeof word;
        job.len = sizeof word;
      }
    }
  }
  if (bytes <= p.eager_limit && (!reach || inline_device) && mode != SendMode::kRead) {
    if (mode == SendMode::kSync) h.flags = kFlagSync;
    if (inline_device) h.flags |= kFlagDevice;
    job.data = static_cast<const uint8_t*>(buf);
    job.len = bytes;
    // Transports copy the payload they are given but read device memory only inline: another
    // device payload goes through a host copy made here, which also frees the user's buffer at
    // once.
    if (__builtin_expect(on_device && !inline_device, 0)) {
      job.bounce = e.buffers.take(bytes);
      if (job.bounce == nullptr) return Status::kErrNoMem;
      device::stage(job.bounce, buf, bytes);
      job.data = job.bounce;
    }
    // A standard send is done once its data is in the transport; a synchronous one at the kAck.
    if (mode != SendMode::kSync) job.complete = req;
  } else {
    h.type = FragType::kRts;
    h.addr = reinterpret_cast<uint64_t>(buf);  // done at kFin, or after the pipeline
    req->rendezvous_ = true;
    ++p.rendezvous_out;
    const void* exposed = buf;
    if (on_device) {
      h.flags |= kFlagDevice;
      // A node's peers read device memory by its device address; a NIC through its view.
      exposed = p.network ? device::dma_view(buf) : nullptr;
      if (p.network) h.addr = reinterpret_cast<uint64_t>(exposed);
    }
    if (exposed != nullptr) {
      job.key_len =
          static_cast<uint8_t>(p.transport->expose(peer, h.sreq, exposed, bytes, job.key));
      job.len = job.key_len;
    }
  }
  send_or_queue(peer, job);
  return Status::kOk;
}

int poll_budget() {
  constexpr int kMost = 16;
  if (progress::oversubscribed()) return kMost;
  const size_t n = engine().posted;
  return n <= 1 ? 1 : static_cast<int>(std::min<size_t>(n, kMost));
}

bool send_now(const Comm& comm, uint32_t ctx, const void* buf, size_t bytes, int dest, int tag) {
  progress::Lock lock;
  const int peer = comm.peer_rank(dest);
  Peer& p = engine().peers[peer];
  if (p.transport == nullptr || bytes > p.eager_limit || !p.backlog.empty()) return false;
  if (bytes > 0 && device::in_device_range(buf)) return false;
  // No request: nothing answers it, and no kCancel names it.
  const FragHeader h = message_header(ctx, comm.rank, tag, bytes, 0);
  return p.transport->send(peer, h, buf, bytes);
}

Status irecv(const Comm& comm, uint32_t ctx, void* buf, size_t capacity, int source, int tag,
             Request* req) {
  progress::Lock lock;
  prepare_recv(req, ctx, buf, capacity);
  // Whom the receive waits for, as the flight recorder names it until a message matches.
  req->peer_ = source == kAnySource ? flight::kAnyPeer : comm.peer_rank(source);
  req->match_source_ = source;
  req->match_tag_ = tag;
  // Progress first would find nothing new most of the time; a message already queued is older
  // than this receive, so it must match before any that arrives later.
  if (Message* m = find_unexpected(ctx, source, tag)) {
    context(ctx).unexpected.erase(m);
    receive_unexpected(m, req);
    return Status::kOk;
  }
  context(ctx).posted.push_back(req);
  ++engine().posted;
  return Status::kOk;
}

int waiting_for(int32_t* ranks, int max) {
  progress::Lock lock;
  int n = 0;
  for (Context& c : engine().contexts) {
    for (Request* r = c.posted.head; r != nullptr && n < max; r = r->next_) {
      if (r->quiet) continue;
      if (std::find(ranks, ranks + n, r->peer_) == ranks + n) ranks[n++] = r->peer_;
    }
  }
  return n;
}

namespace {

// The send side of cancel() (see pml.h).
bool cancel_send(Request* req) {
  if (req->matched_ || req->cancelled || req->cancel_pending_) return false;
  Engine& e = engine();
  Peer& p = e.peers[req->peer_];
  const auto sreq = reinterpret_cast<uint64_t>(req);
  // Still here: nothing of it has left, so it goes without asking anyone. (A pipeline job is the
  // data of a matched message: never taken out.)
  for (auto it = p.backlog.begin(); it != p.backlog.end(); ++it) {
    if (it->pipeline || it->h.sreq != sreq ||
        (it->h.type != FragType::kEager && it->h.type != FragType::kRts))
      continue;
    if (it->h.type == FragType::kRts) p.transport->unexpose(sreq);
    e.buffers.give(it->bounce, it->len);
    p.backlog.erase(it);  // an emptied backlog leaves e.backlogged at the next flush
    req->cancelled = true;
    complete(req);
    return true;
  }
  // Sent: the receiver decides. The envelope and size single out the message among those of an
  // earlier use of the same request object (see deliver, kCancel).
  req->finished_ = req->done();
  __atomic_store_n(&req->done_, false, __ATOMIC_RELEASE);
  req->cancel_pending_ = true;
  OutJob job;
  std::memset(&job.h, 0, sizeof job.h);
  job.h.type = FragType::kCancel;
  job.h.context = req->context_;
  job.h.source = req->source;
  job.h.tag = req->tag;
  job.h.size = req->capacity_;
  job.h.sreq = sreq;
  send_or_queue(req->peer_, job);
  return true;
}

// The receiver's side: drops the newest unexpected message from `peer` that kCancel `h` names.
// Newest: an older message with the same request pointer and envelope would have matched first.
void on_cancel(int peer, const FragHeader& h) {
  Context& c = context(h.context);
  bool dropped = false;
  for (Message* m = c.unexpected.tail; m != nullptr; m = m->prev_) {
    if (m->peer == peer && m->h.sreq == h.sreq && m->h.source == h.source && m->h.tag == h.tag &&
        m->h.size == h.size) {
      c.unexpected.erase(m);
      free_message(m);
      dropped = true;
      break;
    }
  }
  OutJob job;
  std::memset(&job.h, 0, sizeof job.h);
  job.h.type = FragType::kCancelReply;
  job.h.flags = dropped ? kFlagCancelled : 0;
  job.h.sreq = h.sreq;
  send_or_queue(peer, job);
}

// The sender's side of the answer: the send completes, cancelled or as sent. On no, a matched
// send whose protocol has not ended yet (a pipeline still pushing) completes when it ends.
void on_cancel_reply(int peer, const FragHeader& h) {
  auto* s = reinterpret_cast<Request*>(h.sreq);
  s->cancel_pending_ = false;
  if (h.flags & kFlagCancelled) {
    s->cancelled = true;
    engine().peers[peer].transport->unexpose(h.sreq);  // a rendezvous send's buffer
    complete(s);
  } else if (s->finished_) {
    complete(s);
  }
}

}  // namespace

bool cancel(Request* req) {
  progress::Lock lock;
  if (req->kind_ == Request::Kind::kSend) return cancel_send(req);
  if (req->done()) return false;
  Context& c = context(req->context_);
  for (Request* r = c.posted.head; r != nullptr; r = r->next_) {
    if (r == req) {
      c.posted.erase(req);
      --engine().posted;
      req->cancelled = true;
      complete(req);
      return true;
    }
  }
  return false;  // matched: its data is on the way
}

bool iprobe(const Comm& comm, uint32_t ctx, int source, int tag, ProbeInfo* info) {
  progress::Lock lock;
  (void)comm;
  Message* m = find_unexpected(ctx, source, tag);
  if (m == nullptr) {
    progress::poll();
    m = find_unexpected(ctx, source, tag);
  }
  if (m == nullptr) return false;
  info->source = m->h.source;
  info->tag = m->h.tag;
  info->bytes = m->h.size;
  return true;
}

bool improbe(const Comm& comm, uint32_t ctx, int source, int tag, ProbeInfo* info, Message** msg) {
  progress::Lock lock;
  if (!iprobe(comm, ctx, source, tag, info)) return false;
  *msg = find_unexpected(ctx, source, tag);
  context(ctx).unexpected.erase(*msg);
  return true;
}

Status mrecv(Message* msg, void* buf, size_t capacity, Request* req) {
  progress::Lock lock;
  prepare_recv(req, msg->h.context, buf, capacity);
  req->match_source_ = msg->h.source;
  req->match_tag_ = msg->h.tag;
  receive_unexpected(msg, req);
  return Status::kOk;
}

void wait(Request* req) {
  progress::wait_until([req] { return req->done(); });
}

void read_done(uint64_t cookie) {
  auto* rr = reinterpret_cast<RemoteRead*>(cookie);
  --engine().reads_in_flight;
  progress::add_work(-1);
  finish_rendezvous(rr->r, rr->peer, rr->sreq, rr->bytes);
  delete rr;
}

void deliver(int peer, const FragHeader& h, const void* payload, size_t len) {
  if (const char* fault = fragment_fault(h, len)) {
    boot::abort_job(1, "pml: rank " + std::to_string(engine().self) + " received " + fault +
                           " (type " + std::to_string(static_cast<int>(h.type)) + ", " +
                           std::to_string(len) + " B) from rank " + std::to_string(peer));
  }
  const auto* bytes = static_cast<const uint8_t*>(payload);
  switch (h.type) {
    case FragType::kEager:
      if (engine().peers[peer].network) engine().network_bytes += len;
      on_matched_fragment(peer, h, bytes, len);
      return;
    case FragType::kRts:
      on_matched_fragment(peer, h, bytes, len);
      return;
    case FragType::kAck:
      reinterpret_cast<Request*>(h.sreq)->matched_ = true;
      complete(reinterpret_cast<Request*>(h.sreq));
      return;
    case FragType::kFin:
      engine().peers[peer].transport->unexpose(h.sreq);
      reinterpret_cast<Request*>(h.sreq)->matched_ = true;
      complete(reinterpret_cast<Request*>(h.sreq));
      return;
    case FragType::kCancel:
      on_cancel(peer, h);
      return;
    case FragType::kCancelReply:
      on_cancel_reply(peer, h);
      return;
    case FragType::kCts: {
      engine().peers[peer].transport->unexpose(h.sreq);
      auto* s = reinterpret_cast<Request*>(h.sreq);
      s->matched_ = true;
      engine().device_eager.settle(s);  // a chunk's payload still in the application's buffer
      OutJob job;
      std::memset(&job.h, 0, sizeof job.h);
      job.h.type = FragType::kData;
      job.h.rreq = h.rreq;
      job.data = s->buf_;
      job.len = s->capacity_;
      job.complete = s;
      job.pipeline = true;
      Engine& e = engine();
      Peer& p = e.peers[peer];
      if (p.backlog.empty()) e.backlogged.push_back(peer);
      p.backlog.push_back(job);
      flush(peer);
      return;
    }
    case FragType::kSplit: {
      Transport* t = engine().peers[peer].transport;
      auto* s = reinterpret_cast<Request*>(h.sreq);
      s->matched_ = true;
      uint64_t at[2];  // the receiver's buffer, and where the copy ends
      std::memcpy(at, bytes, sizeof at);
      const bool wrote = h.size <= at[1] && at[1] <= s->capacity_ &&
                         t->write_remote(peer, at[0] + h.size, s->buf_ + h.size, at[1] - h.size);
      send_control(peer, FragType::kSplitDone, h.sreq, h.rreq, wrote ? 0 : kFlagSplitFailed);
      return;
    }
    case FragType::kSplitDone: {
      auto* rr = reinterpret_cast<RemoteRead*>(h.rreq);
      if ((h.flags & kFlagSplitFailed) && !engine().peers[peer].transport->read_remote(
                                              peer, rr->addr + rr->split, rr->r->buf_ + rr->split,
                                              rr->bytes - rr->split, nullptr, 0)) {
        boot::abort_job(1, "pml: rank " + std::to_string(engine().self) +
                               " could read neither half of a message from rank " +
                               std::to_string(peer));
      }
      split_part_done(rr);
      return;
    }
    case FragType::kData: {
      if (engine().peers[peer].network) engine().network_bytes += len;
      auto* r = reinterpret_cast<Request*>(h.rreq);
      // Bytes past a truncated receive's buffer are dropped, never written.
      if (h.size < r->capacity_) {
        device::copy(r->buf_ + h.size, bytes, std::min<size_t>(len, r->capacity_ - h.size));
      }
      r->received_ += len;
      if (r->received_ == r->total_) complete(r);
      return;
    }
  }
  log::error("pml: fragment of unknown type %d from rank %d", static_cast<int>(h.type), peer);
  std::abort();
}

}  // namespace torusmpi::pml
