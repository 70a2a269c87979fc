// allreduce dual_ring: two rings over Hamiltonian cycles of the chips that share no link, each
// running a ring allreduce (reduce-scatter, then allgather) on half the vector at once, so every
// chip drives two links in and two out (Neuron's algorithm for the largest messages). Within a
// chip a cycle visits the chip's cores in a row. The cycles exist on 4x4 and 4x4x4 tori
// (patterns/torus_rings.h builds them); elsewhere (2x2, 2x4, a communicator that does not fill
// its torus, the host) the halves go round the snake ring in opposite directions, so each link
// carries one half each way.
//
// Cost = 2(p-1) a + 2((p-1)/p)(n/2) b + ((p-1)/p) n g: half the bytes per link of one ring, on
// the two cycles; elsewhere the same on the snake ring, a link's two directions standing in for
// the two cycles.
// Restrictions: commutative ops (ring order).
//
//   2x2 torus, one core per chip, snake ring 0 1 3 2; first half goes 0->1->3->2->0, second
//   half 0->2->3->1->0 (2x2 has no disjoint pair). Each half: 3 reduce-scatter steps, 3
//   allgather steps, side by side.
#include "coll/algorithms.h"
#include "coll/patterns/staged.h"
#include "coll/select/cost.h"

namespace torusmpi::coll {
namespace {

double cost(const Model& m, int p, double n) {
  return torus_shaped(m) ? dual_cost(m, p, n, 2, true) : kAllreduceRing.cost(m, p, n);
}

}  // namespace

extern const Algorithm kAllreduceDualRing = {
    Coll::kAllreduce,
    "dual_ring",
    allreduce_dual_ring,
    kNeedsCommutative,
    "Cost = 2(p-1) a + 2((p-1)/p)(n/2) b + ((p-1)/p) n g",
    cost,
    "ring allreduce of each half of the vector over two link-disjoint Hamiltonian cycles"};

void allreduce_dual_ring(Builder& b, const Args& a) {
  const patterns::TorusGrid g = patterns::torus_grid(a.topo, a.size);
  auto rings = patterns::dual_cycles(g, a.topo);
  patterns::staged_allreduce(b, a, {rings.first, rings.second});
}

}  // namespace torusmpi::coll
