// Point-to-point entry points: sends and receives in every mode, Sendrecv, probes and matched
// probes, and the argument checks they share with the collectives.
#include "mpi/p2p.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "core/progress.h"
#include "mpi/datatype.h"
#include "mpi/device_stage.h"
#include "mpi/errors.h"
#include "mpi/fortran.h"
#include "mpi/group.h"

namespace torusmpi::mpi {

int check_comm(const char* fn, MPI_Comm comm, Comm** out) {
  *out = comm_impl(comm);
  if (*out != nullptr) return MPI_SUCCESS;
  return raise_error(nullptr, MPI_ERR_COMM, fn, "comm argument is %s",
                     comm == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not a valid communicator");
}

int check_any_datatype(const char* fn, MPI_Comm comm, MPI_Datatype type, const char* what,
                       const BuiltinTypeInfo** info, const dtype::Type** t) {
  *t = nullptr;
  if ((*info = datatype_info(type)) != nullptr) {
    if ((*info)->size == 0 || (*info)->cls == TypeClass::kMarker) {
      return raise_error(comm, MPI_ERR_TYPE, fn, "%s%s %s cannot carry data in this build", what,
                         what[0] != '\0' ? "type" : "datatype", (*info)->name);
    }
    return MPI_SUCCESS;
  }
  char arg[16];
  std::snprintf(arg, sizeof arg, "%s%s", what, what[0] != '\0' ? "type" : "datatype");
  return check_data_type(fn, comm, type, arg, t);
}

int check_message_any(const char* fn, MPI_Comm comm, const void* buf, int count, MPI_Datatype type,
                      const char* what, Buffer* out) {
  if (count < 0) return raise_error(comm, MPI_ERR_COUNT, fn, "%scount argument is %d", what, count);
  const BuiltinTypeInfo* info = nullptr;
  const dtype::Type* t = nullptr;
  if (int err = check_datatype(fn, comm, type, what, &info, &t)) return err;
  if (info != nullptr) {
    // Predefined: whatever tiles memory (all but the pair types) is used in place without asking
    // the engine, so the usual message costs what it did before derived datatypes.
    out->bytes = static_cast<size_t>(count) * static_cast<size_t>(info->size);
    if (buf == nullptr && count > 0) {
      return raise_error(comm, MPI_ERR_BUFFER, fn, "%sbuf argument is NULL with %scount %d", what,
                         what, count);
    }
    if (count > 0) {
      const size_t span = static_cast<size_t>(count) * static_cast<size_t>(info->extent);
      if (int err = check_memory(fn, comm, what, "buf", buf, span)) return err;
    }
    if (info->size == info->extent) {
      out->buf = const_cast<void*>(buf);
      return MPI_SUCCESS;
    }
    t = engine_type(type);
  } else {
    int64_t bytes;
    if (__builtin_mul_overflow(static_cast<int64_t>(count), t->size(), &bytes)) {
      return raise_error(comm, MPI_ERR_COUNT, fn,
                         "%scount argument is %d: %d elements of %lld B do not fit in 63 bits",
                         what, count, count, static_cast<long long>(t->size()));
    }
    out->bytes = static_cast<size_t>(bytes);
    // A NULL buf is MPI_BOTTOM here: a derived datatype may hold absolute addresses.
    if (bytes > 0) {
      const char* lo;
      size_t span;
      type_span(*t, buf, count, &lo, &span);
      if (int err = check_memory(fn, comm, what, "buf", lo, span)) return err;
    }
  }
  int64_t offset = 0;
  if (t->contiguous(count, &offset)) {
    out->buf = reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(buf) + offset);
    return MPI_SUCCESS;
  }
  out->buf = nullptr;
  out->type = t;
  out->datatype = type;
  out->user = const_cast<void*>(buf);
  out->count = count;
  return MPI_SUCCESS;
}

// On an intercommunicator, dest and source are ranks of the remote group.
int bad_rank(const char* fn, MPI_Comm comm, const Comm& c, const char* arg, int rank) {
  return raise_error(comm, MPI_ERR_RANK, fn, "%s argument is %d, not a rank of %s%s (size %d)", arg,
                     rank, c.is_inter() ? "the remote group of " : "", c.label().c_str(),
                     c.peer_count());
}

int bad_tag(const char* fn, MPI_Comm comm, int tag, bool send) {
  return raise_error(comm, MPI_ERR_TAG, fn, "tag argument is %d (0..MPI_TAG_UB%s)", tag,
                     send ? " for sends" : " or MPI_ANY_TAG");
}

int check_root(const char* fn, MPI_Comm comm, const Comm& c, int root) {
  if (root >= 0 && root < c.size) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_ROOT, fn, "root argument is %d, not a rank of %s (size %d)",
                     root, c.name.c_str(), c.size);
}

