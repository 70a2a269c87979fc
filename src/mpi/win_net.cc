// One-sided communication between nodes (see win.h): the requests an origin sends to a target on
// another node or emulated instance, and their service at the target.
//
// Why messages through the pml rather than the transports' own RMA and atomics: the target's
// memory must change under the rules its node peers follow with direct loads and stores. An
// accumulate must hold the target's update lock (a word in the node's control segment) so that a
// remote and a local accumulate to one element lose nothing, and a lock must take the same lock
// word the node's processes take; a NIC's atomics know neither. Served by the target's progress
// engine, every request is applied by the target process itself, under those very words, and the
// pml already brings what it needs: ordering per peer, rendezvous (an RMA read over the network)
// for large payloads, the NeuronLink accounting of the bytes. The target's progress thread runs
// while the window lives (net_open), sleeping on the transports' doorbell between requests, so
// passive target needs no MPI call of the target.
//
// The wire: a request is one message on the window communicator's point-to-point context, tag
// kRequestTag: a Wire header, the target blocks (addresses in the target, type-map order), the
// packed data. Its answer, when it has one, comes on the tag the request names: an Answer, then
// the bytes asked for. The origin posts the answer's receive before it sends; it waits for both in
// the call (net_call: fetching accumulates, locks, gets into scratch), or leaves them in flight
// until its epoch ends (net_post: puts, accumulates, gets into the caller's buffer). Post and
// complete are answered by nothing (net_signal).
#include <sched.h>

#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "core/log.h"
#include "core/progress.h"
#include "device/device.h"
#include "mpi/builtins.h"
#include "mpi/datatype.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/reduction.h"
#include "mpi/runtime.h"
#include "mpi/win.h"
#include "pml/pml.h"

