// What the point-to-point and collective entry points share: argument checks that name the call
// and the argument, the MPI request and message objects, and MPI_Status filling.
#ifndef TORUSMPI_MPI_P2P_H_
#define TORUSMPI_MPI_P2P_H_

#include <climits>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "coll/sched/exec.h"
#include "dtype/dtype.h"
#include "mpi/builtins.h"
#include "mpi/device_stage.h"
#include "mpi/ompi_abi.h"
#include "mpi/runtime.h"
#include "pml/pml.h"

namespace torusmpi::mpi {

// The largest tag (the MPI_TAG_UB attribute).
constexpr int kTagUb = INT_MAX;

// The data of a message as the pml sees it: `bytes` bytes at `buf`.
//
// Point-to-point (check_message): the bytes are the packed stream of count elements of the
// datatype (count * size, in type-map order). When those elements are one contiguous block, buf
// points at it in the user's memory and nothing is copied. Otherwise the message is staged: `type`
// says how the elements lie from `user`, buf points at staging memory once the operation has some
// (stage_send, stage_recv), packed at send start and unpacked when a receive completes.
struct Buffer {
  void* buf = nullptr;
  size_t bytes = 0;
  // Staged messages only: the layout, its handle (for engine_type_ref), the element origin and the
  // element count in the user's memory.
  const dtype::Type* type = nullptr;
  MPI_Datatype datatype = nullptr;
  void* user = nullptr;
  int64_t count = 0;

