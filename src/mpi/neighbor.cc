// Neighbourhood collectives: MPI_Neighbor_allgather(v), MPI_Neighbor_alltoall(v,w) and their
// MPI_I forms, over the topology of the communicator (topo.h): blocks go to its out-neighbours
// and come from its in-neighbours, in MPI's order, through the engine's neighbourhood algorithms.
// Data travels as bytes (elem 1), so per-neighbour datatypes (the w form) need nothing more.
#include <vector>

#include "coll/team.h"
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

int start_neighbors(const char* fn, MPI_Comm comm, MPI_Request* request, Comm** c,
                    Neighbors* n) {
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

// Per-neighbour counts and displacements in bytes; sends in the engine's order.
std::vector<size_t> bytes_of(const int* v, const std::vector<size_t>& unit, size_t n,
                             const std::vector<int>* order) {
  std::vector<size_t> out(n);
  for (size_t j = 0; j < n; ++j) {
    size_t k = order != nullptr ? (*order)[j] : j;
    out[j] = static_cast<size_t>(v[k]) * unit[k];
  }
  return out;
}

// neighbor_allgather(v) and neighbor_alltoall: one datatype each way.
int neighbor_blocks(const char* fn, Coll kind, const void* sendbuf, int sendcount,
                    MPI_Datatype sendtype, void* recvbuf, int recvcount, const int* recvcounts,
                    const int* displs, MPI_Datatype recvtype, MPI_Comm comm,
                    MPI_Request* request) {
  Comm* c;
  Neighbors n;
  if (int err = start_neighbors(fn, comm, request, &c, &n)) return err;
  Buffer s, r;
  if (int err = check_data(fn, comm, "send", sendcount, sendtype, &s)) return err;
  const size_t in = n.t->in.size(), out = n.t->out.size();
  CollCall call;
  coll::Args& a = call.a;
  a.sources = n.t->in.data();
  a.indegree = static_cast<int>(in);
  a.dests = n.dests.data();
  a.outdegree = static_cast<int>(out);
  if (kind == Coll::kNeighborAllgatherv) {
    if (int err = check_data(fn, comm, "recv", 0, recvtype, &r)) return err;
    if (int err = check_counts(fn, comm, recvcounts, static_cast<int>(in), "recvcounts", true))
      return err;
    if (int err = check_counts(fn, comm, displs, static_cast<int>(in), "displs", false)) return err;
    std::vector<size_t> ext(in, static_cast<size_t>(r.type_extent));
    a.counts = call.keep(0, bytes_of(recvcounts, ext, in, nullptr));
    a.displs = call.keep(1, bytes_of(displs, ext, in, nullptr));
  } else {
    if (int err = check_data(fn, comm, "recv", recvcount, recvtype, &r)) return err;
    if (int err = check_same(fn, comm, s, r)) return err;
  }
  if (int err = check_nonnull(fn, comm, sendbuf, "sendbuf",
                              kind == Coll::kNeighborAlltoall ? s.bytes * out : s.bytes))
    return err;
  a.coll = kind;
  a.count = s.bytes;
  if (kind == Coll::kNeighborAlltoall && !identity(*n.t)) {
    // Blocks leave in the engine's order: say where each is, as the v form does.
    std::vector<size_t> sc(out, s.bytes), sd(out), rc(in, s.bytes), rd(in);
    for (size_t j = 0; j < out; ++j) sd[j] = n.t->send_order[j] * s.bytes;
    for (size_t i = 0; i < in; ++i) rd[i] = i * s.bytes;
    a.coll = Coll::kNeighborAlltoallv;
    a.scounts = call.keep(0, sc);
    a.sdispls = call.keep(1, sd);
    a.rcounts = call.keep(2, rc);
    a.rdispls = call.keep(3, rd);
  }
  call.r.send = sendbuf;
  call.r.recv = recvbuf;
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
  // Bytes per count and per displacement unit of each neighbour, each way.
  auto units = [&](const MPI_Datatype* types, size_t k, const char* what,
                   std::vector<size_t>* ext, std::vector<size_t>* disp_unit) {
    if (k > 0 && types == nullptr)
      return raise_error(comm, MPI_ERR_ARG, fn, "%stype%s argument is NULL", what, w ? "s" : "");
    ext->resize(k);
    disp_unit->resize(k);
    for (size_t j = 0; j < k; ++j) {
      Buffer b;
      if (int err = check_data(fn, comm, what, 0, types[w ? j : 0], &b)) return err;
      (*ext)[j] = static_cast<size_t>(b.type_extent);
      (*disp_unit)[j] = w ? 1 : (*ext)[j];
    }
    return MPI_SUCCESS;
  };
  std::vector<size_t> sext, sunit, rext, runit;
  if (int err = units(sendtypes, out, "send", &sext, &sunit)) return err;
  if (int err = units(recvtypes, in, "recv", &rext, &runit)) return err;
  if (int err = check_counts(fn, comm, sendcounts, static_cast<int>(out), "sendcounts", true))
    return err;
  if (int err = check_counts(fn, comm, recvcounts, static_cast<int>(in), "recvcounts", true))
    return err;
  if ((out > 0 && (w ? sdispls_w == nullptr : sdispls == nullptr)) ||
      (in > 0 && (w ? rdispls_w == nullptr : rdispls == nullptr)))
    return raise_error(comm, MPI_ERR_ARG, fn, "sdispls or rdispls argument is NULL");
  std::vector<int> sd_int, rd_int;
  if (w) {
    // MPI_Aint byte displacements; the engine's arrays are byte counts too.
    sd_int.assign(sdispls_w, sdispls_w + out);
    rd_int.assign(rdispls_w, rdispls_w + in);
    sdispls = sd_int.data();
    rdispls = rd_int.data();
  }
  CollCall call;
  coll::Args& a = call.a;
  a.coll = w ? Coll::kNeighborAlltoallw : Coll::kNeighborAlltoallv;
  a.sources = n.t->in.data();
  a.indegree = static_cast<int>(in);
  a.dests = n.dests.data();
  a.outdegree = static_cast<int>(out);
  a.scounts = call.keep(0, bytes_of(sendcounts, sext, out, &n.t->send_order));
  a.sdispls = call.keep(1, bytes_of(sdispls, sunit, out, &n.t->send_order));
  a.rcounts = call.keep(2, bytes_of(recvcounts, rext, in, nullptr));
  a.rdispls = call.keep(3, bytes_of(rdispls, runit, in, nullptr));
  call.r.send = sendbuf;
  call.r.recv = recvbuf;
  return run_collective(fn, comm, c, call, request);
}

}  // namespace
}  // namespace torusmpi::mpi