void set_status(MPI_Status* st, int source, int tag, size_t bytes, bool cancelled) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = source;
  st->MPI_TAG = tag;
  st->_ucount = bytes;
  st->_cancelled = cancelled;
}

void set_empty_status(MPI_Status* st) {
  if (st == MPI_STATUS_IGNORE) return;
  st->MPI_SOURCE = MPI_ANY_SOURCE;
  st->MPI_TAG = MPI_ANY_TAG;
  st->_ucount = 0;
  st->_cancelled = 0;
}

void set_proc_null_status(MPI_Status* st) {
  set_empty_status(st);
  if (st != MPI_STATUS_IGNORE) st->MPI_SOURCE = MPI_PROC_NULL;
}

int request_error(const char* fn, MPI_Comm comm, const pml::Request& r, const Buffer& b) {
  switch (r.error) {
    case Status::kOk:
      return MPI_SUCCESS;
    case Status::kErrTruncate:
      return raise_error(comm, MPI_ERR_TRUNCATE, fn,
                         "message from rank %d with tag %d has %zu B, more than the %zu B of the "
                         "receive buffer (%zu B were received)",
                         r.source, r.tag, r.message_bytes, b.bytes, r.bytes);
    default:
      return raise_error(comm, error_class_of(r.error), fn, "%s with rank %d failed: %s",
                         r.kind_ == pml::Request::Kind::kSend ? "send" : "receive", r.peer_,
                         status_string(r.error));
  }
}

void stage_send(Buffer* b, StageMem* mem) {
  stage_recv(b, mem);
  pack_any(*b->type, b->user, b->count, b->buf);
}

void stage_recv(Buffer* b, StageMem* mem) {
  // Not zeroed: the pml writes what arrives, unpacking reads that.
  const bool on_device = b->staged() ? span_on_device(*b->type, b->user)
                                     : b->bytes > 0 && torusmpi::device::in_device_range(b->buf);
  b->buf = mem->make(b->bytes, on_device);
}

void unpack_received(const Buffer& b, size_t received) {
  if (received == 0) return;
  unpack_range_any(*b.type, b.buf, b.count, 0, static_cast<int64_t>(std::min(received, b.bytes)),
                   b.user);
}

void stage_request(Request* req) {
  if (!req->buffer.staged()) return;
  if (req->kind != Request::Kind::kSend && req->kind != Request::Kind::kRecv) return;
  req->type_ref = engine_type_ref(req->buffer.datatype);
  req->buffer.type = req->type_ref.get();
  stage_recv(&req->buffer, &req->staging);
}

void drain_request(Request* req) {
  if (req->kind != Request::Kind::kRecv || !req->buffer.staged() || req->drained || req->immediate)
    return;
  req->drained = true;
  if (!req->pml.cancelled) unpack_received(req->buffer, req->pml.bytes);
}