  bool staged() const { return type != nullptr; }
};

// Each check returns MPI_SUCCESS, or raises the error on comm's handler and returns its class.
int check_comm(const char* fn, MPI_Comm comm, Comm** out);
// count elements of any committed datatype at buf, for point-to-point. `what` prefixes the
// arguments' names in messages ("": buf, count, datatype; "send": sendbuf, sendcount, sendtype).
int check_message_any(const char* fn, MPI_Comm comm, const void* buf, int count, MPI_Datatype type,
                      const char* what, Buffer* out);
// Inline for the usual message (a predefined datatype that tiles memory, host memory the rank has
// used before), which needs none of the rest: every small send and receive makes these checks.
inline int check_message(const char* fn, MPI_Comm comm, const void* buf, int count,
                         MPI_Datatype type, const char* what, Buffer* out) {
  const BuiltinTypeInfo* b = datatype_info(type);
  if (__builtin_expect(b != nullptr && count > 0 && buf != nullptr && b->size == b->extent &&
                           b->size != 0 && b->cls != TypeClass::kMarker,
                       1)) {
    const size_t bytes = static_cast<size_t>(count) * static_cast<size_t>(b->size);
    if (__builtin_expect(device::known_host(buf, bytes), 1)) {
      out->buf = const_cast<void*>(buf);
      out->bytes = bytes;
      return MPI_SUCCESS;
    }
  }
  return check_message_any(fn, comm, buf, count, type, what, out);
}
// The datatype argument of a call that moves data: a predefined one that carries data (*info;
// *t stays nullptr, the engine being asked only when a layout needs it) or a committed derived
// one (*t). `what` prefixes the argument's name in messages ("": datatype, "send": sendtype).
int check_any_datatype(const char* fn, MPI_Comm comm, MPI_Datatype type, const char* what,
                       const BuiltinTypeInfo** info, const dtype::Type** t);
inline int check_datatype(const char* fn, MPI_Comm comm, MPI_Datatype type, const char* what,
                          const BuiltinTypeInfo** info, const dtype::Type** t) {
  const BuiltinTypeInfo* b = datatype_info(type);
  if (__builtin_expect(b != nullptr && b->size != 0 && b->cls != TypeClass::kMarker, 1)) {
    *t = nullptr;
    *info = b;
    return MPI_SUCCESS;
  }
  return check_any_datatype(fn, comm, type, what, info, t);
}
// dest: a rank of comm or MPI_PROC_NULL; source: also MPI_ANY_SOURCE. Send tags: 0..MPI_TAG_UB;
// receive tags: also MPI_ANY_TAG. Inline, with the message out of line: every send and receive
// makes them.
int bad_rank(const char* fn, MPI_Comm comm, const Comm& c, const char* arg, int rank);
int bad_tag(const char* fn, MPI_Comm comm, int tag, bool send);
inline int check_dest(const char* fn, MPI_Comm comm, const Comm& c, int dest) {
  if (__builtin_expect(dest == MPI_PROC_NULL || (dest >= 0 && dest < c.peer_count()), 1))
    return MPI_SUCCESS;
  return bad_rank(fn, comm, c, "dest", dest);
}
inline int check_source(const char* fn, MPI_Comm comm, const Comm& c, int source) {
  if (__builtin_expect(source == MPI_ANY_SOURCE || source == MPI_PROC_NULL ||
                           (source >= 0 && source < c.peer_count()),
                       1))
    return MPI_SUCCESS;
  return bad_rank(fn, comm, c, "source", source);
}
inline int check_send_tag(const char* fn, MPI_Comm comm, int tag) {
  if (__builtin_expect(tag >= 0 && tag <= kTagUb, 1)) return MPI_SUCCESS;
  return bad_tag(fn, comm, tag, true);
}
inline int check_recv_tag(const char* fn, MPI_Comm comm, int tag) {
  if (__builtin_expect(tag == MPI_ANY_TAG || (tag >= 0 && tag <= kTagUb), 1)) return MPI_SUCCESS;
  return bad_tag(fn, comm, tag, false);
}
int check_root(const char* fn, MPI_Comm comm, const Comm& c, int root);

// MPI_Status of a receive: `bytes` of the packed stream arrived (MPI_Get_count and
// MPI_Get_elements divide them by the datatype they are given).
//
// None of them touches MPI_ERROR: MPI 3.1 (sections 3.2.5, 3.7.5) has only the calls that
// complete several requests set it, and only when they return MPI_ERR_IN_STATUS.
void set_status(MPI_Status* st, int source, int tag, size_t bytes, bool cancelled);
void set_empty_status(MPI_Status* st);      // source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0
void set_proc_null_status(MPI_Status* st);  // source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0

// The MPI error class of a finished pml request, raising it (with a message naming the call, the
// peer and the sizes) on comm's handler; MPI_SUCCESS when it went well.
int request_error(const char* fn, MPI_Comm comm, const pml::Request& r, const Buffer& b);

// An MPI_Request: the handle object, and what it stands for.
struct Request {
  enum class Kind : uint8_t { kSend, kRecv, kBsend, kColl, kGrequest };
  // Open MPI's Fortran MPI_GREQUEST_START (libmpi_mpifh) writes 0 at this offset of the request it
  // is given, once the C call returns: its ompi_grequest_t's greq_funcs_are_c, saying that the
  // callbacks are Fortran subroutines. Our handle is smaller, so the room after it takes the byte.
  static constexpr size_t kGrequestFuncsAreCAt = 0xc0;
  ompi_request_t handle;  // MPI_Request is &handle; handle.impl == this
  unsigned char grequest_abi_[kGrequestFuncsAreCAt + 8 - sizeof(ompi_request_t)];
  Kind kind = Kind::kSend;
  bool persistent = false;
  bool active = true;      // persistent requests: started and not yet completed by a wait/test
  bool immediate = false;  // complete without the pml: MPI_PROC_NULL, buffered sends
  MPI_Comm comm = nullptr;
  Buffer buffer;
  pml::Request pml;
  coll::Exec* exec = nullptr;  // nonblocking collectives: the run
  const char* fn = nullptr;    // nonblocking collectives: the call, for messages
  // Persistent collectives (MPIX_<coll>_init): starts the call's nonblocking form, and the derived
  // datatypes and user ops it names, kept alive until the request is freed.
  std::function<int(MPI_Request*)> start_coll;
  std::vector<MPI_Datatype> kept_types;
  std::vector<MPI_Op> kept_ops;
  Comm* kept_comm = nullptr;  // persistent requests: their communicator (comm_keep)
  // The arguments MPI_Start uses again (persistent requests).
  int peer = 0;
  int tag = 0;
  pml::SendMode mode = pml::SendMode::kStandard;
  // Staged sends and receives (buffer.staged()): the packed bytes, and the layout, kept alive
  // while the request exists (MPI_Type_free may come right after MPI_Isend). Persistent requests
  // reuse the memory at each start.
  StageMem staging;
  dtype::TypeRef type_ref;
  bool drained = false;  // a staged receive's data is unpacked (drain_request)
  // Generalized requests (MPI_Grequest_start): the application's callbacks and their argument.
  // gcomplete is set by MPI_Grequest_complete, possibly from another thread than the waiter's;
  // gfreed when MPI_Request_free let the handle go first (free_fn then runs at completion).
  MPI_Grequest_query_function* query_fn = nullptr;
  MPI_Grequest_free_function* free_fn = nullptr;
  MPI_Grequest_cancel_function* cancel_fn = nullptr;
  void* extra_state = nullptr;
  bool gcomplete = false;
  bool gfreed = false;
  // The library's own generalized requests (nonblocking collective file access): query_fn raises
  // its error itself, on the file's handler, where MPI says it belongs; it is not raised again.
  bool graises_own = false;
  bool shared = false;  // sent(): one object behind many handles, never released
  // The byte Open MPI's Fortran binding clears: 1 (set by MPI_Grequest_start) for C callbacks.
  // grequest_abi_ follows handle directly (a char array, handle's size a multiple of 8).
  unsigned char& grequest_funcs_are_c() {
    return grequest_abi_[kGrequestFuncsAreCAt - sizeof(ompi_request_t)];
  }

