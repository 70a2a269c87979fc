// reduce_scatter_block dual_ring: every block (p blocks of count elements) cut in two halves;
// partial first halves go round one Hamiltonian cycle of the chips, second halves round another
// that shares no link with it, side by side (4x4 and 4x4x4 tori, patterns/torus_rings.h); elsewhere
// round the snake ring in opposite directions. The reduce-scatter half of allreduce dual_ring.
//
// Cost = (p-1) a + ((p-1)/p)(n/2) b + ((p-1)/p) n g, n the whole vector.
// Restrictions: commutative ops (ring order).
//
//   p = 4 on a ring 0 1 3 2 (a 2x2 torus): first halves pass partials 0->1->3->2->0, second
//   halves 0->2->3->1->0 (2x2 has no disjoint pair); after 3 steps each rank holds both halves
//   of its block, summed
#include "coll/algorithms.h"
#include "coll/patterns/staged.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) { return kReduceScatterDualRing.cost(m, p, n); }

}  // namespace

extern const Algorithm kReduceScatterBlockDualRing = {
    Coll::kReduceScatterBlock,
    "dual_ring",
    reduce_scatter_block_dual_ring,
    kNeedsCommutative,
    "Cost = (p-1) a + ((p-1)/p)(n/2) b + ((p-1)/p) n g",
    cost,
    "each half of every block reduced round one of two link-disjoint Hamiltonian cycles"};

void reduce_scatter_block_dual_ring(Builder& b, const Args& a) {
  const uint64_t n = a.block_bytes();
  auto at = [&](int q) { return q * n; };
  auto len = [&](int) { return n; };
  const uint64_t total = n * a.size;
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  auto rings = patterns::dual_cycles(g, a.topo);
  patterns::staged_reduce_scatter(b, a, {rings.first, rings.second}, at, len, total);
}

}  // namespace torusmpi::coll
