// Collective entry points: every blocking collective and its nonblocking MPI_I form, from one
// implementation each (request == nullptr: blocking). Each checks its arguments (naming the call
// and the argument), turns them into the engine's shape of the call (coll::Args: element counts
// and symbolic buffers) and hands it to the communicator's team, which selects, builds (both
// cached) and runs the schedule. Data that only moves travels as bytes (elem = 1); reductions
// move whole elements of the datatype's extent. A call on an intercommunicator goes to
// intercomm.cc right after the communicator check: its roots and buffers mean other things.
#include <vector>

#include "coll/team.h"
#include "mpi/errors.h"
#include "mpi/group.h"
#include "mpi/p2p.h"
#include "mpi/reduction.h"

namespace torusmpi::mpi {
namespace {

using coll::Args;
using coll::Coll;
using coll::RunArgs;

// A call on its way to the engine; the arrays of vector collectives (in elements) live here
// until the schedule is built, which happens before the call returns, blocking or not.
struct Call {
  Args a;
  RunArgs r;
  std::vector<size_t> arrays[4];

  const size_t* keep(int i, std::vector<size_t> v) {
    arrays[i] = std::move(v);
    return arrays[i].data();
  }
};

int coll_failed(const char* fn, MPI_Comm comm, Status s, const std::string& why) {
  if (!why.empty()) return raise_error(comm, MPI_ERR_UNSUPPORTED_OPERATION, fn, "%s", why.c_str());
  return raise_error(comm, error_class_of(s), fn, "failed: %s", status_string(s));
}

void request_done(coll::Exec*, void*) {}

// Runs the call, or starts it and makes *request.
int execute(const char* fn, MPI_Comm comm, Comm* c, Call& call, MPI_Request* request) {
  std::string why;
  if (request == nullptr) {
    Status s = c->team.run(call.a, call.r, &why);
    return s == Status::kOk ? MPI_SUCCESS : coll_failed(fn, comm, s, why);
  }
  coll::Exec* e = nullptr;
  Status s = c->team.start(call.a, call.r, &e, &why);
  if (s != Status::kOk) return coll_failed(fn, comm, s, why);
  Request* req = Request::make();
  req->kind = Request::Kind::kColl;
  req->comm = comm;
  req->exec = e;
  req->fn = fn;
  e->set_on_complete(request_done, nullptr);
  e->start_nonblocking();
  *request = &req->handle;
  return MPI_SUCCESS;
}

// The checks every collective starts with: MPI is up, comm is one, request (nonblocking) is there.
int check_start(const char* fn, MPI_Comm comm, MPI_Request* request, bool nonblocking,
                Comm** c) {
  if (int err = require_active(fn)) return err;
  if (int err = check_comm(fn, comm, c)) return err;
  if (nonblocking && request == nullptr)
    return raise_error(comm, MPI_ERR_REQUEST, fn, "request argument is NULL");
  return MPI_SUCCESS;
}

// count elements of type, as bytes on the wire (count * extent); `what` ("send", "recv") names
// the arguments in messages.
int check_data(const char* fn, MPI_Comm comm, const char* what, int count, MPI_Datatype type,
               Buffer* b) {
  if (count < 0) return raise_error(comm, MPI_ERR_COUNT, fn, "%scount argument is %d", what, count);
  const BuiltinTypeInfo* info = nullptr;
  if (int err = check_type(fn, comm, type, what, &info)) return err;
  b->bytes = static_cast<size_t>(count) * static_cast<size_t>(info->extent);
  b->type_size = info->size;
  b->type_extent = info->extent;
  return MPI_SUCCESS;
}

// A send and a receive description of one block must move the same bytes.
int check_same(const char* fn, MPI_Comm comm, const Buffer& s, const Buffer& r) {
  if (s.bytes == r.bytes) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_TRUNCATE, fn,
                     "sendcount and sendtype give %zu B, recvcount and recvtype %zu B: a "
                     "collective's send and receive blocks must match",
                     s.bytes, r.bytes);
}

// A reduction's datatype and op: the kernel and the element size.
int check_reduction(const char* fn, MPI_Comm comm, int count, MPI_Datatype type, MPI_Op op,
                    Call* call) {
  Buffer probe;
  if (int err = check_data(fn, comm, "", count, type, &probe)) return err;
  if (int err = resolve_reduction(fn, comm, op, type, &call->r.reduce, &call->a.commutative))
    return err;
  call->a.count = static_cast<size_t>(count);
  call->a.elem = static_cast<size_t>(probe.type_extent);
  call->r.elem = call->a.elem;
  return MPI_SUCCESS;
}

int check_nonnull(const char* fn, MPI_Comm comm, const void* p, const char* what, size_t bytes) {
  if (p != nullptr || bytes == 0) return MPI_SUCCESS;
  return raise_error(comm, MPI_ERR_BUFFER, fn, "%s argument is NULL with %zu B to move", what,
                     bytes);
}

// An array argument of p ints (counts, displacements): present, and counts not negative.
int check_ints(const char* fn, MPI_Comm comm, const int* v, int p, const char* what,
               bool counts) {
  if (v == nullptr && p > 0) return raise_error(comm, MPI_ERR_ARG, fn, "%s argument is NULL", what);
  for (int i = 0; counts && i < p; ++i) {
    if (v[i] < 0) return raise_error(comm, MPI_ERR_COUNT, fn, "%s[%d] is %d", what, i, v[i]);
  }
  return MPI_SUCCESS;
}

std::vector<size_t> scaled(const int* v, int p, size_t unit) {
  std::vector<size_t> out(p);
  for (int i = 0; i < p; ++i) out[i] = static_cast<size_t>(v[i]) * unit;
  return out;
}

size_t extent_of(MPI_Datatype type) { return static_cast<size_t>(datatype_info(type)->extent); }

// --- The collectives, one implementation each.

int barrier(const char* fn, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  if (int err = check_start(fn, comm, request, fn[4] == 'I', &c)) return err;
  if (c->is_inter()) return inter_barrier(fn, comm, c, request);
  Call call;
  call.a.coll = Coll::kBarrier;
  return execute(fn, comm, c, call, request);
}

int bcast(const char* fn, void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
          MPI_Request* request) {
  Comm* c;
  Buffer b;
  if (int err = check_start(fn, comm, request, fn[4] == 'I', &c)) return err;
  if (c->is_inter()) return inter_bcast(fn, buffer, count, type, root, comm, c, request);
  if (int err = check_data(fn, comm, "", count, type, &b)) return err;
  if (int err = check_nonnull(fn, comm, buffer, "buffer", b.bytes)) return err;
  if (int err = check_root(fn, comm, *c, root)) return err;
  Call call;
  call.a.coll = Coll::kBcast;
  call.a.root = root;
  call.a.count = b.bytes;
  call.r.recv = buffer;
  return execute(fn, comm, c, call, request);
}

// reduce, allreduce, scan, exscan: a vector of count elements; MPI_IN_PLACE puts it in recvbuf
// (reduce: at the root only).
int reduction(const char* fn, Coll kind, const void* sendbuf, void* recvbuf, int count,
              MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  if (int err = check_start(fn, comm, request, fn[4] == 'I', &c)) return err;
  if (c->is_inter()) {
    if (kind == Coll::kScan || kind == Coll::kExscan) {
      return raise_error(comm, MPI_ERR_COMM, fn,
                         "comm argument is an intercommunicator: MPI defines scans on "
                         "intracommunicators only");
    }
    return inter_reduce(fn, kind, sendbuf, recvbuf, count, type, op, root, comm, c, request);
  }
  Call call;
  if (int err = check_reduction(fn, comm, count, type, op, &call)) return err;
  bool rooted = kind == Coll::kReduce;
  if (rooted) {
    if (int err = check_root(fn, comm, *c, root)) return err;
  }
  bool has_recv = !rooted || c->rank == root;
  bool in_place = sendbuf == MPI_IN_PLACE;
  if (in_place && !has_recv) {
    return raise_error(comm, MPI_ERR_BUFFER, fn,
                       "sendbuf is MPI_IN_PLACE on rank %d, which is not the root (%d)", c->rank,
                       root);
  }
  size_t bytes = call.a.count * call.a.elem;
  if (!in_place) {
    if (int err = check_nonnull(fn, comm, sendbuf, "sendbuf", bytes)) return err;
  }
  if (has_recv) {
    if (int err = check_nonnull(fn, comm, recvbuf, "recvbuf", bytes)) return err;
  }
  call.a.coll = kind;
  call.a.root = rooted ? root : 0;
  call.a.in_place = in_place;
  call.r.send = in_place ? nullptr : sendbuf;
  call.r.recv = has_recv ? recvbuf : nullptr;
  return execute(fn, comm, c, call, request);
}

// allgather, alltoall: blocks of recvcount * recvtype; MPI_IN_PLACE: the data is in recvbuf.
int block_exchange(const char* fn, Coll kind, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  Buffer s, r;
  if (int err = check_start(fn, comm, request, fn[4] == 'I', &c)) return err;
  if (c->is_inter()) {
    return inter_exchange(fn, kind, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                          comm, c, request);
  }
  bool in_place = sendbuf == MPI_IN_PLACE;
  if (int err = check_data(fn, comm, "recv", recvcount, recvtype, &r)) return err;
  if (!in_place) {
    if (int err = check_data(fn, comm, "send", sendcount, sendtype, &s)) return err;
    if (int err = check_same(fn, comm, s, r)) return err;
  }
  size_t total = r.bytes * c->size;
  if (int err = check_nonnull(fn, comm, recvbuf, "recvbuf", total)) return err;
  if (!in_place) {
    size_t sent = kind == Coll::kAlltoall ? total : r.bytes;
    if (int err = check_nonnull(fn, comm, sendbuf, "sendbuf", sent)) return err;
  }
  Call call;
  call.a.coll = kind;
  call.a.in_place = in_place;
  call.a.count = r.bytes;
  call.r.send = in_place ? nullptr : sendbuf;
  call.r.recv = recvbuf;
  return execute(fn, comm, c, call, request);
}

int allgatherv(const char* fn, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, const int* recvcounts, const int* displs, MPI_Datatype recvtype,
               MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  Buffer s, r;
  if (int err = check_start(fn, comm, request, fn[4] == 'I', &c)) return err;
  if (c->is_inter()) return inter_unsupported(fn, comm);
  bool in_place = sendbuf == MPI_IN_PLACE;
  if (int err = check_data(fn, comm, "recv", 0, recvtype, &r)) return err;
  if (int err = check_ints(fn, comm, recvcounts, c->size, "recvcounts", true)) return err;
  if (int err = check_ints(fn, comm, displs, c->size, "displs", false)) return err;
  size_t ext = extent_of(recvtype);
  if (!in_place) {
    if (int err = check_data(fn, comm, "send", sendcount, sendtype, &s)) return err;
    r.bytes = recvcounts[c->rank] * ext;
    if (int err = check_same(fn, comm, s, r)) return err;
  }
  Call call;
  call.a.coll = Coll::kAllgatherv;
  call.a.in_place = in_place;
  call.a.counts = call.keep(0, scaled(recvcounts, c->size, ext));
  call.a.displs = call.keep(1, scaled(displs, c->size, ext));
  call.r.send = in_place ? nullptr : sendbuf;
  call.r.recv = recvbuf;
  return execute(fn, comm, c, call, request);
}

int reduce_scatter(const char* fn, const void* sendbuf, void* recvbuf, const int* recvcounts,
                   int blockcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  Comm* c;
  if (int err = check_start(fn, comm, request, fn[4] == 'I', &c)) return err;
  if (c->is_inter()) return inter_unsupported(fn, comm);
  bool block = recvcounts == nullptr;
  Call call;
  if (!block) {
    if (int err = check_ints(fn, comm, recvcounts, c->size, "recvcounts", true)) return err;
  }
  if (int err = check_reduction(fn, comm, block ? blockcount : 0, type, op, &call)) return err;
  size_t total = 0, mine = 0;
  if (block) {
    total = call.a.count * c->size;
    mine = call.a.count;
  } else {
    for (int i = 0; i < c->size; ++i) total += static_cast<size_t>(recvcounts[i]);
    mine = static_cast<size_t>(recvcounts[c->rank]);
    call.a.counts = call.keep(0, scaled(recvcounts, c->size, 1));
  }
  bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place) {
    if (int err = check_nonnull(fn, comm, sendbuf, "sendbuf", total * call.a.elem)) return err;
  }
  if (int err = check_nonnull(fn, comm, recvbuf, "recvbuf", (in_place ? total : mine) * call.a.elem))
    return err;
  call.a.coll = block ? Coll::kReduceScatterBlock : Coll::kReduceScatter;
  call.a.in_place = in_place;
  call.r.send = in_place ? nullptr : sendbuf;
  call.r.recv = recvbuf;
  return execute(fn, comm, c, call, request);
}