  Request() {
    handle.magic = kMagicRequest;
    handle.impl = this;
  }
  bool complete() const {
    if (kind == Kind::kGrequest) return __atomic_load_n(&gcomplete, __ATOMIC_ACQUIRE);
    return immediate || (exec != nullptr ? exec->done() : pml.done());
  }

  // Requests come from a free list: a window of nonblocking calls must not cost a malloc each.
  static Request* make();
  static void release(Request* r);  // nothing for sent()
  // The request of every operation that completed in its call (sends by pml::send_now, the RMA
  // request forms), as Open MPI's ob1 hands out its ompi_request_empty: complete, not cancelled,
  // an empty status. Waits and frees only read it.
  static Request* sent();
};

// The Request behind a handle; nullptr for MPI_REQUEST_NULL and for anything that is not one.
inline Request* request_impl(MPI_Request r) {
  return r != nullptr && r->magic == kMagicRequest ? static_cast<Request*>(r->impl) : nullptr;
}

// Starts a send or receive for req (fresh or persistent): MPI_PROC_NULL completes at once. A
// staged send packs the user's data first. A persistent collective's goes to start_persistent.
int start_request(const char* fn, Request* req);
// MPI_Start of a persistent collective's request (coll_call.cc: persistent_init made it).
int start_persistent(Request* r);
// A send or receive request whose message is staged gets its staging memory and keeps its type;
// nothing for other requests. Before the first start.
void stage_request(Request* req);
// A complete receive whose message is staged: unpacks what arrived into the user's buffer, once
// per start. Every path that sees such a request complete calls it before the user may look.
void drain_request(Request* req);

// Staged messages outside requests (blocking calls): memory of b->bytes in *mem, b->buf pointing
// at it; stage_send also packs the user's data into it.
void stage_send(Buffer* b, StageMem* mem);
void stage_recv(Buffer* b, StageMem* mem);
// Unpacks the first `received` bytes of b's packed stream (at b.buf) into the user's buffer.
void unpack_received(const Buffer& b, size_t received);

// Buffered sends (bsend.cc): copies the message (packs it, when staged) into the attached buffer
// and starts sending the copy; the caller's buffer is free on return.
int bsend(const char* fn, MPI_Comm comm, const Comm& c, const Buffer& b, int dest, int tag);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_P2P_H_
