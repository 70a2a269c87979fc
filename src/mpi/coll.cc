// Collective entry points: every blocking collective and its nonblocking MPI_I form, from one
// implementation each (request == nullptr: blocking). Each checks its arguments (naming the call
// and the argument), turns them into the engine's shape of the call (coll::Args: element counts
// and symbolic buffers) and hands it to the communicator's team, which selects, builds (both
// cached) and runs the schedule. Data that only moves travels as bytes (elem = 1) of the
// datatypes' packed streams (coll_call.h: used in place unless a layout needs staging);
// reductions move whole elements. A call on an intercommunicator goes to intercomm.cc right after
// the communicator check: its roots and buffers mean other things.
#include <cstring>
#include <vector>

#include "coll/team.h"
#include "core/progress.h"
#include "device/device.h"
#include "mpi/coll_call.h"
#include "mpi/errors.h"
#include "mpi/group.h"
#include "mpi/p2p.h"

namespace torusmpi::mpi {
namespace {

using coll::Coll;

// n blocks of one type: block i is counts[i] elements from buf + displs[i] * unit bytes.
Side side_of(void* buf, const TypeArg* t, const int* counts, const int* displs, int n,
             size_t unit) {
  Side s;
  s.buf = buf;
  s.types.assign(1, t);
  s.counts.resize(n);
  s.at.resize(n);
  for (int i = 0; i < n; ++i) {
    s.counts[i] = static_cast<size_t>(counts[i]);
    s.at[i] = static_cast<int64_t>(displs[i]) * static_cast<int64_t>(unit);
  }
  return s;
}

// --- The collectives, one implementation each.

// The communicator's last call, when `k` repeats it (Comm::CheckedCall): its checked shape and
// buffers, which the run may fill in.
inline Comm::CheckedCall* repeated(Comm* c, const Comm::CallKey& k) {
  Comm::CheckedCall& m = c->checked;
  const Comm::CallKey& l = m.key;
  if (!m.valid || l.sendbuf != k.sendbuf || l.recvbuf != k.recvbuf || l.kind != k.kind ||
      l.recvcount != k.recvcount || l.sendcount != k.sendcount || l.recvtype != k.recvtype ||
      l.sendtype != k.sendtype || l.op != k.op || l.root != k.root ||
      l.recvcounts != k.recvcounts) {
    return nullptr;
  }
  if (k.recvcounts != nullptr &&
      std::memcmp(k.recvcounts, m.recvcounts.data(), m.recvcounts.size() * sizeof(int)) != 0) {
    return nullptr;
  }
  return &m;
}

// Keeps a call that passed its checks for repeated() when nothing it was checked against can
// change: predefined types and op (`fixed`), nothing staged, host buffers (device memory can be
// freed and given out again in other sizes).
void remember(Comm* c, const Comm::CallKey& k, const CollCall& call, bool fixed) {
  Comm::CheckedCall& m = c->checked;
  m.valid = fixed && !call.staged && call.r.reduce.user_fn == nullptr &&
            !device::in_device_range(k.sendbuf) && !device::in_device_range(k.recvbuf);
  if (!m.valid) return;
  m.key = k;
  m.a = call.a;
  m.r = call.r;
  if (k.recvcounts != nullptr) {
    m.recvcounts.assign(k.recvcounts, k.recvcounts + c->size);
    m.counts.assign(call.a.counts, call.a.counts + c->size);
    m.a.counts = m.counts.data();
  }
}

int barrier(const char* fn, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  if (int err = check_call(fn, comm, request, &c)) return err;
  if (c->is_inter()) return inter_barrier(fn, comm, c, request);
  coll::Args a;
  a.coll = Coll::kBarrier;
  coll::RunArgs r;
  return run_collective(fn, comm, c, a, r, request);
}

int bcast(const char* fn, void* buffer, int count, MPI_Datatype type, int root, MPI_Comm comm,
          MPI_Request* request) {
  Comm* c;
  if (int err = check_call(fn, comm, request, &c)) return err;
  if (c->is_inter()) return inter_bcast(fn, buffer, count, type, root, comm, c, request);
  TypeArg t;
  size_t bytes = 0;
  if (int err = check_type_arg(fn, comm, "", type, &t)) return err;
  if (int err = check_count(fn, comm, "", count, t, &bytes)) return err;
  if (int err = check_span(fn, comm, buffer, "buffer", t, static_cast<size_t>(count))) return err;
  if (int err = check_root(fn, comm, *c, root)) return err;
  CollCall call;
  call.a.coll = Coll::kBcast;
  call.a.root = root;
  call.a.count = bytes;
  const bool at_root = c->rank == root;
  call.r.recv = call.place(buffer, t, count, 1, at_root, !at_root);
  return run_collective(fn, comm, c, call, request);
}

// reduce, allreduce, scan, exscan: a vector of count elements; MPI_IN_PLACE puts it in recvbuf
// (reduce: at the root only).
// reduction() for a call that does not repeat the communicator's last one: out of line, so that
// a repeated call's path sets up none of its frame.
[[gnu::noinline]] int new_reduction(const char* fn, Coll kind, const void* sendbuf, void* recvbuf,
                                    int count, MPI_Datatype type, MPI_Op op, int root,
                                    MPI_Comm comm, Comm* c, const Comm::CallKey& key,
                                    MPI_Request* request) {
  if (c->is_inter()) {
    if (kind == Coll::kScan || kind == Coll::kExscan) {
      return raise_error(comm, MPI_ERR_COMM, fn,
                         "comm argument is an intercommunicator: MPI defines scans on "
                         "intracommunicators only");
    }
    return inter_reduce(fn, kind, sendbuf, recvbuf, count, type, op, root, comm, c, request);
  }
  CollCall call;
  TypeArg t;
  size_t per = 1;
  if (int err = check_reduction(fn, comm, count, type, op, &call, &t, &per)) return err;
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
  if (!in_place) {
    if (int err = check_span(fn, comm, sendbuf, "sendbuf", t, static_cast<size_t>(count)))
      return err;
  }
  if (has_recv) {
    if (int err = check_span(fn, comm, recvbuf, "recvbuf", t, static_cast<size_t>(count)))
      return err;
  }
  call.a.coll = kind;
  call.a.root = rooted ? root : 0;
  call.a.in_place = in_place;
  const size_t n = static_cast<size_t>(count);
  call.r.send = in_place ? nullptr : call.place(const_cast<void*>(sendbuf), t, n, 1, true, false);
  // Exscan leaves rank 0's result undefined: staged, it gets back what it had.
  call.r.recv =
      has_recv ? call.place(recvbuf, t, n, 1, in_place || kind == Coll::kExscan, true) : nullptr;
  remember(c, key, call, !t.derived);
  return run_collective(fn, comm, c, call, request);
}

int reduction(const char* fn, Coll kind, const void* sendbuf, void* recvbuf, int count,
              MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  if (int err = check_call(fn, comm, request, &c)) return err;
  // An intercommunicator never has a remembered call.
  const Comm::CallKey key{kind, sendbuf, recvbuf, 0, count, nullptr, type, op, root, nullptr};
  if (Comm::CheckedCall* m = repeated(c, key))
    return run_collective(fn, comm, c, m->a, m->r, request);
  return new_reduction(fn, kind, sendbuf, recvbuf, count, type, op, root, comm, c, key, request);
}

// allgather, alltoall: blocks of recvcount * recvtype; MPI_IN_PLACE: the data is in recvbuf.
int block_exchange(const char* fn, Coll kind, const void* sendbuf, int sendcount,
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  if (int err = check_call(fn, comm, request, &c)) return err;
  if (c->is_inter()) {
    return inter_exchange(fn, kind, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                          comm, c, request);
  }
  const Comm::CallKey key{kind,     sendbuf,  recvbuf, sendcount, recvcount,
                          sendtype, recvtype, nullptr, 0,         nullptr};
  if (Comm::CheckedCall* m = repeated(c, key))
    return run_collective(fn, comm, c, m->a, m->r, request);
  bool in_place = sendbuf == MPI_IN_PLACE;
  TypeArg st, rt;
  size_t sbytes = 0, rbytes = 0;
  if (int err = check_type_arg(fn, comm, "recv", recvtype, &rt)) return err;
  if (int err = check_count(fn, comm, "recv", recvcount, rt, &rbytes)) return err;
  if (!in_place) {
    if (int err = check_type_arg(fn, comm, "send", sendtype, &st)) return err;
    if (int err = check_count(fn, comm, "send", sendcount, st, &sbytes)) return err;
    if (int err = check_same(fn, comm, sbytes, rbytes)) return err;
  }
  const size_t p = static_cast<size_t>(c->size);
  if (int err = check_span(fn, comm, recvbuf, "recvbuf", rt, static_cast<size_t>(recvcount) * p))
    return err;
  const size_t sent_blocks = kind == Coll::kAlltoall ? p : 1;
  if (!in_place) {
    if (int err = check_span(fn, comm, sendbuf, "sendbuf", st,
                             static_cast<size_t>(sendcount) * sent_blocks))
      return err;
  }
  CollCall call;
  call.a.coll = kind;
  call.a.in_place = in_place;
  call.a.count = rbytes;
  if (!in_place) {
    call.r.send = call.place(const_cast<void*>(sendbuf), st, sendcount, sent_blocks, true, false);
  }
  call.r.recv = call.place(recvbuf, rt, recvcount, p, in_place, true);
  remember(c, key, call, !rt.derived && (in_place || !st.derived));
  return run_collective(fn, comm, c, call, request);
}

int allgatherv(const char* fn, const void* sendbuf, int sendcount, MPI_Datatype sendtype,
               void* recvbuf, const int* recvcounts, const int* displs, MPI_Datatype recvtype,
               MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  if (int err = check_call(fn, comm, request, &c)) return err;
  if (c->is_inter()) {
    return inter_allgatherv(fn, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            comm, c, request);
  }
  bool in_place = sendbuf == MPI_IN_PLACE;
  TypeArg st, rt;
  if (int err = check_type_arg(fn, comm, "recv", recvtype, &rt)) return err;
  if (int err = check_counts(fn, comm, recvcounts, c->size, "recvcounts", true)) return err;
  if (int err = check_counts(fn, comm, displs, c->size, "displs", false)) return err;
  size_t sbytes = 0;
  if (!in_place) {
    if (int err = check_type_arg(fn, comm, "send", sendtype, &st)) return err;
    if (int err = check_count(fn, comm, "send", sendcount, st, &sbytes)) return err;
    if (int err = check_same(fn, comm, sbytes, recvcounts[c->rank] * rt.size)) return err;
  }
  CollCall call;
  call.a.coll = Coll::kAllgatherv;
  call.a.in_place = in_place;
  const Side rs = side_of(recvbuf, &rt, recvcounts, displs, c->size, rt.extent);
  if (int err = check_side(fn, comm, "recvbuf", rs)) return err;
  if (!in_place) {
    if (int err = check_span(fn, comm, sendbuf, "sendbuf", st, static_cast<size_t>(sendcount)))
      return err;
  }
  std::vector<size_t> bytes, at;
  call.r.recv = call.place(rs, in_place, true, &bytes, &at);
  call.a.counts = call.keep(0, std::move(bytes));
  call.a.displs = call.keep(1, std::move(at));
  if (!in_place) {
    call.r.send = call.place(const_cast<void*>(sendbuf), st, sendcount, 1, true, false);
  }
  return run_collective(fn, comm, c, call, request);
}

int reduce_scatter(const char* fn, const void* sendbuf, void* recvbuf, const int* recvcounts,
                   int blockcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
  Comm* c;
  if (int err = check_call(fn, comm, request, &c)) return err;
  if (c->is_inter()) {
    return inter_reduce_scatter(fn, sendbuf, recvbuf, recvcounts, blockcount, type, op, comm, c,
                                request);
  }
  bool block = recvcounts == nullptr;
  const Coll kind = block ? Coll::kReduceScatterBlock : Coll::kReduceScatter;
  const Comm::CallKey key{kind, sendbuf, recvbuf, 0, blockcount, nullptr, type, op, 0, recvcounts};
  if (Comm::CheckedCall* m = repeated(c, key))
    return run_collective(fn, comm, c, m->a, m->r, request);
  CollCall call;
  if (!block) {
    if (int err = check_counts(fn, comm, recvcounts, c->size, "recvcounts", true)) return err;
  }
  TypeArg t;
  size_t per = 1;
  if (int err = check_reduction(fn, comm, block ? blockcount : 0, type, op, &call, &t, &per))
    return err;
  size_t total = 0, mine = 0;  // elements of the datatype
  if (block) {
    total = static_cast<size_t>(blockcount) * c->size;
    mine = static_cast<size_t>(blockcount);
  } else {
    size_t* counts = call.room(0, c->size);
    for (int i = 0; i < c->size; ++i) {
      total += static_cast<size_t>(recvcounts[i]);
      counts[i] = static_cast<size_t>(recvcounts[i]) * per;
    }
    mine = static_cast<size_t>(recvcounts[c->rank]);
    call.a.counts = counts;
  }
  bool in_place = sendbuf == MPI_IN_PLACE;
  if (!in_place) {
    if (int err = check_span(fn, comm, sendbuf, "sendbuf", t, total)) return err;
  }
  if (int err = check_span(fn, comm, recvbuf, "recvbuf", t, in_place ? total : mine)) return err;
  call.a.coll = kind;
  call.a.in_place = in_place;
  call.r.send =
      in_place ? nullptr : call.place(const_cast<void*>(sendbuf), t, total, 1, true, false);
  call.r.recv = call.place(recvbuf, t, in_place ? total : mine, 1, in_place, true);
  remember(c, key, call, !t.derived);
  return run_collective(fn, comm, c, call, request);
}

// alltoallv (!w: sendtypes and recvtypes point at one type each, displacements in its extents)
// and alltoallw (w: a type per peer, displacements in bytes). MPI_IN_PLACE: the receive layout
// serves both ways.
int alltoall_vw(const char* fn, bool w, const void* sendbuf, const int* sendcounts,
                const int* sdispls, const MPI_Datatype* sendtypes, void* recvbuf,
                const int* recvcounts, const int* rdispls, const MPI_Datatype* recvtypes,
                MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  if (int err = check_call(fn, comm, request, &c)) return err;
  if (c->is_inter()) {
    return inter_alltoall_vw(fn, w, sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
                             rdispls, recvtypes, comm, c, request);
  }
  const int p = c->size;
  bool in_place = sendbuf == MPI_IN_PLACE;
  // Each side's types (one, or one per peer for w) and its blocks.
  auto layout = [&](const void* buf, const int* counts, const int* displs,
                    const MPI_Datatype* types, const char* what, std::vector<TypeArg>* targs,
                    Side* s) {
    return vector_side(fn, comm, buf, counts, displs, types, what, w, p, targs, s);
  };
  std::vector<TypeArg> rtypes, stypes;
  Side rs, ss;
  if (int err = layout(recvbuf, recvcounts, rdispls, recvtypes, "recv", &rtypes, &rs)) return err;
  if (int err = check_side(fn, comm, "recvbuf", rs)) return err;
  if (!in_place) {
    if (int err = layout(sendbuf, sendcounts, sdispls, sendtypes, "send", &stypes, &ss)) return err;
    if (int err = check_side(fn, comm, "sendbuf", ss)) return err;
  }
  CollCall call;
  call.a.coll = w ? Coll::kAlltoallw : Coll::kAlltoallv;
  call.a.in_place = in_place;
  std::vector<size_t> bytes, at;
  call.r.recv = call.place(rs, in_place, true, &bytes, &at);
  call.a.rcounts = call.keep(0, std::move(bytes));
  call.a.rdispls = call.keep(1, std::move(at));
  if (in_place) {
    call.a.scounts = call.a.rcounts;
    call.a.sdispls = call.a.rdispls;
  } else {
    call.r.send = call.place(ss, true, false, &bytes, &at);
    call.a.scounts = call.keep(2, std::move(bytes));
    call.a.sdispls = call.keep(3, std::move(at));
  }
  return run_collective(fn, comm, c, call, request);
}

// gather (scatter mirrors it): the root's blocks of recvcount * recvtype; MPI_IN_PLACE at the
// root: its block is already in place (gather: recvbuf; scatter: sendbuf).
int rooted_blocks(const char* fn, Coll kind, const void* sendbuf, int sendcount,
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  if (int err = check_call(fn, comm, request, &c)) return err;
  if (c->is_inter()) {
    return inter_rooted(fn, kind, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        comm, c, request);
  }
  if (int err = check_root(fn, comm, *c, root)) return err;
  const bool gather = kind == Coll::kGather, at_root = c->rank == root;
  // The side every rank has (gather: send; scatter: recv) and the root's whole buffer.
  void* own_buf = const_cast<void*>(gather ? sendbuf : recvbuf);
  void* whole_buf = const_cast<void*>(gather ? recvbuf : sendbuf);
  bool in_place = own_buf == MPI_IN_PLACE;
  if (in_place && !at_root) {
    return raise_error(comm, MPI_ERR_BUFFER, fn,
                       "%s is MPI_IN_PLACE on rank %d, which is not the root (%d)",
                       gather ? "sendbuf" : "recvbuf", c->rank, root);
  }
  const char* own_what = gather ? "send" : "recv";
  const char* whole_what = gather ? "recv" : "send";
  const int own_count = gather ? sendcount : recvcount;
  const int whole_count = gather ? recvcount : sendcount;
  TypeArg own, whole;
  size_t own_bytes = 0, whole_bytes = 0;
  if (!in_place) {
    if (int err = check_type_arg(fn, comm, own_what, gather ? sendtype : recvtype, &own))
      return err;
    if (int err = check_count(fn, comm, own_what, own_count, own, &own_bytes)) return err;
    if (int err = check_span(fn, comm, own_buf, gather ? "sendbuf" : "recvbuf", own,
                             static_cast<size_t>(own_count)))
      return err;
  }
  size_t block = own_bytes;
  if (at_root) {
    if (int err = check_type_arg(fn, comm, whole_what, gather ? recvtype : sendtype, &whole))
      return err;
    if (int err = check_count(fn, comm, whole_what, whole_count, whole, &whole_bytes)) return err;
    if (!in_place) {
      if (int err = gather ? check_same(fn, comm, own_bytes, whole_bytes)
                           : check_same(fn, comm, whole_bytes, own_bytes))
        return err;
    }
    block = whole_bytes;
    if (int err = check_span(fn, comm, whole_buf, gather ? "recvbuf" : "sendbuf", whole,
                             static_cast<size_t>(whole_count) * c->size))
      return err;
  }
  CollCall call;
  call.a.coll = kind;
  call.a.root = root;
  call.a.in_place = in_place;
  call.a.count = block;
  // gather: own is read, whole written (an in-place root's block is in it already); scatter:
  // whole is read, own written.
  void* own_at = in_place ? nullptr : call.place(own_buf, own, own_count, 1, gather, !gather);
  void* whole_at =
      !at_root ? nullptr
               : call.place(whole_buf, whole, whole_count, c->size, !gather || in_place, gather);
  call.r.send = gather ? own_at : whole_at;
  call.r.recv = gather ? whole_at : own_at;
  return run_collective(fn, comm, c, call, request);
}

// gatherv, scatterv: the root's counts and displacements; elsewhere a rank knows its own count.
int rooted_vector(const char* fn, Coll kind, const void* sendbuf, const int* counts,
                  const int* displs, int owncount, MPI_Datatype owntype, MPI_Datatype roottype,
                  void* recvbuf, int root, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  if (int err = check_call(fn, comm, request, &c)) return err;
  if (c->is_inter()) {
    return inter_rooted_vector(fn, kind, sendbuf, counts, displs, owncount, owntype, roottype,
                               recvbuf, root, comm, c, request);
  }
  if (int err = check_root(fn, comm, *c, root)) return err;
  const bool gather = kind == Coll::kGatherv, at_root = c->rank == root;
  void* own_buf = const_cast<void*>(gather ? sendbuf : recvbuf);
  void* whole_buf = const_cast<void*>(gather ? recvbuf : sendbuf);
  bool in_place = own_buf == MPI_IN_PLACE;
  if (in_place && !at_root) {
    return raise_error(comm, MPI_ERR_BUFFER, fn,
                       "%s is MPI_IN_PLACE on rank %d, which is not the root (%d)",
                       gather ? "sendbuf" : "recvbuf", c->rank, root);
  }
  const char* own_what = gather ? "send" : "recv";
  TypeArg own, whole;
  size_t own_bytes = 0;
  if (!in_place) {
    if (int err = check_type_arg(fn, comm, own_what, owntype, &own)) return err;
    if (int err = check_count(fn, comm, own_what, owncount, own, &own_bytes)) return err;
    if (int err = check_span(fn, comm, own_buf, gather ? "sendbuf" : "recvbuf", own,
                             static_cast<size_t>(owncount)))
      return err;
  }
  CollCall call;
  const int p = c->size;
  void* whole_at = nullptr;
  if (at_root) {
    const char* cname = gather ? "recvcounts" : "sendcounts";
    if (int err = check_type_arg(fn, comm, gather ? "recv" : "send", roottype, &whole)) return err;
    if (int err = check_counts(fn, comm, counts, p, cname, true)) return err;
    if (int err = check_counts(fn, comm, displs, p, "displs", false)) return err;
    const size_t root_bytes = counts[root] * whole.size;
    if (!in_place && own_bytes != root_bytes) {
      return raise_error(comm, MPI_ERR_TRUNCATE, fn,
                         "the root's own block is %zu B, but %s[%d] gives %zu B", own_bytes, cname,
                         root, root_bytes);
    }
    const Side ws = side_of(whole_buf, &whole, counts, displs, p, whole.extent);
    if (int err = check_side(fn, comm, gather ? "recvbuf" : "sendbuf", ws)) return err;
    std::vector<size_t> bytes, at;
    whole_at = call.place(ws, !gather || in_place, gather, &bytes, &at);
    call.a.counts = call.keep(0, std::move(bytes));
    call.a.displs = call.keep(1, std::move(at));
  } else {
    std::vector<size_t> mine(p, 0);
    mine[c->rank] = own_bytes;
    call.a.counts = call.keep(0, std::move(mine));
  }
  void* own_at = in_place ? nullptr : call.place(own_buf, own, owncount, 1, gather, !gather);
  call.a.coll = kind;
  call.a.root = root;
  call.a.in_place = in_place;
  call.r.send = gather ? own_at : whole_at;
  call.r.recv = gather ? whole_at : own_at;
  return run_collective(fn, comm, c, call, request);
}

}  // namespace
}  // namespace torusmpi::mpi