namespace torusmpi::mpi {
namespace {

// Tags on the window communicator's context. What goes from a process to another is a request,
// an answer (and a get's data) on the tag the other's request named, or the data of its own
// kPutDirect on its request's tag + kPutDataTags: the two processes count their tags apart, so
// answers and put data must not share tags.
constexpr int kRequestTag = 1;
constexpr int kFirstAnswerTag = 2;
constexpr uint32_t kAnswerTags = 1u << 29;
constexpr int kPutDataTags = 1 << 30;

struct Wire {
  uint32_t kind;
  int32_t answer_tag;  // 0: no answer
  int32_t op;
  int32_t basic;
  uint64_t blocks;
  uint64_t bytes;
  uint64_t result_bytes;
};

struct Answer {
  int32_t error;  // an MPI error class, MPI_SUCCESS
  int32_t granted;
};

// A request received (or being received: a large one arrives by rendezvous).
struct Incoming {
  int source = 0;
  std::vector<uint8_t> buf;
  pml::Request req;
};

// An answer or a signal on its way: deletes itself when sent.
struct Outgoing {
  std::vector<uint8_t> buf;
  pml::Request req;
};

// A kPutDirect's data being received into the window (one block), or into `aside` (several
// blocks, a kAccumulateDirect's, a refused one's): answered once it is done, and put into its
// blocks or combined there.
struct DirectPut {
  int source = 0;
  int tag = 0;
  int error = MPI_SUCCESS;
  uint64_t bytes = 0;
  std::vector<uint8_t> aside;
  bool accumulate = false;
  bool several = false;  // a put of several blocks (scattered once received)
  int op = -1, basic = -1;
  std::vector<rma::Block> blocks;  // the target, when received aside
  pml::Request req;
};

// A kGetDirect's data on its way from the window's memory: deletes itself when sent.
struct DirectGet {
  pml::Request req;
};

// A window this process serves.
struct Served {
  Win* w = nullptr;
  pml::Comm comm;                            // a copy of the window communicator's pml view
  std::deque<std::unique_ptr<Incoming>> in;  // in arrival order; served in that order
  std::vector<std::unique_ptr<DirectPut>> puts;
};

std::vector<std::unique_ptr<Served>>& served() {
  static auto* const list = new std::vector<std::unique_ptr<Served>>;
  return *list;
}
int g_poll = 0;

void sent(pml::Request* r) {
  if (r->error != Status::kOk) {
    log::warn("one-sided: an answer or signal to a window's process failed: %s",
              status_string(r->error));
  }
  delete static_cast<Outgoing*>(r->user);
}

Status send_owned(const pml::Comm& comm, int dest, int tag, std::vector<uint8_t>* bytes) {
  auto* o = new Outgoing;
  o->buf = std::move(*bytes);
  o->req.user = o;
  o->req.on_complete = sent;
  // on_complete may run (and delete o) inside isend.
  Status st = pml::isend(comm, comm.context, o->buf.data(), o->buf.size(), dest, tag,
                         pml::SendMode::kStandard, &o->req);
  if (st != Status::kOk) delete o;
  return st;
}

// Whether [b.address, + b.bytes) is this process's memory in the window: its part, or for a
// dynamic window memory it attached.
bool inside(const Win& w, const rma::Block& b) {
  const uint64_t lo = b.address, hi = b.address + b.bytes;
  if (hi < lo) return false;
  if (w.flavor == MPI_WIN_FLAVOR_DYNAMIC) {
    const AttachTable* t = w.attached;
    const uint64_t n = __atomic_load_n(&t->count, __ATOMIC_ACQUIRE);
    for (uint64_t i = 0; i < n && i < AttachTable::kMax; ++i) {
      if (lo >= t->regions[i].base && hi <= t->regions[i].base + t->regions[i].size) return true;
    }
    return false;
  }
  const WinTarget& me = w.targets[w.rank];
  return lo >= me.base && hi <= me.base + static_cast<uint64_t>(me.size);
}

// This process's window memory may be device memory (win.h): its bytes move by device::copy.
void gather(const std::vector<rma::Block>& blocks, uint8_t* out) {
  for (const rma::Block& b : blocks) {
    device::copy(out, reinterpret_cast<const void*>(b.address), b.bytes);
    out += b.bytes;
  }
}

void scatter(const std::vector<rma::Block>& blocks, const uint8_t* in) {
  for (const rma::Block& b : blocks) {
    device::copy(reinterpret_cast<void*>(b.address), in, b.bytes);
    in += b.bytes;
  }
}

MPI_Op op_handle(int index) {
  static const MPI_Op ops[] = {
#define TORUSMPI_OP(obj, name) reinterpret_cast<MPI_Op>(&ompi_mpi_op_##obj),
#include "mpi/ops.def"
#undef TORUSMPI_OP
  };
  return ops[index];
}

// The update lock of this process's memory, taken for a request: held by a node peer only for
// the length of one accumulate (it never waits for anything while it holds it).
class UpdateHold {
 public:
  explicit UpdateHold(Win* w) : word_(&w->block(w->rank)->update) {
    while (!rma::try_lock_exclusive(word_)) sched_yield();
  }
  ~UpdateHold() { rma::unlock_exclusive(word_); }
  UpdateHold(const UpdateHold&) = delete;
  UpdateHold& operator=(const UpdateHold&) = delete;

