// allgatherv ring: as allgather ring, with each rank's block of its own size at its own
// displacement: p-1 steps, each passing on the block received last and receiving the next one
// from the left straight into its place in recv (patterns/ring_allgather.h). Zero-size blocks
// are not sent: both ends know the counts.
//
// Cost = (p-1) a + (p-1) n b, with n the mean block (the largest, when they differ much: each
// step waits for the biggest block in flight).
// Restrictions: none.
//
//   p = 4, counts 2 0 1 3, step s: rank r sends block r-s to r+1, receives block r-s-1 from r-1
//     step 0: 0:b0->1  1:--    2:b2->3  3:b3->0     (b1 is empty)
//     step 1: 0:b3->1  1:b0->2  2:--    3:b2->0
//     step 2: 0:b2->1  1:b3->2  2:b0->3  3:--
#include "coll/algorithms.h"
#include "coll/patterns/ring_allgather.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return (p - 1) * (m.alpha + n * m.beta); }

}  // namespace

extern const Algorithm kAllgathervRing = {Coll::kAllgatherv,
                                          "ring",
                                          allgatherv_ring,
                                          0,
                                          "Cost = (p-1) a + (p-1) n b",
                                          cost,
                                          "pass blocks around the ring, p-1 steps"};

void allgatherv_ring(Builder& b, const Args& a) {
  const uint64_t e = a.elem;
  const BufRef own = a.in_place ? a.recv + a.displs[a.rank] * e : a.send;
  patterns::ring_allgather(
      b, a.rank, a.size, a.recv, own, [&](int q) { return a.displs[q] * e; },
      [&](int q) { return a.counts[q] * e; });
}

}  // namespace torusmpi::coll