namespace mpi = torusmpi::mpi;
using torusmpi::coll::Coll;

// Each MPI function and its nonblocking twin: the implementation is shared, request tells them
// apart. The function name's 5th character is 'I' for the nonblocking ones (MPI_Ibarrier).

int PMPI_Barrier(MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::barrier("MPI_Barrier", comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Barrier);
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::barrier("MPI_Ibarrier", comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ibarrier);

int PMPI_Bcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::bcast("MPI_Bcast", buffer, count, datatype, root, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Bcast);
int PMPI_Ibcast(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::bcast("MPI_Ibcast", buffer, count, datatype, root, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ibcast);

int PMPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::reduction("MPI_Reduce", Coll::kReduce, sendbuf, recvbuf, count, datatype, op, root,
                        comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Reduce);
int PMPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::reduction("MPI_Ireduce", Coll::kReduce, sendbuf, recvbuf, count, datatype, op, root,
                        comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ireduce);

int PMPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::reduction("MPI_Allreduce", Coll::kAllreduce, sendbuf, recvbuf, count, datatype, op, 0,
                        comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Allreduce);
int PMPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::reduction("MPI_Iallreduce", Coll::kAllreduce, sendbuf, recvbuf, count, datatype, op,
                        0, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iallreduce);

int PMPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
              MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::reduction("MPI_Scan", Coll::kScan, sendbuf, recvbuf, count, datatype, op, 0, comm,
                        nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Scan);
int PMPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::reduction("MPI_Iscan", Coll::kScan, sendbuf, recvbuf, count, datatype, op, 0, comm,
                        request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iscan);

int PMPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::reduction("MPI_Exscan", Coll::kExscan, sendbuf, recvbuf, count, datatype, op, 0, comm,
                        nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Exscan);
int PMPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::reduction("MPI_Iexscan", Coll::kExscan, sendbuf, recvbuf, count, datatype, op, 0,
                        comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iexscan);

int PMPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::block_exchange("MPI_Allgather", Coll::kAllgather, sendbuf, sendcount, sendtype,
                             recvbuf, recvcount, recvtype, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Allgather);
int PMPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::block_exchange("MPI_Iallgather", Coll::kAllgather, sendbuf, sendcount, sendtype,
                             recvbuf, recvcount, recvtype, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iallgather);

int PMPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::block_exchange("MPI_Alltoall", Coll::kAlltoall, sendbuf, sendcount, sendtype, recvbuf,
                             recvcount, recvtype, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Alltoall);
int PMPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::block_exchange("MPI_Ialltoall", Coll::kAlltoall, sendbuf, sendcount, sendtype,
                             recvbuf, recvcount, recvtype, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ialltoall);

int PMPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::allgatherv("MPI_Allgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                         displs, recvtype, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Allgatherv);
int PMPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::allgatherv("MPI_Iallgatherv", sendbuf, sendcount, sendtype, recvbuf, recvcounts,
                         displs, recvtype, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iallgatherv);

int PMPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::reduce_scatter("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, 0, datatype, op,
                             comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Reduce_scatter);
int PMPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::reduce_scatter("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, 0, datatype, op,
                             comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ireduce_scatter);

int PMPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::reduce_scatter("MPI_Reduce_scatter_block", sendbuf, recvbuf, nullptr, recvcount,
                             datatype, op, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Reduce_scatter_block);
int PMPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::reduce_scatter("MPI_Ireduce_scatter_block", sendbuf, recvbuf, nullptr, recvcount,
                             datatype, op, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ireduce_scatter_block);

int PMPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::alltoall_vw("MPI_Alltoallv", false, sendbuf, sendcounts, sdispls, &sendtype, recvbuf,
                          recvcounts, rdispls, &recvtype, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Alltoallv);
int PMPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::alltoall_vw("MPI_Ialltoallv", false, sendbuf, sendcounts, sdispls, &sendtype, recvbuf,
                          recvcounts, rdispls, &recvtype, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ialltoallv);

int PMPI_Alltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::alltoall_vw("MPI_Alltoallw", true, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                          recvcounts, rdispls, recvtypes, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Alltoallw);
int PMPI_Ialltoallw(const void* sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::alltoall_vw("MPI_Ialltoallw", true, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                          recvcounts, rdispls, recvtypes, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ialltoallw);

int PMPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::rooted_blocks("MPI_Gather", Coll::kGather, sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, recvtype, root, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Gather);
int PMPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::rooted_blocks("MPI_Igather", Coll::kGather, sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, recvtype, root, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Igather);

int PMPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::rooted_blocks("MPI_Scatter", Coll::kScatter, sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, recvtype, root, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Scatter);
int PMPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::rooted_blocks("MPI_Iscatter", Coll::kScatter, sendbuf, sendcount, sendtype, recvbuf,
                            recvcount, recvtype, root, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iscatter);

int PMPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::rooted_vector("MPI_Gatherv", Coll::kGatherv, sendbuf, recvcounts, displs, sendcount,
                            sendtype, recvtype, recvbuf, root, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Gatherv);
int PMPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::rooted_vector("MPI_Igatherv", Coll::kGatherv, sendbuf, recvcounts, displs, sendcount,
                            sendtype, recvtype, recvbuf, root, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Igatherv);

int PMPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::rooted_vector("MPI_Scatterv", Coll::kScatterv, sendbuf, sendcounts, displs, recvcount,
                            recvtype, sendtype, recvbuf, root, comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Scatterv);
int PMPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::rooted_vector("MPI_Iscatterv", Coll::kScatterv, sendbuf, sendcounts, displs,
                            recvcount, recvtype, sendtype, recvbuf, root, comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Iscatterv);

// --- Persistent collectives: MPIX_<coll>_init (coll_call.h, persistent_init), each its
// nonblocking form kept for MPI_Start under the init's name.

int PMPIX_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init("MPIX_Barrier_init", comm, info, request, [=](MPI_Request* r) {
    return mpi::barrier("MPIX_Barrier_init", comm, r);
  });
}
TORUSMPI_WEAK_ALIAS(MPIX_Barrier_init);

int PMPIX_Bcast_init(void* buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                     MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init("MPIX_Bcast_init", comm, info, request, [=](MPI_Request* r) {
    return mpi::bcast("MPIX_Bcast_init", buffer, count, datatype, root, comm, r);
  });
}
TORUSMPI_WEAK_ALIAS(MPIX_Bcast_init);

namespace torusmpi::mpi {
namespace {
// reduce, allreduce, scan, exscan.
int reduction_init(const char* fn, Coll kind, const void* sendbuf, void* recvbuf, int count,
                   MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm, MPI_Info info,
                   MPI_Request* request) {
  return persistent_init(fn, comm, info, request, [=](MPI_Request* r) {
    return reduction(fn, kind, sendbuf, recvbuf, count, type, op, root, comm, r);
  });
}
// allgather, alltoall.
int block_exchange_init(const char* fn, Coll kind, const void* sendbuf, int sendcount,
                        MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                        MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent_init(fn, comm, info, request, [=](MPI_Request* r) {
    return block_exchange(fn, kind, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                          comm, r);
  });
}
// gather, scatter.
int rooted_blocks_init(const char* fn, Coll kind, const void* sendbuf, int sendcount,
                       MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  return persistent_init(fn, comm, info, request, [=](MPI_Request* r) {
    return rooted_blocks(fn, kind, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                         comm, r);
  });
}
}  // namespace
}  // namespace torusmpi::mpi

int PMPIX_Reduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::reduction_init("MPIX_Reduce_init", Coll::kReduce, sendbuf, recvbuf, count, datatype,
                             op, root, comm, info, request);
}
TORUSMPI_WEAK_ALIAS(MPIX_Reduce_init);

int PMPIX_Allreduce_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::reduction_init("MPIX_Allreduce_init", Coll::kAllreduce, sendbuf, recvbuf, count,
                             datatype, op, 0, comm, info, request);
}
TORUSMPI_WEAK_ALIAS(MPIX_Allreduce_init);

int PMPIX_Scan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::reduction_init("MPIX_Scan_init", Coll::kScan, sendbuf, recvbuf, count, datatype, op,
                             0, comm, info, request);
}
TORUSMPI_WEAK_ALIAS(MPIX_Scan_init);