namespace mpi = torusmpi::mpi;
using torusmpi::coll::Coll;

int PMPI_Neighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return mpi::neighbor_blocks("MPI_Neighbor_allgather", Coll::kNeighborAllgather, sendbuf,
                              sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                              comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Neighbor_allgather);
int PMPI_Ineighbor_allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  return mpi::neighbor_blocks("MPI_Ineighbor_allgather", Coll::kNeighborAllgather, sendbuf,
                              sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                              comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ineighbor_allgather);

int PMPI_Neighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                             void* recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm) {
  return mpi::neighbor_blocks("MPI_Neighbor_allgatherv", Coll::kNeighborAllgatherv, sendbuf,
                              sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm,
                              nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Neighbor_allgatherv);
int PMPI_Ineighbor_allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                              void* recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
  return mpi::neighbor_blocks("MPI_Ineighbor_allgatherv", Coll::kNeighborAllgatherv, sendbuf,
                              sendcount, sendtype, recvbuf, 0, recvcounts, displs, recvtype, comm,
                              request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ineighbor_allgatherv);

int PMPI_Neighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                           void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return mpi::neighbor_blocks("MPI_Neighbor_alltoall", Coll::kNeighborAlltoall, sendbuf,
                              sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                              comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Neighbor_alltoall);
int PMPI_Ineighbor_alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype,
                            void* recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request* request) {
  return mpi::neighbor_blocks("MPI_Ineighbor_alltoall", Coll::kNeighborAlltoall, sendbuf,
                              sendcount, sendtype, recvbuf, recvcount, nullptr, nullptr, recvtype,
                              comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ineighbor_alltoall);

int PMPI_Neighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
  return mpi::neighbor_vw("MPI_Neighbor_alltoallv", sendbuf, sendcounts, sdispls, nullptr,
                          &sendtype, recvbuf, recvcounts, rdispls, nullptr, &recvtype, false,
                          comm, nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Neighbor_alltoallv);
int PMPI_Ineighbor_alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request* request) {
  return mpi::neighbor_vw("MPI_Ineighbor_alltoallv", sendbuf, sendcounts, sdispls, nullptr,
                          &sendtype, recvbuf, recvcounts, rdispls, nullptr, &recvtype, false,
                          comm, request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ineighbor_alltoallv);

int PMPI_Neighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            MPI_Comm comm) {
  return mpi::neighbor_vw("MPI_Neighbor_alltoallw", sendbuf, sendcounts, nullptr, sdispls,
                          sendtypes, recvbuf, recvcounts, nullptr, rdispls, recvtypes, true, comm,
                          nullptr);
}
TORUSMPI_WEAK_ALIAS(MPI_Neighbor_alltoallw);
int PMPI_Ineighbor_alltoallw(const void* sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void* recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request* request) {
  return mpi::neighbor_vw("MPI_Ineighbor_alltoallw", sendbuf, sendcounts, nullptr, sdispls,
                          sendtypes, recvbuf, recvcounts, nullptr, rdispls, recvtypes, true, comm,
                          request);
}
TORUSMPI_WEAK_ALIAS(MPI_Ineighbor_alltoallw);
