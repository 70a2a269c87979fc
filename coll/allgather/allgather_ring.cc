// allgather ring: p-1 steps around the ring; in each, every rank passes on the block it received
// last (its own first) and receives the next one from its left, straight into its place in recv
// (patterns/ring_allgather.h).
//
// Cost = (p-1) a + (p-1) n b, with n one rank's block. Bandwidth-optimal with one message in and
// one out per step: for large blocks, or where neighbours are close.
// Restrictions: none.
//
//   p = 4, step s: rank r sends block r-s to r+1, receives block r-s-1 from r-1
//     step 0: 0:b0->1  1:b1->2  2:b2->3  3:b3->0
//     step 1: 0:b3->1  1:b0->2  2:b1->3  3:b2->0
//     step 2: 0:b2->1  1:b3->2  2:b0->3  3:b1->0      every rank holds b0 b1 b2 b3
#include "coll/algorithms.h"
#include "coll/patterns/ring_allgather.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); }

}  // namespace

extern const Algorithm kAllgatherRing = {Coll::kAllgather,
                                         "ring",
                                         allgather_ring,
                                         0,
                                         "Cost = (p-1) a + (p-1) n b",
                                         cost,
                                         "pass blocks around the ring, p-1 steps"};

void allgather_ring(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  if (n == 0) return;
  // The own block leaves from the send buffer in step 0 while it is copied into recv.
  const BufRef own = a.in_place ? a.recv + a.rank * n : a.send;
  patterns::ring_allgather(
      b, a.rank, a.size, a.recv, own, [&](int q) { return q * n; }, [&](int) { return n; });
}

}  // namespace torusmpi::coll