int start_request(const char* fn, Request* req) {
  if (req->kind == Request::Kind::kColl) return start_persistent(req);
  Comm* c = comm_impl(req->comm);
  req->active = true;
  req->drained = false;
  req->immediate = req->peer == MPI_PROC_NULL;
  if (req->immediate) return MPI_SUCCESS;
  flight::started(fn, c->context, c->name.c_str(), 0, static_cast<int64_t>(req->buffer.bytes),
                  c->flight_peer(req->peer));
  Status s = Status::kOk;
  switch (req->kind) {
    case Request::Kind::kSend:
      if (req->buffer.staged()) {
        pack_any(*req->buffer.type, req->buffer.user, req->buffer.count, req->buffer.buf);
      }
      s = pml::isend(*c, c->context, req->buffer.buf, req->buffer.bytes, req->peer, req->tag,
                     req->mode, &req->pml);
      break;
    case Request::Kind::kRecv:
      s = pml::irecv(*c, c->context, req->buffer.buf, req->buffer.bytes,
                     req->peer == MPI_ANY_SOURCE ? pml::kAnySource : req->peer,
                     req->tag == MPI_ANY_TAG ? pml::kAnyTag : req->tag, &req->pml);
      break;
    case Request::Kind::kBsend:
      req->immediate = true;  // done once copied
      return bsend(fn, req->comm, *c, req->buffer, req->peer, req->tag);
    case Request::Kind::kColl:  // start_persistent
    case Request::Kind::kGrequest:
      break;  // never persistent: started by its own call
  }
  if (s != Status::kOk) {
    return raise_error(req->comm, error_class_of(s), fn, "rank %d cannot be reached: %s", req->peer,
                       status_string(s));
  }
  return MPI_SUCCESS;
}

}  // namespace torusmpi::mpi

using torusmpi::mpi::Buffer;
using torusmpi::mpi::Comm;
using torusmpi::mpi::raise_error;
using torusmpi::mpi::Request;
using torusmpi::mpi::require_active;
using torusmpi::mpi::StageMem;
namespace mpi = torusmpi::mpi;
namespace pml = torusmpi::pml;