int PMPIX_Exscan_init(const void* sendbuf, void* recvbuf, int count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::reduction_init("MPIX_Exscan_init", Coll::kExscan, sendbuf, recvbuf, count, datatype,
                             op, 0, comm, info, request);
}
TORUSMPI_WEAK_ALIAS(MPIX_Exscan_init);

int PMPIX_Allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::block_exchange_init("MPIX_Allgather_init", Coll::kAllgather, sendbuf, sendcount,
                                  sendtype, recvbuf, recvcount, recvtype, comm, info, request);
}
TORUSMPI_WEAK_ALIAS(MPIX_Allgather_init);

int PMPIX_Alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::block_exchange_init("MPIX_Alltoall_init", Coll::kAlltoall, sendbuf, sendcount,
                                  sendtype, recvbuf, recvcount, recvtype, comm, info, request);
}
TORUSMPI_WEAK_ALIAS(MPIX_Alltoall_init);

int PMPIX_Allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                          MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init("MPIX_Allgatherv_init", comm, info, request, [=](MPI_Request* r) {
    return mpi::allgatherv("MPIX_Allgatherv_init", sendbuf, sendcount, sendtype, recvbuf,
                           recvcounts, displs, recvtype, comm, r);
  });
}
TORUSMPI_WEAK_ALIAS(MPIX_Allgatherv_init);

