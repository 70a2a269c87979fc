// allgather torus_ring: per-axis rings, the allgather half of allreduce torus_ring. Along the
// last torus axis first, rings pass single blocks; then each earlier axis passes what the later
// ones gathered (a row's, a plane's blocks at once), the cores of a chip last. Every message is
// one link long or stays in a chip. A communicator that does not fill its torus is one ring in
// snake order.
//
// Cost = sum over axes k of (e_k-1) a_k + (e_k-1) m_k n b_k, n one rank's block, m_k the blocks
// a rank holds when axis k starts (the product of the later axes' extents), b_k one link's (its
// cores' rings share it) or a chip's own for axis 0. Unshaped: (p-1) a + (p-1) n b.
// Restrictions: none.
//
//   2x2 torus, one core per chip, ranks at (x,y): 0 (0,0) 1 (1,0) 2 (0,1) 3 (1,1)
//     along y: 0<->2, 1<->3 swap blocks: 0 and 2 hold b0 b2, 1 and 3 hold b1 b3
//     along x: 0<->1, 2<->3 swap those pairs: everyone holds b0 b1 b2 b3
#include "coll/algorithms.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return torus_shaped(m) ? stages_cost(m, axis_stages(m), p * n, 1, false, kTorusRingBytes)
                         : kAllgatherRing.cost(m, p, n);
}

}  // namespace

extern const Algorithm kAllgatherTorusRing = {
    Coll::kAllgather,
    "torus_ring",
    allgather_torus_ring,
    0,
    "Cost = sum over axes k of (e_k-1) a_k + (e_k-1) m_k n b_k",
    cost,
    "per-axis rings: z, y, x, then the chip's cores, each passing what the later gathered"};

void allgather_torus_ring(Builder& b, const Args& a) {
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  patterns::staged_allgather(b, a, {patterns::torus_axes(g)});
}

}  // namespace torusmpi::coll