namespace {

// The helpers of the send and receive entry points are inlined into each of them (always_inline):
// as calls, passing their nine arguments and a Buffer on cost an MPI_Isend or MPI_Irecv about 170
// instructions of its 600 (callgrind, osu_bw's window of 8 B messages).

// The checks every send makes, in the order MPI lists its arguments.
// `what` prefixes the buffer arguments' names ("send": sendbuf, sendcount, sendtype).
[[gnu::always_inline]] inline int check_send(const char* fn, const void* buf, int count,
                                             MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                                             Comm** c, Buffer* b, const char* what = "") {
  if (int err = require_active(fn)) return err;
  if (int err = mpi::check_comm(fn, comm, c)) return err;
  if (int err = mpi::check_message(fn, comm, buf, count, type, what, b)) return err;
  if (int err = mpi::check_dest(fn, comm, **c, dest)) return err;
  return mpi::check_send_tag(fn, comm, tag);
}

[[gnu::always_inline]] inline int check_recv(const char* fn, void* buf, int count,
                                             MPI_Datatype type, int source, int tag, MPI_Comm comm,
                                             Comm** c, Buffer* b, const char* what = "") {
  if (int err = require_active(fn)) return err;
  if (int err = mpi::check_comm(fn, comm, c)) return err;
  if (int err = mpi::check_message(fn, comm, buf, count, type, what, b)) return err;
  if (int err = mpi::check_source(fn, comm, **c, source)) return err;
  return mpi::check_recv_tag(fn, comm, tag);
}

int source_of(int source) { return source == MPI_ANY_SOURCE ? pml::kAnySource : source; }
int tag_of(int tag) { return tag == MPI_ANY_TAG ? pml::kAnyTag : tag; }

int unreachable(const char* fn, MPI_Comm comm, int peer, torusmpi::Status s) {
  return raise_error(comm, mpi::error_class_of(s), fn, "rank %d cannot be reached: %s", peer,
                     torusmpi::status_string(s));
}

// A blocking send in any mode but buffered.
int blocking_send(const char* fn, const void* buf, int count, MPI_Datatype type, int dest, int tag,
                  MPI_Comm comm, pml::SendMode mode) {
  Comm* c;
  Buffer b;
  if (int err = check_send(fn, buf, count, type, dest, tag, comm, &c, &b)) return err;
  if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
  const auto bytes = static_cast<int64_t>(b.bytes);
  if (mode == pml::SendMode::kStandard && !b.staged() &&
      pml::send_now(*c, c->context, b.buf, b.bytes, dest, tag)) {
    // Taken by the transport at once: recorded done, once the message is on its way.
    torusmpi::flight::done(fn, c->context, c->name.c_str(), 0, bytes, c->flight_peer(dest));
    return MPI_SUCCESS;
  }
  torusmpi::flight::Scope record(fn, c->context, c->name.c_str(), 0, bytes, c->flight_peer(dest));
  StageMem staging;
  if (b.staged()) mpi::stage_send(&b, &staging);
  pml::Request req;
  torusmpi::Status s = pml::isend(*c, c->context, b.buf, b.bytes, dest, tag, mode, &req);
  if (s != torusmpi::Status::kOk) return unreachable(fn, comm, dest, s);
  pml::wait(&req);
  return mpi::request_error(fn, comm, req, b);
}

// A nonblocking send or receive, or a persistent one (not started).
[[gnu::always_inline]] inline int make_request(const char* fn, Request::Kind kind, const Buffer& b,
                                               int peer, int tag, MPI_Comm comm, pml::SendMode mode,
                                               bool persistent, MPI_Request* request) {
  if (request == nullptr) return raise_error(comm, MPI_ERR_ARG, fn, "request argument is NULL");
  auto* req = Request::make();
  req->kind = kind;
  req->comm = comm;
  req->buffer = b;
  req->peer = peer;
  req->tag = tag;
  req->mode = mode;
  req->persistent = persistent;
  req->active = !persistent;
  if (b.staged()) mpi::stage_request(req);
  *request = &req->handle;
  if (persistent) {
    req->kept_comm = mpi::comm_impl(comm);
    if (req->kept_comm != nullptr) mpi::comm_keep(req->kept_comm);
    return MPI_SUCCESS;
  }
  int err = mpi::start_request(fn, req);
  if (err != MPI_SUCCESS) {
    Request::release(req);
    *request = MPI_REQUEST_NULL;
  }
  return err;
}

[[gnu::always_inline]] inline int nonblocking_send(const char* fn, const void* buf, int count,
                                                   MPI_Datatype type, int dest, int tag,
                                                   MPI_Comm comm, pml::SendMode mode,
                                                   bool persistent, MPI_Request* request) {
  Comm* c;
  Buffer b;
  if (int err = check_send(fn, buf, count, type, dest, tag, comm, &c, &b)) return err;
  // A small message that the transport takes now needs no request of its own: the window of
  // sends that osu_bw times is mostly this.
  if (mode == pml::SendMode::kStandard && !persistent && !b.staged() && request != nullptr &&
      dest != MPI_PROC_NULL && pml::send_now(*c, c->context, b.buf, b.bytes, dest, tag)) {
    torusmpi::flight::started(fn, c->context, c->name.c_str(), 0, static_cast<int64_t>(b.bytes),
                              c->flight_peer(dest));
    *request = &Request::sent()->handle;
    return MPI_SUCCESS;
  }
  return make_request(fn, Request::Kind::kSend, b, dest, tag, comm, mode, persistent, request);
}

[[gnu::always_inline]] inline int nonblocking_recv(const char* fn, void* buf, int count,
                                                   MPI_Datatype type, int source, int tag,
                                                   MPI_Comm comm, bool persistent,
                                                   MPI_Request* request) {
  Comm* c;
  Buffer b;
  if (int err = check_recv(fn, buf, count, type, source, tag, comm, &c, &b)) return err;
  return make_request(fn, Request::Kind::kRecv, b, source, tag, comm, pml::SendMode::kStandard,
                      persistent, request);
}

// Receives into b and waits (unpacking what arrived when staged); fills status.
int blocking_recv(const char* fn, MPI_Comm comm, const Comm& c, Buffer b, int source, int tag,
                  MPI_Status* status) {
  if (source == MPI_PROC_NULL) {
    mpi::set_proc_null_status(status);
    return MPI_SUCCESS;
  }
  StageMem staging;
  if (b.staged()) mpi::stage_recv(&b, &staging);
  pml::Request req;
  torusmpi::Status s =
      pml::irecv(c, c.context, b.buf, b.bytes, source_of(source), tag_of(tag), &req);
  // A message that had come is recorded done at once; a receive that waits, from before it does.
  const auto bytes = static_cast<int64_t>(b.bytes);
  torusmpi::flight::Scope record;
  record.open(fn, c.context, c.name.c_str(), 0, bytes, c.flight_peer(source),
              s == torusmpi::Status::kOk && req.done());
  if (s != torusmpi::Status::kOk) {
    record.finish(torusmpi::flight::State::kFailed);
    return unreachable(fn, comm, source, s);
  }
  pml::wait(&req);
  if (b.staged()) mpi::unpack_received(b, req.bytes);
  mpi::set_status(status, req.source, req.tag, req.bytes, false);
  return mpi::request_error(fn, comm, req, b);
}

// The message objects of MPI_Mprobe/MPI_Improbe.
struct MessageObj {
  ompi_message_t handle;
  pml::Message* msg;
  MPI_Comm comm;
};

int probe(const char* fn, int source, int tag, MPI_Comm comm, bool block, bool take, int* flag,
          MPI_Message* message, MPI_Status* status) {
  Comm* c;
  if (int err = require_active(fn)) return err;
  if (int err = mpi::check_comm(fn, comm, &c)) return err;
  if (int err = mpi::check_source(fn, comm, *c, source)) return err;
  if (int err = mpi::check_recv_tag(fn, comm, tag)) return err;
  if (!block && flag == nullptr) return raise_error(comm, MPI_ERR_ARG, fn, "flag argument is NULL");
  if (take && message == nullptr)
    return raise_error(comm, MPI_ERR_ARG, fn, "message argument is NULL");
  if (source == MPI_PROC_NULL) {
    if (flag != nullptr) *flag = 1;
    if (take) *message = MPI_MESSAGE_NO_PROC;
    mpi::set_proc_null_status(status);
    return MPI_SUCCESS;
  }
  pml::ProbeInfo info;
  pml::Message* msg = nullptr;
  auto look = [&] {
    return take ? pml::improbe(*c, c->context, source_of(source), tag_of(tag), &info, &msg)
                : pml::iprobe(*c, c->context, source_of(source), tag_of(tag), &info);
  };
  bool found = look();
  if (!found && block) {
    torusmpi::flight::Scope record(fn, c->context, c->name.c_str(), 0, -1, c->flight_peer(source));
    torusmpi::progress::wait_until(look);
  }
  found = found || block;
  if (flag != nullptr) *flag = found;
  if (!found) return MPI_SUCCESS;
  mpi::set_status(status, info.source, info.tag, info.bytes, false);
  if (take) {
    auto* obj = new MessageObj{{mpi::kMagicMessage, nullptr}, msg, comm};
    obj->handle.impl = obj;
    *message = &obj->handle;
  }
  return MPI_SUCCESS;
}

MessageObj* message_impl(MPI_Message m) {
  if (m == nullptr || m->magic != mpi::kMagicMessage || m == MPI_MESSAGE_NULL ||
      m == MPI_MESSAGE_NO_PROC)
    return nullptr;
  return static_cast<MessageObj*>(m->impl);
}

}  // namespace

