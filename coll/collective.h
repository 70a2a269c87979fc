// A collective's whole behaviour in one place: its descriptor. The engine, selection, the
// simulator and torusmpi_sim read a collective's name, traits, buffer sizes, selection size,
// expected result, made-up calls and bus factor here, rather than each switching over Coll.
#ifndef TORUSMPI_COLL_COLLECTIVE_H_
#define TORUSMPI_COLL_COLLECTIVE_H_

#include <cstddef>
#include <cstdint>

#include "coll/coll.h"

namespace torusmpi::coll {
namespace sim {
class Expect;  // coll/sim/expect.h
}

// The size of a buffer the call does not have on this rank (the send buffer of an in-place call,
// recvbuf of reduce off the root).
constexpr uint64_t kNoBuffer = ~uint64_t{0};

// A byte range of a buffer; len 0 is none.
struct Region {
  uint64_t at = 0;
  uint64_t len = 0;
};

enum Trait : unsigned {
  kReduces = 1u << 0,   // combines data with an op: its builders emit reduce steps
  kRooted = 1u << 1,    // has a root argument
  kVector = 1u << 2,    // per-rank amounts come in arrays (counts and displacements)
  kNeighbor = 1u << 3,  // talks to the topology's neighbours only (Args::sources, dests), and
                        // its arrays have one value per neighbour
  // Moves no data: its result is that no rank leaves before every rank has entered, so the
  // simulator checks that each has heard, directly or not, from every other (barrier).
  kSynchronizes = 1u << 4,
  // MPI_IN_PLACE is allowed (at the root alone, for rooted collectives). Not: barrier, bcast and
  // the neighbourhood collectives.
  kInPlace = 1u << 5,
};

// The arrays the simulator makes up for a call (coll/sim/calls.cc generates them, uneven, with
// zeros, gaps and reversed displacements, so that they break what they can).
enum class CallArrays : uint8_t {
  kNone,           // count alone
  kPerRank,        // counts/displs, one amount per rank
  kPerRankAtRoot,  // the same at the root; off it a rank knows its own count only, no displs
  kMatrix,         // scounts/sdispls and rcounts/rdispls of an uneven matrix (symmetric in
                   // place), every rank's send layout in peer_scounts/peer_sdispls
  kGraph,          // a neighbourhood multigraph (sources, dests) and count
  kGraphBlocks,    // the graph, and counts/displs: count elements from each source
  kGraphLayouts,   // the graph, scounts/sdispls per dest and rcounts/rdispls per source
};

// What torusmpi_sim calls a call's size, as the OSU benchmark of the collective (and nccl-tests,
// whose algbw counts these bytes) does.
enum class SizeIs : uint8_t {
  kCount,      // count elements: the vector, or a neighbourhood collective's one block
  kRankBlock,  // one rank's block (count elements); a call moves p of them
  kWhole,      // the whole vector the ranks' blocks are cut from: count is a p-th of it
};

// One collective, as coll/<name>/<name>.cc describes it. Adding a collective is: a new
// directory coll/<name>/ with this descriptor (<name>.cc) and its algorithm files (listed in
// coll/Makefile.am), one line in the table of coll/collectives.cc (and its name in the extern
// list above it), one value of enum Coll (coll/coll.h), and its MPI entry points in src/mpi.
// Nothing else switches over Coll: the engine, selection, the simulator and torusmpi_sim read
// this.
struct Collective {
  Coll coll;
  const char* name;  // the token everywhere (coll_name)
  unsigned traits;   // Trait bits

  // The size in bytes of this rank's send and receive buffer as MPI defines them (kNoBuffer:
  // none, as MPI_IN_PLACE or a rank off the root has none).
  uint64_t (*send_bytes)(const Args& a);
  uint64_t (*recv_bytes)(const Args& a);
  // The size selection works with, alike on every rank (coll::selection_bytes).
  uint64_t (*selection_bytes)(const Args& a);
  // Where this rank's own contribution sits in recv before the call (where MPI_IN_PLACE, or
  // bcast's root, puts it): its send bytes [0, len), or for reductions its part of the vector
  // [0, len), at recv[at..].
  Region (*own_in_recv)(const Args& a);
  // What recv must hold after the call on rank a.rank, for the simulator's check.
  void (*expect)(const Args& a, sim::Expect& out);
  CallArrays call_arrays;
  SizeIs size_is;
  // busbw / algbw, nccl-tests' factor: how much of the algbw bytes cross a rank's link.
  double (*bus_factor)(int p);

