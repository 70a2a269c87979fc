// Neighbourhood collectives: MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v,w) and their
// MPI_I forms, over the topology of the communicator (topo.h): blocks go to its out-neighbours
// and come from its in-neighbours, in MPI's order, through the engine's neighbourhood algorithms.
// Data travels as bytes (elem 1) of the datatypes' packed streams (coll_call.h).
#include <vector>

#include "coll/team.h"
#include "core/progress.h"
#include "mpi/coll_call.h"
#include "mpi/errors.h"
#include "mpi/p2p.h"
#include "mpi/topo.h"

namespace torusmpi::mpi {
namespace {

using coll::Coll;

// What every neighbourhood collective checks first, and the call's neighbour lists in the order
// the engine sends in (see Topology::send_order).
struct Neighbors {
  const Topology* t = nullptr;
  std::vector<int> dests;  // out-neighbours, engine order
};

int start_neighbors(const char* fn, MPI_Comm comm, MPI_Request* request, Comm** c, Neighbors* n) {
  if (int err = check_call(fn, comm, request, c)) return err;
  n->t = topology_of(comm);
  if (n->t == nullptr) {
    return raise_error(comm, MPI_ERR_TOPOLOGY, fn, "comm argument (%s) has no topology",
                       (*c)->name.c_str());
  }
  n->dests.resize(n->t->out.size());
  for (size_t j = 0; j < n->dests.size(); ++j) n->dests[j] = n->t->out[n->t->send_order[j]];
  return MPI_SUCCESS;
}

bool identity(const Topology& t) {
  for (size_t j = 0; j < t.send_order.size(); ++j) {
    if (t.send_order[j] != static_cast<int>(j)) return false;
  }
  return true;
}

// neighbor_allgather(v) and neighbor_alltoall: one datatype each way.
int neighbor_blocks(const char* fn, Coll kind, const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, void* recvbuf, int recvcount, const int* recvcounts,
                    const int* displs, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  Neighbors n;
  if (int err = start_neighbors(fn, comm, request, &c, &n)) return err;
  TypeArg st, rt;
  size_t sbytes = 0, rbytes = 0;
  if (int err = check_type_arg(fn, comm, "send", sendtype, &st)) return err;
  if (int err = check_count(fn, comm, "send", sendcount, st, &sbytes)) return err;
  if (int err = check_type_arg(fn, comm, "recv", recvtype, &rt)) return err;
  const size_t in = n.t->in.size(), out = n.t->out.size();
  CollCall call;
  coll::Args& a = call.a;
  a.sources = n.t->in.data();
  a.indegree = static_cast<int>(in);
  a.dests = n.dests.data();
  a.outdegree = static_cast<int>(out);
  if (kind == Coll::kNeighborAllgatherv) {
    if (int err = check_counts(fn, comm, recvcounts, static_cast<int>(in), "recvcounts", true))
      return err;
    if (int err = check_counts(fn, comm, displs, static_cast<int>(in), "displs", false)) return err;
    Side rs;
    rs.buf = recvbuf;
    rs.types.assign(1, &rt);
    for (size_t i = 0; i < in; ++i) {
      rs.counts.push_back(static_cast<size_t>(recvcounts[i]));
      rs.at.push_back(static_cast<int64_t>(displs[i]) * static_cast<int64_t>(rt.extent));
    }
    if (int err = check_side(fn, comm, "recvbuf", rs)) return err;
    std::vector<size_t> bytes, at;
    call.r.recv = call.place(rs, false, true, &bytes, &at);
    a.counts = call.keep(0, std::move(bytes));
    a.displs = call.keep(1, std::move(at));
  } else {
    if (int err = check_count(fn, comm, "recv", recvcount, rt, &rbytes)) return err;
    if (int err = check_same(fn, comm, sbytes, rbytes)) return err;
    if (int err = check_span(fn, comm, recvbuf, "recvbuf", rt, static_cast<size_t>(recvcount) * in))
      return err;
    call.r.recv = call.place(recvbuf, rt, recvcount, in, false, true);
  }
  const size_t sent_blocks = kind == Coll::kNeighborAlltoall ? out : 1;
  if (int err = check_span(fn, comm, sendbuf, "sendbuf", st,
                           static_cast<size_t>(sendcount) * sent_blocks))
    return err;
  call.r.send = call.place(const_cast<void*>(sendbuf), st, sendcount, sent_blocks, true, false);
  a.coll = kind;
  a.count = sbytes;
  if (kind == Coll::kNeighborAlltoall && !identity(*n.t)) {
    // Blocks leave in the engine's order: say where each is, as the v form does.
    std::vector<size_t> sc(out, sbytes), sd(out), rc(in, sbytes), rd(in);
    for (size_t j = 0; j < out; ++j) sd[j] = n.t->send_order[j] * sbytes;
    for (size_t i = 0; i < in; ++i) rd[i] = i * sbytes;
    a.coll = Coll::kNeighborAlltoallv;
    a.scounts = call.keep(0, sc);
    a.sdispls = call.keep(1, sd);
    a.rcounts = call.keep(2, rc);
    a.rdispls = call.keep(3, rd);
  }
  return run_collective(fn, comm, c, call, request);
}

// neighbor_alltoallv and neighbor_alltoallw: per-neighbour counts, displacements (in extents of
// the one type, or bytes for w) and, for w, datatypes.
int neighbor_vw(const char* fn, const void* sendbuf, const int* sendcounts, const int* sdispls,
                const MPI_Aint* sdispls_w, const MPI_Datatype* sendtypes, void* recvbuf,
                const int* recvcounts, const int* rdispls, const MPI_Aint* rdispls_w,
                const MPI_Datatype* recvtypes, bool w, MPI_Comm comm, MPI_Request* request) {
  Comm* c;
  Neighbors n;
  if (int err = start_neighbors(fn, comm, request, &c, &n)) return err;
  const size_t in = n.t->in.size(), out = n.t->out.size();
  if (int err = check_counts(fn, comm, sendcounts, static_cast<int>(out), "sendcounts", true))
    return err;
  if (int err = check_counts(fn, comm, recvcounts, static_cast<int>(in), "recvcounts", true))
    return err;
  if ((out > 0 && (w ? sdispls_w == nullptr : sdispls == nullptr)) ||
      (in > 0 && (w ? rdispls_w == nullptr : rdispls == nullptr)))
    return raise_error(comm, MPI_ERR_ARG, fn, "sdispls or rdispls argument is NULL");
  // One side's types (one, or one per neighbour for w) and its blocks, in MPI's order.
  auto layout = [&](void* buf, size_t k, const int* counts, const int* displs,
                    const MPI_Aint* displs_w, const MPI_Datatype* types, const char* what,
                    std::vector<TypeArg>* targs, Side* s) {
    if (k > 0 && types == nullptr)
      return raise_error(comm, MPI_ERR_ARG, fn, "%stype%s argument is NULL", what, w ? "s" : "");
    targs->resize(w ? k : 1);
    for (size_t j = 0; j < targs->size(); ++j) {
      if (int err = check_type_arg(fn, comm, what, types[j], &(*targs)[j])) return err;
    }
    s->buf = buf;
    for (const TypeArg& t : *targs) s->types.push_back(&t);
    for (size_t j = 0; j < k; ++j) {
      s->counts.push_back(static_cast<size_t>(counts[j]));
      s->at.push_back(w ? static_cast<int64_t>(displs_w[j])
                        : static_cast<int64_t>(displs[j]) *
                              static_cast<int64_t>((*targs)[0].extent));
    }
    return MPI_SUCCESS;
  };
  std::vector<TypeArg> stypes, rtypes;
  Side ss, rs;
  if (int err = layout(const_cast<void*>(sendbuf), out, sendcounts, sdispls, sdispls_w, sendtypes,
                       "send", &stypes, &ss))
    return err;
  if (int err =
          layout(recvbuf, in, recvcounts, rdispls, rdispls_w, recvtypes, "recv", &rtypes, &rs))
    return err;
  CollCall call;
  coll::Args& a = call.a;
  a.coll = w ? Coll::kNeighborAlltoallw : Coll::kNeighborAlltoallv;
  a.sources = n.t->in.data();
  a.indegree = static_cast<int>(in);
  a.dests = n.dests.data();
  a.outdegree = static_cast<int>(out);
  std::vector<size_t> bytes, at;
  call.r.send = call.place(ss, true, false, &bytes, &at);
  // Sends in the engine's order.
  std::vector<size_t> sc(out), sd(out);
  for (size_t j = 0; j < out; ++j) {
    sc[j] = bytes[n.t->send_order[j]];
    sd[j] = at[n.t->send_order[j]];
  }
  a.scounts = call.keep(0, std::move(sc));
  a.sdispls = call.keep(1, std::move(sd));
  call.r.recv = call.place(rs, false, true, &bytes, &at);
  a.rcounts = call.keep(2, std::move(bytes));
  a.rdispls = call.keep(3, std::move(at));
  return run_collective(fn, comm, c, call, request);
}

}  // namespace
}  // namespace torusmpi::mpi