int PMPI_Send(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return blocking_send("MPI_Send", buf, count, datatype, dest, tag, comm, pml::SendMode::kStandard);
}
TORUSMPI_WEAK_ALIAS(MPI_Send);

// A ready send may be sent as a standard one: the receive is posted, so nothing is gained by
// skipping the protocol.
int PMPI_Rsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return blocking_send("MPI_Rsend", buf, count, datatype, dest, tag, comm,
                       pml::SendMode::kStandard);
}
TORUSMPI_WEAK_ALIAS(MPI_Rsend);

int PMPI_Ssend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return blocking_send("MPI_Ssend", buf, count, datatype, dest, tag, comm, pml::SendMode::kSync);
}
TORUSMPI_WEAK_ALIAS(MPI_Ssend);

int PMPI_Bsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
               MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Bsend";
  Comm* c;
  Buffer b;
  if (int err = check_send(kFn, buf, count, datatype, dest, tag, comm, &c, &b)) return err;
  if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
  return mpi::bsend(kFn, comm, *c, b, dest, tag);
}
TORUSMPI_WEAK_ALIAS(MPI_Bsend);

int PMPI_Isend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
               MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return nonblocking_send("MPI_Isend", buf, count, datatype, dest, tag, comm,
                          pml::SendMode::kStandard, false, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Isend);