int PMPIX_Reduce_scatter_init(const void* sendbuf, void* recvbuf, const int recvcounts[],
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                              MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init("MPIX_Reduce_scatter_init", comm, info, request, [=](MPI_Request* r) {
    return mpi::reduce_scatter("MPIX_Reduce_scatter_init", sendbuf, recvbuf, recvcounts, 0,
                               datatype, op, comm, r);
  });
}
TORUSMPI_WEAK_ALIAS(MPIX_Reduce_scatter_init);

int PMPIX_Reduce_scatter_block_init(const void* sendbuf, void* recvbuf, int recvcount,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                    MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init(
      "MPIX_Reduce_scatter_block_init", comm, info, request, [=](MPI_Request* r) {
        return mpi::reduce_scatter("MPIX_Reduce_scatter_block_init", sendbuf, recvbuf, nullptr,
                                   recvcount, datatype, op, comm, r);
      });
}
TORUSMPI_WEAK_ALIAS(MPIX_Reduce_scatter_block_init);

int PMPIX_Alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                         MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                         const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init("MPIX_Alltoallv_init", comm, info, request, [=](MPI_Request* r) {
    return mpi::alltoall_vw("MPIX_Alltoallv_init", false, sendbuf, sendcounts, sdispls, &sendtype,
                            recvbuf, recvcounts, rdispls, &recvtype, comm, r);
  });
}
TORUSMPI_WEAK_ALIAS(MPIX_Alltoallv_init);