namespace mpi = torusmpi::mpi;
using torusmpi::coll::Coll;

int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::neighbor_blocks("MPI_Neighbor_allgather", Coll::kNeighborAllgather, sendbuf,
                              sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                              comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Neighbor_allgather);
int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::neighbor_blocks("MPI_Ineighbor_allgather", Coll::kNeighborAllgather, sendbuf,
                              sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                              comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ineighbor_allgather);

int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::neighbor_blocks("MPI_Neighbor_allgatherv", Coll::kNeighborAllgatherv, sendbuf,
                              sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm,
                              nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Neighbor_allgatherv);
int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::neighbor_blocks("MPI_Ineighbor_allgatherv", Coll::kNeighborAllgatherv, sendbuf,
                              sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm,
                              request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ineighbor_allgatherv);

int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::neighbor_blocks("MPI_Neighbor_alltoall", Coll::kNeighborAlltoall, sendbuf, sendcount,
                              sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, comm,
                              nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Neighbor_alltoall);
int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::neighbor_blocks("MPI_Ineighbor_alltoall", Coll::kNeighborAlltoall, sendbuf, sendcount,
                              sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype, comm,
                              request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ineighbor_alltoall);

int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::neighbor_vw("MPI_Neighbor_alltoallv", sendbuf, sendcounts, sdispls, nullptr,
                          &sendtype, recvbuf, recvcounts, rdispls, nullptr, &recvtype, false, comm,
                          nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Neighbor_alltoallv);