int PMPI_Irsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return nonblocking_send("MPI_Irsend", buf, count, datatype, dest, tag, comm,
                          pml::SendMode::kStandard, false, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Irsend);

int PMPI_Issend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return nonblocking_send("MPI_Issend", buf, count, datatype, dest, tag, comm, pml::SendMode::kSync,
                          false, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Issend);

// MPI_Ibsend's request is complete once the message is copied: that is when the buffer is free.
int PMPI_Ibsend(const void* buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                MPI_Request* request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Ibsend";
  Comm* c;
  Buffer b;
  if (int err = check_send(kFn, buf, count, datatype, dest, tag, comm, &c, &b)) return err;
  if (request == nullptr) return raise_error(comm, MPI_ERR_ARG, kFn, "request argument is NULL");
  if (dest != MPI_PROC_NULL) {
    if (int err = mpi::bsend(kFn, comm, *c, b, dest, tag)) return err;
  }
  auto* req = Request::make();
  req->kind = Request::Kind::kBsend;
  req->immediate = true;
  req->comm = comm;
  req->buffer = b;
  req->peer = dest;
  *request = &req->handle;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Ibsend);

int PMPI_Send_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                   MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return nonblocking_send("MPI_Send_init", buf, count, datatype, dest, tag, comm,
                          pml::SendMode::kStandard, true, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Send_init);

int PMPI_Rsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return nonblocking_send("MPI_Rsend_init", buf, count, datatype, dest, tag, comm,
                          pml::SendMode::kStandard, true, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Rsend_init);

int PMPI_Ssend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return nonblocking_send("MPI_Ssend_init", buf, count, datatype, dest, tag, comm,
                          pml::SendMode::kSync, true, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ssend_init);

int PMPI_Bsend_init(const void* buf, int count, MPI_Datatype datatype, int dest, int tag,
                    MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Bsend_init";
  Comm* c;
  Buffer b;
  if (int err = check_send(kFn, buf, count, datatype, dest, tag, comm, &c, &b)) return err;
  return make_request(kFn, Request::Kind::kBsend, b, dest, tag, comm, pml::SendMode::kStandard,
                      true, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Bsend_init);

int PMPI_Recv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status* status) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Recv";
  Comm* c;
  Buffer b;
  if (int err = check_recv(kFn, buf, count, datatype, source, tag, comm, &c, &b)) return err;
  return blocking_recv(kFn, comm, *c, b, source, tag, status);
}
TORUSMPI_WEAK_ALIAS(MPI_Recv);