  bool reduces() const { return (traits & kReduces) != 0; }
  bool rooted() const { return (traits & kRooted) != 0; }
  bool vector() const { return (traits & kVector) != 0; }
  bool neighbor() const { return (traits & kNeighbor) != 0; }
  bool synchronizes() const { return (traits & kSynchronizes) != 0; }
  bool in_place() const { return (traits & kInPlace) != 0; }
  // The count of a call whose size (SizeIs) is `bytes`, in elements of `elem` bytes, on p ranks.
  size_t count_for(size_t bytes, size_t elem, int p) const;
  // The bytes algbw counts for a call of that size.
  double algbw_bytes(size_t bytes, int p) const;
};

// The descriptor of c (every value but Coll::kCount has one; the table is in Coll order, which
// coll_select_test checks).
const Collective& collective(Coll c);

// --- Parts several descriptors share (coll/collective.cc).
namespace collectives {

uint64_t sum_of(const size_t* v, int n);
// How far blocks of counts at displs reach, in elements: the end of the last non-empty one.
uint64_t span_of(const size_t* counts, const size_t* displs, int n);

uint64_t no_buffer(const Args& a);              // kNoBuffer
uint64_t count_bytes(const Args& a);            // count elements
uint64_t count_unless_in_place(const Args& a);  // count elements; none in place
uint64_t no_common_size(const Args& a);         // 0: a rank knows its own amounts only, and every
                                                // rank must choose alike
// counts[rank] elements; none in place (allgatherv, gatherv).
uint64_t own_count_unless_in_place(const Args& a);
Region nothing_in_recv(const Args& a);
// In place, the rank's block is at its place in recv: block `rank` of count elements (allgather,
// gather), or counts[rank] elements at displs[rank] (allgatherv, gatherv).
Region own_block_if_in_place(const Args& a);
Region own_vblock_if_in_place(const Args& a);
// In place, the whole receive buffer of `recv_bytes` (if the rank has one) holds the rank's
// contribution, as it holds the result afterwards.
Region whole_if_in_place(const Args& a, uint64_t recv_bytes);
// In place, recv's count elements hold the rank's vector (allreduce, scan, exscan).
Region count_if_in_place(const Args& a);
void expect_nothing(const Args& a, sim::Expect& out);
// recv's count elements hold the reduction over all ranks of the vector (allreduce, reduce).
void expect_reduction_of_all(const Args& a, sim::Expect& out);
// Block q of recv (count elements at q * count) holds rank q's send block (allgather, gather).
void expect_rank_blocks(const Args& a, sim::Expect& out);
// Rank q's counts[q] elements at displs[q] of recv (allgatherv, gatherv).
void expect_rank_vblocks(const Args& a, sim::Expect& out);
// The index, in the dests of rank a.sources[i], of the edge it sends to a.rank along; -1 when
// there is none or the source is no rank (MPI_PROC_NULL: the block stays as it was).
int sending_edge(const Args& a, int i, const sim::Expect& out);
// The same on bare arrays: the k-th time a source is among `to`'s sources pairs with the k-th
// time `to` is among its dests (MPI's order for repeated edges); outdegree when there is none.
int dest_index(const int* sources, int i, int to, const int* dests, int outdegree);

double bus_factor_one(int p);   // the bytes cross a link once (bcast, reduce, gather, ...)
double bus_factor_ring(int p);  // (p-1)/p: all but the rank's own share (allgather, alltoall,
                                // reduce_scatter)

// The v and w forms move the same bytes (a w call comes with its counts and displacements in
// bytes, each peer's datatype folded in), so their descriptors share these, defined in the v
// form's file.
uint64_t alltoallv_send_bytes(const Args& a);
uint64_t alltoallv_recv_bytes(const Args& a);
Region alltoallv_own_in_recv(const Args& a);
void alltoallv_expect(const Args& a, sim::Expect& out);
uint64_t neighbor_alltoallv_send_bytes(const Args& a);
uint64_t neighbor_alltoallv_recv_bytes(const Args& a);
void neighbor_alltoallv_expect(const Args& a, sim::Expect& out);

}  // namespace collectives
}  // namespace torusmpi::coll

#endif  // TORUSMPI_COLL_COLLECTIVE_H_