// alltoallv (types == nullptr: one type each way, displacements in its extents) and alltoallw
// (a type per peer, displacements in bytes). MPI_IN_PLACE: the receive layout serves both ways.
int alltoall_vw(const char* fn, const void* sendbuf, const int* sendcounts, const int* sdispls,
                const MPI_Datatype* sendtypes, void* recvbuf, const int* recvcounts,
                const int* rdispls, const MPI_Datatype* recvtypes, MPI_Comm comm,
                MPI_Request* request) {
  Comm* c;
  if (int err = check_start(fn, comm, request, fn[4] == 'I', &c)) return err;
  if (c->is_inter()) return inter_unsupported(fn, comm);
  const int p = c->size;
  bool w = fn[std::char_traits<char>::length(fn) - 1] == 'w';
  bool in_place = sendbuf == MPI_IN_PLACE;
  // Bytes per element of peer j's block, and per unit of displacement, each way.
  auto unit = [&](const MPI_Datatype* types, int j, const char* what) -> long {
    Buffer b;
    if (check_data(fn, comm, what, 0, types[w ? j : 0], &b) != MPI_SUCCESS) return -1;
    return b.type_extent;
  };
  auto layout = [&](const int* counts, const int* displs, const MPI_Datatype* types,
                    const char* what, std::vector<size_t>* bytes, std::vector<size_t>* at) {
    if (int err = check_ints(fn, comm, counts, p, what[0] == 's' ? "sendcounts" : "recvcounts", true))
      return err;
    if (int err = check_ints(fn, comm, displs, p, what[0] == 's' ? "sdispls" : "rdispls", false))
      return err;
    if (types == nullptr) {
      return raise_error(comm, MPI_ERR_ARG, fn, "%stype%s argument is NULL", what, w ? "s" : "");
    }
    bytes->resize(p);
    at->resize(p);
    for (int j = 0; j < p; ++j) {
      long e = unit(types, j, what);
      if (e < 0) return MPI_ERR_TYPE;
      (*bytes)[j] = static_cast<size_t>(counts[j]) * e;
      (*at)[j] = static_cast<size_t>(displs[j]) * (w ? 1 : e);
    }
    return MPI_SUCCESS;
  };
  std::vector<size_t> rb, ra, sb, sa;
  if (int err = layout(recvcounts, rdispls, recvtypes, "recv", &rb, &ra)) return err;
  if (!in_place) {
    if (int err = layout(sendcounts, sdispls, sendtypes, "send", &sb, &sa)) return err;
  }
  Call call;
  call.a.coll = w ? Coll::kAlltoallw : Coll::kAlltoallv;
  call.a.in_place = in_place;
  call.a.rcounts = call.keep(0, rb);
  call.a.rdispls = call.keep(1, ra);
  call.a.scounts = in_place ? call.a.rcounts : call.keep(2, sb);
  call.a.sdispls = in_place ? call.a.rdispls : call.keep(3, sa);
  call.r.send = in_place ? nullptr : sendbuf;
  call.r.recv = recvbuf;
  return execute(fn, comm, c, call, request);
}

