// What the point-to-point and collective entry points share: argument checks that name the call
// and the argument, the MPI request and message objects, and MPI_Status filling.
#ifndef TORUSMPI_MPI_P2P_H_
#define TORUSMPI_MPI_P2P_H_

#include <climits>
#include <cstddef>

#include "coll/sched/exec.h"
#include "mpi/builtins.h"
#include "mpi/ompi_abi.h"
#include "mpi/runtime.h"
#include "pml/pml.h"

namespace torusmpi::mpi {

// The largest tag (the MPI_TAG_UB attribute).
constexpr int kTagUb = INT_MAX;

// A buffer of count elements of a predefined datatype, as the pml sees it: `bytes` on the wire.
// Types whose extent exceeds their size (MPI_DOUBLE_INT...) travel with their padding, so a
// contiguous buffer is one block; statuses count size bytes per element.
struct Buffer {
  void* buf = nullptr;
  size_t bytes = 0;
  int type_size = 1;
  int type_extent = 1;
};

// Each check returns MPI_SUCCESS, or raises the error on comm's handler and returns its class.
int check_comm(const char* fn, MPI_Comm comm, Comm** out);
int check_buffer(const char* fn, MPI_Comm comm, const void* buf, int count, MPI_Datatype type,
                 Buffer* out);
// A predefined datatype that carries data; `what` prefixes the argument's name in messages
// ("": datatype, "send": sendtype).
int check_type(const char* fn, MPI_Comm comm, MPI_Datatype type, const char* what,
               const BuiltinTypeInfo** out);
// dest: a rank of comm or MPI_PROC_NULL; source: also MPI_ANY_SOURCE.
int check_dest(const char* fn, MPI_Comm comm, const Comm& c, int dest);
int check_source(const char* fn, MPI_Comm comm, const Comm& c, int source);
// Send tags: 0..MPI_TAG_UB; receive tags: also MPI_ANY_TAG.
int check_send_tag(const char* fn, MPI_Comm comm, int tag);
int check_recv_tag(const char* fn, MPI_Comm comm, int tag);
int check_root(const char* fn, MPI_Comm comm, const Comm& c, int root);

// MPI_Status from a buffer's element size and what arrived.
void set_status(MPI_Status* st, int source, int tag, size_t bytes, const Buffer& b,
                bool cancelled);
void set_empty_status(MPI_Status* st);  // source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0
void set_proc_null_status(MPI_Status* st);  // source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0

// The MPI error class of a finished pml request, raising it (with a message naming the call, the
// peer and the sizes) on comm's handler; MPI_SUCCESS when it went well.
int request_error(const char* fn, MPI_Comm comm, const pml::Request& r, const Buffer& b);

// An MPI_Request: the handle object, and what it stands for.
struct Request {
  enum class Kind : uint8_t { kSend, kRecv, kBsend, kColl };
  ompi_request_t handle;  // MPI_Request is &handle; handle.impl == this
  Kind kind = Kind::kSend;
  bool persistent = false;
  bool active = true;      // persistent requests: started and not yet completed by a wait/test
  bool immediate = false;  // complete without the pml: MPI_PROC_NULL, buffered sends
  MPI_Comm comm = nullptr;
  Buffer buffer;
  pml::Request pml;
  coll::Exec* exec = nullptr;  // nonblocking collectives: the run
  const char* fn = nullptr;    // nonblocking collectives: the call, for messages
  // The arguments MPI_Start uses again (persistent requests).
  int peer = 0;
  int tag = 0;
  pml::SendMode mode = pml::SendMode::kStandard;

  Request() {
    handle.magic = kMagicRequest;
    handle.impl = this;
  }
  bool complete() const {
    return immediate || (exec != nullptr ? exec->done() : pml.done());
  }

  // Requests come from a free list: a window of nonblocking calls must not cost a malloc each.
  static Request* make();
  static void release(Request* r);
};

// The Request behind a handle; nullptr for MPI_REQUEST_NULL and for anything that is not one.
inline Request* request_impl(MPI_Request r) {
  return r != nullptr && r->magic == kMagicRequest ? static_cast<Request*>(r->impl) : nullptr;
}

// Starts a send or receive for req (fresh or persistent): MPI_PROC_NULL completes at once.
int start_request(const char* fn, Request* req);

// Buffered sends (bsend.cc): copies the message into the attached buffer and starts sending the
// copy; the caller's buffer is free on return.
int bsend(const char* fn, MPI_Comm comm, const Comm& c, const Buffer& b, int dest, int tag);

}  // namespace torusmpi::mpi

#endif  // TORUSMPI_MPI_P2P_H_