int PMPI_Irecv(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return nonblocking_recv("MPI_Irecv", buf, count, datatype, source, tag, comm, false, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Irecv);

int PMPI_Recv_init(void* buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return nonblocking_recv("MPI_Recv_init", buf, count, datatype, source, tag, comm, true, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Recv_init);

int PMPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status* status) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Sendrecv";
  Comm* c;
  Buffer sb, rb;
  if (int err = check_send(kFn, sendbuf, sendcount, sendtype, dest, sendtag, comm, &c, &sb, "send"))
    return err;
  if (int err =
          check_recv(kFn, recvbuf, recvcount, recvtype, source, recvtag, comm, &c, &rb, "recv"))
    return err;
  StageMem staging;
  pml::Request send;
  if (dest != MPI_PROC_NULL) {
    if (sb.staged()) mpi::stage_send(&sb, &staging);
    torusmpi::Status s = pml::isend(*c, c->context, sb.buf, sb.bytes, dest, sendtag,
                                    pml::SendMode::kStandard, &send);
    if (s != torusmpi::Status::kOk) return unreachable(kFn, comm, dest, s);
  }
  int err = blocking_recv(kFn, comm, *c, rb, source, recvtag, status);
  if (dest != MPI_PROC_NULL) {
    pml::wait(&send);
    if (err == MPI_SUCCESS) err = mpi::request_error(kFn, comm, send, sb);
  }
  return err;
}
TORUSMPI_WEAK_ALIAS(MPI_Sendrecv);

int PMPI_Sendrecv_replace(void* buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Sendrecv_replace";
  Comm* c;
  Buffer b;
  if (int err = check_send(kFn, buf, count, datatype, dest, sendtag, comm, &c, &b)) return err;
  if (int err = check_recv(kFn, buf, count, datatype, source, recvtag, comm, &c, &b)) return err;
  // The message in comes into packed scratch while the one out still reads buf (or its packed
  // copy); buf takes what arrived once both are done.
  StageMem out_staging;
  Buffer out = b;
  pml::Request send;
  if (dest != MPI_PROC_NULL) {
    if (out.staged()) mpi::stage_send(&out, &out_staging);
    torusmpi::Status s = pml::isend(*c, c->context, out.buf, out.bytes, dest, sendtag,
                                    pml::SendMode::kStandard, &send);
    if (s != torusmpi::Status::kOk) return unreachable(kFn, comm, dest, s);
  }
  Buffer in = b;
  StageMem scratch;  // on the device for device data: HBM to HBM, like the rest
  pml::Request recv;
  torusmpi::Status posted = torusmpi::Status::kOk;
  if (source != MPI_PROC_NULL) {
    mpi::stage_recv(&in, &scratch);
    posted =
        pml::irecv(*c, c->context, in.buf, in.bytes, source_of(source), tag_of(recvtag), &recv);
    if (posted == torusmpi::Status::kOk) pml::wait(&recv);
  }
  if (dest != MPI_PROC_NULL) pml::wait(&send);
  size_t received = source != MPI_PROC_NULL && posted == torusmpi::Status::kOk ? recv.bytes : 0;
  if (received > 0) {
    if (b.staged()) {
      mpi::unpack_received(in, received);
    } else {
      torusmpi::device::copy(b.buf, in.buf, std::min(received, b.bytes));
    }
  }
  int err = MPI_SUCCESS;
  if (source == MPI_PROC_NULL) {
    mpi::set_proc_null_status(status);
  } else if (posted != torusmpi::Status::kOk) {
    err = unreachable(kFn, comm, source, posted);
  } else {
    mpi::set_status(status, recv.source, recv.tag, recv.bytes, false);
    err = mpi::request_error(kFn, comm, recv, b);
  }
  if (dest != MPI_PROC_NULL && err == MPI_SUCCESS) err = mpi::request_error(kFn, comm, send, out);
  return err;
}
TORUSMPI_WEAK_ALIAS(MPI_Sendrecv_replace);

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  torusmpi::progress::Lock lock;
  return probe("MPI_Probe", source, tag, comm, true, false, nullptr, nullptr, status);
}
TORUSMPI_WEAK_ALIAS(MPI_Probe);

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  torusmpi::progress::Lock lock;
  return probe("MPI_Iprobe", source, tag, comm, false, false, flag, nullptr, status);
}
TORUSMPI_WEAK_ALIAS(MPI_Iprobe);

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  torusmpi::progress::Lock lock;
  return probe("MPI_Mprobe", source, tag, comm, true, true, nullptr, message, status);
}
TORUSMPI_WEAK_ALIAS(MPI_Mprobe);

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message,
                 MPI_Status* status) {
  torusmpi::progress::Lock lock;
  return probe("MPI_Improbe", source, tag, comm, false, true, flag, message, status);
}
TORUSMPI_WEAK_ALIAS(MPI_Improbe);