 private:
  std::atomic<uint32_t>* word_;
};

// Applies an accumulate's data to the target's blocks where they lie (by the device's kernels in
// device memory): MPI_ERR_OP when the op does not take the type (the origin checked it: a
// mismatch of the two libraries' tables).
int combine(int op, int basic, const std::vector<rma::Block>& blocks, const uint8_t* data) {
  coll::Reduction r;
  bool commutative = true;
  size_t elem = 0, per = 0;
  int rc;
  {
    DeferErrors defer;
    rc = resolve_packed_reduction("one-sided service", MPI_COMM_SELF, op_handle(op),
                                  builtin_datatype(basic), *builtin_engine_type(basic), &r,
                                  &commutative, &elem, &per);
  }
  if (rc != MPI_SUCCESS || elem == 0) return MPI_ERR_OP;
  for (const rma::Block& b : blocks) {
    reduce_any(r, reinterpret_cast<void*>(b.address), data, b.bytes / elem, elem);
    data += b.bytes;
  }
  return MPI_SUCCESS;
}

void direct_get_sent(pml::Request* r) {
  if (r->error != Status::kOk) {
    log::warn("one-sided: the data of a get to a window's process failed: %s",
              status_string(r->error));
  }
  delete static_cast<DirectGet*>(r->user);
}

void send_answer(const Served& s, int dest, int tag, const Answer& a) {
  std::vector<uint8_t> out(sizeof a);
  std::memcpy(out.data(), &a, sizeof a);
  if (send_owned(s.comm, dest, tag, &out) != Status::kOk) {
    log::warn("one-sided: cannot answer rank %d of a window", dest);
  }
}

// Whether an accumulate's op and type are ones this library knows, and its data fits its blocks.
bool accumulate_valid(const Wire& h, uint64_t total) {
  const auto kind = static_cast<NetKind>(h.kind);
  const int no_op = static_cast<int>(BuiltinOp::k_no_op);
  return h.op >= 0 && h.op < static_cast<int>(BuiltinOp::kCount) && h.basic >= 0 &&
         h.basic < static_cast<int>(BuiltinType::kCount) && (h.op == no_op || h.bytes == total) &&
         (kind != NetKind::kGetAccumulate || h.result_bytes == total);
}

// An accumulate's data applied to its blocks, under this process's update lock (the same lock and
// the same kernels as the node's own accumulates, win_ops.cc); `fetched` (a get_accumulate's
// answer) gets the blocks' bytes as they were.
int apply_accumulate(Win* w, int op, int basic, const std::vector<rma::Block>& blocks,
                     const uint8_t* data, uint64_t total, uint8_t* fetched = nullptr) {
  UpdateHold hold(w);
  if (fetched != nullptr) gather(blocks, fetched);
  if (op == static_cast<int>(BuiltinOp::k_replace)) {
    scatter(blocks, data);
  } else if (op != static_cast<int>(BuiltinOp::k_no_op) && total > 0) {
    return combine(op, basic, blocks, data);
  }
  return MPI_SUCCESS;
}

// kPutDirect and kGetDirect: the one block is checked, then its data is received in place (the
// answer follows in serve, once it has landed) or answered and sent from where it lies.
// kAccumulateDirect: its data is received aside, then combined into its blocks (serve).
void handle_direct(Served* s, Incoming* in, const Wire& h, const std::vector<rma::Block>& blocks,
                   uint64_t total, int error) {
  const auto kind = static_cast<NetKind>(h.kind);
  if (h.answer_tag < kFirstAnswerTag ||
      h.answer_tag >= kFirstAnswerTag + static_cast<int>(kAnswerTags)) {
    log::warn("one-sided: a request from rank %d names no answer tag", in->source);
    return;
  }
  const bool accumulate = kind == NetKind::kAccumulateDirect;
  const bool several = kind == NetKind::kPutDirect && blocks.size() != 1;
  if (error == MPI_SUCCESS && kind == NetKind::kGetDirect && blocks.size() != 1) {
    error = MPI_ERR_INTERN;
  }
  if (error == MPI_SUCCESS && several && h.bytes != total) error = MPI_ERR_INTERN;
  if (error == MPI_SUCCESS && accumulate && !accumulate_valid(h, total)) error = MPI_ERR_INTERN;
  const rma::Block b = blocks.size() == 1 ? blocks[0] : rma::Block{0, 0};
  if (kind == NetKind::kGetDirect) {
    if (error == MPI_SUCCESS && h.result_bytes != b.bytes) error = MPI_ERR_INTERN;
    send_answer(*s, in->source, h.answer_tag, Answer{error, 0});
    if (error != MPI_SUCCESS) return;
    auto* g = new DirectGet;
    g->req.user = g;
    g->req.on_complete = direct_get_sent;
    if (pml::isend(s->comm, s->comm.context, reinterpret_cast<const void*>(b.address), b.bytes,
                   in->source, h.answer_tag, pml::SendMode::kStandard, &g->req) != Status::kOk) {
      log::warn("one-sided: cannot send the data of a get to rank %d", in->source);
      delete g;
    }
    return;
  }
  // The origin sent the data whatever this says: it is received, into the window or aside.
  auto p = std::make_unique<DirectPut>();
  p->source = in->source;
  p->tag = h.answer_tag;
  p->error = error;
  p->bytes = h.bytes;
  void* into = reinterpret_cast<void*>(b.address);
  if (accumulate || several) {
    p->accumulate = accumulate;
    p->several = several;
    p->op = h.op;
    p->basic = h.basic;
    p->blocks = blocks;
    p->aside.resize(h.bytes);
    into = p->aside.data();
  } else if (error != MPI_SUCCESS || h.bytes != b.bytes) {
    if (p->error == MPI_SUCCESS) p->error = MPI_ERR_INTERN;
    p->aside.resize(h.bytes);
    into = p->aside.data();
  }
  p->req.quiet = true;
  if (pml::irecv(s->comm, s->comm.context, into, h.bytes, in->source, h.answer_tag + kPutDataTags,
                 &p->req) != Status::kOk) {
    log::warn("one-sided: cannot receive the data of a put from rank %d", in->source);
    return;
  }
  s->puts.push_back(std::move(p));
}

// Serves one request; its answer (if asked for) is sent.
void handle(Served* s, Incoming* in) {
  Win* w = s->w;
  Wire h{};
  const size_t n = in->buf.size();
  if (n < sizeof h) {
    log::warn("one-sided: a request of %zu bytes from rank %d is too short", n, in->source);
    return;
  }
  std::memcpy(&h, in->buf.data(), sizeof h);
  std::vector<uint8_t> out(sizeof(Answer) + h.result_bytes);
  Answer a{MPI_SUCCESS, 0};
  uint8_t* result = out.data() + sizeof(Answer);
  std::vector<rma::Block> blocks;
  const uint64_t block_bytes = h.blocks * sizeof(rma::Block);
  // A kPutDirect's and a kAccumulateDirect's bytes come in a message of their own.
  const auto kind = static_cast<NetKind>(h.kind);
  const uint64_t inline_bytes =
      kind == NetKind::kPutDirect || kind == NetKind::kAccumulateDirect ? 0 : h.bytes;
  if (h.blocks > n || sizeof h + block_bytes + inline_bytes != n) {
    a.error = MPI_ERR_INTERN;
  } else if (h.blocks > 0) {  // locks, posts and completes name no memory
    blocks.resize(h.blocks);
    std::memcpy(blocks.data(), in->buf.data() + sizeof h, block_bytes);
  }
  const uint8_t* data = in->buf.data() + sizeof h + block_bytes;
  uint64_t total = 0;
  for (const rma::Block& b : blocks) {
    total += b.bytes;
    if (a.error == MPI_SUCCESS && !inside(*w, b)) a.error = MPI_ERR_RMA_RANGE;
  }
  if (kind == NetKind::kPutDirect || kind == NetKind::kGetDirect ||
      kind == NetKind::kAccumulateDirect) {
    handle_direct(s, in, h, blocks, total, a.error);
    return;
  }
  const bool acc = kind == NetKind::kAccumulate || kind == NetKind::kGetAccumulate;
  if (a.error == MPI_SUCCESS && acc && !accumulate_valid(h, total)) a.error = MPI_ERR_INTERN;
  if (a.error == MPI_SUCCESS) {
    switch (kind) {
      case NetKind::kPut:
        if (h.bytes != total) {
          a.error = MPI_ERR_INTERN;
          break;
        }
        scatter(blocks, data);
        break;
      case NetKind::kGet:
        if (h.result_bytes != total) {
          a.error = MPI_ERR_INTERN;
          break;
        }
        gather(blocks, result);
        break;
      case NetKind::kAccumulate:
      case NetKind::kGetAccumulate: {
        a.error = apply_accumulate(w, h.op, h.basic, blocks, data, total,
                                   kind == NetKind::kGetAccumulate ? result : nullptr);
        break;
      }
      case NetKind::kCompareAndSwap: {
        const uint64_t e = h.bytes / 2;
        if (e != total || h.result_bytes != total || e > 32) {
          a.error = MPI_ERR_INTERN;
          break;
        }
        UpdateHold hold(w);
        gather(blocks, result);
        if (std::memcmp(result, data + e, e) == 0) scatter(blocks, data);
        break;
      }
      case NetKind::kTryLockShared:
        a.granted = rma::try_lock_shared(&w->block(w->rank)->lock);
        break;
      case NetKind::kTryLockExclusive:
        a.granted = rma::try_lock_exclusive(&w->block(w->rank)->lock);
        break;
      case NetKind::kUnlockShared:
        rma::unlock_shared(&w->block(w->rank)->lock);
        break;
      case NetKind::kUnlockExclusive:
        rma::unlock_exclusive(&w->block(w->rank)->lock);
        break;
      case NetKind::kPost:
        // post[target][origin]: the sender (a target) exposed its memory to this origin.
        w->posts(in->source, w->rank)->fetch_add(1, std::memory_order_release);
        break;
      case NetKind::kComplete:
        w->block(w->rank)->completes.fetch_add(1, std::memory_order_release);
        break;
      default:
        a.error = MPI_ERR_INTERN;
        break;
    }
  }
  if (h.answer_tag == 0) {
    if (a.error != MPI_SUCCESS) {
      log::warn("one-sided: a request (kind %u) from rank %d was malformed", h.kind, in->source);
    }
    return;
  }
  std::memcpy(out.data(), &a, sizeof a);
  if (send_owned(s->comm, in->source, h.answer_tag, &out) != Status::kOk) {
    log::warn("one-sided: cannot answer rank %d of a window", in->source);
  }
}

// The poll function: takes the requests that arrived, serves those received, in order.
int serve(void*) {
  static bool busy = false;  // a poll from inside a send of an answer: nothing to do twice
  if (busy) return 0;
  busy = true;
  int events = 0;
  for (auto& s : served()) {
    pml::ProbeInfo info;
    pml::Message* msg = nullptr;
    while (pml::improbe(s->comm, s->comm.context, pml::kAnySource, kRequestTag, &info, &msg)) {
      auto in = std::make_unique<Incoming>();
      in->source = info.source;
      in->buf.resize(info.bytes);
      in->req.quiet = true;
      if (pml::mrecv(msg, in->buf.data(), info.bytes, &in->req) != Status::kOk) {
        log::warn("one-sided: cannot receive a request from rank %d", info.source);
        continue;
      }
      s->in.push_back(std::move(in));
      ++events;
    }
    while (!s->in.empty() && s->in.front()->req.done()) {
      handle(s.get(), s->in.front().get());
      s->in.pop_front();
      ++events;
    }
    for (size_t i = 0; i < s->puts.size();) {
      DirectPut* p = s->puts[i].get();
      if (!p->req.done()) {
        ++i;
        continue;
      }
      int error = p->error;
      if (error == MPI_SUCCESS && (p->req.error != Status::kOk || p->req.bytes != p->bytes)) {
        error = MPI_ERR_INTERN;
      }
      if (error == MPI_SUCCESS && p->accumulate) {
        error = apply_accumulate(s->w, p->op, p->basic, p->blocks, p->aside.data(), p->bytes);
      }
      if (error == MPI_SUCCESS && p->several) scatter(p->blocks, p->aside.data());
      send_answer(*s, p->source, p->tag, Answer{error, 0});
      s->puts.erase(s->puts.begin() + static_cast<std::ptrdiff_t>(i));
      ++events;
    }
  }
  busy = false;
  return events;
}

// A request's message: header, blocks, data.
void build(const NetCall& call, int tag, std::vector<uint8_t>* msg) {
  const size_t nblocks = call.blocks != nullptr ? call.blocks->size() : 0;
  Wire h{static_cast<uint32_t>(call.kind),
         tag,
         call.op,
         call.basic,
         nblocks,
         call.bytes,
         call.result_bytes};
  msg->resize(sizeof h + nblocks * sizeof(rma::Block) + call.bytes);
  std::memcpy(msg->data(), &h, sizeof h);
  if (nblocks > 0) {
    std::memcpy(msg->data() + sizeof h, call.blocks->data(), nblocks * sizeof(rma::Block));
  }
  if (call.bytes > 0) {
    std::memcpy(msg->data() + sizeof h + nblocks * sizeof(rma::Block), call.data, call.bytes);
  }
}

// What an answer says: MPI_SUCCESS or an error class with *error.
int answered(const Win& w, int target, Status st, const pml::Request& recv, size_t want,
             const Answer& a, std::string* error) {
  if (st != Status::kOk || recv.bytes != want) {
    *error = "the request to rank " + std::to_string(target) + " of the window (on another node) " +
             "failed: " + (st != Status::kOk ? status_string(st) : "a short answer");
    return MPI_ERR_OTHER;
  }
  if (a.error == MPI_ERR_RMA_RANGE) {
    *error = "rank " + std::to_string(target) +
             " (on another node) refused the access: it is not in its part of the window" +
             (w.flavor == MPI_WIN_FLAVOR_DYNAMIC ? " (memory it attached)" : "");
    return a.error;
  }
  if (a.error != MPI_SUCCESS) {
    *error = "rank " + std::to_string(target) + " (on another node) could not serve the request";
    return a.error;
  }
  return MPI_SUCCESS;
}

int next_tag(Win* w) { return static_cast<int>(kFirstAnswerTag + w->next_reply++ % kAnswerTags); }

// A put, accumulate or get left in flight (net_post): its message (the origin's data copied, so
// the origin's buffer is free at once), its answer (a get's bytes, copied out when it comes), both
// requests; it counts itself out of the window's and deletes itself when both are done.
struct InFlight {
  Win* w = nullptr;
  int target = 0;
  int left = 2;
  std::vector<uint8_t> msg;
  std::vector<uint8_t> answer;  // an Answer, then a get's bytes
  void* result = nullptr;       // where a get's bytes go (the caller's buffer)
  pml::Request send, recv;
};

// At most this many in flight per window: each holds a copy of its data.
constexpr int kMaxInFlight = 64;

void in_flight_done(pml::Request* r) {
  auto* f = static_cast<InFlight*>(r->user);
  if (--f->left > 0) return;
  Win* w = f->w;
  Status st = f->send.error != Status::kOk ? f->send.error : f->recv.error;
  std::string error;
  Answer a{MPI_ERR_OTHER, 0};
  if (f->recv.bytes >= sizeof a) std::memcpy(&a, f->answer.data(), sizeof a);
  if (answered(*w, f->target, st, f->recv, f->answer.size(), a, &error) != MPI_SUCCESS) {
    if (w->net_error == MPI_SUCCESS) {
      w->net_error = a.error != MPI_SUCCESS ? a.error : MPI_ERR_OTHER;
      w->net_error_text = error;
    }
  } else if (f->result != nullptr) {
    // The caller's buffer, of either kind of memory.
    device::copy(f->result, f->answer.data() + sizeof a, f->answer.size() - sizeof a);
  }
  --w->in_flight[f->target];
  --w->in_flight_total;
  delete f;
}

}  // namespace

int net_call(Win* w, int target, const NetCall& call, bool* granted, std::string* error) {
  const pml::Comm& comm = *comm_impl(w->comm);
  const int tag = next_tag(w);
  thread_local std::vector<uint8_t> msg;
  build(call, tag, &msg);
  std::vector<uint8_t> answer(sizeof(Answer) + call.result_bytes);
  pml::Request recv, send;
  Status st = pml::irecv(comm, comm.context, answer.data(), answer.size(), target, tag, &recv);
  if (st == Status::kOk) {
    st = pml::isend(comm, comm.context, msg.data(), msg.size(), target, kRequestTag,
                    pml::SendMode::kStandard, &send);
    if (st != Status::kOk) pml::cancel(&recv);
    if (st == Status::kOk) pml::wait(&send);
    pml::wait(&recv);
    if (st == Status::kOk) st = send.error != Status::kOk ? send.error : recv.error;
  }
  Answer a{};
  if (recv.bytes >= sizeof a) std::memcpy(&a, answer.data(), sizeof a);
  if (int rc = answered(*w, target, st, recv, answer.size(), a, error)) return rc;
  if (granted != nullptr) *granted = a.granted != 0;
  if (call.result_bytes > 0) {
    device::copy(call.result, answer.data() + sizeof(Answer), call.result_bytes);  // either kind
  }
  return MPI_SUCCESS;
}

int net_direct(Win* w, int target, const NetCall& call, std::string* error) {
  const pml::Comm& comm = *comm_impl(w->comm);
  const int tag = next_tag(w);
  const bool put = call.kind == NetKind::kPutDirect || call.kind == NetKind::kAccumulateDirect;
  // The header goes alone, naming the data's size: the data follows on the answer's tag.
  NetCall head = call;
  head.bytes = 0;
  std::vector<uint8_t> msg;
  build(head, tag, &msg);
  Wire h{};
  std::memcpy(&h, msg.data(), sizeof h);
  h.bytes = put ? call.bytes : 0;
  std::memcpy(msg.data(), &h, sizeof h);
  Answer a{};
  pml::Request answer, data, send, data_send;
  bool answer_posted = false, data_posted = false, sent = false, data_sent = false;
  Status st = pml::irecv(comm, comm.context, &a, sizeof a, target, tag, &answer);
  answer_posted = st == Status::kOk;
  // A get's data follows its answer on the same tag (non-overtaking: this receive matches it).
  if (st == Status::kOk && !put) {
    st = pml::irecv(comm, comm.context, call.result, call.result_bytes, target, tag, &data);
    data_posted = st == Status::kOk;
  }
  if (st == Status::kOk) {
    st = pml::isend(comm, comm.context, msg.data(), msg.size(), target, kRequestTag,
                    pml::SendMode::kStandard, &send);
    sent = st == Status::kOk;
  }
  if (st == Status::kOk && put) {
    st = pml::isend(comm, comm.context, call.data, call.bytes, target, tag + kPutDataTags,
                    pml::SendMode::kStandard, &data_send);
    data_sent = st == Status::kOk;
  }
  if (sent) pml::wait(&send);
  if (data_sent) pml::wait(&data_send);
  // Without the request out, no answer comes: the receives are taken back.
  if (answer_posted && (!sent || (put && !data_sent)) && !pml::cancel(&answer)) pml::wait(&answer);
  if (answer_posted && sent && (!put || data_sent)) pml::wait(&answer);
  if (data_posted) {
    if (!sent || a.error != MPI_SUCCESS || answer.error != Status::kOk) {
      if (!pml::cancel(&data)) pml::wait(&data);
    } else {
      pml::wait(&data);
    }
  }
  if (st == Status::kOk) st = send.error != Status::kOk ? send.error : answer.error;
  if (st == Status::kOk && put) st = data_send.error;
  if (st == Status::kOk && !put && a.error == MPI_SUCCESS) st = data.error;
  if (int rc = answered(*w, target, st, answer, sizeof a, a, error)) return rc;
  if (!put && data.bytes != call.result_bytes) {
    *error = "the data of a get from rank " + std::to_string(target) + " came short";
    return MPI_ERR_OTHER;
  }
  return MPI_SUCCESS;
}

int net_post(Win* w, int target, const NetCall& call, std::string* error) {
  if (w->in_flight_total >= kMaxInFlight) {
    progress::wait_until([w] { return w->in_flight_total < kMaxInFlight; });
  }
  const pml::Comm& comm = *comm_impl(w->comm);
  auto* f = new InFlight;
  f->w = w;
  f->target = target;
  const int tag = next_tag(w);
  build(call, tag, &f->msg);
  f->send.user = f->recv.user = f;
  f->send.on_complete = f->recv.on_complete = in_flight_done;
  // Counted first: either request may complete inside its call.
  ++w->in_flight[target];
  ++w->in_flight_total;
  f->answer.resize(sizeof(Answer) + call.result_bytes);
  f->result = call.result_bytes > 0 ? call.result : nullptr;
  Status st =
      pml::irecv(comm, comm.context, f->answer.data(), f->answer.size(), target, tag, &f->recv);
  if (st != Status::kOk) {
    --w->in_flight[target];
    --w->in_flight_total;
    delete f;
  } else {
    st = pml::isend(comm, comm.context, f->msg.data(), f->msg.size(), target, kRequestTag,
                    pml::SendMode::kStandard, &f->send);
    if (st != Status::kOk) {
      // The receive completes cancelled (or would wait forever): the request is gone either way.
      f->send.error = st;
      if (!pml::cancel(&f->recv)) pml::wait(&f->recv);
      in_flight_done(&f->send);
      return MPI_SUCCESS;  // counted in net_error: the next flush raises it
    }
  }
  if (st != Status::kOk) {
    *error = "the request to rank " + std::to_string(target) + " of the window (on another node) " +
             "failed: " + status_string(st);
    return MPI_ERR_OTHER;
  }
  return MPI_SUCCESS;
}

int net_flush(Win* w, int target, std::string* error) {
  if (target >= 0) {
    progress::wait_until([w, target] { return w->in_flight[target] == 0; });
  } else {
    progress::wait_until([w] { return w->in_flight_total == 0; });
  }
  if (w->net_error == MPI_SUCCESS) return MPI_SUCCESS;
  const int rc = w->net_error;
  *error = w->net_error_text;
  w->net_error = MPI_SUCCESS;
  w->net_error_text.clear();
  return rc;
}

int net_signal(Win* w, int target, NetKind kind, std::string* error) {
  const pml::Comm& comm = *comm_impl(w->comm);
  Wire h{static_cast<uint32_t>(kind), 0, -1, -1, 0, 0, 0};
  std::vector<uint8_t> bytes(sizeof h);
  std::memcpy(bytes.data(), &h, sizeof h);
  if (send_owned(comm, target, kRequestTag, &bytes) != Status::kOk) {
    *error = "cannot reach rank " + std::to_string(target) + " of the window (on another node)";
    return MPI_ERR_OTHER;
  }
  return MPI_SUCCESS;
}

void net_open(Win* w) {
  auto s = std::make_unique<Served>();
  s->w = w;
  const pml::Comm& c = *comm_impl(w->comm);
  s->comm.context = c.context;
  s->comm.rank = c.rank;
  s->comm.size = c.size;
  s->comm.world_ranks = c.world_ranks;
  served().push_back(std::move(s));
  if (g_poll == 0) g_poll = progress::add(serve, nullptr);
  // Requests must be served while this process computes: the progress thread polls as long as
  // the window lives (and sleeps on the doorbell between requests).
  if (!progress::async()) progress::start_async();
  progress::add_work(1);
}

void net_close(Win* w) {
  auto& list = served();
  for (size_t i = 0; i < list.size(); ++i) {
    Served* s = list[i].get();
    if (s->w != w) continue;
    // Every request to this process was answered before its origin reached the last barrier;
    // signals (post, complete) were consumed. What is still here is served before it goes.
    progress::wait_until([s] {
      serve(nullptr);
      return s->in.empty();
    });
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
    break;
  }
  if (list.empty() && g_poll != 0) {
    progress::remove(g_poll);
    g_poll = 0;
  }
  progress::add_work(-1);
}

}  // namespace torusmpi::mpi