// gather (scatter mirrors it): the root's blocks of recvcount * recvtype; MPI_IN_PLACE at the
// root: its block is already in place (gather: recvbuf; scatter: sendbuf).
int rooted_blocks(const char* fn, Coll kind, const void* sendbuf, int sendcount,
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  if (int err = check_start(fn, comm, request, fn[4] == 'I', &c)) return err;
  if (c->is_inter()) {
    return inter_rooted(fn, kind, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        comm, c, request);
  }
  if (int err = check_root(fn, comm, *c, root)) return err;
  const bool gather = kind == Coll::kGather, at_root = c->rank == root;
  // The side every rank has (gather: send; scatter: recv) and the root's whole buffer.
  const void* own_buf = gather ? sendbuf : recvbuf;
  bool in_place = own_buf == MPI_IN_PLACE;
  if (in_place && !at_root) {
    return raise_error(comm, MPI_ERR_BUFFER, fn,
                       "%s is MPI_IN_PLACE on rank %d, which is not the root (%d)",
                       gather ? "sendbuf" : "recvbuf", c->rank, root);
  }
  Buffer own, whole;
  const char* own_what = gather ? "send" : "recv";
  if (!in_place) {
    if (int err = check_data(fn, comm, own_what, gather ? sendcount : recvcount,
                             gather ? sendtype : recvtype, &own))
      return err;
    if (int err = check_nonnull(fn, comm, own_buf, gather ? "sendbuf" : "recvbuf", own.bytes))
      return err;
  }
  size_t block = own.bytes;
  if (at_root) {
    if (int err = check_data(fn, comm, gather ? "recv" : "send",
                             gather ? recvcount : sendcount, gather ? recvtype : sendtype, &whole))
      return err;
    if (!in_place) {
      if (int err = gather ? check_same(fn, comm, own, whole) : check_same(fn, comm, whole, own))
        return err;
    }
    block = whole.bytes;
    if (int err = check_nonnull(fn, comm, gather ? recvbuf : sendbuf,
                                gather ? "recvbuf" : "sendbuf", block * c->size))
      return err;
  }
  Call call;
  call.a.coll = kind;
  call.a.root = root;
  call.a.in_place = in_place;
  call.a.count = block;
  call.r.send = (gather && in_place) || (!gather && !at_root) ? nullptr : sendbuf;
  call.r.recv = (!gather && in_place) || (gather && !at_root) ? nullptr : recvbuf;
  return execute(fn, comm, c, call, request);
}