int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::neighbor_vw("MPI_Ineighbor_alltoallv", sendbuf, sendcounts, sdispls, nullptr,
                          &sendtype, recvbuf, recvcounts, rdispls, nullptr, &recvtype, false, comm,
                          request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ineighbor_alltoallv);

int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            MPI_Comm comm) {
  torusmpi::progress::Lock lock;
  return mpi::neighbor_vw("MPI_Neighbor_alltoallw", sendbuf, sendcounts, nullptr, sdispls,
                          sendtypes, recvbuf, recvcounts, nullptr, rdispls, recvtypes, true, comm,
                          nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Neighbor_alltoallw);
int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::neighbor_vw("MPI_Ineighbor_alltoallw", sendbuf, sendcounts, nullptr, sdispls,
                          sendtypes, recvbuf, recvcounts, nullptr, rdispls, recvtypes, true, comm,
                          request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ineighbor_alltoallw);

// --- Persistent neighbourhood collectives: MPIX_Neighbor_<coll>_init (coll_call.h,
// persistent_init).

int PMPIX_Neighbor_allgather_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void* recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init(
      "MPIX_Neighbor_allgather_init", comm, info, request, [=](MPI_Request* r) {
        return mpi::neighbor_blocks("MPIX_Neighbor_allgather_init", Coll::kNeighborAllgather,
                                    sendbuf, sendcount, sendtype, recvbuf, recvcount, nullptr,
                                    nullptr, recvtype, comm, r);
      });
}
TORUSMPI_WEAK_ALIAS(MPIX_Neighbor_allgather_init);

int PMPIX_Neighbor_allgatherv_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void* recvbuf, const int recvcounts[], const int displs[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                   MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init(
      "MPIX_Neighbor_allgatherv_init", comm, info, request, [=](MPI_Request* r) {
        return mpi::neighbor_blocks("MPIX_Neighbor_allgatherv_init", Coll::kNeighborAllgatherv,
                                    sendbuf, sendcount, sendtype, recvbuf, 0, recvcounts, displs,
                                    recvtype, comm, r);
      });
}
TORUSMPI_WEAK_ALIAS(MPIX_Neighbor_allgatherv_init);

int PMPIX_Neighbor_alltoall_init(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                                 MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init(
      "MPIX_Neighbor_alltoall_init", comm, info, request, [=](MPI_Request* r) {
        return mpi::neighbor_blocks("MPIX_Neighbor_alltoall_init", Coll::kNeighborAlltoall, sendbuf,
                                    sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr,
                                    recvtype, comm, r);
      });
}
TORUSMPI_WEAK_ALIAS(MPIX_Neighbor_alltoall_init);

int PMPIX_Neighbor_alltoallv_init(const void* sendbuf, const int sendcounts[], const int sdispls[],
                                  MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                                  const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Info info, MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init(
      "MPIX_Neighbor_alltoallv_init", comm, info, request, [=](MPI_Request* r) {
        return mpi::neighbor_vw("MPIX_Neighbor_alltoallv_init", sendbuf, sendcounts, sdispls,
                                nullptr, &sendtype, recvbuf, recvcounts, rdispls, nullptr,
                                &recvtype, false, comm, r);
      });
}
TORUSMPI_WEAK_ALIAS(MPIX_Neighbor_alltoallv_init);

int PMPIX_Neighbor_alltoallw_init(const void* sendbuf, const int sendcounts[],
                                  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                  void* recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                  const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                  MPI_Request* request) {
  torusmpi::progress::Lock lock;
  return mpi::persistent_init(
      "MPIX_Neighbor_alltoallw_init", comm, info, request, [=](MPI_Request* r) {
        return mpi::neighbor_vw("MPIX_Neighbor_alltoallw_init", sendbuf, sendcounts, nullptr,
                                sdispls, sendtypes, recvbuf, recvcounts, nullptr, rdispls,
                                recvtypes, true, comm, r);
      });
}
TORUSMPI_WEAK_ALIAS(MPIX_Neighbor_alltoallw_init);
