// What every part of the collective engine shares: which collective a call is, and its arguments
// as a builder sees them (ranks, element counts, symbolic buffers). Nothing here knows mpi.h.
#ifndef TORUSMPI_COLL_COLL_H_
#define TORUSMPI_COLL_COLL_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace torusmpi::coll {

// One token per collective, used in environment variables (TORUSMPI_<TOKEN>_ALGORITHM), rule
// files, statistics and torusmpi_info. Each has a descriptor, coll/<token>/<token>.cc, with
// everything about it (coll/collective.h). Order: the table of descriptors (coll/collectives.cc)
// and the registry follow it.
enum class Coll : uint8_t {
  kBarrier,
  kBcast,
  kReduce,
  kAllreduce,
  kAllgather,
  kAllgatherv,
  kReduceScatter,
  kReduceScatterBlock,
  kAlltoall,
  kAlltoallv,
  kAlltoallw,
  kGather,
  kGatherv,
  kScatter,
  kScatterv,
  kScan,
  kExscan,
  kNeighborAllgather,
  kNeighborAllgatherv,
  kNeighborAlltoall,
  kNeighborAlltoallv,
  kNeighborAlltoallw,
  kCount
};
constexpr int kCollCount = static_cast<int>(Coll::kCount);

// The descriptor's name and traits (collective(c), coll/collective.h), for the many callers that
// need only these.
const char* coll_name(Coll c);  // "allreduce", "reduce_scatter_block", ...
// The collective named `name`; false when there is none.
bool coll_from_name(const char* name, Coll* out);

// Collectives that combine data with an op (their builders emit reduce steps).
bool coll_reduces(Coll c);
// Collectives with a root argument.
bool coll_rooted(Coll c);
// Collectives whose per-rank amounts come in arrays (counts and displacements).
bool coll_vector(Coll c);
// Neighbourhood collectives: they talk to the rank's topology neighbours only (Args::sources,
// dests), and their arrays have one value per neighbour.
bool coll_neighbor(Coll c);

// A buffer a schedule names rather than points at: the executor resolves it per call, so one
// schedule serves every call with the same shape.
enum class Buf : uint8_t { kSend, kRecv, kScratch };
constexpr int kBufCount = 3;

struct BufRef {
  Buf buf = Buf::kRecv;
  uint64_t offset = 0;

  BufRef operator+(uint64_t bytes) const { return {buf, offset + bytes}; }
};

inline BufRef send_buf(uint64_t offset = 0) { return {Buf::kSend, offset}; }
inline BufRef recv_buf(uint64_t offset = 0) { return {Buf::kRecv, offset}; }

// Where a communicator's ranks sit on the emulated machine (src/topo), as builders of torus
// algorithms need it. The chips form a torus of `dims` (x fastest: chip = x + dims[0] * (y +
// dims[1] * z)); ndims 0 means no emulation (the host: every rank on one chip, chip[r] = 0).
// Built once per communicator (coll/team.cc) and by the simulator's calls (coll/sim/calls.cc).
struct TopoView {
  int ndims = 0;
  int dims[3] = {1, 1, 1};
  std::vector<int> instance;  // per rank of the communicator
  std::vector<int> chip;      // per rank: its chip within its instance
  std::vector<int> core;      // per rank: its core within its chip
};

// One collective call as its builder sees it. Amounts count elements of `elem` bytes: for
// reductions the op's element (blocks are split on element boundaries), for data movement
// whatever unit the caller chose (bytes, with elem = 1, is always right).
//
//   count   the vector of bcast, reduce, allreduce, scan, exscan; one rank's block of allgather,
//           alltoall, gather, scatter and reduce_scatter_block; unused by the vector collectives
//   counts/displs         allgatherv, gatherv: what each rank contributes and where it lands in
//                         recv; scatterv: what each rank gets from the root's send;
//                         reduce_scatter: the block each rank keeps (displs unused). Off the
//                         root, gatherv and scatterv know only counts[rank] (the others are 0)
//                         and no displs (null)
//   scounts/sdispls, rcounts/rdispls   alltoallv, alltoallw: this rank's send and receive layout
//   peer_scounts/peer_sdispls          alltoallv, alltoallw: for the simulator's check only,
//                                      rank j's send layout is peer_scounts[j][...] (may be null)
//   sources/indegree, dests/outdegree  neighbourhood collectives: the in- and out-neighbours in
//                                      the topology's order (an edge may repeat: the k-th edge
//                                      from s to r pairs with the k-th time s is among r's
//                                      sources). count is one block; the v and w forms use
//                                      counts/displs (neighbor_allgatherv: one per source) or
//                                      scounts/sdispls (one per dest) and rcounts/rdispls (one
//                                      per source)
//
// MPI_IN_PLACE (in_place): the send buffer is not there; where the contribution lives instead
// follows MPI's rule for each collective (allreduce: recv; allgather: recv block `rank`; gather,
// reduce: recv at the root; scatter: the root's send block stays put; alltoall: recv; ...).
struct Args {
  Coll coll = Coll::kAllreduce;
  int rank = 0;
  int size = 1;
  int root = 0;
  bool in_place = false;
  bool commutative = true;
  size_t count = 0;
  size_t elem = 1;
  const size_t* counts = nullptr;
  const size_t* displs = nullptr;
  const size_t* scounts = nullptr;
  const size_t* sdispls = nullptr;
  const size_t* rcounts = nullptr;
  const size_t* rdispls = nullptr;
  const size_t* const* peer_scounts = nullptr;
  const size_t* const* peer_sdispls = nullptr;
  const int* sources = nullptr;
  int indegree = 0;
  const int* dests = nullptr;
  int outdegree = 0;
  // The ranks' placement; nullptr is the host (one chip). Every algorithm runs any placement;
  // the torus algorithms follow the links when the communicator fills a torus.
  const TopoView* topo = nullptr;
  // Intercommunicator collectives (coll/inter/inter.h): the call runs over both groups, ranks
  // [0, split) being the first and [split, size) the second; 0 on an intracommunicator.
  int split = 0;
  // The in-network aggregation switch (pml/ina) can run this call's aggregations: one answers
  // (TORUSMPI_SWITCH), and it knows the call's op and type (reductions). The ina algorithms need
  // it; the simulator's --switch sets it.
  bool in_network = false;
  // Where the builder finds the data: the call's buffers, or (in compositions) parts of them.
  BufRef send = send_buf();
  BufRef recv = recv_buf();

  size_t block_bytes() const { return count * elem; }
};

}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_COLL_H_