namespace {

// MPI_Mrecv and MPI_Imrecv: receive the probed message into buf through req (a fresh request).
int matched_recv(const char* fn, void* buf, int count, MPI_Datatype type, MPI_Message* message,
                 Request* req, MPI_Comm* comm_out) {
  if (int err = require_active(fn)) return err;
  if (message == nullptr) return raise_error(nullptr, MPI_ERR_ARG, fn, "message argument is NULL");
  if (*message == MPI_MESSAGE_NO_PROC) {
    Buffer b;
    if (int err = mpi::check_message(fn, MPI_COMM_WORLD, buf, count, type, "", &b)) return err;
    req->kind = Request::Kind::kRecv;
    req->immediate = true;
    req->peer = MPI_PROC_NULL;
    req->buffer = b;
    *comm_out = MPI_COMM_WORLD;
    *message = MPI_MESSAGE_NULL;
    return MPI_SUCCESS;
  }
  MessageObj* m = message_impl(*message);
  if (m == nullptr) {
    return raise_error(nullptr, MPI_ERR_REQUEST, fn, "message argument is %s",
                       *message == MPI_MESSAGE_NULL ? "MPI_MESSAGE_NULL"
                                                    : "not a message from MPI_Mprobe/MPI_Improbe");
  }
  Buffer b;
  if (int err = mpi::check_message(fn, m->comm, buf, count, type, "", &b)) return err;
  req->kind = Request::Kind::kRecv;
  req->comm = m->comm;
  req->buffer = b;
  if (b.staged()) mpi::stage_request(req);
  *comm_out = m->comm;
  pml::mrecv(m->msg, req->buffer.buf, req->buffer.bytes, &req->pml);
  m->handle.magic = mpi::kMagicFreed;
  mpi::fortran_forget(mpi::HandleKind::kMessage, &m->handle);
  delete m;
  *message = MPI_MESSAGE_NULL;
  return MPI_SUCCESS;
}

}  // namespace

int PMPI_Mrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
               MPI_Status* status) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Mrecv";
  Request req;
  MPI_Comm comm = MPI_COMM_WORLD;
  if (int err = matched_recv(kFn, buf, count, datatype, message, &req, &comm)) return err;
  if (req.immediate) {
    mpi::set_proc_null_status(status);
    return MPI_SUCCESS;
  }
  pml::wait(&req.pml);
  mpi::drain_request(&req);
  mpi::set_status(status, req.pml.source, req.pml.tag, req.pml.bytes, false);
  return mpi::request_error(kFn, comm, req.pml, req.buffer);
}
TORUSMPI_WEAK_ALIAS(MPI_Mrecv);

int PMPI_Imrecv(void* buf, int count, MPI_Datatype datatype, MPI_Message* message,
                MPI_Request* request) {
  torusmpi::progress::Lock lock;
  constexpr const char* kFn = "MPI_Imrecv";
  if (request == nullptr) return raise_error(nullptr, MPI_ERR_ARG, kFn, "request argument is NULL");
  auto* req = Request::make();
  MPI_Comm comm = MPI_COMM_WORLD;
  if (int err = matched_recv(kFn, buf, count, datatype, message, req, &comm)) {
    Request::release(req);
    return err;
  }
  req->comm = comm;
  *request = &req->handle;
  return MPI_SUCCESS;
}
TORUSMPI_WEAK_ALIAS(MPI_Imrecv);
