// The intercommunicator collectives' row (inter.h): where a rank stands, the dispatch to the
// builders, and the descriptors the simulator checks them with.
#include "coll/inter/inter.h"

#include "coll/sim/expect.h"

namespace torusmpi::coll::inter {

Sides sides_of(const Args& a, int row_rank) {
  Sides s;
  const bool first = row_rank < a.split;
  s.own_first = first ? 0 : a.split;
  s.own_size = first ? a.split : a.size - a.split;
  s.other_first = first ? a.split : 0;
  s.other_size = first ? a.size - a.split : a.split;
  s.local = row_rank - s.own_first;
  return s;
}

Sides sides(const Args& a) { return sides_of(a, a.rank); }

bool supported(Coll c) {
  switch (c) {
    case Coll::kScan:
    case Coll::kExscan:
    case Coll::kNeighborAllgather:
    case Coll::kNeighborAllgatherv:
    case Coll::kNeighborAlltoall:
    case Coll::kNeighborAlltoallv:
    case Coll::kNeighborAlltoallw:
    case Coll::kCount:
      return false;
    default:
      return true;
  }
}

void build(Builder& b, const Args& a) {
  switch (a.coll) {
    case Coll::kBarrier:
      return barrier(b, a);
    case Coll::kBcast:
      return bcast(b, a);
    case Coll::kReduce:
      return reduce(b, a);
    case Coll::kAllreduce:
      return allreduce(b, a);
    case Coll::kAllgather:
      return allgather(b, a);
    case Coll::kAllgatherv:
      return allgatherv(b, a);
    case Coll::kReduceScatter:
    case Coll::kReduceScatterBlock:
      return reduce_scatter(b, a);
    case Coll::kAlltoall:
      return alltoall(b, a);
    case Coll::kAlltoallv:
    case Coll::kAlltoallw:
      return alltoallv(b, a);
    case Coll::kGather:
      return gather(b, a);
    case Coll::kGatherv:
      return gatherv(b, a);
    case Coll::kScatter:
      return scatter(b, a);
    case Coll::kScatterv:
      return scatterv(b, a);
    default:
      return;
  }
}

// --- Descriptors: what each rank's buffers are and what its receive buffer holds afterwards.
namespace {

using collectives::no_buffer;
using collectives::nothing_in_recv;
using collectives::span_of;
using sim::Expect;

bool is_root(const Args& a) { return a.root == a.rank; }
// A rank of the group that does not hold the root: it talks with the root.
bool facing_root(const Args& a) {
  return a.root >= 0 && !is_root(a) && sides_of(a, a.root).own_first != sides(a).own_first;
}
uint64_t vector_bytes(const Args& a) { return a.count * a.elem; }
uint64_t zero(const Args&) { return 0; }
double one(int) { return 1.0; }

// The reduction over the other group of the vector's bytes [origin, origin + len).
void other_reduction(const Args& a, Expect& out, uint64_t at, uint64_t len, uint64_t origin) {
  const Sides s = sides(a);
  out.reduction(at, len, s.other_first, s.other_first + s.other_size - 1, origin);
}

// The other group's blocks of `block` bytes, one after the other (allgather, gather).
void other_blocks(const Args& a, Expect& out, uint64_t block) {
  const Sides s = sides(a);
  for (int j = 0; j < s.other_size; ++j) out.data(j * block, block, s.other_first + j, 0);
}

Region bcast_own(const Args& a) { return is_root(a) ? Region{0, a.count} : Region{}; }
uint64_t bcast_recv(const Args& a) { return is_root(a) || facing_root(a) ? a.count : kNoBuffer; }
void bcast_expect(const Args& a, Expect& out) {
  if (facing_root(a)) out.data(0, a.count, a.root, 0);
}

uint64_t reduce_send(const Args& a) { return facing_root(a) ? vector_bytes(a) : kNoBuffer; }
uint64_t reduce_recv(const Args& a) { return is_root(a) ? vector_bytes(a) : kNoBuffer; }
void reduce_expect(const Args& a, Expect& out) {
  if (is_root(a)) other_reduction(a, out, 0, vector_bytes(a), 0);
}

void allreduce_expect(const Args& a, Expect& out) {
  other_reduction(a, out, 0, vector_bytes(a), 0);
}

uint64_t block_count(const Args& a) { return a.count; }
uint64_t other_blocks_bytes(const Args& a) { return sides(a).other_size * a.count; }
void allgather_expect(const Args& a, Expect& out) { other_blocks(a, out, a.count); }

void alltoall_expect(const Args& a, Expect& out) {
  const Sides s = sides(a);
  for (int j = 0; j < s.other_size; ++j) {
    out.data(j * a.count, a.count, s.other_first + j, s.local * a.count);
  }
}

// A rank of the group facing the root has its one block (gather's send, scatter's recv).
uint64_t block_facing_root(const Args& a) { return facing_root(a) ? a.count : kNoBuffer; }
uint64_t root_blocks(const Args& a) { return is_root(a) ? other_blocks_bytes(a) : kNoBuffer; }
void gather_expect(const Args& a, Expect& out) {
  if (is_root(a)) other_blocks(a, out, a.count);
}
void scatter_expect(const Args& a, Expect& out) {
  if (facing_root(a)) out.data(0, a.count, a.root, sides(a).local * a.count);
}

uint64_t other_span(const Args& a) { return span_of(a.counts, a.displs, sides(a).other_size); }
void allgatherv_expect(const Args& a, Expect& out) {
  const Sides s = sides(a);
  for (int j = 0; j < s.other_size; ++j) out.data(a.displs[j], a.counts[j], s.other_first + j, 0);
}
uint64_t root_span(const Args& a) { return is_root(a) ? other_span(a) : kNoBuffer; }
void gatherv_expect(const Args& a, Expect& out) {
  if (is_root(a)) allgatherv_expect(a, out);
}
void scatterv_expect(const Args& a, Expect& out) {
  if (facing_root(a)) out.data(0, a.count, a.root, out.args(a.root).displs[sides(a).local]);
}

uint64_t alltoallv_send(const Args& a) {
  return span_of(a.scounts, a.sdispls, sides(a).other_size);
}
uint64_t alltoallv_recv(const Args& a) {
  return span_of(a.rcounts, a.rdispls, sides(a).other_size);
}
void alltoallv_expect(const Args& a, Expect& out) {
  const Sides s = sides(a);
  for (int j = 0; j < s.other_size; ++j) {
    out.data(a.rdispls[j], a.rcounts[j], s.other_first + j,
             out.args(s.other_first + j).sdispls[s.local]);
  }
}

// reduce_scatter: the vector is the sum of the own group's counts; this rank keeps its part.
uint64_t counts_before(const Args& a, int upto) {
  uint64_t n = 0;
  for (int i = 0; i < upto; ++i) n += a.counts[i];
  return n;
}
uint64_t reduce_scatter_send(const Args& a) { return counts_before(a, sides(a).own_size) * a.elem; }
uint64_t reduce_scatter_recv(const Args& a) { return a.counts[sides(a).local] * a.elem; }
void reduce_scatter_expect(const Args& a, Expect& out) {
  const int local = sides(a).local;
  other_reduction(a, out, 0, a.counts[local] * a.elem, counts_before(a, local) * a.elem);
}
uint64_t reduce_scatter_block_send(const Args& a) { return sides(a).own_size * vector_bytes(a); }
void reduce_scatter_block_expect(const Args& a, Expect& out) {
  other_reduction(a, out, 0, vector_bytes(a), sides(a).local * vector_bytes(a));
}

void expect_none(const Args&, Expect&) {}

Collective describe(Coll c, const char* name, unsigned traits, uint64_t (*send)(const Args&),
                    uint64_t (*recv)(const Args&), Region (*own)(const Args&),
                    void (*expect)(const Args&, Expect&)) {
  return Collective{
      c, name, traits, send, recv, zero, own, expect, CallArrays::kNone, SizeIs::kCount, one};
}

const Collective kDescriptors[] = {
    describe(Coll::kBarrier, "inter_barrier", kSynchronizes, no_buffer, no_buffer, nothing_in_recv,
             expect_none),
    describe(Coll::kBcast, "inter_bcast", kRooted, no_buffer, bcast_recv, bcast_own, bcast_expect),
    describe(Coll::kReduce, "inter_reduce", kReduces | kRooted, reduce_send, reduce_recv,
             nothing_in_recv, reduce_expect),
    describe(Coll::kAllreduce, "inter_allreduce", kReduces, vector_bytes, vector_bytes,
             nothing_in_recv, allreduce_expect),
    describe(Coll::kAllgather, "inter_allgather", 0, block_count, other_blocks_bytes,
             nothing_in_recv, allgather_expect),
    describe(Coll::kAllgatherv, "inter_allgatherv", kVector, block_count, other_span,
             nothing_in_recv, allgatherv_expect),
    describe(Coll::kReduceScatter, "inter_reduce_scatter", kReduces | kVector, reduce_scatter_send,
             reduce_scatter_recv, nothing_in_recv, reduce_scatter_expect),
    describe(Coll::kReduceScatterBlock, "inter_reduce_scatter_block", kReduces,
             reduce_scatter_block_send, vector_bytes, nothing_in_recv, reduce_scatter_block_expect),
    describe(Coll::kAlltoall, "inter_alltoall", 0, other_blocks_bytes, other_blocks_bytes,
             nothing_in_recv, alltoall_expect),
    describe(Coll::kAlltoallv, "inter_alltoallv", kVector, alltoallv_send, alltoallv_recv,
             nothing_in_recv, alltoallv_expect),
    describe(Coll::kAlltoallw, "inter_alltoallw", kVector, alltoallv_send, alltoallv_recv,
             nothing_in_recv, alltoallv_expect),
    describe(Coll::kGather, "inter_gather", kRooted, block_facing_root, root_blocks,
             nothing_in_recv, gather_expect),
    describe(Coll::kGatherv, "inter_gatherv", kRooted | kVector, block_facing_root, root_span,
             nothing_in_recv, gatherv_expect),
    describe(Coll::kScatter, "inter_scatter", kRooted, root_blocks, block_facing_root,
             nothing_in_recv, scatter_expect),
    describe(Coll::kScatterv, "inter_scatterv", kRooted | kVector, root_span, block_facing_root,
             nothing_in_recv, scatterv_expect),
};

}  // namespace

const Collective& descriptor(Coll c) {
  for (const Collective& d : kDescriptors) {
    if (d.coll == c) return d;
  }
  return kDescriptors[0];
}

}  // namespace torusmpi::coll::inter