// gatherv, scatterv: the root's counts and displacements; elsewhere a rank knows its own count.
int rooted_vector(const char* fn, Coll kind, const void* sendbuf, const int* counts,
                  const int* displs, int owncount, MPI_Datatype owntype, MPI_Datatype roottype,
                  void* recvbuf, int root, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  if (int err = check_start(fn, comm, request, fn[4] == 'I', &c)) return err;
  if (c->is_inter()) return inter_unsupported(fn, comm);
  if (int err = check_root(fn, comm, *c, root)) return err;
  const bool gather = kind == Coll::kGatherv, at_root = c->rank == root;
  const void* own_buf = gather ? sendbuf : recvbuf;
  bool in_place = own_buf == MPI_IN_PLACE;
  if (in_place && !at_root) {
    return raise_error(comm, MPI_ERR_BUFFER, fn,
                       "%s is MPI_IN_PLACE on rank %d, which is not the root (%d)",
                       gather ? "sendbuf" : "recvbuf", c->rank, root);
  }
  Buffer own;
  if (!in_place) {
    if (int err = check_data(fn, comm, gather ? "send" : "recv", owncount, owntype, &own))
      return err;
    if (int err = check_nonnull(fn, comm, own_buf, gather ? "sendbuf" : "recvbuf", own.bytes))
      return err;
  }
  Call call;
  const int p = c->size;
  if (at_root) {
    const char* cname = gather ? "recvcounts" : "sendcounts";
    Buffer rt;
    if (int err = check_data(fn, comm, gather ? "recv" : "send", 0, roottype, &rt))
      return err;
    if (int err = check_ints(fn, comm, counts, p, cname, true)) return err;
    if (int err = check_ints(fn, comm, displs, p, "displs", false)) return err;
    size_t ext = extent_of(roottype);
    if (!in_place && own.bytes != counts[root] * ext) {
      return raise_error(comm, MPI_ERR_TRUNCATE, fn,
                         "the root's own block is %zu B, but %s[%d] gives %zu B", own.bytes, cname,
                         root, counts[root] * ext);
    }
    call.a.counts = call.keep(0, scaled(counts, p, ext));
    call.a.displs = call.keep(1, scaled(displs, p, ext));
  } else {
    std::vector<size_t> mine(p, 0);
    mine[c->rank] = own.bytes;
    call.a.counts = call.keep(0, mine);
  }
  call.a.coll = kind;
  call.a.root = root;
  call.a.in_place = in_place;
  call.r.send = (gather && in_place) || (!gather && !at_root) ? nullptr : sendbuf;
  call.r.recv = (!gather && in_place) || (gather && !at_root) ? nullptr : recvbuf;
  return execute(fn, comm, c, call, request);
}

}  // namespace
}  // namespace torusmpi::mpi