int PMPIX_Alltoallw_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                         const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                         const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                         MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init("MPIX_Alltoallw_init", comm, info, request, [=](MPI_Request* r) {
    return mpi::alltoall_vw("MPIX_Alltoallw_init", true, sendbuf, sendcounts, sdispls, sendtypes,
                            recvbuf, recvcounts, rdispls, recvtypes, comm, r);
  });
}
TORUSMPI_WEAK_ALIAS(MPIX_Alltoallw_init);

int PMPIX_Gather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::rooted_blocks_init("MPIX_Gather_init", Coll::kGather, sendbuf, sendcount, sendtype,
                                 recvbuf, recvcount, recvtype, root, comm, info, request);
}
TORUSMPI_WEAK_ALIAS(MPIX_Gather_init);

int PMPIX_Scatter_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                       MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::rooted_blocks_init("MPIX_Scatter_init", Coll::kScatter, sendbuf, sendcount, sendtype,
                                 recvbuf, recvcount, recvtype, root, comm, info, request);
}
TORUSMPI_WEAK_ALIAS(MPIX_Scatter_init);

int PMPIX_Gatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init("MPIX_Gatherv_init", comm, info, request, [=](MPI_Request* r) {
    return mpi::rooted_vector("MPIX_Gatherv_init", Coll::kGatherv, sendbuf, recvcounts, displs,
                              sendcount, sendtype, recvtype, recvbuf, root, comm, r);
  });
}
TORUSMPI_WEAK_ALIAS(MPIX_Gatherv_init);

int PMPIX_Scatterv_init(const void* sendbuf, const int sendcounts[], const int displs[],
                        MPI_Datatype sendtype, void* recvbuf, int recvcount, MPI_Datatype recvtype,
                        int root, MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init("MPIX_Scatterv_init", comm, info, request, [=](MPI_Request* r) {
    return mpi::rooted_vector("MPIX_Scatterv_init", Coll::kScatterv, sendbuf, sendcounts, displs,
                              recvcount, recvtype, sendtype, recvbuf, root, comm, r);
  });
}
TORUSMPI_WEAK_ALIAS(MPIX_Scatterv_init);