namespace mpi = torusmpi::mpi;
using torusmpi::coll::Coll;

// Each MPI function and its nonblocking twin: the implementation is shared, request tells them
// apart. The function name's 5th character is 'I' for the nonblocking ones (MPI_Ibarrier).

int PMPI_Barrier(MPI_Comm comm) { return mpi::barrier("MPI_Barrier", comm, nullptr); }
TORUSMPI_WEAK_ALIAS(MPI_Barrier);
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  return mpi::barrier("MPI_Ibarrier", comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ibarrier);

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return mpi::bcast("MPI_Bcast", buffer, count, datatype, root, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Bcast);
int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request* request) {
  return mpi::bcast("MPI_Ibcast", buffer, count, datatype, root, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ibcast);

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm) {
  return mpi::reduction("MPI_Reduce", Coll::kReduce, sendbuf, recvbuf, count, datatype, op, root,
                        comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Reduce);
int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request* request) {
  return mpi::reduction("MPI_Ireduce", Coll::kReduce, sendbuf, recvbuf, count, datatype, op, root,
                        comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ireduce);

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm) {
  return mpi::reduction("MPI_Allreduce", Coll::kAllreduce, sendbuf, recvbuf, count, datatype, op,
                        0, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Allreduce);
int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return mpi::reduction("MPI_Iallreduce", Coll::kAllreduce, sendbuf, recvbuf, count, datatype, op,
                        0, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iallreduce);

int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm) {
  return mpi::reduction("MPI_Scan", Coll::kScan, sendbuf, recvbuf, count, datatype, op, 0, comm,
                        nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Scan);
int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request* request) {
  return mpi::reduction("MPI_Iscan", Coll::kScan, sendbuf, recvbuf, count, datatype, op, 0, comm,
                        request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iscan);

int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
  return mpi::reduction("MPI_Exscan", Coll::kExscan, sendbuf, recvbuf, count, datatype, op, 0,
                        comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Exscan);
int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request) {
  return mpi::reduction("MPI_Iexscan", Coll::kExscan, sendbuf, recvbuf, count, datatype, op, 0,
                        comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iexscan);

int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return mpi::block_exchange("MPI_Allgather", Coll::kAllgather, sendbuf, sendcount, sendtype,
                             recvbuf, recvcount, recvtype, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Allgather);
int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return mpi::block_exchange("MPI_Iallgather", Coll::kAllgather, sendbuf, sendcount, sendtype,
                             recvbuf, recvcount, recvtype, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iallgather);

int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return mpi::block_exchange("MPI_Alltoall", Coll::kAlltoall, sendbuf, sendcount, sendtype,
                             recvbuf, recvcount, recvtype, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Alltoall);
int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return mpi::block_exchange("MPI_Ialltoall", Coll::kAlltoall, sendbuf, sendcount, sendtype,
                             recvbuf, recvcount, recvtype, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ialltoall);

int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm) {
  return mpi::allgatherv("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                         displs, recvtype, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Allgatherv);
int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request* request) {
  return mpi::allgatherv("MPI_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                         displs, recvtype, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iallgatherv);

int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return mpi::reduce_scatter("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, 0, datatype, op,
                             comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Reduce_scatter);
int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  return mpi::reduce_scatter("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, 0, datatype, op,
                             comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ireduce_scatter);

int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return mpi::reduce_scatter("MPI_Reduce_scatter_block", sendbuf, recvbuf, nullptr, recvcount,
                             datatype, op, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Reduce_scatter_block);
int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request* request) {
  return mpi::reduce_scatter("MPI_Ireduce_scatter_block", sendbuf, recvbuf, nullptr, recvcount,
                             datatype, op, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ireduce_scatter_block);

int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return mpi::alltoall_vw("MPI_Alltoallv", sendbuf, sendcounts, sdispls, &sendtype, recvbuf,
                          recvcounts, rdispls, &recvtype, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Alltoallv);
int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  return mpi::alltoall_vw("MPI_Ialltoallv", sendbuf, sendcounts, sdispls, &sendtype, recvbuf,
                          recvcounts, rdispls, &recvtype, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ialltoallv);

int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  return mpi::alltoall_vw("MPI_Alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                          recvcounts, rdispls, recvtypes, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Alltoallw);
int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request* request) {
  return mpi::alltoall_vw("MPI_Ialltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                          recvcounts, rdispls, recvtypes, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ialltoallw);

int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return mpi::rooted_blocks("MPI_Gather", Coll::kGather, sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, recvtype, root, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Gather);
int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  return mpi::rooted_blocks("MPI_Igather", Coll::kGather, sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, recvtype, root, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Igather);

int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  return mpi::rooted_blocks("MPI_Scatter", Coll::kScatter, sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, recvtype, root, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Scatter);
int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  return mpi::rooted_blocks("MPI_Iscatter", Coll::kScatter, sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, recvtype, root, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iscatter);

int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
  return mpi::rooted_vector("MPI_Gatherv", Coll::kGatherv, sendbuf, recvcounts, displs, sendcount,
                            sendtype, recvtype, recvbuf, root, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Gatherv);
int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request* request) {
  return mpi::rooted_vector("MPI_Igatherv", Coll::kGatherv, sendbuf, recvcounts, displs, sendcount,
                            sendtype, recvtype, recvbuf, root, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Igatherv);

int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm) {
  return mpi::rooted_vector("MPI_Scatterv", Coll::kScatterv, sendbuf, sendcounts, displs,
                            recvcount, recvtype, sendtype, recvbuf, root, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Scatterv);
int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request* request) {
  return mpi::rooted_vector("MPI_Iscatterv", Coll::kScatterv, sendbuf, sendcounts, displs,
                            recvcount, recvtype, sendtype, recvbuf, root, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iscatterv);
